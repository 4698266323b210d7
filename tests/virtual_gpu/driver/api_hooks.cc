// The exports declared in virtual_gpu_hooks.h.
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "tests/virtual_gpu/driver/driver_state.h"
#include "tests/virtual_gpu/driver/errors.h"
#include "tests/virtual_gpu/driver/virtual_gpu_hooks.h"

using ember::vgpu::Allocation;
using ember::vgpu::Driver;
using ember::vgpu::Fail;

extern "C" {

int ember_vgpu_live_handles(void) {
  Driver& d = Driver::Get();
  absl::MutexLock lock(&d.mu);
  int live = static_cast<int>(d.streams.size() + d.events.size() + d.modules.size());
  live += static_cast<int>(d.memory.LiveCount(Allocation::Kind::kDevice));
  live += static_cast<int>(d.memory.LiveCount(Allocation::Kind::kPinnedHost));
  live += static_cast<int>(d.memory.LiveCount(Allocation::Kind::kRegisteredHost));
  for (const auto& ctx : d.primary) live += ctx->retains;
  return live + d.leaked_at_release;
}

void ember_vgpu_fail_next_allocations(int count) {
  Driver& d = Driver::Get();
  absl::MutexLock lock(&d.mu);
  d.fail_allocations = count;
}

size_t ember_vgpu_last_fault(int device, char* buffer, size_t capacity) {
  Driver& d = Driver::Get();
  if (device < 0 || device >= d.device_count()) return 0;
  const std::string message = d.primary[device]->sticky_message();
  if (buffer != nullptr && capacity > 0) std::snprintf(buffer, capacity, "%s", message.c_str());
  return message.size();
}

void ember_vgpu_statistics(uint64_t* warp_instructions, uint64_t* thread_instructions,
                           uint64_t* launches, uint64_t* nanoseconds) {
  Driver& d = Driver::Get();
  if (warp_instructions) *warp_instructions = d.warp_instructions.load();
  if (thread_instructions) *thread_instructions = d.thread_instructions.load();
  if (launches) *launches = d.launches.load();
  if (nanoseconds) *nanoseconds = d.nanoseconds_in_kernels.load();
}

void ember_vgpu_set_instruction_budget(uint64_t warp_instructions) {
  Driver& d = Driver::Get();
  absl::MutexLock lock(&d.mu);
  d.launch.instruction_budget = warp_instructions != 0 ? warp_instructions : d.default_budget;
}

void ember_vgpu_set_reverse_order(int reverse) {
  Driver& d = Driver::Get();
  absl::MutexLock lock(&d.mu);
  d.launch.reverse_order = reverse != 0;
}

CUresult ember_vgpu_stream_enqueue(CUstream stream, void (*work)(void* arg, int run), void* arg) {
  CUctx_st* ctx = nullptr;
  if (stream != nullptr && stream != CU_STREAM_LEGACY) {
    // A library launches on the stream's own device whatever context is current (NCCL switches
    // devices itself at ncclGroupEnd).
    if (CUresult r = ember::vgpu::Enter(); r != CUDA_SUCCESS) return r;
    if (!ember::vgpu::ValidStream(stream)) return Fail(CUDA_ERROR_INVALID_HANDLE, "not a live stream");
    ctx = stream->ctx;
    if (CUresult sticky = ctx->sticky(); sticky != CUDA_SUCCESS) return Fail(sticky, ctx->sticky_message());
  } else if (CUresult r = ember::vgpu::CurrentContext(&ctx); r != CUDA_SUCCESS) {
    return r;
  }
  if (work == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null work");
  ember::vgpu::EnqueueWork(
      ctx, stream, [ctx, work, arg] { work(arg, ctx->sticky() == CUDA_SUCCESS ? 1 : 0); },
      /*always=*/true);
  return CUDA_SUCCESS;
}

CUresult ember_vgpu_stream_device(CUstream stream, int* device) {
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (stream != nullptr && stream != CU_STREAM_LEGACY) {
    if (CUresult r = ember::vgpu::Enter(); r != CUDA_SUCCESS) return r;
    if (!ember::vgpu::ValidStream(stream)) return Fail(CUDA_ERROR_INVALID_HANDLE, "not a live stream");
    *device = stream->ctx->device;
    return CUDA_SUCCESS;
  }
  CUctx_st* ctx = nullptr;
  if (CUresult r = ember::vgpu::CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  *device = ctx->device;
  return CUDA_SUCCESS;
}

int ember_vgpu_resolve(int device, uint64_t address, uint64_t size, int write, void** host,
                       char* error, size_t capacity) {
  Driver& d = Driver::Get();
  auto fail = [&](const std::string& why) {
    if (error != nullptr && capacity > 0) std::snprintf(error, capacity, "%s", why.c_str());
    return 1;
  };
  absl::StatusOr<std::shared_ptr<Allocation>> a = d.memory.FindRange(address, size);
  if (!a.ok()) return fail(std::string(a.status().message()));
  if ((*a)->on_device() && (*a)->device != device) {
    bool peer = false;
    {
      absl::MutexLock lock(&d.mu);
      peer = d.primary[device]->peers.count((*a)->device) != 0;
    }
    if (!peer) {
      return fail(absl::StrCat("it lies in ", (*a)->Describe(), ", and device ", device,
                               " has no peer access to device ", (*a)->device));
    }
  }
  if (write && !(*a)->writable()) return fail(absl::StrCat("write into read-only ", (*a)->Describe()));
  *host = (*a)->host + (address - (*a)->base);
  return 0;
}

void ember_vgpu_fault(int device, CUresult code, const char* message) {
  Driver& d = Driver::Get();
  if (device < 0 || device >= d.device_count()) return;
  std::fprintf(stderr, "ember virtual GPU: device %d: %s: %s\n", device,
               ember::vgpu::ErrorName(code) ? ember::vgpu::ErrorName(code) : "error", message);
  d.primary[device]->SetSticky(code, message);
}

}  // extern "C"
