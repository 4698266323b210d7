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
#ifndef EMBER_COMPILER_HOST_HOST_BACKEND_H_
#define EMBER_COMPILER_HOST_HOST_BACKEND_H_

#include <memory>

#include "absl/status/status.h"
#include "compiler/backend/backend.h"

namespace ember::host {

std::unique_ptr<backend::Backend> CreateHostBackend();
std::unique_ptr<backend::Backend> CreateEvaluatorBackend();
// Registers both.
absl::Status RegisterHostBackends(backend::BackendRegistry& registry);

}  // namespace ember::host

#endif  // EMBER_COMPILER_HOST_HOST_BACKEND_H_
