// Reference evaluation of the process-id and collective ops: replica_id, partition_id,
// all_reduce, all_gather, reduce_scatter, all_to_all, collective_permute, collective_broadcast,
// collective_reduce.
//
// replica_id / partition_id come from EvalOptions. Collectives go through
// EvalOptions::collectives when it is set: the hook receives the instruction and this
// participant's operands and returns this participant's results (it owns grouping, ordering and
// the reduction, running the op's region through an Evaluator if it needs to). Without hooks the
// evaluator runs one process: a collective whose process group (per the spec's cross_replica /
// cross_partition / cross_replica_and_partition / flattened_ids rules, from `replica_groups`,
// `channel_handle` and `use_global_device_ids`) holds only this process is evaluated as a group
// of one: all_reduce, all_gather, reduce_scatter, all_to_all, collective_broadcast and
// collective_reduce (whose root is the group's first process) return their operands; collective_permute returns the operand where a pair sends this process to
// itself, and zeros where no pair targets it. A group of more than one process without hooks is
// an error naming the op.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/evaluator/eval_family_support.h"
#include "compiler/evaluator/evaluator.h"

namespace ember::eval {
namespace {

namespace fs = family_support;

// Size of the process group that contains this process, per the spec's grouping rules.
absl::StatusOr<int64_t> GroupSize(const ir::Instruction& inst, const EvalOptions& o,
                                  bool partition_only_when_channel) {
  EMBER_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> groups,
                         fs::IntRowsAttr(inst, "replica_groups", 0));
  EMBER_ASSIGN_OR_RETURN(bool global_ids, fs::BoolAttr(inst, "use_global_device_ids", false));
  const bool channel = fs::ChannelId(inst) > 0;
  int64_t self = o.replica_id;
  int64_t all = o.num_replicas;
  int64_t multiplier = 1;
  if (channel && partition_only_when_channel) {  // cross_partition
    self = o.partition_id;
    all = o.num_partitions;
  } else if (channel && global_ids) {  // flattened_ids
    self = o.replica_id * o.num_partitions + o.partition_id;
    all = o.num_replicas * o.num_partitions;
  } else if (channel) {  // cross_replica_and_partition
    multiplier = o.num_partitions;
  }
  // Rows padded with -1 (MLIR allows ragged groups that way) do not count.
  for (const std::vector<int64_t>& g : groups) {
    if (std::find(g.begin(), g.end(), self) != g.end()) {
      return static_cast<int64_t>(
                 std::count_if(g.begin(), g.end(), [](int64_t v) { return v >= 0; })) *
             multiplier;
    }
  }
  if (groups.empty() || (groups.size() == 1 && groups[0].empty())) return all * multiplier;
  return fs::OpError(inst, absl::StrCat("process ", self, " is in no replica group"));
}

absl::StatusOr<std::vector<EvalValue>> ViaHooks(const ir::Instruction& inst,
                                                std::vector<EvalValue>& operands,
                                                Evaluator& evaluator) {
  EMBER_ASSIGN_OR_RETURN(std::vector<EvalValue> results,
                         evaluator.options().collectives->Run(inst, std::move(operands)));
  if (results.size() != inst.num_results()) {
    return fs::OpError(inst, absl::StrCat("collective hooks returned ", results.size(),
                                          " values for ", inst.num_results(), " results"));
  }
  return results;
}

// The group-of-one result: the operands themselves (as many as there are results).
absl::StatusOr<std::vector<EvalValue>> Identity(const ir::Instruction& inst,
                                                std::vector<EvalValue>& operands) {
  if (operands.size() < inst.num_results()) {
    return fs::OpError(inst, "fewer operands than results");
  }
  std::vector<EvalValue> results;
  for (size_t i = 0; i < inst.num_results(); ++i) {
    if (operands[i].kind == EvalValue::Kind::kArray) {
      EMBER_ASSIGN_OR_RETURN(ir::Shape shape, fs::ResultShape(inst, i));
      if (shape.dims() != operands[i].array.shape().dims() ||
          shape.element_type() != operands[i].array.element_type()) {
        return fs::OpError(
            inst, absl::StrCat("a group of one maps ", operands[i].array.shape().ToString(),
                               " to itself, "
                               "but the result is ",
                               shape.ToString()));
      }
    }
    results.push_back(std::move(operands[i]));
  }
  return results;
}

template <bool kPartitionOnlyWhenChannel>
absl::StatusOr<std::vector<EvalValue>> EvalGroupCollective(const ir::Instruction& inst,
                                                           std::vector<EvalValue>& operands,
                                                           Evaluator& evaluator) {
  if (evaluator.options().collectives != nullptr) return ViaHooks(inst, operands, evaluator);
  EMBER_ASSIGN_OR_RETURN(int64_t size,
                         GroupSize(inst, evaluator.options(), kPartitionOnlyWhenChannel));
  if (size != 1) {
    return fs::OpError(
        inst, absl::StrCat("a process group of ", size, " needs EvalOptions::collectives"));
  }
  if (inst.opcode() == ir::Opcode::kAllToAll) {
    EMBER_ASSIGN_OR_RETURN(int64_t split_count, fs::IntAttr(inst, "split_count", 1));
    if (split_count != 1) {
      return fs::OpError(inst, absl::StrCat("split_count ", split_count, " in a group of one"));
    }
  }
  return Identity(inst, operands);
}

absl::StatusOr<std::vector<EvalValue>> EvalCollectivePermute(const ir::Instruction& inst,
                                                             std::vector<EvalValue>& operands,
                                                             Evaluator& evaluator) {
  if (evaluator.options().collectives != nullptr) return ViaHooks(inst, operands, evaluator);
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 1));
  EMBER_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> pairs,
                         fs::IntRowsAttr(inst, "source_target_pairs", 2));
  const EvalOptions& o = evaluator.options();
  const int64_t self = fs::ChannelId(inst) > 0 ? o.partition_id : o.replica_id;
  for (const std::vector<int64_t>& pair : pairs) {
    if (pair.size() != 2) return fs::OpError(inst, "source_target_pairs rows must be pairs");
    if (pair[1] != self) continue;
    if (pair[0] != self) {
      return fs::OpError(inst, absl::StrCat("receiving from process ", pair[0],
                                            " needs EvalOptions::collectives"));
    }
    return Identity(inst, operands);
  }
  EMBER_ASSIGN_OR_RETURN(ir::Literal zeros, fs::ZeroResult(inst, 0));
  std::vector<EvalValue> results;
  results.push_back(EvalValue::Array(std::move(zeros)));
  return results;
}

