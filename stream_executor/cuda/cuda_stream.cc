#include "stream_executor/cuda/cuda_stream.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "stream_executor/copy_checks.h"
#include "stream_executor/cuda/cuda_event.h"
#include "stream_executor/cuda/cuda_executor.h"
#include "stream_executor/cuda/cuda_pointer.h"
#include "stream_executor/cuda/cuda_status.h"
#include "base/async_event.h"

namespace ember::se::cuda {
namespace {

using HostTask = absl::AnyInvocable<void() &&>;

}  // namespace

void CUDA_CB CudaStream::RunHostTask(void* user_data) {
  auto* pending = static_cast<PendingTask*>(user_data);
  CudaStream* stream = pending->stream;
  HostTask task;
  {
    absl::MutexLock lock(&stream->tasks_mu_);
    const bool taken = pending->taken;
    if (!taken) task = std::move(pending->task);
    stream->pending_tasks_.erase(pending->id);  // frees `pending`
    if (taken) return;
  }
  std::move(task)();
}

void CudaStream::RunSkippedHostTasks() {
  std::vector<HostTask> skipped;
  {
    absl::MutexLock lock(&tasks_mu_);
    for (auto& [id, pending] : pending_tasks_) {
      if (pending->taken) continue;
      pending->taken = true;  // kept: the driver may still call back with it
      skipped.push_back(std::move(pending->task));
    }
  }
  for (HostTask& task : skipped) std::move(task)();
}

absl::StatusOr<std::unique_ptr<CudaStream>> CudaStream::Create(CudaExecutor& executor,
                                                               std::string name) {
  const CudaDriver& driver = executor.driver();
  EMBER_ASSIGN_OR_RETURN(ScopedContext scope, executor.context().Activate());
  CUstream stream = nullptr;
  EMBER_RETURN_IF_ERROR(EMBER_CU(driver, cuStreamCreate, &stream, CU_STREAM_NON_BLOCKING));
  return std::make_unique<CudaStream>(PrivateTag{}, executor, stream, std::move(name));
}

CudaStream::~CudaStream() {
  const CudaDriver& driver = executor_.driver();
  {
    absl::StatusOr<ScopedContext> scope = executor_.context().Activate();
    if (scope.ok()) {
      driver.cuStreamSynchronize(stream_);
      driver.cuStreamDestroy(stream_);
    }
  }
  // The driver runs no more host functions for this stream: run the ones it skipped after a
  // device fault, then free what is left.
  RunSkippedHostTasks();
  absl::MutexLock lock(&tasks_mu_);
  pending_tasks_.clear();
}

absl::Status CudaStream::MemcpyH2D(DeviceMemory dst, const void* src, uint64_t size) {
  EMBER_RETURN_IF_ERROR(CheckDeviceRange("MemcpyH2D", "destination", dst, size));
  EMBER_RETURN_IF_ERROR(CheckHostPointer("MemcpyH2D", "source", src, size));
  if (size == 0) return absl::OkStatus();
  EMBER_ASSIGN_OR_RETURN(ScopedContext scope, executor_.context().Activate());
  return Track(
      EMBER_CU(executor_.driver(), cuMemcpyHtoDAsync, ToCuDevicePtr(dst), src, size, stream_));
}

absl::Status CudaStream::MemcpyD2H(void* dst, DeviceMemory src, uint64_t size) {
  EMBER_RETURN_IF_ERROR(CheckHostPointer("MemcpyD2H", "destination", dst, size));
  EMBER_RETURN_IF_ERROR(CheckDeviceRange("MemcpyD2H", "source", src, size));
  if (size == 0) return absl::OkStatus();
  EMBER_ASSIGN_OR_RETURN(ScopedContext scope, executor_.context().Activate());
  return Track(
      EMBER_CU(executor_.driver(), cuMemcpyDtoHAsync, dst, ToCuDevicePtr(src), size, stream_));
}

absl::Status CudaStream::MemcpyD2D(DeviceMemory dst, DeviceMemory src, uint64_t size) {
  EMBER_RETURN_IF_ERROR(CheckDeviceRange("MemcpyD2D", "destination", dst, size));
  EMBER_RETURN_IF_ERROR(CheckDeviceRange("MemcpyD2D", "source", src, size));
  if (size == 0) return absl::OkStatus();
  EMBER_ASSIGN_OR_RETURN(ScopedContext scope, executor_.context().Activate());
  // cuMemcpyAsync infers the devices from the addresses (unified addressing), so `dst` may live
  // on another GPU.
  return Track(EMBER_CU(executor_.driver(), cuMemcpyAsync, ToCuDevicePtr(dst), ToCuDevicePtr(src),
                        size, stream_));
}

absl::Status CudaStream::Memset(DeviceMemory dst, uint8_t value, uint64_t size) {
  EMBER_RETURN_IF_ERROR(CheckDeviceRange("Memset", "destination", dst, size));
  if (size == 0) return absl::OkStatus();
  EMBER_ASSIGN_OR_RETURN(ScopedContext scope, executor_.context().Activate());
  return Track(
      EMBER_CU(executor_.driver(), cuMemsetD8Async, ToCuDevicePtr(dst), value, size, stream_));
}

absl::Status CudaStream::LaunchHostTask(HostTask task) {
  EMBER_ASSIGN_OR_RETURN(ScopedContext scope, executor_.context().Activate());
  PendingTask* pending = nullptr;
  uint64_t id = 0;
  {
    absl::MutexLock lock(&tasks_mu_);
    id = next_task_++;
    auto owned = std::make_unique<PendingTask>();
    owned->stream = this;
    owned->id = id;
    owned->task = std::move(task);
    pending = owned.get();
    pending_tasks_[id] = std::move(owned);
  }
  absl::Status launched =
      Track(EMBER_CU(executor_.driver(), cuLaunchHostFunc, stream_, &RunHostTask, pending));
  if (!launched.ok()) {
    absl::MutexLock lock(&tasks_mu_);
    pending_tasks_.erase(id);  // never enqueued: the caller learns it from the error
  }
  return launched;
}

absl::Status CudaStream::EnqueueHostCallback(absl::AnyInvocable<absl::Status() &&> fn) {
  if (fn == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": EnqueueHostCallback: empty callback"));
  }
  return LaunchHostTask([this, fn = std::move(fn)]() mutable {
    absl::Status status = std::move(fn)();
    if (!status.ok()) Track(std::move(status)).IgnoreError();
  });
}

