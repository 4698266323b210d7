// resolve-mesh-axes: replica groups named by mesh axes (#stablehlo.replica_group_mesh_axes)
// become the explicit lists of device ids the collectives run on. The mesh is inline or a
// symbol: an `sdy.mesh` of the module (kept by the importer in the module attribute
// "sdy.meshes"). The groups are what upstream's StableHLO flattening computes (one group per
// coordinate of the axes not named, ordered by the named axes), with sub-axes split out of
// their axis (compiler/ir/mesh.h).
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/ir/mesh.h"
#include "compiler/ir/sharding.h"
#include "compiler/passes/pass.h"

namespace ember::passes {
namespace {

absl::StatusOr<ir::Mesh> LookUpMesh(const ir::Module& module, const std::string& symbol) {
  absl::StatusOr<ir::Mesh> mesh = ir::ModuleMesh(module, symbol);
  if (mesh.ok()) return mesh;
  return absl::InvalidArgumentError(absl::StrCat("replica_groups name mesh @", symbol,
                                                 ", which is not an sdy.mesh of the module"));
}

class ResolveMeshAxesPass : public Pass {
 public:
  std::string name() const override { return "resolve-mesh-axes"; }

  absl::StatusOr<bool> Run(ir::Module& module) override {
    bool changed = false;
    for (const auto& computation : module.computations()) {
      for (const auto& inst : computation->instructions()) {
        const ir::Attribute* groups = inst->attribute("replica_groups");
        if (groups == nullptr || !ir::IsMeshAxesReplicaGroups(*groups)) continue;
        auto fail = [&](const absl::Status& s) {
          return absl::Status(s.code(), absl::StrCat(inst->Describe(), ": ", s.message()));
        };
        absl::StatusOr<ir::MeshAxesReplicaGroups> axes = ir::ReadMeshAxesReplicaGroups(*groups);
        if (!axes.ok()) return fail(axes.status());
        if (!axes->mesh_symbol.empty()) {
          absl::StatusOr<ir::Mesh> mesh = LookUpMesh(module, axes->mesh_symbol);
          if (!mesh.ok()) return fail(mesh.status());
          axes->mesh = *std::move(mesh);
        }
        absl::StatusOr<std::vector<std::vector<int64_t>>> lists =
            ir::MeshAxesGroups(axes->mesh, axes->axes);
        if (!lists.ok()) return fail(lists.status());
        std::vector<int64_t> ids;
        for (const std::vector<int64_t>& group : *lists)
          ids.insert(ids.end(), group.begin(), group.end());
        const int64_t count = static_cast<int64_t>(lists->size());
        const int64_t size = lists->empty() ? 0 : static_cast<int64_t>(lists->front().size());
        absl::StatusOr<ir::Literal> literal = ir::Literal::FromValues<int64_t>({count, size}, ids);
        if (!literal.ok()) return fail(literal.status());
        inst->mutable_attributes().Set("replica_groups",
                                       ir::Attribute::OfLiteral(*std::move(literal)));
        changed = true;
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateResolveMeshAxesPass() {
  return std::make_unique<ResolveMeshAxesPass>();
}

}  // namespace ember::passes
