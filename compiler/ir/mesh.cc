#include "compiler/ir/mesh.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace ember::ir {


namespace {

const Attribute* DictEntry(const Attribute& dict, std::string_view key) {
  for (const auto& [name, value] : dict.dict) {
    if (name == key) return &value;
  }
  return nullptr;
}

absl::Status Malformed(const Attribute& attr, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("malformed mesh-axes replica_groups ", attr.ToString(), ": ", what));
}

}  // namespace

int64_t Mesh::size() const {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

absl::Status Mesh::Validate() const {
  int64_t n = 1;
  for (size_t a = 0; a < sizes.size(); ++a) {
    if (sizes[a] < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("mesh axis \"", axes[a], "\" has size ", sizes[a]));
    }
    if (n > kMaxMeshDevices / sizes[a]) {
      return absl::InvalidArgumentError(
          absl::StrCat("the mesh has more than ", kMaxMeshDevices, " devices"));
    }
    n *= sizes[a];
    for (size_t b = 0; b < a; ++b) {
      if (axes[b] == axes[a]) {
        return absl::InvalidArgumentError(absl::StrCat("mesh axis \"", axes[a], "\" is repeated"));
      }
    }
  }
  if (!device_ids.empty() && static_cast<int64_t>(device_ids.size()) != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("a mesh of ", n, " devices lists ", device_ids.size(), " device ids"));
  }
  return absl::OkStatus();
}

std::string Mesh::ToString() const {
  std::vector<std::string> parts;
  for (size_t a = 0; a < axes.size(); ++a) {
    parts.push_back(absl::StrCat("\"", axes[a], "\"=", sizes[a]));
  }
  std::string out = absl::StrCat("<[", absl::StrJoin(parts, ", "), "]");
  if (!device_ids.empty()) {
    absl::StrAppend(&out, ", device_ids=[", absl::StrJoin(device_ids, ", "), "]");
  }
  out.push_back('>');
  return out;
}

absl::StatusOr<std::vector<int64_t>> Mesh::Coordinates(int64_t id) const {
  int64_t position = id;
  if (!device_ids.empty()) {
    auto it = std::find(device_ids.begin(), device_ids.end(), id);
    if (it == device_ids.end()) {
      return absl::InvalidArgumentError(absl::StrCat("device ", id, " is not in the mesh"));
    }
    position = it - device_ids.begin();
  }
  if (position < 0 || position >= size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("device ", id, " is outside a mesh of ", size(), " devices"));
  }
  std::vector<int64_t> coords(sizes.size());
  for (int64_t a = static_cast<int64_t>(sizes.size()) - 1; a >= 0; --a) {
    coords[a] = position % sizes[a];
    position /= sizes[a];
  }
  return coords;
}

bool IsMeshAxesReplicaGroups(const Attribute& attr) {
  return attr.kind == Attribute::Kind::kDict && DictEntry(attr, "mesh") != nullptr &&
         DictEntry(attr, "axes") != nullptr;
}

