#include "runtime/spmd_program.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "compiler/host/collective_hooks.h"
#include "compiler/ir/element_type.h"

namespace ember::runtime {

// One stage of a program with manual computations: a run of ordinary top-level instructions
// (cloned into a function of their own) or one manual computation.
struct SpmdProgram::Step {
  bool manual = false;
  std::unique_ptr<host::HostExecutable> executable;
  std::vector<const ir::Value*> inputs;
  std::vector<const ir::Value*> outputs;
  std::vector<SdySharding> in_shardings;   // manual only
  std::vector<SdySharding> out_shardings;  // manual only
  std::string where;                       // for errors
};

namespace {

using ir::printed::MatchClose;
using ir::printed::ReadInt;
using ir::printed::ReadQuoted;
using ir::printed::SkipSpace;

constexpr char kManualTarget[] = "sdy.manual_computation";

bool IsManual(const ir::Instruction& inst) {
  if (inst.opcode() != ir::Opcode::kCustomCall) return false;
  const ir::Attribute* target = inst.attribute("call_target_name");
  return target != nullptr && target->kind == ir::Attribute::Kind::kString &&
         target->s == kManualTarget;
}

std::string StringAttr(const ir::AttributeMap& attrs, std::string_view name) {
  const ir::Attribute* a = attrs.Find(name);
  if (a == nullptr || a->kind != ir::Attribute::Kind::kString) return "";
  return a->s;
}

// Parses one sharding starting at the '@' of its mesh reference; pos ends after its dims list.
absl::StatusOr<SdySharding> ParseShardingAt(const std::string& text, size_t& pos) {
  SdySharding sharding;
  if (pos >= text.size() || text[pos] != '@') {
    return absl::UnimplementedError(
        absl::StrCat("sharding '", text, "': only shardings over a named mesh (@mesh) are supported"));
  }
  ++pos;
  while (pos < text.size() && text[pos] != ',' && text[pos] != '>' &&
         !std::isspace(static_cast<unsigned char>(text[pos]))) {
    sharding.mesh.push_back(text[pos++]);
  }
  if (!sharding.mesh.empty() && sharding.mesh.front() == '"') {
    sharding.mesh = sharding.mesh.substr(1, sharding.mesh.size() - 2);
  }
  pos = text.find('[', pos);
  if (pos == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("sharding '", text, "' has no dimension list"));
  }
  ++pos;
  while (true) {
    SkipSpace(text, pos);
    if (pos >= text.size()) return absl::InvalidArgumentError(absl::StrCat("sharding '", text, "' is cut short"));
    if (text[pos] == ']') {
      ++pos;
      break;
    }
    if (text[pos] == ',') {
      ++pos;
      continue;
    }
    if (text[pos] != '{') {
      return absl::InvalidArgumentError(absl::StrCat("sharding '", text, "': expected '{' at ", pos));
    }
    ++pos;
    std::vector<std::string> axes;
    while (pos < text.size() && text[pos] != '}') {
      if (text[pos] == '"') {
        axes.push_back(ReadQuoted(text, pos));
        if (pos < text.size() && text[pos] == ':') {
          return absl::UnimplementedError(
              absl::StrCat("sharding '", text, "': sub-axes are not supported yet"));
        }
      } else {
        ++pos;  // ',', spaces, '?' (open dimension)
      }
    }
    ++pos;
    sharding.dims.push_back(std::move(axes));
  }
  return sharding;
}

// Row-major sub-array copy between a global array and a shard at `offsets` (in global
// coordinates). to_global: shard -> global.
void CopyBlock(const ir::Shape& global_shape, uint8_t* global, const ir::Shape& shard_shape,
               uint8_t* shard, absl::Span<const int64_t> offsets, bool to_global) {
  const int64_t esize = ir::StorageBytes(global_shape.element_type());
  const int64_t rank = global_shape.rank();
  if (shard_shape.element_count() == 0) return;
  if (rank == 0) {
    if (to_global) {
      std::memcpy(global, shard, esize);
    } else {
      std::memcpy(shard, global, esize);
    }
    return;
  }
  std::vector<int64_t> gstride(rank, 1);
  for (int64_t i = rank - 2; i >= 0; --i) gstride[i] = gstride[i + 1] * global_shape.dim(i + 1);
  const int64_t row = shard_shape.dim(rank - 1) * esize;
  const int64_t rows = shard_shape.element_count() / shard_shape.dim(rank - 1);
  std::vector<int64_t> index(rank, 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t g = 0;
    for (int64_t i = 0; i < rank; ++i) g += (index[i] + offsets[i]) * gstride[i];
    uint8_t* gp = global + g * esize;
    uint8_t* sp = shard + r * row;
    if (to_global) {
      std::memcpy(gp, sp, row);
    } else {
      std::memcpy(sp, gp, row);
    }
    for (int64_t i = rank - 2; i >= 0; --i) {
      if (++index[i] < shard_shape.dim(i)) break;
      index[i] = 0;
    }
  }
}

// Offsets (global coordinates) of device `id`'s shard.
absl::StatusOr<std::vector<int64_t>> ShardOffsets(absl::Span<const int64_t> global_dims,
                                                  const SdySharding& sharding, const SdyMesh& mesh,
                                                  int64_t id) {
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> shard, ShardDims(global_dims, sharding, mesh));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> coords, mesh.Coordinates(id));
  std::vector<int64_t> offsets(global_dims.size(), 0);
  for (size_t d = 0; d < sharding.dims.size() && d < global_dims.size(); ++d) {
    int64_t index = 0;
    for (const std::string& axis : sharding.dims[d]) {
      const auto it = std::find(mesh.axes.begin(), mesh.axes.end(), axis);
      const size_t a = it - mesh.axes.begin();
      index = index * mesh.sizes[a] + coords[a];
    }
    offsets[d] = index * shard[d];
  }
  return offsets;
}

