// CudaExecutor: one GPU. Owns the device's primary context (retained), a caching allocator over
// cuMemAlloc with 256-byte alignment, and the thread that runs event callbacks.
#ifndef EMBER_STREAM_EXECUTOR_CUDA_CUDA_EXECUTOR_H_
#define EMBER_STREAM_EXECUTOR_CUDA_CUDA_EXECUTOR_H_

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "stream_executor/caching_allocator.h"
#include "stream_executor/cuda/cuda_context.h"
#include "stream_executor/cuda/cuda_driver.h"
#include "stream_executor/executor.h"
#include "stream_executor/worker_thread.h"

namespace ember::se::cuda {

inline constexpr uint64_t kCudaAlignment = 256;

// Streams and events it created must be destroyed before it.
class CudaExecutor final : public Executor {
  struct PrivateTag {
    explicit PrivateTag() = default;
  };

 public:
  // Without `memory_limit_bytes` the limit is the device's total memory.
  static absl::StatusOr<std::unique_ptr<CudaExecutor>> Create(
      const CudaDriver& driver, int ordinal, std::optional<int64_t> memory_limit_bytes);
  // Public for std::make_unique only; use Create.
  CudaExecutor(PrivateTag, const CudaDriver& driver, int ordinal, std::string device_name,
               std::unique_ptr<PrimaryContext> context);
  ~CudaExecutor() override;

  int device_ordinal() const override { return ordinal_; }
  absl::StatusOr<DeviceMemory> Allocate(uint64_t size) override;
  void Deallocate(DeviceMemory mem) override;
  absl::StatusOr<std::unique_ptr<Stream>> CreateStream() override;
  MemoryStats GetMemoryStats() const override;
  absl::Status ClearMemoryStats() override;
  bool MemoryIsHostAccessible() const override { return false; }
  std::string DeviceKind() const override { return device_name_; }
  absl::Status SynchronousMemcpyD2H(void* dst, DeviceMemory src, uint64_t size) override;
  absl::Status SynchronousMemcpyH2D(DeviceMemory dst, const void* src, uint64_t size) override;

  const CudaDriver& driver() const { return driver_; }
  const PrimaryContext& context() const { return *context_; }
  // Runs event callbacks, which must not run on the driver's own callback thread.
  WorkerThread& callback_thread() { return callback_thread_; }

 private:
  const CudaDriver& driver_;
  const int ordinal_;
  const std::string device_name_;
  const std::unique_ptr<PrimaryContext> context_;
  std::unique_ptr<CachingAllocator> allocator_;  // set by Create; frees under context_
  std::atomic<int> streams_created_{0};
  WorkerThread callback_thread_;  // last: drained before the rest goes away
};

}  // namespace ember::se::cuda

#endif  // EMBER_STREAM_EXECUTOR_CUDA_CUDA_EXECUTOR_H_
