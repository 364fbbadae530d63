// The vocabulary-parallel extensions (docs/large_vocab.md): aclnnCpuCrossEntropyShardStats,
// whose per-shard statistics, combined as aclnn_cpu.torch combines them, give each row's
// log-sum-exp, target logit and weighted logit sum of the whole vocabulary (against the double
// reference, under bounds from the dtype and the shard's length), and
// aclnnCpuCrossEntropyLossGradShard, whose shards' gradients put side by side are bit for bit
// the single-process gradient from the logits; uneven shards, a one-class shard, weights,
// ignored rows, every floating dtype; refused calls write nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnn_cpu/aclnn_cpu_ext.h"
#include "device_tensor.h"
#include "run_op.h"

using testing_support::DeviceTensor;
using testing_support::OpResult;
using testing_support::RunOp;

namespace {

constexpr double kU32 = 1.0 / 16777216.0;
constexpr int64_t kN = 23, kV = 1000;
// Shards [offset, offset + width): uneven, one of a single class.
const std::vector<std::pair<int64_t, int64_t>> kShards = {
    {0, 250}, {250, 350}, {600, 1}, {601, 399}};

struct Problem {
  aclDataType dtype;
  bool weight;
  std::vector<double> x, w, t;  // x: N x V row-major (values of the dtype), w: V, t: N
};

Problem Make(aclDataType dtype, bool weight) {
  std::mt19937_64 rng(7);
  Problem p{dtype, weight, {}, {}, {}};
  DeviceTensor probe(dtype, {kN, kV});
  p.x = probe.Rounded(testing_support::Normal(rng, kN * kV, 0.0, 3.0));
  // The weights as the FLOAT weight tensor holds them.
  p.w = weight ? DeviceTensor(ACL_FLOAT, {kV}).Rounded(testing_support::Uniform(rng, kV, 0.5, 2.0))
               : std::vector<double>(kV, 1.0);
  for (int64_t i = 0; i < kN; ++i) {
    // Targets in every shard, the one-class shard included; every 6th row ignored.
    p.t.push_back(i % 6 == 5 ? -100.0 : static_cast<double>((i * 97 + (i == 3 ? 0 : 600)) % kV));
  }
  p.t[3] = 600;
  return p;
}

// Columns [c0, c0 + len) of the logits, as their own (N, len) tensor.
std::vector<double> Columns(const Problem& p, int64_t c0, int64_t len) {
  std::vector<double> out;
  for (int64_t i = 0; i < kN; ++i) {
    for (int64_t j = 0; j < len; ++j) out.push_back(p.x[i * kV + c0 + j]);
  }
  return out;
}

}  // namespace

