// What the two cross-entropy entries of the table share.
#ifndef ACLNN_CPU_OPTABLE_CROSS_ENTROPY_COMMON_H_
#define ACLNN_CPU_OPTABLE_CROSS_ENTROPY_COMMON_H_

#include <random>
#include <vector>

#include "op_table.h"
#include "reference.h"

namespace optable {
namespace ce {

// The attributes of both operators and the dtypes they take (functions, not globals: the
// entries are initialized from them before main).
std::vector<Attr> Attrs();
std::vector<aclDataType> Dtypes();

// Shape of a loss-like tensor: (N,) for reduction "none", 0-d otherwise.
std::vector<int64_t> LossShape(const Problem& p);
// Classes uniform in [0, C); one row in seven gets ignore_index.
std::vector<double> Targets(const Problem& p, std::mt19937_64& rng);
// Per-class weights uniform in [0.5, 2).
std::vector<double> Weights(const Problem& p, std::mt19937_64& rng);
// The reference's arguments for the problem and its target (and weight, empty without).
ref::CrossEntropyArgs RefArgs(const Problem& p, const std::vector<double>& target,
                              const std::vector<double>& weight);
// Weight, label smoothing 0.1 and z-loss 1e-3.
Problem AllOptions(Problem p);
// The benchmarked problems of `op` (the speed issue's shapes and option sets).
std::vector<Problem> BenchProblems(const OpSpec* op);

}  // namespace ce
}  // namespace optable

#endif  // ACLNN_CPU_OPTABLE_CROSS_ENTROPY_COMMON_H_
