// PyTorch's CPU implementation of the same problems, through libtorch, in the same process:
//   LogSoftmaxBackward: at::_log_softmax_backward_data_out into a preallocated tensor;
//   CrossEntropyLossGrad: the full autograd backward of at::cross_entropy_loss with the same
//     options (the gradient a PyTorch user gets), graph built once, retain_graph = true, the
//     logits' gradient reset each iteration (run with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 so
//     fresh gradient buffers do not pay 4 KiB page faults, as in PERF_NOTES B.3);
//   CrossEntropyLoss: at::cross_entropy_loss forward.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/torch.h>

#include "harness.h"
#include "ops_bench.h"

namespace bench {

static at::ScalarType ToTorch(aclDataType t) {
  return t == ACL_FLOAT ? at::kFloat : (t == ACL_BF16 ? at::kBFloat16 : at::kHalf);
}

bool HavePyTorch(const Case& c) {
  if (c.zloss != 0.0) return false;          // PyTorch has no z-loss
  if (c.dtype == ACL_FLOAT16) return false;  // "not implemented for 'Half'" on CPU
  return c.op != Op::kLogSoftmax;
}

void RunPyTorch(benchmark::State& state, const Case& c, int threads) {
  at::set_num_threads(threads);
  const double bw = Bandwidth(c.BandwidthKind(), threads);
  const auto opts = at::TensorOptions().dtype(ToTorch(c.dtype));
  if (c.op == Op::kLogSoftmaxBackward) {
    at::Tensor g = at::rand(c.shape, opts) * 2 - 1;
    at::Tensor y = at::rand(c.shape, opts) * 4 - 12;
    at::Tensor out = at::zeros(c.shape, opts);
    at::_log_softmax_backward_data_out(out, g, y, c.dim, ToTorch(c.dtype));  // warm-up
    for (auto _ : state) {
      at::_log_softmax_backward_data_out(out, g, y, c.dim, ToTorch(c.dtype));
    }
  } else {
    const int64_t n = c.shape[0], cls = c.shape[1];
    at::Tensor x =
        (at::rand({n, cls}, opts) * 8 - 4).requires_grad_(c.op == Op::kCrossEntropyLossGrad);
    at::Tensor target = at::randint(0, cls, {n}, at::kLong);
    if (n > 16) target.index_put_({at::arange(16, n, 17)}, -100);  // as FillTargets
    at::Tensor w =
        c.weight ? at::rand({cls}, at::kFloat).add_(0.5).to(ToTorch(c.dtype)) : at::Tensor();
    const int64_t red = c.reduction == "none"
                            ? at::Reduction::None
                            : (c.reduction == "sum" ? at::Reduction::Sum : at::Reduction::Mean);
    // Each call allocates its N x C results; five untimed warm-up calls let the allocator
    // reach its steady state (run.sh keeps freed memory in the heap), as ours runs on buffers
    // allocated and touched before timing.
    if (c.op == Op::kCrossEntropyLoss) {
      auto call = [&] {
        return at::cross_entropy_loss(x, target, w, red, -100, c.label_smoothing);
      };
      for (int i = 0; i < 5; ++i) call();
      for (auto _ : state) benchmark::DoNotOptimize(call());
    } else {
      at::Tensor loss = at::cross_entropy_loss(x, target, w, red, -100, c.label_smoothing);
      auto call = [&] {
        x.mutable_grad() = at::Tensor();
        torch::autograd::backward({loss}, {}, /*retain_graph=*/true);
        benchmark::DoNotOptimize(x.grad().data_ptr());
      };
      for (int i = 0; i < 5; ++i) call();
      for (auto _ : state) call();
    }
  }
  SetCounters(state, c, threads, bw, std::string("PyTorch ") + TORCH_VERSION);
}

}  // namespace bench
