// The host backend's compiled form of one program entry: what a host device runs per launch.
// Compile() prepares everything that does not depend on argument values; Run() executes one
// launch on one device's arguments.
//
// Two backends: kCompiled (the default) plans kernels with the fusion plan (compiler/passes),
// schedules them for a low arena peak, assigns buffers in one arena per run, and runs fused loop /
// reduction kernels, Eigen dots and im2col + GEMM convolutions
// (fast_kernels.h); every other instruction (control flow, sort, scatter, gather, collectives,
// custom calls, fft, types the fast kernels lack, ...) runs through the reference evaluator's op
// table with the launch's EvalOptions. kEvaluator interprets the whole entry with the reference
// evaluator (EMBER_FLAGS=--host_backend=evaluator).
#ifndef EMBER_COMPILER_HOST_HOST_EXECUTABLE_H_
#define EMBER_COMPILER_HOST_HOST_EXECUTABLE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/ir/module.h"
#include "compiler/passes/buffer_assignment.h"
#include "compiler/passes/fusion_plan.h"

namespace ember::host {

enum class HostBackend { kCompiled, kEvaluator };

class HostExecutable {
 public:
  // `entry` belongs to a module that outlives the executable. `donations`: parameters the caller
  // may donate and the results that could take their memory (see result_aliases()).
  static absl::StatusOr<std::unique_ptr<HostExecutable>> Compile(
      const ir::Computation& entry, HostBackend backend = HostBackend::kCompiled,
      absl::Span<const passes::IoAlias> donations = {});
  ~HostExecutable();

  // Runs one launch. `options` carries this device's replica/partition ids and the collective
  // hooks of its launch group. Thread-safe: launches on several devices run concurrently.
  absl::StatusOr<std::vector<eval::EvalValue>> Run(std::vector<eval::EvalValue> arguments,
                                             const eval::EvalOptions& options) const;

  // Runs one launch on caller-owned host memory: `arguments[i]` holds parameter i and
  // `results[i]` receives result i, each dense in the entry's type (layout included) and
  // `result_bytes[i]` long. The compiled backend reads parameters in place and writes results
  // straight into `results` (no copies); the evaluator backend copies in and out. Result memory
  // must not overlap argument memory, except that result r may be the memory of parameter
  // result_aliases()[r] (a donated argument the caller no longer reads).
  absl::Status RunInPlace(absl::Span<const void* const> arguments,
                          absl::Span<void* const> results,
                          absl::Span<const uint64_t> result_bytes,
                          const eval::EvalOptions& options) const;

  // The backend that runs (kEvaluator also when the entry needs it: e.g. regions that read the
  // entry's values, or non-array parameters).
  HostBackend backend() const;
  // For dumps; empty for the evaluator backend.
  std::string FusionPlanDot() const;
  std::string CostReport() const;
  std::string BufferAssignmentReport() const;
  // Per result: the parameter whose memory RunInPlace may be given as the result's memory, or -1.
  // The compiled backend lists what buffer assignment found safe in its kernel order; the
  // evaluator backend reads all arguments before it writes any result, so every donation of the
  // result's size is safe there.
  const std::vector<int>& result_aliases() const { return result_aliases_; }
  // Bytes of the per-run arena of temporaries (0 for the evaluator backend).
  int64_t arena_bytes() const;
  // Kernel count of the plan (0 for the evaluator backend).
  int64_t kernel_count() const;
  // The fusion plan the compiled backend runs; null for the evaluator backend.
  const passes::FusionPlan* fusion_plan() const;

  struct Compiled;

 private:
  explicit HostExecutable(const ir::Computation& entry);
  // The compiled backend over raw parameter and result memory.
  absl::Status RunCompiled(absl::Span<const uint8_t* const> params,
                           absl::Span<uint8_t* const> results, const eval::EvalOptions& options) const;
  absl::StatusOr<std::vector<eval::EvalValue>> RunEvaluator(std::vector<eval::EvalValue> arguments,
                                                      const eval::EvalOptions& options) const;
  const ir::Computation& entry_;
  std::unique_ptr<Compiled> compiled_;  // null: the evaluator runs the entry
  std::vector<int> result_aliases_;
};

}  // namespace ember::host

#endif  // EMBER_COMPILER_HOST_HOST_EXECUTABLE_H_
