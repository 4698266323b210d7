#include "stream_executor/host/host_executor.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "stream_executor/copy_checks.h"
#include "stream_executor/host/host_stream.h"

namespace ember::se::host {
namespace {

// Aligned host memory. The caching allocator only asks for multiples of kHostAlignment, which
// std::aligned_alloc requires.
class HostRawAllocator final : public RawAllocator {
 public:
  absl::StatusOr<void*> Allocate(uint64_t size) override {
    void* ptr = std::aligned_alloc(kHostAlignment, size);
    if (ptr == nullptr) {
      return absl::ResourceExhaustedError(absl::StrCat("aligned_alloc of ", size, " bytes failed"));
    }
    return ptr;
  }
  void Free(void* ptr, uint64_t /*size*/) override { std::free(ptr); }
};

std::optional<int64_t> PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return std::nullopt;
  return static_cast<int64_t>(pages) * page_size;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HostExecutor>> HostExecutor::Create(
    int ordinal, std::optional<int64_t> memory_limit_bytes) {
  CachingAllocatorOptions options;
  options.name = absl::StrCat("host device ", ordinal);
  options.alignment = kHostAlignment;
  options.limit = memory_limit_bytes.has_value() ? memory_limit_bytes : PhysicalMemoryBytes();
  EMBER_ASSIGN_OR_RETURN(
      std::unique_ptr<CachingAllocator> allocator,
      CachingAllocator::Create(std::make_unique<HostRawAllocator>(), std::move(options)));
  return std::make_unique<HostExecutor>(ordinal, std::move(allocator));
}

HostExecutor::HostExecutor(int ordinal, std::unique_ptr<CachingAllocator> allocator)
    : ordinal_(ordinal), allocator_(std::move(allocator)) {}

absl::StatusOr<DeviceMemory> HostExecutor::Allocate(uint64_t size) {
  EMBER_ASSIGN_OR_RETURN(void* ptr, allocator_->Allocate(size));
  return DeviceMemory{ptr, size};
}

void HostExecutor::Deallocate(DeviceMemory mem) {
  if (mem.is_null()) return;
  // A pointer this executor does not own is a caller bug; the interface promises not to crash.
  allocator_->Free(mem.opaque).IgnoreError();
}

absl::StatusOr<std::unique_ptr<Stream>> HostExecutor::CreateStream() {
  return std::make_unique<HostStream>(
      absl::StrCat(allocator_->name(), " stream ", streams_created_.fetch_add(1)));
}

MemoryStats HostExecutor::GetMemoryStats() const { return allocator_->GetStats(); }

absl::Status HostExecutor::ClearMemoryStats() {
  allocator_->ClearStats();
  return absl::OkStatus();
}

absl::Status HostExecutor::SynchronousMemcpyD2H(void* dst, DeviceMemory src, uint64_t size) {
  EMBER_RETURN_IF_ERROR(CheckHostPointer("SynchronousMemcpyD2H", "destination", dst, size));
  EMBER_RETURN_IF_ERROR(CheckDeviceRange("SynchronousMemcpyD2H", "source", src, size));
  if (size != 0) std::memcpy(dst, src.opaque, size);
  return absl::OkStatus();
}

absl::Status HostExecutor::SynchronousMemcpyH2D(DeviceMemory dst, const void* src, uint64_t size) {
  EMBER_RETURN_IF_ERROR(CheckDeviceRange("SynchronousMemcpyH2D", "destination", dst, size));
  EMBER_RETURN_IF_ERROR(CheckHostPointer("SynchronousMemcpyH2D", "source", src, size));
  if (size != 0) std::memcpy(dst.opaque, src, size);
  return absl::OkStatus();
}

}  // namespace ember::se::host
