// aclnnCpuLinearCrossEntropy (the fused linear + cross-entropy extension) against the double
// reference (ref::LinearCrossEntropy) under the bounds of tolerance::LinearCrossEntropyBound:
// every reduction and option, FLOAT and BF16, strided operands, chunk sizes that do and do not
// divide N (one row, more than N), a vocabulary that is not a multiple of any vector width,
// one class, all rows ignored, N == 0; canaries for refused calls; run-to-run determinism.
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnn_cpu/aclnn_cpu_ext.h"
#include "device_tensor.h"
#include "ops/linear_cross_entropy/plan.h"
#include "reference.h"
#include "run_op.h"
#include "tolerance.h"

using testing_support::DeviceTensor;
using testing_support::Layout;
using testing_support::OpResult;
using testing_support::RunOp;

namespace {

struct Case {
  aclDataType dtype = ACL_FLOAT;
  int64_t n = 37, h = 19, v = 301;
  const char* reduction = "mean";
  bool weight = false, bias = false, grad_loss = true;
  double ls = 0.0, z = 0.0;
  double softcap = 0.0;  // > 0: through aclnnCpuLinearCrossEntropyV2
  int64_t chunk = 0;
  Layout layout = Layout::kContiguous;
  int ignore_every = 5;                              // every k-th row ignored (1: all)
  aclDataType grad_weight_dtype = ACL_DT_UNDEFINED;  // default: the weight's dtype

