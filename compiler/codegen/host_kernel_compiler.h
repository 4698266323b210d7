// The host target of the code generator: loop kernels emitted as LLVM IR (loop_emitter.h),
// optimized and vectorized for this machine's CPU (its vector width) and compiled into native
// functions, linked by the process-wide JIT (host_jit.h). One compiler per executable:
// identical kernels share one function (the executable's in-memory kernel cache), and the
// kernels added are compiled together, in a few modules on parallel threads. This header has no
// LLVM types; without LLVM in the build (EMBER_LLVM=OFF) every kernel is refused.
#ifndef EMBER_COMPILER_CODEGEN_HOST_KERNEL_COMPILER_H_
#define EMBER_COMPILER_CODEGEN_HOST_KERNEL_COMPILER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/passes/fusion_plan.h"

namespace ember::codegen {

// Computes kernel outputs elements [begin, end) (row-major) from `inputs` (kernel.inputs order)
// into `outputs` (kernel.outputs order). For a reduction kernel, [begin, end) are rows: output
// elements of its reduces (reduce_emitter.h).
using HostLoopFn = void (*)(const void* const* inputs, void* const* outputs, int64_t begin,
                            int64_t end);

struct HostLoopKernel {
  HostLoopFn fn = nullptr;
  std::shared_ptr<const void> owner;  // keeps the compiled code alive
};

// Whether this build has the LLVM code generator.
bool HostCodegenBuilt();

// How a kernel is compiled. kOptimized: the optimization pipeline (vectorized for the host's
// vector width) and the full native code generator. kQuick: neither (scalar loops, LLVM's fast
// instruction selector and register allocator): a fraction of a millisecond instead of several,
// for kernels whose run time is negligible either way (over a few elements, run once a launch).
enum class KernelTier { kOptimized, kQuick };

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

  int kernels() const;         // AddKernel calls that succeeded
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
