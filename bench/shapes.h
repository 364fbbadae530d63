// The benchmarked problems (the speed issue's shapes): one registry drives ours and PyTorch's.
#ifndef ACLNN_CPU_BENCH_SHAPES_H_
#define ACLNN_CPU_BENCH_SHAPES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "acl/acl_base.h"

namespace bench {

enum class Op { kLogSoftmaxBackward, kCrossEntropyLossGrad, kCrossEntropyLoss, kLogSoftmax };

struct Case {
  Op op;
  std::vector<int64_t> shape;
  aclDataType dtype;
  int64_t dim = -1;  // softmax ops
  std::string reduction = "mean";
  bool weight = false;
  double label_smoothing = 0.0;
  double zloss = 0.0;
  std::string Name() const;
  // Bytes the ideal implementation moves: inputs read once, outputs written once.
  double Bytes() const;
  // "rd2wr1" for LogSoftmaxBackward (2 reads, 1 write), "copy" for the others.
  const char* BandwidthKind() const;
};

const std::vector<Case>& Cases();

}  // namespace bench

#endif  // ACLNN_CPU_BENCH_SHAPES_H_
