// aclnn_cpu._C: the operator table (optable/) and one generic call through CANN's public API,
// for the Python package. Arrays come in through DLPack or the buffer protocol (nanobind's
// ndarray) and become aclTensors over the caller's memory: shape, strides and offset as given,
// never a copy. Python (aclnn_cpu/_ops.py) decides dtypes, allocates outputs and raises.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "aclnn_cpu/aclnn_cpu_ext.h"
#include "block_cache.h"
#include "core/dtype.h"
#include "core/soc.h"
#include "op_table.h"
#include "runtime/parallel.h"
#include "simd/dispatch.h"

namespace nb = nanobind;

namespace {

using InArray = nb::ndarray<nb::ro, nb::device::cpu>;
using OutArray = nb::ndarray<nb::device::cpu>;

const optable::OpSpec& OpAt(size_t i) {
  const auto& ops = optable::Ops();
  if (i >= ops.size()) throw nb::index_error("aclnn_cpu: no operator with that index.");
  return *ops[i];
}

const char* AttrName(optable::Attr a) { return optable::AttrKey(a); }

// The table's description of every operator, for aclnn_cpu/_ops.py.
nb::list Ops() {
  nb::list out;
  for (const optable::OpSpec* op : optable::Ops()) {
    nb::list params, attrs, dtypes;
    for (const optable::Param& p : op->params) {
      params.append(nb::make_tuple(p.name, p.role == optable::Role::kOutput, p.optional));
    }
    for (optable::Attr a : op->attrs) attrs.append(AttrName(a));
    for (aclDataType t : op->dtypes) dtypes.append(static_cast<int>(t));
    nb::dict d;
    d["name"] = op->name;
    d["api"] = op->api;
    d["params"] = params;
    d["attrs"] = attrs;
    d["dtypes"] = dtypes;
    d["min_rank"] = op->min_rank;
    d["max_rank"] = op->max_rank;
    out.append(d);
  }
  return out;
}

// The dtype and shape of every parameter of operator `op` for a problem of `shape` and `dtype`
// (OpSpec::declare): how Python allocates outputs. (present, dtype, shape) per parameter.
std::vector<std::tuple<bool, int, std::vector<int64_t>>> Declare(
    size_t op, std::vector<int64_t> shape, int dtype, int out_dtype, int target_dtype,
    const std::string& reduction, bool weight, double zloss, int64_t dim) {
  optable::Problem p = optable::DefaultProblem(&OpAt(op));
  p.shape = std::move(shape);
  p.dtype = static_cast<aclDataType>(dtype);
  p.out_dtype = static_cast<aclDataType>(out_dtype);
  p.target_dtype = static_cast<aclDataType>(target_dtype);
  p.reduction = reduction;
  p.weight = weight;
  p.zloss = zloss;
  p.dim = dim;
  std::vector<std::tuple<bool, int, std::vector<int64_t>>> out;
  for (const optable::TensorDecl& d : p.op->declare(p)) {
    out.emplace_back(d.present, static_cast<int>(d.dtype), d.shape);
  }
  return out;
}

// One tensor argument, read while the GIL is held.
struct TensorArg {
  void* data = nullptr;
  aclDataType dtype = ACL_DT_UNDEFINED;
  std::vector<int64_t> shape, strides;
};

// Each calling thread runs on its own stream, so that threads run concurrently and a run-time
// error (a bad target) reaches the thread whose call raised it. Small problems run inline on
// the calling thread (stream.h).
struct ThreadState {
  aclrtStream stream = nullptr;
  void* workspace = nullptr;
  uint64_t workspace_bytes = 0;
  ThreadState() = default;
  ThreadState(const ThreadState&) = delete;
  ThreadState& operator=(const ThreadState&) = delete;
  ~ThreadState() {
    if (stream != nullptr) aclrtDestroyStream(stream);
    std::free(workspace);
  }
  void* Workspace(uint64_t bytes) {
    if (bytes > workspace_bytes) {
      std::free(workspace);
      const uint64_t rounded = (bytes + 63) / 64 * 64;
      workspace = std::aligned_alloc(64, rounded);
      workspace_bytes = workspace != nullptr ? rounded : 0;
    }
    return workspace;
  }
};

ThreadState& State() {
  thread_local ThreadState state;
  return state;
}

using Result = std::pair<int, std::string>;

Result Failed(int status) {
  const char* msg = aclGetRecentErrMsg();
  return {status, msg != nullptr ? msg : ""};
}

// The largest element offset the view reaches, plus one (0 for an empty view).
int64_t Extent(const TensorArg& t) {
  int64_t last = 0;
  for (size_t i = 0; i < t.shape.size(); ++i) {
    if (t.shape[i] == 0) return 0;
    last += (t.shape[i] - 1) * t.strides[i];
  }
  return last + 1;
}

// Whether the bytes two views can reach intersect (by their address ranges).
bool Overlap(const TensorArg& a, const TensorArg& b) {
  const int64_t ea = Extent(a), eb = Extent(b);
  if (ea == 0 || eb == 0) return false;
  const auto* pa = static_cast<const char*>(a.data);
  const auto* pb = static_cast<const char*>(b.data);
  return pa < pb + eb * aclnn_cpu::DtypeSize(b.dtype) &&
         pb < pa + ea * aclnn_cpu::DtypeSize(a.dtype);
}

// Whether two arguments are the same view (an operator's in-place pair).
bool SameView(const TensorArg& a, const TensorArg& b) {
  return a.data == b.data && a.dtype == b.dtype && a.shape == b.shape && a.strides == b.strides;
}

using Phase1Fn = std::function<int(aclTensor* const*, uint64_t*, aclOpExecutor**)>;
using Phase2Fn = aclnnStatus (*)(void*, uint64_t, aclOpExecutor*, aclrtStream);

// Phase 1 and phase 2 of one operator call (entry point `api`) over the given tensors, on the
// calling thread's stream, with `threads` threads (0: the library's default). Runs without
// the GIL.
Result Execute(const char* api, const Phase1Fn& phase1, Phase2Fn phase2,
               const std::vector<std::optional<TensorArg>>& args, int threads) {
  std::vector<aclTensor*> tensors(args.size(), nullptr);
  auto destroy = [&] {
    for (aclTensor* t : tensors) {
      if (t != nullptr) aclDestroyTensor(t);
    }
  };
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i]) continue;
    const TensorArg& t = *args[i];
    const int64_t storage = Extent(t);
    tensors[i] = aclCreateTensor(t.shape.data(), t.shape.size(), t.dtype, t.strides.data(), 0,
                                 ACL_FORMAT_ND, &storage, 1, t.data);
    if (tensors[i] == nullptr) {
      Result r = Failed(ACLNN_ERR_PARAM_INVALID);
      destroy();
      return r;
    }
  }
  uint64_t ws = 0;
  aclOpExecutor* executor = nullptr;
  int st;
  {
    aclnn_cpu::ScopedNumThreads scoped(threads);
    st = phase1(tensors.data(), &ws, &executor);
  }
  destroy();  // the executor keeps what it needs of the descriptions
  if (st != ACLNN_SUCCESS) return Failed(st);
  ThreadState& state = State();
  if (state.stream == nullptr && aclrtCreateStream(&state.stream) != ACL_SUCCESS) {
    Result r = Failed(ACLNN_ERR_RUNTIME_ERROR);
    aclDestroyAclOpExecutor(executor);
    return r;
  }
  void* workspace = ws > 0 ? state.Workspace(ws) : nullptr;
  if (ws > 0 && workspace == nullptr) {
    aclDestroyAclOpExecutor(executor);
    return {ACLNN_ERR_RUNTIME_ERROR, std::string(api) + ": cannot allocate a workspace of " +
                                         std::to_string(ws) + " bytes."};
  }
  st = phase2(workspace, ws, executor, state.stream);
  if (st != ACLNN_SUCCESS) return Failed(st);
  st = aclrtSynchronizeStream(state.stream);
  if (st != ACL_SUCCESS) return Failed(st);
  return {0, std::string()};
}

