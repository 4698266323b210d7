#include "stream_executor/caching_allocator.h"

#include <algorithm>
#include <bit>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ember::se {
namespace {

// Larger requests cannot be rounded without overflow and no device has that much memory.
constexpr uint64_t kMaxRequest = uint64_t{1} << 62;

uint64_t RoundUp(uint64_t value, uint64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CachingAllocator>> CachingAllocator::Create(
    std::unique_ptr<RawAllocator> raw, CachingAllocatorOptions options) {
  if (raw == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("caching allocator for ", options.name, ": no raw allocator"));
  }
  if (!std::has_single_bit(options.alignment)) {
    return absl::InvalidArgumentError(absl::StrCat("caching allocator for ", options.name,
                                                   ": alignment ", options.alignment,
                                                   " is not a power of two"));
  }
  if (options.limit.has_value() && *options.limit < 0) {
    return absl::InvalidArgumentError(absl::StrCat("caching allocator for ", options.name,
                                                   ": negative memory limit ", *options.limit));
  }
  return std::make_unique<CachingAllocator>(PrivateTag{}, std::move(raw), std::move(options));
}

CachingAllocator::CachingAllocator(PrivateTag, std::unique_ptr<RawAllocator> raw,
                                   CachingAllocatorOptions options)
    : raw_(std::move(raw)), options_(std::move(options)) {}

CachingAllocator::~CachingAllocator() {
  absl::MutexLock lock(&mu_);
  ReleaseCacheLocked();
  for (const auto& [ptr, size_class] : in_use_) raw_->Free(ptr, size_class);
  in_use_.clear();
}

uint64_t CachingAllocator::SizeClass(uint64_t size, uint64_t alignment) {
  const uint64_t aligned = RoundUp(std::max<uint64_t>(size, 1), alignment);
  const int log2 = std::bit_width(aligned) - 1;
  const uint64_t step = log2 >= 3 ? uint64_t{1} << (log2 - 3) : 1;
  return RoundUp(aligned, std::max(step, alignment));
}

absl::StatusOr<void*> CachingAllocator::Allocate(uint64_t size) {
  if (size > kMaxRequest) {
    return absl::ResourceExhaustedError(
        absl::StrCat("out of memory on ", options_.name, ": cannot allocate ", size, " bytes"));
  }
  const uint64_t size_class = SizeClass(size, options_.alignment);
  absl::MutexLock lock(&mu_);

  void* ptr = nullptr;
  if (auto it = free_by_class_.find(size_class); it != free_by_class_.end()) {
    ptr = it->second.back();
    it->second.pop_back();
    if (it->second.empty()) free_by_class_.erase(it);
    pool_bytes_ -= static_cast<int64_t>(size_class);
  } else {
    if (!RoomForLocked(size_class)) return LimitError(size, size_class);
    absl::StatusOr<void*> raw = raw_->Allocate(size_class);
    if (!raw.ok() && pool_bytes_ > 0) {
      // The device itself is short: give the cache back and try once more.
      ReleaseCacheLocked();
      raw = raw_->Allocate(size_class);
    }
    if (!raw.ok()) {
      return absl::Status(raw.status().code(),
                          absl::StrCat("allocating ", size, " bytes (size class ", size_class,
                                       ") on ", options_.name, " with ", bytes_in_use_,
                                       " bytes in use: ", raw.status().message()));
    }
    ptr = *raw;
  }

  in_use_.emplace(ptr, size_class);
  bytes_in_use_ += static_cast<int64_t>(size_class);
  ++num_allocs_;
  largest_alloc_size_ = std::max(largest_alloc_size_, static_cast<int64_t>(size));
  peak_bytes_in_use_ = std::max(peak_bytes_in_use_, bytes_in_use_);
  peak_bytes_reserved_ = std::max(peak_bytes_reserved_, bytes_in_use_ + pool_bytes_);
  return ptr;
}

absl::Status CachingAllocator::Charge(uint64_t bytes) {
  if (bytes > kMaxRequest) {
    return absl::ResourceExhaustedError(
        absl::StrCat("out of memory on ", options_.name, ": cannot allocate ", bytes, " bytes"));
  }
  absl::MutexLock lock(&mu_);
  if (!RoomForLocked(bytes)) return LimitError(bytes, bytes);
  bytes_in_use_ += static_cast<int64_t>(bytes);
  peak_bytes_in_use_ = std::max(peak_bytes_in_use_, bytes_in_use_);
  peak_bytes_reserved_ = std::max(peak_bytes_reserved_, bytes_in_use_ + pool_bytes_);
  return absl::OkStatus();
}

void CachingAllocator::Release(uint64_t bytes) {
  absl::MutexLock lock(&mu_);
  bytes_in_use_ -= static_cast<int64_t>(bytes);
}

bool CachingAllocator::RoomForLocked(uint64_t bytes) {
  if (!options_.limit.has_value()) return true;
  const auto fits = [&] {
    return static_cast<uint64_t>(bytes_in_use_ + pool_bytes_) + bytes <=
           static_cast<uint64_t>(*options_.limit);
  };
  if (fits()) return true;
  ReleaseCacheLocked();
  return fits();
}

absl::Status CachingAllocator::LimitError(uint64_t size, uint64_t size_class) const {
  return absl::ResourceExhaustedError(absl::StrFormat(
      "out of memory on %s: allocating %d bytes (size class %d) with %d bytes in use would "
      "exceed the memory limit of %d bytes",
      options_.name, size, size_class, bytes_in_use_, *options_.limit));
}

absl::Status CachingAllocator::Free(void* ptr) {
  absl::MutexLock lock(&mu_);
  auto it = in_use_.find(ptr);
  if (it == in_use_.end()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "freeing %p on %s: not a live allocation of this device", ptr, options_.name));
  }
  const uint64_t size_class = it->second;
  in_use_.erase(it);
  free_by_class_[size_class].push_back(ptr);
  bytes_in_use_ -= static_cast<int64_t>(size_class);
  pool_bytes_ += static_cast<int64_t>(size_class);
  peak_pool_bytes_ = std::max(peak_pool_bytes_, pool_bytes_);
  return absl::OkStatus();
}