TEST(VocabParallel, ShardStatisticsCombineToTheWholeVocabulary) {
  for (aclDataType dt : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE}) {
    // A DOUBLE shard computes in double, and its statistics are DOUBLE.
    const double u = dt == ACL_DOUBLE ? std::ldexp(1.0, -53) : kU32;
    const aclDataType st = dt == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;
    for (bool weight : {false, true}) {
      SCOPED_TRACE(std::to_string(dt) + (weight ? " weight" : ""));
      const Problem p = Make(dt, weight);
      DeviceTensor target(ACL_INT64, {kN}), w(ACL_FLOAT, {kV});
      target.Set(p.t);
      w.Set(p.w);
      // Combined as aclnn_cpu.torch does: lse = log sum_s exp(lse_s); the others add up.
      std::vector<double> mx(kN, -HUGE_VAL), s(kN, 0.0), xt(kN, 0.0), ws(kN, 0.0);
      std::vector<std::vector<double>> lses;
      for (const auto& shard : kShards) {
        // Plain copies: lambdas cannot capture structured bindings before C++20.
        const int64_t c0 = shard.first, len = shard.second;
        DeviceTensor x(dt, {kN, len}), lse(st, {kN}), tl(st, {kN}), wsum(st, {kN});
        x.Set(Columns(p, c0, len));
        const OpResult r = RunOp(
            [&](uint64_t* wsz, aclOpExecutor** ex) {
              return aclnnCpuCrossEntropyShardStatsGetWorkspaceSize(
                  x.get(), target.get(), weight ? w.get() : nullptr, -100, c0, kV, lse.get(),
                  tl.get(), wsum.get(), wsz, ex);
            },
            aclnnCpuCrossEntropyShardStats);
        ASSERT_EQ(r.status, 0) << r.message;
        const std::vector<double> l = lse.Get(), t = tl.Get(), sw = wsum.Get();
        for (int64_t i = 0; i < kN; ++i) {
          // The shard's own statistics against the double reference.
          double m = -HUGE_VAL, e = 0.0, dot = 0.0, mag = 0.0;
          for (int64_t j = 0; j < len; ++j) m = std::max(m, p.x[i * kV + c0 + j]);
          for (int64_t j = 0; j < len; ++j) {
            e += std::exp(p.x[i * kV + c0 + j] - m);
            dot += p.w[c0 + j] * p.x[i * kV + c0 + j];
            mag += std::fabs(p.w[c0 + j] * (p.x[i * kV + c0 + j] - m)) + std::fabs(p.w[c0 + j] * m);
          }
          const double want = m + std::log(e);
          // Partial sums of len terms in the compute type, added in double, then one rounding.
          EXPECT_NEAR(l[i], want, (len + 8) * u * (1.0 + std::fabs(want))) << i;
          EXPECT_NEAR(sw[i], dot, (len + 8) * u * mag + u * std::fabs(dot)) << i;
          const int64_t ti = static_cast<int64_t>(p.t[i]);
          const bool here = ti >= c0 && ti < c0 + len;
          EXPECT_EQ(t[i], here ? p.x[i * kV + ti] : 0.0) << i;  // exact
          mx[i] = std::max(mx[i], l[i]);
          xt[i] += t[i];
          ws[i] += sw[i];
        }
        lses.push_back(l);
      }
      for (int64_t i = 0; i < kN; ++i) {
        for (const auto& l : lses) s[i] += std::exp(l[i] - mx[i]);
        double m = -HUGE_VAL, e = 0.0;
        for (int64_t j = 0; j < kV; ++j) m = std::max(m, p.x[i * kV + j]);
        for (int64_t j = 0; j < kV; ++j) e += std::exp(p.x[i * kV + j] - m);
        const double lse = mx[i] + std::log(s[i]), want = m + std::log(e);
        EXPECT_NEAR(lse, want, (kV + 16) * u * (1.0 + std::fabs(want))) << i;
        const int64_t ti = static_cast<int64_t>(p.t[i]);
        EXPECT_EQ(xt[i], ti >= 0 ? p.x[i * kV + ti] : 0.0) << i;
      }
    }
  }
}

TEST(VocabParallel, ShardGradientsAreTheWholeGradientsColumns) {
  for (aclDataType dt : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE}) {
    // A DOUBLE shard's gradient takes a DOUBLE lse (all of it).
    const aclDataType st = dt == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;
    for (const char* red : {"mean", "none", "sum"}) {
      SCOPED_TRACE(std::to_string(dt) + " " + red);
      const Problem p = Make(dt, true);
      const bool none = std::string(red) == "none";
      const std::vector<int64_t> gshape = none ? std::vector<int64_t>{kN} : std::vector<int64_t>{};
      std::mt19937_64 rng(9);
      DeviceTensor target(ACL_INT64, {kN}), w(ACL_FLOAT, {kV}), g(dt, gshape), gz(dt, gshape),
          lse(st, {kN}), x(dt, {kN, kV}), whole(dt, {kN, kV});
      target.Set(p.t);
      w.Set(p.w);
      g.Set(testing_support::Uniform(rng, g.numel(), 0.5, 1.5));
      gz.Set(testing_support::Uniform(rng, gz.numel(), 0.5, 1.5));
      std::vector<double> l(kN);
      for (int64_t i = 0; i < kN; ++i) {
        double m = -HUGE_VAL, e = 0.0;
        for (int64_t j = 0; j < kV; ++j) m = std::max(m, p.x[i * kV + j]);
        for (int64_t j = 0; j < kV; ++j) e += std::exp(p.x[i * kV + j] - m);
        l[i] = m + std::log(e);
      }
      lse.Set(l);
      x.Set(p.x);
      char* reduction = const_cast<char*>(red);
      const OpResult full = RunOp(
          [&](uint64_t* wsz, aclOpExecutor** ex) {
            return aclnnCpuCrossEntropyLossGradFromLogitsGetWorkspaceSize(
                g.get(), x.get(), target.get(), w.get(), gz.get(), lse.get(), reduction, -100, 0.1,
                1e-3, whole.get(), wsz, ex);
          },
          aclnnCpuCrossEntropyLossGradFromLogits);
      ASSERT_EQ(full.status, 0) << full.message;
      const std::vector<double> want = whole.Get();
      for (const auto& shard : kShards) {
        // Plain copies: lambdas cannot capture structured bindings before C++20.
        const int64_t c0 = shard.first, len = shard.second;
        DeviceTensor xs(dt, {kN, len});
        xs.Set(Columns(p, c0, len));
        // In place over the shard's logits, as the torch operator's backward may run it.
        const OpResult r = RunOp(
            [&](uint64_t* wsz, aclOpExecutor** ex) {
              return aclnnCpuCrossEntropyLossGradShardGetWorkspaceSize(
                  g.get(), xs.get(), target.get(), w.get(), gz.get(), lse.get(), reduction, -100,
                  0.1, 1e-3, c0, kV, xs.get(), wsz, ex);
            },
            aclnnCpuCrossEntropyLossGradShard);
        ASSERT_EQ(r.status, 0) << r.message;
        const std::vector<double> got = xs.Get();
        for (int64_t i = 0; i < kN; ++i) {
          for (int64_t j = 0; j < len; ++j) {
            ASSERT_EQ(got[i * len + j], want[i * kV + c0 + j])
                << "row " << i << " class " << c0 + j;
          }
        }
      }
    }
  }
}

