#include "device_tensor.h"

#include <cstring>
#include <stdexcept>

#include "reference.h"

namespace testing_support {

const char* LayoutName(Layout l) {
  switch (l) {
    case Layout::kContiguous:
      return "contiguous";
    case Layout::kTransposed:
      return "transposed";
    case Layout::kOffset:
      return "offset";
    case Layout::kPadded:
      return "padded";
  }
  return "?";
}

int64_t DtypeBytes(aclDataType t) {
  switch (t) {
    case ACL_FLOAT16:
    case ACL_BF16:
      return 2;
    case ACL_DOUBLE:
    case ACL_INT64:
      return 8;
    case ACL_INT8:
    case ACL_UINT8:
    case ACL_BOOL:
      return 1;
    default:
      return 4;
  }
}

DeviceTensor::DeviceTensor(aclDataType dtype, std::vector<int64_t> shape, Layout layout)
    : dtype_(dtype), shape_(std::move(shape)) {
  const size_t r = shape_.size();
  strides_.assign(r, 1);
  if (layout == Layout::kTransposed) {
    int64_t s = 1;
    for (size_t i = 0; i < r; ++i) {
      strides_[i] = s;
      s *= shape_[i];
    }
  } else {
    const int64_t pad = layout == Layout::kPadded ? 1 : 0;
    int64_t s = layout == Layout::kPadded ? 2 : 1;
    for (size_t i = r; i-- > 0;) {
      strides_[i] = s;
      s *= shape_[i] + pad;
    }
  }
  offset_ = (layout == Layout::kOffset || layout == Layout::kPadded) ? 7 : 0;
  int64_t last = offset_;
  bool empty = false;
  for (size_t i = 0; i < r; ++i) {
    if (shape_[i] == 0) empty = true;
    last += (shape_[i] - 1) * strides_[i];
  }
  storage_elems_ = (empty ? offset_ : last + 1) + 3;  // slack after the view holds canaries
  const size_t bytes = static_cast<size_t>(storage_elems_ * DtypeBytes(dtype_));
  // Large tensors on huge pages, as a framework's allocator (and the benchmarks) place them.
  const aclrtMemMallocPolicy policy =
      bytes >= (size_t{2} << 20) ? ACL_MEM_MALLOC_HUGE_FIRST : ACL_MEM_MALLOC_NORMAL_ONLY;
  if (aclrtMalloc(&data_, bytes, policy) != ACL_SUCCESS) {
    throw std::runtime_error("aclrtMalloc failed in the test harness");
  }
  FillCanaries();
  const int64_t storage_dims[] = {storage_elems_};
  tensor_ = aclCreateTensor(shape_.data(), r, dtype_, strides_.data(), offset_, ACL_FORMAT_ND,
                            storage_dims, 1, data_);
  if (tensor_ == nullptr) throw std::runtime_error("aclCreateTensor failed in the test harness");
}

DeviceTensor::~DeviceTensor() {
  aclDestroyTensor(tensor_);
  aclrtFree(data_);
}

int64_t DeviceTensor::numel() const { return ref::Numel(shape_); }

void DeviceTensor::FillCanaries() {
  std::memset(data_, kCanary, static_cast<size_t>(storage_elems_ * DtypeBytes(dtype_)));
}

int64_t DeviceTensor::ElementOffset(int64_t logical) const {
  int64_t off = offset_;
  for (size_t i = shape_.size(); i-- > 0;) {
    off += (logical % shape_[i]) * strides_[i];
    logical /= shape_[i];
  }
  return off;
}

std::vector<double> DeviceTensor::Rounded(const std::vector<double>& values) const {
  std::vector<double> r(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    r[i] =
        (dtype_ == ACL_INT64 || dtype_ == ACL_INT32) ? values[i] : ref::RoundTo(dtype_, values[i]);
  }
  return r;
}

void DeviceTensor::Set(const std::vector<double>& values) {
  const int64_t esz = DtypeBytes(dtype_);
  auto* base = static_cast<unsigned char*>(data_);
  for (int64_t i = 0; i < numel(); ++i) {
    unsigned char* p = base + ElementOffset(i) * esz;
    if (dtype_ == ACL_INT64) {
      const int64_t v = static_cast<int64_t>(values[i]);
      std::memcpy(p, &v, 8);
    } else if (dtype_ == ACL_INT32) {
      const int32_t v = static_cast<int32_t>(values[i]);
      std::memcpy(p, &v, 4);
    } else {
      const uint64_t bits = ref::Encode(dtype_, ref::RoundTo(dtype_, values[i]));
      std::memcpy(p, &bits, static_cast<size_t>(esz));  // little-endian
    }
  }
}

std::vector<double> DeviceTensor::Get() const {
  const int64_t esz = DtypeBytes(dtype_);
  const auto* base = static_cast<const unsigned char*>(data_);
  std::vector<double> out(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) {
    const unsigned char* p = base + ElementOffset(i) * esz;
    if (dtype_ == ACL_INT64) {
      int64_t v;
      std::memcpy(&v, p, 8);
      out[i] = static_cast<double>(v);
    } else if (dtype_ == ACL_INT32) {
      int32_t v;
      std::memcpy(&v, p, 4);
      out[i] = v;
    } else {
      uint64_t bits = 0;
      std::memcpy(&bits, p, static_cast<size_t>(esz));
      out[i] = ref::Decode(dtype_, bits);
    }
  }
  return out;
}

bool DeviceTensor::CanariesOutsideViewIntact() const {
  const int64_t esz = DtypeBytes(dtype_);
  std::vector<char> in_view(static_cast<size_t>(storage_elems_), 0);
  for (int64_t i = 0; i < numel(); ++i) in_view[static_cast<size_t>(ElementOffset(i))] = 1;
  const auto* base = static_cast<const unsigned char*>(data_);
  for (int64_t e = 0; e < storage_elems_; ++e) {
    if (in_view[static_cast<size_t>(e)]) continue;
    for (int64_t b = 0; b < esz; ++b) {
      if (base[e * esz + b] != kCanary) return false;
    }
  }
  return true;
}

bool DeviceTensor::Untouched() const {
  const auto* base = static_cast<const unsigned char*>(data_);
  for (int64_t b = 0; b < storage_elems_ * DtypeBytes(dtype_); ++b) {
    if (base[b] != kCanary) return false;
  }
  return true;
}

std::vector<double> Uniform(std::mt19937_64& rng, int64_t n, double lo, double hi) {
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(rng);
  return v;
}

std::vector<double> Normal(std::mt19937_64& rng, int64_t n, double mean, double stddev) {
  std::normal_distribution<double> d(mean, stddev);
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(rng);
  return v;
}

}  // namespace testing_support
