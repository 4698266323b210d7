// HostEvent: the host platform's Event, a thin handle on an AsyncEvent that the recording
// stream's worker makes ready when it reaches the event.
#ifndef EMBER_STREAM_EXECUTOR_HOST_HOST_EVENT_H_
#define EMBER_STREAM_EXECUTOR_HOST_HOST_EVENT_H_

#include <memory>
#include <utility>

#include "stream_executor/event.h"
#include "base/async_event.h"

namespace ember::se::host {

class HostEvent final : public Event {
 public:
  explicit HostEvent(AsyncEventRef state) : state_(std::move(state)) {}

  bool IsReady() const override { return state_->IsReady(); }
  absl::Status Await() override { return state_->Await(); }
  void AndThen(absl::AnyInvocable<void(absl::Status) &&> cb) override {
    state_->AndThen(std::move(cb));
  }

 private:
  AsyncEventRef state_;  // shared with the stream task that makes it ready
};

}  // namespace ember::se::host

#endif  // EMBER_STREAM_EXECUTOR_HOST_HOST_EVENT_H_
