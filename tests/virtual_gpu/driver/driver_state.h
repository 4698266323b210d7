// The virtual driver's state: devices, primary contexts (each with its legacy default stream and
// its sticky fault), streams, events, modules and functions (the structs behind cuda.h's opaque
// handles), the unified address space, and the per-thread context stack. One Driver per process.
#ifndef EMBER_TESTS_VIRTUAL_GPU_DRIVER_DRIVER_STATE_H_
#define EMBER_TESTS_VIRTUAL_GPU_DRIVER_DRIVER_STATE_H_

#include <cuda.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "tests/virtual_gpu/driver/address_space.h"
#include "tests/virtual_gpu/driver/device_model.h"
#include "tests/virtual_gpu/driver/module_image.h"
#include "tests/virtual_gpu/driver/stream_queue.h"

struct CUctx_st {
  int device = 0;
  int retains = 0;       // guarded by Driver::mu
  unsigned flags = 0;    // cuDevicePrimaryCtxSetFlags
  std::shared_ptr<ember::vgpu::StreamQueue> legacy;  // the NULL stream; set while retained
  std::set<CUstream_st*> streams;                    // guarded by Driver::mu
  std::set<int> peers;                               // guarded by Driver::mu
  std::map<int, size_t> limits;                      // guarded by Driver::mu

  // The first fault of a kernel or device copy: every later call in this context returns it.
  void SetSticky(CUresult code, const std::string& message);
  CUresult sticky() const;
  std::string sticky_message() const;
  void ClearSticky();

 private:
  mutable absl::Mutex sticky_mu_;
  CUresult sticky_ ABSL_GUARDED_BY(sticky_mu_) = CUDA_SUCCESS;
  std::string sticky_message_ ABSL_GUARDED_BY(sticky_mu_);
};

struct CUstream_st {
  CUctx_st* ctx = nullptr;
  unsigned flags = 0;
  int priority = 0;
  std::shared_ptr<ember::vgpu::StreamQueue> queue;
  bool blocking() const { return (flags & CU_STREAM_NON_BLOCKING) == 0; }
};

namespace ember::vgpu {
struct EventState {
  absl::Mutex mu;
  uint64_t recorded ABSL_GUARDED_BY(mu) = 0;
  uint64_t completed ABSL_GUARDED_BY(mu) = 0;
  std::chrono::steady_clock::time_point time ABSL_GUARDED_BY(mu);
};
}  // namespace ember::vgpu

struct CUevent_st {
  CUctx_st* ctx = nullptr;
  unsigned flags = 0;
  std::shared_ptr<ember::vgpu::EventState> state = std::make_shared<ember::vgpu::EventState>();
};

struct CUfunc_st;
struct CUmod_st {
  CUctx_st* ctx = nullptr;
  std::shared_ptr<const ember::vgpu::ModuleImage> image;
  std::map<std::string, std::shared_ptr<ember::vgpu::Allocation>> globals;
  std::map<std::string, std::unique_ptr<CUfunc_st>> functions;  // guarded by Driver::mu
};

struct CUfunc_st {
  CUmod_st* module = nullptr;
  std::string name;
  std::shared_ptr<const ember::vgpu::ptx::KernelProgram> program;
  std::vector<uint64_t> constants;  // the program's constant pool with module addresses patched
  std::atomic<int> max_dynamic_shared{0};
  std::atomic<int> carveout{-1};
};

namespace ember::vgpu {

struct LaunchSettings {
  uint64_t instruction_budget = uint64_t{1} << 34;
  bool reverse_order = false;
  bool check_races = true;
  bool check_poison = true;
};

class Driver {
 public:
  static Driver& Get();

  absl::Mutex mu;
  bool initialized ABSL_GUARDED_BY(mu) = false;
  MachineConfig config;  // fixed by cuInit
  std::vector<std::unique_ptr<CUctx_st>> primary;  // one per device, fixed by cuInit
  AddressSpace memory;
  std::set<CUstream_st*> streams ABSL_GUARDED_BY(mu);
  std::set<CUevent_st*> events ABSL_GUARDED_BY(mu);
  std::set<CUmod_st*> modules ABSL_GUARDED_BY(mu);
  std::map<uintptr_t, std::shared_ptr<Allocation>> host_allocations ABSL_GUARDED_BY(mu);
  int fail_allocations ABSL_GUARDED_BY(mu) = 0;
  int leaked_at_release ABSL_GUARDED_BY(mu) = 0;  // resources a context release had to free
  LaunchSettings launch ABSL_GUARDED_BY(mu);
  uint64_t default_budget ABSL_GUARDED_BY(mu) = uint64_t{1} << 34;
  std::atomic<uint64_t> warp_instructions{0};
  std::atomic<uint64_t> thread_instructions{0};
  std::atomic<uint64_t> launches{0};
  std::atomic<uint64_t> nanoseconds_in_kernels{0};

  int device_count() const { return static_cast<int>(primary.size()); }
  const DeviceModel& model(int device) const { return config.devices[device]; }
  bool IsInitialized() {
    absl::MutexLock lock(&mu);
    return initialized;
  }
};

// ---- per-thread state
std::vector<CUctx_st*>& ContextStack();
bool& InHostFunction();

// ---- common checks; each returns CUDA_SUCCESS or an error with its detail recorded.
// The driver is initialized and the caller is not a host function.
CUresult Enter();
// Enter(), then the current context (not faulted) in *ctx.
CUresult CurrentContext(CUctx_st** ctx);
// The context of a stream argument: null means the current context's legacy stream.
CUresult StreamContext(CUstream stream, CUctx_st* current, const char* call);
bool ValidStream(CUstream stream);
bool ValidEvent(CUevent event);
bool ValidModule(CUmodule module);
bool ValidDevice(CUdevice device);

// Enqueues device work on `stream` (null: the context's legacy stream) with the implicit
// synchronization of the legacy stream; `op` is skipped once the context has faulted unless
// `always` (event records and waits must still complete so nothing hangs).
uint64_t EnqueueWork(CUctx_st* ctx, CUstream stream, std::function<void()> op, bool always = false);
// The queue `stream` names (the legacy one for null).
std::shared_ptr<StreamQueue> QueueOf(CUctx_st* ctx, CUstream stream);

// Creates the legacy stream when a primary context becomes active; tears a context down.
void ActivateContext(CUctx_st* ctx) ABSL_EXCLUSIVE_LOCKS_REQUIRED(Driver::Get().mu);
void DestroyContextResources(CUctx_st* ctx, bool count_leaks);

}  // namespace ember::vgpu

#endif  // EMBER_TESTS_VIRTUAL_GPU_DRIVER_DRIVER_STATE_H_
