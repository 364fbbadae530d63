#include "tolerance.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace tolerance {

double RoundChain(aclDataType t, aclDataType out, double v) {
  return ref::RoundTo(out, ref::RoundTo(t, v));
}

double Tolerance(aclDataType t, aclDataType out, double refv, double bound) {
  const double a = std::fabs(refv) + bound;
  double tol = bound + 0.5 * ref::Ulp(t == ACL_DOUBLE ? ACL_FLOAT : t, a);
  if (out != t && out != ACL_DOUBLE) tol += 0.5 * ref::Ulp(out, a);
  return tol;
}

std::string Compare(const std::vector<double>& got, const std::vector<double>& refv,
                    const std::vector<double>& bound, aclDataType t, aclDataType out,
                    ErrorStats* stats) {
  ErrorStats local;
  ErrorStats& st = stats ? *stats : local;
  if (got.size() != refv.size() || bound.size() != refv.size()) return "size mismatch";
  std::string first;
  auto fail = [&](const std::ostringstream& os) {
    ++st.failures;
    if (first.empty()) first = os.str();
  };
  for (size_t i = 0; i < got.size(); ++i) {
    const double r = RoundChain(t, out, refv[i]);
    ++st.count;
    if (got[i] != 0.0) ++st.nonzero;
    if (!std::isfinite(r) || !std::isfinite(got[i])) {
      const bool same = (std::isnan(r) && std::isnan(got[i])) || r == got[i];
      if (!same) {
        std::ostringstream os;
        os << "element " << i << ": got " << got[i] << ", reference " << refv[i] << " (rounded "
           << r << ")";
        fail(os);
      }
      continue;
    }
    const double err = std::fabs(got[i] - refv[i]);
    const double tol = Tolerance(t, out, refv[i], bound[i]);
    if (tol > 0.0) st.max_tolerance_used = std::max(st.max_tolerance_used, err / tol);
    const double ulps = std::fabs(got[i] - r) / ref::Ulp(out, r);
    st.max_ulp = std::max(st.max_ulp, ulps);
    if (bound[i] <= 0.25 * ref::Ulp(out, r)) {
      st.max_ulp_conditioned = std::max(st.max_ulp_conditioned, ulps);
    }
    if (!(err <= tol)) {
      std::ostringstream os;
      os << "element " << i << ": got " << got[i] << ", reference " << refv[i] << ", error " << err
         << " > tolerance " << tol << " (bound " << bound[i] << ")";
      fail(os);
    }
  }
  return first;
}

std::vector<double> LogSoftmaxBackwardBound(const std::vector<double>& g,
                                            const std::vector<double>& y, const ref::Shape& shape,
                                            int dim, aclDataType in) {
  std::vector<double> terms, sum_terms;
  ref::LogSoftmaxBackwardMagnitudes(g, y, shape, dim, &terms, &sum_terms);
  const int64_t len = shape.empty() ? 1 : shape[static_cast<size_t>(dim)];
  // f32 error bound: exp (1 ulp), product and difference on the terms; the blocked sum adds at
  // most min(len, 256) + 8 roundings (a 512-element block over >= 2 accumulators, plus the lane
  // fold) relative to sum |g|.
  const double k_sum = static_cast<double>(std::min<int64_t>(len, 256) + 8);
  std::vector<double> bound(terms.size());
  for (size_t i = 0; i < bound.size(); ++i) {
    bound[i] = (in == ACL_DOUBLE ? kEps64 : kEps32) * (4.0 * terms[i] + k_sum * sum_terms[i]);
  }
  return bound;
}

namespace {

// The f32 error of (x - max) - log(S), in units of the unit roundoff: the two differences
// (relative to |x - max| <= |out| + l), and log(S) = log(k) + log1p(R / k) where the blocked sum
// R of the non-maximal exps carries <= 264 roundings relative to R, i.e. 264 (1 - e^-l)
// absolutely in the log.
double LogSoftmaxErrorTerms(double out, double l) {
  return 2.0 * std::fabs(out) + 2.0 * l + 270.0 * (1.0 - std::exp(-l));
}

}  // namespace

