#include "base/async_event.h"

#include <atomic>
#include <utility>

namespace ember {

std::shared_ptr<AsyncEvent> AsyncEvent::Create() {
  return std::shared_ptr<AsyncEvent>(new AsyncEvent());
}

std::shared_ptr<AsyncEvent> AsyncEvent::CreateReady(absl::Status status) {
  auto event = Create();
  event->Set(std::move(status));
  return event;
}

std::shared_ptr<AsyncEvent> AsyncEvent::AfterAll(
    absl::Span<const std::shared_ptr<AsyncEvent>> events) {
  if (events.empty()) return CreateReady();
  if (events.size() == 1) return events[0];
  struct Join {
    std::shared_ptr<AsyncEvent> result = AsyncEvent::Create();
    std::atomic<size_t> remaining;
    absl::Mutex mu;
    absl::Status first_error ABSL_GUARDED_BY(mu);
  };
  auto join = std::make_shared<Join>();
  join->remaining = events.size();
  for (const auto& event : events) {
    event->AndThen([join](absl::Status status) {
      if (!status.ok()) {
        absl::MutexLock lock(&join->mu);
        if (join->first_error.ok()) join->first_error = std::move(status);
      }
      if (--join->remaining == 0) {
        absl::Status result;
        {
          absl::MutexLock lock(&join->mu);
          result = join->first_error;
        }
        join->result->Set(std::move(result));
      }
    });
  }
  return join->result;
}

AsyncEvent::~AsyncEvent() {
  std::vector<Callback> callbacks;
  {
    absl::MutexLock lock(&mu_);
    if (ready_) return;
    callbacks.swap(callbacks_);
  }
  for (Callback& callback : callbacks) {
    std::move(callback)(absl::InternalError(
        "event abandoned: the work that would have made it ready was discarded"));
  }
}

void AsyncEvent::Set(absl::Status status) {
  std::vector<Callback> callbacks;
  {
    absl::MutexLock lock(&mu_);
    if (ready_) return;
    ready_ = true;
    status_ = status;
    callbacks.swap(callbacks_);
  }
  // Outside the lock: a callback may query this event or register another callback.
  for (Callback& callback : callbacks) std::move(callback)(status);
}

bool AsyncEvent::IsReady() const {
  absl::MutexLock lock(&mu_);
  return ready_;
}

absl::Status AsyncEvent::Await() const {
  mu_.LockWhen(absl::Condition(&ready_));
  absl::Status status = status_;
  mu_.Unlock();
  return status;
}

std::optional<absl::Status> AsyncEvent::status() const {
  absl::MutexLock lock(&mu_);
  if (!ready_) return std::nullopt;
  return status_;
}

void AsyncEvent::AndThen(Callback callback) {
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    if (!ready_) {
      callbacks_.push_back(std::move(callback));
      return;
    }
    status = status_;
  }
  std::move(callback)(std::move(status));
}

}  // namespace ember
