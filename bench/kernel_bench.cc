// The row kernels alone (kernels/row_kernels.h), from memory and from cache: how far each loop
// is from its in-cache speed when its rows come from memory, the measurement behind the
// software prefetches (docs/performance.md, "What the Intel gap was"). Rows of 32000 elements;
// "memory" = 4096 rows (every array 250-500 MiB), "cache" = 4 rows (at most 1.5 MiB for three
// arrays), rows split statically over OpenMP threads. Counter: G elements/s.
//   ./build-bench/bench/aclnn_cpu_kernel_bench
//   ACLNN_CPU_PREFETCH_BYTES=0 ./build-bench/bench/aclnn_cpu_kernel_bench   (prefetching off)
#include <benchmark/benchmark.h>
#include <omp.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kernels/row_kernels.h"

namespace {

constexpr size_t kCols = 32000;

// A 2 MiB-aligned, huge-page-advised, touched buffer of `bytes` (freed at exit).
void* Buffer(size_t bytes, uint8_t fill) {
  const size_t align = size_t{2} << 20;
  void* p = std::aligned_alloc(align, (bytes + align - 1) / align * align);
  if (p == nullptr) std::abort();
  madvise(p, bytes, MADV_HUGEPAGE);
  std::memset(p, fill, bytes);
  return p;
}

// A column tile for the *_cols kernels: 21 classes of 1520 positions, their classes (j % 21) and
// per-column constants.
constexpr size_t kTileRows = 21, kTileCols = 1520;
const float* TileTargets() {
  static const std::vector<float> t = [] {
    std::vector<float> v(kTileCols);
    for (size_t j = 0; j < kTileCols; ++j) v[j] = static_cast<float>(j % kTileRows);
    return v;
  }();
  return t.data();
}
const float* TileConstants() {
  static const std::vector<float> c(kTileCols, 0.01f);
  return c.data();
}

// Per-row work of one kernel: (kernels, g, y, out, weights, row) -> nothing.
using RowWork = std::function<void(const aclnn_cpu::RowKernels&, const char*, const char*, char*,
                                   const float*, size_t, size_t)>;

struct KernelCase {
  const char* name;
  RowWork work;
};

const std::vector<KernelCase>& Cases() {
  static const std::vector<KernelCase> cases = {
      {"sum", [](const aclnn_cpu::RowKernels& k, const char* g, const char*, char*, const float*,
                 size_t n, size_t) { benchmark::DoNotOptimize(k.sum(g, n)); }},
      {"max", [](const aclnn_cpu::RowKernels& k, const char* g, const char*, char*, const float*,
                 size_t n, size_t) { benchmark::DoNotOptimize(k.max(g, n)); }},
      {"sum_exp",
       [](const aclnn_cpu::RowKernels& k, const char*, const char* y, char*, const float*, size_t n,
          size_t) {
         double c = 0.0;
         benchmark::DoNotOptimize(k.sum_exp(y, n, 0.0f, &c));
       }},
      {"max_sum_exp",
       [](const aclnn_cpu::RowKernels& k, const char*, const char* y, char*, const float*, size_t n,
          size_t) {
         double c = 0.0;
         double m = 0.0;
         benchmark::DoNotOptimize(k.max_sum_exp(y, n, &m, &c));
       }},
      {"lsm_bwd",
       [](const aclnn_cpu::RowKernels& k, const char* g, const char* y, char* o, const float*,
          size_t n, size_t stream) { k.lsm_bwd(g, y, 0.5f, o, n, stream != 0); }},
      {"ce_grad_weighted",
       [](const aclnn_cpu::RowKernels& k, const char*, const char* y, char* o, const float* w,
          size_t n, size_t stream) { k.ce_grad(y, o, n, 0.0f, 1e-4f, 1e-5f, w, stream != 0); }},
      // The column tiles of the K-dimensional cross-entropy: a "row" is a tile of 21 classes of
      // 1520 positions (31920 elements, a class per row of the tile, contiguous here).
      {"ce_stats_cols",
       [](const aclnn_cpu::RowKernels& k, const char*, const char* y, char*, const float*, size_t,
          size_t) {
         double m[kTileCols], l[kTileCols], xt[kTileCols];
         k.ce_stats_cols(y, kTileRows, kTileCols, kTileCols, nullptr, TileTargets(), m, l, xt,
                         nullptr);
         benchmark::DoNotOptimize(l[0]);
       }},
      {"ce_pick_cols",
       [](const aclnn_cpu::RowKernels& k, const char*, const char* y, char*, const float*, size_t,
          size_t) {
         double xt[kTileCols];
         k.ce_pick_cols(y, kTileRows, kTileCols, kTileCols, TileTargets(), nullptr, xt);
         benchmark::DoNotOptimize(xt[0]);
       }},
      {"ce_grad_cols",
       [](const aclnn_cpu::RowKernels& k, const char*, const char* y, char* o, const float*, size_t,
          size_t stream) {
         const float* c = TileConstants();
         k.ce_grad_cols(y, o, kTileRows, kTileCols, kTileCols, kTileCols, c, c, c, nullptr,
                        TileTargets(), c, stream != 0);
       }},
  };
  return cases;
}

void Run(benchmark::State& state, const KernelCase& kc, aclDataType dt, size_t rows, int threads) {
  const aclnn_cpu::RowKernels k = aclnn_cpu::GetRowKernels(dt);
  const size_t esz = dt == ACL_FLOAT ? 4 : 2, row_bytes = kCols * esz;
  const size_t bytes = rows * row_bytes;
  // g: small positive values; y: log-probability-like negative values (0xC1 is -8 to -24 in
  // f32, about -24 in bf16 and -2.5 in f16 as high bytes); out: anything.
  auto* g = static_cast<char*>(Buffer(bytes, 0x3A));
  auto* y = static_cast<char*>(Buffer(bytes, 0xC1));
  auto* o = static_cast<char*>(Buffer(bytes, 0));
  const std::vector<float> w(kCols, 1.25f);
  const size_t stream = bytes >= aclnn_cpu::StreamingOutputBytes() ? 1 : 0;
  for (auto _ : state) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t r = 0; r < rows; ++r) {
      kc.work(k, g + r * row_bytes, y + r * row_bytes, o + r * row_bytes, w.data(), kCols, stream);
      if (stream) aclnn_cpu::FlushStreamingStores();
    }
  }
  state.counters["Gelem/s"] = benchmark::Counter(static_cast<double>(rows * kCols) / 1e9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
  std::free(g);
  std::free(y);
  std::free(o);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const int all = omp_get_num_procs();
  for (const KernelCase& kc : Cases()) {
    for (aclDataType dt : {ACL_FLOAT, ACL_BF16}) {
      for (size_t rows : {size_t{4096}, size_t{4}}) {
        const char* where = rows == 4 ? "cache" : "memory";
        for (int t : {1, all}) {
          if (t == all && all == 1) continue;
          const std::string name = std::string("Kernel/") + kc.name + "/" +
                                   (dt == ACL_FLOAT ? "f32" : "bf16") + "/" + where +
                                   "/threads:" + std::to_string(t);
          benchmark::RegisterBenchmark(
              name.c_str(), [&kc, dt, rows, t](benchmark::State& s) { Run(s, kc, dt, rows, t); })
              ->UseRealTime()
              ->Unit(benchmark::kMillisecond);
        }
      }
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
