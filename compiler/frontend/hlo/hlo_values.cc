// Shapes, literals, shardings, replica groups and locations of an HloModuleProto in IR terms.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "compiler/frontend/hlo/hlo_import_internal.h"
#include "compiler/ir/sharding.h"

namespace ember::frontend::hlo {
namespace {

// Nested tuples deeper than this are rejected, so hostile input cannot exhaust the stack.
constexpr int kMaxTupleDepth = 64;

absl::Status FlattenInto(const proto::ShapeProto& shape, int depth,
                         std::vector<ir::ValueType>* out) {
  if (depth > kMaxTupleDepth) {
    return absl::InvalidArgumentError("tuple shape nested too deeply");
  }
  if (shape.element_type() == kPrimitiveTuple) {
    for (const proto::ShapeProto& element : shape.tuple_shapes()) {
      EMBER_RETURN_IF_ERROR(FlattenInto(element, depth + 1, out));
    }
    return absl::OkStatus();
  }
  EMBER_ASSIGN_OR_RETURN(ir::ValueType type, LeafType(shape));
  out->push_back(std::move(type));
  return absl::OkStatus();
}

// Converts `count` little-endian elements of `width` bytes held in a bytes field.
absl::Status CheckBytes(const std::string& field, const char* name, int64_t expected) {
  if (static_cast<int64_t>(field.size()) != expected) {
    return absl::InvalidArgumentError(absl::StrCat("literal field ", name, " holds ", field.size(),
                                                   " bytes, expected ", expected));
  }
  return absl::OkStatus();
}

template <typename Repeated>
absl::Status CheckCount(const Repeated& field, const char* name, int64_t expected) {
  if (static_cast<int64_t>(field.size()) != expected) {
    return absl::InvalidArgumentError(absl::StrCat("literal field ", name, " holds ", field.size(),
                                                   " values, expected ", expected));
  }
  return absl::OkStatus();
}

template <typename Repeated>
void AppendRepeated(const Repeated& field, std::vector<uint8_t>* bytes) {
  using T = typename Repeated::value_type;
  const size_t old = bytes->size();
  bytes->resize(old + field.size() * sizeof(T));
  if (field.size() > 0) std::memcpy(bytes->data() + old, field.data(), field.size() * sizeof(T));
}

// Sub-byte integers: XLA writes one element per byte; a packed field (two 4-bit elements per
// byte, low nibble first, as with element_size_in_bits = 4) is unpacked.
absl::Status SubByte(const std::string& field, const char* name, int64_t n, int bits,
                     std::vector<uint8_t>* bytes) {
  if (static_cast<int64_t>(field.size()) == n) {
    bytes->assign(field.begin(), field.end());
    return absl::OkStatus();
  }
  const int per_byte = 8 / bits;
  if (static_cast<int64_t>(field.size()) == (n + per_byte - 1) / per_byte) {
    bytes->resize(n);
    const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
    for (int64_t i = 0; i < n; ++i) {
      const uint8_t byte = static_cast<uint8_t>(field[i / per_byte]);
      (*bytes)[i] = static_cast<uint8_t>((byte >> ((i % per_byte) * bits)) & mask);
    }
    return absl::OkStatus();
  }
  return CheckBytes(field, name, n);
}

absl::StatusOr<ir::Literal> ArrayLiteral(const proto::LiteralProto& literal) {
  const proto::ShapeProto& shape = literal.shape();
  EMBER_ASSIGN_OR_RETURN(ir::ValueType type, LeafType(shape));
  if (!type.is_tensor()) return absl::InvalidArgumentError("a token constant is not supported");
  const ir::ElementType et = type.element_type();
  const int64_t n = type.shape().element_count();
  std::vector<uint8_t> bytes;
  using ET = ir::ElementType;
  switch (et) {
    case ET::kPred:
      EMBER_RETURN_IF_ERROR(CheckCount(literal.preds(), "preds", n));
      for (bool b : literal.preds()) bytes.push_back(b ? 1 : 0);
      break;
    case ET::kS8:
      EMBER_RETURN_IF_ERROR(CheckBytes(literal.s8s(), "s8s", n));
      bytes.assign(literal.s8s().begin(), literal.s8s().end());
      break;
    case ET::kU8:
      EMBER_RETURN_IF_ERROR(CheckBytes(literal.u8s(), "u8s", n));
      bytes.assign(literal.u8s().begin(), literal.u8s().end());
      break;
    case ET::kS16:
    case ET::kU16:
    case ET::kF16:
    case ET::kBF16: {
      // Little-endian on the wire, as on every host Ember runs on.
      const std::string& field = et == ET::kS16   ? literal.s16s()
                                 : et == ET::kU16 ? literal.u16s()
                                 : et == ET::kF16 ? literal.f16s()
                                                  : literal.bf16s();
      EMBER_RETURN_IF_ERROR(CheckBytes(field, "16-bit", 2 * n));
      bytes.assign(field.begin(), field.end());
      break;
    }
    case ET::kS32:
      EMBER_RETURN_IF_ERROR(CheckCount(literal.s32s(), "s32s", n));
      AppendRepeated(literal.s32s(), &bytes);
      break;
    case ET::kU32:
      EMBER_RETURN_IF_ERROR(CheckCount(literal.u32s(), "u32s", n));
      AppendRepeated(literal.u32s(), &bytes);
      break;
    case ET::kS64:
      EMBER_RETURN_IF_ERROR(CheckCount(literal.s64s(), "s64s", n));
      AppendRepeated(literal.s64s(), &bytes);
      break;
    case ET::kU64:
      EMBER_RETURN_IF_ERROR(CheckCount(literal.u64s(), "u64s", n));
      AppendRepeated(literal.u64s(), &bytes);
      break;
    case ET::kF32:
      EMBER_RETURN_IF_ERROR(CheckCount(literal.f32s(), "f32s", n));
      AppendRepeated(literal.f32s(), &bytes);
      break;
    case ET::kF64:
      EMBER_RETURN_IF_ERROR(CheckCount(literal.f64s(), "f64s", n));
      AppendRepeated(literal.f64s(), &bytes);
      break;
    case ET::kC64:
      EMBER_RETURN_IF_ERROR(CheckCount(literal.c64s(), "c64s", 2 * n));
      AppendRepeated(literal.c64s(), &bytes);
      break;
    case ET::kC128:
      EMBER_RETURN_IF_ERROR(CheckCount(literal.c128s(), "c128s", 2 * n));
      AppendRepeated(literal.c128s(), &bytes);
      break;
    case ET::kS1:
      EMBER_RETURN_IF_ERROR(SubByte(literal.s1s(), "s1s", n, 1, &bytes));
      break;
    case ET::kS2:
      EMBER_RETURN_IF_ERROR(SubByte(literal.s2s(), "s2s", n, 2, &bytes));
      break;
    case ET::kS4:
      EMBER_RETURN_IF_ERROR(SubByte(literal.s4s(), "s4s", n, 4, &bytes));
      break;
    case ET::kU1:
      EMBER_RETURN_IF_ERROR(SubByte(literal.u1s(), "u1s", n, 1, &bytes));
      break;
    case ET::kU2:
      EMBER_RETURN_IF_ERROR(SubByte(literal.u2s(), "u2s", n, 2, &bytes));
      break;
    case ET::kU4:
      EMBER_RETURN_IF_ERROR(SubByte(literal.u4s(), "u4s", n, 4, &bytes));
      break;
    case ET::kF4E2M1FN:
    case ET::kF8E3M4:
    case ET::kF8E4M3:
    case ET::kF8E4M3FN:
    case ET::kF8E4M3FNUZ:
    case ET::kF8E4M3B11FNUZ:
    case ET::kF8E5M2:
    case ET::kF8E5M2FNUZ:
    case ET::kF8E8M0FNU: {
      const std::string& field = et == ET::kF4E2M1FN        ? literal.f4e2m1fns()
                                 : et == ET::kF8E3M4        ? literal.f8e3m4s()
                                 : et == ET::kF8E4M3        ? literal.f8e4m3s()
                                 : et == ET::kF8E4M3FN      ? literal.f8e4m3fns()
                                 : et == ET::kF8E4M3FNUZ    ? literal.f8e4m3fnuzs()
                                 : et == ET::kF8E4M3B11FNUZ ? literal.f8e4m3b11fnuzs()
                                 : et == ET::kF8E5M2        ? literal.f8e5m2s()
                                 : et == ET::kF8E5M2FNUZ    ? literal.f8e5m2fnuzs()
                                                            : literal.f8e8m0fnus();
      EMBER_RETURN_IF_ERROR(CheckBytes(field, std::string(ElementTypeXlaName(et)).c_str(), n));
      bytes.assign(field.begin(), field.end());
      break;
    }
    default:
      return absl::UnimplementedError(absl::StrCat("constants of element type ",
                                                   std::string(ir::ElementTypeXlaName(et)),
                                                   " are not supported"));
  }
  // The values are in the literal's layout order; the IR keeps row-major constants.
  const int64_t rank = type.shape().rank();
  ir::Shape stored = type.shape();
  if (shape.has_layout() && shape.layout().minor_to_major_size() == rank) {
    std::vector<int64_t> m2m(shape.layout().minor_to_major().begin(),
                             shape.layout().minor_to_major().end());
    EMBER_ASSIGN_OR_RETURN(stored, ir::Shape::MakeWithLayout(et, type.dims(), m2m));
  }
  EMBER_ASSIGN_OR_RETURN(ir::Literal value, ir::Literal::FromBytes(stored, bytes));
  if (!(stored.layout() == type.shape().layout())) {
    EMBER_ASSIGN_OR_RETURN(value, value.Relayout(type.shape().layout()));
  }
  return value;
}

absl::Status LiteralLeaves(const proto::LiteralProto& literal, int depth,
                           std::vector<ir::Literal>* out) {
  if (depth > kMaxTupleDepth) return absl::InvalidArgumentError("tuple literal nested too deeply");
  if (literal.shape().element_type() == kPrimitiveTuple) {
    if (literal.tuple_literals_size() != literal.shape().tuple_shapes_size()) {
      return absl::InvalidArgumentError(absl::StrCat("tuple literal has ",
                                                     literal.tuple_literals_size(),
                                                     " elements but its "
                                                     "shape has ",
                                                     literal.shape().tuple_shapes_size()));
    }
    for (const proto::LiteralProto& element : literal.tuple_literals()) {
      EMBER_RETURN_IF_ERROR(LiteralLeaves(element, depth + 1, out));
    }
    return absl::OkStatus();
  }
  EMBER_ASSIGN_OR_RETURN(ir::Literal value, ArrayLiteral(literal));
  out->push_back(std::move(value));
  return absl::OkStatus();
}

absl::StatusOr<ir::Literal> GroupsLiteral(const std::vector<std::vector<int64_t>>& groups) {
  const int64_t size = groups.empty() ? 0 : static_cast<int64_t>(groups[0].size());
  std::vector<int64_t> flat;
  for (const auto& g : groups) {
    if (static_cast<int64_t>(g.size()) != size) {
      return absl::UnimplementedError(
          "replica groups of different sizes are not supported (StableHLO needs a 2-D list)");
    }
    flat.insert(flat.end(), g.begin(), g.end());
  }
  const int64_t rows = static_cast<int64_t>(groups.size());
  return ir::Literal::FromValues<int64_t>({rows, size}, flat);
}

}  // namespace

ir::Location MetadataLocation(const proto::OpMetadata& metadata,
                              const proto::StackFrameIndexProto& frames) {
  ir::Location loc;
  loc.name = metadata.op_name();
  loc.file = metadata.source_file();
  loc.line = metadata.source_line();
  loc.column = metadata.source_column();
  const int frame = metadata.stack_frame_id();
  if (loc.file.empty() && frame > 0 && frame <= frames.stack_frames_size()) {
    const int fl = frames.stack_frames(frame - 1).file_location_id();
    if (fl > 0 && fl <= frames.file_locations_size()) {
      const auto& where = frames.file_locations(fl - 1);
      if (where.file_name_id() > 0 && where.file_name_id() <= frames.file_names_size()) {
        loc.file = frames.file_names(where.file_name_id() - 1);
        loc.line = where.line();
        loc.column = where.column();
      }
    }
  }
  return loc;
}

absl::StatusOr<ir::ValueType> LeafType(const proto::ShapeProto& shape) {
  if (shape.element_type() == kPrimitiveToken) return ir::ValueType::Token();
  if (shape.element_type() == kPrimitiveTuple) {
    return absl::InvalidArgumentError("expected an array shape, got a tuple");
  }
  EMBER_ASSIGN_OR_RETURN(ir::ElementType type,
                         ir::ElementTypeFromPrimitiveType(shape.element_type()));
  std::vector<int64_t> dims(shape.dimensions().begin(), shape.dimensions().end());
  // XLA's dynamic dimensions are bounded: the stored size is the bound, the size at run time
  // may be smaller. They become `?` dims with that bound (#stablehlo.bounds), as StableHLO
  // spells them.
  bool dynamic = false;
  for (bool d : shape.is_dynamic_dimension()) dynamic = dynamic || d;
  if (dynamic) {
    if (shape.is_dynamic_dimension_size() != shape.dimensions_size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape ", ShapeToString(shape), " has ", shape.is_dynamic_dimension_size(),
                       " dynamic-dimension flags for ", shape.dimensions_size(), " dimensions"));
    }
    std::vector<int64_t> bounds(dims.size(), ir::kDynamicDim);
    for (size_t i = 0; i < dims.size(); ++i) {
      if (!shape.is_dynamic_dimension(static_cast<int>(i))) continue;
      if (dims[i] < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("shape ", ShapeToString(shape), " has a negative bound"));
      }
      bounds[i] = dims[i];
      dims[i] = ir::kDynamicDim;
    }
    EMBER_ASSIGN_OR_RETURN(ir::Shape s, ir::Shape::MakeBounded(type, dims, bounds));
    return ir::ValueType::Tensor(std::move(s));
  }
  EMBER_ASSIGN_OR_RETURN(ir::Shape s, ir::Shape::Make(type, dims));
  return ir::ValueType::Tensor(std::move(s));
}

