#include "compiler/ir/sharding.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "compiler/ir/module.h"

namespace ember::ir {
namespace {

std::string AxisRefText(const MeshAxisRef& r) {
  std::string out = absl::StrCat("\"", r.name, "\"");
  if (!r.whole()) absl::StrAppend(&out, ":(", r.pre_size, ")", r.size);
  return out;
}

std::string AxisListText(const std::vector<MeshAxisRef>& axes) {
  std::vector<std::string> parts;
  for (const MeshAxisRef& r : axes) parts.push_back(AxisRefText(r));
  return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
}

bool SameAxis(const MeshAxisRef& a, const MeshAxisRef& b) {
  return a.name == b.name && a.pre_size == b.pre_size && a.size == b.size;
}

// The devices' positions (block indices) along the axes `axes` name: for each device id of the
// mesh, its index within its MeshAxesGroups group.
absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> BlockIndices(
    const Mesh& mesh, const std::vector<MeshAxisRef>& axes) {
  EMBER_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> groups, MeshAxesGroups(mesh, axes));
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto& group : groups) {
    for (size_t k = 0; k < group.size(); ++k) out.emplace_back(group[k], static_cast<int64_t>(k));
  }
  return out;
}

}  // namespace

bool DimensionSharding::operator==(const DimensionSharding& o) const {
  if (axes.size() != o.axes.size() || closed != o.closed || priority != o.priority) return false;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (!SameAxis(axes[i], o.axes[i])) return false;
  }
  return true;
}

TensorSharding TensorSharding::Replicated() {
  TensorSharding s;
  s.kind = Kind::kReplicated;
  return s;
}

std::string TensorSharding::ToString() const {
  switch (kind) {
    case Kind::kReplicated: return "{replicated}";
    case Kind::kMaximal: return absl::StrCat("{maximal device=", maximal_device, "}");
    case Kind::kManual: return "{manual}";
    case Kind::kSplit: break;
  }
  std::string out = "#sdy.sharding<";
  if (inline_mesh.has_value()) {
    absl::StrAppend(&out, "mesh", inline_mesh->ToString());
  } else {
    absl::StrAppend(&out, "@", mesh_name);
  }
  std::vector<std::string> parts;
  for (const DimensionSharding& d : dims) {
    std::vector<std::string> axes;
    for (const MeshAxisRef& r : d.axes) axes.push_back(AxisRefText(r));
    if (!d.closed) axes.push_back("?");
    std::string dim = absl::StrCat("{", absl::StrJoin(axes, ", "), "}");
    if (d.priority.has_value()) absl::StrAppend(&dim, "p", *d.priority);
    parts.push_back(std::move(dim));
  }
  absl::StrAppend(&out, ", [", absl::StrJoin(parts, ", "), "]");
  if (!replicated_axes.empty()) absl::StrAppend(&out, ", replicated=", AxisListText(replicated_axes));
  if (!unreduced_axes.empty()) absl::StrAppend(&out, ", unreduced=", AxisListText(unreduced_axes));
  out.push_back('>');
  return out;
}

bool TensorSharding::operator==(const TensorSharding& o) const {
  if (kind != o.kind || mesh_name != o.mesh_name || dims != o.dims ||
      maximal_device != o.maximal_device ||
      inline_mesh.has_value() != o.inline_mesh.has_value()) {
    return false;
  }
  if (inline_mesh.has_value() && *inline_mesh != *o.inline_mesh) return false;
  auto same_list = [](const std::vector<MeshAxisRef>& a, const std::vector<MeshAxisRef>& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), SameAxis);
  };
  return same_list(replicated_axes, o.replicated_axes) && same_list(unreduced_axes, o.unreduced_axes);
}