// The generic printed form of #sdy.sharding: mesh_or_ref = @m, dim_shardings = [
// #sdy.dimension_sharding<axes = [#sdy.axis_ref<name = "x", ...>, ...], ...>, ...].
absl::StatusOr<SdySharding> ParseGenericSharding(const std::string& text) {
  SdySharding sharding;
  size_t pos = text.find("mesh_or_ref = ");
  if (pos == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("sharding '", text, "' has no mesh"));
  }
  pos += 14;
  if (pos >= text.size() || text[pos] != '@') {
    return absl::UnimplementedError(absl::StrCat(
        "sharding '", text, "': only shardings over a named mesh (@mesh) are supported"));
  }
  ++pos;
  if (pos < text.size() && text[pos] == '"') {
    sharding.mesh = ReadQuoted(text, pos);
  } else {
    while (pos < text.size() && text[pos] != ',' && text[pos] != '>' &&
           !std::isspace(static_cast<unsigned char>(text[pos]))) {
      sharding.mesh.push_back(text[pos++]);
    }
  }
  pos = text.find("dim_shardings = [", pos);
  if (pos == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("sharding '", text, "' has no dim_shardings"));
  }
  const size_t list_open = pos + 16;
  const size_t list_close = MatchClose(text, list_open);
  if (list_close == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("sharding '", text, "' is unbalanced"));
  }
  const std::string marker = "#sdy.dimension_sharding<";
  for (size_t at = text.find(marker, list_open); at != std::string::npos && at < list_close;
       at = text.find(marker, at + 1)) {
    const size_t open = at + marker.size() - 1;
    const size_t close = MatchClose(text, open);
    if (close == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("sharding '", text, "' is unbalanced"));
    }
    const std::string dim = text.substr(open, close - open + 1);
    if (dim.find("#sdy.sub_axis_info") != std::string::npos) {
      return absl::UnimplementedError(
          absl::StrCat("sharding '", text, "': sub-axes are not supported yet"));
    }
    std::vector<std::string> axes;
    for (size_t n = dim.find("name = \""); n != std::string::npos; n = dim.find("name = \"", n)) {
      n += 7;
      axes.push_back(ReadQuoted(dim, n));
    }
    sharding.dims.push_back(std::move(axes));
    at = close;
  }
  return sharding;
}

absl::StatusOr<ir::Shape> ShapeOf(ir::ElementType type, absl::Span<const int64_t> dims) {
  return ir::Shape::Make(type, dims);
}

}  // namespace

std::vector<std::string> ParseQuotedNames(const std::string& text) {
  std::vector<std::string> names;
  size_t pos = 0;
  while ((pos = text.find('"', pos)) != std::string::npos) names.push_back(ReadQuoted(text, pos));
  return names;
}

absl::StatusOr<SdySharding> ParseSdySharding(const std::string& text) {
  if (text.find("dim_shardings") != std::string::npos) return ParseGenericSharding(text);
  size_t pos = text.find('@');
  if (pos == std::string::npos) pos = text.size();
  return ParseShardingAt(text, pos);
}

absl::StatusOr<std::vector<SdySharding>> ParseSdyShardingList(const std::string& text) {
  std::vector<SdySharding> list;
  if (text.find("dim_shardings") != std::string::npos) {
    const std::string marker = "#sdy.sharding<";
    for (size_t at = text.find(marker); at != std::string::npos; at = text.find(marker, at + 1)) {
      const size_t close = MatchClose(text, at + marker.size() - 1);
      if (close == std::string::npos) {
        return absl::InvalidArgumentError(absl::StrCat("shardings '", text, "' are unbalanced"));
      }
      EMBER_ASSIGN_OR_RETURN(SdySharding s, ParseGenericSharding(text.substr(at, close - at + 1)));
      list.push_back(std::move(s));
      at = close;
    }
    return list;
  }
  size_t pos = 0;
  while ((pos = text.find('@', pos)) != std::string::npos) {
    EMBER_ASSIGN_OR_RETURN(SdySharding s, ParseShardingAt(text, pos));
    list.push_back(std::move(s));
  }
  return list;
}

absl::StatusOr<std::vector<int64_t>> ShardDims(absl::Span<const int64_t> global_dims,
                                               const SdySharding& sharding, const SdyMesh& mesh) {
  if (sharding.dims.size() != global_dims.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a sharding of rank ", sharding.dims.size(), " for an array of rank ",
                     global_dims.size()));
  }
  std::vector<int64_t> dims(global_dims.begin(), global_dims.end());
  for (size_t d = 0; d < dims.size(); ++d) {
    int64_t n = 1;
    for (const std::string& axis : sharding.dims[d]) {
      const auto it = std::find(mesh.axes.begin(), mesh.axes.end(), axis);
      if (it == mesh.axes.end()) {
        return absl::InvalidArgumentError(absl::StrCat("axis \"", axis, "\" is not in the mesh"));
      }
      n *= mesh.sizes[it - mesh.axes.begin()];
    }
    if (dims[d] % n != 0) {
      return absl::UnimplementedError(absl::StrCat(
          "dimension ", d, " of size ", dims[d], " does not split evenly into ", n,
          " shards (uneven shardings are not supported yet)"));
    }
    dims[d] /= n;
  }
  return dims;
}

