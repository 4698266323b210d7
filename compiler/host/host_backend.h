// The host backends: executables for host devices, whose device memory is host memory and whose
// streams are worker threads.
//  - "host": the fusion plan's kernels (compiler/passes), scheduled for a low arena peak, with
//    buffers assigned in one arena per launch: loop and reduction kernels (split reductions, row
//    groups), sort comparators, scatters and reduces compiled to native code by the LLVM code
//    generator (compiler/codegen/); Eigen dots and im2col + GEMM convolutions (fast_kernels.h,
//    fast_conv.h); loops and conditionals as compiled regions; collectives, top_k, cumulative
//    scans and dynamic updates natively; whatever else (custom calls, fft, types the code
//    generator lacks, ...) through the reference evaluator's op table. The cost report says
//    which kernels run where.
//  - "evaluator": the reference evaluator runs the whole entry as it was sent
//    (EMBER_FLAGS=--host_backend=evaluator).
#ifndef EMBER_COMPILER_HOST_HOST_BACKEND_H_
#define EMBER_COMPILER_HOST_HOST_BACKEND_H_

#include <memory>

#include "absl/status/status.h"
#include "compiler/backend/backend.h"

namespace ember::host {

std::unique_ptr<backend::Backend> CreateHostBackend();
std::unique_ptr<backend::Backend> CreateEvaluatorBackend();
// Registers "host" and "evaluator".
absl::Status RegisterHostBackends(backend::BackendRegistry& registry);

}  // namespace ember::host

#endif  // EMBER_COMPILER_HOST_HOST_BACKEND_H_
