// CollectiveHooks over a collectives::Communicator: the evaluator's collective ops, run by one
// device of a multi-device launch. This is where program knowledge meets the transport: the
// StableHLO grouping rules (cross_replica, cross_partition, cross_replica_and_partition,
// flattened_ids) pick the participants, shapes are cut into the equal contiguous blocks the
// Communicator moves, and all_reduce / reduce_scatter reduce with the op's region.
#ifndef EMBER_COMPILER_HOST_COLLECTIVE_HOOKS_H_
#define EMBER_COMPILER_HOST_COLLECTIVE_HOOKS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "collectives/communicator.h"
#include "compiler/evaluator/evaluator.h"

namespace ember::host {

// The devices of one launch: device_ids[r * num_partitions + p] is the global id of replica r,
// partition p.
struct LaunchTopology {
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
  std::vector<int64_t> device_ids;
};

// Joins the clique of one collective execution as `rank`.
using JoinFn = std::function<absl::StatusOr<std::unique_ptr<collectives::Communicator>>(
    const collectives::CliqueKey& key, int rank)>;

// One device's hooks for one launch (not shared between devices: it counts the collectives
// this device has run, so the n-th execution of an op meets the n-th execution on its peers).
class CommunicatorHooks final : public eval::CollectiveHooks {
 public:
  CommunicatorHooks(JoinFn join, uint64_t run_id, std::shared_ptr<const LaunchTopology> topology,
                    int64_t replica_id, int64_t partition_id);

  absl::StatusOr<std::vector<eval::EvalValue>> Run(const ir::Instruction& op,
                                             std::vector<eval::EvalValue> operands) override;

  // This device's EvalOptions with these hooks.
  eval::EvalOptions Options() ;

 private:
  JoinFn join_;
  uint64_t run_id_;
  std::shared_ptr<const LaunchTopology> topology_;
  int64_t replica_id_;
  int64_t partition_id_;
  absl::flat_hash_map<const ir::Instruction*, int64_t> occurrences_;
};

// The process groups of a collective op per the StableHLO spec, as lists of flattened device
// indices (r * num_partitions + p); exposed for tests.
absl::StatusOr<std::vector<std::vector<int64_t>>> CollectiveProcessGroups(
    const ir::Instruction& op, int64_t num_replicas, int64_t num_partitions);

}  // namespace ember::host

#endif  // EMBER_COMPILER_HOST_COLLECTIVE_HOOKS_H_