// One call of operator `op`: arrays[i] (or None) is parameter i of the table's list, dtypes[i]
// its aclDataType; the attributes as in CANN's phase-1 call. Returns (status, message): (0, "")
// on success, else the library's status code and sentence (Python raises).
Result Run(size_t op_index, const std::vector<nb::object>& arrays, const std::vector<int>& dtypes,
           int64_t dim, std::optional<std::string> reduction, int64_t ignore_index,
           double label_smoothing, double zloss, bool return_zloss, int threads) {
  const optable::OpSpec& op = OpAt(op_index);
  if (arrays.size() != op.params.size() || dtypes.size() != op.params.size()) {
    throw nb::value_error("aclnn_cpu: the call does not list every parameter of the operator.");
  }
  std::vector<std::optional<TensorArg>> args(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    if (arrays[i].is_none()) continue;
    const bool output = op.params[i].role == optable::Role::kOutput;
    TensorArg t;
    if (nb::isinstance<nb::tuple>(arrays[i])) {
      // A raw view (data address, shape, strides in elements) of memory the caller keeps alive:
      // how aclnn_cpu passes torch tensors, whose DLPack export costs about 15 us each.
      const nb::tuple view = nb::borrow<nb::tuple>(arrays[i]);
      if (view.size() != 3)
        throw nb::value_error("aclnn_cpu: a raw view is (address, shape, strides).");
      t.data = reinterpret_cast<void*>(nb::cast<uintptr_t>(view[0]));
      t.shape = nb::cast<std::vector<int64_t>>(view[1]);
      t.strides = nb::cast<std::vector<int64_t>>(view[2]);
      if (t.shape.size() != t.strides.size()) {
        throw nb::value_error("aclnn_cpu: a raw view's shape and strides differ in length.");
      }
      t.dtype = static_cast<aclDataType>(dtypes[i]);
    } else {
      size_t ndim = 0, itemsize = 0;
      const int64_t* shape = nullptr;
      const int64_t* strides = nullptr;
      InArray in;
      OutArray out;
      const bool ok = output ? nb::try_cast(arrays[i], out, /*convert=*/false)
                             : nb::try_cast(arrays[i], in, /*convert=*/false);
      if (!ok) {
        return {ACLNN_ERR_PARAM_INVALID,
                std::string(op.api) + ": " + op.params[i].name +
                    (output ? " is not a writable CPU array (DLPack or buffer protocol)."
                            : " is not a CPU array (DLPack or buffer protocol).")};
      }
      if (output) {
        t.data = out.data();
        ndim = out.ndim();
        itemsize = out.itemsize();
        shape = out.shape_ptr();
        strides = out.stride_ptr();
      } else {
        t.data = const_cast<void*>(in.data());
        ndim = in.ndim();
        itemsize = in.itemsize();
        shape = in.shape_ptr();
        strides = in.stride_ptr();
      }
      t.dtype = static_cast<aclDataType>(dtypes[i]);
      t.shape.assign(shape, shape + ndim);
      t.strides.assign(strides, strides + ndim);
      const size_t want = static_cast<size_t>(aclnn_cpu::DtypeSize(t.dtype));
      if (want != itemsize) {
        return {ACLNN_ERR_PARAM_INVALID, std::string(op.api) + ": " + op.params[i].name + " has " +
                                             std::to_string(itemsize) +
                                             "-byte elements but its dtype needs " +
                                             std::to_string(want) + "."};
      }
    }
    for (int64_t s : t.strides) {
      if (s < 0) {
        return {ACLNN_ERR_PARAM_INVALID,
                std::string(op.api) + ": " + op.params[i].name +
                    " has a negative stride, which an aclTensor cannot describe; pass a copy "
                    "(numpy.ascontiguousarray)."};
      }
    }
    args[i] = std::move(t);
  }
  // CANN's operators do not compute in place: an output sharing memory with an input would
  // read values it already overwrote. Refused here, by the bytes each view can reach.
  for (size_t o = 0; o < args.size(); ++o) {
    if (!args[o] || op.params[o].role != optable::Role::kOutput) continue;
    for (size_t i = 0; i < args.size(); ++i) {
      if (i == o || !args[i]) continue;
      if (op.params[i].role == optable::Role::kOutput && i > o) continue;  // each pair once
      if (op.in_place_input != nullptr && op.params[i].name == std::string(op.in_place_input) &&
          SameView(*args[o], *args[i])) {
        continue;  // the operator computes in place over this input
      }
      if (Overlap(*args[o], *args[i])) {
        return {ACLNN_ERR_PARAM_INVALID, std::string(op.api) + ": " + op.params[o].name +
                                             " overlaps " + op.params[i].name +
                                             " in memory; the operator does not compute in place."};
      }
    }
  }
  optable::CallArgs base;
  base.dim = dim;
  base.ignore_index = ignore_index;
  base.label_smoothing = label_smoothing;
  base.zloss = zloss;
  base.return_zloss = return_zloss;
  std::string reduction_buffer = reduction.value_or("");
  base.reduction = reduction ? reduction_buffer.data() : nullptr;
  nb::gil_scoped_release release;
  const Phase1Fn phase1 = [&](aclTensor* const* tensors, uint64_t* ws, aclOpExecutor** ex) {
    optable::CallArgs call = base;
    call.tensors = tensors;
    return op.phase1(call, ws, ex);
  };
  return Execute(op.api, phase1, op.phase2, args, threads);
}

