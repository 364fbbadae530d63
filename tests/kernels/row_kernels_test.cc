// Every row kernel on its own (XNNPACK-style), for every dtype it is compiled for and every
// Highway target this CPU runs: lengths around every vector width (0, 1, W-1, W, W+1, 2W+3 for
// W = 4, 8, 16) and around the 512-element summation block, pointers misaligned by one element,
// streaming stores on and off; against a double-precision result computed here from each
// kernel's contract (row_kernels.h), with error bounds derived from its f32 arithmetic (f64 for
// DOUBLE: the unit roundoff u of the compute type stands in every bound), and the
// memory right after every output checked untouched. The kernel list (ACLNN_ROW_KERNELS) drives
// this file: a kernel without a Check_<member> below does not compile.
#include "kernels/row_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "device_tensor.h"
#include "reference.h"
#include "tolerance.h"

using aclnn_cpu::RowKernels;
using testing_support::ForEachTarget;
using tolerance::kEps32;

namespace {

constexpr size_t kLengths[] = {0,  1,  2,  3,  4,  5,  7,  8,   9,   11,  15,
                               16, 17, 19, 31, 32, 33, 35, 511, 512, 513, 1537};
constexpr aclDataType kDtypes[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE};
// Summation: f32 partials over blocks of at most 512 elements (plus the lane reduction).
constexpr double kSumTerms = 512 + 16;
constexpr unsigned char kCanary = 0xA5;
constexpr size_t kTail = 64;  // canary bytes after every buffer's elements

// n elements of dtype t at an address misaligned by `misalign` elements from 64 bytes, followed
// by canaries.
class Buf {
 public:
  Buf(aclDataType t, size_t n, size_t misalign)
      : t_(t), n_(n), esz_(static_cast<size_t>(testing_support::DtypeBytes(t))) {
    raw_.assign(64 + (misalign + n) * esz_ + kTail, kCanary);
    const auto base = reinterpret_cast<uintptr_t>(raw_.data());
    p_ = raw_.data() + ((64 - base % 64) % 64) + misalign * esz_;
  }
  void* p() { return p_; }
  // Stores v rounded to the dtype; returns the stored values.
  std::vector<double> Set(const std::vector<double>& v) {
    std::vector<double> r(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      r[i] = ref::RoundTo(t_, v[i]);
      const uint64_t bits = ref::Encode(t_, r[i]);
      std::memcpy(p_ + i * esz_, &bits, esz_);
    }
    return r;
  }
  std::vector<double> Get(size_t n) const {
    std::vector<double> r(n);
    for (size_t i = 0; i < n; ++i) {
      uint64_t bits = 0;
      std::memcpy(&bits, p_ + i * esz_, esz_);
      r[i] = ref::Decode(t_, bits);
    }
    return r;
  }
  bool TailIntact() const {
    for (size_t b = 0; b < kTail; ++b) {
      if (p_[n_ * esz_ + b] != kCanary) return false;
    }
    return true;
  }

