#include "ops/linear_cross_entropy/matmul.h"

#include <oneapi/dnnl/dnnl.hpp>
#include <string>

#include "aclnn/aclnn_base.h"

namespace aclnn_cpu {
namespace lce {

struct Matmul::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::matmul prim;
  // Bound to the caller's pointers at each run (set_data_handle allocates nothing).
  mutable dnnl::memory a, b, c, bias, scratch;
  bool has_bias = false;
  uint64_t scratch_bytes = 0;
  std::string impl;
};

namespace {

dnnl::memory::data_type ToDnnl(aclDataType t) {
  return t == ACL_BF16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32;
}

dnnl::memory::desc Describe(const MatrixLayout& m) {
  return dnnl::memory::desc({m.rows, m.cols}, ToDnnl(m.dtype), {m.row_stride, m.col_stride});
}

}  // namespace

Status Matmul::Init(const char* op, const MatrixLayout& a, const MatrixLayout& b,
                    const MatrixLayout& c, bool accumulate, aclDataType bias_dtype,
                    int64_t bias_stride) {
  try {
    auto impl = std::make_shared<Impl>();
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (accumulate) {
      dnnl::post_ops po;
      po.append_sum(1.0f);
      attr.set_post_ops(po);
    }
    const dnnl::memory::desc ad = Describe(a), bd = Describe(b), cd = Describe(c);
    impl->has_bias = bias_dtype != ACL_DT_UNDEFINED;
    const dnnl::memory::desc biasd = impl->has_bias
                                         ? dnnl::memory::desc({1, c.cols}, ToDnnl(bias_dtype),
                                                              {c.cols * bias_stride, bias_stride})
                                         : dnnl::memory::desc();
    const dnnl::matmul::desc md =
        impl->has_bias ? dnnl::matmul::desc(ad, bd, biasd, cd) : dnnl::matmul::desc(ad, bd, cd);
    const dnnl::matmul::primitive_desc pd(md, attr, impl->engine);
    impl->prim = dnnl::matmul(pd);
    impl->impl = pd.impl_info_str();
    impl->scratch_bytes = pd.scratchpad_desc().get_size();
    impl->a = dnnl::memory(ad, impl->engine, DNNL_MEMORY_NONE);
    impl->b = dnnl::memory(bd, impl->engine, DNNL_MEMORY_NONE);
    impl->c = dnnl::memory(cd, impl->engine, DNNL_MEMORY_NONE);
    if (impl->has_bias) impl->bias = dnnl::memory(biasd, impl->engine, DNNL_MEMORY_NONE);
    impl->scratch = dnnl::memory(pd.scratchpad_desc(), impl->engine, DNNL_MEMORY_NONE);
    impl_ = std::move(impl);
    return OkStatus();
  } catch (const dnnl::error& e) {
    return MakeError(ACLNN_ERR_INNER_FIND_KERNEL_ERROR,
                     "%s: the BLAS (oneDNN) has no %s matrix product on this machine (%s).", op,
                     a.dtype == ACL_BF16 ? "BF16" : "FLOAT", e.what());
  }
}

uint64_t Matmul::scratchpad_bytes() const { return impl_ ? impl_->scratch_bytes : 0; }
const char* Matmul::impl() const { return impl_ ? impl_->impl.c_str() : "none"; }

Status Matmul::Run(const void* a, const void* b, void* c, const void* bias,
                   void* scratchpad) const {
  try {
    Impl& m = *impl_;
    m.a.set_data_handle(const_cast<void*>(a));
    m.b.set_data_handle(const_cast<void*>(b));
    m.c.set_data_handle(c);
    m.scratch.set_data_handle(scratchpad);
    std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, m.a},
                                                  {DNNL_ARG_WEIGHTS, m.b},
                                                  {DNNL_ARG_DST, m.c},
                                                  {DNNL_ARG_SCRATCHPAD, m.scratch}};
    if (m.has_bias) {
      m.bias.set_data_handle(const_cast<void*>(bias));
      args.emplace(DNNL_ARG_BIAS, m.bias);
    }
    m.prim.execute(m.stream, args);
    m.stream.wait();
    return OkStatus();
  } catch (const dnnl::error& e) {
    return MakeError(ACLNN_ERR_RUNTIME_ERROR, "the BLAS (oneDNN) matrix product failed (%s).",
                     e.what());
  }
}

Status Sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
             const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return OkStatus();
  const dnnl_status_t st =
      dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
  if (st == dnnl_success) return OkStatus();
  return MakeError(ACLNN_ERR_RUNTIME_ERROR, "the BLAS (oneDNN) sgemm failed (status %d).",
                   static_cast<int>(st));
}

}  // namespace lce
}  // namespace aclnn_cpu
