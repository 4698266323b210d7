// Device meshes and the replica groups named by mesh axes. A mesh is a named grid of devices
// (Shardy's `sdy.mesh`, StableHLO's `#stablehlo.mesh`; the importers build it, and a module keeps
// its sdy meshes as kMesh attributes in "sdy.meshes"); a collective's
// `#stablehlo.replica_group_mesh_axes` names some of its axes (or sub-axes), and each group is
// the devices that differ only in those axes. The IR keeps that form as written (see
// MeshAxesReplicaGroups below); the resolve-mesh-axes pass turns it into explicit groups.
#ifndef EMBER_COMPILER_IR_MESH_H_
#define EMBER_COMPILER_IR_MESH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/ir/attribute.h"

namespace ember::ir {

// Axis names and sizes (major first), and optionally the device ids in mesh order.
inline constexpr int64_t kMaxMeshDevices = int64_t{1} << 20;
struct Mesh {
  std::vector<std::string> axes;
  std::vector<int64_t> sizes;
  std::vector<int64_t> device_ids;  // empty: 0..size-1
  int64_t size() const;
  // Coordinates (one per axis) of the device with id `id`.
  absl::StatusOr<std::vector<int64_t>> Coordinates(int64_t id) const;
  // Positive sizes, at most kMaxMeshDevices devices, distinct axis names, and one id per
  // device when ids are given.
  absl::Status Validate() const;
  // `<["x"=2, "y"=4], device_ids=[...]>` (Shardy's mesh body; ids only when given).
  std::string ToString() const;
  bool operator==(const Mesh&) const = default;
};

// A reference to a whole mesh axis, or to its sub-axis of `size` devices whose more major
// sub-axes hold `pre_size` devices together (Shardy's `"x":(pre_size)size`).
struct MeshAxisRef {
  std::string name;
  int64_t pre_size = 1;
  int64_t size = 0;  // 0: the whole axis
  bool whole() const { return size == 0; }
};

// A `replica_groups` attribute in its mesh-axes form (the IR dictionary the importer builds):
//   {mesh = "name" (a symbol: an sdy.mesh of the module)
//         | {axes = [{name = "x", size = 2}, ...], device_ids = [...]},
//    axes = [{name = "x"}, {name = "y", pre_size = 1, size = 2}, ...]}
struct MeshAxesReplicaGroups {
  std::string mesh_symbol;  // set when the mesh is a symbol reference
  Mesh mesh;                // the inline mesh otherwise
  std::vector<MeshAxisRef> axes;
};
bool IsMeshAxesReplicaGroups(const Attribute& attr);
absl::StatusOr<MeshAxesReplicaGroups> ReadMeshAxesReplicaGroups(const Attribute& attr);
Attribute MeshAttribute(const Mesh& mesh);
Attribute MeshAxisRefsAttribute(absl::Span<const MeshAxisRef> axes);

// The replica groups `axes` name in `mesh`: one group per combination of the other axes'
// coordinates (in mesh order), each listing device ids in the order of `axes` (major first).
// Errors: unknown or repeated axes, sub-axes that do not divide their axis or that overlap.
absl::StatusOr<std::vector<std::vector<int64_t>>> MeshAxesGroups(
    const Mesh& mesh, absl::Span<const MeshAxisRef> axes);
// The errors MeshAxesGroups would give, without listing the groups (cheap: for the verifier).
absl::Status CheckMeshAxes(const Mesh& mesh, absl::Span<const MeshAxisRef> axes);


}  // namespace ember::ir

#endif  // EMBER_COMPILER_IR_MESH_H_
