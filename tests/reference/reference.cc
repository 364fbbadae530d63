#include "reference.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace ref {

FloatFormat FormatOf(aclDataType t) {
  switch (t) {
    case ACL_FLOAT16:
      return {11, -14, 65504.0};
    case ACL_BF16:
      return {8, -126, std::ldexp(255.0, 120)};  // (2 - 2^-7) * 2^127
    case ACL_DOUBLE:
      return {53, -1022, std::numeric_limits<double>::max()};
    default:
      return {24, -126, static_cast<double>(std::numeric_limits<float>::max())};
  }
}

double RoundTo(aclDataType t, double v) {
  if (t == ACL_DOUBLE || std::isnan(v) || std::isinf(v) || v == 0.0) return v;
  const FloatFormat f = FormatOf(t);
  int e;
  std::frexp(v, &e);        // |v| = m * 2^e, m in [0.5, 1): leading bit weighs 2^(e-1)
  int q = e - f.precision;  // exponent of the last significand bit
  q = std::max(q, f.min_exp - f.precision + 1);                       // subnormal spacing
  const double r = std::ldexp(std::nearbyint(std::ldexp(v, -q)), q);  // exact scaling, RNE
  if (std::fabs(r) > f.max_finite) return std::copysign(HUGE_VAL, v);
  return r;
}

double Ulp(aclDataType t, double v) {
  const FloatFormat f = FormatOf(t);
  int e = f.min_exp;
  if (v != 0.0 && std::isfinite(v)) {
    std::frexp(v, &e);
    e = std::max(e - 1, f.min_exp);
  }
  return std::ldexp(1.0, e - f.precision + 1);
}

uint64_t Encode(aclDataType t, double v) {
  if (t == ACL_DOUBLE) {
    uint64_t u;
    std::memcpy(&u, &v, 8);
    return u;
  }
  const float f = static_cast<float>(v);  // exact: v is representable in t, hence in float
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (t == ACL_FLOAT) return u;
  if (t == ACL_BF16) return std::isnan(v) ? 0x7FC0u : (u >> 16);
  // FLOAT16 from its fields.
  const uint64_t sign = std::signbit(v) ? 0x8000u : 0u;
  if (std::isnan(v)) return 0x7E00u;
  if (std::isinf(v)) return sign | 0x7C00u;
  const double a = std::fabs(v);
  if (a == 0.0) return sign;
  if (a < std::ldexp(1.0, -14)) return sign | static_cast<uint64_t>(std::ldexp(a, 24));
  int e;
  const double m = std::frexp(a, &e);  // a = m * 2^e
  const uint64_t biased = static_cast<uint64_t>(e - 1 + 15);
  const uint64_t mant = static_cast<uint64_t>(std::ldexp(m * 2.0 - 1.0, 10));
  return sign | (biased << 10) | mant;
}

double Decode(aclDataType t, uint64_t bits) {
  switch (t) {
    case ACL_DOUBLE: {
      double d;
      std::memcpy(&d, &bits, 8);
      return d;
    }
    case ACL_FLOAT: {
      const uint32_t u = static_cast<uint32_t>(bits);
      float f;
      std::memcpy(&f, &u, 4);
      return f;
    }
    case ACL_BF16: {
      const uint32_t u = static_cast<uint32_t>(bits) << 16;
      float f;
      std::memcpy(&f, &u, 4);
      return f;
    }
    default: {
      const double sign = (bits & 0x8000u) ? -1.0 : 1.0;
      const int e = static_cast<int>((bits >> 10) & 0x1F);
      const double m = static_cast<double>(bits & 0x3FF);
      if (e == 31) return m != 0 ? std::numeric_limits<double>::quiet_NaN() : sign * HUGE_VAL;
      if (e == 0) return sign * std::ldexp(m, -24);
      return sign * std::ldexp(1.0 + m / 1024.0, e - 15);
    }
  }
}

int64_t Numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

namespace {

// Visits every slice along dim of a row-major tensor: fn(first_index, step, length).
template <typename F>
void ForEachSlice(const Shape& shape, int dim, F&& fn) {
  if (shape.empty()) {
    fn(int64_t{0}, int64_t{1}, int64_t{1});
    return;
  }
  int64_t inner = 1;
  for (size_t i = static_cast<size_t>(dim) + 1; i < shape.size(); ++i) inner *= shape[i];
  const int64_t len = shape[static_cast<size_t>(dim)];
  const int64_t outer = Numel(shape) / (len * inner);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) fn(o * len * inner + in, inner, len);
  }
}

}  // namespace