  std::string Name() const {
    return std::string(reduction) + " dtype " + std::to_string(dtype) + " N " + std::to_string(n) +
           " H " + std::to_string(h) + " V " + std::to_string(v) + (weight ? " +weight" : "") +
           (bias ? " +bias" : "") + " ls " + std::to_string(ls) + " z " + std::to_string(z) +
           " softcap " + std::to_string(softcap) + " chunk " + std::to_string(chunk) + " layout " +
           testing_support::LayoutName(layout) + (grad_loss ? "" : " (gradLoss ones)");
  }
};

struct Tensors {
  explicit Tensors(const Case& k)
      : none(std::string(k.reduction) == "none"),
        x(k.dtype, {k.n, k.h}, k.layout),
        w(k.dtype, {k.v, k.h}, k.layout),
        b(k.dtype, {k.v}),
        target(ACL_INT64, {k.n}),
        cw(ACL_FLOAT, {k.v}),
        g(ACL_FLOAT, LossShape(k)),
        loss(ACL_FLOAT, LossShape(k)),
        lse(ACL_FLOAT, {k.n}),
        gx(k.dtype, {k.n, k.h}, k.layout),
        gw(k.grad_weight_dtype == ACL_DT_UNDEFINED ? k.dtype : k.grad_weight_dtype, {k.v, k.h},
           k.layout),
        gb(k.dtype, {k.v}) {}
  static std::vector<int64_t> LossShape(const Case& k) {
    return std::string(k.reduction) == "none" ? std::vector<int64_t>{k.n} : std::vector<int64_t>{};
  }
  bool none;
  DeviceTensor x, w, b, target, cw, g, loss, lse, gx, gw, gb;
};

OpResult RunLce(const Case& k, Tensors& t, bool grads = true) {
  if (k.softcap != 0.0) {
    return RunOp(
        [&](uint64_t* ws, aclOpExecutor** ex) {
          return aclnnCpuLinearCrossEntropyV2GetWorkspaceSize(
              t.x.get(), t.w.get(), k.bias ? t.b.get() : nullptr, t.target.get(),
              k.weight ? t.cw.get() : nullptr, k.grad_loss ? t.g.get() : nullptr,
              const_cast<char*>(k.reduction), -100, k.ls, k.z, k.softcap, k.chunk, t.loss.get(),
              t.lse.get(), grads ? t.gx.get() : nullptr, grads ? t.gw.get() : nullptr,
              grads && k.bias ? t.gb.get() : nullptr, ws, ex);
        },
        aclnnCpuLinearCrossEntropyV2);
  }
  return RunOp(
      [&](uint64_t* ws, aclOpExecutor** ex) {
        return aclnnCpuLinearCrossEntropyGetWorkspaceSize(
            t.x.get(), t.w.get(), k.bias ? t.b.get() : nullptr, t.target.get(),
            k.weight ? t.cw.get() : nullptr, k.grad_loss ? t.g.get() : nullptr,
            const_cast<char*>(k.reduction), -100, k.ls, k.z, k.chunk, t.loss.get(), t.lse.get(),
            grads ? t.gx.get() : nullptr, grads ? t.gw.get() : nullptr,
            grads && k.bias ? t.gb.get() : nullptr, ws, ex);
      },
      aclnnCpuLinearCrossEntropy);
}

void Check(const Case& k) {
  SCOPED_TRACE(k.Name());
  std::mt19937_64 rng(static_cast<uint64_t>(k.n * 31 + k.v));
  Tensors t(k);
  const std::vector<double> x = t.x.Rounded(testing_support::Normal(rng, k.n * k.h, 0.0, 1.0));
  const std::vector<double> w = t.w.Rounded(testing_support::Normal(rng, k.v * k.h, 0.0, 0.5));
  const std::vector<double> b =
      k.bias ? t.b.Rounded(testing_support::Normal(rng, k.v, 0.0, 1.0)) : std::vector<double>{};
  t.x.Set(x);
  t.w.Set(w);
  if (k.bias) t.b.Set(b);
  ref::CrossEntropyArgs a;
  a.n = k.n;
  a.c = k.v;
  a.reduction =
      t.none ? ref::Reduction::kNone
             : (std::string(k.reduction) == "sum" ? ref::Reduction::kSum : ref::Reduction::kMean);
  a.label_smoothing = k.ls;
  a.zloss_scale = k.z;
  std::vector<double> tv(static_cast<size_t>(k.n));
  for (int64_t i = 0; i < k.n; ++i) {
    a.target.push_back(i % k.ignore_every == k.ignore_every - 1 ? -100 : (i * 131 + 7) % k.v);
    tv[i] = static_cast<double>(a.target.back());
  }
  t.target.Set(tv);
  if (k.weight) {
    a.weight = testing_support::Uniform(rng, k.v, 0.5, 2.0);
    t.cw.Set(a.weight);
  }
  std::vector<double> g(static_cast<size_t>(t.g.numel()), 1.0);
  if (k.grad_loss) {
    g = testing_support::Uniform(rng, t.g.numel(), 0.5, 1.5);
    t.g.Set(g);
  }
  const OpResult r = RunLce(k, t);
  ASSERT_EQ(r.status, 0) << r.message;
  const ref::LinearCrossEntropyResult e = ref::LinearCrossEntropy(a, k.h, x, w, b, g, k.softcap);
  const tolerance::LinearCrossEntropyBounds bound =
      tolerance::LinearCrossEntropyBound(a, k.h, x, w, b, g, e, k.dtype);
  tolerance::ErrorStats s;
  const auto compare = [&](const char* what, const DeviceTensor& got, const std::vector<double>& v,
                           const std::vector<double>& bd) {
    const std::string msg = tolerance::Compare(got.Get(), v, bd, ACL_FLOAT, got.dtype(), &s);
    EXPECT_EQ(msg, "") << what;
  };
  compare("loss", t.loss, e.ce.loss, bound.loss);
  compare("lse", t.lse, e.ce.lse, bound.lse);
  if (k.n > 0) compare("gradInput", t.gx, e.grad_input, bound.grad_input);
  compare("gradWeight", t.gw, e.grad_weight, bound.grad_weight);
  if (k.bias) compare("gradBias", t.gb, e.grad_bias, bound.grad_bias);
  EXPECT_TRUE(t.gx.CanariesOutsideViewIntact());
  EXPECT_TRUE(t.gw.CanariesOutsideViewIntact());
}

}  // namespace

TEST(LinearCrossEntropy, EveryReductionAndOption) {
  for (aclDataType dt : {ACL_FLOAT, ACL_BF16, ACL_FLOAT16}) {
    for (const char* red : {"none", "mean", "sum"}) {
      Case k;
      k.dtype = dt;
      k.reduction = red;
      Check(k);
      k.weight = k.bias = true;
      k.ls = 0.1;
      k.z = 1e-3;
      Check(k);
      k.grad_loss = false;  // gradLoss null: ones
      Check(k);
    }
  }
}

