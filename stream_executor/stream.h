// Stream: an in-order queue of work on one device; every call enqueues and returns at once. A
// returned error means "not enqueued" (bad arguments, or the driver refused it); failures of the
// work itself surface later in status(), BlockHostUntilDone() and the events recorded after it.
#ifndef EMBER_STREAM_EXECUTOR_STREAM_H_
#define EMBER_STREAM_EXECUTOR_STREAM_H_

#include <cstdint>
#include <memory>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "stream_executor/device_memory.h"
#include "stream_executor/event.h"

namespace ember::se {

// A stream's first error is sticky: the work queued after it still runs (so that callbacks that
// release resources are never skipped), but status() keeps returning that error and every later
// event carries it. Destroying a stream waits for its queued work. A stream must be destroyed
// before the Executor that created it. Methods may be called from several threads at once.
class Stream {
 public:
  virtual ~Stream() = default;

  // `src` must stay valid until the copy is done (an event recorded after it is ready).
  virtual absl::Status MemcpyH2D(DeviceMemory dst, const void* src, uint64_t size) = 0;
  // `dst` must stay valid and unread until the copy is done.
  virtual absl::Status MemcpyD2H(void* dst, DeviceMemory src, uint64_t size) = 0;
  // `dst` may be on another executor of the same platform.
  virtual absl::Status MemcpyD2D(DeviceMemory dst, DeviceMemory src, uint64_t size) = 0;
  virtual absl::Status Memset(DeviceMemory dst, uint8_t value, uint64_t size) = 0;

  // Runs `fn` on a host thread when the stream reaches it; later work waits for it. A failing `fn`
  // puts the stream in error state. On CUDA, `fn` must not call the CUDA API.
  virtual absl::Status EnqueueHostCallback(absl::AnyInvocable<absl::Status() &&> fn) = 0;

  // Runs `fn` now on the calling thread when the stream is idle (nothing queued or running),
  // exactly as EnqueueHostCallback would once the stream reached it, and returns true: work `fn`
  // itself enqueues on this stream runs at once, in order (the calling thread acts as the stream),
  // so it is done when the call returns; work other threads enqueue meanwhile waits for it.
  // Returns false, leaving `fn` untouched, when the stream is busy or cannot run host work inline
  // (CUDA). For cheap launches, whose thread hop would cost more than the work.
  virtual bool TryRunHostCallbackInline(absl::AnyInvocable<absl::Status() &&>& fn) {
    (void)fn;
    return false;
  }

  // Called from host work running on this stream (a callback that launches a program on its
  // own device), runs `fn` now, inside that work, and returns true: work `fn` enqueues on this
  // stream runs at once, in order. Enqueued instead, it would wait behind the callback that
  // waits for it. Returns false, leaving `fn` untouched, on any other thread or where the stream
  // cannot (CUDA).
  virtual bool TryRunNestedHostCallback(absl::AnyInvocable<absl::Status() &&>& fn) {
    (void)fn;
    return false;
  }

  virtual absl::StatusOr<std::shared_ptr<Event>> RecordEvent() = 0;

  // Later work on this stream waits until `event` is ready. The event may come from another stream
  // or device of the same platform. This orders work only: an error carried by `event` is not
  // copied into this stream (callers that need it read it with Event::AndThen / Await).
  virtual absl::Status WaitFor(std::shared_ptr<Event> event) = 0;

  // Blocks until all work enqueued before the call is done; returns status(). Must not be called
  // from one of this stream's host callbacks.
  virtual absl::Status BlockHostUntilDone() = 0;

  // The first error seen, OK otherwise.
  virtual absl::Status status() const = 0;
};

}  // namespace ember::se

#endif  // EMBER_STREAM_EXECUTOR_STREAM_H_
