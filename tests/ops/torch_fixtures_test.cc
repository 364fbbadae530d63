// The library against PyTorch: fixtures of torch's float64 autograd gradients
// (tools/make_torch_fixtures.py, committed under tests/data with the torch version).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "aclnnop/aclnn_cross_entropy_loss.h"
#include "aclnnop/aclnn_cross_entropy_loss_grad.h"
#include "aclnnop/aclnn_logsoftmax.h"
#include "aclnnop/aclnn_logsoftmax_backward.h"
#include "check.h"
#include "device_tensor.h"
#include "fixture.h"
#include "reference.h"

using namespace testing_support;

namespace {

ref::Reduction ParseReduction(const std::string& s) {
  return s == "none" ? ref::Reduction::kNone
                     : (s == "sum" ? ref::Reduction::kSum : ref::Reduction::kMean);
}

std::vector<int64_t> ToInts(const std::vector<double>& v) {
  return std::vector<int64_t>(v.begin(), v.end());
}

// "2x3x4" -> {2, 3, 4}
std::vector<int64_t> ParseShape(const std::string& s) {
  std::vector<int64_t> shape;
  for (size_t p = 0; p < s.size();) {
    const size_t q = s.find('x', p);
    shape.push_back(std::stoll(s.substr(p, q - p)));
    p = q == std::string::npos ? s.size() : q + 1;
  }
  return shape;
}

// Calls fn for tests/data/<prefix>_00.bin, _01.bin, ... until one is missing; returns the count.
template <typename F>
int ForEachFixture(const char* prefix, F&& fn) {
  int files = 0;
  for (int k = 0; k < 100; ++k) {
    char name[32];
    std::snprintf(name, sizeof(name), "%s_%02d.bin", prefix, k);
    const Fixture f = LoadFixture(FixturePath(name));
    if (f.header.empty()) break;
    ++files;
    SCOPED_TRACE(std::string(name) + " (torch " + f.Get("torch") + ")");
    fn(f);
  }
  return files;
}

}  // namespace

TEST(TorchFixtures, CrossEntropyLossGradMatchesAutograd) {
  const int files = ForEachFixture("ce", [&](const Fixture& f) {
    const int64_t n = f.Int("n"), c = f.Int("c");
    const ref::Reduction red = ParseReduction(f.Get("reduction"));
    const bool none = red == ref::Reduction::kNone;
    const std::vector<int64_t> scalar = none ? std::vector<int64_t>{n} : std::vector<int64_t>{};
    DeviceTensor lp(ACL_FLOAT, {n, c}), out(ACL_FLOAT, {n, c}), target(ACL_INT64, {n}),
        grad(ACL_FLOAT, scalar), gz(ACL_FLOAT, scalar), lse(ACL_FLOAT, {n});
    std::unique_ptr<DeviceTensor> weight;
    const std::vector<double> lpv = lp.Rounded(f.arrays.at("log_prob"));
    lp.Set(lpv);
    target.Set(f.arrays.at("target"));
    const std::vector<double> gv = grad.Rounded(f.arrays.at("grad_loss"));
    const std::vector<double> gzv = gz.Rounded(f.arrays.at("grad_zloss"));
    const std::vector<double> lsev = lse.Rounded(f.arrays.at("lse"));
    grad.Set(gv);
    gz.Set(gzv);
    lse.Set(lsev);
    std::vector<double> wv;
    if (f.Int("weight")) {
      weight = std::make_unique<DeviceTensor>(ACL_FLOAT, std::vector<int64_t>{c});
      wv = weight->Rounded(f.arrays.at("weight"));
      weight->Set(wv);
    }
    const double z = f.Num("zloss_scale");
    const std::string reduction = f.Get("reduction");
    const OpResult r = RunOp(
        [&](uint64_t* ws, aclOpExecutor** ex) {
          return aclnnCrossEntropyLossGradGetWorkspaceSize(
              grad.get(), lp.get(), target.get(), weight ? weight->get() : nullptr,
              f.Int("grad_zloss") ? gz.get() : nullptr, z != 0.0 ? lse.get() : nullptr,
              const_cast<char*>(reduction.c_str()), f.Int("ignore_index"), f.Num("label_smoothing"),
              z, out.get(), ws, ex);
        },
        aclnnCrossEntropyLossGrad);
    ASSERT_EQ(r.status, 0) << r.message;
    ref::CrossEntropyArgs a;
    a.n = n;
    a.c = c;
    a.target = ToInts(f.arrays.at("target"));
    a.weight = wv;
    a.reduction = red;
    a.ignore_index = f.Int("ignore_index");
    a.label_smoothing = f.Num("label_smoothing");
    a.zloss_scale = z;
    const std::vector<double> mag = ref::CrossEntropyLossGradMagnitudes(
        a, lpv, gv, f.Int("grad_zloss") ? gzv : std::vector<double>{}, lsev);
    // The library sees f32-rounded inputs: each |logProb| * 2^-24 of relative change in p, and
    // 2^-24 in each coefficient, on top of the kernel's 6 roundings.
    std::vector<double> bound(mag.size());
    for (size_t i = 0; i < mag.size(); ++i) {
      bound[i] = kEps32 * (10.0 + 2.0 * std::fabs(lpv[i])) * mag[i];
    }
    EXPECT_TRUE(CheckClose(out.Get(), f.arrays.at("grad_x"), bound, ACL_FLOAT, ACL_FLOAT));
  });
  EXPECT_GE(files, 12);
}