std::vector<double> LogSoftmaxBound(const std::vector<double>& expect,
                                    const std::vector<double>& slice_log_sum, aclDataType out) {
  const double eps = out == ACL_DOUBLE ? kEps64 : kEps32;
  std::vector<double> bound(expect.size());
  for (size_t i = 0; i < bound.size(); ++i) {
    bound[i] = eps * LogSoftmaxErrorTerms(expect[i], slice_log_sum[i]);
  }
  return bound;
}

std::vector<double> CrossEntropyLossGradBound(const ref::CrossEntropyArgs& a,
                                              const std::vector<double>& log_prob,
                                              const std::vector<double>& grad_loss,
                                              const std::vector<double>& grad_zloss,
                                              const std::vector<double>& lse, double u) {
  std::vector<double> bound =
      ref::CrossEntropyLossGradMagnitudes(a, log_prob, grad_loss, grad_zloss, lse);
  // f32 (u) arithmetic: the row coefficient rounded to f32, exp (1 ulp), two products and a fused
  // difference: at most 6 roundings relative to the terms' magnitudes.
  for (double& b : bound) b *= 6.0 * u;
  return bound;
}

CrossEntropyBounds CrossEntropyLossBound(const ref::CrossEntropyArgs& a,
                                         const std::vector<double>& x,
                                         const ref::CrossEntropyResult& r, double u) {
  const int64_t n = a.n, c = a.c;
  const std::vector<int64_t>& t = a.target;
  const std::vector<double>& w = a.weight;
  auto wt = [&](int64_t j) { return w.empty() ? 1.0 : std::fabs(w[j]); };
  std::vector<double> nll(n, 0.0), sm(n, 0.0), zl(n, 0.0), row_l(n, 0.0);
  double D = 0.0, M = 0.0;
  CrossEntropyBounds b;
  for (int64_t i = 0; i < n; ++i) {
    double mx = -HUGE_VAL, dot = 0.0, wsum = 0.0;
    for (int64_t j = 0; j < c; ++j) mx = std::max(mx, x[i * c + j]);
    // log(S) = log(k) + log1p(R / k) with R's 264 roundings relative to R <= S (1 - e^-l).
    const double l = r.lse[i] - mx;
    row_l[i] = l;
    const double dl = u * (270.0 * (1.0 - std::exp(-l)) + 2.0 * l) + 1.2e-16 * std::fabs(r.lse[i]);
    b.lse.push_back(dl);
    if (t[i] == a.ignore_index) continue;
    for (int64_t j = 0; j < c; ++j) {
      dot += wt(j) * std::fabs(x[i * c + j] - mx);
      wsum += wt(j);
    }
    nll[i] = wt(t[i]) * (dl + u * std::fabs(x[i * c + t[i]] - r.lse[i]));
    sm[i] = u * 270.0 * dot + dl * wsum;
    zl[i] = std::fabs(a.zloss_scale) * 2.0 * std::fabs(r.lse[i]) * dl;
    D += w.empty() ? 1.0 : w[t[i]];
    M += 1.0;
  }
  b.log_prob.resize(r.log_prob.size());
  for (size_t i = 0; i < b.log_prob.size(); ++i) {
    const double l = row_l[static_cast<int64_t>(i) / c];
    b.log_prob[i] = u * (2.0 * std::fabs(r.log_prob[i]) + 2.0 * l + 270.0 * (1.0 - std::exp(-l)));
  }
  const double ls = a.label_smoothing, cinv = 1.0 / static_cast<double>(c);
  if (a.reduction == ref::Reduction::kNone) {
    for (int64_t i = 0; i < n; ++i) {
      b.loss.push_back((1 - ls) * nll[i] + ls * cinv * sm[i] + zl[i]);
      b.zloss.push_back(zl[i]);
    }
    return b;
  }
  double sn = 0, ss = 0, sz = 0;
  for (int64_t i = 0; i < n; ++i) {
    sn += nll[i];
    ss += sm[i];
    sz += zl[i];
  }
  const bool mean = a.reduction == ref::Reduction::kMean;
  const double dd = mean ? std::fabs(D) : 1.0, mm = mean ? M : 1.0;
  b.loss.push_back(((1 - ls) * sn + ls * cinv * ss) / dd + sz / mm);
  b.zloss.push_back(sz / mm);
  return b;
}