absl::StatusOr<ir::Literal> ExtractShard(const ir::Literal& global, const SdySharding& sharding,
                                         const SdyMesh& mesh, int64_t id) {
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ShardDims(global.shape().dims(), sharding, mesh));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> offsets,
                         ShardOffsets(global.shape().dims(), sharding, mesh, id));
  EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ShapeOf(global.element_type(), dims));
  EMBER_ASSIGN_OR_RETURN(ir::Literal shard, ir::Literal::Create(shape));
  CopyBlock(global.shape(), const_cast<uint8_t*>(global.bytes().data()), shape,
            shard.mutable_bytes().data(), offsets, /*to_global=*/false);
  return shard;
}

absl::Status InsertShard(const ir::Literal& shard, const SdySharding& sharding,
                         const SdyMesh& mesh, int64_t id, ir::Literal& global) {
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ShardDims(global.shape().dims(), sharding, mesh));
  if (dims != shard.shape().dims() || shard.element_type() != global.element_type()) {
    return absl::InvalidArgumentError(absl::StrCat("shard ", shard.shape().ToString(),
                                                   " does not match ", global.shape().ToString(),
                                                   " split as [", absl::StrJoin(dims, ","), "]"));
  }
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> offsets,
                         ShardOffsets(global.shape().dims(), sharding, mesh, id));
  CopyBlock(global.shape(), global.mutable_bytes().data(), shard.shape(),
            const_cast<uint8_t*>(shard.bytes().data()), offsets, /*to_global=*/true);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<std::pair<SdyMesh, SdySharding>>> ParseGspmdSharding(
    const std::string& text, int64_t rank) {
  auto error = [&](const std::string& what) {
    return absl::UnimplementedError(absl::StrCat("mhlo.sharding \"", text, "\": ", what));
  };
  if (text.find("replicated}") != std::string::npos && text.find("devices=") == std::string::npos) {
    return std::optional<std::pair<SdyMesh, SdySharding>>();
  }
  if (text.find("maximal") != std::string::npos) return error("maximal shardings are not supported yet");
  if (text.find("last_tile_dims") != std::string::npos || text.find("manual") != std::string::npos) {
    return error("manual or grouped subgroup shardings are not supported yet");
  }
  size_t pos = text.find("devices=[");
  if (pos == std::string::npos) return error("expected devices=[...]");
  pos += 9;
  std::vector<int64_t> tile;
  while (pos < text.size() && text[pos] != ']') {
    if (text[pos] == ',') {
      ++pos;
      continue;
    }
    EMBER_ASSIGN_OR_RETURN(int64_t d, ReadInt(text, pos));
    tile.push_back(d);
  }
  ++pos;
  int64_t count = 1;
  for (int64_t d : tile) count *= d;
  std::vector<int64_t> ids;
  SkipSpace(text, pos);
  if (text.compare(pos, 3, "<=[") == 0) {
    // Iota device list: iota(prod(dims)) reshaped to dims, optionally transposed, flattened.
    pos += 3;
    std::vector<int64_t> dims;
    while (pos < text.size() && text[pos] != ']') {
      if (text[pos] == ',') {
        ++pos;
        continue;
      }
      EMBER_ASSIGN_OR_RETURN(int64_t d, ReadInt(text, pos));
      dims.push_back(d);
    }
    ++pos;
    std::vector<int64_t> perm;
    for (size_t i = 0; i < dims.size(); ++i) perm.push_back(static_cast<int64_t>(i));
    if (text.compare(pos, 2, "T(") == 0) {
      pos += 2;
      perm.clear();
      while (pos < text.size() && text[pos] != ')') {
        if (text[pos] == ',') {
          ++pos;
          continue;
        }
        EMBER_ASSIGN_OR_RETURN(int64_t d, ReadInt(text, pos));
        perm.push_back(d);
      }
      ++pos;
    }
    if (perm.size() != dims.size()) return error("bad transpose");
    std::vector<int64_t> tdims;
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(dims.size())) return error("bad transpose");
      tdims.push_back(dims[p]);
    }
    std::vector<int64_t> strides(dims.size(), 1);
    for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * dims[i + 1];
    std::vector<int64_t> index(tdims.size(), 0);
    for (int64_t k = 0; k < count; ++k) {
      int64_t v = 0;
      for (size_t i = 0; i < tdims.size(); ++i) v += index[i] * strides[perm[i]];
      ids.push_back(v);
      for (int64_t i = static_cast<int64_t>(tdims.size()) - 1; i >= 0; --i) {
        if (++index[i] < tdims[i]) break;
        index[i] = 0;
      }
    }
  } else {
    while (pos < text.size() && (std::isdigit(static_cast<unsigned char>(text[pos])) || text[pos] == ',')) {
      if (text[pos] == ',') {
        ++pos;
        continue;
      }
      EMBER_ASSIGN_OR_RETURN(int64_t d, ReadInt(text, pos));
      ids.push_back(d);
    }
  }
  if (static_cast<int64_t>(ids.size()) != count) return error("the device list does not fill the tiles");
  const bool replicate_last = text.find("last_tile_dim_replicate") != std::string::npos;
  if (static_cast<int64_t>(tile.size()) != rank + (replicate_last ? 1 : 0)) {
    return error(absl::StrCat("tile rank ", tile.size(), " for an array of rank ", rank));
  }
  SdyMesh mesh;
  SdySharding sharding;
  sharding.mesh = text;
  for (size_t i = 0; i < tile.size(); ++i) {
    mesh.axes.push_back(absl::StrCat("_tile", i));
    mesh.sizes.push_back(tile[i]);
    if (static_cast<int64_t>(i) < rank) {
      sharding.dims.push_back(tile[i] > 1 ? std::vector<std::string>{mesh.axes.back()}
                                          : std::vector<std::string>{});
    }
  }
  mesh.device_ids = std::move(ids);
  return std::optional<std::pair<SdyMesh, SdySharding>>(
      std::make_pair(std::move(mesh), std::move(sharding)));
}