absl::StatusOr<std::vector<ir::ValueType>> FlattenShape(const proto::ShapeProto& shape) {
  std::vector<ir::ValueType> out;
  EMBER_RETURN_IF_ERROR(FlattenInto(shape, 0, &out));
  return out;
}

int64_t LeafCount(const proto::ShapeProto& shape) {
  if (shape.element_type() != kPrimitiveTuple) return 1;
  int64_t n = 0;
  for (const proto::ShapeProto& e : shape.tuple_shapes()) n += LeafCount(e);
  return n;
}

std::string ShapeToString(const proto::ShapeProto& shape) {
  if (shape.element_type() == kPrimitiveTuple) {
    std::vector<std::string> parts;
    for (const proto::ShapeProto& e : shape.tuple_shapes()) parts.push_back(ShapeToString(e));
    return absl::StrCat("(", absl::StrJoin(parts, ", "), ")");
  }
  if (shape.element_type() == kPrimitiveToken) return "token[]";
  absl::StatusOr<ir::ElementType> type = ir::ElementTypeFromPrimitiveType(shape.element_type());
  const std::string name = type.ok() ? std::string(ir::ElementTypeXlaName(*type))
                                     : absl::StrCat("type", shape.element_type());
  return absl::StrCat(name, "[", absl::StrJoin(shape.dimensions(), ","), "]");
}