absl::StatusOr<Mesh> ModuleMesh(const Module& module, const std::string& name) {
  const Attribute* meshes = module.attributes().Find("sdy.meshes");
  if (meshes != nullptr && meshes->kind == Attribute::Kind::kDict) {
    for (const auto& [mesh_name, mesh] : meshes->dict) {
      if (mesh_name == name && mesh.kind == Attribute::Kind::kMesh && mesh.mesh != nullptr) {
        return *mesh.mesh;
      }
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("no sdy.mesh named @", name, " in the module"));
}

absl::StatusOr<Mesh> MeshOfSharding(const Module& module, const TensorSharding& sharding) {
  if (sharding.kind != TensorSharding::Kind::kSplit) {
    return absl::InvalidArgumentError(
        absl::StrCat("the sharding ", sharding.ToString(), " is not over a mesh"));
  }
  if (sharding.inline_mesh.has_value()) return *sharding.inline_mesh;
  return ModuleMesh(module, sharding.mesh_name);
}

absl::StatusOr<int64_t> SplitCount(const TensorSharding& sharding, const Mesh& mesh, size_t dim) {
  if (dim >= sharding.dims.size()) return 1;
  int64_t n = 1;
  for (const MeshAxisRef& r : sharding.dims[dim].axes) {
    const auto it = std::find(mesh.axes.begin(), mesh.axes.end(), r.name);
    if (it == mesh.axes.end()) {
      return absl::InvalidArgumentError(absl::StrCat("axis \"", r.name, "\" is not in the mesh"));
    }
    n *= r.whole() ? mesh.sizes[it - mesh.axes.begin()] : r.size;
  }
  return n;
}

absl::StatusOr<std::vector<int64_t>> ShardDims(absl::Span<const int64_t> global,
                                               const TensorSharding& sharding, const Mesh& mesh) {
  if (sharding.kind != TensorSharding::Kind::kSplit) {
    return std::vector<int64_t>(global.begin(), global.end());
  }
  if (sharding.dims.size() != global.size()) {
    return absl::InvalidArgumentError(absl::StrCat("a sharding of rank ", sharding.dims.size(),
                                                   " for an array of rank ", global.size()));
  }
  std::vector<int64_t> dims(global.begin(), global.end());
  for (size_t d = 0; d < dims.size(); ++d) {
    EMBER_ASSIGN_OR_RETURN(int64_t n, SplitCount(sharding, mesh, d));
    if (dims[d] % n != 0) {
      return absl::UnimplementedError(absl::StrCat(
          "dimension ", d, " of size ", dims[d], " does not split evenly into ", n,
          " shards (uneven shardings are not supported yet)"));
    }
    dims[d] /= n;
  }
  return dims;
}

absl::StatusOr<std::vector<int64_t>> ShardIndex(const TensorSharding& sharding, const Mesh& mesh,
                                                int64_t id) {
  std::vector<int64_t> index(sharding.dims.size(), 0);
  for (size_t d = 0; d < sharding.dims.size(); ++d) {
    if (sharding.dims[d].axes.empty()) continue;
    EMBER_ASSIGN_OR_RETURN(auto blocks, BlockIndices(mesh, sharding.dims[d].axes));
    const auto it = std::find_if(blocks.begin(), blocks.end(),
                                 [id](const auto& b) { return b.first == id; });
    if (it == blocks.end()) {
      return absl::InvalidArgumentError(absl::StrCat("device ", id, " is not in the mesh"));
    }
    index[d] = it->second;
  }
  return index;
}

bool IsFullyReplicated(const TensorSharding& sharding, const Mesh* mesh) {
  if (sharding.kind == TensorSharding::Kind::kReplicated) return true;
  if (sharding.kind != TensorSharding::Kind::kSplit) return false;
  if (!sharding.unreduced_axes.empty()) return false;
  for (size_t d = 0; d < sharding.dims.size(); ++d) {
    if (sharding.dims[d].axes.empty()) continue;
    if (mesh == nullptr) return false;
    absl::StatusOr<int64_t> n = SplitCount(sharding, *mesh, d);
    if (!n.ok() || *n != 1) return false;
  }
  return true;
}

absl::StatusOr<std::vector<int64_t>> IotaTileDevices(absl::Span<const int64_t> reshape,
                                                     absl::Span<const int64_t> perm) {
  int64_t count = 1;
  for (int64_t d : reshape) {
    if (d < 1 || count > kMaxMeshDevices / d) {
      return absl::InvalidArgumentError("bad iota tile assignment dimensions");
    }
    count *= d;
  }
  std::vector<int64_t> order(reshape.size());
  std::iota(order.begin(), order.end(), 0);
  if (!perm.empty()) {
    if (perm.size() != reshape.size()) {
      return absl::InvalidArgumentError("the iota transpose does not match its dimensions");
    }
    std::vector<bool> seen(reshape.size(), false);
    for (size_t i = 0; i < perm.size(); ++i) {
      if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(reshape.size()) || seen[perm[i]]) {
        return absl::InvalidArgumentError("the iota transpose is not a permutation");
      }
      seen[perm[i]] = true;
      order[i] = perm[i];
    }
  }
  std::vector<int64_t> strides(reshape.size(), 1);
  for (int64_t i = static_cast<int64_t>(reshape.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * reshape[i + 1];
  }
  std::vector<int64_t> dims;
  for (int64_t p : order) dims.push_back(reshape[p]);
  std::vector<int64_t> index(dims.size(), 0), devices;
  devices.reserve(count);
  for (int64_t k = 0; k < count; ++k) {
    int64_t v = 0;
    for (size_t i = 0; i < dims.size(); ++i) v += index[i] * strides[order[i]];
    devices.push_back(v);
    for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
      if (++index[i] < dims[i]) break;
      index[i] = 0;
    }
  }
  return devices;
}

