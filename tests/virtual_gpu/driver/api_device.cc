// Driver API: initialization, version, devices and their attributes, primary contexts, the
// context stack, peer access, and error names/strings.
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tests/virtual_gpu/driver/driver_state.h"
#include "tests/virtual_gpu/driver/errors.h"

using ember::vgpu::ContextStack;
using ember::vgpu::CurrentContext;
using ember::vgpu::Driver;
using ember::vgpu::Enter;
using ember::vgpu::Fail;
using ember::vgpu::ValidDevice;

namespace {

CUresult BadDevice(CUdevice device) {
  return Fail(CUDA_ERROR_INVALID_DEVICE,
              absl::StrCat("device ", device, " does not exist (the virtual machine has ",
                           Driver::Get().device_count(), " devices)"));
}

void ReadLaunchSettings(ember::vgpu::LaunchSettings& s) {
  if (const char* text = std::getenv("EMBER_VIRTUAL_GPU_MAX_INSTRUCTIONS")) {
    uint64_t v = 0;
    if (absl::SimpleAtoi(text, &v) && v > 0) s.instruction_budget = v;
  }
  if (const char* text = std::getenv("EMBER_VIRTUAL_GPU_SCHEDULE")) {
    s.reverse_order = std::strcmp(text, "reverse") == 0;
  }
  if (const char* text = std::getenv("EMBER_VIRTUAL_GPU_RACE_CHECK")) {
    s.check_races = std::strcmp(text, "0") != 0;
  }
}

int Attribute(const ember::vgpu::DeviceModel& m, int device, CUdevice_attribute attribute,
              bool* known) {
  *known = true;
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return m.max_threads_per_block;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return 64;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return m.shared_per_block;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: return m.total_constant_memory;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return m.registers_per_block;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return m.clock_khz;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: return 512;
    case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP: return 1;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return m.sm_count;
    case CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT: return 0;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED: return 0;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE: return CU_COMPUTEMODE_DEFAULT;
    case CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT: return 512;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: return 1;
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: return 1;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: return 0x10 + device;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: return 0;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: return 0;
    case CU_DEVICE_ATTRIBUTE_TCC_DRIVER: return 0;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: return m.memory_clock_khz;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return m.memory_bus_width;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return m.l2_bytes;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return m.max_threads_per_sm;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: return 3;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return m.cc_major;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return m.cc_minor;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: return m.shared_per_sm;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: return m.registers_per_sm;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: return 0;
    case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD: return 0;
    case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID: return device;
    case CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO: return 2;
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: return 0;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: return 0;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: return 1;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: return 0;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH: return 0;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return m.shared_per_block_optin;
    case CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES: return 0;
    case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES: return 0;
    case CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST: return 0;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: return m.max_blocks_per_sm;
    case CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: return m.reserved_shared_per_block;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: return 0;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS: return 0;
    case CU_DEVICE_ATTRIBUTE_MPS_ENABLED: return 0;
    case CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID: return m.pci_device_id;
    default:
      *known = false;
      return 0;
  }
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuGetErrorName(CUresult error, const char** str) {
  if (str == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *str = ember::vgpu::ErrorName(error);
  return *str == nullptr ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char** str) {
  if (str == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *str = ember::vgpu::DescriptionWithDetail(error);
  return *str == nullptr ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult CUDAAPI cuInit(unsigned int flags) {
  ember::vgpu::ClearDetail();
  if (ember::vgpu::InHostFunction()) return Fail(CUDA_ERROR_NOT_PERMITTED, "cuInit inside a host function");
  if (flags != 0) return Fail(CUDA_ERROR_INVALID_VALUE, "cuInit flags must be 0");
  Driver& d = Driver::Get();
  absl::MutexLock lock(&d.mu);
  if (d.initialized) return CUDA_SUCCESS;
  absl::StatusOr<ember::vgpu::MachineConfig> config = ember::vgpu::MachineConfigFromEnvironment();
  if (!config.ok()) return Fail(CUDA_ERROR_INVALID_VALUE, std::string(config.status().message()));
  d.config = *config;
  for (int i = 0; i < static_cast<int>(d.config.devices.size()); ++i) {
    auto ctx = std::make_unique<CUctx_st>();
    ctx->device = i;
    d.primary.push_back(std::move(ctx));
  }
  ReadLaunchSettings(d.launch);
  d.default_budget = d.launch.instruction_budget;
  d.initialized = true;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int* version) {
  ember::vgpu::ClearDetail();
  if (version == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null version");
  *version = 13000;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int* count) {
  if (CUresult r = Enter(); r != CUDA_SUCCESS) return r;
  if (count == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null count");
  *count = Driver::Get().device_count();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
  if (CUresult r = Enter(); r != CUDA_SUCCESS) return r;
  if (device == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null device");
  if (!ValidDevice(ordinal)) return BadDevice(ordinal);
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice device) {
  if (CUresult r = Enter(); r != CUDA_SUCCESS) return r;
  if (!ValidDevice(device)) return BadDevice(device);
  if (name == nullptr || len <= 0) return Fail(CUDA_ERROR_INVALID_VALUE, "bad name buffer");
  std::snprintf(name, static_cast<size_t>(len), "%s", Driver::Get().model(device).name.c_str());
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes, CUdevice device) {
  if (CUresult r = Enter(); r != CUDA_SUCCESS) return r;
  if (!ValidDevice(device)) return BadDevice(device);
  if (bytes == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null bytes");
  *bytes = Driver::Get().model(device).total_memory;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice device) {
  if (CUresult r = Enter(); r != CUDA_SUCCESS) return r;
  if (!ValidDevice(device)) return BadDevice(device);
  if (value == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null value");
  bool known = false;
  const int v = Attribute(Driver::Get().model(device), device, attribute, &known);
  if (!known) {
    return Fail(CUDA_ERROR_INVALID_VALUE,
                absl::StrCat("device attribute ", static_cast<int>(attribute),
                             " is not modelled by the virtual GPU"));
  }
  *value = v;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceComputeCapability(int* major, int* minor, CUdevice device) {
  if (CUresult r = Enter(); r != CUDA_SUCCESS) return r;
  if (!ValidDevice(device)) return BadDevice(device);
  if (major == nullptr || minor == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null output");
  *major = Driver::Get().model(device).cc_major;
  *minor = Driver::Get().model(device).cc_minor;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetUuid(CUuuid* uuid, CUdevice device) {
  if (CUresult r = Enter(); r != CUDA_SUCCESS) return r;
  if (!ValidDevice(device)) return BadDevice(device);
  if (uuid == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null uuid");
  std::memset(uuid->bytes, 0, sizeof(uuid->bytes));
  std::memcpy(uuid->bytes, "EMBERVGPU", 9);
  uuid->bytes[15] = static_cast<char>(device);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetPCIBusId(char* pci_bus_id, int len, CUdevice device) {
  if (CUresult r = Enter(); r != CUDA_SUCCESS) return r;
  if (!ValidDevice(device)) return BadDevice(device);
  if (pci_bus_id == nullptr || len <= 0) return Fail(CUDA_ERROR_INVALID_VALUE, "bad buffer");
  std::snprintf(pci_bus_id, static_cast<size_t>(len), "0000:%02x:00.0", 0x10 + device);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceCanAccessPeer(int* can_access, CUdevice device, CUdevice peer) {
  if (CUresult r = Enter(); r != CUDA_SUCCESS) return r;
  if (!ValidDevice(device)) return BadDevice(device);
  if (!ValidDevice(peer)) return BadDevice(peer);
  if (can_access == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null output");
  *can_access = device != peer ? 1 : 0;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
  if (CUresult r = Enter(); r != CUDA_SUCCESS) return r;
  if (!ValidDevice(device)) return BadDevice(device);
  if (context == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null context");
  Driver& d = Driver::Get();
  absl::MutexLock lock(&d.mu);
  CUctx_st* ctx = d.primary[device].get();
  if (ctx->retains++ == 0) ember::vgpu::ActivateContext(ctx);
  *context = ctx;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice device) {
  if (CUresult r = Enter(); r != CUDA_SUCCESS) return r;
  if (!ValidDevice(device)) return BadDevice(device);
  Driver& d = Driver::Get();
  CUctx_st* ctx = d.primary[device].get();
  {
    absl::MutexLock lock(&d.mu);
    if (ctx->retains == 0) {
      return Fail(CUDA_ERROR_INVALID_CONTEXT,
                  absl::StrCat("device ", device, "'s primary context is not retained"));
    }
    if (--ctx->retains > 0) return CUDA_SUCCESS;
  }
  // Last release: the context and everything in it go away (what the user did not free counts
  // as leaked for ember_vgpu_live_handles).
  ember::vgpu::DestroyContextResources(ctx, /*count_leaks=*/true);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice device) {
  if (CUresult r = Enter(); r != CUDA_SUCCESS) return r;
  if (!ValidDevice(device)) return BadDevice(device);
  Driver& d = Driver::Get();
  CUctx_st* ctx = d.primary[device].get();
  ember::vgpu::DestroyContextResources(ctx, /*count_leaks=*/false);
  absl::MutexLock lock(&d.mu);
  if (ctx->retains > 0) ember::vgpu::ActivateContext(ctx);
  ctx->ClearSticky();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice device, unsigned int* flags, int* active) {
  if (CUresult r = Enter(); r != CUDA_SUCCESS) return r;
  if (!ValidDevice(device)) return BadDevice(device);
  if (flags == nullptr || active == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null output");
  Driver& d = Driver::Get();
  absl::MutexLock lock(&d.mu);
  *flags = d.primary[device]->flags;
  *active = d.primary[device]->retains > 0 ? 1 : 0;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxSetFlags(CUdevice device, unsigned int flags) {
  if (CUresult r = Enter(); r != CUDA_SUCCESS) return r;
  if (!ValidDevice(device)) return BadDevice(device);
  Driver& d = Driver::Get();
  absl::MutexLock lock(&d.mu);
  d.primary[device]->flags = flags;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext context) {
  if (CUresult r = Enter(); r != CUDA_SUCCESS) return r;
  if (context == nullptr) return Fail(CUDA_ERROR_INVALID_CONTEXT, "null context");
  Driver& d = Driver::Get();
  bool known = false;
  for (const auto& p : d.primary) known = known || p.get() == context;
  if (!known) return Fail(CUDA_ERROR_INVALID_CONTEXT, "not a context of this driver");
  {
    absl::MutexLock lock(&d.mu);
    if (context->retains == 0) {
      return Fail(CUDA_ERROR_INVALID_CONTEXT,
                  absl::StrCat("device ", context->device, "'s primary context is not retained"));
    }
  }
  ContextStack().push_back(context);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext* context) {
  if (CUresult r = Enter(); r != CUDA_SUCCESS) return r;
  std::vector<CUctx_st*>& stack = ContextStack();
  if (stack.empty()) return Fail(CUDA_ERROR_INVALID_CONTEXT, "the context stack is empty");
  if (context != nullptr) *context = stack.back();
  stack.pop_back();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext* context) {
  if (CUresult r = Enter(); r != CUDA_SUCCESS) return r;
  if (context == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null context");
  std::vector<CUctx_st*>& stack = ContextStack();
  *context = stack.empty() ? nullptr : stack.back();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext context) {
  if (CUresult r = Enter(); r != CUDA_SUCCESS) return r;
  std::vector<CUctx_st*>& stack = ContextStack();
  if (context == nullptr) {
    if (!stack.empty()) stack.pop_back();
    return CUDA_SUCCESS;
  }
  if (stack.empty()) {
    stack.push_back(context);
  } else {
    stack.back() = context;
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  if (device == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null device");
  *device = ctx->device;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize() {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  Driver& d = Driver::Get();
  std::vector<std::shared_ptr<ember::vgpu::StreamQueue>> queues = {ctx->legacy};
  {
    absl::MutexLock lock(&d.mu);
    for (CUstream_st* s : ctx->streams) queues.push_back(s->queue);
  }
  for (auto& q : queues) q->Synchronize();
  if (CUresult sticky = ctx->sticky(); sticky != CUDA_SUCCESS) return Fail(sticky, ctx->sticky_message());
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetLimit(size_t* value, CUlimit limit) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  if (value == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null value");
  Driver& d = Driver::Get();
  absl::MutexLock lock(&d.mu);
  auto it = ctx->limits.find(limit);
  if (it != ctx->limits.end()) {
    *value = it->second;
    return CUDA_SUCCESS;
  }
  switch (limit) {
    case CU_LIMIT_STACK_SIZE: *value = 1024; return CUDA_SUCCESS;
    case CU_LIMIT_PRINTF_FIFO_SIZE: *value = 1 << 20; return CUDA_SUCCESS;
    case CU_LIMIT_MALLOC_HEAP_SIZE: *value = 8 << 20; return CUDA_SUCCESS;
    default: return Fail(CUDA_ERROR_UNSUPPORTED_LIMIT, "limit not modelled");
  }
}

CUresult CUDAAPI cuCtxSetLimit(CUlimit limit, size_t value) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  Driver& d = Driver::Get();
  absl::MutexLock lock(&d.mu);
  ctx->limits[limit] = value;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  if (flags != 0) return Fail(CUDA_ERROR_INVALID_VALUE, "flags must be 0");
  Driver& d = Driver::Get();
  bool known = false;
  for (const auto& p : d.primary) known = known || p.get() == peer;
  if (!known) return Fail(CUDA_ERROR_INVALID_CONTEXT, "not a context of this driver");
  if (peer == ctx) return Fail(CUDA_ERROR_INVALID_DEVICE, "a context cannot be its own peer");
  absl::MutexLock lock(&d.mu);
  if (!ctx->peers.insert(peer->device).second) {
    return Fail(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED,
                absl::StrCat("device ", ctx->device, " already has access to device ", peer->device));
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxDisablePeerAccess(CUcontext peer) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  Driver& d = Driver::Get();
  absl::MutexLock lock(&d.mu);
  if (peer == nullptr || ctx->peers.erase(peer->device) == 0) {
    return Fail(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "peer access was not enabled");
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetExportTable(const void** table, const CUuuid* id) {
  (void)table;
  (void)id;
  return Fail(CUDA_ERROR_NOT_SUPPORTED,
              "the virtual GPU has no private export tables: NVIDIA's cudart, cuBLAS and NCCL "
              "cannot run on it (Ember loads the virtual libcublasLt and libnccl instead)");
}

}  // extern "C"
