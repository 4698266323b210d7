// The host backends: executables for host devices, whose device memory is host memory and whose
// streams are worker threads.
//  - "host": the fusion plan's kernels (compiler/passes), scheduled for a low arena peak, with
//    buffers assigned in one arena per launch, run as fused loop / reduction kernels, row groups,
//    Eigen dots and im2col + GEMM convolutions (fast_kernels.h, fast_conv.h); every other
//    instruction (control flow, sort, scatter, gather, collectives, custom calls, fft, types the
//    kernels lack, ...) runs through the reference evaluator's op table. The cost report says
//    which kernels run where.
//  - "evaluator": the reference evaluator runs the whole entry as it was sent
//    (EMBER_FLAGS=--host_backend=evaluator).
//  - "host_no_llvm": "host" without the LLVM code generator (EMBER_FLAGS=--host_llvm=off), whose
//    loop kernels otherwise run as native code where it covers them (compiler/codegen/).
#ifndef EMBER_COMPILER_HOST_HOST_BACKEND_H_
#define EMBER_COMPILER_HOST_HOST_BACKEND_H_

#include <memory>

#include "absl/status/status.h"
#include "compiler/backend/backend.h"

namespace ember::host {

// `llvm_kernels`: compile the loop kernels the code generator covers (when built with LLVM).
std::unique_ptr<backend::Backend> CreateHostBackend(bool llvm_kernels = true);
std::unique_ptr<backend::Backend> CreateEvaluatorBackend();
// Registers "host", "evaluator" and "host_no_llvm".
absl::Status RegisterHostBackends(backend::BackendRegistry& registry);

}  // namespace ember::host

#endif  // EMBER_COMPILER_HOST_HOST_BACKEND_H_