SpmdProgram::~SpmdProgram() = default;

namespace {

// A sharding over `mesh` as a GSPMD string with an explicit device list.
std::string ToGspmd(const std::optional<SdySharding>& sharding, const SdyMesh* mesh, int64_t rank) {
  if (!sharding.has_value() || mesh == nullptr) return "{replicated}";
  std::vector<int64_t> tiles(rank, 1);
  std::vector<bool> used(mesh->axes.size(), false);
  for (int64_t d = 0; d < rank && d < static_cast<int64_t>(sharding->dims.size()); ++d) {
    for (const std::string& axis : sharding->dims[d]) {
      const size_t a = std::find(mesh->axes.begin(), mesh->axes.end(), axis) - mesh->axes.begin();
      if (a >= mesh->axes.size()) continue;
      tiles[d] *= mesh->sizes[a];
      used[a] = true;
    }
  }
  int64_t tiled = 1;
  for (int64_t t : tiles) tiled *= t;
  if (tiled == 1) return "{replicated}";
  const int64_t replicas = mesh->size() / tiled;
  std::vector<int64_t> all_tiles = tiles;
  if (replicas > 1) all_tiles.push_back(replicas);
  std::vector<int64_t> assignment(mesh->size(), -1);
  for (int64_t id = 0; id < mesh->size(); ++id) {
    const int64_t logical = mesh->device_ids.empty() ? id : mesh->device_ids[id];
    absl::StatusOr<std::vector<int64_t>> coords = mesh->Coordinates(logical);
    if (!coords.ok()) return "{replicated}";
    std::vector<int64_t> index(all_tiles.size(), 0);
    for (int64_t d = 0; d < rank && d < static_cast<int64_t>(sharding->dims.size()); ++d) {
      for (const std::string& axis : sharding->dims[d]) {
        const size_t a = std::find(mesh->axes.begin(), mesh->axes.end(), axis) - mesh->axes.begin();
        if (a < mesh->axes.size()) index[d] = index[d] * mesh->sizes[a] + (*coords)[a];
      }
    }
    if (replicas > 1) {
      for (size_t a = 0; a < mesh->axes.size(); ++a) {
        if (!used[a]) index.back() = index.back() * mesh->sizes[a] + (*coords)[a];
      }
    }
    int64_t flat = 0;
    for (size_t i = 0; i < all_tiles.size(); ++i) flat = flat * all_tiles[i] + index[i];
    assignment[flat] = logical;
  }
  return absl::StrCat("{devices=[", absl::StrJoin(all_tiles, ","), "]",
                      absl::StrJoin(assignment, ","),
                      replicas > 1 ? " last_tile_dim_replicate}" : "}");
}

std::string ZeroConstant(const ir::ValueType& type) {
  const ir::ElementType e = type.element_type();
  std::string value = "0";
  if (e == ir::ElementType::kPred) {
    value = "false";
  } else if (ir::IsComplex(e)) {
    value = "(0.000000e+00,0.000000e+00)";
  } else if (ir::IsFloat(e)) {
    value = "0.000000e+00";
  }
  return absl::StrCat("dense<", value, "> : ", type.ToString());
}

}  // namespace

std::vector<std::string> SpmdProgram::ParameterShardingStrings() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < param_shardings_.size(); ++i) {
    const SdyMesh* mesh = nullptr;
    if (param_shardings_[i].has_value()) {
      absl::StatusOr<const SdyMesh*> m = MeshOf(*param_shardings_[i]);
      if (m.ok()) mesh = *m;
    }
    out.push_back(ToGspmd(param_shardings_[i], mesh,
                          static_cast<int64_t>(program_->parameter_types[i].dims().size())));
  }
  return out;
}

std::vector<std::string> SpmdProgram::ResultShardingStrings() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < result_shardings_.size(); ++i) {
    const SdyMesh* mesh = nullptr;
    if (result_shardings_[i].has_value()) {
      absl::StatusOr<const SdyMesh*> m = MeshOf(*result_shardings_[i]);
      if (m.ok()) mesh = *m;
    }
    out.push_back(ToGspmd(result_shardings_[i], mesh,
                          static_cast<int64_t>(program_->result_types[i].dims().size())));
  }
  return out;
}

