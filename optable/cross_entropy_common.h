// What the two cross-entropy entries of the table share.
#ifndef ACLNN_CPU_OPTABLE_CROSS_ENTROPY_COMMON_H_
#define ACLNN_CPU_OPTABLE_CROSS_ENTROPY_COMMON_H_

#include <random>
#include <vector>

#include "op_table.h"
#include "reference.h"

namespace optable {
namespace ce {

// The positions of a problem: (N,) for an N x C shape, (N, d1, ..., dK) for a K-dimensional
// N x C x d1 x ... x dK one (the lean extensions take those): the shape without dim 1.
std::vector<int64_t> PositionShape(const Problem& p);
// The class-index tensor's shape: (p.TargetLength(),) for N x C, else PositionShape.
std::vector<int64_t> TargetShape(const Problem& p);
// Shape of a loss-like tensor: PositionShape for reduction "none", 0-d otherwise.
std::vector<int64_t> LossShape(const Problem& p);
// Classes uniform in [0, C); one position in p.ignore_every (7 unless set) gets ignore_index.
std::vector<double> Targets(const Problem& p, std::mt19937_64& rng);
// A K-dimensional problem's values (N, C, d1, ..., dK) as the reference's rows (N * d1 * ... *
// dK, C), position-major, and back; the identity for N x C.
std::vector<double> ToRows(const Problem& p, const std::vector<double>& x);
std::vector<double> FromRows(const Problem& p, const std::vector<double>& rows);
// Per-class weights uniform in [0.5, 2).
std::vector<double> Weights(const Problem& p, std::mt19937_64& rng);
// The reference's arguments for the problem and its target (and weight, empty without).
ref::CrossEntropyArgs RefArgs(const Problem& p, const std::vector<double>& target,
                              const std::vector<double>& weight);
// A cross-entropy entry: the given names, parameters and functions, and what both share
// (attributes, dtypes, 2-d NxC problems, every option on, the benchmarked problems).
OpSpec MakeSpec(const char* name, const char* alias, const char* api, std::vector<Param> params,
                decltype(OpSpec::declare) declare, decltype(OpSpec::fill) fill,
                decltype(OpSpec::phase1) phase1, decltype(OpSpec::phase2) phase2,
                decltype(OpSpec::reference) reference);

}  // namespace ce
}  // namespace optable

#endif  // ACLNN_CPU_OPTABLE_CROSS_ENTROPY_COMMON_H_