 private:
  aclDataType t_;
  size_t n_, esz_;
  std::vector<unsigned char> raw_;
  unsigned char* p_;
};

struct Case {
  const RowKernels& k;
  aclDataType dt;
  size_t n, misalign;
  bool stream;
  std::mt19937_64& rng;
  // The compute type's unit roundoff and dtype (weights are in it).
  double u() const { return dt == ACL_DOUBLE ? std::ldexp(1.0, -53) : kEps32; }
  aclDataType compute() const { return aclnn_cpu::ComputeDtype(dt); }
  // A scalar as the kernel takes it (the f32 kernels round it to f32 once).
  double S(double v) const {
    return dt == ACL_DOUBLE ? v : static_cast<double>(static_cast<float>(v));
  }
  std::vector<double> Uniform(size_t n, double lo, double hi) const {
    return testing_support::Uniform(rng, static_cast<int64_t>(n), lo, hi);
  }
};

::testing::AssertionResult Near(double got, double want, double bound) {
  if (got == want || std::fabs(got - want) <= bound || (std::isnan(got) && std::isnan(want))) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "got " << got << ", want " << want << " +- " << bound;
}

// An elementwise output in dt: computed in f32 within `bound`, then rounded once to dt.
::testing::AssertionResult Elementwise(const Buf& out, const std::vector<double>& want,
                                       const std::vector<double>& bound, aclDataType dt) {
  if (!out.TailIntact()) return ::testing::AssertionFailure() << "wrote past the row";
  const std::string f = tolerance::Compare(out.Get(want.size()), want, bound,
                                           aclnn_cpu::ComputeDtype(dt), dt, nullptr);
  if (f.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << f;
}

double SumAbs(const std::vector<double>& v) {
  double s = 0;
  for (double e : v) s += std::fabs(e);
  return s;
}

::testing::AssertionResult Check_sum(const Case& c) {
  Buf x(c.dt, c.n, c.misalign);
  const std::vector<double> v = x.Set(c.Uniform(c.n, -2.0, 2.0));
  double want = 0;
  for (double e : v) want += e;
  return Near(c.k.sum(x.p(), c.n), want, kSumTerms * c.u() * SumAbs(v));
}

// Also a row of -inf only: -inf on every target (regression: EMU128 gave -FLT_MAX for that and
// for n == 0).
::testing::AssertionResult Check_max(const Case& c) {
  Buf x(c.dt, c.n, c.misalign);
  const std::vector<double> v = x.Set(c.Uniform(c.n, -50.0, 50.0));
  double want = -HUGE_VAL;
  for (double e : v) want = std::max(want, e);
  ::testing::AssertionResult r = Near(c.k.max(x.p(), c.n), want, 0.0);
  if (!r) return r;
  x.Set(std::vector<double>(c.n, -HUGE_VAL));
  return Near(c.k.max(x.p(), c.n), -HUGE_VAL, 0.0) << " (a row of -inf)";
}

// sum_exp's contract in double: the elements equal to m counted, exp(x - m) of the others
// summed (-inf adds 0), and the error bound of that sum.
struct ExpSum {
  double want = 0, count = 0, bound = 0;
};
ExpSum ExpectedSumExp(const Case& c, const std::vector<double>& v, double m) {
  ExpSum r;
  for (double e : v) {
    if (e == m) {
      r.count += 1;
      continue;
    }
    if (e == -HUGE_VAL) continue;
    const double t = std::exp(e - m);
    r.want += t;
    // exp within 2 ulp (4u relative), x - m rounded in the compute type, then the blocked sum.
    r.bound += t * (4 * c.u() + std::fabs(e - m) * c.u() + kSumTerms * c.u());
  }
  return r;
}

::testing::AssertionResult Check_sum_exp(const Case& c) {
  Buf x(c.dt, c.n, c.misalign);
  std::vector<double> v = c.Uniform(c.n, -12.0, 3.0);
  if (c.n > 2) v[c.n / 2] = v[c.n - 1] = 3.0;  // two elements at the maximum
  v = x.Set(v);
  double m = c.n > 2 ? 3.0 : 0.0;
  for (double e : v) m = std::max(m, e);
  const ExpSum e = ExpectedSumExp(c, v, m);
  double k = -1;
  const double got = c.k.sum_exp(x.p(), c.n, c.S(m), &k);
  if (k != e.count) return ::testing::AssertionFailure() << "count " << k << ", want " << e.count;
  return Near(got, e.want, e.bound);
}

// The sum of Check_sum_exp with the row's own maximum, on rows whose maximum rises from block
// to block (rescaling), two elements at it in the last block, and for rows of more than two
// blocks a first block of -inf; then a row of -inf.
::testing::AssertionResult Check_max_sum_exp(const Case& c) {
  // The longest case also runs over three of the kernel's 4096-element maximum blocks.
  const size_t n = c.n == kLengths[std::size(kLengths) - 1] ? 3 * 4096 + 5 : c.n;
  Buf x(c.dt, n, c.misalign);
  std::vector<double> v = c.Uniform(n, -12.0, 3.0);
  for (size_t i = 0; i < n; ++i) v[i] += 8.0 * static_cast<double>(i) / static_cast<double>(n);
  if (n > 2) v[n - 2] = v[n - 1] = 12.0;  // in the last block
  for (size_t i = 0; n > 1024 && i < 512; ++i) v[i] = -HUGE_VAL;
  v = x.Set(v);
  double m = -HUGE_VAL;
  for (double e : v) m = std::max(m, e);
  const ExpSum e = ExpectedSumExp(c, v, m);
  double got_m = 0;
  double k = -1;
  const double got = c.k.max_sum_exp(x.p(), n, &got_m, &k);
  if (got_m != m) {
    return ::testing::AssertionFailure() << "max " << got_m << ", want " << m;
  }
  if (k != e.count) return ::testing::AssertionFailure() << "count " << k << ", want " << e.count;
  ::testing::AssertionResult r = Near(got, e.want, e.bound);
  if (!r) return r;
  x.Set(std::vector<double>(n, -HUGE_VAL));
  const double none = c.k.max_sum_exp(x.p(), n, &got_m, &k);
  if (got_m != -HUGE_VAL || k != 0 || none != 0) {
    return ::testing::AssertionFailure()
           << "a row of -inf gave max " << got_m << ", count " << k << ", sum " << none;
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult Check_lsm_bwd(const Case& c) {
  Buf g(c.dt, c.n, c.misalign), y(c.dt, c.n, c.misalign), out(c.dt, c.n, c.misalign);
  const std::vector<double> gv = g.Set(c.Uniform(c.n, -1.0, 1.0));
  const std::vector<double> yv = y.Set(c.Uniform(c.n, -12.0, 0.0));
  const double s = 0.7;
  std::vector<double> want(c.n), bound(c.n);
  for (size_t i = 0; i < c.n; ++i) {
    const double e = std::exp(yv[i]) * s;
    want[i] = gv[i] - e;
    bound[i] = 5 * c.u() * (std::fabs(gv[i]) + e);  // exp, then one fused multiply-add
  }
  c.k.lsm_bwd(g.p(), y.p(), c.S(s), out.p(), c.n, c.stream);
  aclnn_cpu::FlushStreamingStores();
  return Elementwise(out, want, bound, c.dt);
}

::testing::AssertionResult Check_lsm_fwd(const Case& c) {
  Buf x(c.dt, c.n, c.misalign), out(c.dt, c.n, c.misalign);
  const std::vector<double> xv = x.Set(c.Uniform(c.n, -5.0, 5.0));
  const double m = 3.5, l = 1.25;
  std::vector<double> want(c.n), bound(c.n);
  for (size_t i = 0; i < c.n; ++i) {
    want[i] = (xv[i] - m) - l;
    bound[i] = c.u() * (std::fabs(xv[i] - m) + std::fabs(want[i]));  // two f32 subtractions
  }
  c.k.lsm_fwd(x.p(), c.S(m), c.S(l), out.p(), c.n, c.stream);
  aclnn_cpu::FlushStreamingStores();
  return Elementwise(out, want, bound, c.dt);
}

// Log-probabilities (shift 0) and logits with their row's log-sum-exp as the shift (7.25).
// ce_grad (weights in the compute type) and ce_grad_t (weights in the input's dtype: same_type).
::testing::AssertionResult CheckCeGrad(const Case& c, bool same_type) {
  const auto ce_grad = same_type ? c.k.ce_grad_t : c.k.ce_grad;
  for (bool weighted : {false, true}) {
    for (double shift : {0.0, 7.25}) {
      Buf lp(c.dt, c.n, c.misalign), out(c.dt, c.n, c.misalign),
          w(same_type ? c.dt : c.compute(), c.n, c.misalign);
      const std::vector<double> lv = lp.Set(c.Uniform(c.n, shift - 12.0, shift));
      const std::vector<double> wv = w.Set(c.Uniform(c.n, 0.5, 2.0));
      const double a = 0.8, b = 0.01;
      std::vector<double> want(c.n), bound(c.n);
      for (size_t i = 0; i < c.n; ++i) {
        const double p = std::exp(lv[i] - shift) * a, q = b * (weighted ? wv[i] : 1.0);
        want[i] = p - q;
        // exp, a product, then one fused multiply-add; the f32 difference lp - shift (exact
        // for shift 0) moves the exponent by up to half an ulp of it (u |lp - shift|).
        bound[i] = 5 * c.u() * (p + q) + p * c.u() * std::fabs(lv[i] - shift);
      }
      ce_grad(lp.p(), out.p(), c.n, c.S(shift), c.S(a), c.S(b), weighted ? w.p() : nullptr,
              c.stream);
      aclnn_cpu::FlushStreamingStores();
      ::testing::AssertionResult r = Elementwise(out, want, bound, c.dt);
      if (!r) return r << (weighted ? " (weighted" : " (no weight") << ", shift " << shift << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult Check_ce_grad(const Case& c) { return CheckCeGrad(c, false); }
::testing::AssertionResult Check_ce_grad_t(const Case& c) { return CheckCeGrad(c, true); }

// dot, and dot_t with weights in the input's dtype (same_type).
::testing::AssertionResult CheckDot(const Case& c, bool same_type) {
  const auto dot = same_type ? c.k.dot_t : c.k.dot;
  for (bool weighted : {false, true}) {
    Buf x(c.dt, c.n, c.misalign), w(same_type ? c.dt : c.compute(), c.n, c.misalign);
    const std::vector<double> xv = x.Set(c.Uniform(c.n, -5.0, 5.0));
    const std::vector<double> wv = w.Set(c.Uniform(c.n, 0.5, 2.0));
    const double m = 2.0;
    double want = 0, mag = 0;
    for (size_t i = 0; i < c.n; ++i) {
      const double t = (xv[i] - m) * (weighted ? wv[i] : 1.0);
      want += t;
      mag += std::fabs(t);
    }
    const double got = dot(x.p(), weighted ? w.p() : nullptr, c.n, c.S(m));
    ::testing::AssertionResult r = Near(got, want, (kSumTerms + 2) * c.u() * mag);
    if (!r) return r << (weighted ? " (weighted)" : " (no weight)");
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult Check_dot(const Case& c) { return CheckDot(c, false); }
::testing::AssertionResult Check_dot_t(const Case& c) { return CheckDot(c, true); }

// n rows of a few columns (strides with a gap), the column sums over the rows.
::testing::AssertionResult Check_lsm_bwd_cols(const Case& c) {
  // 40 columns: whole streamed 16-bit output vectors too.
  for (size_t cols : {size_t{1}, size_t{5}, size_t{17}, size_t{40}}) {
    const size_t stride = cols + 3, total = c.n * stride;
    Buf g(c.dt, total, c.misalign), y(c.dt, total, c.misalign), out(c.dt, total, c.misalign);
    const std::vector<double> gv = g.Set(c.Uniform(total, -1.0, 1.0));
    const std::vector<double> yv = y.Set(c.Uniform(total, -8.0, 0.0));
    const std::vector<double> before = out.Get(total);
    c.k.lsm_bwd_cols(g.p(), y.p(), out.p(), c.n, cols, stride, stride, stride, c.stream);
    aclnn_cpu::FlushStreamingStores();
    const std::vector<double> got = out.Get(total);
    std::vector<double> want, bound, got_view;
    for (size_t j = 0; j < cols; ++j) {
      double s = 0, mag = 0;
      for (size_t r = 0; r < c.n; ++r) {
        s += gv[r * stride + j];
        mag += std::fabs(gv[r * stride + j]);
      }
      for (size_t r = 0; r < c.n; ++r) {
        const double e = std::exp(yv[r * stride + j]);
        want.push_back(gv[r * stride + j] - e * s);
        got_view.push_back(got[r * stride + j]);
        bound.push_back(5 * c.u() * (std::fabs(gv[r * stride + j]) + e * std::fabs(s)) +
                        e * (256 + 16 + 1) * c.u() * mag);  // the column sum's error
      }
    }
    for (size_t r = 0; r < c.n; ++r) {  // the gaps between the columns stay untouched
      for (size_t j = cols; j < stride; ++j) {
        const size_t i = r * stride + j;
        if (std::memcmp(&got[i], &before[i], sizeof(double)) != 0) {
          return ::testing::AssertionFailure() << "wrote the gap at row " << r;
        }
      }
    }
    if (!out.TailIntact()) return ::testing::AssertionFailure() << "wrote past the tile";
    const std::string f = tolerance::Compare(got_view, want, bound, c.compute(), c.dt, nullptr);
    if (!f.empty()) return ::testing::AssertionFailure() << f << " (" << cols << " columns)";
  }
  return ::testing::AssertionSuccess();
}

// The classes (rows) of a column-tile case: the case's length, at most 600 (past the 256-row
// summation blocks; the suite also runs under qemu, where the longest length costs minutes).
size_t TileRows(const Case& c) { return std::min(c.n, size_t{600}); }

// Row indices for a tile's columns: every row in turn, with -1 (none) in every fourth column.
std::vector<double> PickRows(size_t rows, size_t cols) {
  std::vector<double> t(cols);
  for (size_t j = 0; j < cols; ++j) {
    t[j] = j % 4 == 3 || rows == 0 ? -1.0 : static_cast<double>((j * 7) % rows);
  }
  return t;
}

// The input at row t[j] of each column, exactly; 0 where t[j] = -1.
::testing::AssertionResult Check_ce_pick_cols(const Case& c) {
  if (c.stream) return ::testing::AssertionSuccess();  // it writes no tensor: once is enough
  const size_t rows = TileRows(c);
  for (size_t cols : {size_t{1}, size_t{17}, size_t{40}}) {
    const size_t stride = cols + 3, total = rows * stride;
    Buf x(c.dt, total, c.misalign), t(c.compute(), cols, 0);
    const std::vector<double> v = x.Set(c.Uniform(total, -12.0, 3.0));
    const std::vector<double> tv = t.Set(PickRows(rows, cols));
    std::vector<double> xt(cols, 99.0), p(cols, 99.0), lse(cols);
    for (size_t j = 0; j < cols; ++j) lse[j] = 3.0 + 0.25 * static_cast<double>(j % 7);
    c.k.ce_pick_cols(x.p(), rows, cols, stride, t.p(), nullptr, xt.data());
    c.k.ce_pick_cols(x.p(), rows, cols, stride, t.p(), lse.data(), p.data());
    for (size_t j = 0; j < cols; ++j) {
      const double want = tv[j] >= 0 ? v[static_cast<size_t>(tv[j]) * stride + j] : 0.0;
      if (xt[j] != want) {
        return ::testing::AssertionFailure()
               << "column " << j << " of " << cols << ": " << xt[j] << ", want " << want;
      }
      // exp(want - lse) in double lanes: within 2 ulp of double (Highway's Exp: 1 ulp).
      const double e = std::exp(want - lse[j]);
      if (!(std::fabs(p[j] - e) <= 4 * 0x1p-53 * e)) {
        return ::testing::AssertionFailure()
               << "p of column " << j << " of " << cols << ": " << p[j] << ", want " << e;
      }
    }
  }
  return ::testing::AssertionSuccess();
}

// A cross-entropy tile: c.n classes (rows) of a few positions (columns; strides with a gap),
// two elements of each column at its maximum, and a column of -inf (l NaN, as
// LogSumExpShifted(0, 0)).
::testing::AssertionResult Check_ce_stats_cols(const Case& c) {
  if (c.stream) return ::testing::AssertionSuccess();  // it writes no tensor: once is enough
  const size_t n = TileRows(c);
  for (size_t cols : {size_t{1}, size_t{17}, size_t{40}}) {
    const size_t stride = cols + 3, total = n * stride;
    Buf x(c.dt, total, c.misalign), w(c.compute(), n, c.misalign);
    std::vector<double> v = c.Uniform(total, -12.0, 3.0);
    for (size_t j = 0; j < cols && n > 2; ++j) v[j] = v[(n - 1) * stride + j] = 4.0 + j;
    if (cols > 1) {
      for (size_t r = 0; r < n; ++r) v[r * stride + 1] = -HUGE_VAL;
    }
    v = x.Set(v);
    const std::vector<double> wv = w.Set(c.Uniform(n, 0.5, 2.0));
    Buf t(c.compute(), cols, 0);
    const std::vector<double> tv = t.Set(PickRows(n, cols));
    for (bool weighted : {false, true}) {
      std::vector<double> m(cols), l(cols), xt(cols), dot(cols);
      c.k.ce_stats_cols(x.p(), n, cols, stride, weighted ? w.p() : nullptr, t.p(), m.data(),
                        l.data(), xt.data(), dot.data());
      for (size_t j = 0; j < cols; ++j) {
        std::vector<double> col(n);
        for (size_t r = 0; r < n; ++r) col[r] = v[r * stride + j];
        double want_m = -HUGE_VAL;
        for (double e : col) want_m = std::max(want_m, e);
        const char* what = weighted ? " (weighted" : " (no weight";
        const double want_xt = tv[j] >= 0 ? col[static_cast<size_t>(tv[j])] : 0.0;
        if (xt[j] != want_xt) {
          return ::testing::AssertionFailure()
                 << "xt " << xt[j] << ", want " << want_xt << what << ", column " << j << ")";
        }
        if (m[j] != want_m) {
          return ::testing::AssertionFailure()
                 << "max " << m[j] << ", want " << want_m << what << ", column " << j << ")";
        }
        if (want_m == -HUGE_VAL) {
          if (!std::isnan(l[j])) {
            return ::testing::AssertionFailure()
                   << "a column of -inf gave l " << l[j] << what << ", column " << j << ")";
          }
          continue;
        }
        // log(k + R), off by R's error relative to k + R and a few ulp of double's logarithms.
        const ExpSum e = ExpectedSumExp(c, col, want_m);
        const double want_l = std::log(e.count + e.want);
        ::testing::AssertionResult r = Near(
            l[j], want_l, e.bound / (e.count + e.want) + 8 * 0x1p-53 * (1 + std::fabs(want_l)));
        if (!r) return r << what << ", column " << j << ")";
        double want_dot = 0, mag = 0;
        for (size_t i = 0; i < n; ++i) {
          const double t = (col[i] - want_m) * (weighted ? wv[i] : 1.0);
          want_dot += t;
          mag += std::fabs(t);
        }
        r = Near(dot[j], want_dot, (256 + 2) * c.u() * mag);
        if (!r) return r << " dot" << what << ", column " << j << ")";
      }
    }
    if (!x.TailIntact()) return ::testing::AssertionFailure() << "wrote past the tile";
  }
  return ::testing::AssertionSuccess();
}

// out = exp(x - shift[j]) * a[j] - b[j] * w[r] over a tile, but tc[j] at row t[j] of column j
// and in every row of a column with t[j] = -2.
::testing::AssertionResult Check_ce_grad_cols(const Case& c) {
  const size_t n = TileRows(c);
  for (size_t cols : {size_t{1}, size_t{17}, size_t{40}}) {
    const bool weighted = cols == 17;
    const size_t stride = cols + 3, total = n * stride;
    Buf x(c.dt, total, c.misalign), out(c.dt, total, c.misalign);
    Buf w(c.compute(), n, c.misalign), sh(c.compute(), cols, 0), a(c.compute(), cols, 0),
        b(c.compute(), cols, 0), t(c.compute(), cols, 0), tc(c.compute(), cols, 0);
    const std::vector<double> shv = sh.Set(c.Uniform(cols, 0.0, 8.0));
    const std::vector<double> av = a.Set(c.Uniform(cols, 0.5, 1.0));
    const std::vector<double> bv = b.Set(c.Uniform(cols, 0.0, 0.02));
    const std::vector<double> wv = w.Set(c.Uniform(n, 0.5, 2.0));
    const std::vector<double> tcv = tc.Set(c.Uniform(cols, -1.0, -0.5));
    std::vector<double> tv(cols);
    for (size_t j = 0; j < cols; ++j) {
      tv[j] = j % 5 == 3 ? -2.0 : (j % 5 == 4 || n == 0 ? -1.0 : static_cast<double>(j % n));
    }
    tv = t.Set(tv);
    std::vector<double> xv = c.Uniform(total, -12.0, 0.0);
    for (size_t i = 0; i < total; ++i) xv[i] += shv[i % stride < cols ? i % stride : 0];
    if (cols > 3 && n > 0) xv[3] = HUGE_VAL;  // in a column of t = -2: still tc
    xv = x.Set(xv);
    const std::vector<double> before = out.Get(total);
    c.k.ce_grad_cols(x.p(), out.p(), n, cols, stride, stride, sh.p(), a.p(), b.p(),
                     weighted ? w.p() : nullptr, t.p(), tc.p(), c.stream);
    aclnn_cpu::FlushStreamingStores();
    const std::vector<double> got = out.Get(total);
    std::vector<double> want, bound, got_view;
    for (size_t r = 0; r < n; ++r) {
      for (size_t j = 0; j < stride; ++j) {
        const size_t i = r * stride + j;
        if (j >= cols) {
          if (std::memcmp(&got[i], &before[i], sizeof(double)) != 0) {
            return ::testing::AssertionFailure() << "wrote the gap at row " << r;
          }
          continue;
        }
        got_view.push_back(got[i]);
        if (tv[j] == -2.0 || tv[j] == static_cast<double>(r)) {
          want.push_back(tcv[j]);
          bound.push_back(0.0);
          continue;
        }
        const double p = std::exp(xv[i] - shv[j]) * av[j], q = bv[j] * (weighted ? wv[r] : 1);
        want.push_back(p - q);
        bound.push_back(5 * c.u() * (p + q) + p * c.u() * std::fabs(xv[i] - shv[j]));
      }
    }
    if (!out.TailIntact()) return ::testing::AssertionFailure() << "wrote past the tile";
    const std::string f = tolerance::Compare(got_view, want, bound, c.compute(), c.dt, nullptr);
    if (!f.empty()) {
      return ::testing::AssertionFailure()
             << f << " (" << cols << " columns" << (weighted ? ", weighted)" : ")");
    }
  }
  return ::testing::AssertionSuccess();
}

// The row in the compute type, exactly; nothing written past it.
::testing::AssertionResult Check_widen(const Case& c) {
  if (c.stream) return ::testing::AssertionSuccess();  // no streaming variant
  Buf x(c.dt, c.n, c.misalign), out(c.compute(), c.n, c.misalign);
  std::vector<double> v = c.Uniform(c.n, -70000.0, 70000.0);
  if (c.n > 2) {
    v[0] = HUGE_VAL;
    v[1] = -0.0;
    v[2] = 1e-30;  // subnormal or zero in 16-bit dtypes
  }
  const std::vector<double> want = x.Set(v);
  c.k.widen(x.p(), c.n, out.p());
  const std::vector<double> got = out.Get(c.n);
  for (size_t j = 0; j < c.n; ++j) {
    if (std::memcmp(&got[j], &want[j], sizeof(double)) != 0) {
      return ::testing::AssertionFailure()
             << "element " << j << ": " << got[j] << ", want " << want[j];
    }
  }
  if (!out.TailIntact()) return ::testing::AssertionFailure() << "wrote past the row";
  return ::testing::AssertionSuccess();
}

// The gradient's per-column coefficients, from the formula (aclnnCpuCrossEntropyLossGrad's, in
// double): with the options off and on (smoothing, z-loss, class weights), an ignored column in
// every fourth, one ignored column with an infinite upstream gradient (its coefficients are not
// finite, so it is not zeroed: t stays -1), and log-sum-exps up to ~600, where rounding the lse
// to f32 moves p by ~1e-5 unless a's scale takes it back. Every output in the compute type
// within 1 ulp of the double result (plus that result's own rounding error) rounded to it; tc
// of a 16-bit dtype rounded to odd (an inexact value has its last bit set), t exact.
::testing::AssertionResult Check_ce_coef_cols(const Case& c) {
  if (c.stream || c.misalign != 0) return ::testing::AssertionSuccess();  // no tensor written
  const size_t cols = std::min(c.n, size_t{600});
  const bool f64 = c.compute() == ACL_DOUBLE, half = c.dt == ACL_FLOAT16 || c.dt == ACL_BF16;
  const double ulp = f64 ? 0x1p-52 : 0x1p-23;
  for (const bool options : {false, true}) {
    aclnn_cpu::CeCoefConstants k;
    k.label_smoothing = options ? 0.1 : 0.0;
    k.zloss_scale = options ? 1e-3 : 0.0;
    k.cinv = 1.0 / 7.0;
    k.d = 3.5;
    k.m = 7.0;
    k.w_sum = options ? 12.25 : 7.0;
    Buf t(c.compute(), cols, 0), shift(c.compute(), cols, 0), a(c.compute(), cols, 0),
        b(c.compute(), cols, 0), tv(c.compute(), cols, 0), tc(c.compute(), cols, 0);
    const std::vector<double> tvals = t.Set(PickRows(7, cols));
    std::vector<double> w = c.Uniform(cols, 0.5, 2.0), g = c.Uniform(cols, 0.25, 2.0),
                        gz = c.Uniform(cols, -1.0, 1.0), lse = c.Uniform(cols, -5.0, 600.0),
                        p = c.Uniform(cols, 0.0, 1.0);
    for (size_t j = 0; j < cols; ++j) {
      if (!options) w[j] = 1.0;
      if (tvals[j] < 0) w[j] = 0.0;
    }
    if (cols > 7) g[7] = HUGE_VAL;  // column 7 is ignored (PickRows)
    c.k.ce_coef_cols(cols, k, t.p(), w.data(), g.data(), gz.data(), lse.data(), p.data(), shift.p(),
                     a.p(), b.p(), tv.p(), tc.p());
    const std::vector<double> gs = shift.Get(cols), ga = a.Get(cols), gb = b.Get(cols),
                              gt = tv.Get(cols), gc = tc.Get(cols);
    for (size_t j = 0; j < cols; ++j) {
      const bool kept = tvals[j] >= 0;
      const double mf = kept ? 1.0 : 0.0;
      const double aa = g[j] * (1.0 - k.label_smoothing) / k.d * w[j];
      const double ss = g[j] / k.d * (k.label_smoothing * k.cinv) * mf;
      const double zc = k.zloss_scale != 0.0 ? 2.0 * k.zloss_scale * (kept ? lse[j] : 0.0) * mf *
                                                   (g[j] + gz[j]) / k.m
                                             : 0.0;
      const double big = aa + ss * k.w_sum + zc;
      const bool zero = !kept && std::isfinite(aa) && std::isfinite(ss) && std::isfinite(zc);
      const double hi = f64 ? lse[j] : static_cast<double>(static_cast<float>(lse[j]));
      const double want[] = {zero ? 0.0 : hi, zero ? 0.0 : big * std::exp(hi - lse[j]),
                             zero ? 0.0 : ss, zero ? -2.0 : tvals[j],
                             kept ? p[j] * big - ss * w[j] - aa : 0.0};
      const double got[] = {gs[j], ga[j], gb[j], gt[j], gc[j]};
      const char* names[] = {"shift", "a", "b", "t", "tc"};
      // The double evaluation's own error (a few roundings of the terms' magnitudes; tc
      // cancels), then the rounding to the compute type.
      const double terms = std::fabs(aa) + std::fabs(ss) * (k.w_sum + w[j]) + std::fabs(zc);
      const double mag[] = {0.0, 8 * terms, 8 * std::fabs(ss), 0.0,
                            kept ? 8 * (p[j] * std::fabs(big) + terms) : 0.0};
      for (int o = 0; o < 5; ++o) {
        const double bound = o == 3 ? 0.0 : ulp * std::fabs(want[o]) + 0x1p-53 * mag[o];
        ::testing::AssertionResult r = Near(got[o], want[o], bound);
        if (!r) return r << " " << names[o] << ", column " << j << " of " << cols;
      }
      if (half && static_cast<double>(static_cast<float>(want[4])) != want[4]) {
        uint32_t bits;
        const float f = static_cast<float>(gc[j]);
        std::memcpy(&bits, &f, sizeof bits);
        if ((bits & 1u) == 0) {
          return ::testing::AssertionFailure()
                 << "tc of column " << j << " (" << gc[j] << ") is not rounded to odd";
        }
      }
    }
    for (Buf* o : {&shift, &a, &b, &tv, &tc}) {
      if (!o->TailIntact()) return ::testing::AssertionFailure() << "wrote past the columns";
    }
  }
  return ::testing::AssertionSuccess();
}

// Every 16-bit value, inf, NaN, zeros and subnormals included, loads and stores exactly on every
// target: lsm_fwd with m = l = 0 writes (x - 0) - 0 = x (regression: without hardware f16
// conversion, SSE4/SSSE3/SCALAR loaded f16 +-inf as +-65536 and NaN as a finite value).
TEST(RowKernels, Every16BitValueRoundTrips) {
  std::vector<uint16_t> all(65536), out(65536);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  ForEachTarget([&](const std::string& target) {
    for (aclDataType dt : {ACL_FLOAT16, ACL_BF16}) {
      const RowKernels k = aclnn_cpu::GetRowKernels(dt);
      for (bool stream : {false, true}) {
        k.lsm_fwd(all.data(), 0.0f, 0.0f, out.data(), all.size(), stream);
        aclnn_cpu::FlushStreamingStores();
        int wrong = 0;
        for (size_t i = 0; i < all.size(); ++i) {
          const double in = ref::Decode(dt, all[i]), got = ref::Decode(dt, out[i]);
          const bool same = std::isnan(in) ? std::isnan(got) : out[i] == all[i];
          if (!same && wrong++ < 3) {
            ADD_FAILURE() << target << " " << k.dtype << ": 0x" << std::hex << all[i]
                          << " came back as 0x" << out[i] << std::dec << " (" << got << ")";
          }
        }
        EXPECT_EQ(wrong, 0) << target << " " << k.dtype << " stream " << stream;
      }
    }
  });
}

// Runs `check` for every target, dtype, length, misalignment and streaming flag; returns the
// number of cases.
int RunEverywhere(const char* name, ::testing::AssertionResult (*check)(const Case&)) {
  int cases = 0;
  std::mt19937_64 rng(42);
  ForEachTarget([&](const std::string& target) {
    for (aclDataType dt : kDtypes) {
      const RowKernels k = aclnn_cpu::GetRowKernels(dt);
      for (size_t n : kLengths) {
        for (size_t misalign : {0, 1}) {
          for (bool stream : {false, true}) {
            const Case c{k, dt, n, misalign, stream, rng};
            EXPECT_TRUE(check(c)) << name << " on " << target << ", " << k.dtype << ", n " << n
                                  << ", misaligned by " << misalign << ", stream " << stream;
            ++cases;
          }
        }
      }
    }
  });
  return cases;
}

}  // namespace

// One test per kernel of the list.
#define ACLNN_KERNEL_TEST(member, Prefix, unused)             \
  TEST(RowKernels, member) {                                  \
    const int cases = RunEverywhere(#member, Check_##member); \
    std::printf("row kernel %s: %d cases\n", #member, cases); \
    EXPECT_GT(cases, 0);                                      \
  }
ACLNN_ROW_KERNELS(ACLNN_KERNEL_TEST, _)
#undef ACLNN_KERNEL_TEST

namespace {

// f32 values whose rounding to a 16-bit type is delicate: every upper half of the bits with low
// halves around bf16's ties (0x8000) and f16's (0x1000: f16 drops 13 mantissa bits), so ties,
// their neighbours, subnormal inputs and results, overflow to inf, inf and NaN with payloads;
// then whole vectors with one subnormal lane among normal ones, and vice versa.
std::vector<float> RoundingInputs() {
  std::vector<float> w;
  for (uint32_t hi = 0; hi < 65536; ++hi) {
    for (uint32_t lo : {0x0000u, 0x0001u, 0x0FFFu, 0x1000u, 0x1001u, 0x3000u, 0x7FFFu, 0x8000u,
                        0x8001u, 0xC000u, 0xFFFFu}) {
      const uint32_t bits = hi << 16 | lo;
      float f;
      std::memcpy(&f, &bits, 4);
      w.push_back(f);
    }
  }
  for (int k = 0; k < 64; ++k) w.push_back(k % 16 == 3 ? 1e-39f : 1.0f + k / 1024.0f);
  return w;
}

// On every target (ForEachTarget), f32 -> dt rounding by ce_grad with lp = 0, a = 0, b = -1
// (which writes w[j] + 0 rounded to dt) equals the double reference's rounding bit for bit (NaN:
// any NaN), streamed or not, aligned or not; returns each target's aligned unstreamed bits.
std::vector<std::pair<std::string, std::vector<uint16_t>>> RoundEverywhere(
    aclDataType dt, const std::vector<float>& w) {
  const size_t n = w.size();
  const std::vector<uint16_t> zeros(n, 0);
  std::vector<uint16_t> out(n + 1);
  std::vector<std::pair<std::string, std::vector<uint16_t>>> results;
  ForEachTarget([&](const std::string& target) {
    const RowKernels k = aclnn_cpu::GetRowKernels(dt);
    for (bool stream : {false, true}) {
      for (size_t misalign : {0, 1}) {
        k.ce_grad(zeros.data(), out.data() + misalign, n - misalign, 0.0f, 0.0f, -1.0f,
                  w.data() + misalign, stream);
        aclnn_cpu::FlushStreamingStores();
        int wrong = 0;
        for (size_t i = misalign; i < n; ++i) {
          const double want = ref::RoundTo(dt, static_cast<double>(w[i]) + 0.0);
          const uint16_t got = out[i];
          const bool same =
              std::isnan(want) ? std::isnan(ref::Decode(dt, got)) : got == ref::Encode(dt, want);
          if (!same && wrong++ < 3) {
            uint32_t in_bits;
            std::memcpy(&in_bits, &w[i], 4);
            ADD_FAILURE() << target << " " << k.dtype << " stream " << stream << ": " << w[i]
                          << " (0x" << std::hex << in_bits << ") became 0x" << got << std::dec;
          }
        }
        EXPECT_EQ(wrong, 0) << target << " " << k.dtype << " stream " << stream << " misalign "
                            << misalign;
        if (!stream && misalign == 0) results.emplace_back(target, out);
      }
    }
  });
  return results;
}

}  // namespace

// f32 -> bf16 rounding gives the same bits on every target, with and without the AVX512_BF16
// instructions (ForEachTarget runs the AVX-512 targets both ways where the CPU has them); the
// instruction reads subnormals as zero, so they must take the integer path.
TEST(RowKernels, Bf16RoundingIsTheSameWithAndWithoutHardware) {
  const auto results = RoundEverywhere(ACL_BF16, RoundingInputs());
  // NaN payloads too: the two ways of each AVX-512 target agree bit for bit.
  for (const auto& [name, bits] : results) {
    for (const auto& [other, other_bits] : results) {
      if (other == name + " sw-bf16") {
        EXPECT_TRUE(bits == other_bits) << name << " and " << other << " differ";
      }
    }
  }
}

// f32 -> f16 rounding gives the same bits with the hardware conversion (F16C's vcvtps2ph on
// AVX2 and AVX3, fcvtn on Arm) and with the software one (SSE4, SSSE3, scalar): every target
// equals the reference, and non-NaN results agree between every pair of targets.
TEST(RowKernels, F16RoundingIsTheSameWithAndWithoutHardware) {
  const std::vector<float> w = RoundingInputs();
  const auto results = RoundEverywhere(ACL_FLOAT16, w);
  ASSERT_FALSE(results.empty());
  for (const auto& [name, bits] : results) {
    size_t differ = 0;
    for (size_t i = 0; i < w.size(); ++i) {
      if (!std::isnan(w[i]) && bits[i] != results[0].second[i]) ++differ;
    }
    EXPECT_EQ(differ, 0u) << name << " and " << results[0].first << " differ";
  }
}

// ACLNN_CPU_PREFETCH_BYTES (read once) replaces the prefetch distance; the CTest entry
// row_kernels_no_prefetch runs this whole suite with it set to 0 (prefetching off), so every
// kernel is checked with and without its prefetches.
TEST(RowKernels, PrefetchDistanceFromTheEnvironment) {
  const char* env = std::getenv("ACLNN_CPU_PREFETCH_BYTES");
  if (env == nullptr) {
    EXPECT_EQ(aclnn_cpu::PrefetchBytes(), aclnn_cpu::kPrefetchBytes);
    return;
  }
  EXPECT_EQ(aclnn_cpu::PrefetchBytes(), std::strtoull(env, nullptr, 10));
}