// Raw views (address, shape, strides) or None, with their aclDataTypes, of an extension
// outside the operator table (docs/large_vocab.md says why); read while the GIL is held.
std::vector<std::optional<TensorArg>> ParseViews(const char* fn,
                                                 const std::vector<nb::object>& views,
                                                 const std::vector<int>& dtypes, size_t count) {
  if (views.size() != count || dtypes.size() != count) {
    throw nb::value_error((std::string("aclnn_cpu: ") + fn + " takes " + std::to_string(count) +
                           " views and as many dtypes.")
                              .c_str());
  }
  std::vector<std::optional<TensorArg>> args(count);
  for (size_t i = 0; i < count; ++i) {
    if (views[i].is_none()) continue;
    const nb::tuple view = nb::cast<nb::tuple>(views[i]);
    TensorArg t;
    t.data = reinterpret_cast<void*>(nb::cast<uintptr_t>(view[0]));
    t.shape = nb::cast<std::vector<int64_t>>(view[1]);
    t.strides = nb::cast<std::vector<int64_t>>(view[2]);
    t.dtype = static_cast<aclDataType>(dtypes[i]);
    args[i] = std::move(t);
  }
  return args;
}

// aclnnCpuLinearCrossEntropyV2 (include/aclnn_cpu/aclnn_cpu_ext.h): views of input,
// linearWeight, linearBiasOptional, target, weightOptional, gradLossOptional, lossOut, lseOut,
// gradInputOptional, gradWeightOptional, gradBiasOptional. The caller (aclnn_cpu/torch.py)
// allocates the outputs, which overlap nothing.
Result LinearCrossEntropy(const std::vector<nb::object>& views, const std::vector<int>& dtypes,
                          std::optional<std::string> reduction, int64_t ignore_index,
                          double label_smoothing, double zloss, double softcap, int64_t chunk_size,
                          int threads) {
  const auto args = ParseViews("linear_cross_entropy", views, dtypes, 11);
  std::string reduction_buffer = reduction.value_or("");
  char* red = reduction ? reduction_buffer.data() : nullptr;
  nb::gil_scoped_release release;
  const Phase1Fn phase1 = [&](aclTensor* const* t, uint64_t* ws, aclOpExecutor** ex) {
    return aclnnCpuLinearCrossEntropyV2GetWorkspaceSize(
        t[0], t[1], t[2], t[3], t[4], t[5], red, ignore_index, label_smoothing, zloss, softcap,
        chunk_size, t[6], t[7], t[8], t[9], t[10], ws, ex);
  };
  return Execute("aclnnCpuLinearCrossEntropyV2", phase1, aclnnCpuLinearCrossEntropyV2, args,
                 threads);
}

