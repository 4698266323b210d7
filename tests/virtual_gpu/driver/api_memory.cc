// Driver API: device memory (exact-size allocations, poisoned), pinned and registered host
// memory, pointer queries, copies in every direction (synchronous ones go through the legacy
// stream; asynchronous ones read and write their buffers when the stream reaches them) and
// memsets. Device endpoints are checked against live allocations when the call is made and
// again when the copy runs (a use after free in between is a sticky illegal-address fault).
#include <cuda.h>

#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "tests/virtual_gpu/driver/driver_state.h"
#include "tests/virtual_gpu/driver/errors.h"

using ember::vgpu::Allocation;
using ember::vgpu::AddressSpace;
using ember::vgpu::CurrentContext;
using ember::vgpu::Driver;
using ember::vgpu::EnqueueWork;
using ember::vgpu::Fail;

namespace {

uintptr_t Address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

// A copy endpoint: device memory (any live allocation, host kinds included) or plain host memory.
struct Endpoint {
  uint64_t address;
  bool device;  // must resolve through the address space when the copy runs
};

CUresult CheckDevice(uint64_t address, size_t size, const char* role, const char* call) {
  absl::StatusOr<std::shared_ptr<Allocation>> a = Driver::Get().memory.FindRange(address, size);
  if (!a.ok()) {
    return Fail(CUDA_ERROR_INVALID_VALUE,
                absl::StrCat(call, ": the ", role, " range of ", size, " bytes at 0x",
                             absl::Hex(address), " is not device memory: ", a.status().message()));
  }
  return CUDA_SUCCESS;
}

CUresult CheckHost(const void* p, size_t size, const char* role, const char* call) {
  if (p == nullptr && size > 0) return Fail(CUDA_ERROR_INVALID_VALUE, absl::StrCat(call, ": null ", role));
  if (AddressSpace::IsDeviceAddress(Address(p))) {
    return Fail(CUDA_ERROR_INVALID_VALUE,
                absl::StrCat(call, ": the ", role, " 0x", absl::Hex(Address(p)),
                             " is a device address, not host memory"));
  }
  return CUDA_SUCCESS;
}

// Host bytes for an endpoint when the copy runs; null (with *error) when it no longer resolves.
uint8_t* Resolve(const Endpoint& e, size_t size, bool write,
                 std::shared_ptr<Allocation>* keep, std::string* error) {
  if (!e.device) return reinterpret_cast<uint8_t*>(e.address);
  absl::StatusOr<std::shared_ptr<Allocation>> a = Driver::Get().memory.FindRange(e.address, size);
  if (!a.ok()) {
    *error = std::string(a.status().message());
    return nullptr;
  }
  if (write && !(*a)->writable()) {
    *error = absl::StrCat("write into read-only ", (*a)->Describe());
    return nullptr;
  }
  *keep = *a;
  return (*a)->host + (e.address - (*a)->base);
}

std::function<void()> CopyOp(CUctx_st* ctx, Endpoint dst, Endpoint src, size_t size,
                             std::string call) {
  return [ctx, dst, src, size, call = std::move(call)] {
    std::shared_ptr<Allocation> keep_dst, keep_src;
    std::string error;
    uint8_t* to = Resolve(dst, size, true, &keep_dst, &error);
    const uint8_t* from = to ? Resolve(src, size, false, &keep_src, &error) : nullptr;
    if (to == nullptr || from == nullptr) {
      ctx->SetSticky(CUDA_ERROR_ILLEGAL_ADDRESS,
                     absl::StrCat(call, " (when the stream ran it): ", error));
      return;
    }
    std::memmove(to, from, size);
  };
}

// Runs a copy on `stream` (null: the legacy stream); `wait` makes it synchronous.
CUresult Copy(Endpoint dst, Endpoint src, size_t size, CUstream stream, bool wait, const char* call) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  if (CUresult r = ember::vgpu::StreamContext(stream, ctx, call); r != CUDA_SUCCESS) return r;
  if (dst.device) {
    if (CUresult r = CheckDevice(dst.address, size, "destination", call); r != CUDA_SUCCESS) return r;
  } else if (CUresult r = CheckHost(reinterpret_cast<void*>(dst.address), size, "destination", call);
             r != CUDA_SUCCESS) {
    return r;
  }
  if (src.device) {
    if (CUresult r = CheckDevice(src.address, size, "source", call); r != CUDA_SUCCESS) return r;
  } else if (CUresult r = CheckHost(reinterpret_cast<void*>(src.address), size, "source", call);
             r != CUDA_SUCCESS) {
    return r;
  }
  if (size == 0) return CUDA_SUCCESS;
  const uint64_t ticket = EnqueueWork(ctx, stream, CopyOp(ctx, dst, src, size, call));
  if (wait) {
    ember::vgpu::QueueOf(ctx, stream)->WaitFor(ticket);
    if (CUresult sticky = ctx->sticky(); sticky != CUDA_SUCCESS) return Fail(sticky, ctx->sticky_message());
  }
  return CUDA_SUCCESS;
}

