// One operator call for a problem of the table: its tensors (test-kit DeviceTensors in the
// problem's layout, canaries outside every view), its inputs, both phases and the check against
// the double reference under the documented tolerances.
#ifndef ACLNN_CPU_OPTABLE_CALL_H_
#define ACLNN_CPU_OPTABLE_CALL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "device_tensor.h"
#include "op_table.h"
#include "run_op.h"
#include "tolerance.h"

namespace optable {

// One output's comparison with the reference.
struct Verdict {
  std::string output;
  tolerance::ErrorStats stats;
  std::string failure;  // "" when every element is within tolerance
  aclDataType dtype;
};

// status, failed_step, workspace and message of one run (run_op.h).
using RunResult = testing_support::OpResult;

class Call {
 public:
  explicit Call(const Problem& p);
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  const Problem& problem() const { return p_; }
  const OpSpec& op() const { return *p_.op; }
  size_t size() const { return tensors_.size(); }
  const Param& param(size_t i) const { return p_.op->params[i]; }
  // Null for an absent optional parameter.
  testing_support::DeviceTensor* tensor(size_t i) const { return tensors_[i].get(); }
  const Values& inputs() const { return inputs_; }

  // The operator's random inputs with the problem's seed. keep_values = false forgets the
  // values once stored (benchmarks: no reference check, half the memory).
  void FillRandom(bool keep_values = true);
  // Stores v (rounded to the parameter's dtype) in input i and keeps the stored values.
  void Set(size_t i, const std::vector<double>& v);

  int Phase1(uint64_t* workspace_size, aclOpExecutor** executor);
  aclnnStatus Phase2(void* workspace, uint64_t size, aclOpExecutor* executor,
                     aclrtStream stream) const;
  // Both phases and the synchronize, with a workspace allocated for the call.
  RunResult Run(aclrtStream stream = nullptr);

  // Every output against the reference (after a successful run).
  std::vector<Verdict> Check() const;
  // Whether no byte of any output's storage was written.
  bool OutputsUntouched() const;
  // Every present output's values, concatenated in parameter order.
  std::vector<double> Outputs() const;
  double Bytes() const { return FullTensorBytes(p_); }
  const char* BandwidthKind() const { return optable::BandwidthKind(p_); }

 private:
  Problem p_;
  std::string reduction_;
  std::vector<std::unique_ptr<testing_support::DeviceTensor>> tensors_;
  Values inputs_;
};

}  // namespace optable

#endif  // ACLNN_CPU_OPTABLE_CALL_H_
