// A completion signal with a status, shared by whoever waits on it: the currency for "this
// buffer's data is ready", "this transfer finished" and "this execution finished" in the runtime.
#ifndef EMBER_RUNTIME_ASYNC_EVENT_H_
#define EMBER_RUNTIME_ASYNC_EVENT_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/types/span.h"

namespace ember::runtime {

// Becomes ready exactly once, with OK or an error. Callbacks registered with AndThen run exactly
// once, after the event is set (synchronously when it already is), whoever still holds the event.
class AsyncEvent {
 public:
  using Callback = absl::AnyInvocable<void(absl::Status) &&>;

  static std::shared_ptr<AsyncEvent> Create();
  static std::shared_ptr<AsyncEvent> CreateReady(absl::Status status = absl::OkStatus());
  // Ready once every event in `events` is; carries the first error among them.
  static std::shared_ptr<AsyncEvent> AfterAll(absl::Span<const std::shared_ptr<AsyncEvent>> events);

  // Sets the event. A second Set is ignored (the first status wins).
  void Set(absl::Status status);
  bool IsReady() const;
  // Blocks until ready; returns the event's status.
  absl::Status Await() const;
  // The status once ready; nullopt before.
  std::optional<absl::Status> status() const;
  void AndThen(Callback callback);

 private:
  AsyncEvent() = default;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::optional<absl::Status> status_;
  std::vector<Callback> callbacks_;
};

using AsyncEventRef = std::shared_ptr<AsyncEvent>;

}  // namespace ember::runtime

#endif  // EMBER_RUNTIME_ASYNC_EVENT_H_
