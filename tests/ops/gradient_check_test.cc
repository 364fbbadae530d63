// Each backward against the derivative of its own forward: central finite differences of the
// forward, computed in double through the reference and in f32 through the library, against
// the library's backward fed with the library's forward outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "aclnnop/aclnn_cross_entropy_loss.h"
#include "aclnnop/aclnn_cross_entropy_loss_grad.h"
#include "aclnnop/aclnn_logsoftmax.h"
#include "aclnnop/aclnn_logsoftmax_backward.h"
#include "ce_problem.h"
#include "check.h"
#include "device_tensor.h"
#include "reference.h"

using namespace testing_support;

namespace {

// max_k |a_k - b_k| / max_k |b_k|: normwise, so tiny entries' finite-difference noise does not
// dominate.
double NormwiseRelError(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::fabs(a[i] - b[i]));
    den = std::max(den, std::fabs(b[i]));
  }
  return num / den;
}

template <typename F>
std::vector<double> CentralDifferences(const std::vector<double>& x, double h, F&& objective) {
  std::vector<double> g(x.size());
  for (size_t k = 0; k < x.size(); ++k) {
    std::vector<double> p(x), m(x);
    p[k] += h;
    m[k] -= h;
    g[k] = (objective(p) - objective(m)) / (2.0 * h);
  }
  return g;
}

double Dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

struct Worst {
  double ref = 0.0, lib = 0.0;
};

// ---------------------------------------------------------------------------------------------
// LogSoftmax -> LogSoftmaxBackward, objective sum(g * log_softmax(x)).

std::vector<double> LibLogSoftmax(const std::vector<double>& x, const std::vector<int64_t>& shape,
                                  int64_t dim) {
  DeviceTensor tx(ACL_FLOAT, shape), ty(ACL_FLOAT, shape);
  tx.Set(x);
  const OpResult r = RunOp(
      [&](uint64_t* ws, aclOpExecutor** ex) {
        return aclnnLogSoftmaxGetWorkspaceSize(tx.get(), dim, ty.get(), ws, ex);
      },
      aclnnLogSoftmax);
  EXPECT_EQ(r.status, 0) << r.message;
  return ty.Get();
}

TEST(GradientCheck, LogSoftmaxBackwardIsTheDerivativeOfLogSoftmax) {
  Worst worst;
  std::mt19937_64 rng(17);
  const std::vector<std::pair<std::vector<int64_t>, int64_t>> problems = {
      {{3, 7}, -1}, {{4, 5}, 0}, {{2, 3, 4}, 1}, {{1, 33}, 1}, {{6}, 0}};
  for (const auto& pr : problems) {
    const std::vector<int64_t>& shape = pr.first;
    const int64_t dim = pr.second;
    const int d = static_cast<int>(dim < 0 ? dim + static_cast<int64_t>(shape.size()) : dim);
    const int64_t n = ref::Numel(shape);
    std::vector<double> x = Uniform(rng, n, -3.0, 3.0), g = Normal(rng, n, 0.0, 1.0);
    for (auto* v : {&x, &g}) {
      for (double& e : *v) e = ref::RoundTo(ACL_FLOAT, e);
    }
    // Library backward at the library's forward.
    DeviceTensor tg(ACL_FLOAT, shape), ty(ACL_FLOAT, shape), tout(ACL_FLOAT, shape);
    tg.Set(g);
    ty.Set(LibLogSoftmax(x, shape, dim));
    const OpResult r = RunOp(
        [&](uint64_t* ws, aclOpExecutor** ex) {
          return aclnnLogSoftmaxBackwardGetWorkspaceSize(tg.get(), ty.get(), dim, tout.get(), ws,
                                                         ex);
        },
        aclnnLogSoftmaxBackward);
    ASSERT_EQ(r.status, 0) << r.message;
    const std::vector<double> grad = tout.Get();
    const auto fd_ref = CentralDifferences(x, 1e-6, [&](const std::vector<double>& v) {
      return Dot(g, ref::LogSoftmax(v, shape, d));
    });
    const auto fd_lib = CentralDifferences(x, 1e-2, [&](const std::vector<double>& v) {
      return Dot(g, LibLogSoftmax(v, shape, dim));
    });
    const double er = NormwiseRelError(grad, fd_ref), el = NormwiseRelError(grad, fd_lib);
    worst.ref = std::max(worst.ref, er);
    worst.lib = std::max(worst.lib, el);
    EXPECT_LT(er, 1e-5);  // f32 backward vs an O(h^2) = 1e-12 double derivative
    EXPECT_LT(el, 2e-3);  // f32 forward: O(h^2) + rounding / h
  }
  std::printf(
      "LogSoftmax -> LogSoftmaxBackward: worst relative error %.2e (vs double finite "
      "differences), %.2e (vs f32 library finite differences)\n",
      worst.ref, worst.lib);
}

// ---------------------------------------------------------------------------------------------
// CrossEntropyLoss -> CrossEntropyLossGrad, objective sum(g * loss) + sum(gz * zloss), where
// loss includes the z-loss.

struct LibForward {
  std::vector<double> loss, zloss, log_prob, lse;
};

