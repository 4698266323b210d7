#include "compiler/host/host_executable.h"

#include <utility>

namespace ember::host {

absl::StatusOr<std::unique_ptr<HostExecutable>> HostExecutable::Compile(
    const ir::Computation& entry) {
  return std::unique_ptr<HostExecutable>(new HostExecutable(entry));
}

absl::StatusOr<std::vector<EvalValue>> HostExecutable::Run(std::vector<EvalValue> arguments,
                                                           const EvalOptions& options) const {
  // The evaluator keeps per-run state (frames, plans), so each launch gets its own.
  Evaluator evaluator(options);
  return evaluator.Run(entry_, std::move(arguments));
}

}  // namespace ember::host
