// Event: a point in a Stream's queue. It becomes ready when the stream's work reaches that point,
// and then carries the stream's status as of that point (OK, or the first error seen before it).
#ifndef EMBER_STREAM_EXECUTOR_EVENT_H_
#define EMBER_STREAM_EXECUTOR_EVENT_H_

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"

namespace ember::se {

class Event {
 public:
  virtual ~Event() = default;

  virtual bool IsReady() const = 0;

  // Blocks until ready. Returns the stream's error if the stream failed before this point.
  // Must not be called from a host callback of the stream that will make this event ready.
  virtual absl::Status Await() = 0;

  // Runs `cb` exactly once with the event's status once it is ready: synchronously on the calling
  // thread if it is ready already, otherwise later on a platform thread. `cb` also runs when the
  // caller dropped its last reference to the Event before it became ready.
  virtual void AndThen(absl::AnyInvocable<void(absl::Status) &&> cb) = 0;
};

}  // namespace ember::se

#endif  // EMBER_STREAM_EXECUTOR_EVENT_H_
