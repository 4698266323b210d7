#include "runtime/async_event.h"

#include <atomic>
#include <utility>

namespace ember::runtime {

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
    std::mutex mu;
    absl::Status first_error;
  };
  auto join = std::make_shared<Join>();
  join->remaining = events.size();
  for (const auto& event : events) {
    event->AndThen([join](absl::Status status) {
      if (!status.ok()) {
        std::lock_guard<std::mutex> lock(join->mu);
        if (join->first_error.ok()) join->first_error = std::move(status);
      }
      if (--join->remaining == 0) {
        absl::Status result;
        {
          std::lock_guard<std::mutex> lock(join->mu);
          result = join->first_error;
        }
        join->result->Set(std::move(result));
      }
    });
  }
  return join->result;
}

void AsyncEvent::Set(absl::Status status) {
  std::vector<Callback> callbacks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.has_value()) return;
    status_ = status;
    callbacks.swap(callbacks_);
  }
  cv_.notify_all();
  for (auto& callback : callbacks) std::move(callback)(status);
}

bool AsyncEvent::IsReady() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_.has_value();
}

absl::Status AsyncEvent::Await() const {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return status_.has_value(); });
  return *status_;
}

std::optional<absl::Status> AsyncEvent::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

void AsyncEvent::AndThen(Callback callback) {
  absl::Status status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!status_.has_value()) {
      callbacks_.push_back(std::move(callback));
      return;
    }
    status = *status_;
  }
  std::move(callback)(std::move(status));
}

}  // namespace ember::runtime
