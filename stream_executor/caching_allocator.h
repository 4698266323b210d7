// CachingAllocator: platform-independent caching allocator over a RawAllocator. Requests round up
// to size classes (eight per power of two: at most 12.5% waste) and freed blocks are reused by the
// next request of their class. Keeps the MemoryStats counters and enforces an optional limit. It
// is also its device's MemoryAccount: memory a launch takes outside it (the evaluator's values)
// is counted in use and limited with the blocks.
#ifndef EMBER_STREAM_EXECUTOR_CACHING_ALLOCATOR_H_
#define EMBER_STREAM_EXECUTOR_CACHING_ALLOCATOR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "base/memory_account.h"
#include "stream_executor/memory_stats.h"
#include "stream_executor/raw_allocator.h"

namespace ember::se {

struct CachingAllocatorOptions {
  std::string name = "device";   // in error messages: "out of memory on host device 0 ..."
  uint64_t alignment = 64;       // a power of two; every size class is a multiple of it
  std::optional<int64_t> limit;  // bytes obtained from the raw allocator may not exceed it
};

// Thread-safe. Every block, cached or in use, goes back to the raw allocator on destruction.
class CachingAllocator final : public MemoryAccount {
  struct PrivateTag {
    explicit PrivateTag() = default;
  };

 public:
  static absl::StatusOr<std::unique_ptr<CachingAllocator>> Create(std::unique_ptr<RawAllocator> raw,
                                                                  CachingAllocatorOptions options);

  // Public for std::make_unique only: the private PrivateTag keeps everyone but Create (which
  // validates the options) out.
  CachingAllocator(PrivateTag, std::unique_ptr<RawAllocator> raw, CachingAllocatorOptions options);
  ~CachingAllocator() override;
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // The smallest class >= max(size, 1): a multiple of `alignment` and of 2^(floor(log2(size))-3).
  static uint64_t SizeClass(uint64_t size, uint64_t alignment);

  // Size 0 returns a distinct non-null block of the smallest class. Past the limit (after
  // releasing the cache) fails with ResourceExhausted naming the sizes involved.
  absl::StatusOr<void*> Allocate(uint64_t size);
  // InvalidArgument for a pointer that is not a live allocation of this allocator.
  absl::Status Free(void* ptr);
  // Returns every cached free block to the raw allocator.
  void ReleaseCache();

  // MemoryAccount: bytes held outside the allocator's blocks count as in use (not as
  // allocations); past the limit (after releasing the cache) Charge fails like Allocate.
  absl::Status Charge(uint64_t bytes) override;
  void Release(uint64_t bytes) override;

  // bytes_in_use counts size classes, not requested sizes: it is the memory held for the caller.
  MemoryStats GetStats() const;
  // Resets peaks to the current values and num_allocs / largest_alloc_size to zero.
  void ClearStats();

  const std::string& name() const { return options_.name; }

 private:
  void ReleaseCacheLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether `bytes` more fit under the limit, giving the cache back first if they do not.
  bool RoomForLocked(uint64_t bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status LimitError(uint64_t size, uint64_t size_class) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::unique_ptr<RawAllocator> raw_;
  const CachingAllocatorOptions options_;

  mutable absl::Mutex mu_;
  absl::flat_hash_map<uint64_t, std::vector<void*>> free_by_class_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<void*, uint64_t> in_use_ ABSL_GUARDED_BY(mu_);  // pointer -> size class
  int64_t bytes_in_use_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t pool_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t peak_bytes_in_use_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t peak_bytes_reserved_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t peak_pool_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t num_allocs_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t largest_alloc_size_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ember::se

#endif  // EMBER_STREAM_EXECUTOR_CACHING_ALLOCATOR_H_
