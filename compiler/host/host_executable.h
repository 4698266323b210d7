// The host backend's compiled form of one program entry: what a host device runs per launch.
// Compile() prepares everything that does not depend on argument values; Run() executes one
// launch on one device's arguments. Today Run() interprets the entry with the reference
// evaluator; the optimizing pipeline (compiler/passes + fused host kernels) replaces the inside
// without changing this interface, and is checked against the evaluator.
#ifndef EMBER_COMPILER_HOST_HOST_EXECUTABLE_H_
#define EMBER_COMPILER_HOST_HOST_EXECUTABLE_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/host/evaluator.h"
#include "compiler/ir/module.h"

namespace ember::host {

class HostExecutable {
 public:
  // `entry` belongs to a module that outlives the executable.
  static absl::StatusOr<std::unique_ptr<HostExecutable>> Compile(const ir::Computation& entry);

  // Runs one launch. `options` carries this device's replica/partition ids and the collective
  // hooks of its launch group. Thread-safe: launches on several devices run concurrently.
  absl::StatusOr<std::vector<EvalValue>> Run(std::vector<EvalValue> arguments,
                                             const EvalOptions& options) const;

 private:
  explicit HostExecutable(const ir::Computation& entry) : entry_(entry) {}
  const ir::Computation& entry_;
};

}  // namespace ember::host

#endif  // EMBER_COMPILER_HOST_HOST_EXECUTABLE_H_
