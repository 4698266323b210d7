// The instructions that move a value between shardings in a per-device program: all-gathers of
// split dimensions, cuts of this device's block (dynamic_slice at offsets looked up by
// partition_id), all-reduces of partial sums and reduce-scatters of those wanted split further,
// and shifts of blocks to neighbouring devices (halos). Shared by spmd-replicate and
// spmd-partition; a value's split is written per dimension as mesh axes, major first (empty:
// whole).
#ifndef EMBER_COMPILER_PASSES_SPMD_BUILDER_H_
#define EMBER_COMPILER_PASSES_SPMD_BUILDER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/module.h"
#include "compiler/ir/sharding.h"

namespace ember::passes {

// Per dimension: the mesh axes splitting it, major first.
using DimSplits = std::vector<std::vector<ir::MeshAxisRef>>;

// A value's split over the program's devices: the sharding and its mesh.
struct Split {
  ir::TensorSharding sharding;
  ir::Mesh mesh;
};

// The split a sharding attribute (sdy.sharding or mhlo.sharding) describes for a value of
// `type`, checked against the program's `num_devices` devices; nullopt when the value is
// replicated. `what` names the argument or result in errors. Unreduced axes are an error
// unless `allow_unreduced`.
absl::StatusOr<std::optional<Split>> ReadSplit(const ir::Module& module, const ir::Attribute* attr,
                                               const ir::ValueType& type, int64_t num_devices,
                                               const std::string& what,
                                               bool allow_unreduced = false);
// The sharding attribute a parameter or result states (sdy.sharding, else mhlo.sharding).
const ir::Attribute* StatedSharding(const ir::AttributeMap& attrs);

// Manual computations (sdy.manual_computation custom calls: shard_map).
bool IsManualComputation(const ir::Instruction& inst);
// A manual computation that `c` runs (in it, its regions or what it calls), or null.
const ir::Instruction* FindManualComputation(const ir::Computation& c);
// Its in_shardings (`name` "in_shardings", one per operand) or out_shardings (one per result).
absl::StatusOr<std::vector<const ir::TensorSharding*>> ShardingList(const ir::Instruction& inst,
                                                                    const char* name, size_t count);
// The split of one of its operands or results (`type`: the global type): over a mesh of
// `num_devices` devices, every axis of which is manual (partially manual computations are not
// supported yet).
absl::StatusOr<Split> ManualSplit(const ir::Module& module, const ir::Instruction& inst,
                                  const ir::TensorSharding& sharding, const ir::ValueType& type,
                                  int64_t num_devices);

// A kSplit sharding over `mesh_of` with `dims` split as given.
ir::TensorSharding ShardingOf(const ir::TensorSharding& mesh_of, const DimSplits& dims);

// What the builders of one pass run share: the channel ids they hand out (any positive id
// selects the flattened-ids grouping; one range for the module, apart from the program's own
// ids) and how many collectives they added.
struct SpmdCounters {
  int64_t next_channel = int64_t{1} << 40;
  int64_t collectives = 0;
};

// Appends to `c` (the entry, or a region of it).
class SpmdBuilder {
 public:
  SpmdBuilder(ir::Computation& c, int64_t num_devices, SpmdCounters& counters)
      : c_(c), num_devices_(num_devices), counters_(counters) {}

  // Devices splitting a dimension over `axes`.
  static absl::StatusOr<int64_t> Count(const ir::Mesh& mesh,
                                       const std::vector<ir::MeshAxisRef>& axes);
  // The per-device type of `global` split as `dims`.
  static absl::StatusOr<ir::ValueType> LocalType(const ir::ValueType& global, const ir::Mesh& mesh,
                                                 const DimSplits& dims);
  absl::StatusOr<ir::ValueType> ShardType(const ir::ValueType& global, const Split& split);

