// One mesh per program: shardings over another mesh of the same devices in the same order are
// rewritten over the program's mesh, each of their axes as the run of the program's (sub-)axes
// it spans. JAX writes such meshes when a function reshapes its abstract mesh
// (jax.sharding.use_abstract_mesh(mesh.update(axis_sizes=(4, 1), axis_names=("a", "b")))): "a"
// of size 4 over a 2x2 mesh ("x", "y") is ("x", "y"), and "b" of size 1 is no axis at all.
// Propagation and the partitioner then see one mesh. Nothing changes when a sharding cannot be
// rewritten exactly (other devices or another order, a sub-axis of the other mesh, an axis that
// straddles the program's axes unevenly, a manual computation over another mesh): such programs
// keep going to spmd-replicate, which says why.
#ifndef EMBER_COMPILER_PASSES_UNIFY_MESHES_H_
#define EMBER_COMPILER_PASSES_UNIFY_MESHES_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/mesh.h"
#include "compiler/passes/pass.h"

namespace ember::passes {

// The refs over `to` that axis `axis` of `from` spans, when both meshes hold the same devices in
// the same order (major first): axis by axis, each of `from`'s axes takes the next devices of
// `to`'s axes, whole or in part. nullopt when the meshes differ in their devices or `axis` does
// not fall on whole (sub-)axes of `to`. An axis of size 1 spans no ref.
std::optional<std::vector<ir::MeshAxisRef>> AxisOnMesh(const ir::Mesh& from,
                                                       const std::string& axis, const ir::Mesh& to);

std::unique_ptr<Pass> CreateUnifyMeshesPass();

}  // namespace ember::passes

#endif  // EMBER_COMPILER_PASSES_UNIFY_MESHES_H_