// Unified addressing: whether a pointer names memory the address space knows (device, pinned
// or registered) decides how cuMemcpy treats it.
Endpoint Classify(CUdeviceptr p) {
  const bool known = Driver::Get().memory.Find(p).ok() || AddressSpace::IsDeviceAddress(p);
  return Endpoint{p, known};
}

CUresult Memset(CUdeviceptr dst, uint32_t value, size_t count, int element, CUstream stream,
                bool wait, const char* call) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  if (CUresult r = ember::vgpu::StreamContext(stream, ctx, call); r != CUDA_SUCCESS) return r;
  if (dst % element != 0) {
    return Fail(CUDA_ERROR_INVALID_VALUE,
                absl::StrCat(call, ": destination 0x", absl::Hex(dst), " is not ", element,
                             "-byte aligned"));
  }
  const size_t size = count * static_cast<size_t>(element);
  if (CUresult r = CheckDevice(dst, size, "destination", call); r != CUDA_SUCCESS) return r;
  if (size == 0) return CUDA_SUCCESS;
  const Endpoint e{dst, true};
  const std::string name = call;
  const uint64_t ticket = EnqueueWork(ctx, stream, [ctx, e, value, count, element, name] {
    std::shared_ptr<Allocation> keep;
    std::string error;
    uint8_t* p = Resolve(e, count * element, true, &keep, &error);
    if (p == nullptr) {
      ctx->SetSticky(CUDA_ERROR_ILLEGAL_ADDRESS, absl::StrCat(name, " (when the stream ran it): ", error));
      return;
    }
    for (size_t i = 0; i < count; ++i) std::memcpy(p + i * element, &value, element);
  });
  if (wait) ember::vgpu::QueueOf(ctx, stream)->WaitFor(ticket);
  return CUDA_SUCCESS;
}

