#include "stream_executor/host/host_stream.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "stream_executor/copy_checks.h"
#include "base/async_event.h"
#include "stream_executor/host/host_event.h"

namespace ember::se::host {

HostStream::HostStream(std::string name) : name_(name), worker_(std::move(name)) {}

HostStream::~HostStream() = default;  // ~WorkerThread drains the queue

absl::Status HostStream::MemcpyH2D(DeviceMemory dst, const void* src, uint64_t size) {
  EMBER_RETURN_IF_ERROR(CheckDeviceRange("MemcpyH2D", "destination", dst, size));
  EMBER_RETURN_IF_ERROR(CheckHostPointer("MemcpyH2D", "source", src, size));
  if (size == 0) return absl::OkStatus();
  worker_.Schedule([dst, src, size] { std::memcpy(dst.opaque, src, size); });
  return absl::OkStatus();
}

absl::Status HostStream::MemcpyD2H(void* dst, DeviceMemory src, uint64_t size) {
  EMBER_RETURN_IF_ERROR(CheckHostPointer("MemcpyD2H", "destination", dst, size));
  EMBER_RETURN_IF_ERROR(CheckDeviceRange("MemcpyD2H", "source", src, size));
  if (size == 0) return absl::OkStatus();
  worker_.Schedule([dst, src, size] { std::memcpy(dst, src.opaque, size); });
  return absl::OkStatus();
}

absl::Status HostStream::MemcpyD2D(DeviceMemory dst, DeviceMemory src, uint64_t size) {
  EMBER_RETURN_IF_ERROR(CheckDeviceRange("MemcpyD2D", "destination", dst, size));
  EMBER_RETURN_IF_ERROR(CheckDeviceRange("MemcpyD2D", "source", src, size));
  if (size == 0) return absl::OkStatus();
  // memmove: a copy within one buffer may overlap.
  worker_.Schedule([dst, src, size] { std::memmove(dst.opaque, src.opaque, size); });
  return absl::OkStatus();
}

absl::Status HostStream::Memset(DeviceMemory dst, uint8_t value, uint64_t size) {
  EMBER_RETURN_IF_ERROR(CheckDeviceRange("Memset", "destination", dst, size));
  if (size == 0) return absl::OkStatus();
  worker_.Schedule([dst, value, size] { std::memset(dst.opaque, value, size); });
  return absl::OkStatus();
}

absl::Status HostStream::EnqueueHostCallback(absl::AnyInvocable<absl::Status() &&> fn) {
  if (fn == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": EnqueueHostCallback: empty callback"));
  }
  worker_.Schedule([this, fn = std::move(fn)]() mutable {
    absl::Status status = std::move(fn)();
    if (!status.ok()) RecordError(status);
  });
  return absl::OkStatus();
}

bool HostStream::RunCallbackNow(absl::AnyInvocable<absl::Status() &&>& fn, bool nested) {
  if (fn == nullptr) return false;
  absl::Status status;
  auto run = [&] { status = std::move(fn)(); };
  const bool ran = nested ? worker_.RunNested(run) : worker_.TryRunInline(run);
  if (ran && !status.ok()) RecordError(status);
  return ran;
}

bool HostStream::TryRunHostCallbackInline(absl::AnyInvocable<absl::Status() &&>& fn) {
  return RunCallbackNow(fn, /*nested=*/false);
}

bool HostStream::TryRunNestedHostCallback(absl::AnyInvocable<absl::Status() &&>& fn) {
  return RunCallbackNow(fn, /*nested=*/true);
}

absl::StatusOr<std::shared_ptr<Event>> HostStream::RecordEvent() {
  auto state = AsyncEvent::Create();
  worker_.Schedule([this, state] { state->Set(status()); });
  return std::make_shared<HostEvent>(std::move(state));
}

absl::Status HostStream::WaitFor(std::shared_ptr<Event> event) {
  if (event == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": WaitFor: null event"));
  }
  if (event->IsReady()) return absl::OkStatus();
  // Ordering only: the event's error belongs to the stream that recorded it.
  worker_.Schedule([event = std::move(event)] { event->Await().IgnoreError(); });
  return absl::OkStatus();
}

absl::Status HostStream::BlockHostUntilDone() {
  EMBER_RETURN_IF_ERROR(worker_.WaitUntilIdle());
  return status();
}

absl::Status HostStream::status() const {
  absl::MutexLock lock(&mu_);
  return status_;
}

void HostStream::RecordError(const absl::Status& error) {
  absl::MutexLock lock(&mu_);
  if (status_.ok()) status_ = error;
}

}  // namespace ember::se::host