template <bool kPartition>
absl::StatusOr<std::vector<EvalValue>> EvalProcessId(const ir::Instruction& inst,
                                                     std::vector<EvalValue>& operands,
                                                     Evaluator& evaluator) {
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 0));
  const EvalOptions& o = evaluator.options();
  const uint64_t id = static_cast<uint64_t>(kPartition ? o.partition_id : o.replica_id);
  EMBER_ASSIGN_OR_RETURN(ir::Shape shape, fs::ResultShape(inst, 0));
  std::vector<uint64_t> value(static_cast<size_t>(shape.element_count()), id);
  EMBER_ASSIGN_OR_RETURN(ir::Literal literal,
                         fs::LiteralFrom<uint64_t>(shape, absl::MakeConstSpan(value)));
  std::vector<EvalValue> results;
  results.push_back(EvalValue::Array(std::move(literal)));
  return results;
}

}  // namespace

void RegisterCollectiveOps(OpTable& table) {
  table.Register(ir::Opcode::kReplicaId, EvalProcessId<false>);
  table.Register(ir::Opcode::kPartitionId, EvalProcessId<true>);
  table.Register(ir::Opcode::kAllReduce, EvalGroupCollective<false>);
  table.Register(ir::Opcode::kAllGather, EvalGroupCollective<false>);
  table.Register(ir::Opcode::kReduceScatter, EvalGroupCollective<false>);
  table.Register(ir::Opcode::kAllToAll, EvalGroupCollective<true>);
  table.Register(ir::Opcode::kCollectiveBroadcast, EvalGroupCollective<true>);
  table.Register(ir::Opcode::kCollectiveReduce, EvalGroupCollective<false>);
  table.Register(ir::Opcode::kCollectivePermute, EvalCollectivePermute);
}

}  // namespace ember::eval