std::vector<double> LogSoftmaxBackward(const std::vector<double>& g, const std::vector<double>& y,
                                       const Shape& shape, int dim) {
  std::vector<double> out(g.size());
  ForEachSlice(shape, dim, [&](int64_t first, int64_t step, int64_t len) {
    double s = 0.0;
    for (int64_t k = 0; k < len; ++k) s += g[first + k * step];
    for (int64_t k = 0; k < len; ++k) {
      const int64_t i = first + k * step;
      out[i] = g[i] - std::exp(y[i]) * s;
    }
  });
  return out;
}

void LogSoftmaxBackwardMagnitudes(const std::vector<double>& g, const std::vector<double>& y,
                                  const Shape& shape, int dim, std::vector<double>* terms,
                                  std::vector<double>* sum_terms) {
  terms->assign(g.size(), 0.0);
  sum_terms->assign(g.size(), 0.0);
  ForEachSlice(shape, dim, [&](int64_t first, int64_t step, int64_t len) {
    double s = 0.0, sa = 0.0;
    for (int64_t k = 0; k < len; ++k) {
      s += g[first + k * step];
      sa += std::fabs(g[first + k * step]);
    }
    for (int64_t k = 0; k < len; ++k) {
      const int64_t i = first + k * step;
      (*terms)[i] = std::fabs(g[i]) + std::fabs(std::exp(y[i]) * s);
      (*sum_terms)[i] = std::exp(y[i]) * sa;
    }
  });
}

std::vector<double> LogSoftmax(const std::vector<double>& x, const Shape& shape, int dim,
                               std::vector<double>* slice_log_sum) {
  std::vector<double> out(x.size());
  if (slice_log_sum) slice_log_sum->assign(x.size(), 0.0);
  ForEachSlice(shape, dim, [&](int64_t first, int64_t step, int64_t len) {
    double m = -HUGE_VAL;
    for (int64_t k = 0; k < len; ++k) m = std::max(m, x[first + k * step]);
    double s = 0.0;
    for (int64_t k = 0; k < len; ++k) s += std::exp(x[first + k * step] - m);
    const double l = std::log(s);
    for (int64_t k = 0; k < len; ++k) {
      const int64_t i = first + k * step;
      out[i] = (x[i] - m) - l;
      if (slice_log_sum) (*slice_log_sum)[i] = l;
    }
  });
  return out;
}

namespace {

struct RowCoefficients {
  bool ignored;
  double a;   // plain NLL part
  double s;   // label-smoothing part
  double zc;  // z-loss part (multiplies p)
};

std::vector<RowCoefficients> Coefficients(const CrossEntropyArgs& a,
                                          const std::vector<double>& grad_loss,
                                          const std::vector<double>& grad_zloss,
                                          const std::vector<double>& lse, double* w_sum) {
  const bool none = a.reduction == Reduction::kNone;
  auto w = [&](int64_t c) { return a.weight.empty() ? 1.0 : a.weight[c]; };
  double D = 1.0, M = 1.0;
  if (a.reduction == Reduction::kMean) {
    D = 0.0;
    M = 0.0;
    for (int64_t i = 0; i < a.n; ++i) {
      if (a.target[i] != a.ignore_index) {
        D += w(a.target[i]);
        M += 1.0;
      }
    }
  }
  double W = 0.0;
  for (int64_t c = 0; c < a.c; ++c) W += w(c);
  *w_sum = W;
  std::vector<RowCoefficients> rows(a.n);
  for (int64_t i = 0; i < a.n; ++i) {
    const bool m = a.target[i] != a.ignore_index;
    const double mi = m ? 1.0 : 0.0;
    const double mw = m ? w(a.target[i]) : 0.0;
    const double g = none ? grad_loss[i] : grad_loss[0];
    const double gz = grad_zloss.empty() ? 0.0 : (none ? grad_zloss[i] : grad_zloss[0]);
    RowCoefficients r;
    r.ignored = !m;
    r.a = g * (1.0 - a.label_smoothing) / D * mw;
    r.s = g / D * (a.label_smoothing / static_cast<double>(a.c)) * mi;
    r.zc = 0.0;
    if (a.zloss_scale != 0.0) {
      const double l = m ? lse[i] : 0.0;
      r.zc = 2.0 * a.zloss_scale * l * mi * (g + gz) / M;
    }
    rows[i] = r;
  }
  return rows;
}

}  // namespace

