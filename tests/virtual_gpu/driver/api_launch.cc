// Driver API: cuLaunchKernel and cuLaunchKernelEx. A launch is checked against the device's and
// the kernel's limits when it is made (an error there is not sticky, as on a GPU), its parameters
// are copied, and the kernel runs in the PTX interpreter when the stream reaches it. A fault
// there becomes the context's sticky error, with a message naming the kernel, line, thread and
// address, also printed to stderr the way compute-sanitizer reports.
#include <cuda.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>

#include "absl/strings/str_cat.h"
#include "tests/virtual_gpu/driver/driver_state.h"
#include "tests/virtual_gpu/driver/errors.h"
#include "tests/virtual_gpu/ptx/kernel_launch.h"

using ember::vgpu::Allocation;
using ember::vgpu::CurrentContext;
using ember::vgpu::Driver;
using ember::vgpu::Fail;
namespace ptx = ember::vgpu::ptx;

namespace {

// Global memory as a kernel on `device` sees it: its own allocations, those of peers it was
// given access to, and pinned or registered host memory.
class ContextMemory final : public ptx::GlobalMemory {
 public:
  ContextMemory(int device, std::set<int> peers) : device_(device), peers_(std::move(peers)) {}

  absl::StatusOr<ptx::DeviceRange> Find(uint64_t address) override {
    absl::StatusOr<std::shared_ptr<Allocation>> found = Driver::Get().memory.Find(address);
    if (!found.ok()) return found.status();
    const std::shared_ptr<Allocation>& a = *found;
    if (a->on_device() && a->device != device_ && peers_.count(a->device) == 0) {
      return absl::PermissionDeniedError(absl::StrCat(
          "it lies in ", a->Describe(), ", and device ", device_,
          " has no peer access to device ", a->device, " (cuCtxEnablePeerAccess)"));
    }
    ptx::DeviceRange range;
    range.base = a->base;
    range.size = a->size;
    range.host = a->host;
    range.writable = a->writable();
    range.freed = &a->freed;
    range.keep_alive = a;
    range.description = a->Describe();
    return range;
  }

