// The operator table: one description (OpSpec) per operator, naming its tensors and
// attributes, how to fill them for a problem, its phase-1 and phase-2 calls, its reference
// and tolerances, and its benchmarked problems. The driver, the benchmarks, the fuzzers and the
// cross-cutting test suites iterate Ops() instead of listing the operators; adding an operator
// adds one entry (optable/<op>.cc) and one line to Ops() (op_table.cc).
//
// Public API and the test kit only (reference.h, tolerance.h, device_tensor.h): no GoogleTest,
// no option parsing, nothing of the library's internals.
#ifndef ACLNN_CPU_OPTABLE_OP_TABLE_H_
#define ACLNN_CPU_OPTABLE_OP_TABLE_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "device_tensor.h"

namespace optable {

struct OpSpec;
struct CallArgs;

enum class Role { kInput, kOutput };

// One aclTensor parameter of the phase-1 call, in the call's order.
struct Param {
  const char* name;  // CANN's parameter name ("gradOutput"); also the .npy file name
  Role role;
  bool optional;  // may be null
};

// The scalar attributes a problem may set; an operator lists those it takes.
enum class Attr {
  kDim,
  kOutDtype,
  kReduction,
  kWeight,
  kIgnoreIndex,
  kLabelSmoothing,
  kZloss,
  kTargetDtype
};
// The attribute's command-line flag ("--dim") and its problem.json key ("dim").
const char* AttrFlag(Attr a);
const char* AttrKey(Attr a);

// One operator problem: the operator, the shape of its full-size tensors, dtypes, attributes,
// the layout of every tensor and the seed of its random data.
struct Problem {
  const OpSpec* op = nullptr;
  std::vector<int64_t> shape = {8, 8};
  aclDataType dtype = ACL_FLOAT;
  aclDataType out_dtype = ACL_DT_UNDEFINED;  // default: dtype
  aclDataType target_dtype = ACL_INT64;
  // The class-index tensor's length; -1: N (shape[0]). Another length is refused by every
  // profile (561002): the driver's --target-length shows it.
  int64_t target_length = -1;
  int64_t dim = -1;
  std::string reduction = "mean";
  bool weight = false;
  int64_t ignore_index = -100;
  int64_t ignore_every = 7;  // each row's class index is ignore_index with probability 1/this
  double label_smoothing = 0.0;
  double zloss = 0.0;  // lseSquareScaleForZloss
  testing_support::Layout layout = testing_support::Layout::kContiguous;
  uint64_t seed = 1;

  aclDataType OutDtype() const { return out_dtype == ACL_DT_UNDEFINED ? dtype : out_dtype; }
  int64_t TargetLength() const { return target_length < 0 ? shape[0] : target_length; }
  // dim wrapped into [0, max(rank, 1)).
  int WrappedDim() const;
  bool Takes(Attr a) const;
  // The value of attribute a as text ("mean", "-1", "f32", "true").
  std::string AttrText(Attr a) const;
  // The canonical command line: "--op=NAME --shape=AxB --dtype=T" and the op's attributes.
  std::string ToString() const;
  // Benchmark name: "CrossEntropyLossGrad/f32/4096x32000/mean+weight+ls".
  std::string Name() const;
  // The phase-1 arguments of this problem for `tensors` (in parameter order) and a writable
  // copy of its reduction (CANN's reductionOptional is char*).
  CallArgs Args(aclTensor* const* tensors, char* reduction) const;
};

// Element type names of problems (--dtype, --target-dtype, problem.json): f32 f16 bf16 f64 for
// floating dtypes, s64 s32 for class indices.
struct DtypeNameEntry {
  const char* name;
  aclDataType dtype;
  bool floating;
};
const std::vector<DtypeNameEntry>& DtypeNames();
// The name of t ("?" if it has none).
const char* DtypeShortName(aclDataType t);
// "4096x32000", "scalar" for rank 0.
std::string ShapeText(const std::vector<int64_t>& shape);

// dtype and shape of one parameter for a problem; an optional parameter the problem leaves out
// is not present.
struct TensorDecl {
  bool present = false;
  aclDataType dtype = ACL_DT_UNDEFINED;
  std::vector<int64_t> shape;
};

// Everything one phase-1 call takes: tensors in the order of OpSpec::params (null where absent)
// and the scalar attributes (each operator reads those it has).
struct CallArgs {
  aclTensor* const* tensors = nullptr;
  int64_t dim = -1;
  char* reduction = nullptr;  // nullable, as CANN's reductionOptional
  int64_t ignore_index = -100;
  double label_smoothing = 0.0;
  double zloss = 0.0;
  bool return_zloss = true;
};

// Input values by parameter index, in logical row-major order (empty for outputs and absent
// parameters).
using Values = std::vector<std::vector<double>>;

// One output against the reference: the expected values (unrounded), the per-element f32
// arithmetic error bounds (tolerance.h) and the dtype the result is computed in.
struct Expected {
  size_t param;
  std::vector<double> value, bound;
  aclDataType compute;
};

struct OpSpec {
  const char* name;   // "cross_entropy_loss_grad": --op and problem files
  const char* alias;  // "ce_grad"
  const char* api;    // "aclnnCrossEntropyLossGrad": the name messages start with
  std::vector<Param> params;
  std::vector<Attr> attrs;
  std::vector<aclDataType> dtypes;  // problem dtypes it takes (--dtype)
  int min_rank, max_rank;           // ranks of the problem shape it takes
  const char* shape_hint;           // "NxC" for messages ("" for any rank)
  // dtype and shape of every parameter.
  std::vector<TensorDecl> (*declare)(const Problem&);
  // Seeded random inputs, shaped to exercise the numerics (log-probabilities are log-softmaxes).
  void (*fill)(const Problem&, std::mt19937_64& rng, Values* inputs);
  int (*phase1)(const CallArgs&, uint64_t* workspace_size, aclOpExecutor** executor);
  aclnnStatus (*phase2)(void* workspace, uint64_t size, aclOpExecutor*, aclrtStream);
  // Every output against the double reference (inputs as filled, representable in their dtype).
  std::vector<Expected> (*reference)(const Problem&, const Values& inputs);
  // The problem with every option of the operator turned on (weights, smoothing, z-loss, ...).
  Problem (*all_options)(Problem);
  // The benchmarked problems of this operator (`self`).
  std::vector<Problem> (*bench_problems)(const OpSpec* self);

  // The input that the output may be (the same view, computed in place), or null: callers
  // that refuse overlapping memory (the Python binding) let that pair through.
  const char* in_place_input = nullptr;
  // Index of the first parameter with an integer dtype (class indices), or -1.
  int IndexParam(const Problem& p) const;
};

// Bytes of the problem's full-size tensors (those of the problem's shape), each read or written
// once: what an ideal implementation moves.
double FullTensorBytes(const Problem& p);
// "rd2wr1" when two full-size inputs are read per output (LogSoftmaxBackward), else "copy": the
// bandwidth kernel a problem's speed is measured against.
const char* BandwidthKind(const Problem& p);

// Every operator, in a fixed order.
const std::vector<const OpSpec*>& Ops();
// By name or alias; null if none.
const OpSpec* FindOp(const std::string& name);
// A problem of `op` with the defaults.
Problem DefaultProblem(const OpSpec* op);

}  // namespace optable

#endif  // ACLNN_CPU_OPTABLE_OP_TABLE_H_
