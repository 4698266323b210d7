#include "compiler/frontend/import/sharding_import.h"

#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace ember::frontend {
namespace {

absl::Status Malformed(const Attribute& attr, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("malformed #sdy.", attr.name, " (", PrintAttribute(attr), "): ", what));
}

const DialectParam* Param(const Attribute& attr, absl::string_view name) {
  for (const DialectParam& p : attr.params) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

// The sdy attributes a list parameter holds (null entries are absent optional attributes).
absl::StatusOr<std::vector<const Attribute*>> AttrList(const Attribute& attr, absl::string_view name,
                                                       absl::string_view element) {
  std::vector<const Attribute*> out;
  const DialectParam* p = Param(attr, name);
  if (p == nullptr) return out;
  if (p->kind != DialectParam::Kind::kList) return Malformed(attr, absl::StrCat(name, " is not a list"));
  for (const DialectParam& e : p->list) {
    if (e.kind != DialectParam::Kind::kAttr || e.attr == nullptr ||
        e.attr->kind != AttrKind::kDialect || e.attr->dialect != "sdy" ||
        e.attr->name != element) {
      return Malformed(attr, absl::StrCat(name, " holds something other than #sdy.", element));
    }
    out.push_back(e.attr.get());
  }
  return out;
}

absl::StatusOr<int64_t> IntParam(const Attribute& attr, absl::string_view name) {
  const DialectParam* p = Param(attr, name);
  if (p == nullptr) return Malformed(attr, absl::StrCat("no ", name));
  if (p->kind == DialectParam::Kind::kInt) return p->i;
  if (p->kind == DialectParam::Kind::kUInt) return static_cast<int64_t>(p->u);
  return Malformed(attr, absl::StrCat(name, " is not an integer"));
}

absl::StatusOr<std::string> StringParam(const Attribute& attr, absl::string_view name) {
  const DialectParam* p = Param(attr, name);
  if (p == nullptr || p->kind != DialectParam::Kind::kString) {
    return Malformed(attr, absl::StrCat("no string ", name));
  }
  return p->s;
}

absl::StatusOr<ir::Mesh> ImportMesh(const Attribute& attr) {
  ir::Mesh mesh;
  EMBER_ASSIGN_OR_RETURN(std::vector<const Attribute*> axes, AttrList(attr, "axes", "mesh_axis"));
  for (const Attribute* axis : axes) {
    EMBER_ASSIGN_OR_RETURN(std::string name, StringParam(*axis, "name"));
    EMBER_ASSIGN_OR_RETURN(int64_t size, IntParam(*axis, "size"));
    mesh.axes.push_back(std::move(name));
    mesh.sizes.push_back(size);
  }
  if (const DialectParam* ids = Param(attr, "device_ids"); ids != nullptr) {
    if (ids->kind != DialectParam::Kind::kList) return Malformed(attr, "device_ids is not a list");
    for (const DialectParam& id : ids->list) {
      if (id.kind != DialectParam::Kind::kInt) return Malformed(attr, "a device id is not an integer");
      mesh.device_ids.push_back(id.i);
    }
  }
  absl::Status valid = mesh.Validate();
  if (!valid.ok()) return Malformed(attr, valid.message());
  return mesh;
}

absl::StatusOr<ir::MeshAxisRef> ImportAxisRef(const Attribute& attr) {
  ir::MeshAxisRef ref;
  EMBER_ASSIGN_OR_RETURN(ref.name, StringParam(attr, "name"));
  const DialectParam* sub = Param(attr, "sub_axis_info");
  if (sub != nullptr && sub->kind == DialectParam::Kind::kAttr && sub->attr != nullptr) {
    const Attribute& info = *sub->attr;
    EMBER_ASSIGN_OR_RETURN(ref.pre_size, IntParam(info, "pre_size"));
    EMBER_ASSIGN_OR_RETURN(ref.size, IntParam(info, "size"));
    if (ref.pre_size < 1 || ref.size < 1) {
      return Malformed(attr, absl::StrCat("sub-axis \"", ref.name, "\" needs positive sizes"));
    }
  }
  return ref;
}

absl::StatusOr<std::vector<ir::MeshAxisRef>> ImportAxisRefs(const Attribute& attr,
                                                            absl::string_view name) {
  EMBER_ASSIGN_OR_RETURN(std::vector<const Attribute*> refs, AttrList(attr, name, "axis_ref"));
  std::vector<ir::MeshAxisRef> out;
  for (const Attribute* r : refs) {
    EMBER_ASSIGN_OR_RETURN(ir::MeshAxisRef ref, ImportAxisRef(*r));
    out.push_back(std::move(ref));
  }
  return out;
}

absl::StatusOr<ir::TensorSharding> ImportSharding(const Attribute& attr) {
  ir::TensorSharding sharding;
  const DialectParam* mesh = Param(attr, "mesh_or_ref");
  if (mesh == nullptr || mesh->kind != DialectParam::Kind::kAttr || mesh->attr == nullptr) {
    return Malformed(attr, "no mesh or mesh reference");
  }
  if (mesh->attr->kind == AttrKind::kSymbolRef) {
    sharding.mesh_name = mesh->attr->str;
  } else if (mesh->attr->kind == AttrKind::kDialect && mesh->attr->dialect == "sdy" &&
             mesh->attr->name == "mesh") {
    EMBER_ASSIGN_OR_RETURN(sharding.inline_mesh, ImportMesh(*mesh->attr));
  } else {
    return Malformed(attr, "the mesh is neither a symbol nor an #sdy.mesh");
  }
  EMBER_ASSIGN_OR_RETURN(std::vector<const Attribute*> dims,
                         AttrList(attr, "dim_shardings", "dimension_sharding"));
  for (const Attribute* d : dims) {
    ir::DimensionSharding dim;
    EMBER_ASSIGN_OR_RETURN(dim.axes, ImportAxisRefs(*d, "axes"));
    if (const DialectParam* closed = Param(*d, "is_closed"); closed != nullptr) {
      dim.closed = closed->u != 0 || closed->i != 0;
    }
    if (Param(*d, "priority") != nullptr) {
      EMBER_ASSIGN_OR_RETURN(int64_t priority, IntParam(*d, "priority"));
      dim.priority = priority;
    }
    sharding.dims.push_back(std::move(dim));
  }
  EMBER_ASSIGN_OR_RETURN(sharding.replicated_axes, ImportAxisRefs(attr, "replicated_axes"));
  EMBER_ASSIGN_OR_RETURN(sharding.unreduced_axes, ImportAxisRefs(attr, "unreduced_axes"));
  return sharding;
}

// ---- GSPMD sharding strings -------------------------------------------------------------------

class GspmdReader {
 public:
  explicit GspmdReader(absl::string_view text) : text_(text) {}

  absl::StatusOr<ir::Attribute> Read() {
    EMBER_ASSIGN_OR_RETURN(ir::Attribute a, Value());
    Skip();
    if (pos_ != text_.size()) return Error("unexpected text after the sharding");
    return a;
  }

 private:
  absl::StatusOr<ir::Attribute> Value() {
    Skip();
    if (!Consume('{')) return Error("expected '{'");
    Skip();
    if (Peek() == '{' || Peek() == '}') {  // a tuple sharding (maybe empty)
      std::vector<ir::Attribute> parts;
      while (!Consume('}')) {
        if (!parts.empty() && !Consume(',')) return Error("expected ',' between tuple elements");
        EMBER_ASSIGN_OR_RETURN(ir::Attribute part, Value());
        parts.push_back(std::move(part));
        Skip();
      }
      return ir::Attribute::List(std::move(parts));
    }
    ir::TensorSharding sharding;
    if (Keyword("replicated")) {
      sharding.kind = ir::TensorSharding::Kind::kReplicated;
    } else if (Keyword("manual")) {
      sharding.kind = ir::TensorSharding::Kind::kManual;
    } else if (Keyword("maximal")) {
      Skip();
      if (!Keyword("device=")) return Error("expected device= in a maximal sharding");
      EMBER_ASSIGN_OR_RETURN(int64_t device, Int());
      sharding.kind = ir::TensorSharding::Kind::kMaximal;
      sharding.maximal_device = device;
    } else if (Keyword("devices=")) {
      EMBER_ASSIGN_OR_RETURN(sharding, Tiled());
    } else {
      return Error("expected replicated, maximal, manual or devices=");
    }
    Skip();
    if (!Consume('}')) return Error("expected '}'");
    return ir::Attribute::OfSharding(std::move(sharding));
  }

  absl::StatusOr<ir::TensorSharding> Tiled() {
    EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> tiles, IntList('[', ']'));
    int64_t count = 1;
    for (int64_t t : tiles) {
      if (t < 1 || count > ir::kMaxMeshDevices / t) return Error("bad tile dimensions");
      count *= t;
    }
    std::vector<int64_t> devices;
    Skip();
    if (Keyword("<=")) {
      EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> reshape, IntList('[', ']'));
      std::vector<int64_t> perm;
      if (Keyword("T")) {
        EMBER_ASSIGN_OR_RETURN(perm, IntList('(', ')'));
      }
      absl::StatusOr<std::vector<int64_t>> iota = ir::IotaTileDevices(reshape, perm);
      if (!iota.ok()) return Error(iota.status().message());
      devices = *std::move(iota);
    } else {
      while (true) {
        EMBER_ASSIGN_OR_RETURN(int64_t d, Int());
        devices.push_back(d);
        if (!Consume(',')) break;
      }
    }
    if (static_cast<int64_t>(devices.size()) != count) {
      return Error("the device list does not fill the tiles");
    }
    bool replicate_last = false;
    Skip();
    if (Keyword("last_tile_dim_replicate")) {
      replicate_last = true;
    } else if (Keyword("last_tile_dims=")) {
      return absl::UnimplementedError(absl::StrCat(
          "GSPMD sharding \"", std::string(text_),
          "\": subgroup shardings (last_tile_dims) are not supported yet"));
    }
    const int64_t rank = static_cast<int64_t>(tiles.size()) - (replicate_last ? 1 : 0);
    absl::StatusOr<ir::TensorSharding> tiled =
        ir::TiledSharding(tiles, std::move(devices), rank, replicate_last);
    if (!tiled.ok()) return Error(tiled.status().message());
    return tiled;
  }

  absl::StatusOr<std::vector<int64_t>> IntList(char open, char close) {
    Skip();
    if (!Consume(open)) return Error(absl::StrCat("expected '", std::string(1, open), "'"));
    std::vector<int64_t> out;
    Skip();
    if (Consume(close)) return out;
    while (true) {
      EMBER_ASSIGN_OR_RETURN(int64_t v, Int());
      out.push_back(v);
      Skip();
      if (Consume(close)) return out;
      if (!Consume(',')) return Error("expected ',' in a list");
    }
  }

  absl::StatusOr<int64_t> Int() {
    Skip();
    const size_t start = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    int64_t v = 0;
    if (start == pos_ || !absl::SimpleAtoi(text_.substr(start, pos_ - start), &v)) {
      return Error("expected an integer");
    }
    return v;
  }

  void Skip() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool Consume(char c) {
    Skip();
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  bool Keyword(absl::string_view word) {
    Skip();
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("GSPMD sharding \"", std::string(text_),
                                                   "\": ", what, " at offset ", pos_));
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<std::optional<ir::Attribute>> ImportShardyAttribute(const Attribute& attr) {
  if (attr.kind != AttrKind::kDialect || attr.dialect != "sdy") return std::nullopt;
  if (attr.name == "sharding") {
    EMBER_ASSIGN_OR_RETURN(ir::TensorSharding s, ImportSharding(attr));
    return ir::Attribute::OfSharding(std::move(s));
  }
  if (attr.name == "mesh") {
    EMBER_ASSIGN_OR_RETURN(ir::Mesh mesh, ImportMesh(attr));
    return ir::Attribute::OfMesh(std::move(mesh));
  }
  if (attr.name == "sharding_per_value") {
    EMBER_ASSIGN_OR_RETURN(std::vector<const Attribute*> list, AttrList(attr, "value", "sharding"));
    std::vector<ir::Attribute> out;
    for (const Attribute* s : list) {
      EMBER_ASSIGN_OR_RETURN(ir::TensorSharding sharding, ImportSharding(*s));
      out.push_back(ir::Attribute::OfSharding(std::move(sharding)));
    }
    return ir::Attribute::List(std::move(out));
  }
  if (attr.name == "manual_axes") {
    const DialectParam* value = Param(attr, "value");
    std::vector<ir::Attribute> out;
    if (value != nullptr) {
      if (value->kind != DialectParam::Kind::kList) return Malformed(attr, "value is not a list");
      for (const DialectParam& e : value->list) {
        if (e.kind == DialectParam::Kind::kString) {
          out.push_back(ir::Attribute::String(e.s));
        } else if (e.kind == DialectParam::Kind::kAttr && e.attr != nullptr &&
                   e.attr->kind == AttrKind::kString) {
          out.push_back(ir::Attribute::String(e.attr->str));
        } else {
          return Malformed(attr, "an axis name is not a string");
        }
      }
    }
    return ir::Attribute::List(std::move(out));
  }
  return std::nullopt;
}

absl::StatusOr<ir::Attribute> ImportGspmdSharding(std::string_view text) {
  return GspmdReader(absl::string_view(text.data(), text.size())).Read();
}

}  // namespace ember::frontend
