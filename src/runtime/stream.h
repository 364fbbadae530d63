// A stream is an ordered queue of work run by its own worker thread, asynchronously to the
// caller; different streams run concurrently. The first error raised by queued work is kept
// until the next Synchronize, which returns it.
#ifndef ACLNN_CPU_RUNTIME_STREAM_H_
#define ACLNN_CPU_RUNTIME_STREAM_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "acl/acl_rt.h"
#include "core/status.h"

namespace aclnn_cpu {

// Work that touches at most this many bytes may run on the caller's thread when its stream is
// idle (nothing queued or running): same order and error semantics, no thread hand-off.
constexpr uint64_t kInlineWorkBytes = 64 * 1024;

// At most this many calls wait on one stream; a further submit blocks until one has run (as a
// CUDA launch queue does). The queue is allocated once, with the stream, so that submitting
// work never allocates.
constexpr size_t kStreamQueueDepth = 1024;

// One unit of stream work: a function and its arguments by value. `keep` holds whatever must
// outlive the call (an executor's plan); copying a task never allocates.
struct StreamTask {
  Status (*fn)(const StreamTask& task) = nullptr;
  std::shared_ptr<const void> keep;
  void* arg0 = nullptr;
  const void* arg1 = nullptr;
  uint64_t n = 0;
};

class Stream {
 public:
  Stream();
  ~Stream();  // waits for pending work
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Queues `task`, or, when may_run_inline and the stream is idle (nothing queued or running),
  // runs it on the caller's thread; either way in stream order. No allocation (the worker
  // thread is started, once, by the first queued task).
  void Submit(StreamTask task, bool may_run_inline);
  // Waits until all submitted work has run; returns (and clears) the first error since the
  // previous Synchronize.
  Status Synchronize();

 private:
  void WorkerLoop();
  void Record(Status st);  // mu_ held

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable idle_cv_;
  std::condition_variable space_cv_;
  std::vector<StreamTask> ring_;  // kStreamQueueDepth slots
  size_t head_ = 0;               // oldest queued task
  size_t queued_ = 0;
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
