// Test helpers of the host backends: compile an entry with the "host" backend (compiled kernels)
// or the "evaluator" backend, and run the executable at once on the host runner, to compare the
// two on the same inputs.
#ifndef EMBER_TESTS_COMPILER_HOST_HOST_TEST_UTIL_H_
#define EMBER_TESTS_COMPILER_HOST_HOST_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/backend/executable.h"
#include "compiler/evaluator/eval_value.h"
#include "compiler/host/host_backend.h"
#include "compiler/host/host_runner.h"

namespace ember::host::testing {

enum class HostBackend { kCompiled, kEvaluator };

class CompiledEntry {
 public:
  explicit CompiledEntry(std::unique_ptr<backend::Executable> executable)
      : executable_(std::move(executable)) {}
  const backend::Executable& executable() const { return *executable_; }
  // kCompiled when the host backend planned kernels (it falls back to the evaluator for entries
  // its kernels cannot take; the fusion plan is then empty).
  HostBackend backend() const {
    return executable_->reports().fusion_plan_dot.empty() ? HostBackend::kEvaluator
                                                          : HostBackend::kCompiled;
  }
  int64_t kernel_count() const { return executable_->reports().kernel_count; }
  const std::string& cost_report() const { return executable_->reports().cost_report; }
  absl::StatusOr<std::vector<eval::EvalValue>> Run(std::vector<eval::EvalValue> args) const {
    return RunOnHost(*executable_, std::move(args));
  }
  absl::Status RunInPlace(absl::Span<const void* const> args, absl::Span<void* const> results,
                          absl::Span<const uint64_t> sizes) const {
    return RunOnHostInPlace(*executable_, args, results, sizes);
  }

 private:
  std::unique_ptr<backend::Executable> executable_;
};

inline absl::StatusOr<std::unique_ptr<CompiledEntry>> Compile(
    const ir::Computation& entry, HostBackend backend = HostBackend::kCompiled) {
  std::unique_ptr<backend::Backend> b =
      backend == HostBackend::kCompiled ? CreateHostBackend() : CreateEvaluatorBackend();
  absl::StatusOr<std::unique_ptr<backend::Executable>> executable = b->Compile(entry, {}, CompilerOptions{});
  if (!executable.ok()) return executable.status();
  return std::make_unique<CompiledEntry>(*std::move(executable));
}

}  // namespace ember::host::testing

#endif  // EMBER_TESTS_COMPILER_HOST_HOST_TEST_UTIL_H_