// aclnnCpuCrossEntropyShardStats: views of logits, target, weightOptional, lseOut,
// targetLogitOut, weightedSumOut.
Result ShardStats(const std::vector<nb::object>& views, const std::vector<int>& dtypes,
                  int64_t ignore_index, int64_t class_offset, int64_t num_classes, int threads) {
  const auto args = ParseViews("shard_stats", views, dtypes, 6);
  nb::gil_scoped_release release;
  const Phase1Fn phase1 = [&](aclTensor* const* t, uint64_t* ws, aclOpExecutor** ex) {
    return aclnnCpuCrossEntropyShardStatsGetWorkspaceSize(
        t[0], t[1], t[2], ignore_index, class_offset, num_classes, t[3], t[4], t[5], ws, ex);
  };
  return Execute("aclnnCpuCrossEntropyShardStats", phase1, aclnnCpuCrossEntropyShardStats, args,
                 threads);
}

// aclnnCpuCrossEntropyLossGradShard: views of gradLoss, logits, target, weightOptional,
// gradZlossOptional, lse, out (out may be logits' own view: in place).
Result GradShard(const std::vector<nb::object>& views, const std::vector<int>& dtypes,
                 std::optional<std::string> reduction, int64_t ignore_index, double label_smoothing,
                 double zloss, int64_t class_offset, int64_t num_classes, int threads) {
  const auto args = ParseViews("grad_shard", views, dtypes, 7);
  std::string reduction_buffer = reduction.value_or("");
  char* red = reduction ? reduction_buffer.data() : nullptr;
  nb::gil_scoped_release release;
  const Phase1Fn phase1 = [&](aclTensor* const* t, uint64_t* ws, aclOpExecutor** ex) {
    return aclnnCpuCrossEntropyLossGradShardGetWorkspaceSize(
        t[0], t[1], t[2], t[3], t[4], t[5], red, ignore_index, label_smoothing, zloss, class_offset,
        num_classes, t[6], ws, ex);
  };
  return Execute("aclnnCpuCrossEntropyLossGradShard", phase1, aclnnCpuCrossEntropyLossGradShard,
                 args, threads);
}

}  // namespace