std::string SpmdProgram::SignatureModuleText(const std::string& name) const {
  const std::vector<std::string> params = ParameterShardingStrings();
  const std::vector<std::string> results = ResultShardingStrings();
  // The module attributes carry the shardings to the HloModule's spmd_parameters_shardings /
  // spmd_output_sharding (what the framework reads); the per-value attributes say the same.
  std::vector<std::string> quoted;
  for (const std::string& p : params) quoted.push_back(absl::StrCat("\"", p, "\""));
  std::string output = results.size() == 1 ? results[0]
                                           : absl::StrCat("{", absl::StrJoin(results, ", "), "}");
  std::string text = absl::StrCat(
      "module @", name.empty() ? "main" : name, " attributes {mhlo.num_partitions = ",
      device_ids_.size(), " : i32, mhlo.num_replicas = 1 : i32",
      results.empty() ? "" : absl::StrCat(", mhlo.spmd_output_sharding = \"", output, "\""),
      ", mhlo.spmd_parameters_shardings = [", absl::StrJoin(quoted, ", "),
      "]} {\n  func.func public @main(");
  for (size_t i = 0; i < params.size(); ++i) {
    absl::StrAppend(&text, i ? ", " : "", "%arg", i, ": ", program_->parameter_types[i].ToString(),
                    " {mhlo.sharding = \"", params[i], "\"}");
  }
  absl::StrAppend(&text, ") -> (");
  for (size_t i = 0; i < results.size(); ++i) {
    absl::StrAppend(&text, i ? ", " : "", program_->result_types[i].ToString(),
                    " {mhlo.sharding = \"", results[i], "\"}");
  }
  absl::StrAppend(&text, ") {\n");
  std::vector<std::string> names, types;
  for (size_t i = 0; i < results.size(); ++i) {
    absl::StrAppend(&text, "    %r", i, " = stablehlo.constant ",
                    ZeroConstant(program_->result_types[i]), "\n");
    names.push_back(absl::StrCat("%r", i));
    types.push_back(program_->result_types[i].ToString());
  }
  absl::StrAppend(&text, "    return ", absl::StrJoin(names, ", "),
                  names.empty() ? "" : " : ", absl::StrJoin(types, ", "), "\n  }\n}\n");
  return text;
}

absl::StatusOr<const SdyMesh*> SpmdProgram::MeshOf(const SdySharding& sharding) const {
  for (const auto& [name, mesh] : meshes_) {
    if (name == sharding.mesh) return &mesh;
  }
  return absl::InvalidArgumentError(absl::StrCat("no sdy.mesh named @", sharding.mesh));
}

