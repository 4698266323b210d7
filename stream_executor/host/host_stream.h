// HostStream: a Stream of the host platform. One worker thread runs the queue in order; device
// memory is host memory, so copies are memcpy on that thread.
#ifndef EMBER_STREAM_EXECUTOR_HOST_HOST_STREAM_H_
#define EMBER_STREAM_EXECUTOR_HOST_HOST_STREAM_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "stream_executor/stream.h"
#include "stream_executor/worker_thread.h"

namespace ember::se::host {

class HostStream final : public Stream {
 public:
  // `name` appears in error messages, e.g. "host device 0 stream 2".
  explicit HostStream(std::string name);
  // Runs everything queued, then stops the worker. Must not run on the worker itself.
  ~HostStream() override;

  absl::Status MemcpyH2D(DeviceMemory dst, const void* src, uint64_t size) override;
  absl::Status MemcpyD2H(void* dst, DeviceMemory src, uint64_t size) override;
  absl::Status MemcpyD2D(DeviceMemory dst, DeviceMemory src, uint64_t size) override;
  absl::Status Memset(DeviceMemory dst, uint8_t value, uint64_t size) override;
  absl::Status EnqueueHostCallback(absl::AnyInvocable<absl::Status() &&> fn) override;
  bool TryRunHostCallbackInline(absl::AnyInvocable<absl::Status() &&>& fn) override;
  bool TryRunNestedHostCallback(absl::AnyInvocable<absl::Status() &&>& fn) override;
  absl::StatusOr<std::shared_ptr<Event>> RecordEvent() override;
  absl::Status WaitFor(std::shared_ptr<Event> event) override;
  absl::Status BlockHostUntilDone() override;
  absl::Status status() const override;

 private:
  void RecordError(const absl::Status& error);
  // Runs `fn` now on this thread, inline (TryRunInline) or nested in the running task
  // (RunNested); its error poisons the stream as a queued callback's would.
  bool RunCallbackNow(absl::AnyInvocable<absl::Status() &&>& fn, bool nested);

  const std::string name_;
  mutable absl::Mutex mu_;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  WorkerThread worker_;  // last: its tasks use the members above, so it is drained first
};

}  // namespace ember::se::host

#endif  // EMBER_STREAM_EXECUTOR_HOST_HOST_STREAM_H_