NB_MODULE(_C, m) {
  m.doc() =
      "aclnn-cpu's operators through CANN's API (internal; use aclnn_cpu and aclnn_cpu.torch).";
  // aclInit reads ACLNN_CPU_SOC: an unknown SoC name fails the import with the library's sentence.
  if (aclInit(nullptr) != ACL_SUCCESS) throw std::runtime_error(aclGetRecentErrMsg());
  m.def("ops", &Ops, "The operator table: name, api, params (name, is_output, optional), attrs.");
  m.def("declare", &Declare, "Dtype and shape of every parameter for a problem.");
  m.def("run", &Run, "One operator call through CANN's two phases; (status, message).");
  m.def("linear_cross_entropy", &LinearCrossEntropy,
        "aclnnCpuLinearCrossEntropyV2 over raw views; (status, message).");
  m.def("shard_stats", &ShardStats,
        "aclnnCpuCrossEntropyShardStats over raw views; (status, message).");
  m.def("grad_shard", &GradShard,
        "aclnnCpuCrossEntropyLossGradShard over raw views; (status, message).");
  m.def("default_num_threads", &aclnn_cpu::NumThreads,
        "Threads a call uses without a count of its own (ACLNN_CPU_NUM_THREADS, ...).");
  m.def("version", [] { return std::string(aclnnCpuGetVersion()); });
  m.def("cpu_target", [] { return std::string(aclnn_cpu::CurrentTargetName()); });
  m.def(
      "set_soc",
      [](const std::string& name) -> Result {
        const aclnn_cpu::Status st = aclnn_cpu::SelectSoc(name.c_str());
        return {st.code, st.msg};
      },
      "Selects the SoC profile of later calls (\"\": the default); (status, message).");
  m.def("soc_name", [] { return std::string(aclrtGetSocName()); });
  m.def("soc_ignores_zloss", [] { return aclnn_cpu::CurrentSoc().ignores_zloss(); });
  BindBlockCache(m);
}
