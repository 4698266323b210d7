// AsyncEvent: a completion signal with a status, shared by whoever waits on it. It is the one
// event type of Ember: the state behind every stream_executor Event, and the runtime's "this
// buffer's data is ready", "this transfer finished" and "this launch finished".
#ifndef EMBER_BASE_ASYNC_EVENT_H_
#define EMBER_BASE_ASYNC_EVENT_H_

#include <memory>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"

namespace ember {

// Becomes ready exactly once, with OK or an error; a second Set is ignored (the first status
// wins). Callbacks registered with AndThen run exactly once: synchronously when the event is
// already set, otherwise on the thread that sets it, whoever still holds the event. An event
// dropped before it was set runs its pending callbacks with an Internal error, so "exactly once"
// holds even when the work that would have set it was discarded.
class AsyncEvent {
 public:
  using Callback = absl::AnyInvocable<void(absl::Status) &&>;

  static std::shared_ptr<AsyncEvent> Create();
  static std::shared_ptr<AsyncEvent> CreateReady(absl::Status status = absl::OkStatus());
  // Ready once every event in `events` is; carries the first error among them (in the order the
  // errors arrived).
  static std::shared_ptr<AsyncEvent> AfterAll(absl::Span<const std::shared_ptr<AsyncEvent>> events);

  AsyncEvent(const AsyncEvent&) = delete;
  AsyncEvent& operator=(const AsyncEvent&) = delete;
  ~AsyncEvent();

  void Set(absl::Status status);
  bool IsReady() const;
  // Blocks until ready; returns the event's status.
  absl::Status Await() const;
  // The status once ready; nullopt before.
  std::optional<absl::Status> status() const;
  void AndThen(Callback callback);

 private:
  AsyncEvent() = default;
  mutable absl::Mutex mu_;
  bool ready_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  std::vector<Callback> callbacks_ ABSL_GUARDED_BY(mu_);
};

using AsyncEventRef = std::shared_ptr<AsyncEvent>;

}  // namespace ember

#endif  // EMBER_BASE_ASYNC_EVENT_H_