void CachingAllocator::ReleaseCache() {
  absl::MutexLock lock(&mu_);
  ReleaseCacheLocked();
}

void CachingAllocator::ReleaseCacheLocked() {
  for (auto& [size_class, blocks] : free_by_class_) {
    for (void* ptr : blocks) raw_->Free(ptr, size_class);
  }
  free_by_class_.clear();
  pool_bytes_ = 0;
}

MemoryStats CachingAllocator::GetStats() const {
  absl::MutexLock lock(&mu_);
  MemoryStats stats;
  stats.bytes_in_use = bytes_in_use_;
  stats.peak_bytes_in_use = peak_bytes_in_use_;
  stats.num_allocs = num_allocs_;
  stats.largest_alloc_size = largest_alloc_size_;
  stats.bytes_limit = options_.limit;
  stats.bytes_reservable_limit = options_.limit;
  stats.bytes_reserved = bytes_in_use_ + pool_bytes_;
  stats.peak_bytes_reserved = peak_bytes_reserved_;
  stats.pool_bytes = pool_bytes_;
  stats.peak_pool_bytes = peak_pool_bytes_;
  int64_t largest_free = 0;
  for (const auto& [size_class, blocks] : free_by_class_) {
    largest_free = std::max(largest_free, static_cast<int64_t>(size_class));
  }
  stats.largest_free_block_bytes = largest_free;
  return stats;
}

void CachingAllocator::ClearStats() {
  absl::MutexLock lock(&mu_);
  peak_bytes_in_use_ = bytes_in_use_;
  peak_bytes_reserved_ = bytes_in_use_ + pool_bytes_;
  peak_pool_bytes_ = pool_bytes_;
  num_allocs_ = 0;
  largest_alloc_size_ = 0;
}

}  // namespace ember::se
