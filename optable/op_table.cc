#include "op_table.h"

#include <algorithm>
#include <sstream>

#include "reference.h"

namespace optable {

// The entries, one file each (optable/<op>.cc).
extern const OpSpec kLogSoftmaxBackward;
extern const OpSpec kLogSoftmax;
extern const OpSpec kCrossEntropyLossGrad;
extern const OpSpec kCrossEntropyLoss;
extern const OpSpec kCpuCrossEntropyLoss;
extern const OpSpec kCrossEntropyLossLse;
extern const OpSpec kCrossEntropyLossGradFromLogits;
extern const OpSpec kCrossEntropyLossWithGrad;
extern const OpSpec kCrossEntropyLossProb;
extern const OpSpec kCrossEntropyLossProbGrad;
extern const OpSpec kCrossEntropyLossProbWithGrad;

const std::vector<const OpSpec*>& Ops() {
  static const std::vector<const OpSpec*> ops = {&kLogSoftmaxBackward,
                                                 &kLogSoftmax,
                                                 &kCrossEntropyLossGrad,
                                                 &kCrossEntropyLoss,
                                                 &kCpuCrossEntropyLoss,
                                                 &kCrossEntropyLossLse,
                                                 &kCrossEntropyLossGradFromLogits,
                                                 &kCrossEntropyLossWithGrad,
                                                 &kCrossEntropyLossProb,
                                                 &kCrossEntropyLossProbGrad,
                                                 &kCrossEntropyLossProbWithGrad};
  return ops;
}

const OpSpec* FindOp(const std::string& name) {
  for (const OpSpec* op : Ops()) {
    if (name == op->name || name == op->alias) return op;
  }
  return nullptr;
}

Problem DefaultProblem(const OpSpec* op) {
  Problem p;
  p.op = op;
  return p;
}

int OpSpec::IndexParam(const Problem& p) const {
  const std::vector<TensorDecl> decls = declare(p);
  for (size_t i = 0; i < decls.size(); ++i) {
    if (decls[i].present && (decls[i].dtype == ACL_INT64 || decls[i].dtype == ACL_INT32)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

double FullTensorBytes(const Problem& p) {
  double b = 0;
  for (const TensorDecl& d : p.op->declare(p)) {
    if (d.present && d.shape == p.shape) {
      b += static_cast<double>(ref::Numel(d.shape) * testing_support::DtypeBytes(d.dtype));
    }
  }
  return b;
}

const char* BandwidthKind(const Problem& p) {
  const std::vector<TensorDecl> decls = p.op->declare(p);
  int full_inputs = 0;
  for (size_t i = 0; i < decls.size(); ++i) {
    if (decls[i].present && p.op->params[i].role == Role::kInput && decls[i].shape == p.shape) {
      ++full_inputs;
    }
  }
  return full_inputs >= 2 ? "rd2wr1" : "copy";
}

namespace {
struct AttrName {
  Attr attr;
  const char* flag;
  const char* key;
};
constexpr AttrName kAttrNames[] = {
    {Attr::kDim, "--dim", "dim"},
    {Attr::kOutDtype, "--out-dtype", "out_dtype"},
    {Attr::kReduction, "--reduction", "reduction"},
    {Attr::kWeight, "--weight", "weight"},
    {Attr::kIgnoreIndex, "--ignore-index", "ignore_index"},
    {Attr::kLabelSmoothing, "--label-smoothing", "label_smoothing"},
    {Attr::kZloss, "--zloss", "lse_square_scale_for_zloss"},
    {Attr::kTargetDtype, "--target-dtype", "target_dtype"},
};
const AttrName& NameOf(Attr a) { return kAttrNames[static_cast<int>(a)]; }

template <typename T>
std::string Text(const T& v) {
  std::ostringstream s;
  s << v;
  return s.str();
}
}  // namespace

const char* AttrFlag(Attr a) { return NameOf(a).flag; }
const char* AttrKey(Attr a) { return NameOf(a).key; }

const std::vector<DtypeNameEntry>& DtypeNames() {
  static const std::vector<DtypeNameEntry> names = {
      {"f32", ACL_FLOAT, true},  {"f16", ACL_FLOAT16, true}, {"bf16", ACL_BF16, true},
      {"f64", ACL_DOUBLE, true}, {"s64", ACL_INT64, false},  {"s32", ACL_INT32, false}};
  return names;
}

const char* DtypeShortName(aclDataType t) {
  for (const DtypeNameEntry& e : DtypeNames()) {
    if (e.dtype == t) return e.name;
  }
  return "?";
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  if (shape.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

int Problem::WrappedDim() const {
  const int64_t r = shape.empty() ? 1 : static_cast<int64_t>(shape.size());
  return static_cast<int>(dim < 0 ? dim + r : dim);
}

bool Problem::Takes(Attr a) const {
  return std::find(op->attrs.begin(), op->attrs.end(), a) != op->attrs.end();
}

std::string Problem::AttrText(Attr a) const {
  switch (a) {
    case Attr::kDim:
      return std::to_string(dim);
    case Attr::kOutDtype:
      return DtypeShortName(OutDtype());
    case Attr::kReduction:
      return reduction;
    case Attr::kWeight:
      return weight ? "true" : "false";
    case Attr::kIgnoreIndex:
      return std::to_string(ignore_index);
    case Attr::kLabelSmoothing:
      return Text(label_smoothing);
    case Attr::kZloss:
      return Text(zloss);
    case Attr::kTargetDtype:
      return DtypeShortName(target_dtype);
  }
  return "";
}

std::string Problem::ToString() const {
  std::string s = std::string("--op=") + op->name + " --shape=" + ShapeText(shape) +
                  " --dtype=" + DtypeShortName(dtype);
  for (Attr a : op->attrs) {
    if (a == Attr::kWeight) {
      if (weight) s += " --weight";
    } else {
      s += std::string(" ") + AttrFlag(a) + "=" + AttrText(a);
    }
  }
  if (target_length >= 0) s += " --target-length=" + std::to_string(target_length);
  if (layout != testing_support::Layout::kContiguous) {
    s += std::string(" --layout=") + testing_support::LayoutName(layout);
  }
  if (seed != 1) s += " --seed=" + std::to_string(seed);
  return s;
}

CallArgs Problem::Args(aclTensor* const* tensors, char* reduction_copy) const {
  return CallArgs{tensors, dim, reduction_copy, ignore_index, label_smoothing, zloss, true};
}

std::string Problem::Name() const {
  std::string s = std::string(op->api).substr(5) + "/" + DtypeShortName(dtype) + "/";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  if (Takes(Attr::kDim)) s += "/dim" + std::to_string(dim);
  if (Takes(Attr::kReduction)) s += "/" + reduction;
  if (weight && Takes(Attr::kWeight)) s += "+weight";
  if (label_smoothing != 0.0 && Takes(Attr::kLabelSmoothing)) s += "+ls";
  if (zloss != 0.0 && Takes(Attr::kZloss)) s += "+zloss";
  return s;
}

}  // namespace optable
