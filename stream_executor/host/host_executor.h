// HostExecutor: one host device. Device memory is 64-byte-aligned host memory handed out by a
// CachingAllocator; streams are HostStreams.
#ifndef EMBER_STREAM_EXECUTOR_HOST_HOST_EXECUTOR_H_
#define EMBER_STREAM_EXECUTOR_HOST_HOST_EXECUTOR_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "stream_executor/caching_allocator.h"
#include "stream_executor/executor.h"

namespace ember::se::host {

inline constexpr uint64_t kHostAlignment = 64;

class HostExecutor final : public Executor {
 public:
  // Without `memory_limit_bytes` the limit is the machine's physical memory.
  static absl::StatusOr<std::unique_ptr<HostExecutor>> Create(
      int ordinal, std::optional<int64_t> memory_limit_bytes);
  HostExecutor(int ordinal, std::unique_ptr<CachingAllocator> allocator);

  int device_ordinal() const override { return ordinal_; }
  absl::StatusOr<DeviceMemory> Allocate(uint64_t size) override;
  void Deallocate(DeviceMemory mem) override;
  absl::StatusOr<std::unique_ptr<Stream>> CreateStream() override;
  MemoryStats GetMemoryStats() const override;
  MemoryAccount* HostWorkAccount() override { return allocator_.get(); }
  absl::Status ClearMemoryStats() override;
  bool MemoryIsHostAccessible() const override { return true; }
  std::string DeviceKind() const override { return "Ember host device"; }
  absl::Status SynchronousMemcpyD2H(void* dst, DeviceMemory src, uint64_t size) override;
  absl::Status SynchronousMemcpyH2D(DeviceMemory dst, const void* src, uint64_t size) override;

 private:
  const int ordinal_;
  const std::unique_ptr<CachingAllocator> allocator_;
  std::atomic<int> streams_created_{0};  // numbers streams in their names
};

}  // namespace ember::se::host

#endif  // EMBER_STREAM_EXECUTOR_HOST_HOST_EXECUTOR_H_