namespace {
double Wq(const std::vector<double>& q, const std::vector<double>& weight, int64_t i, int64_t c,
          int64_t j, double ls) {
  return std::fabs((weight.empty() ? 1.0 : weight[j]) *
                   ((1.0 - ls) * q[i * c + j] + ls / static_cast<double>(c)));
}
}  // namespace

CrossEntropyProbBounds CrossEntropyProbBound(const std::vector<double>& x,
                                             const std::vector<double>& q,
                                             const std::vector<double>& weight, int64_t n,
                                             int64_t c, ref::Reduction r, double label_smoothing,
                                             const ref::CrossEntropyProbResult& e, double u) {
  CrossEntropyProbBounds b;
  std::vector<double> rows(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double mx = -HUGE_VAL, s = 0.0, dot = 0.0;
    for (int64_t j = 0; j < c; ++j) mx = std::max(mx, x[i * c + j]);
    for (int64_t j = 0; j < c; ++j) {
      const double w = Wq(q, weight, i, c, j, label_smoothing);
      s += w;
      dot += w * std::fabs(x[i * c + j] - mx);
    }
    const double l = e.lse[i] - mx;
    const double dl = u * (270.0 * (1.0 - std::exp(-l)) + 2.0 * l) + 1.2e-16 * std::fabs(e.lse[i]);
    b.lse.push_back(dl);
    // The sum of the weighted targets is blocked like every sum (up to 512 + 16 roundings).
    const double k_sum = static_cast<double>(std::min<int64_t>(c, 512) + 16);
    rows[i] = s * dl + u * 270.0 * dot + u * k_sum * s * std::fabs(l);
  }
  if (r == ref::Reduction::kNone) {
    b.loss = rows;
    return b;
  }
  double total = 0.0;
  for (double v : rows) total += v;
  b.loss = {r == ref::Reduction::kMean ? total / static_cast<double>(n) : total};
  return b;
}

std::vector<double> CrossEntropyProbGradBound(
    const std::vector<double>& x, const std::vector<double>& q, const std::vector<double>& weight,
    const std::vector<double>& lse, const std::vector<double>& grad_loss, int64_t n, int64_t c,
    ref::Reduction r, double label_smoothing, double u, const std::vector<double>& lse_error) {
  std::vector<double> b(static_cast<size_t>(n * c));
  for (int64_t i = 0; i < n; ++i) {
    double g = std::fabs(r == ref::Reduction::kNone ? grad_loss[i] : grad_loss[0]);
    if (r == ref::Reduction::kMean) g /= static_cast<double>(n);
    double s = 0.0;
    for (int64_t j = 0; j < c; ++j) s += Wq(q, weight, i, c, j, label_smoothing);
    for (int64_t j = 0; j < c; ++j) {
      const double p = std::exp(x[i * c + j] - lse[i]);
      b[i * c + j] = g * (8.0 * u * (p * s + Wq(q, weight, i, c, j, label_smoothing)) +
                          p * s * u * std::fabs(x[i * c + j] - lse[i])) +
                     g * p * s * u * static_cast<double>(std::min<int64_t>(c, 512) + 16) +
                     (lse_error.empty() ? 0.0 : g * p * std::fabs(s) * lse_error[i]);
    }
  }
  return b;
}