absl::StatusOr<std::unique_ptr<SpmdProgram>> SpmdProgram::Create(
    compiler::CompiledProgram& program, std::vector<int64_t> device_ids) {
  auto spmd = std::unique_ptr<SpmdProgram>(new SpmdProgram());
  spmd->program_ = &program;
  spmd->device_ids_ = std::move(device_ids);
  const int64_t n = static_cast<int64_t>(spmd->device_ids_.size());
  ir::Module& module = *program.module;
  ir::Computation& entry = *program.entry;
  if (const ir::Attribute* meshes = module.attributes().Find("sdy.meshes");
      meshes != nullptr && meshes->kind == ir::Attribute::Kind::kDict) {
    for (const auto& [name, value] : meshes->dict) {
      if (value.kind != ir::Attribute::Kind::kString) continue;
      absl::StatusOr<SdyMesh> mesh = ParseSdyMesh(value.s);
      if (!mesh.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("sdy.mesh @", name, ": ", std::string(mesh.status().message())));
      }
      spmd->meshes_.emplace_back(name, *std::move(mesh));
    }
  }
  // Entry shardings; an unannotated value is replicated.
  auto read = [&](const std::vector<ir::AttributeMap>& attrs, size_t count,
                  const std::vector<ir::ValueType>& types, const char* what,
                  std::vector<std::optional<SdySharding>>& shardings,
                  std::vector<ir::ValueType>& shard_types) -> absl::Status {
    for (size_t i = 0; i < count; ++i) {
      std::optional<SdySharding> sharding;
      if (i < attrs.size()) {
        const std::string gspmd = StringAttr(attrs[i], "mhlo.sharding");
        if (!gspmd.empty() && attrs[i].Find("sdy.sharding") == nullptr) {
          // GSPMD: the tile assignment becomes a mesh of its own (one axis per tile dimension,
          // its device list as the mesh's device order).
          absl::StatusOr<std::optional<std::pair<SdyMesh, SdySharding>>> g =
              ParseGspmdSharding(gspmd, static_cast<int64_t>(types[i].dims().size()));
          if (!g.ok()) {
            return absl::Status(g.status().code(), absl::StrCat(what, " ", i, ": ",
                                                                std::string(g.status().message())));
          }
          if (g->has_value()) {
            bool known = false;
            for (const auto& [name, mesh] : spmd->meshes_) known |= name == gspmd;
            if (!known) spmd->meshes_.emplace_back(gspmd, (*g)->first);
            sharding = (*g)->second;
          }
        }
        const std::string text = StringAttr(attrs[i], "sdy.sharding");
        if (!text.empty()) {
          absl::StatusOr<SdySharding> s = ParseSdySharding(text);
          if (!s.ok()) {
            return absl::Status(s.status().code(), absl::StrCat(what, " ", i, ": ",
                                                                std::string(s.status().message())));
          }
          sharding = *std::move(s);
        }
      }
      ir::ValueType type = types[i];
      if (sharding.has_value()) {
        EMBER_ASSIGN_OR_RETURN(const SdyMesh* mesh, spmd->MeshOf(*sharding));
        if (mesh->size() != n) {
          return absl::UnimplementedError(absl::StrCat(what, " ", i, " is sharded over a mesh of ",
                                                       mesh->size(), " devices; the program runs on ", n));
        }
        absl::StatusOr<std::vector<int64_t>> dims = ShardDims(type.dims(), *sharding, *mesh);
        if (!dims.ok()) {
          return absl::Status(dims.status().code(), absl::StrCat(what, " ", i, " (", type.ToString(), "): ",
                                                                 std::string(dims.status().message())));
        }
        EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ShapeOf(type.element_type(), *dims));
        type = ir::ValueType::Tensor(shape);
      }
      shardings.push_back(std::move(sharding));
      shard_types.push_back(std::move(type));
    }
    return absl::OkStatus();
  };
  EMBER_RETURN_IF_ERROR(read(entry.arg_attributes(), program.parameter_types.size(),
                             program.parameter_types, "argument", spmd->param_shardings_,
                             spmd->shard_params_));
  EMBER_RETURN_IF_ERROR(read(entry.result_attributes(), program.result_types.size(),
                             program.result_types, "result", spmd->result_shardings_,
                             spmd->shard_results_));

  // Stages, when the entry has manual computations.
  bool has_manual = false;
  for (const auto& inst : entry.instructions()) has_manual |= IsManual(*inst);
  if (!has_manual) return spmd;
  std::vector<std::vector<const ir::Instruction*>> segments;
  std::vector<const ir::Instruction*> current;
  std::vector<std::pair<bool, size_t>> order;  // (manual, index into segments or manual list)
  std::vector<const ir::Instruction*> manuals;
  const ir::Instruction* ret = entry.return_instruction();
  for (const auto& inst : entry.instructions()) {
    if (inst.get() == ret) continue;
    if (IsManual(*inst)) {
      if (!current.empty()) {
        order.emplace_back(false, segments.size());
        segments.push_back(std::move(current));
        current.clear();
      }
      order.emplace_back(true, manuals.size());
      manuals.push_back(inst.get());
    } else {
      current.push_back(inst.get());
    }
  }
  if (!current.empty()) {
    order.emplace_back(false, segments.size());
    segments.push_back(std::move(current));
  }
  // Which values each step reads (to know what a segment must return).
  absl::flat_hash_set<const ir::Value*> read_later;
  std::vector<absl::flat_hash_set<const ir::Value*>> read_after(order.size() + 1);
  for (const ir::Value* v : ret->operands()) read_after[order.size()].insert(v);
  for (int64_t k = static_cast<int64_t>(order.size()) - 1; k >= 0; --k) {
    read_after[k] = read_after[k + 1];
    const auto& [manual, index] = order[k];
    auto add = [&](const ir::Instruction* inst) {
      for (const ir::Value* v : inst->operands()) read_after[k].insert(v);
    };
    if (manual) {
      add(manuals[index]);
    } else {
      for (const ir::Instruction* inst : segments[index]) add(inst);
    }
  }
  int segment_number = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const auto& [manual, index] = order[k];
    auto step = std::make_unique<Step>();
    step->manual = manual;
    if (manual) {
      const ir::Instruction& inst = *manuals[index];
      step->where = inst.Describe();
      auto sharding_list = [&](const char* name) -> absl::StatusOr<std::vector<SdySharding>> {
        absl::StatusOr<std::vector<SdySharding>> list =
            ParseSdyShardingList(StringAttr(inst.attributes(), name));
        if (!list.ok()) {
          return absl::Status(list.status().code(), absl::StrCat(step->where, ": ", name, ": ",
                                                                 std::string(list.status().message())));
        }
        return list;
      };
      EMBER_ASSIGN_OR_RETURN(step->in_shardings, sharding_list("in_shardings"));
      EMBER_ASSIGN_OR_RETURN(step->out_shardings, sharding_list("out_shardings"));
      if (step->in_shardings.size() != inst.operands().size() ||
          step->out_shardings.size() != inst.num_results()) {
        return absl::InvalidArgumentError(absl::StrCat(step->where, ": ", step->in_shardings.size(),
                                                       " in_shardings for ", inst.operands().size(),
                                                       " operands, ", step->out_shardings.size(),
                                                       " out_shardings for ", inst.num_results(),
                                                       " results"));
      }
      const std::vector<std::string> manual_axes =
          ParseQuotedNames(StringAttr(inst.attributes(), "manual_axes"));
      for (const SdySharding& s : step->in_shardings) {
        EMBER_ASSIGN_OR_RETURN(const SdyMesh* mesh, spmd->MeshOf(s));
        if (mesh->size() != n) {
          return absl::UnimplementedError(absl::StrCat(step->where, ": a mesh of ", mesh->size(),
                                                       " devices; the program runs on ", n));
        }
        for (size_t a = 0; a < mesh->axes.size(); ++a) {
          if (mesh->sizes[a] > 1 &&
              std::find(manual_axes.begin(), manual_axes.end(), mesh->axes[a]) == manual_axes.end()) {
            return absl::UnimplementedError(absl::StrCat(
                step->where, ": mesh axis \"", mesh->axes[a],
                "\" is not manual; partially manual computations are not supported yet"));
          }
        }
      }
      if (inst.callee() == nullptr) return absl::InvalidArgumentError(absl::StrCat(step->where, ": no body"));
      EMBER_ASSIGN_OR_RETURN(step->executable, host::HostExecutable::Compile(*inst.callee()));
      for (const ir::Value* v : inst.operands()) step->inputs.push_back(v);
      for (size_t r = 0; r < inst.num_results(); ++r) step->outputs.push_back(inst.result(r));
    } else {
      // Clone the segment into a function of its own.
      const std::vector<const ir::Instruction*>& seg = segments[index];
      absl::flat_hash_set<const ir::Instruction*> in_segment(seg.begin(), seg.end());
      EMBER_ASSIGN_OR_RETURN(ir::Computation * fn,
                             module.AddFunction(absl::StrCat(entry.name(), ".spmd_stage.",
                                                             segment_number++)));
      absl::flat_hash_map<const ir::Value*, ir::Value*> map;
      for (const ir::Instruction* inst : seg) {
        // Regions of these instructions must not read entry values directly.
        std::vector<const ir::Computation*> stack(inst->regions().begin(), inst->regions().end());
        while (!stack.empty()) {
          const ir::Computation* region = stack.back();
          stack.pop_back();
          for (const auto& inner : region->instructions()) {
            for (const ir::Value* v : inner->operands()) {
              if (v->owner() == &entry) {
                return absl::UnimplementedError(absl::StrCat(
                    inst->Describe(), ": a region that reads values of the entry directly next to "
                    "an sdy.manual_computation is not supported yet"));
              }
            }
            for (const ir::Computation* r : inner->regions()) stack.push_back(r);
          }
        }
        std::vector<ir::Value*> operands;
        for (const ir::Value* v : inst->operands()) {
          auto it = map.find(v);
          if (it == map.end()) {
            ir::Value* p = fn->AddParameter(v->type());
            step->inputs.push_back(v);
            it = map.emplace(v, p).first;
          }
          operands.push_back(it->second);
        }
        std::vector<ir::ValueType> types;
        for (size_t r = 0; r < inst->num_results(); ++r) types.push_back(inst->result(r)->type());
        ir::Instruction* copy = fn->AddInstruction(inst->opcode(), std::move(operands), std::move(types),
                                                   inst->attributes(), inst->regions(),
                                                   inst->location());
        copy->set_callee(inst->callee());
        for (size_t r = 0; r < inst->num_results(); ++r) map[inst->result(r)] = copy->result(r);
      }
      std::vector<ir::Value*> returned;
      for (const ir::Instruction* inst : seg) {
        for (size_t r = 0; r < inst->num_results(); ++r) {
          if (read_after[k + 1].contains(inst->result(r))) {
            step->outputs.push_back(inst->result(r));
            returned.push_back(map.at(inst->result(r)));
          }
        }
      }
      fn->AddInstruction(ir::Opcode::kReturn, std::move(returned), {});
      step->where = fn->name();
      EMBER_ASSIGN_OR_RETURN(step->executable, host::HostExecutable::Compile(*fn));
    }
    spmd->steps_.push_back(std::move(step));
  }
  return spmd;
}