absl::StatusOr<std::vector<ir::Literal>> ConvertLiteral(const proto::LiteralProto& literal) {
  std::vector<ir::Literal> out;
  EMBER_RETURN_IF_ERROR(LiteralLeaves(literal, 0, &out));
  return out;
}

absl::StatusOr<ir::Attribute> ShardingAttribute(const proto::OpSharding& s) {
  ir::TensorSharding sharding;
  switch (s.type()) {
    case 0:
      return ir::Attribute::OfSharding(ir::TensorSharding::Replicated());
    case 1:
      sharding.kind = ir::TensorSharding::Kind::kMaximal;
      sharding.maximal_device = s.tile_assignment_devices_size() > 0 ? s.tile_assignment_devices(0) : 0;
      return ir::Attribute::OfSharding(std::move(sharding));
    case 2: {
      std::vector<ir::Attribute> parts;
      for (const proto::OpSharding& e : s.tuple_shardings()) {
        EMBER_ASSIGN_OR_RETURN(ir::Attribute part, ShardingAttribute(e));
        parts.push_back(std::move(part));
      }
      return ir::Attribute::List(std::move(parts));
    }
    case 3:
      break;
    case 4:
      sharding.kind = ir::TensorSharding::Kind::kManual;
      return ir::Attribute::OfSharding(std::move(sharding));
    default:
      return absl::UnimplementedError(
          absl::StrCat("OpSharding of type ", s.type(), " (unknown or unreduced) is not supported yet"));
  }
  if (s.last_tile_dims_size() > 0) {
    return absl::UnimplementedError("subgroup shardings (last_tile_dims) are not supported yet");
  }
  std::vector<int64_t> tiles(s.tile_assignment_dimensions().begin(),
                             s.tile_assignment_dimensions().end());
  std::vector<int64_t> devices;
  if (s.iota_reshape_dims_size() > 0) {
    std::vector<int64_t> reshape(s.iota_reshape_dims().begin(), s.iota_reshape_dims().end());
    std::vector<int64_t> perm(s.iota_transpose_perm().begin(), s.iota_transpose_perm().end());
    EMBER_ASSIGN_OR_RETURN(devices, ir::IotaTileDevices(reshape, perm));
  } else {
    devices.assign(s.tile_assignment_devices().begin(), s.tile_assignment_devices().end());
  }
  const bool replicate_last = s.replicate_on_last_tile_dim();
  const int64_t rank = static_cast<int64_t>(tiles.size()) - (replicate_last ? 1 : 0);
  EMBER_ASSIGN_OR_RETURN(sharding, ir::TiledSharding(tiles, std::move(devices), rank, replicate_last));
  return ir::Attribute::OfSharding(std::move(sharding));
}

