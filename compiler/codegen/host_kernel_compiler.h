// The host target of the code generator: loop kernels emitted as LLVM IR (loop_emitter.h),
// optimized and vectorized for this machine's CPU (its vector width) and compiled into native
// functions, linked by the process-wide JIT (host_jit.h). One compiler per executable:
// identical kernels share one function (the executable's in-memory kernel cache), and the
// kernels added are compiled together, in a few modules on parallel threads. This header has no
// LLVM types; without LLVM in the build (EMBER_LLVM=OFF) every kernel is refused.
#ifndef EMBER_COMPILER_CODEGEN_HOST_KERNEL_COMPILER_H_
#define EMBER_COMPILER_CODEGEN_HOST_KERNEL_COMPILER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "compiler/passes/fusion_plan.h"

namespace ember::codegen {

// Computes kernel outputs elements [begin, end) (row-major) from `inputs` (kernel.inputs order)
// into `outputs` (kernel.outputs order). For a reduction kernel, [begin, end) are rows: output
// elements of its reduces (reduce_emitter.h).
using HostLoopFn = void (*)(const void* const* inputs, void* const* outputs, int64_t begin,
                            int64_t end);

// A tiered kernel's current code (KernelTier::kTiered, kBackground): its quick code at first
// (none for kBackground), replaced by its optimized code when the background compile has it.
// `optimized_owner` is written before the store that publishes the optimized `fn`; `settled` is
// notified once `fn` will not change again: the optimized code is in, or its compile failed or
// was dropped (the quick code stays; without one, `failure` says why there is no code).
struct TieredCode {
  std::atomic<HostLoopFn> fn{nullptr};
  std::shared_ptr<const void> optimized_owner;
  absl::Status failure;  // written before `settled` is notified
  absl::Notification settled;
};

// Launches of a tiered kernel over at least this many elements wait for its optimized code:
// quick code would cost them more than the rest of the background compile.
inline constexpr int64_t kTieredWaitElements = int64_t{1} << 18;

struct HostLoopKernel {
  HostLoopFn fn = nullptr;            // the code compiled by Compile (a tiered kernel's quick code)
  std::shared_ptr<const void> owner;  // keeps `fn` alive
  std::shared_ptr<TieredCode> tiered;  // a tiered kernel's current code; null for the others

  // The code to run now, for a launch over `elements`: load it once per launch (both tiers
  // compute the same bits). A large launch of a tiered kernel, and any launch of a kernel
  // without quick code, waits for the optimized code. Null only when there is no code at all:
  // Unavailable() says why.
  HostLoopFn code(int64_t elements = 0) const {
    if (tiered == nullptr) return fn;
    if (elements >= kTieredWaitElements || fn == nullptr) tiered->settled.WaitForNotification();
    return tiered->fn.load(std::memory_order_acquire);
  }
  // Why code() is null (after it returned null).
  absl::Status Unavailable() const {
    if (tiered != nullptr && tiered->settled.HasBeenNotified() && !tiered->failure.ok()) {
      return tiered->failure;
    }
    return absl::InternalError("the kernel has no compiled code");
  }
  // Whether code() is the final code (not a tiered kernel's quick code still being replaced).
  bool final_code() const { return tiered == nullptr || tiered->settled.HasBeenNotified(); }
};

// Whether this build has the LLVM code generator.
bool HostCodegenBuilt();

// How a kernel is compiled. kOptimized: the optimization pipeline (vectorized for the host's
// vector width) and the full native code generator. kQuick: neither (scalar loops, LLVM's fast
// instruction selector and register allocator): a fraction of a millisecond instead of several,
// for kernels whose run time is negligible either way (over a few elements, run once a launch).
// kTiered: both. Compile returns with the quick code, and the optimized code, compiled on the
// process's background queue (background_compiler.h), replaces it when ready (HostLoopKernel::
// code). For kernels whose quick code costs little more than a compile while it runs, so that
// a program starts sooner and its later launches run the optimized code. kBackground: only the
// optimized code, compiled in the background, which every launch waits for: kernels whose every
// launch is large (over kTieredWaitElements) would never run quick code. With a persistent cache
// or a dump directory, kTiered and kBackground are kOptimized.
enum class KernelTier { kOptimized, kQuick, kTiered, kBackground };

class HostKernelCompiler {
 public:
  // `cache_dir`: the persistent cache of object code (CompilerOptions::kernel_cache_dir; empty:
  // none). `dump_dir`: where each compiled module's LLVM IR is written, as emitted and as
  // optimized (ember-kernels-<key>.ir-no-opt.ll, .ir-with-opt.ll; CompilerOptions::dump_to;
  // empty: none).
  explicit HostKernelCompiler(std::string cache_dir = "", std::string dump_dir = "");
  ~HostKernelCompiler();
  HostKernelCompiler(const HostKernelCompiler&) = delete;
  HostKernelCompiler& operator=(const HostKernelCompiler&) = delete;

  // Emits `kernel`, a loop or a reduction kernel, or a single scatter, reduce or sort (for a sort:
  // its comparator, sort_emitter.h) (an identical earlier
  // kernel's function is reused), and returns its id; an error (nothing added) when the code
  // generator does not take it.
  absl::StatusOr<int> AddKernel(const passes::Kernel& kernel,
                                KernelTier tier = KernelTier::kOptimized);
  // Optimizes and compiles every kernel added, once.
  absl::Status Compile();
  // After Compile: kernel `id`'s function.
  HostLoopKernel Get(int id) const;

  // Blocks until the background queue has run every task submitted so far, this compiler's
  // among them (a failed one leaves the quick code), so that every Get(id).code() is final.
  void WaitForOptimizedCode() const;

  int kernels() const;         // AddKernel calls that succeeded
  int tiered_kernels() const;      // functions emitted at KernelTier::kTiered
  int background_kernels() const;  // functions emitted at KernelTier::kBackground
  int unique_kernels() const;  // functions emitted
  // Functions another executable had compiled and still holds (compiled_kernel_cache.h): they
  // were not compiled again.
  int reused_kernels() const;
  double compile_ms() const;   // emission, optimization and native code generation
  // Where compile_ms went, each phase summed over the threads that ran it ("emit 0.3, optimize
  // 2.1, codegen 6.0, link 0.9 ms"; cached modules skip optimize and codegen).
  std::string phase_report() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ember::codegen

#endif  // EMBER_COMPILER_CODEGEN_HOST_KERNEL_COMPILER_H_
