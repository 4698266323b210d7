#include "compiler/passes/unify_meshes.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <string>
#include <utility>

#include "compiler/ir/module.h"
#include "compiler/ir/sharding.h"
#include "compiler/passes/sharding_rules.h"
#include "compiler/passes/spmd_builder.h"

namespace ember::passes {
namespace {

std::vector<int64_t> Devices(const ir::Mesh& mesh) {
  if (!mesh.device_ids.empty()) return mesh.device_ids;
  std::vector<int64_t> ids(static_cast<size_t>(std::max<int64_t>(mesh.size(), 0)));
  std::iota(ids.begin(), ids.end(), 0);
  return ids;
}

// Adjacent refs to consecutive sub-axes of one axis become one ref (whole when it covers the
// axis): "x":(1)2, "x":(2)2 over "x"=4 is "x".
std::vector<ir::MeshAxisRef> Merge(const std::vector<ir::MeshAxisRef>& refs, const ir::Mesh& mesh) {
  std::vector<ir::MeshAxisRef> out;
  for (const ir::MeshAxisRef& r : refs) {
    if (!out.empty() && !out.back().whole() && !r.whole() && out.back().name == r.name &&
        r.pre_size == out.back().pre_size * out.back().size) {
      out.back().size *= r.size;
    } else {
      out.push_back(r);
    }
    if (!out.back().whole() && out.back().pre_size == 1 &&
        out.back().size == AxisSize(mesh, ir::MeshAxisRef{out.back().name})) {
      out.back().size = 0;
    }
  }
  return out;
}

class Unifier {
 public:
  explicit Unifier(const ir::Module& module) : module_(module) {}

  // The mesh of the first sharding that splits something: the entry's parameters first, then
  // the ops in program order. False: no such sharding.
  bool ChooseMesh() {
    const ir::Computation* entry = module_.entry();
    if (entry == nullptr) return false;
    for (const ir::AttributeMap& attrs : entry->arg_attributes()) {
      if (Consider(attrs.Find("sdy.sharding"))) return true;
    }
    for (const auto& c : module_.computations()) {
      for (const auto& inst : c->instructions()) {
        if (Consider(inst->attribute("sdy.sharding"))) return true;
      }
    }
    return false;
  }

  // `attr` with every sharding over another mesh rewritten over the chosen one (`changed` says
  // whether any was); nullopt when one cannot be.
  std::optional<ir::Attribute> Rewrite(const ir::Attribute& attr, bool& changed) const {
    switch (attr.kind) {
      case ir::Attribute::Kind::kSharding: {
        if (attr.sharding == nullptr) return attr;
        std::optional<ir::TensorSharding> s = Rewrite(*attr.sharding, changed);
        if (!s.has_value()) return std::nullopt;
        return ir::Attribute::OfSharding(*std::move(s));
      }
      case ir::Attribute::Kind::kList: {
        ir::Attribute out = attr;
        for (ir::Attribute& element : out.list) {
          std::optional<ir::Attribute> e = Rewrite(element, changed);
          if (!e.has_value()) return std::nullopt;
          element = *std::move(e);
        }
        return out;
      }
      default:
        return attr;
    }
  }

 private:
  bool Consider(const ir::Attribute* attr) {
    if (attr == nullptr || attr->kind != ir::Attribute::Kind::kSharding ||
        attr->sharding == nullptr || attr->sharding->kind != ir::TensorSharding::Kind::kSplit) {
      return false;
    }
    absl::StatusOr<ir::Mesh> mesh = ir::MeshOfSharding(module_, *attr->sharding);
    if (!mesh.ok() || mesh->axes.empty() || ir::IsFullyReplicated(*attr->sharding, &*mesh)) {
      return false;
    }
    mesh_ = *mesh;
    mesh_name_ = attr->sharding->mesh_name;
    inline_mesh_ = attr->sharding->inline_mesh;
    return true;
  }

  std::optional<std::vector<ir::MeshAxisRef>> Refs(const std::vector<ir::MeshAxisRef>& refs,
                                                   const ir::Mesh& from) const {
    std::vector<ir::MeshAxisRef> out;
    for (const ir::MeshAxisRef& r : refs) {
      if (!r.whole()) return std::nullopt;
      std::optional<std::vector<ir::MeshAxisRef>> on = AxisOnMesh(from, r.name, mesh_);
      if (!on.has_value()) return std::nullopt;
      out.insert(out.end(), on->begin(), on->end());
    }
    return Merge(out, mesh_);
  }

