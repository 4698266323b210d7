// MemoryStats: a snapshot of one executor's allocator counters, in bytes unless named otherwise.
// An empty optional means "not tracked by this allocator", never zero.
#ifndef EMBER_STREAM_EXECUTOR_MEMORY_STATS_H_
#define EMBER_STREAM_EXECUTOR_MEMORY_STATS_H_

#include <cstdint>
#include <optional>

namespace ember::se {

struct MemoryStats {
  int64_t bytes_in_use = 0;                   // held by live allocations (rounded sizes)
  std::optional<int64_t> peak_bytes_in_use;   // since creation or the last ClearMemoryStats
  std::optional<int64_t> num_allocs;          // successful allocations since then
  std::optional<int64_t> largest_alloc_size;  // largest requested size since then
  std::optional<int64_t> bytes_limit;         // allocations past it fail with ResourceExhausted
  std::optional<int64_t> bytes_reserved;      // obtained from the device: in use + cached
  std::optional<int64_t> peak_bytes_reserved;
  std::optional<int64_t> bytes_reservable_limit;
  std::optional<int64_t> largest_free_block_bytes;  // largest cached block ready for reuse
  std::optional<int64_t> pool_bytes;                // cached free blocks
  std::optional<int64_t> peak_pool_bytes;
};

}  // namespace ember::se

#endif  // EMBER_STREAM_EXECUTOR_MEMORY_STATS_H_
