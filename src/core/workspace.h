// Workspace booking (cf. oneDNN memory_tracking): planning books named, aligned pieces of the
// user-supplied workspace; at run time the grantor carves them out of the user pointer.
#ifndef ACLNN_CPU_CORE_WORKSPACE_H_
#define ACLNN_CPU_CORE_WORKSPACE_H_

#include <cstdint>

namespace aclnn_cpu {

struct WorkspaceBooking {
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

class WorkspaceBooker {
 public:
  static constexpr uint64_t kAlign = 64;
  template <typename T>
  WorkspaceBooking Book(uint64_t count) {
    WorkspaceBooking b{total_, count * sizeof(T)};
    total_ += (b.bytes + kAlign - 1) / kAlign * kAlign;
    return b;
  }
  uint64_t total() const { return total_; }

 private:
  uint64_t total_ = 0;
};

// The workspace pointer handed to phase 2 is at least 64-byte aligned when it comes from
// aclrtMalloc; pieces are aligned relative to it.
template <typename T>
T* Grant(void* workspace, const WorkspaceBooking& b) {
  return b.bytes == 0 ? nullptr
                      : reinterpret_cast<T*>(static_cast<unsigned char*>(workspace) + b.offset);
}

}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_CORE_WORKSPACE_H_