// Gemma's final-logit soft-capping: caps that bind (logits of a few units against a cap of 2)
// and that barely do, every dtype, reduction and chunking, with bias, weights, smoothing, z-loss.
TEST(LinearCrossEntropy, SoftcapThroughV2) {
  for (aclDataType dt : {ACL_FLOAT, ACL_BF16, ACL_FLOAT16}) {
    for (const char* red : {"none", "mean", "sum"}) {
      for (double cap : {2.0, 30.0}) {
        Case k;
        k.dtype = dt;
        k.reduction = red;
        k.softcap = cap;
        k.bias = k.weight = true;
        k.ls = 0.1;
        k.z = 1e-3;
        k.chunk = 16;
        Check(k);
      }
    }
  }
}

TEST(LinearCrossEntropy, SoftcapMustBePositiveAndFinite) {
  for (double cap :
       {-1.0, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    Case k;
    k.softcap = cap;
    Tensors t(k);
    const std::vector<double> canary(static_cast<size_t>(t.gx.numel()), 7.0);
    t.gx.Set(canary);
    const OpResult r = RunLce(k, t);
    EXPECT_EQ(r.status, ACLNN_ERR_PARAM_INVALID) << cap;
    EXPECT_NE(r.message.find("logitSoftcap"), std::string::npos) << r.message;
    EXPECT_EQ(t.gx.Get(), canary);
  }
}

TEST(LinearCrossEntropy, ChunkBoundariesAndLayouts) {
  for (aclDataType dt : {ACL_FLOAT, ACL_BF16, ACL_FLOAT16}) {
    for (int64_t chunk : {1, 7, 16, 37, 100}) {  // 7 does not divide 37; 100 > N
      Case k;
      k.dtype = dt;
      k.chunk = chunk;
      k.weight = k.bias = true;
      k.ls = 0.2;
      Check(k);
    }
    for (Layout l : {Layout::kTransposed, Layout::kOffset, Layout::kPadded}) {
      Case k;
      k.dtype = dt;
      k.layout = l;
      k.chunk = 8;
      k.bias = true;
      Check(k);
    }
  }
}

TEST(LinearCrossEntropy, EdgeShapes) {
  for (aclDataType dt : {ACL_FLOAT, ACL_BF16, ACL_FLOAT16}) {
    Case k;
    k.dtype = dt;
    k.v = 1;  // one class
    k.bias = true;
    Check(k);
    k = Case{};
    k.dtype = dt;
    k.ignore_every = 1;  // every row ignored: mean is 0/0 = NaN, gradients 0 (sum)
    k.reduction = "sum";
    k.weight = true;
    Check(k);
    k.reduction = "mean";
    k.grad_loss = false;
    Tensors t(k);
    (void)t;
    k = Case{};
    k.dtype = dt;
    k.n = 1;
    k.h = 1;
    k.v = 17;
    Check(k);
    k.h = 1000;  // long dot products
    k.n = 5;
    k.v = 40;
    Check(k);
  }
  Case k;
  k.grad_weight_dtype = ACL_FLOAT;  // fp32 weight gradient for BF16 operands
  k.dtype = ACL_BF16;
  Check(k);
}

// BF16 through f32 products on converted blocks (machines whose oneDNN has no BF16 product:
// AArch64 without BF16, x86 without AVX512_CORE), forced here so every machine tests it.
TEST(LinearCrossEntropy, Bf16WithF32Products) {
  aclnn_cpu::lce::SetForceF32Products(true);
  for (const char* red : {"none", "mean", "sum"}) {
    Case k;
    k.dtype = ACL_BF16;
    k.reduction = red;
    k.weight = k.bias = true;
    k.ls = 0.1;
    k.z = 1e-3;
    k.chunk = 7;
    Check(k);
    k.layout = Layout::kTransposed;
    Check(k);
    k.grad_weight_dtype = ACL_FLOAT;
    Check(k);
  }
  Case k;
  k.dtype = ACL_BF16;
  k.v = 9000;  // more than one vocabulary block
  k.n = 5;
  k.h = 8;
  k.bias = true;
  Check(k);
  aclnn_cpu::lce::SetForceF32Products(false);
}

TEST(LinearCrossEntropy, EmptyBatch) {
  Case k;
  k.n = 0;
  k.reduction = "sum";
  Check(k);  // loss 0, weight gradient 0
}

// The same call twice gives the same bits.
TEST(LinearCrossEntropy, Deterministic) {
  Case k;
  k.n = 300;
  k.h = 64;
  k.v = 2000;
  k.chunk = 64;
  k.bias = k.weight = true;
  k.ls = 0.1;
  Tensors t1(k), t2(k);
  std::mt19937_64 rng(3);
  const std::vector<double> x = testing_support::Normal(rng, k.n * k.h, 0.0, 1.0);
  const std::vector<double> w = testing_support::Normal(rng, k.v * k.h, 0.0, 0.5);
  const std::vector<double> b = testing_support::Normal(rng, k.v, 0.0, 1.0);
  std::vector<double> tv(static_cast<size_t>(k.n));
  for (int64_t i = 0; i < k.n; ++i) tv[i] = static_cast<double>((i * 37) % k.v);
  for (Tensors* t : {&t1, &t2}) {
    t->x.Set(x);
    t->w.Set(w);
    t->b.Set(b);
    t->target.Set(tv);
    t->cw.Set(testing_support::Uniform(rng, k.v, 1.0, 1.0));
    t->g.Set({1.0});
    ASSERT_EQ(RunLce(k, *t).status, 0);
  }
  EXPECT_EQ(t1.loss.Get(), t2.loss.Get());
  EXPECT_EQ(t1.gx.Get(), t2.gx.Get());
  EXPECT_EQ(t1.gw.Get(), t2.gw.Get());
  EXPECT_EQ(t1.gb.Get(), t2.gb.Get());
}

// Refused calls: the documented code, a sentence naming the operator, nothing written.
TEST(LinearCrossEntropy, Validation) {
  struct Bad {
    const char* what;
    int code;
    const char* says;
  };
  auto expect = [](const OpResult& r, const Bad& b, Tensors& t) {
    EXPECT_EQ(r.status, b.code) << b.what << ": " << r.message;
    EXPECT_NE(r.message.find("aclnnCpuLinearCrossEntropy"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find(b.says), std::string::npos) << b.what << ": " << r.message;
    for (DeviceTensor* o : {&t.loss, &t.lse, &t.gx, &t.gw, &t.gb}) {
      EXPECT_TRUE(o->Untouched()) << b.what;
    }
  };
  {
    Case k;
    Tensors t(k);
    DeviceTensor x16(ACL_FLOAT16, {k.n, k.h}), w_bad(ACL_FLOAT, {k.v, k.h + 1}),
        gb(ACL_FLOAT, {k.v});
    std::vector<double> tv(static_cast<size_t>(k.n), 0.0);
    t.target.Set(tv);
    char mean[] = "mean";
    auto call = [&](const aclTensor* x, const aclTensor* w, const aclTensor* bias,
                    const aclTensor* gbias, int64_t chunk) {
      return RunOp(
          [&](uint64_t* ws, aclOpExecutor** ex) {
            return aclnnCpuLinearCrossEntropyGetWorkspaceSize(
                x, w, bias, t.target.get(), nullptr, nullptr, mean, -100, 0.0, 0.0, chunk,
                t.loss.get(), t.lse.get(), t.gx.get(), t.gw.get(), gbias, ws, ex);
          },
          aclnnCpuLinearCrossEntropy);
    };
    expect(call(x16.get(), t.w.get(), nullptr, nullptr, 0),
           {"FLOAT16 input", ACLNN_ERR_PARAM_INVALID, "FLOAT16"}, t);
    expect(call(t.x.get(), w_bad.get(), nullptr, nullptr, 0),
           {"H mismatch", ACLNN_ERR_INNER_TILING_ERROR, "last dimensions (H)"}, t);
    expect(call(t.x.get(), t.w.get(), nullptr, gb.get(), 0),
           {"gradBias without bias", ACLNN_ERR_PARAM_INVALID, "no bias"}, t);
    expect(call(t.x.get(), t.w.get(), nullptr, nullptr, -1),
           {"negative chunk", ACLNN_ERR_INNER_TILING_ERROR, "chunkSize is -1"}, t);
    expect(call(nullptr, t.w.get(), nullptr, nullptr, 0),
           {"null input", ACLNN_ERR_PARAM_NULLPTR, "input is null"}, t);
    // A class index out of range is found at run time, before anything is written.
    tv[9] = static_cast<double>(k.v);
    t.target.Set(tv);
    expect(call(t.x.get(), t.w.get(), nullptr, nullptr, 4),
           {"bad target", ACL_ERROR_INVALID_PARAM, "target"}, t);
  }
}