TEST(TorchFixtures, LogSoftmaxBackwardMatchesAutograd) {
  const int files = ForEachFixture("lsm", [&](const Fixture& f) {
    const std::vector<int64_t> shape = ParseShape(f.Get("shape"));
    const int64_t dim = f.Int("dim");
    DeviceTensor g(ACL_FLOAT, shape), y(ACL_FLOAT, shape), out(ACL_FLOAT, shape);
    const std::vector<double> gv = g.Rounded(f.arrays.at("grad_y"));
    const std::vector<double> yv = y.Rounded(f.arrays.at("y"));
    g.Set(gv);
    y.Set(yv);
    const OpResult r = RunOp(
        [&](uint64_t* ws, aclOpExecutor** ex) {
          return aclnnLogSoftmaxBackwardGetWorkspaceSize(g.get(), y.get(), dim, out.get(), ws, ex);
        },
        aclnnLogSoftmaxBackward);
    ASSERT_EQ(r.status, 0) << r.message;
    const int d = static_cast<int>(dim < 0 ? dim + static_cast<int64_t>(shape.size()) : dim);
    std::vector<double> terms, sum_terms;
    ref::LogSoftmaxBackwardMagnitudes(gv, yv, shape, d, &terms, &sum_terms);
    std::vector<double> bound(terms.size());
    for (size_t i = 0; i < bound.size(); ++i) {
      // Input rounding: g by 2^-24 relative, exp(y) by |y| 2^-24 relative.
      bound[i] = kEps32 * ((6.0 + std::fabs(yv[i])) * terms[i] + 300.0 * sum_terms[i]);
    }
    EXPECT_TRUE(CheckClose(out.Get(), f.arrays.at("grad_x"), bound, ACL_FLOAT, ACL_FLOAT));
  });
  EXPECT_GE(files, 5);
}

TEST(TorchFixtures, CrossEntropyLossMatchesTorch) {
  const int files = ForEachFixture("ce", [&](const Fixture& f) {
    const int64_t n = f.Int("n"), c = f.Int("c");
    const std::string reduction = f.Get("reduction");
    const std::vector<int64_t> scalar =
        reduction == "none" ? std::vector<int64_t>{n} : std::vector<int64_t>{};
    DeviceTensor x(ACL_FLOAT, {n, c}), target(ACL_INT64, {n}), loss(ACL_FLOAT, scalar),
        lp(ACL_FLOAT, {n, c}), zl(ACL_FLOAT, scalar), lse(ACL_FLOAT, {n});
    const std::vector<double> xv = x.Rounded(f.arrays.at("x"));
    x.Set(xv);
    target.Set(f.arrays.at("target"));
    std::unique_ptr<DeviceTensor> weight;
    if (f.Int("weight")) {
      weight = std::make_unique<DeviceTensor>(ACL_FLOAT, std::vector<int64_t>{c});
      weight->Set(f.arrays.at("weight"));
    }
    const double z = f.Num("zloss_scale");
    const OpResult r = RunOp(
        [&](uint64_t* ws, aclOpExecutor** ex) {
          return aclnnCrossEntropyLossGetWorkspaceSize(
              x.get(), target.get(), weight ? weight->get() : nullptr,
              const_cast<char*>(reduction.c_str()), f.Int("ignore_index"), f.Num("label_smoothing"),
              z, true, loss.get(), lp.get(), zl.get(), lse.get(), ws, ex);
        },
        aclnnCrossEntropyLoss);
    ASSERT_EQ(r.status, 0) << r.message;
    // The inputs were rounded to f32 (relative 2^-24 on each logit), then computed in f32:
    // a relative bound of 2^-24 * (C + 300) on these small problems' outputs.
    auto rel_bound = [&](const std::vector<double>& v) {
      std::vector<double> b(v.size());
      for (size_t i = 0; i < v.size(); ++i) {
        b[i] = kEps32 * (300.0 + static_cast<double>(c)) * (std::fabs(v[i]) + 1.0);
      }
      return b;
    };
    const auto& tl = f.arrays.at("loss");
    const auto& tz = f.arrays.at("zloss");
    const auto& tlp = f.arrays.at("log_prob");
    EXPECT_TRUE(CheckClose(loss.Get(), tl, rel_bound(tl), ACL_FLOAT, ACL_FLOAT)) << "loss";
    EXPECT_TRUE(CheckClose(zl.Get(), tz, rel_bound(tz), ACL_FLOAT, ACL_FLOAT)) << "zloss";
    EXPECT_TRUE(CheckClose(lp.Get(), tlp, rel_bound(tlp), ACL_FLOAT, ACL_FLOAT)) << "logProb";
    if (z != 0.0) {
      const auto& tlse = f.arrays.at("lse");
      EXPECT_TRUE(CheckClose(lse.Get(), tlse, rel_bound(tlse), ACL_FLOAT, ACL_FLOAT)) << "lse";
    }
  });
  EXPECT_GE(files, 12);
}

TEST(TorchFixtures, LogSoftmaxMatchesTorch) {
  const int files = ForEachFixture("lsm", [&](const Fixture& f) {
    const std::vector<int64_t> shape = ParseShape(f.Get("shape"));
    DeviceTensor x(ACL_FLOAT, shape), y(ACL_FLOAT, shape);
    x.Set(f.arrays.at("x"));
    const OpResult r = RunOp(
        [&](uint64_t* ws, aclOpExecutor** ex) {
          return aclnnLogSoftmaxGetWorkspaceSize(x.get(), f.Int("dim"), y.get(), ws, ex);
        },
        aclnnLogSoftmax);
    ASSERT_EQ(r.status, 0) << r.message;
    const auto& ty = f.arrays.at("y");
    std::vector<double> bound(ty.size());
    for (size_t i = 0; i < ty.size(); ++i) bound[i] = kEps32 * 300.0 * (std::fabs(ty[i]) + 1.0);
    EXPECT_TRUE(CheckClose(y.Get(), ty, bound, ACL_FLOAT, ACL_FLOAT));
  });
  EXPECT_GE(files, 5);
}
