#include "runtime/stream.h"

#include <unordered_set>
#include <vector>

#include "core/log.h"

namespace aclnn_cpu {

Stream::Stream() : ring_(kStreamQueueDepth) {}

Stream::~Stream() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    idle_cv_.wait(lock, [this] { return queued_ == 0 && !running_; });
    stop_ = true;
  }
  work_cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void Stream::Record(Status st) {
  if (!st.ok() && first_error_.ok()) first_error_ = std::move(st);
}

void Stream::Submit(StreamTask task, bool may_run_inline) {
  std::unique_lock<std::mutex> lock(mu_);
  if (may_run_inline && queued_ == 0 && !running_) {
    running_ = true;
    lock.unlock();
    Status st = task.fn(task);
    task.keep.reset();  // release captured plans before reporting idle
    lock.lock();
    Record(std::move(st));
    running_ = false;
    lock.unlock();
    idle_cv_.notify_all();
    return;
  }
  space_cv_.wait(lock, [this] { return queued_ < ring_.size(); });
  ring_[(head_ + queued_) % ring_.size()] = std::move(task);
  ++queued_;
  if (!worker_.joinable()) worker_ = std::thread([this] { WorkerLoop(); });
  lock.unlock();
  work_cv_.notify_one();
}

void Stream::WorkerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [this] { return stop_ || (queued_ > 0 && !running_); });
    if (queued_ == 0) {
      if (stop_) return;
      continue;
    }
    StreamTask task = std::move(ring_[head_]);
    head_ = (head_ + 1) % ring_.size();
    --queued_;
    running_ = true;
    lock.unlock();
    space_cv_.notify_one();
    Status st = task.fn(task);
    task.keep.reset();  // release captured plans before reporting idle
    lock.lock();
    Record(std::move(st));
    running_ = false;
    if (queued_ == 0) idle_cv_.notify_all();
  }
}

Status Stream::Synchronize() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [this] { return queued_ == 0 && !running_; });
  Status st = std::move(first_error_);
  first_error_ = Status{};
  return st;
}

namespace {

struct StreamRegistry {
  std::mutex mu;
  std::unordered_set<Stream*> live;
  Stream* default_stream = nullptr;
};

StreamRegistry& Registry() {
  static StreamRegistry* r = new StreamRegistry;  // never destroyed: usable during exit
  return *r;
}

}  // namespace

Stream* ResolveStream(aclrtStream handle) {
  StreamRegistry& r = Registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (handle == nullptr) {
    if (r.default_stream == nullptr) r.default_stream = new Stream;  // lives until exit
    return r.default_stream;
  }
  Stream* s = static_cast<Stream*>(handle);
  return r.live.count(s) ? s : nullptr;
}

void SynchronizeAllStreams() {
  std::vector<Stream*> all;
  {
    StreamRegistry& r = Registry();
    std::lock_guard<std::mutex> lock(r.mu);
    all.assign(r.live.begin(), r.live.end());
    if (r.default_stream != nullptr) all.push_back(r.default_stream);
  }
  // aclFinalize drains every stream; errors nobody synchronized for are logged, not lost.
  for (Stream* s : all) {
    Status st = s->Synchronize();
    if (!st.ok())
      LogMessage(LogLevel::kWarning, "aclFinalize: pending work failed: %s", st.msg.c_str());
  }
}

}  // namespace aclnn_cpu

using aclnn_cpu::Fail;
using aclnn_cpu::MakeError;

extern "C" {

ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream* stream) {
  if (stream == nullptr) {
    return Fail(MakeError(ACL_ERROR_INVALID_PARAM, "aclrtCreateStream: stream is null."));
  }
  auto* s = new aclnn_cpu::Stream;
  aclnn_cpu::StreamRegistry& r = aclnn_cpu::Registry();
  {
    std::lock_guard<std::mutex> lock(r.mu);
    r.live.insert(s);
  }
  *stream = s;
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream) {
  aclnn_cpu::StreamRegistry& r = aclnn_cpu::Registry();
  auto* s = static_cast<aclnn_cpu::Stream*>(stream);
  {
    std::lock_guard<std::mutex> lock(r.mu);
    if (stream == nullptr || r.live.erase(s) == 0) {
      return Fail(MakeError(ACL_ERROR_INVALID_PARAM,
                            "aclrtDestroyStream: %p is not a stream created by "
                            "aclrtCreateStream.",
                            stream));
    }
  }
  delete s;  // waits for pending work
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream) {
  aclnn_cpu::Stream* s = aclnn_cpu::ResolveStream(stream);
  if (s == nullptr) {
    return Fail(MakeError(ACL_ERROR_INVALID_PARAM,
                          "aclrtSynchronizeStream: %p is not a stream created by "
                          "aclrtCreateStream.",
                          stream));
  }
  aclnn_cpu::Status st = s->Synchronize();
  if (!st.ok()) return Fail(st);
  return ACL_SUCCESS;
}

}  // extern "C"