  std::optional<ir::TensorSharding> Rewrite(const ir::TensorSharding& s, bool& changed) const {
    if (s.kind != ir::TensorSharding::Kind::kSplit) return s;
    absl::StatusOr<ir::Mesh> from = ir::MeshOfSharding(module_, s);
    if (!from.ok()) return std::nullopt;
    if (from->axes.empty()) return s;  // the empty mesh fits any
    if (*from == mesh_ && s.mesh_name == mesh_name_ && s.inline_mesh == inline_mesh_) return s;
    ir::TensorSharding out = s;
    out.mesh_name = mesh_name_;
    out.inline_mesh = inline_mesh_;
    for (ir::DimensionSharding& d : out.dims) {
      std::optional<std::vector<ir::MeshAxisRef>> axes = Refs(d.axes, *from);
      if (!axes.has_value()) return std::nullopt;
      d.axes = *std::move(axes);
    }
    for (std::vector<ir::MeshAxisRef>* list : {&out.replicated_axes, &out.unreduced_axes}) {
      std::optional<std::vector<ir::MeshAxisRef>> axes = Refs(*list, *from);
      if (!axes.has_value()) return std::nullopt;
      *list = *std::move(axes);
    }
    changed = true;
    return out;
  }

  const ir::Module& module_;
  ir::Mesh mesh_;
  std::string mesh_name_;
  std::optional<ir::Mesh> inline_mesh_;
};

class UnifyMeshesPass : public Pass {
 public:
  std::string name() const override { return "unify-meshes"; }

  absl::StatusOr<bool> Run(ir::Module& module) override {
    Unifier unifier(module);
    if (!unifier.ChooseMesh()) return false;
    // Every rewrite is worked out before any is made: all or nothing.
    std::vector<std::function<void()>> writes;
    auto plan = [&](ir::AttributeMap& attrs, bool manual) {
      for (const auto& [name, attr] : attrs.entries()) {
        bool changed = false;
        std::optional<ir::Attribute> rewritten = unifier.Rewrite(attr, changed);
        // A manual computation's manual axes name its mesh's axes: left as they are.
        if (!rewritten.has_value() || (changed && manual)) return false;
        if (changed) {
          writes.push_back([&attrs, key = std::string(name), value = *std::move(rewritten)] {
            attrs.Set(key, value);
          });
        }
      }
      return true;
    };
    for (const auto& c : module.computations()) {
      for (ir::AttributeMap& attrs : c->arg_attributes()) {
        if (!plan(attrs, false)) return false;
      }
      for (ir::AttributeMap& attrs : c->result_attributes()) {
        if (!plan(attrs, false)) return false;
      }
      for (const auto& inst : c->instructions()) {
        if (!plan(inst->mutable_attributes(), IsManualComputation(*inst))) return false;
      }
    }
    for (const auto& write : writes) write();
    return !writes.empty();
  }
};

}  // namespace

std::optional<std::vector<ir::MeshAxisRef>> AxisOnMesh(const ir::Mesh& from,
                                                       const std::string& axis,
                                                       const ir::Mesh& to) {
  if (from.size() != to.size() || Devices(from) != Devices(to)) return std::nullopt;
  size_t j = 0;     // the axis of `to` the next devices come from
  int64_t pre = 1;  // its devices already taken (a product, major first)
  for (size_t k = 0; k < from.axes.size(); ++k) {
    std::vector<ir::MeshAxisRef> refs;
    int64_t left = from.sizes[k];
    while (left > 1) {
      while (j < to.axes.size() && to.sizes[j] / pre == 1) {
        ++j;
        pre = 1;
      }
      if (j == to.axes.size()) return std::nullopt;
      const int64_t rest = to.sizes[j] / pre;
      if (left % rest == 0) {
        refs.push_back(pre == 1 ? ir::MeshAxisRef{to.axes[j]}
                                : ir::MeshAxisRef{to.axes[j], pre, rest});
        left /= rest;
        ++j;
        pre = 1;
      } else if (rest % left == 0) {
        refs.push_back(ir::MeshAxisRef{to.axes[j], pre, left});
        pre *= left;
        left = 1;
      } else {
        return std::nullopt;
      }
    }
    if (from.axes[k] == axis) return refs;
  }
  return std::nullopt;
}

std::unique_ptr<Pass> CreateUnifyMeshesPass() { return std::make_unique<UnifyMeshesPass>(); }

}  // namespace ember::passes