absl::StatusOr<std::shared_ptr<Event>> CudaStream::RecordEvent() {
  const CudaDriver& driver = executor_.driver();
  EMBER_ASSIGN_OR_RETURN(ScopedContext scope, executor_.context().Activate());
  CUevent handle = nullptr;
  EMBER_RETURN_IF_ERROR(Track(EMBER_CU(driver, cuEventCreate, &handle, CU_EVENT_DISABLE_TIMING)));
  auto state = AsyncEvent::Create();
  auto event = std::make_shared<CudaEvent>(driver, executor_.context(), handle, state);
  EMBER_RETURN_IF_ERROR(Track(EMBER_CU(driver, cuEventRecord, handle, stream_)));
  // The driver's callback thread may not call the driver, and AndThen callbacks may: hand the
  // state over to the executor's own callback thread.
  EMBER_RETURN_IF_ERROR(LaunchHostTask([this, state = std::move(state)]() mutable {
    executor_.callback_thread().Schedule(
        [state = std::move(state), status = status()] { state->Set(status); });
  }));
  return event;
}

absl::Status CudaStream::WaitFor(std::shared_ptr<Event> event) {
  if (event == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": WaitFor: null event"));
  }
  if (event->IsReady()) return absl::OkStatus();
  const auto* cuda_event = dynamic_cast<const CudaEvent*>(event.get());
  if (cuda_event == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(name_, ": WaitFor: the event does not come from the CUDA platform"));
  }
  EMBER_ASSIGN_OR_RETURN(ScopedContext scope, executor_.context().Activate());
  // The event may belong to another device's context: the driver allows that.
  return Track(EMBER_CU(executor_.driver(), cuStreamWaitEvent, stream_, cuda_event->handle(), 0));
}

absl::Status CudaStream::BlockHostUntilDone() {
  absl::Status synced;
  {
    EMBER_ASSIGN_OR_RETURN(ScopedContext scope, executor_.context().Activate());
    synced = Track(EMBER_CU(executor_.driver(), cuStreamSynchronize, stream_));
  }
  // A device fault: the host functions queued behind it will never run on the driver's thread.
  if (!synced.ok()) RunSkippedHostTasks();
  return status();
}

absl::Status CudaStream::status() const {
  absl::MutexLock lock(&mu_);
  return status_;
}

absl::Status CudaStream::Track(absl::Status status) {
  if (!status.ok()) {
    absl::MutexLock lock(&mu_);
    if (status_.ok()) status_ = status;
  }
  return status;
}

}  // namespace ember::se::cuda