absl::StatusOr<std::vector<std::vector<ir::Literal>>> SpmdProgram::Run(
    std::vector<std::vector<ir::Literal>> shards, collectives::InProcessCollectives& hub,
    uint64_t run_id, eval::ExternalCalls* external_calls) const {
  eval::EvalOptions plain;
  plain.external_calls = external_calls;  // FFI handlers (host callbacks) the program calls
  const int64_t n = static_cast<int64_t>(device_ids_.size());
  const compiler::CompiledProgram& program = *program_;
  // Global arguments.
  std::vector<eval::EvalValue> globals;
  for (size_t i = 0; i < param_shardings_.size(); ++i) {
    if (!param_shardings_[i].has_value()) {
      EMBER_ASSIGN_OR_RETURN(ir::Literal copy, shards[0][i].Clone());
      globals.push_back(eval::EvalValue::Array(std::move(copy)));
      continue;
    }
    EMBER_ASSIGN_OR_RETURN(const SdyMesh* mesh, MeshOf(*param_shardings_[i]));
    EMBER_ASSIGN_OR_RETURN(ir::Literal global, ir::Literal::Create(program.parameter_types[i].shape()));
    for (int64_t d = 0; d < n; ++d) {
      EMBER_RETURN_IF_ERROR(InsertShard(shards[d][i], *param_shardings_[i], *mesh, d, global));
    }
    globals.push_back(eval::EvalValue::Array(std::move(global)));
  }
  std::vector<eval::EvalValue> outputs;
  if (steps_.empty()) {
    EMBER_ASSIGN_OR_RETURN(outputs, program.host->Run(std::move(globals), plain));
  } else {
    absl::flat_hash_map<const ir::Value*, eval::EvalValue> env;
    for (size_t i = 0; i < globals.size(); ++i) env[program.entry->parameter(i)] = std::move(globals[i]);
    auto topology = std::make_shared<host::LaunchTopology>();
    topology->num_partitions = n;
    topology->device_ids = device_ids_;
    auto fetch = [&](const ir::Value* v) -> absl::StatusOr<eval::EvalValue> {
      auto it = env.find(v);
      if (it == env.end()) return absl::InternalError("an SPMD stage reads a value nobody made");
      return it->second.TryClone();
    };
    for (const auto& step : steps_) {
      if (!step->manual) {
        std::vector<eval::EvalValue> args;
        for (const ir::Value* v : step->inputs) {
          EMBER_ASSIGN_OR_RETURN(eval::EvalValue value, fetch(v));
          args.push_back(std::move(value));
        }
        EMBER_ASSIGN_OR_RETURN(std::vector<eval::EvalValue> out,
                               step->executable->Run(std::move(args), plain));
        for (size_t r = 0; r < out.size() && r < step->outputs.size(); ++r) {
          env[step->outputs[r]] = std::move(out[r]);
        }
        continue;
      }
      // A manual computation: the body once per device, concurrently.
      std::vector<std::vector<eval::EvalValue>> local(n);
      for (size_t k = 0; k < step->inputs.size(); ++k) {
        auto it = env.find(step->inputs[k]);
        if (it == env.end() || it->second.kind != eval::EvalValue::Kind::kArray) {
          return absl::InternalError(absl::StrCat(step->where, ": operand ", k, " is missing"));
        }
        EMBER_ASSIGN_OR_RETURN(const SdyMesh* mesh, MeshOf(step->in_shardings[k]));
        for (int64_t d = 0; d < n; ++d) {
          absl::StatusOr<ir::Literal> piece = ExtractShard(it->second.array, step->in_shardings[k], *mesh, d);
          if (!piece.ok()) {
            return absl::Status(piece.status().code(), absl::StrCat(step->where, ": operand ", k, ": ",
                                                                    std::string(piece.status().message())));
          }
          local[d].push_back(eval::EvalValue::Array(*std::move(piece)));
        }
      }
      std::vector<absl::StatusOr<std::vector<eval::EvalValue>>> results;
      for (int64_t d = 0; d < n; ++d) results.emplace_back(absl::UnknownError("not run"));
      host::JoinFn join = [&hub](const collectives::CliqueKey& key, int rank) {
        return hub.Join(key, rank);
      };
      auto body = [&](int64_t d) {
        host::CommunicatorHooks hooks(join, run_id, topology, 0, d);
        eval::EvalOptions options = hooks.Options();
        options.external_calls = external_calls;
        results[d] = step->executable->Run(std::move(local[d]), options);
        if (!results[d].ok()) hub.Abort(run_id, results[d].status());
      };
      std::vector<std::thread> threads;
      for (int64_t d = 1; d < n; ++d) threads.emplace_back(body, d);
      body(0);
      for (auto& t : threads) t.join();
      for (int64_t d = 0; d < n; ++d) {
        if (!results[d].ok()) return results[d].status();
      }
      for (size_t r = 0; r < step->outputs.size(); ++r) {
        EMBER_ASSIGN_OR_RETURN(const SdyMesh* mesh, MeshOf(step->out_shardings[r]));
        const ir::ValueType& type = step->outputs[r]->type();
        EMBER_ASSIGN_OR_RETURN(ir::Literal global, ir::Literal::Create(type.shape()));
        for (int64_t d = 0; d < n; ++d) {
          if (r >= (*results[d]).size() || (*results[d])[r].kind != eval::EvalValue::Kind::kArray) {
            return absl::InternalError(absl::StrCat(step->where, ": the body returned too few values"));
          }
          absl::Status s = InsertShard((*results[d])[r].array, step->out_shardings[r], *mesh, d, global);
          if (!s.ok()) {
            return absl::Status(s.code(), absl::StrCat(step->where, ": result ", r, ": ",
                                                       std::string(s.message())));
          }
        }
        env[step->outputs[r]] = eval::EvalValue::Array(std::move(global));
      }
    }
    for (const ir::Value* v : program.entry->return_instruction()->operands()) {
      EMBER_ASSIGN_OR_RETURN(eval::EvalValue value, fetch(v));
      outputs.push_back(std::move(value));
    }
  }
  // Cut the results.
  std::vector<std::vector<ir::Literal>> per_device(n);
  for (size_t r = 0; r < outputs.size(); ++r) {
    if (outputs[r].kind != eval::EvalValue::Kind::kArray) {
      return absl::UnimplementedError(absl::StrCat("result ", r, " is not an array"));
    }
    for (int64_t d = 0; d < n; ++d) {
      if (r >= result_shardings_.size() || !result_shardings_[r].has_value()) {
        EMBER_ASSIGN_OR_RETURN(ir::Literal copy, outputs[r].array.Clone());
        per_device[d].push_back(std::move(copy));
        continue;
      }
      EMBER_ASSIGN_OR_RETURN(const SdyMesh* mesh, MeshOf(*result_shardings_[r]));
      EMBER_ASSIGN_OR_RETURN(ir::Literal piece,
                             ExtractShard(outputs[r].array, *result_shardings_[r], *mesh, d));
      per_device[d].push_back(std::move(piece));
    }
  }
  return per_device;
}

}  // namespace ember::runtime