std::vector<double> CrossEntropyLossGrad(const CrossEntropyArgs& a,
                                         const std::vector<double>& log_prob,
                                         const std::vector<double>& grad_loss,
                                         const std::vector<double>& grad_zloss,
                                         const std::vector<double>& lse) {
  double W;
  const std::vector<RowCoefficients> rows = Coefficients(a, grad_loss, grad_zloss, lse, &W);
  std::vector<double> out(static_cast<size_t>(a.n * a.c), 0.0);
  for (int64_t i = 0; i < a.n; ++i) {
    const RowCoefficients& r = rows[i];
    // An ignored row is exactly zero unless a coefficient is non-finite (mean with D == 0).
    if (r.ignored && std::isfinite(r.a) && std::isfinite(r.s) && std::isfinite(r.zc)) continue;
    for (int64_t j = 0; j < a.c; ++j) {
      const double p = std::exp(log_prob[i * a.c + j]);
      const double wj = a.weight.empty() ? 1.0 : a.weight[j];
      const double onehot = (!r.ignored && j == a.target[i]) ? 1.0 : 0.0;
      out[i * a.c + j] = p * r.a - onehot * r.a + r.s * (p * W - wj) + p * r.zc;
    }
  }
  return out;
}

std::vector<double> CrossEntropyLossGradMagnitudes(const CrossEntropyArgs& a,
                                                   const std::vector<double>& log_prob,
                                                   const std::vector<double>& grad_loss,
                                                   const std::vector<double>& grad_zloss,
                                                   const std::vector<double>& lse) {
  double W;
  const std::vector<RowCoefficients> rows = Coefficients(a, grad_loss, grad_zloss, lse, &W);
  double Wabs = 0.0;
  for (int64_t c = 0; c < a.c; ++c) Wabs += std::fabs(a.weight.empty() ? 1.0 : a.weight[c]);
  std::vector<double> mag(static_cast<size_t>(a.n * a.c), 0.0);
  for (int64_t i = 0; i < a.n; ++i) {
    const RowCoefficients& r = rows[i];
    for (int64_t j = 0; j < a.c; ++j) {
      const double p = std::exp(log_prob[i * a.c + j]);
      const double wj = a.weight.empty() ? 1.0 : a.weight[j];
      mag[i * a.c + j] = p * (std::fabs(r.a) + std::fabs(r.s) * Wabs + std::fabs(r.zc)) +
                         std::fabs(r.a) + std::fabs(r.s * wj);
    }
  }
  return mag;
}

CrossEntropyResult CrossEntropyLoss(const CrossEntropyArgs& a, const std::vector<double>& x) {
  CrossEntropyResult res;
  auto w = [&](int64_t c) { return a.weight.empty() ? 1.0 : a.weight[c]; };
  res.log_prob = LogSoftmax(x, {a.n, a.c}, 1);
  res.lse.resize(a.n);
  std::vector<double> nll(a.n, 0.0), smooth(a.n, 0.0), zl(a.n, 0.0);
  double D = 0.0, M = 0.0;
  for (int64_t i = 0; i < a.n; ++i) {
    double m = -HUGE_VAL;
    for (int64_t j = 0; j < a.c; ++j) m = std::max(m, x[i * a.c + j]);
    double s = 0.0;
    for (int64_t j = 0; j < a.c; ++j) s += std::exp(x[i * a.c + j] - m);
    res.lse[i] = m + std::log(s);
    if (a.target[i] == a.ignore_index) continue;
    const int64_t t = a.target[i];
    nll[i] = -w(t) * (x[i * a.c + t] - res.lse[i]);
    double sm = 0.0;
    for (int64_t j = 0; j < a.c; ++j) sm += w(j) * (x[i * a.c + j] - res.lse[i]);
    smooth[i] = -sm;
    zl[i] = a.zloss_scale * res.lse[i] * res.lse[i];
    D += w(t);
    M += 1.0;
  }
  const double ls = a.label_smoothing, cinv = 1.0 / static_cast<double>(a.c);
  if (a.reduction == Reduction::kNone) {
    for (int64_t i = 0; i < a.n; ++i) {
      res.loss.push_back((1.0 - ls) * nll[i] + ls * cinv * smooth[i] + zl[i]);
      res.zloss.push_back(zl[i]);
    }
    return res;
  }
  double sn = 0.0, ss = 0.0, sz = 0.0;
  for (int64_t i = 0; i < a.n; ++i) {
    sn += nll[i];
    ss += smooth[i];
    sz += zl[i];
  }
  if (a.reduction == Reduction::kSum) {
    res.loss.push_back((1.0 - ls) * sn + ls * cinv * ss + sz);
    res.zloss.push_back(sz);
  } else {
    res.loss.push_back(((1.0 - ls) * sn + ls * cinv * ss) / D + sz / M);
    res.zloss.push_back(sz / M);
  }
  return res;
}