absl::StatusOr<MeshAxesReplicaGroups> ReadMeshAxesReplicaGroups(const Attribute& attr) {
  if (!IsMeshAxesReplicaGroups(attr)) return Malformed(attr, "expected {mesh, axes}");
  MeshAxesReplicaGroups out;
  const Attribute& mesh = *DictEntry(attr, "mesh");
  if (mesh.kind == Attribute::Kind::kString) {
    if (mesh.s.empty()) return Malformed(attr, "empty mesh symbol");
    out.mesh_symbol = mesh.s;
  } else if (mesh.kind == Attribute::Kind::kDict) {
    const Attribute* axes = DictEntry(mesh, "axes");
    if (axes == nullptr || axes->kind != Attribute::Kind::kList) {
      return Malformed(attr, "the mesh needs a list of axes");
    }
    for (const Attribute& axis : axes->list) {
      const Attribute* name =
          axis.kind == Attribute::Kind::kDict ? DictEntry(axis, "name") : nullptr;
      const Attribute* size =
          axis.kind == Attribute::Kind::kDict ? DictEntry(axis, "size") : nullptr;
      if (name == nullptr || name->kind != Attribute::Kind::kString || size == nullptr ||
          size->kind != Attribute::Kind::kInt) {
        return Malformed(attr, "a mesh axis needs a name and a size");
      }
      out.mesh.axes.push_back(name->s);
      out.mesh.sizes.push_back(size->i);
    }
    if (const Attribute* ids = DictEntry(mesh, "device_ids")) {
      if (ids->kind != Attribute::Kind::kInts)
        return Malformed(attr, "device_ids must be integers");
      out.mesh.device_ids = ids->ints;
    }
    absl::Status valid = out.mesh.Validate();
    if (!valid.ok()) return Malformed(attr, valid.message());
  } else {
    return Malformed(attr, "the mesh must be a symbol or a mesh");
  }
  const Attribute& axes = *DictEntry(attr, "axes");
  if (axes.kind != Attribute::Kind::kList &&
      !(axes.kind == Attribute::Kind::kInts && axes.ints.empty())) {
    return Malformed(attr, "axes must be a list");
  }
  for (const Attribute& axis : axes.list) {
    const Attribute* name = axis.kind == Attribute::Kind::kDict ? DictEntry(axis, "name") : nullptr;
    if (name == nullptr || name->kind != Attribute::Kind::kString) {
      return Malformed(attr, "an axis reference needs a name");
    }
    MeshAxisRef ref;
    ref.name = name->s;
    const Attribute* pre = DictEntry(axis, "pre_size");
    const Attribute* size = DictEntry(axis, "size");
    if ((pre == nullptr) != (size == nullptr) ||
        (pre != nullptr &&
         (pre->kind != Attribute::Kind::kInt || size->kind != Attribute::Kind::kInt))) {
      return Malformed(attr, "a sub-axis needs an integer pre_size and size");
    }
    if (pre != nullptr) {
      if (pre->i < 1 || size->i < 1) {
        return Malformed(attr, absl::StrCat("sub-axis \"", ref.name, "\":(", pre->i, ")", size->i,
                                            " needs positive sizes"));
      }
      ref.pre_size = pre->i;
      ref.size = size->i;
    }
    out.axes.push_back(std::move(ref));
  }
  return out;
}

Attribute MeshAttribute(const Mesh& mesh) {
  std::vector<Attribute> axes;
  for (size_t a = 0; a < mesh.axes.size(); ++a) {
    axes.push_back(Attribute::Dict(
        {{"name", Attribute::String(mesh.axes[a])}, {"size", Attribute::Int(mesh.sizes[a])}}));
  }
  std::vector<std::pair<std::string, Attribute>> entries = {{"axes", Attribute::List(axes)}};
  if (!mesh.device_ids.empty())
    entries.emplace_back("device_ids", Attribute::Ints(mesh.device_ids));
  return Attribute::Dict(std::move(entries));
}

Attribute MeshAxisRefsAttribute(absl::Span<const MeshAxisRef> axes) {
  std::vector<Attribute> refs;
  for (const MeshAxisRef& r : axes) {
    std::vector<std::pair<std::string, Attribute>> entries = {{"name", Attribute::String(r.name)}};
    if (!r.whole()) {
      entries.emplace_back("pre_size", Attribute::Int(r.pre_size));
      entries.emplace_back("size", Attribute::Int(r.size));
    }
    refs.push_back(Attribute::Dict(std::move(entries)));
  }
  return Attribute::List(std::move(refs));
}