LibForward LibCrossEntropy(const CeConfig& cfg, const std::vector<double>& x,
                           const DeviceTensor& target, const DeviceTensor* weight) {
  const std::vector<int64_t> scalar = cfg.ScalarShape();
  DeviceTensor in(ACL_FLOAT, {cfg.n, cfg.c}), loss(ACL_FLOAT, scalar),
      lp(ACL_FLOAT, {cfg.n, cfg.c}), zl(ACL_FLOAT, scalar), lse(ACL_FLOAT, {cfg.n});
  in.Set(x);
  const OpResult r = RunOp(
      [&](uint64_t* ws, aclOpExecutor** ex) {
        return aclnnCrossEntropyLossGetWorkspaceSize(
            in.get(), target.get(), weight ? weight->get() : nullptr,
            const_cast<char*>(ReductionString(cfg.reduction)), cfg.ignore_index,
            cfg.label_smoothing, cfg.zloss_scale, true, loss.get(), lp.get(), zl.get(), lse.get(),
            ws, ex);
      },
      aclnnCrossEntropyLoss);
  EXPECT_EQ(r.status, 0) << r.message;
  LibForward f{loss.Get(), zl.Get(), lp.Get(), {}};
  if (cfg.zloss_scale != 0.0) f.lse = lse.Get();
  return f;
}

TEST(GradientCheck, CrossEntropyLossGradIsTheDerivativeOfCrossEntropyLoss) {
  Worst worst;
  int cases = 0;
  std::mt19937_64 rng(23);
  for (auto red : {ref::Reduction::kNone, ref::Reduction::kMean, ref::Reduction::kSum}) {
    for (bool weight : {false, true}) {
      for (double ls : {0.0, 0.1, 1.0}) {
        for (int z = 0; z < 3; ++z) {  // off, on, on with gradZloss
          for (int64_t ignore : {int64_t{-100}, int64_t{2}}) {
            CeConfig cfg;
            cfg.n = 5;
            cfg.c = 6;
            cfg.reduction = red;
            cfg.weight = weight;
            cfg.label_smoothing = ls;
            cfg.zloss_scale = z == 0 ? 0.0 : 0.05;
            cfg.grad_zloss = z == 2;
            cfg.ignore_index = ignore;
            std::vector<double> x = Uniform(rng, cfg.n * cfg.c, -2.0, 2.0);
            for (double& e : x) e = ref::RoundTo(ACL_FLOAT, e);
            std::vector<int64_t> t = RandomTargets(rng, cfg);
            t[0] = 1;                 // at least one row counts
            t[1] = cfg.ignore_index;  // and one is ignored
            DeviceTensor target(ACL_INT64, {cfg.n});
            target.Set(AsDoubles(t));
            std::unique_ptr<DeviceTensor> wt;
            std::vector<double> w;
            if (weight) {
              wt = std::make_unique<DeviceTensor>(ACL_FLOAT, std::vector<int64_t>{cfg.c});
              w = wt->Rounded(Uniform(rng, cfg.c, 0.5, 2.0));
              wt->Set(w);
            }
            const int64_t ns = red == ref::Reduction::kNone ? cfg.n : 1;
            std::vector<double> g = Normal(rng, ns, 1.0, 0.5), gz(ns, 0.0);
            if (cfg.grad_zloss) gz = Normal(rng, ns, 0.5, 0.5);
            for (auto* v : {&g, &gz}) {
              for (double& e : *v) e = ref::RoundTo(ACL_FLOAT, e);
            }
            // Library backward at the library's forward outputs.
            const LibForward fwd = LibCrossEntropy(cfg, x, target, wt.get());
            const std::vector<int64_t> scalar = cfg.ScalarShape();
            DeviceTensor tg(ACL_FLOAT, scalar), tgz(ACL_FLOAT, scalar),
                tlp(ACL_FLOAT, {cfg.n, cfg.c}), tlse(ACL_FLOAT, {cfg.n}),
                tout(ACL_FLOAT, {cfg.n, cfg.c});
            tg.Set(g);
            tgz.Set(gz);
            tlp.Set(fwd.log_prob);
            if (!fwd.lse.empty()) tlse.Set(fwd.lse);
            const OpResult r = RunOp(
                [&](uint64_t* ws, aclOpExecutor** ex) {
                  return aclnnCrossEntropyLossGradGetWorkspaceSize(
                      tg.get(), tlp.get(), target.get(), wt ? wt->get() : nullptr,
                      cfg.grad_zloss ? tgz.get() : nullptr,
                      cfg.zloss_scale != 0.0 ? tlse.get() : nullptr,
                      const_cast<char*>(ReductionString(red)), cfg.ignore_index, ls,
                      cfg.zloss_scale, tout.get(), ws, ex);
                },
                aclnnCrossEntropyLossGrad);
            ASSERT_EQ(r.status, 0) << r.message;
            const std::vector<double> grad = tout.Get();
            const ref::CrossEntropyArgs a = RefArgs(cfg, t, w);
            const auto fd_ref = CentralDifferences(x, 1e-6, [&](const std::vector<double>& v) {
              const ref::CrossEntropyResult e = ref::CrossEntropyLoss(a, v);
              return Dot(g, e.loss) + Dot(gz, e.zloss);
            });
            const auto fd_lib = CentralDifferences(x, 1e-2, [&](const std::vector<double>& v) {
              const LibForward e = LibCrossEntropy(cfg, v, target, wt.get());
              return Dot(g, e.loss) + Dot(gz, e.zloss);
            });
            const double er = NormwiseRelError(grad, fd_ref), el = NormwiseRelError(grad, fd_lib);
            worst.ref = std::max(worst.ref, er);
            worst.lib = std::max(worst.lib, el);
            ++cases;
            EXPECT_LT(er, 1e-5) << cfg.Name();
            EXPECT_LT(el, 5e-3) << cfg.Name();
          }
        }
      }
    }
  }
  std::printf(
      "CrossEntropyLoss -> CrossEntropyLossGrad (%d cases): worst relative error %.2e "
      "(vs double finite differences), %.2e (vs f32 library finite differences)\n",
      cases, worst.ref, worst.lib);
}

}  // namespace