LinearCrossEntropyBounds LinearCrossEntropyBound(const ref::CrossEntropyArgs& a, int64_t h,
                                                 const std::vector<double>& x,
                                                 const std::vector<double>& w,
                                                 const std::vector<double>& bias,
                                                 const std::vector<double>& grad_loss,
                                                 const ref::LinearCrossEntropyResult& r,
                                                 aclDataType g_dtype) {
  const int64_t n = a.n, v = a.c;
  const double u = kEps32;
  // Each row's largest logit error.
  std::vector<double> ez(static_cast<size_t>(n), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < v; ++j) {
      double s = bias.empty() ? 0.0 : std::fabs(bias[j]);
      for (int64_t k = 0; k < h; ++k) s += std::fabs(x[i * h + k] * w[j * h + k]);
      ez[i] = std::max(ez[i], static_cast<double>(h + 2) * u * s);
    }
  }
  // The cross-entropy kernels' own bounds on exact logits.
  const CrossEntropyBounds ce = CrossEntropyLossBound(a, r.logits, r.ce);
  LinearCrossEntropyBounds b;
  b.lse = ce.lse;
  for (int64_t i = 0; i < n; ++i) b.lse[i] += 2.0 * ez[i];
  // The loss: per row, its coefficients sum to (1 - eps) w_t + eps / C sum_c w_c (+ 2 z |lse|
  // for the z-loss), each multiplying an error of at most 2 ez (the logit and the lse).
  double wsum = 0.0;
  for (int64_t c = 0; c < v; ++c) wsum += std::fabs(a.weight.empty() ? 1.0 : a.weight[c]);
  std::vector<double> row(static_cast<size_t>(n), 0.0);
  double d = 0.0, m = 0.0, total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t t = a.target[i];
    if (t == a.ignore_index) continue;
    const double wt = a.weight.empty() ? 1.0 : a.weight[t];
    d += wt;
    m += 1.0;
    const double coef = (1.0 - a.label_smoothing) * std::fabs(wt) +
                        a.label_smoothing / static_cast<double>(v) * wsum +
                        2.0 * std::fabs(a.zloss_scale * r.ce.lse[i]);
    row[i] = coef * 2.0 * ez[i];
    total += row[i];
  }
  b.loss = ce.loss;
  if (a.reduction == ref::Reduction::kNone) {
    for (int64_t i = 0; i < n; ++i) b.loss[i] += row[i];
  } else {
    b.loss[0] += a.reduction == ref::Reduction::kSum
                     ? total
                     : total / std::min(std::fabs(d), m);  // the smaller divisor
  }
  // dlogits: the kernel's bound, the logits' error through exp, the rounding to g_dtype.
  std::vector<double> eg = CrossEntropyLossGradBound(a, r.ce.log_prob, grad_loss, {}, r.ce.lse);
  const std::vector<double> mag =
      ref::CrossEntropyLossGradMagnitudes(a, r.ce.log_prob, grad_loss, {}, r.ce.lse);
  const double round_g = g_dtype == ACL_BF16 ? 1.0 / 256.0 : u;  // half an ulp, relative
  for (size_t e = 0; e < eg.size(); ++e) {
    const int64_t i = static_cast<int64_t>(e) / v;
    eg[e] += mag[e] * (2.0 * ez[i] + u * std::fabs(r.ce.log_prob[e]));
    eg[e] += round_g * (std::fabs(r.grad_logits[e]) + eg[e]);
  }
  const std::vector<double>& g = r.grad_logits;
  b.grad_input.assign(static_cast<size_t>(n * h), 0.0);
  b.grad_weight.assign(static_cast<size_t>(v * h), 0.0);
  b.grad_bias.assign(static_cast<size_t>(v), 0.0);
  std::vector<double> si(b.grad_input.size(), 0.0), sw(b.grad_weight.size(), 0.0),
      sb(b.grad_bias.size(), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < v; ++j) {
      const double ge = eg[i * v + j], ga = std::fabs(g[i * v + j]) + ge;
      b.grad_bias[j] += ge;
      sb[j] += ga;
      for (int64_t k = 0; k < h; ++k) {
        b.grad_input[i * h + k] += ge * std::fabs(w[j * h + k]);
        si[i * h + k] += ga * std::fabs(w[j * h + k]);
        b.grad_weight[j * h + k] += ge * std::fabs(x[i * h + k]);
        sw[j * h + k] += ga * std::fabs(x[i * h + k]);
      }
    }
  }
  for (size_t e = 0; e < si.size(); ++e) b.grad_input[e] += static_cast<double>(v + 1) * u * si[e];
  for (size_t e = 0; e < sw.size(); ++e) b.grad_weight[e] += static_cast<double>(n + 1) * u * sw[e];
  for (size_t e = 0; e < sb.size(); ++e) b.grad_bias[e] += static_cast<double>(n + 1) * u * sb[e];
  return b;
}

}  // namespace tolerance
