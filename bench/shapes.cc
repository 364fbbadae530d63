#include "shapes.h"

#include "harness.h"

namespace bench {

static const char* DtypeName(aclDataType t) {
  return t == ACL_FLOAT ? "f32" : (t == ACL_BF16 ? "bf16" : "f16");
}

std::string Case::Name() const {
  static const char* const kOps[] = {"LogSoftmaxBackward", "CrossEntropyLossGrad",
                                     "CrossEntropyLoss", "LogSoftmax"};
  std::string s = std::string(kOps[static_cast<int>(op)]) + "/" + DtypeName(dtype) + "/";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  if (op == Op::kLogSoftmaxBackward || op == Op::kLogSoftmax) {
    s += "/dim" + std::to_string(dim);
  } else {
    s += "/" + reduction;
    if (weight) s += "+weight";
    if (label_smoothing != 0.0) s += "+ls";
    if (zloss != 0.0) s += "+zloss";
  }
  return s;
}

double Case::Bytes() const {
  double n = 1;
  for (int64_t d : shape) n *= static_cast<double>(d);
  const double esz = static_cast<double>(DtypeSize(dtype));
  return (op == Op::kLogSoftmaxBackward ? 3.0 : 2.0) * n * esz;
}

const char* Case::BandwidthKind() const {
  return op == Op::kLogSoftmaxBackward ? "rd2wr1" : "copy";
}

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = [] {
    std::vector<Case> v;
    const Op lsm = Op::kLogSoftmaxBackward, ceg = Op::kCrossEntropyLossGrad,
             cef = Op::kCrossEntropyLoss;
    for (aclDataType t : {ACL_FLOAT, ACL_BF16, ACL_FLOAT16}) {
      v.push_back({lsm, {4096, 32000}, t, -1});
    }
    for (aclDataType t : {ACL_FLOAT, ACL_BF16}) v.push_back({lsm, {64, 512, 1024}, t, 1});
    v.push_back({lsm, {8, 8}, ACL_FLOAT, -1});
    v.push_back({lsm, {1}, ACL_FLOAT, -1});
    for (Op op : {ceg, cef}) {
      v.push_back({op, {4096, 32000}, ACL_FLOAT, -1, "mean"});
      v.push_back({op, {4096, 32000}, ACL_FLOAT, -1, "mean", false, 0.1});
      v.push_back({op, {4096, 32000}, ACL_FLOAT, -1, "mean", true, 0.1});
      v.push_back({op, {4096, 32000}, ACL_FLOAT, -1, "mean", true, 0.1, 1e-4});
      v.push_back({op, {8192, 50257}, ACL_BF16, -1, "mean", true, 0.1});
      v.push_back({op, {2048, 128256}, ACL_FLOAT, -1, "mean"});
      v.push_back({op, {1, 262144}, ACL_FLOAT, -1, "mean"});
      v.push_back({op, {8, 8}, ACL_FLOAT, -1, "mean"});
    }
    return v;
  }();
  return cases;
}

}  // namespace bench