absl::StatusOr<TensorSharding> TiledSharding(absl::Span<const int64_t> tile_dims,
                                             std::vector<int64_t> devices, int64_t rank,
                                             bool replicate_last) {
  if (static_cast<int64_t>(tile_dims.size()) != rank + (replicate_last ? 1 : 0)) {
    return absl::InvalidArgumentError(absl::StrCat("tile rank ", tile_dims.size(),
                                                   " for an array of rank ", rank,
                                                   replicate_last ? " (plus a replicated dim)" : ""));
  }
  TensorSharding s;
  Mesh mesh;
  for (size_t i = 0; i < tile_dims.size(); ++i) {
    mesh.axes.push_back(absl::StrCat("_tile", i));
    mesh.sizes.push_back(tile_dims[i]);
    if (static_cast<int64_t>(i) < rank) {
      DimensionSharding dim;
      if (tile_dims[i] > 1) dim.axes.push_back(MeshAxisRef{mesh.axes.back(), 1, 0});
      s.dims.push_back(std::move(dim));
    }
  }
  mesh.device_ids = std::move(devices);
  EMBER_RETURN_IF_ERROR(mesh.Validate());
  if (static_cast<int64_t>(mesh.device_ids.size()) != mesh.size()) {
    return absl::InvalidArgumentError("the device list does not fill the tiles");
  }
  s.inline_mesh = std::move(mesh);
  return s;
}

std::string GspmdString(const TensorSharding& sharding, const Mesh* mesh, int64_t rank) {
  if (sharding.kind == TensorSharding::Kind::kMaximal || sharding.kind == TensorSharding::Kind::kManual) {
    return sharding.ToString();
  }
  if (mesh == nullptr || IsFullyReplicated(sharding, mesh)) return "{replicated}";
  std::vector<int64_t> tiles(rank, 1);
  for (int64_t d = 0; d < rank; ++d) {
    absl::StatusOr<int64_t> n = SplitCount(sharding, *mesh, d);
    if (!n.ok()) return "{replicated}";
    tiles[d] = *n;
  }
  int64_t tiled = 1;
  for (int64_t t : tiles) tiled *= t;
  // Devices that hold parts of one sum (unreduced axes) form a subgroup of their own, before the
  // replicas (XLA's last_tile_dims={unreduced, replicated}).
  int64_t unreduced = 1;
  TensorSharding sums;
  if (!sharding.unreduced_axes.empty()) {
    sums.dims.resize(1);
    sums.dims[0].axes = sharding.unreduced_axes;
    absl::StatusOr<int64_t> n = SplitCount(sums, *mesh, 0);
    if (!n.ok()) return "{replicated}";
    unreduced = *n;
  }
  if (tiled * unreduced > mesh->size()) return "{replicated}";
  const int64_t replicas = mesh->size() / (tiled * unreduced);
  if (tiled == 1 && replicas == 1 && unreduced > 1) return "{unreduced}";
  std::vector<int64_t> all_tiles = tiles;
  if (unreduced > 1) all_tiles.push_back(unreduced);
  if (replicas > 1) all_tiles.push_back(replicas);
  // Device ids by tile: the block index along each dimension, the position in the sum, then the
  // position among the devices that hold the same part.
  std::vector<int64_t> assignment(mesh->size(), -1);
  std::vector<int64_t> seen_per_group(tiled * unreduced, 0);
  for (int64_t position = 0; position < mesh->size(); ++position) {
    const int64_t id = mesh->device_ids.empty() ? position : mesh->device_ids[position];
    absl::StatusOr<std::vector<int64_t>> index = ShardIndex(sharding, *mesh, id);
    if (!index.ok()) return "{replicated}";
    int64_t group = 0;
    for (int64_t d = 0; d < rank; ++d) group = group * tiles[d] + (*index)[d];
    if (unreduced > 1) {
      absl::StatusOr<std::vector<int64_t>> part = ShardIndex(sums, *mesh, id);
      if (!part.ok()) return "{replicated}";
      group = group * unreduced + (*part)[0];
    }
    const int64_t slot = group * replicas + seen_per_group[group]++;
    if (slot >= mesh->size()) return "{replicated}";
    assignment[slot] = id;
  }
  std::string last;
  if (unreduced > 1 && replicas > 1) {
    last = " last_tile_dims={unreduced, replicated}";
  } else if (unreduced > 1) {
    last = " last_tile_dims={unreduced}";
  } else if (replicas > 1) {
    last = " last_tile_dim_replicate";
  }
  return absl::StrCat("{devices=[", absl::StrJoin(all_tiles, ","), "]",
                      absl::StrJoin(assignment, ","), last, "}");
}

}  // namespace ember::ir
