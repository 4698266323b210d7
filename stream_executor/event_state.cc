#include "stream_executor/event_state.h"

#include <utility>

namespace ember::se {

EventState::~EventState() {
  std::vector<Callback> callbacks;
  {
    absl::MutexLock lock(&mu_);
    if (ready_) return;
    callbacks.swap(callbacks_);
  }
  for (Callback& cb : callbacks) {
    std::move(cb)(absl::InternalError(
        "event abandoned: the stream work that would have made it ready was discarded"));
  }
}

bool EventState::IsReady() const {
  absl::MutexLock lock(&mu_);
  return ready_;
}

absl::Status EventState::Await() const {
  mu_.LockWhen(absl::Condition(&ready_));
  absl::Status status = status_;
  mu_.Unlock();
  return status;
}

void EventState::AndThen(Callback cb) {
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    if (!ready_) {
      callbacks_.push_back(std::move(cb));
      return;
    }
    status = status_;
  }
  std::move(cb)(std::move(status));
}

void EventState::SetReady(absl::Status status) {
  std::vector<Callback> callbacks;
  {
    absl::MutexLock lock(&mu_);
    if (ready_) return;
    ready_ = true;
    status_ = status;
    callbacks.swap(callbacks_);
  }
  // Outside the lock: a callback may query this state or register another callback.
  for (Callback& cb : callbacks) std::move(cb)(status);
}

}  // namespace ember::se