LinearCrossEntropyResult LinearCrossEntropy(const CrossEntropyArgs& a, int64_t h,
                                            const std::vector<double>& x,
                                            const std::vector<double>& w,
                                            const std::vector<double>& bias,
                                            const std::vector<double>& grad_loss, double softcap) {
  const int64_t n = a.n, v = a.c;
  LinearCrossEntropyResult r;
  r.logits.assign(static_cast<size_t>(n * v), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < v; ++j) {
      double z = bias.empty() ? 0.0 : bias[j];
      for (int64_t k = 0; k < h; ++k) z += x[i * h + k] * w[j * h + k];
      r.logits[i * v + j] = softcap > 0.0 ? softcap * std::tanh(z / softcap) : z;
    }
  }
  r.ce = CrossEntropyLoss(a, r.logits);
  r.grad_logits = CrossEntropyLossGrad(a, r.ce.log_prob, grad_loss, {}, r.ce.lse);
  if (softcap > 0.0) {
    for (size_t k = 0; k < r.logits.size(); ++k) {
      const double t = r.logits[k] / softcap;
      r.grad_logits[k] *= 1.0 - t * t;
    }
  }
  const std::vector<double>& g = r.grad_logits;
  r.grad_input.assign(static_cast<size_t>(n * h), 0.0);
  r.grad_weight.assign(static_cast<size_t>(v * h), 0.0);
  r.grad_bias.assign(static_cast<size_t>(v), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < v; ++j) {
      const double gij = g[i * v + j];
      r.grad_bias[j] += gij;
      for (int64_t k = 0; k < h; ++k) {
        r.grad_input[i * h + k] += gij * w[j * h + k];
        r.grad_weight[j * h + k] += gij * x[i * h + k];
      }
    }
  }
  return r;
}

namespace {
// w_c q'_ic of row i.
double WeightedTarget(const std::vector<double>& q, const std::vector<double>& weight, int64_t i,
                      int64_t c, int64_t j, double ls) {
  const double qq = (1.0 - ls) * q[i * c + j] + ls / static_cast<double>(c);
  return (weight.empty() ? 1.0 : weight[j]) * qq;
}
}  // namespace

CrossEntropyProbResult CrossEntropyProb(const std::vector<double>& x, const std::vector<double>& q,
                                        const std::vector<double>& weight, int64_t n, int64_t c,
                                        Reduction r, double label_smoothing) {
  CrossEntropyProbResult out;
  std::vector<double> rows(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double m = -HUGE_VAL, s = 0.0;
    for (int64_t j = 0; j < c; ++j) m = std::max(m, x[i * c + j]);
    for (int64_t j = 0; j < c; ++j) s += std::exp(x[i * c + j] - m);
    const double lse = m + std::log(s);
    out.lse.push_back(lse);
    double l = 0.0;
    for (int64_t j = 0; j < c; ++j) {
      l -= WeightedTarget(q, weight, i, c, j, label_smoothing) * (x[i * c + j] - lse);
    }
    rows[i] = l;
  }
  if (r == Reduction::kNone) {
    out.loss = rows;
    return out;
  }
  double total = 0.0;
  for (double v : rows) total += v;
  out.loss = {r == Reduction::kMean ? total / static_cast<double>(n) : total};
  return out;
}

std::vector<double> CrossEntropyProbGrad(const std::vector<double>& x, const std::vector<double>& q,
                                         const std::vector<double>& weight,
                                         const std::vector<double>& lse,
                                         const std::vector<double>& grad_loss, int64_t n, int64_t c,
                                         Reduction r, double label_smoothing) {
  std::vector<double> out(static_cast<size_t>(n * c));
  for (int64_t i = 0; i < n; ++i) {
    double g = r == Reduction::kNone ? grad_loss[i] : grad_loss[0];
    if (r == Reduction::kMean) g /= static_cast<double>(n);
    double s = 0.0;
    for (int64_t j = 0; j < c; ++j) s += WeightedTarget(q, weight, i, c, j, label_smoothing);
    for (int64_t j = 0; j < c; ++j) {
      const double p = std::exp(x[i * c + j] - lse[i]);
      out[i * c + j] = g * (p * s - WeightedTarget(q, weight, i, c, j, label_smoothing));
    }
  }
  return out;
}

}  // namespace ref
