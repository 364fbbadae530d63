// PyTorch's CPU implementation of the same problems, through libtorch, in the same process. One
// runner per operator PyTorch has, keyed by the operator table's name (an operator without an
// entry here has no PyTorch column):
//   log_softmax_backward: at::_log_softmax_backward_data_out into a preallocated tensor;
//   log_softmax: at::_log_softmax_out into a preallocated tensor;
//   cross_entropy_loss_grad: the full autograd backward of at::cross_entropy_loss with the same
//     options (the gradient a PyTorch user gets), graph built once, retain_graph = true, the
//     logits' gradient reset each iteration (run with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 so
//     fresh gradient buffers do not pay 4 KiB page faults, as in PERF_NOTES B.3);
//   cross_entropy_loss: at::cross_entropy_loss forward.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/torch.h>

#include <cstring>

#include "harness.h"
#include "ops_bench.h"

namespace bench {
namespace {

at::ScalarType ToTorch(aclDataType t) {
  return t == ACL_FLOAT ? at::kFloat : (t == ACL_BF16 ? at::kBFloat16 : at::kHalf);
}

void LogSoftmaxBackward(benchmark::State& state, const optable::Problem& p) {
  const auto opts = at::TensorOptions().dtype(ToTorch(p.dtype));
  at::Tensor g = at::rand(p.shape, opts) * 2 - 1;
  at::Tensor y = at::rand(p.shape, opts) * 4 - 12;
  at::Tensor out = at::zeros(p.shape, opts);
  at::_log_softmax_backward_data_out(out, g, y, p.dim, ToTorch(p.dtype));  // warm-up
  for (auto _ : state) at::_log_softmax_backward_data_out(out, g, y, p.dim, ToTorch(p.dtype));
}

void LogSoftmax(benchmark::State& state, const optable::Problem& p) {
  const auto opts = at::TensorOptions().dtype(ToTorch(p.dtype));
  at::Tensor x = at::rand(p.shape, opts) * 8 - 4;
  at::Tensor out = at::zeros(p.shape, opts);
  at::_log_softmax_out(out, x, p.dim, false);  // warm-up
  for (auto _ : state) at::_log_softmax_out(out, x, p.dim, false);
}

// Logits, targets (every ignore_every-th row ignored, as often as in the table's problems) and
// weights like the table's problems.
struct CrossEntropyInputs {
  at::Tensor x, target, w;
  int64_t reduction;
  CrossEntropyInputs(const optable::Problem& p, bool grad) {
    const auto opts = at::TensorOptions().dtype(ToTorch(p.dtype));
    const int64_t n = p.shape[0], cls = p.shape[1];
    x = (at::rand({n, cls}, opts) * 8 - 4).requires_grad_(grad);
    target = at::randint(0, cls, {n}, at::kLong);
    const int64_t k = p.ignore_every;
    if (n >= k) target.index_put_({at::arange(k - 1, n, k)}, p.ignore_index);
    w = p.weight ? at::rand({cls}, at::kFloat).add_(0.5).to(ToTorch(p.dtype)) : at::Tensor();
    reduction = p.reduction == "none"
                    ? at::Reduction::None
                    : (p.reduction == "sum" ? at::Reduction::Sum : at::Reduction::Mean);
  }
  at::Tensor Loss(const optable::Problem& p) const {
    return at::cross_entropy_loss(x, target, w, reduction, p.ignore_index, p.label_smoothing);
  }
};

// Each call allocates its N x C results; five untimed warm-up calls let the allocator reach its
// steady state (run.sh keeps freed memory in the heap), as ours runs on buffers allocated and
// touched before timing.
void CrossEntropyLoss(benchmark::State& state, const optable::Problem& p) {
  const CrossEntropyInputs in(p, false);
  for (int i = 0; i < 5; ++i) in.Loss(p);
  for (auto _ : state) benchmark::DoNotOptimize(in.Loss(p));
}

void CrossEntropyLossGrad(benchmark::State& state, const optable::Problem& p) {
  CrossEntropyInputs in(p, true);
  at::Tensor loss = in.Loss(p);
  auto call = [&] {
    in.x.mutable_grad() = at::Tensor();
    torch::autograd::backward({loss}, {}, /*retain_graph=*/true);
    benchmark::DoNotOptimize(in.x.grad().data_ptr());
  };
  for (int i = 0; i < 5; ++i) call();
  for (auto _ : state) call();
}

struct Runner {
  const char* op;
  void (*run)(benchmark::State&, const optable::Problem&);
};
constexpr Runner kRunners[] = {{"log_softmax_backward", LogSoftmaxBackward},
                               {"log_softmax", LogSoftmax},
                               {"cross_entropy_loss_grad", CrossEntropyLossGrad},
                               {"cross_entropy_loss", CrossEntropyLoss}};

const Runner* RunnerFor(const optable::Problem& p) {
  for (const Runner& r : kRunners) {
    if (std::strcmp(r.op, p.op->name) == 0) return &r;
  }
  return nullptr;
}

}  // namespace

bool HavePyTorch(const optable::Problem& p) {
  if (p.zloss != 0.0) return false;          // PyTorch has no z-loss
  if (p.dtype == ACL_FLOAT16) return false;  // "not implemented for 'Half'" on CPU
  return RunnerFor(p) != nullptr;
}

void RunPyTorch(benchmark::State& state, const optable::Problem& p, int threads) {
  at::set_num_threads(threads);
  const double bw = Bandwidth(optable::BandwidthKind(p), threads);
  RunnerFor(p)->run(state, p);
  SetCounters(state, p, threads, bw, std::string("PyTorch ") + TORCH_VERSION);
}

}  // namespace bench