namespace {

// How mesh axes split into factors and which of them a list of references names.
struct Factor {
  size_t axis;
  int64_t begin, end;  // boundaries: the factor's size is end / begin
  int64_t size() const { return end / begin; }
};
struct FactorPlan {
  std::vector<Factor> factors;
  std::vector<int64_t> stride;  // of each factor in the row-major device order
  std::vector<size_t> grouped;  // the factors the references name, in their order
  std::vector<size_t> others;   // the rest, in mesh order
};

absl::StatusOr<FactorPlan> PlanFactors(const Mesh& mesh, absl::Span<const MeshAxisRef> axes) {
  EMBER_RETURN_IF_ERROR(mesh.Validate());
  const size_t rank = mesh.axes.size();
  auto axis_of = [&](const MeshAxisRef& r) -> absl::StatusOr<size_t> {
    for (size_t a = 0; a < rank; ++a) {
      if (mesh.axes[a] == r.name) return a;
    }
    return absl::InvalidArgumentError(absl::StrCat("axis \"", r.name, "\" is not in the mesh"));
  };
  // Each axis splits into factors at the boundaries its sub-axis references draw: a boundary is
  // the product of the sizes of the sub-axes more major than it (1 and the axis size always
  // are). Factors run major to minor; the device order over all factors is the mesh's order.
  std::vector<std::vector<int64_t>> cuts(rank);
  for (size_t a = 0; a < rank; ++a) cuts[a] = {1, mesh.sizes[a]};
  for (const MeshAxisRef& r : axes) {
    EMBER_ASSIGN_OR_RETURN(const size_t a, axis_of(r));
    if (r.whole()) continue;
    if (r.pre_size < 1 || r.size < 1 || mesh.sizes[a] % r.pre_size != 0 ||
        (mesh.sizes[a] / r.pre_size) % r.size != 0) {
      return absl::InvalidArgumentError(absl::StrCat("sub-axis \"", r.name, "\":(", r.pre_size, ")",
                                                     r.size, " does not divide the axis of size ",
                                                     mesh.sizes[a]));
    }
    cuts[a].push_back(r.pre_size);
    cuts[a].push_back(r.pre_size * r.size);
  }
  FactorPlan plan;
  std::vector<Factor>& factors = plan.factors;
  std::vector<std::vector<size_t>> axis_factors(rank);
  for (size_t a = 0; a < rank; ++a) {
    std::sort(cuts[a].begin(), cuts[a].end());
    cuts[a].erase(std::unique(cuts[a].begin(), cuts[a].end()), cuts[a].end());
    for (size_t k = 0; k + 1 < cuts[a].size(); ++k) {
      if (cuts[a][k + 1] % cuts[a][k] != 0) {
        return absl::InvalidArgumentError(absl::StrCat("the sub-axes of \"", mesh.axes[a],
                                                       "\" overlap (boundaries ", cuts[a][k],
                                                       " and ", cuts[a][k + 1], " do not nest)"));
      }
      axis_factors[a].push_back(factors.size());
      factors.push_back({a, cuts[a][k], cuts[a][k + 1]});
    }
  }
  // Strides of the factors in the row-major device order.
  std::vector<int64_t>& stride = plan.stride;
  stride.assign(factors.size(), 1);
  for (size_t f = factors.size(); f-- > 1;) stride[f - 1] = stride[f] * factors[f].size();
  // The factors each reference names, in its order, and the ones left.
  std::vector<size_t>& grouped = plan.grouped;
  std::vector<bool> taken(factors.size(), false);
  for (const MeshAxisRef& r : axes) {
    EMBER_ASSIGN_OR_RETURN(const size_t a, axis_of(r));
    const int64_t begin = r.whole() ? 1 : r.pre_size;
    const int64_t end = r.whole() ? mesh.sizes[a] : r.pre_size * r.size;
    for (size_t f : axis_factors[a]) {
      if (factors[f].begin < begin || factors[f].end > end) continue;
      if (taken[f]) {
        return absl::InvalidArgumentError(
            absl::StrCat("axis \"", r.name, "\" is named twice (its references overlap)"));
      }
      taken[f] = true;
      grouped.push_back(f);
    }
  }
  for (size_t f = 0; f < factors.size(); ++f) {
    if (!taken[f]) plan.others.push_back(f);
  }
  return plan;
}

}  // namespace

absl::Status CheckMeshAxes(const Mesh& mesh, absl::Span<const MeshAxisRef> axes) {
  return PlanFactors(mesh, axes).status();
}

absl::StatusOr<std::vector<std::vector<int64_t>>> MeshAxesGroups(
    const Mesh& mesh, absl::Span<const MeshAxisRef> axes) {
  EMBER_ASSIGN_OR_RETURN(const FactorPlan plan, PlanFactors(mesh, axes));
  const std::vector<Factor>& factors = plan.factors;
  const std::vector<int64_t>& stride = plan.stride;
  const std::vector<size_t>& grouped = plan.grouped;
  const std::vector<size_t>& others = plan.others;
  // Row-major counting over a list of factors.
  auto count = [&](const std::vector<size_t>& list) {
    int64_t n = 1;
    for (size_t f : list) n *= factors[f].size();
    return n;
  };
  auto offset = [&](const std::vector<size_t>& list, int64_t index) {
    int64_t at = 0;
    for (size_t k = list.size(); k-- > 0;) {
      const int64_t s = factors[list[k]].size();
      at += (index % s) * stride[list[k]];
      index /= s;
    }
    return at;
  };
  std::vector<std::vector<int64_t>> groups;
  const int64_t group_size = count(grouped);
  for (int64_t g = 0; g < count(others); ++g) {
    const int64_t base = offset(others, g);
    std::vector<int64_t> group;
    group.reserve(group_size);
    for (int64_t m = 0; m < group_size; ++m) {
      const int64_t position = base + offset(grouped, m);
      group.push_back(mesh.device_ids.empty() ? position : mesh.device_ids[position]);
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace ember::ir
