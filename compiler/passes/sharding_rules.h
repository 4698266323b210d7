// Per-op sharding rules for sharding propagation (sharding_propagation.cc): how the dimensions of
// an op's operands and results correspond, as factors (Shardy's model). A factor is one index
// space the op loops over; each tensor dimension is the product of zero or more factors, major
// first (a reshape merges or splits them). A mesh axis that splits a factor in one tensor can
// split it in every tensor that has the factor. Dimensions with no factor (a sort dimension, a
// sliced dimension, a broadcast's size-1 operand dimension) pass nothing on.
#ifndef EMBER_COMPILER_PASSES_SHARDING_RULES_H_
#define EMBER_COMPILER_PASSES_SHARDING_RULES_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/mesh.h"
#include "compiler/ir/module.h"

namespace ember::passes {

struct ShardingRule {
  // Per factor: its size, and whether the op sums over it (a dot's contracting dimensions, a
  // reduce's reduced ones): such a factor appears in operands only, and a result computed from
  // operands split along it is partial (unreduced) over those axes.
  std::vector<int64_t> factor_sizes;
  std::vector<bool> reduction;
  // Per factor: the elements beyond its block a device's block of the result reads from the
  // blocks before and after it ({0, 0} for most). A convolution's spatial dimension at stride 1
  // reads a window around each element: split, each device needs halos of its neighbours'
  // blocks, which the partitioner exchanges (collective-permute).
  std::vector<std::pair<int64_t, int64_t>> halo;
  // Per factor: for an operand dimension a gather or scatter indexes (one element per index,
  // the index's component `index_component` selecting it), that component; -1 for others.
  // Split, each device looks its own block up with the indices made local (a gather masks the
  // rows other blocks hold, leaving its result a partial sum; a scatter's other rows fall out
  // of bounds and are skipped).
  std::vector<int> index_component;
  // Per operand and per result, per dimension: its factors, major first. Operands and results
  // that are not arrays (tokens, tuples) have no dimensions here.
  std::vector<std::vector<std::vector<int>>> operands;
  std::vector<std::vector<std::vector<int>>> results;

  // A new factor of `size` (>1; size-1 dimensions never carry a split); returns its index.
  int AddFactor(int64_t size, bool is_reduction = false);
  // A factor whose blocks read `lo` elements before them and `hi` after them.
  int AddHaloFactor(int64_t size, int64_t lo, int64_t hi);
};

// The rule of `inst`; nullopt when there is none (the op's results are then replicated and its
// operands get nothing from it). Ops with regions of their own (while, if, case, call, manual
// computations) are tied to their regions by the propagation pass itself, not here. Errors name
// the op (malformed dimension attributes).
absl::StatusOr<std::optional<ShardingRule>> RuleOf(const ir::Instruction& inst);

// The rule of a collective in the body of a manual computation (shard_map) that leaves mesh
// axes free: its groups are devices that differ only in manual axes, so blocks along the free
// axes line up in every group, and the dimensions it does not gather, scatter or exchange keep
// their free-axis splits (all-reduce and collective-permute keep all of them). nullopt for
// other ops and forms.
absl::StatusOr<std::optional<ShardingRule>> ManualCollectiveRule(const ir::Instruction& inst);

// Devices along mesh axis (or sub-axis) `a` of `mesh` (1 for an axis not in it).
int64_t AxisSize(const ir::Mesh& mesh, const ir::MeshAxisRef& a);

// The axes of `axes` (splitting a dimension made of `factors`, major first) that split factor
// `f`: axes fill the dimension's factors in order, each while it divides what is left of the
// factor; an axis that straddles two factors ends the projection.
std::vector<ir::MeshAxisRef> ProjectOntoFactor(const std::vector<ir::MeshAxisRef>& axes,
                                               const std::vector<int>& factors,
                                               const ShardingRule& rule, int f,
                                               const ir::Mesh& mesh);

}  // namespace ember::passes

#endif  // EMBER_COMPILER_PASSES_SHARDING_RULES_H_
