// Runs an executable of the host backends at once on the calling thread, with its buffers in
// host memory: how tests and tools run a program next to the reference evaluator without a
// device. (Devices run executables through the runtime.)
#ifndef EMBER_COMPILER_HOST_HOST_RUNNER_H_
#define EMBER_COMPILER_HOST_HOST_RUNNER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/backend/executable.h"
#include "compiler/evaluator/eval_value.h"

namespace ember::host {

// `arguments[i]` is parameter i (an array of the entry's parameter type). Returns the results.
absl::StatusOr<std::vector<eval::EvalValue>> RunOnHost(const backend::Executable& executable,
                                                       std::vector<eval::EvalValue> arguments);

// On caller-owned memory: `arguments[i]` holds parameter i and `results[r]` receives result r,
// each dense in the entry's type and `result_bytes[r]` long. Result memory must not overlap
// argument memory, except that result r may be the memory of parameter
// layout().result_aliases[r] (a donated argument the caller no longer reads).
absl::Status RunOnHostInPlace(const backend::Executable& executable,
                              absl::Span<const void* const> arguments,
                              absl::Span<void* const> results,
                              absl::Span<const uint64_t> result_bytes);

}  // namespace ember::host

#endif  // EMBER_COMPILER_HOST_HOST_RUNNER_H_
