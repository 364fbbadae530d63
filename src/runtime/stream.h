// A stream is an ordered queue of work run by its own worker thread, asynchronously to the
// caller; different streams run concurrently. The first error raised by queued work is kept
// until the next Synchronize, which returns it.
#ifndef ACLNN_CPU_RUNTIME_STREAM_H_
#define ACLNN_CPU_RUNTIME_STREAM_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "acl/acl_rt.h"
#include "core/status.h"

namespace aclnn_cpu {

// Work that touches at most this many bytes may run on the caller's thread when its stream is
// idle (nothing queued or running): same order and error semantics, no thread hand-off.
constexpr uint64_t kInlineWorkBytes = 64 * 1024;

class Stream {
 public:
  using Task = std::function<Status()>;
  Stream() = default;
  ~Stream();  // waits for pending work
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  void Submit(Task task, bool may_run_inline);
  // Runs fn(ctx) on the caller's thread if the stream is idle (nothing queued or running) and
  // returns true; otherwise returns false and runs nothing. No allocation.
  bool TryRunInline(Status (*fn)(const void* ctx), const void* ctx);
  // Waits until all submitted work has run; returns (and clears) the first error since the
  // previous Synchronize.
  Status Synchronize();

 private:
  void WorkerLoop();
  void Record(Status st);  // mu_ held

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable idle_cv_;
  std::deque<Task> queue_;
  bool running_ = false;  // a task is executing (worker or inline)
  bool stop_ = false;
  Status first_error_;
  std::thread worker_;
};

// Maps an aclrtStream handle to a live stream; null means the default stream. Returns null for
// handles that are not live streams.
Stream* ResolveStream(aclrtStream handle);
// Synchronizes every live stream (aclFinalize).
void SynchronizeAllStreams();

}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_RUNTIME_STREAM_H_
