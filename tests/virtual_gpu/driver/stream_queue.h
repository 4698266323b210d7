// An in-order queue of device work run by its own worker thread: what a CUstream is on the
// virtual GPU (and the legacy default stream of each context). Every operation gets a ticket;
// other queues can wait for a ticket, which is how events and the implicit synchronization of the
// legacy default stream are built.
#ifndef EMBER_TESTS_VIRTUAL_GPU_DRIVER_STREAM_QUEUE_H_
#define EMBER_TESTS_VIRTUAL_GPU_DRIVER_STREAM_QUEUE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace ember::vgpu {

class StreamQueue {
 public:
  explicit StreamQueue(std::string name);
  // Runs what is queued, then stops the worker.
  ~StreamQueue();
  StreamQueue(const StreamQueue&) = delete;
  StreamQueue& operator=(const StreamQueue&) = delete;

  // Returns the operation's ticket (1, 2, ...).
  uint64_t Enqueue(std::function<void()> op);
  uint64_t enqueued() const;
  uint64_t completed() const;
  // Blocks until the operation with `ticket` (and everything before it) has run.
  void WaitFor(uint64_t ticket) const;
  void Synchronize() const { WaitFor(enqueued()); }
  bool Idle() const { return completed() >= enqueued(); }
  const std::string& name() const { return name_; }
  // True on this queue's worker thread.
  bool OnWorker() const { return std::this_thread::get_id() == worker_.get_id(); }

 private:
  void Run();

  const std::string name_;
  mutable absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  uint64_t enqueued_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t completed_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread worker_;  // last: started once the rest is initialized
};

}  // namespace ember::vgpu

#endif  // EMBER_TESTS_VIRTUAL_GPU_DRIVER_STREAM_QUEUE_H_