absl::StatusOr<ir::Literal> ReplicaGroups(const proto::HloInstructionProto& inst) {
  std::vector<std::vector<int64_t>> groups;
  auto explicit_groups = [&](const auto& list) {
    for (const proto::ReplicaGroup& g : list) {
      groups.emplace_back(g.replica_ids().begin(), g.replica_ids().end());
    }
  };
  if (inst.has_collective_device_list()) {
    const proto::CollectiveDeviceListProto& list = inst.collective_device_list();
    if (list.has_iota_replica_group_list()) {
      const proto::IotaReplicaGroupListProto& iota = list.iota_replica_group_list();
      const int64_t num = iota.num_replica_groups(), per = iota.num_devices_per_group();
      std::vector<int64_t> dims(iota.iota_reshape_dims().begin(), iota.iota_reshape_dims().end());
      int64_t total = 1;
      for (int64_t d : dims) {
        if (d <= 0 || d > (int64_t{1} << 20) || total > (int64_t{1} << 20) / d) {
          return absl::InvalidArgumentError("iota replica group list has bad dimensions");
        }
        total *= d;
      }
      if (num < 0 || per < 0 || num > total || per > total || num * per != total ||
          iota.iota_transpose_perm_size() != static_cast<int>(dims.size())) {
        return absl::InvalidArgumentError("inconsistent iota replica group list");
      }
      // Device ids: iota(total) reshaped to dims, transposed by perm, read in row-major order.
      const size_t r = dims.size();
      std::vector<int64_t> perm(iota.iota_transpose_perm().begin(),
                                iota.iota_transpose_perm().end());
      std::vector<bool> seen(r, false);
      for (int64_t p : perm) {
        if (p < 0 || p >= static_cast<int64_t>(r) || seen[p]) {
          return absl::InvalidArgumentError("iota_transpose_perm is not a permutation");
        }
        seen[p] = true;
      }
      std::vector<int64_t> strides(r, 1);
      for (size_t i = r; i-- > 1;) strides[i - 1] = strides[i] * dims[i];
      std::vector<int64_t> out_dims(r), index(r, 0);
      for (size_t i = 0; i < r; ++i) out_dims[i] = dims[perm[i]];
      std::vector<int64_t> ids;
      ids.reserve(total);
      for (int64_t k = 0; k < total; ++k) {
        int64_t id = 0;
        for (size_t i = 0; i < r; ++i) id += index[i] * strides[perm[i]];
        ids.push_back(id);
        for (size_t i = r; i-- > 0;) {
          if (++index[i] < out_dims[i]) break;
          index[i] = 0;
        }
      }
      for (int64_t g = 0; g < num; ++g) {
        groups.emplace_back(ids.begin() + g * per, ids.begin() + (g + 1) * per);
      }
    } else {
      explicit_groups(list.replica_groups());
    }
  } else {
    explicit_groups(inst.replica_groups());
  }
  return GroupsLiteral(groups);
}

absl::StatusOr<ir::Literal> SourceTargetPairs(const proto::HloInstructionProto& inst) {
  std::vector<int64_t> flat;
  for (const proto::SourceTarget& p : inst.source_target_pairs()) {
    flat.push_back(p.source());
    flat.push_back(p.target());
  }
  return ir::Literal::FromValues<int64_t>({inst.source_target_pairs_size(), 2}, flat);
}

}  // namespace ember::frontend::hlo