 private:
  const int device_;
  const std::set<int> peers_;
};

CUresult FaultCode(ptx::FaultKind kind) {
  switch (kind) {
    case ptx::FaultKind::kIllegalAddress: return CUDA_ERROR_ILLEGAL_ADDRESS;
    case ptx::FaultKind::kMisalignedAddress: return CUDA_ERROR_MISALIGNED_ADDRESS;
    case ptx::FaultKind::kIllegalInstruction: return CUDA_ERROR_ILLEGAL_INSTRUCTION;
    case ptx::FaultKind::kTimeout: return CUDA_ERROR_LAUNCH_TIMEOUT;
    default: return CUDA_ERROR_LAUNCH_FAILED;
  }
}

struct LaunchRequest {
  CUfunction f;
  ptx::LaunchDims dims;
  CUstream stream;
  void** params;
  void** extra;
};

CUresult Launch(const LaunchRequest& req, const char* call) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  CUfunction f = req.f;
  if (f == nullptr || f->module == nullptr || !ember::vgpu::ValidModule(f->module)) {
    return Fail(CUDA_ERROR_INVALID_HANDLE, absl::StrCat(call, ": not a live function"));
  }
  if (f->module->ctx != ctx) {
    return Fail(CUDA_ERROR_INVALID_HANDLE,
                absl::StrCat(call, ": '", f->name, "' was loaded in device ", f->module->ctx->device,
                             "'s context, but device ", ctx->device, "'s context is current"));
  }
  if (CUresult r = ember::vgpu::StreamContext(req.stream, ctx, call); r != CUDA_SUCCESS) return r;
  Driver& d = Driver::Get();
  const ember::vgpu::DeviceModel& m = d.model(ctx->device);
  const ptx::KernelProgram& p = *f->program;
  const ptx::LaunchDims& dims = req.dims;
  auto invalid = [&](const std::string& why) {
    return Fail(CUDA_ERROR_INVALID_VALUE, absl::StrCat(call, " of '", f->name, "': ", why));
  };
  for (int i = 0; i < 3; ++i) {
    if (dims.grid[i] == 0 || dims.block[i] == 0) return invalid("a grid or block dimension is 0");
  }
  if (dims.grid[1] > 65535 || dims.grid[2] > 65535 || dims.grid[0] > 2147483647u) {
    return invalid(absl::StrCat("grid (", dims.grid[0], ",", dims.grid[1], ",", dims.grid[2],
                                ") exceeds the device limits (2^31-1, 65535, 65535)"));
  }
  if (dims.block[0] > 1024 || dims.block[1] > 1024 || dims.block[2] > 64) {
    return invalid(absl::StrCat("block (", dims.block[0], ",", dims.block[1], ",", dims.block[2],
                                ") exceeds the per-dimension limits (1024, 1024, 64)"));
  }
  const uint64_t threads = uint64_t{dims.block[0]} * dims.block[1] * dims.block[2];
  if (threads > static_cast<uint64_t>(m.max_threads_per_block)) {
    return invalid(absl::StrCat(threads, " threads per block; the device allows ",
                                m.max_threads_per_block));
  }
  if (p.maxntid[0] > 0 && threads > static_cast<uint64_t>(p.maxntid[0] * p.maxntid[1] * p.maxntid[2])) {
    return invalid(absl::StrCat(threads, " threads per block but the kernel declares .maxntid ",
                                p.maxntid[0], ",", p.maxntid[1], ",", p.maxntid[2]));
  }
  if (p.reqntid[0] > 0 && (dims.block[0] != static_cast<uint32_t>(p.reqntid[0]) ||
                           dims.block[1] != static_cast<uint32_t>(p.reqntid[1]) ||
                           dims.block[2] != static_cast<uint32_t>(p.reqntid[2]))) {
    return invalid(absl::StrCat("the kernel requires blocks of exactly .reqntid ", p.reqntid[0],
                                ",", p.reqntid[1], ",", p.reqntid[2]));
  }
  if (dims.dynamic_shared_bytes > static_cast<uint32_t>(f->max_dynamic_shared.load())) {
    return invalid(absl::StrCat(dims.dynamic_shared_bytes,
                                " bytes of dynamic shared memory; the limit for this kernel is ",
                                f->max_dynamic_shared.load(),
                                " (raise it with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, up "
                                "to the device's opt-in maximum ",
                                m.shared_per_block_optin, ")"));
  }
  if (p.static_shared_bytes + dims.dynamic_shared_bytes > static_cast<uint32_t>(m.shared_per_block_optin)) {
    return Fail(CUDA_ERROR_INVALID_VALUE,
                absl::StrCat(call, " of '", f->name, "': ", p.static_shared_bytes, " static + ",
                             dims.dynamic_shared_bytes, " dynamic bytes of shared memory exceed ",
                             m.shared_per_block_optin));
  }
  // Parameters are copied now, as the driver does.
  std::vector<uint8_t> params(p.param_bytes, 0);
  if (req.params != nullptr && req.extra != nullptr) {
    return invalid("both kernelParams and extra are given");
  }
  if (req.params != nullptr) {
    for (size_t i = 0; i < p.params.size(); ++i) {
      if (req.params[i] == nullptr) return invalid(absl::StrCat("kernelParams[", i, "] is null"));
      std::memcpy(params.data() + p.params[i].offset, req.params[i], p.params[i].size);
    }
  } else if (req.extra != nullptr) {
    const void* buffer = nullptr;
    size_t size = 0;
    for (void** e = req.extra; *e != CU_LAUNCH_PARAM_END; e += 2) {
      if (*e == CU_LAUNCH_PARAM_BUFFER_POINTER) buffer = e[1];
      else if (*e == CU_LAUNCH_PARAM_BUFFER_SIZE) size = *static_cast<size_t*>(e[1]);
      else return invalid("unknown entry in extra");
    }
    if (buffer == nullptr || size < p.param_bytes) {
      return invalid(absl::StrCat("extra gives ", size, " parameter bytes; the kernel takes ", p.param_bytes));
    }
    std::memcpy(params.data(), buffer, p.param_bytes);
  } else if (!p.params.empty()) {
    return invalid(absl::StrCat("the kernel takes ", p.params.size(), " parameters but none are given"));
  }
  std::set<int> peers;
  ptx::LaunchOptions options;
  {
    absl::MutexLock lock(&d.mu);
    peers = ctx->peers;
    options.instruction_budget = d.launch.instruction_budget;
    options.reverse_warp_order = d.launch.reverse_order;
    options.check_shared_races = d.launch.check_races;
    options.check_shared_poison = d.launch.check_poison;
  }
  options.sm_count = static_cast<uint32_t>(m.sm_count);
  std::shared_ptr<const ptx::KernelProgram> program = f->program;
  std::vector<uint64_t> constants = f->constants;
  const int device = ctx->device;
  ember::vgpu::EnqueueWork(ctx, req.stream, [ctx, program, constants = std::move(constants),
                                             params = std::move(params), dims, options, device,
                                             peers = std::move(peers)]() mutable {
    Driver& driver = Driver::Get();
    ContextMemory memory(device, std::move(peers));
    const auto start = std::chrono::steady_clock::now();
    ptx::LaunchResult result =
        ptx::RunKernel(*program, std::move(constants), std::move(params), dims, memory, options);
    driver.nanoseconds_in_kernels += static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
    driver.warp_instructions += result.warp_instructions;
    driver.thread_instructions += result.thread_instructions;
    driver.launches += 1;
    if (result.fault != ptx::FaultKind::kNone) {
      const CUresult code = FaultCode(result.fault);
      std::fprintf(stderr, "ember virtual GPU: device %d: %s: %s\n", device,
                   ember::vgpu::ErrorName(code), result.message.c_str());
      ctx->SetSticky(code, result.message);
    }
  });
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int grid_x, unsigned int grid_y,
                                unsigned int grid_z, unsigned int block_x, unsigned int block_y,
                                unsigned int block_z, unsigned int shared_bytes, CUstream stream,
                                void** params, void** extra) {
  LaunchRequest req;
  req.f = f;
  req.dims.grid[0] = grid_x;
  req.dims.grid[1] = grid_y;
  req.dims.grid[2] = grid_z;
  req.dims.block[0] = block_x;
  req.dims.block[1] = block_y;
  req.dims.block[2] = block_z;
  req.dims.dynamic_shared_bytes = shared_bytes;
  req.stream = stream;
  req.params = params;
  req.extra = extra;
  return Launch(req, "cuLaunchKernel");
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** params,
                                  void** extra) {
  if (CUresult r = ember::vgpu::Enter(); r != CUDA_SUCCESS) return r;
  if (config == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "cuLaunchKernelEx: null config");
  for (unsigned int i = 0; i < config->numAttrs; ++i) {
    const CUlaunchAttribute& a = config->attrs[i];
    switch (a.id) {
      case CU_LAUNCH_ATTRIBUTE_PRIORITY:
        break;
      case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
        if (a.value.cooperative != 0) {
          return Fail(CUDA_ERROR_NOT_SUPPORTED, "cooperative launches are not modelled by the virtual GPU");
        }
        break;
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
        if (a.value.clusterDim.x * a.value.clusterDim.y * a.value.clusterDim.z > 1) {
          return Fail(CUDA_ERROR_NOT_SUPPORTED, "thread block clusters are not modelled by the virtual GPU");
        }
        break;
      default:
        return Fail(CUDA_ERROR_NOT_SUPPORTED,
                    absl::StrCat("launch attribute ", static_cast<int>(a.id),
                                 " is not modelled by the virtual GPU"));
    }
  }
  LaunchRequest req;
  req.f = f;
  req.dims.grid[0] = config->gridDimX;
  req.dims.grid[1] = config->gridDimY;
  req.dims.grid[2] = config->gridDimZ;
  req.dims.block[0] = config->blockDimX;
  req.dims.block[1] = config->blockDimY;
  req.dims.block[2] = config->blockDimZ;
  req.dims.dynamic_shared_bytes = config->sharedMemBytes;
  req.stream = config->hStream;
  req.params = params;
  req.extra = extra;
  return Launch(req, "cuLaunchKernelEx");
}

}  // extern "C"
