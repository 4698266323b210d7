// RawAllocator: the uncached source of device memory under a CachingAllocator (aligned host
// memory, cuMemAlloc, or a fake in tests).
#ifndef EMBER_STREAM_EXECUTOR_RAW_ALLOCATOR_H_
#define EMBER_STREAM_EXECUTOR_RAW_ALLOCATOR_H_

#include <cstdint>

#include "absl/status/statusor.h"

namespace ember::se {

class RawAllocator {
 public:
  virtual ~RawAllocator() = default;
  // Returns `size` bytes (size > 0) aligned to at least the CachingAllocator's alignment.
  // ResourceExhausted when the device is out of memory.
  virtual absl::StatusOr<void*> Allocate(uint64_t size) = 0;
  // `ptr` came from Allocate(size).
  virtual void Free(void* ptr, uint64_t size) = 0;
};

}  // namespace ember::se

#endif  // EMBER_STREAM_EXECUTOR_RAW_ALLOCATOR_H_
