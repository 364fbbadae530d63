// A driver problem: one operator call, described by command-line options. The same options
// parse from the command line, from a line of a --batch file, and from a --dump directory's
// problem.json; ToString() gives the canonical form back.
#ifndef ACLNN_CPU_DRIVER_PROBLEM_H_
#define ACLNN_CPU_DRIVER_PROBLEM_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "acl/acl_base.h"

namespace driver {

enum class Op { kLogSoftmaxBackward, kLogSoftmax, kCrossEntropyLossGrad, kCrossEntropyLoss };

struct Problem {
  Op op = Op::kLogSoftmaxBackward;
  std::vector<int64_t> shape = {8, 8};
  aclDataType dtype = ACL_FLOAT;
  aclDataType out_dtype = ACL_DT_UNDEFINED;  // LogSoftmax(Backward); default: dtype
  aclDataType target_dtype = ACL_INT64;
  int64_t dim = -1;
  std::string reduction = "mean";
  bool weight = false;
  int64_t ignore_index = -100;
  double label_smoothing = 0.0;
  double zloss = 0.0;  // lseSquareScaleForZloss
  std::string layout = "contiguous";
  int threads = 0;     // 0: the library's default
  std::string target;  // Highway target cap ("" = best available)
  uint64_t seed = 1;

  aclDataType OutDtype() const { return out_dtype == ACL_DT_UNDEFINED ? dtype : out_dtype; }
  bool IsCrossEntropy() const {
    return op == Op::kCrossEntropyLossGrad || op == Op::kCrossEntropyLoss;
  }
  std::string ToString() const;
};

const char* OpName(Op op);
const char* DtypeName(aclDataType t);

// Registers the problem options on `app`, writing into `p`.
void AddProblemOptions(CLI::App& app, Problem& p);
// Whether `flag` (e.g. "--shape") is one of the options AddProblemOptions registers.
bool IsProblemOption(const std::string& flag);
// Checks what the options alone cannot (shape rank for the cross-entropy operators, ...);
// returns "" or one sentence.
std::string Validate(const Problem& p);
// Parses one problem line (a --batch line, or problem.json's "problem"); "" or the error.
std::string ParseLine(const std::string& line, Problem* p);

}  // namespace driver

#endif  // ACLNN_CPU_DRIVER_PROBLEM_H_
