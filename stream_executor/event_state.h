// EventState: the shared control block behind every Event implementation. The stream's queued
// work and each Event object hold it, so it outlives whichever lets go first, and callbacks
// registered with AndThen run exactly once even when the Event object is gone.
#ifndef EMBER_STREAM_EXECUTOR_EVENT_STATE_H_
#define EMBER_STREAM_EXECUTOR_EVENT_STATE_H_

#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace ember::se {

class EventState {
 public:
  using Callback = absl::AnyInvocable<void(absl::Status) &&>;

  EventState() = default;
  EventState(const EventState&) = delete;
  EventState& operator=(const EventState&) = delete;
  // A state dropped before it became ready runs its pending callbacks with an Internal error, so
  // that "exactly once" holds even when the work that would have made it ready was discarded.
  ~EventState();

  bool IsReady() const;
  // Blocks until ready; returns the status it was made ready with.
  absl::Status Await() const;
  // Runs `cb` now on this thread if ready, else on the thread that calls SetReady.
  void AndThen(Callback cb);
  // Marks the state ready with `status` and runs the pending callbacks on this thread. Only the
  // first call has an effect.
  void SetReady(absl::Status status);

 private:
  mutable absl::Mutex mu_;
  bool ready_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  std::vector<Callback> callbacks_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ember::se

#endif  // EMBER_STREAM_EXECUTOR_EVENT_STATE_H_
