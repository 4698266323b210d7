// Shardings of values across the devices of one program, as typed IR (Shardy's model): a
// tensor is split over the axes of a device mesh, dimension by dimension (major axis first), and
// may be replicated or unreduced over the others. GSPMD shardings ("{devices=[2,1,2]<=[4]
// last_tile_dim_replicate}", XLA's OpSharding) are the same thing over an inline mesh with one
// axis per tile dimension. The frontends build these once; nothing downstream reads printed text.
#ifndef EMBER_COMPILER_IR_SHARDING_H_
#define EMBER_COMPILER_IR_SHARDING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/ir/mesh.h"

namespace ember::ir {

class Module;

struct DimensionSharding {
  std::vector<MeshAxisRef> axes;  // major first; empty: not split
  bool closed = true;             // false: propagation may add axes (Shardy's `?`)
  std::optional<int64_t> priority;
  bool operator==(const DimensionSharding&) const;
};

struct TensorSharding {
  enum class Kind {
    kSplit,       // over a mesh: `dims`, `replicated_axes`, `unreduced_axes`
    kReplicated,  // GSPMD {replicated}: every device holds all of it
    kMaximal,     // GSPMD {maximal device=N}: one device holds it
    kManual,      // GSPMD {manual}: already per-device
  };
  Kind kind = Kind::kSplit;
  // kSplit: a mesh of the module (an sdy.mesh symbol), or, when empty, `inline_mesh`.
  std::string mesh_name;
  std::optional<Mesh> inline_mesh;
  std::vector<DimensionSharding> dims;
  std::vector<MeshAxisRef> replicated_axes;
  std::vector<MeshAxisRef> unreduced_axes;
  int64_t maximal_device = 0;  // kMaximal

  static TensorSharding Replicated();
  // Readable form: `#sdy.sharding<@mesh, [{"x"}, {}], replicated={"y"}>` (inline meshes spelled
  // out), `{replicated}`, `{maximal device=1}`, `{manual}`.
  std::string ToString() const;
  bool operator==(const TensorSharding&) const;
};

// The mesh of a kSplit sharding: its inline mesh, or the module's mesh of that name.
absl::StatusOr<Mesh> MeshOfSharding(const Module& module, const TensorSharding& sharding);
// The module's mesh called `name` (the module attribute "sdy.meshes", built by the importers).
absl::StatusOr<Mesh> ModuleMesh(const Module& module, const std::string& name);

// How many devices split dimension `dim` of a kSplit sharding over `mesh`.
absl::StatusOr<int64_t> SplitCount(const TensorSharding& sharding, const Mesh& mesh, size_t dim);
// The per-device dims of a `global` shape: each dimension divided by its split count. Uneven
// splits are an error.
absl::StatusOr<std::vector<int64_t>> ShardDims(absl::Span<const int64_t> global,
                                               const TensorSharding& sharding, const Mesh& mesh);
// The index of device `id`'s block along each dimension (0 for dimensions not split).
absl::StatusOr<std::vector<int64_t>> ShardIndex(const TensorSharding& sharding, const Mesh& mesh,
                                                int64_t id);
// True when the sharding splits nothing (every dimension whole on every device).
bool IsFullyReplicated(const TensorSharding& sharding, const Mesh* mesh);

// A GSPMD tile assignment as a sharding over an inline mesh: one axis "_tile<i>" per tile
// dimension, devices in tile order; with `replicate_last` the last tile dimension replicates.
// `devices` has one id per tile (the product of `tile_dims`); `rank` is the tensor's rank.
absl::StatusOr<TensorSharding> TiledSharding(absl::Span<const int64_t> tile_dims,
                                             std::vector<int64_t> devices, int64_t rank,
                                             bool replicate_last);
// The device list of an iota tile assignment: iota(prod(reshape)) reshaped, transposed by
// `perm` (empty: identity) and flattened.
absl::StatusOr<std::vector<int64_t>> IotaTileDevices(absl::Span<const int64_t> reshape,
                                                     absl::Span<const int64_t> perm);
// The GSPMD text of a sharding over `mesh` for a tensor of `rank` ("{replicated}",
// "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}", unreduced axes as
// "last_tile_dims={unreduced, replicated}" or "{unreduced}"), with explicit device ids.
std::string GspmdString(const TensorSharding& sharding, const Mesh* mesh, int64_t rank);

}  // namespace ember::ir

#endif  // EMBER_COMPILER_IR_SHARDING_H_
