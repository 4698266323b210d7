#include "stream_executor/cuda/cuda_executor.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "stream_executor/copy_checks.h"
#include "stream_executor/cuda/cuda_pointer.h"
#include "stream_executor/cuda/cuda_status.h"
#include "stream_executor/cuda/cuda_stream.h"

namespace ember::se::cuda {
namespace {

// cuMemAlloc under the device's primary context. cuMemAlloc aligns to at least 256 bytes.
class CudaRawAllocator final : public RawAllocator {
 public:
  CudaRawAllocator(const CudaDriver& driver, const PrimaryContext& context)
      : driver_(driver), context_(context) {}

  absl::StatusOr<void*> Allocate(uint64_t size) override {
    EMBER_ASSIGN_OR_RETURN(ScopedContext scope, context_.Activate());
    CUdeviceptr ptr = 0;
    EMBER_RETURN_IF_ERROR(EMBER_CU(driver_, cuMemAlloc, &ptr, size));
    return FromCuDevicePtr(ptr);
  }

  void Free(void* ptr, uint64_t /*size*/) override {
    absl::StatusOr<ScopedContext> scope = context_.Activate();
    if (scope.ok()) driver_.cuMemFree(ToCuDevicePtr(ptr));
  }

 private:
  const CudaDriver& driver_;
  const PrimaryContext& context_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<CudaExecutor>> CudaExecutor::Create(
    const CudaDriver& driver, int ordinal, std::optional<int64_t> memory_limit_bytes) {
  CUdevice device = 0;
  EMBER_RETURN_IF_ERROR(EMBER_CU(driver, cuDeviceGet, &device, ordinal));
  char name[256] = {};
  EMBER_RETURN_IF_ERROR(EMBER_CU(driver, cuDeviceGetName, name, sizeof(name) - 1, device));
  size_t total_bytes = 0;
  EMBER_RETURN_IF_ERROR(EMBER_CU(driver, cuDeviceTotalMem, &total_bytes, device));
  EMBER_ASSIGN_OR_RETURN(std::unique_ptr<PrimaryContext> context,
                         PrimaryContext::Retain(driver, device));

  auto executor =
      std::make_unique<CudaExecutor>(PrivateTag{}, driver, ordinal, name, std::move(context));
  CachingAllocatorOptions options;
  options.name = absl::StrCat("cuda device ", ordinal);
  options.alignment = kCudaAlignment;
  options.limit =
      memory_limit_bytes.has_value() ? *memory_limit_bytes : static_cast<int64_t>(total_bytes);
  EMBER_ASSIGN_OR_RETURN(
      executor->allocator_,
      CachingAllocator::Create(std::make_unique<CudaRawAllocator>(driver, *executor->context_),
                               std::move(options)));
  return executor;
}

CudaExecutor::CudaExecutor(PrivateTag, const CudaDriver& driver, int ordinal,
                           std::string device_name, std::unique_ptr<PrimaryContext> context)
    : driver_(driver),
      ordinal_(ordinal),
      device_name_(std::move(device_name)),
      context_(std::move(context)),
      callback_thread_(absl::StrCat("cuda device ", ordinal, " event callbacks")) {}

CudaExecutor::~CudaExecutor() {
  // Pending event callbacks may still use device memory: finish them before freeing it.
  callback_thread_.WaitUntilIdle().IgnoreError();
  allocator_.reset();
}

absl::StatusOr<DeviceMemory> CudaExecutor::Allocate(uint64_t size) {
  EMBER_ASSIGN_OR_RETURN(void* ptr, allocator_->Allocate(size));
  return DeviceMemory{ptr, size};
}

void CudaExecutor::Deallocate(DeviceMemory mem) {
  if (mem.is_null()) return;
  // A pointer this executor does not own is a caller bug; the interface promises not to crash.
  allocator_->Free(mem.opaque).IgnoreError();
}

absl::StatusOr<std::unique_ptr<Stream>> CudaExecutor::CreateStream() {
  EMBER_ASSIGN_OR_RETURN(
      std::unique_ptr<CudaStream> stream,
      CudaStream::Create(*this, absl::StrCat("cuda device ", ordinal_, " stream ",
                                             streams_created_.fetch_add(1))));
  return stream;
}

MemoryStats CudaExecutor::GetMemoryStats() const { return allocator_->GetStats(); }

absl::Status CudaExecutor::ClearMemoryStats() {
  allocator_->ClearStats();
  return absl::OkStatus();
}

absl::Status CudaExecutor::SynchronousMemcpyD2H(void* dst, DeviceMemory src, uint64_t size) {
  EMBER_RETURN_IF_ERROR(CheckHostPointer("SynchronousMemcpyD2H", "destination", dst, size));
  EMBER_RETURN_IF_ERROR(CheckDeviceRange("SynchronousMemcpyD2H", "source", src, size));
  if (size == 0) return absl::OkStatus();
  EMBER_ASSIGN_OR_RETURN(ScopedContext scope, context_->Activate());
  return EMBER_CU(driver_, cuMemcpyDtoH, dst, ToCuDevicePtr(src), size);
}

absl::Status CudaExecutor::SynchronousMemcpyH2D(DeviceMemory dst, const void* src, uint64_t size) {
  EMBER_RETURN_IF_ERROR(CheckDeviceRange("SynchronousMemcpyH2D", "destination", dst, size));
  EMBER_RETURN_IF_ERROR(CheckHostPointer("SynchronousMemcpyH2D", "source", src, size));
  if (size == 0) return absl::OkStatus();
  EMBER_ASSIGN_OR_RETURN(ScopedContext scope, context_->Activate());
  return EMBER_CU(driver_, cuMemcpyHtoD, ToCuDevicePtr(dst), src, size);
}

}  // namespace ember::se::cuda
