// Executor: one device of a Platform. Allocates device memory through its caching allocator,
// creates streams, copies synchronously, and reports memory statistics.
#ifndef EMBER_STREAM_EXECUTOR_EXECUTOR_H_
#define EMBER_STREAM_EXECUTOR_EXECUTOR_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/memory_account.h"
#include "stream_executor/device_memory.h"
#include "stream_executor/memory_stats.h"
#include "stream_executor/stream.h"

namespace ember::se {

// Methods may be called from several threads at once.
class Executor {
 public:
  virtual ~Executor() = default;

  virtual int device_ordinal() const = 0;

  // Size 0 is allowed and returns a non-null address distinct from every other live allocation.
  // Fails with ResourceExhausted (sizes in the message) past the memory limit.
  virtual absl::StatusOr<DeviceMemory> Allocate(uint64_t size) = 0;
  // Returns the memory to the caching allocator, which may hand it out again at once: no queued
  // stream work may still use it. Null memory is ignored; so is memory this executor did not
  // allocate (a caller bug that must not crash the process).
  virtual void Deallocate(DeviceMemory mem) = 0;

  virtual absl::StatusOr<std::unique_ptr<Stream>> CreateStream() = 0;

  virtual MemoryStats GetMemoryStats() const = 0;
  // Resets the peaks, num_allocs and largest_alloc_size to the current state.
  virtual absl::Status ClearMemoryStats() = 0;

  // Where host memory that work on this device takes outside its buffers is counted (the
  // evaluator's values on the host platform); null where no such work runs.
  virtual MemoryAccount* HostWorkAccount() { return nullptr; }
  // True on the host platform, where device memory is host memory.
  virtual bool MemoryIsHostAccessible() const = 0;
  // "Ember host device", or the GPU's name.
  virtual std::string DeviceKind() const = 0;

  // Copy at once, ordered after nothing: callers synchronize with streams themselves.
  virtual absl::Status SynchronousMemcpyD2H(void* dst, DeviceMemory src, uint64_t size) = 0;
  virtual absl::Status SynchronousMemcpyH2D(DeviceMemory dst, const void* src, uint64_t size) = 0;
};

}  // namespace ember::se

#endif  // EMBER_STREAM_EXECUTOR_EXECUTOR_H_