CUresult HostAlloc(void** p, size_t size, const char* call) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  if (p == nullptr || size == 0) return Fail(CUDA_ERROR_INVALID_VALUE, absl::StrCat(call, ": bad arguments"));
  void* memory = std::aligned_alloc(4096, (size + 4095) / 4096 * 4096);
  if (memory == nullptr) return Fail(CUDA_ERROR_OUT_OF_MEMORY, absl::StrCat(call, ": host out of memory"));
  absl::StatusOr<std::shared_ptr<Allocation>> a = Driver::Get().memory.AddHost(
      static_cast<uint8_t*>(memory), size, Allocation::Kind::kPinnedHost);
  if (!a.ok()) {
    std::free(memory);
    return Fail(CUDA_ERROR_INVALID_VALUE, std::string(a.status().message()));
  }
  *p = memory;
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuMemAlloc(CUdeviceptr* dptr, size_t size) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  if (dptr == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "cuMemAlloc: null output");
  if (size == 0) return Fail(CUDA_ERROR_INVALID_VALUE, "cuMemAlloc: size 0");
  Driver& d = Driver::Get();
  {
    absl::MutexLock lock(&d.mu);
    if (d.fail_allocations > 0) {
      --d.fail_allocations;
      return Fail(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc: failure injected by the test");
    }
  }
  const uint64_t total = d.model(ctx->device).total_memory;
  const uint64_t used = d.memory.DeviceBytesInUse(ctx->device);
  if (size > total - used) {
    return Fail(CUDA_ERROR_OUT_OF_MEMORY,
                absl::StrCat("cuMemAlloc: ", size, " bytes requested, ", total - used,
                             " of ", total, " free on device ", ctx->device));
  }
  absl::StatusOr<std::shared_ptr<Allocation>> a =
      d.memory.AllocateDevice(ctx->device, size, Allocation::Kind::kDevice, "");
  if (!a.ok()) return Fail(CUDA_ERROR_OUT_OF_MEMORY, std::string(a.status().message()));
  *dptr = (*a)->base;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFree(CUdeviceptr dptr) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  if (dptr == 0) return CUDA_SUCCESS;
  absl::StatusOr<std::shared_ptr<Allocation>> a =
      Driver::Get().memory.Remove(dptr, Allocation::Kind::kDevice);
  if (!a.ok()) return Fail(CUDA_ERROR_INVALID_VALUE, absl::StrCat("cuMemFree: ", a.status().message()));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  if (free_bytes == nullptr || total_bytes == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null output");
  Driver& d = Driver::Get();
  *total_bytes = d.model(ctx->device).total_memory;
  *free_bytes = *total_bytes - d.memory.DeviceBytesInUse(ctx->device);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr* base, size_t* size, CUdeviceptr dptr) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  absl::StatusOr<std::shared_ptr<Allocation>> a = Driver::Get().memory.Find(dptr);
  if (!a.ok()) return Fail(CUDA_ERROR_NOT_FOUND, std::string(a.status().message()));
  if (base) *base = (*a)->base;
  if (size) *size = (*a)->size;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAllocHost(void** p, size_t size) { return HostAlloc(p, size, "cuMemAllocHost"); }

CUresult CUDAAPI cuMemHostAlloc(void** p, size_t size, unsigned int flags) {
  (void)flags;  // portable / mapped / write-combined: all pinned memory is mapped with UVA
  return HostAlloc(p, size, "cuMemHostAlloc");
}

CUresult CUDAAPI cuMemFreeHost(void* p) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  absl::StatusOr<std::shared_ptr<Allocation>> a =
      Driver::Get().memory.Remove(Address(p), Allocation::Kind::kPinnedHost);
  if (!a.ok()) return Fail(CUDA_ERROR_INVALID_VALUE, absl::StrCat("cuMemFreeHost: ", a.status().message()));
  std::free(p);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostRegister(void* p, size_t size, unsigned int flags) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  (void)flags;
  if (p == nullptr || size == 0) return Fail(CUDA_ERROR_INVALID_VALUE, "cuMemHostRegister: bad range");
  if (CUresult r = CheckHost(p, size, "range", "cuMemHostRegister"); r != CUDA_SUCCESS) return r;
  absl::StatusOr<std::shared_ptr<Allocation>> a = Driver::Get().memory.AddHost(
      static_cast<uint8_t*>(p), size, Allocation::Kind::kRegisteredHost);
  if (!a.ok()) {
    return Fail(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
                absl::StrCat("cuMemHostRegister: ", a.status().message()));
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostUnregister(void* p) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  absl::StatusOr<std::shared_ptr<Allocation>> a =
      Driver::Get().memory.Remove(Address(p), Allocation::Kind::kRegisteredHost);
  if (!a.ok()) return Fail(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, std::string(a.status().message()));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostGetDevicePointer(CUdeviceptr* dptr, void* p, unsigned int flags) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  if (dptr == nullptr || flags != 0) return Fail(CUDA_ERROR_INVALID_VALUE, "bad arguments");
  absl::StatusOr<std::shared_ptr<Allocation>> a = Driver::Get().memory.Find(Address(p));
  if (!a.ok() || (*a)->on_device()) {
    return Fail(CUDA_ERROR_INVALID_VALUE, "cuMemHostGetDevicePointer: not pinned or registered host memory");
  }
  *dptr = Address(p);  // unified addressing: the same address on the device
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  if (CUresult r = ember::vgpu::Enter(); r != CUDA_SUCCESS) return r;
  if (data == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null data");
  absl::StatusOr<std::shared_ptr<Allocation>> a = Driver::Get().memory.Find(ptr);
  if (!a.ok()) return Fail(CUDA_ERROR_INVALID_VALUE, std::string(a.status().message()));
  const Allocation& alloc = **a;
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      *static_cast<unsigned int*>(data) = alloc.on_device() ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      *static_cast<int*>(data) = alloc.device;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_CONTEXT:
      *static_cast<CUcontext*>(data) = alloc.on_device() ? Driver::Get().primary[alloc.device].get() : nullptr;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
      *static_cast<CUdeviceptr*>(data) = ptr;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      if (alloc.on_device()) return Fail(CUDA_ERROR_INVALID_VALUE, "device memory has no host pointer");
      *static_cast<void**>(data) = reinterpret_cast<void*>(ptr);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
      *static_cast<unsigned int*>(data) = 0;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
      *static_cast<CUdeviceptr*>(data) = alloc.base;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
      *static_cast<size_t*>(data) = alloc.size;
      return CUDA_SUCCESS;
    default:
      return Fail(CUDA_ERROR_INVALID_VALUE,
                  absl::StrCat("pointer attribute ", static_cast<int>(attribute), " is not modelled"));
  }
}

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t size) {
  return Copy({dst, true}, {Address(src), false}, size, nullptr, true, "cuMemcpyHtoD");
}
CUresult CUDAAPI cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t size) {
  return Copy({Address(dst), false}, {src, true}, size, nullptr, true, "cuMemcpyDtoH");
}
CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t size) {
  return Copy({dst, true}, {src, true}, size, nullptr, true, "cuMemcpyDtoD");
}
CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t size) {
  return Copy(Classify(dst), Classify(src), size, nullptr, true, "cuMemcpy");
}
CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t size, CUstream stream) {
  return Copy({dst, true}, {Address(src), false}, size, stream, false, "cuMemcpyHtoDAsync");
}
CUresult CUDAAPI cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, size_t size, CUstream stream) {
  return Copy({Address(dst), false}, {src, true}, size, stream, false, "cuMemcpyDtoHAsync");
}
CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t size, CUstream stream) {
  return Copy({dst, true}, {src, true}, size, stream, false, "cuMemcpyDtoDAsync");
}
CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t size, CUstream stream) {
  return Copy(Classify(dst), Classify(src), size, stream, false, "cuMemcpyAsync");
}
CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
                              size_t size) {
  (void)dst_ctx;
  (void)src_ctx;
  return Copy({dst, true}, {src, true}, size, nullptr, true, "cuMemcpyPeer");
}
CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src,
                                   CUcontext src_ctx, size_t size, CUstream stream) {
  (void)dst_ctx;
  (void)src_ctx;
  return Copy({dst, true}, {src, true}, size, stream, false, "cuMemcpyPeerAsync");
}

CUresult CUDAAPI cuMemsetD8(CUdeviceptr dst, unsigned char value, size_t n) {
  return Memset(dst, value, n, 1, nullptr, true, "cuMemsetD8");
}
CUresult CUDAAPI cuMemsetD16(CUdeviceptr dst, unsigned short value, size_t n) {
  return Memset(dst, value, n, 2, nullptr, true, "cuMemsetD16");
}
CUresult CUDAAPI cuMemsetD32(CUdeviceptr dst, unsigned int value, size_t n) {
  return Memset(dst, value, n, 4, nullptr, true, "cuMemsetD32");
}
CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t n, CUstream stream) {
  return Memset(dst, value, n, 1, stream, false, "cuMemsetD8Async");
}
CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t n, CUstream stream) {
  return Memset(dst, value, n, 2, stream, false, "cuMemsetD16Async");
}
CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t n, CUstream stream) {
  return Memset(dst, value, n, 4, stream, false, "cuMemsetD32Async");
}

}  // extern "C"
