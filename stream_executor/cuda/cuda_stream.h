// CudaStream: a Stream on one CUstream of a device's primary context. Copies and memsets are
// cuMemcpy*Async / cuMemsetD8Async, host callbacks and event completion are cuLaunchHostFunc.
#ifndef EMBER_STREAM_EXECUTOR_CUDA_CUDA_STREAM_H_
#define EMBER_STREAM_EXECUTOR_CUDA_CUDA_STREAM_H_

#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "stream_executor/stream.h"

namespace ember::se::cuda {

class CudaExecutor;

class CudaStream final : public Stream {
  struct PrivateTag {
    explicit PrivateTag() = default;
  };

 public:
  static absl::StatusOr<std::unique_ptr<CudaStream>> Create(CudaExecutor& executor,
                                                            std::string name);
  // Public for std::make_unique only; use Create. Takes ownership of `stream`.
  CudaStream(PrivateTag, CudaExecutor& executor, CUstream stream, std::string name)
      : executor_(executor), stream_(stream), name_(std::move(name)) {}
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  // Waits for the queued work (host functions included), then destroys the CUstream.
  ~CudaStream() override;

  absl::Status MemcpyH2D(DeviceMemory dst, const void* src, uint64_t size) override;
  absl::Status MemcpyD2H(void* dst, DeviceMemory src, uint64_t size) override;
  absl::Status MemcpyD2D(DeviceMemory dst, DeviceMemory src, uint64_t size) override;
  absl::Status Memset(DeviceMemory dst, uint8_t value, uint64_t size) override;
  absl::Status EnqueueHostCallback(absl::AnyInvocable<absl::Status() &&> fn) override;
  absl::StatusOr<std::shared_ptr<Event>> RecordEvent() override;
  absl::Status WaitFor(std::shared_ptr<Event> event) override;
  absl::Status BlockHostUntilDone() override;
  absl::Status status() const override;

  CUstream handle() const { return stream_; }

 private:
  // What cuLaunchHostFunc's user data points at: owned by pending_tasks_, so that a task the
  // driver skips is neither leaked nor lost.
  struct PendingTask {
    CudaStream* stream = nullptr;
    uint64_t id = 0;
    bool taken = false;  // run (or being run) by one side: the driver's thread or the stream
    absl::AnyInvocable<void() &&> task;
  };
  // cuLaunchHostFunc's callback: runs the task unless RunSkippedHostTasks already did.
  static void CUDA_CB RunHostTask(void* user_data);
  // Enqueues `task` to run on the driver's callback thread when the stream reaches it.
  absl::Status LaunchHostTask(absl::AnyInvocable<void() &&> task);
  // After a device fault the driver never runs the host functions queued behind it (as
  // cuLaunchHostFunc documents), but the Stream contract runs every callback and every event
  // must become ready: this runs, on the calling thread, the tasks the driver has not run.
  void RunSkippedHostTasks();
  // Keeps the first error as the stream's status and returns `status` unchanged.
  absl::Status Track(absl::Status status);

  CudaExecutor& executor_;
  const CUstream stream_;
  const std::string name_;
  mutable absl::Mutex mu_;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  // Host tasks handed to the driver and not yet run, in queue order.
  absl::Mutex tasks_mu_;
  uint64_t next_task_ ABSL_GUARDED_BY(tasks_mu_) = 0;
  std::map<uint64_t, std::unique_ptr<PendingTask>> pending_tasks_ ABSL_GUARDED_BY(tasks_mu_);
};

}  // namespace ember::se::cuda

#endif  // EMBER_STREAM_EXECUTOR_CUDA_CUDA_STREAM_H_