TEST(VocabParallel, Validation) {
  DeviceTensor x(ACL_FLOAT, {4, 10}), target(ACL_INT64, {4}), w(ACL_FLOAT, {10}),
      w_all(ACL_FLOAT, {30}), lse(ACL_FLOAT, {4}), tl(ACL_FLOAT, {4}), ws(ACL_FLOAT, {4}),
      g(ACL_FLOAT, {}), out(ACL_FLOAT, {4, 10});
  target.Set({0, 5, 29, 12});
  auto stats = [&](int64_t offset, int64_t classes, const aclTensor* weight) {
    return RunOp(
        [&](uint64_t* wsz, aclOpExecutor** ex) {
          return aclnnCpuCrossEntropyShardStatsGetWorkspaceSize(x.get(), target.get(), weight, -100,
                                                                offset, classes, lse.get(),
                                                                tl.get(), ws.get(), wsz, ex);
        },
        aclnnCpuCrossEntropyShardStats);
  };
  auto grad = [&](int64_t offset, int64_t classes) {
    return RunOp(
        [&](uint64_t* wsz, aclOpExecutor** ex) {
          return aclnnCpuCrossEntropyLossGradShardGetWorkspaceSize(
              g.get(), x.get(), target.get(), nullptr, nullptr, lse.get(), nullptr, -100, 0.0, 0.0,
              offset, classes, out.get(), wsz, ex);
        },
        aclnnCpuCrossEntropyLossGradShard);
  };
  struct Bad {
    OpResult r;
    int code;
    const char* says;
  };
  const Bad cases[] = {
      {stats(25, 30, nullptr), ACLNN_ERR_INNER_TILING_ERROR, "beyond numClasses 30"},
      {stats(-1, 30, nullptr), ACLNN_ERR_INNER_TILING_ERROR, "do not describe a shard"},
      {stats(0, 30, w.get()), ACLNN_ERR_INNER_TILING_ERROR, "weightOptional"},
      {stats(0, 20, nullptr), ACL_ERROR_INVALID_PARAM, "29"},  // a target beyond numClasses
      {grad(25, 30), ACLNN_ERR_INNER_TILING_ERROR, "beyond numClasses 30"},
      {grad(0, 20), ACL_ERROR_INVALID_PARAM, "29"},
  };
  for (const Bad& b : cases) {
    EXPECT_EQ(b.r.status, b.code) << b.r.message;
    EXPECT_NE(b.r.message.find("aclnnCpu"), std::string::npos) << b.r.message;
    EXPECT_NE(b.r.message.find(b.says), std::string::npos) << b.r.message;
  }
  for (DeviceTensor* o : {&lse, &tl, &ws, &out}) EXPECT_TRUE(o->Untouched());
  const OpResult ok = stats(20, 30, w_all.get());
  EXPECT_EQ(ok.status, 0) << ok.message;
}