  // `v` all-gathered along `dim` over `axes` (the minor axes of its split there).
  absl::StatusOr<ir::Value*> AllGather(ir::Value* v, const ir::Mesh& mesh, int64_t dim,
                                       const std::vector<ir::MeshAxisRef>& axes,
                                       const ir::Location& loc);
  // This device's block of `v`, which is split as `from`, when split as `to`; every `from`
  // dimension must be a prefix of the `to` one (the cut only splits further).
  absl::StatusOr<ir::Value*> Cut(ir::Value* v, const ir::Mesh& mesh, const DimSplits& from,
                                 const DimSplits& to, const ir::Location& loc);
  // `v` split along `concat` over `axes` (the minor axes of its split there) instead split
  // along `split` over them: one all-to-all, no global value.
  absl::StatusOr<ir::Value*> AllToAll(ir::Value* v, const ir::Mesh& mesh, int64_t split,
                                      int64_t concat, const std::vector<ir::MeshAxisRef>& axes,
                                      const ir::Location& loc);
  // `v` (split as `from`) split as `to`: an axis that moves from the end of one dimension's
  // split to the end of another's moves by all-to-all; then all-gathers of the axes `to` does
  // not keep, and a cut.
  absl::StatusOr<ir::Value*> Reshard(ir::Value* v, const ir::Mesh& mesh, const DimSplits& from,
                                     const DimSplits& to, const ir::Location& loc);
  // The sum (or other reduction of `region`, which the all-reduce takes over) of the partial
  // values `v` of the devices that differ only in `axes`.
  absl::StatusOr<ir::Value*> AllReduce(ir::Value* v, const ir::Mesh& mesh,
                                       const std::vector<ir::MeshAxisRef>& axes,
                                       ir::Computation* region, const ir::Location& loc);

  // The same sum of which this device keeps only its block along `dim`, split further over
  // `axes` (its minor axes there): one reduce_scatter, each device summing its block alone.
  absl::StatusOr<ir::Value*> ReduceScatter(ir::Value* v, const ir::Mesh& mesh, int64_t dim,
                                           const std::vector<ir::MeshAxisRef>& axes,
                                           ir::Computation* region, const ir::Location& loc);

  // `v` of each device sent to the device whose block along a dimension split over `axes` is
  // `step` (+1 or -1) blocks further: one collective_permute. Devices that no block is sent to
  // (the first or last along the axes) get zeros.
  absl::StatusOr<ir::Value*> Shift(ir::Value* v, const ir::Mesh& mesh,
                                   const std::vector<ir::MeshAxisRef>& axes, int step,
                                   const ir::Location& loc);

  // The global value of `shard`: one all_gather per split dimension.
  absl::StatusOr<ir::Value*> Gather(ir::Value* shard, const Split& split, const ir::Location& loc);
  // This device's shard of `global`.
  absl::StatusOr<ir::Value*> Cut(ir::Value* global, const Split& split, const ir::Location& loc);

  // Per partition: its block's index along a dimension split over `axes` (major first).
  absl::StatusOr<std::vector<int64_t>> BlockIndices(const ir::Mesh& mesh,
                                                    const std::vector<ir::MeshAxisRef>& axes) const;
  // The offset (an s64 scalar; a constant where every device has the same) of this device's
  // block of `block` elements along a dimension split over `axes`, counted within its group of
  // `minor` consecutive blocks (the minor part of the split; all of it when `minor` is the
  // split's size).
  absl::StatusOr<ir::Value*> MinorBlockOffset(const ir::Mesh& mesh,
                                              const std::vector<ir::MeshAxisRef>& axes,
                                              int64_t minor, int64_t block,
                                              const ir::Location& loc);
  // Elements [begin, end) of `v` along `dim`.
  absl::StatusOr<ir::Value*> Slice(ir::Value* v, int64_t dim, int64_t begin, int64_t end,
                                   const ir::Location& loc);
  // `pieces` (non-empty, alike but along `dim`) one after another along `dim`.
  absl::StatusOr<ir::Value*> Concatenate(std::vector<ir::Value*> pieces, int64_t dim,
                                         const ir::Location& loc);
  // Zeros of `type`.
  absl::StatusOr<ir::Value*> Zeros(const ir::ValueType& type, const ir::Location& loc);
  // table[partition_id] as an s64 scalar.
  absl::StatusOr<ir::Value*> Lookup(const std::vector<int64_t>& table, const ir::Location& loc);
  absl::StatusOr<ir::Value*> Scalar(int64_t v, const ir::Location& loc);

 private:
  absl::StatusOr<ir::Value*> Constant(ir::Literal literal, const ir::Location& loc);
  absl::StatusOr<ir::Literal> Groups(const ir::Mesh& mesh, const std::vector<ir::MeshAxisRef>& axes,
                                     int64_t* size);

  ir::Computation& c_;
  const int64_t num_devices_;
  SpmdCounters& counters_;
  ir::Value* partition_ = nullptr;
};

}  // namespace ember::passes

#endif  // EMBER_COMPILER_PASSES_SPMD_BUILDER_H_
