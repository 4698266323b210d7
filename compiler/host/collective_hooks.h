// CollectiveHooks over collectives::Communicators: the evaluator's collective ops, run by one
// device of a multi-device launch. This is where program knowledge meets the transport: the
// StableHLO grouping rules (cross_replica, cross_partition, cross_replica_and_partition,
// flattened_ids) pick the participants (the clique), shapes are cut into the equal contiguous
// blocks the Communicator moves, and reductions run as the transport's reduction kind of the op's
// region (legalize-collectives guarantees there is one).
#ifndef EMBER_COMPILER_HOST_COLLECTIVE_HOOKS_H_
#define EMBER_COMPILER_HOST_COLLECTIVE_HOOKS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "collectives/clique_scope.h"
#include "compiler/backend/thunk.h"
#include "compiler/evaluator/evaluator.h"

namespace ember::host {

// One device's hooks for one launch (`launch`: where the device stands, and the launch's
// CliqueScope, through which every device of the launch gets its communicators). Operations run
// at once on the calling thread (the device's stream task running the program), so the transport
// must take host memory (in-process, Gloo).
class CommunicatorHooks final : public eval::CollectiveHooks {
 public:
  explicit CommunicatorHooks(std::shared_ptr<const backend::CollectiveParams> launch);

  absl::StatusOr<std::vector<eval::EvalValue>> Run(const ir::Instruction& op,
                                             std::vector<eval::EvalValue> operands) override;

  // This device's EvalOptions with these hooks.
  eval::EvalOptions Options();

 private:
  std::shared_ptr<const backend::CollectiveParams> launch_;
};

// Runs collective `op` for one device of `launch` on row-major bytes, at once on the calling
// thread: operand i's bytes in inputs[i], result i written to outputs[i] (each sized as its
// value's shape). The evaluator's hooks above and the host backend's CollectiveThunk (which
// passes the run's own buffers, with no copies) both run collectives through it.
absl::Status RunCollective(const ir::Instruction& op, const backend::CollectiveParams& launch,
                           absl::Span<const absl::Span<const uint8_t>> inputs,
                           absl::Span<const absl::Span<uint8_t>> outputs);

// The process groups of a collective op per the StableHLO spec, as lists of flattened device
// indices (r * num_partitions + p); exposed for tests.
absl::StatusOr<std::vector<std::vector<int64_t>>> CollectiveProcessGroups(
    const ir::Instruction& op, int64_t num_replicas, int64_t num_partitions);

}  // namespace ember::host

#endif  // EMBER_COMPILER_HOST_COLLECTIVE_HOOKS_H_
