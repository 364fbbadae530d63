// The BLAS choice of the fused linear cross-entropy (docs/large_vocab.md): the three matrix
// products of one chunk of rows (logits = X W^T; dX = G W; dW += G^T X) for rows x vocabulary x
// hidden = 256 x 32768 x 1024, in GFLOP/s, from OpenBLAS (cblas_sgemm; Debian's build exports
// no bf16 GEMM) and oneDNN (dnnl_sgemm and the matmul primitive, f32 and bf16 operands with f32
// results), side by side in one run. Usage: bench/run_blas.sh.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstdint>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <vector>

namespace {

constexpr int64_t kRows = 256, kVocab = 32768, kHidden = 1024;
enum Product { kLogits, kGradInput, kGradWeight };
const char* const kNames[] = {"logits=X*W^T", "dX=G*W", "dW+=G^T*X"};

// (m, n, k) of a product.
void Dims(int p, int64_t* m, int64_t* n, int64_t* k) {
  if (p == kLogits) {
    *m = kRows, *n = kVocab, *k = kHidden;
  } else if (p == kGradInput) {
    *m = kRows, *n = kHidden, *k = kVocab;
  } else {
    *m = kVocab, *n = kHidden, *k = kRows;
  }
}

void Report(benchmark::State& s, int p) {
  int64_t m, n, k;
  Dims(p, &m, &n, &k);
  s.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * m * n * k * s.iterations(), benchmark::Counter::kIsRate);
  s.SetLabel(kNames[p]);
}

void OpenBlas(benchmark::State& s) {
  const int p = static_cast<int>(s.range(0));
  std::vector<float> x(kRows * kHidden, 0.01f), w(kVocab * kHidden, 0.02f),
      g(kRows * kVocab, 0.001f), out(kVocab * kHidden, 0.0f);
  for (auto _ : s) {
    if (p == kLogits) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, kRows, kVocab, kHidden, 1.0f, x.data(),
                  kHidden, w.data(), kHidden, 0.0f, out.data(), kVocab);
    } else if (p == kGradInput) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kRows, kHidden, kVocab, 1.0f, g.data(),
                  kVocab, w.data(), kHidden, 0.0f, out.data(), kHidden);
    } else {
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, kVocab, kHidden, kRows, 1.0f, g.data(),
                  kVocab, x.data(), kHidden, 1.0f, out.data(), kHidden);
    }
  }
  Report(s, p);
}

void DnnlSgemm(benchmark::State& s) {
  const int p = static_cast<int>(s.range(0));
  std::vector<float> x(kRows * kHidden, 0.01f), w(kVocab * kHidden, 0.02f),
      g(kRows * kVocab, 0.001f), out(kVocab * kHidden, 0.0f);
  for (auto _ : s) {
    if (p == kLogits) {
      dnnl_sgemm('N', 'T', kRows, kVocab, kHidden, 1.0f, x.data(), kHidden, w.data(), kHidden, 0.0f,
                 out.data(), kVocab);
    } else if (p == kGradInput) {
      dnnl_sgemm('N', 'N', kRows, kHidden, kVocab, 1.0f, g.data(), kVocab, w.data(), kHidden, 0.0f,
                 out.data(), kHidden);
    } else {
      dnnl_sgemm('T', 'N', kVocab, kHidden, kRows, 1.0f, g.data(), kVocab, x.data(), kHidden, 1.0f,
                 out.data(), kHidden);
    }
  }
  Report(s, p);
}

// The matmul primitive, as the operator uses it (operands f32 or bf16, result f32).
void DnnlMatmul(benchmark::State& s) {
  using dt = dnnl::memory::data_type;
  const int p = static_cast<int>(s.range(0));
  const dt t = s.range(1) != 0 ? dt::bf16 : dt::f32;
  int64_t m, n, k;
  Dims(p, &m, &n, &k);
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream st(eng);
  dnnl::memory::dims as, bs;  // strides of A (m x k) and B (k x n)
  if (p == kLogits) {
    as = {kHidden, 1}, bs = {1, kHidden};
  } else if (p == kGradInput) {
    as = {kVocab, 1}, bs = {kHidden, 1};
  } else {
    as = {1, kVocab}, bs = {kHidden, 1};
  }
  const dnnl::memory::desc a({m, k}, t, as), b({k, n}, t, bs), c({m, n}, dt::f32, {n, 1});
  dnnl::primitive_attr attr;
  if (p == kGradWeight) {
    dnnl::post_ops po;
    po.append_sum(1.0f);
    attr.set_post_ops(po);
  }
  try {
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), attr, eng);
    const size_t esz = t == dt::bf16 ? 2 : 4;
    std::vector<unsigned char> abuf(m * k * esz, 0x3c), bbuf(k * n * esz, 0x3c);
    std::vector<float> cbuf(m * n, 0.0f);
    dnnl::memory ma(a, eng, abuf.data()), mb(b, eng, bbuf.data()), mc(c, eng, cbuf.data());
    const dnnl::matmul mm(pd);
    for (auto _ : s) {
      mm.execute(st, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
      st.wait();
    }
    Report(s, p);
    s.SetLabel(std::string(kNames[p]) + " " + pd.impl_info_str());
  } catch (const dnnl::error& e) {
    s.SkipWithError(e.what());
  }
}

}  // namespace

BENCHMARK(OpenBlas)->DenseRange(0, 2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(DnnlSgemm)->DenseRange(0, 2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(DnnlMatmul)
    ->ArgsProduct({{0, 1, 2}, {0, 1}})
    ->ArgNames({"product", "bf16"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
