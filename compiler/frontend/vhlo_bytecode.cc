// VHLO dialect attribute and type encodings (StableHLO portable artifacts), for every VHLO
// version: codes are append-only upstream, so one table reads them all. Facts from
// shared/reference/mlir_bytecode.md §3.3-3.4.
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/frontend/bytecode_internal.h"

namespace ember::frontend::bytecode {
namespace {

DialectParam IntParam(std::string name, int64_t v) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kInt;
  p.i = v;
  return p;
}

DialectParam UIntParam(std::string name, uint64_t v) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kUInt;
  p.u = v;
  return p;
}

DialectParam BoolParam(std::string name, bool v) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kBool;
  p.u = v ? 1 : 0;
  return p;
}

DialectParam StringParam(std::string name, std::string v) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kString;
  p.s = std::move(v);
  return p;
}

DialectParam BytesParam(std::string name, const std::vector<uint8_t>& v) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kBytes;
  p.s.assign(v.begin(), v.end());
  return p;
}

DialectParam FloatBitsParam(std::string name, std::vector<uint64_t> words) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kFloatBits;
  p.words = std::move(words);
  return p;
}

DialectParam TypeParam(std::string name, TypePtr t) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kType;
  p.type = std::move(t);
  return p;
}

DialectParam AttrParam(std::string name, AttrPtr a) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kAttr;
  p.attr = std::move(a);
  return p;
}

DialectParam IntListParam(std::string name, const std::vector<int64_t>& v) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kList;
  for (int64_t x : v) p.list.push_back(IntParam("", x));
  return p;
}

DialectParam AttrListParam(std::string name, const std::vector<AttrPtr>& v) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kList;
  for (const AttrPtr& x : v) p.list.push_back(AttrParam("", x));
  return p;
}

DialectParam TypeListParam(std::string name, const std::vector<TypePtr>& v) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kList;
  for (const TypePtr& x : v) p.list.push_back(TypeParam("", x));
  return p;
}

std::shared_ptr<Attribute> VhloAttr(std::string name, std::vector<DialectParam> params) {
  auto a = std::make_shared<Attribute>();
  a->kind = AttrKind::kDialect;
  a->dialect = "vhlo";
  a->name = std::move(name);
  a->params = std::move(params);
  return a;
}

std::shared_ptr<Type> VhloType(std::string name, std::vector<DialectParam> params = {}) {
  auto t = std::make_shared<Type>();
  t->kind = TypeKind::kDialect;
  t->dialect = "vhlo";
  t->name = std::move(name);
  t->params = std::move(params);
  return t;
}

// An enum attribute: one varint, named by `names` (null entries are invalid values).
absl::StatusOr<AttrPtr> ReadEnum(EntryReader& r, const char* mnemonic,
                                 std::initializer_list<const char*> names) {
  EMBER_ASSIGN_OR_RETURN(uint64_t v, r.VarInt());
  if (v >= names.size() || names.begin()[v] == nullptr) {
    return r.Error(absl::StrCat("invalid value ", v, " for #vhlo<", mnemonic, ">"));
  }
  return AttrPtr(VhloAttr(mnemonic, {StringParam("value", names.begin()[v])}));
}

// Bit width of a VHLO integer or float element type, for IntegerV1/FloatV1 payloads.
absl::StatusOr<unsigned> VhloScalarWidth(const TypePtr& t, bool want_float, EntryReader& r) {
  if (t && t->kind == TypeKind::kDialect && t->dialect == "vhlo") {
    const std::string& n = t->name;
    if (!want_float) {
      if (n == "i2_v1" || n == "ui2_v1") return 2u;
      if (n == "i4_v1" || n == "ui4_v1") return 4u;
      if (n == "i8_v1" || n == "ui8_v1") return 8u;
      if (n == "i16_v1" || n == "ui16_v1") return 16u;
      if (n == "i32_v1" || n == "ui32_v1") return 32u;
      if (n == "i64_v1" || n == "ui64_v1" || n == "index_v1") return 64u;
    } else {
      if (n == "bf16_v1" || n == "f16_v1") return 16u;
      if (n == "f32_v1") return 32u;
      if (n == "f64_v1") return 64u;
      if (n == "tf31_v1") return 19u;
      if (n.substr(0, 2) == "f8") return 8u;
      if (n.substr(0, 2) == "f6") return 6u;
      if (n.substr(0, 2) == "f4") return 4u;
    }
  }
  return r.Error(absl::StrCat("#vhlo.", want_float ? "float_v1" : "integer_v1", " of type ",
                              t ? PrintType(*t) : "?"));
}

}  // namespace

absl::StatusOr<AttrPtr> DecodeVhloAttribute(EntryReader& r) {
  EMBER_ASSIGN_OR_RETURN(uint64_t code, r.VarInt());
  switch (code) {
    case 1: {
      EMBER_ASSIGN_OR_RETURN(std::vector<AttrPtr> elems, r.AttrList());
      return AttrPtr(VhloAttr("array_v1", {AttrListParam("elements", elems)}));
    }
    case 2: {
      EMBER_ASSIGN_OR_RETURN(uint64_t v, r.VarInt());
      if (v > 1) return r.Error(absl::StrCat("#vhlo.bool_v1 value ", v));
      return AttrPtr(VhloAttr("bool_v1", {BoolParam("value", v == 1)}));
    }
    case 3:
      return ReadEnum(r, "comparison_direction_v1", {"EQ", "NE", "GE", "GT", "LE", "LT"});
    case 4:
      return ReadEnum(r, "comparison_type_v1",
                      {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"});
    case 5:
      return ReadEnum(r, "api_version_v1",
                      {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
                       "API_VERSION_STATUS_RETURNING", "API_VERSION_STATUS_RETURNING_UNIFIED",
                       "API_VERSION_TYPED_FFI"});
    case 6: {
      EMBER_ASSIGN_OR_RETURN(uint64_t n, r.Count());
      DialectParam entries;
      entries.name = "entries";
      entries.kind = DialectParam::Kind::kList;
      for (uint64_t i = 0; i < n; ++i) {
        EMBER_ASSIGN_OR_RETURN(AttrPtr key, r.Attr());
        EMBER_ASSIGN_OR_RETURN(AttrPtr value, r.Attr());
        DialectParam pair;
        pair.kind = DialectParam::Kind::kList;
        pair.list = {AttrParam("key", std::move(key)), AttrParam("value", std::move(value))};
        entries.list.push_back(std::move(pair));
      }
      return AttrPtr(VhloAttr("dict_v1", {std::move(entries)}));
    }
    case 7: return ReadEnum(r, "fft_type_v1", {"FFT", "IFFT", "RFFT", "IRFFT"});
    case 8: {
      EMBER_ASSIGN_OR_RETURN(TypePtr type, r.TypeRef());
      EMBER_ASSIGN_OR_RETURN(unsigned width, VhloScalarWidth(type, true, r));
      EMBER_ASSIGN_OR_RETURN(std::vector<uint64_t> bits, r.APInt(width));
      return AttrPtr(
          VhloAttr("float_v1", {TypeParam("type", type), FloatBitsParam("value", bits)}));
    }
    case 9: {
      EMBER_ASSIGN_OR_RETURN(TypePtr type, r.TypeRef());
      EMBER_ASSIGN_OR_RETURN(unsigned width, VhloScalarWidth(type, false, r));
      EMBER_ASSIGN_OR_RETURN(std::vector<uint64_t> words, r.APInt(width));
      uint64_t v = words.empty() ? 0 : words[0];
      // Signless/signed integer types sign-extend; unsigned ones do not.
      const bool is_unsigned = type->name.substr(0, 2) == "ui";
      if (!is_unsigned && width < 64 && (v >> (width - 1)) & 1) v |= ~uint64_t{0} << width;
      DialectParam value = is_unsigned ? UIntParam("value", v)
                                       : IntParam("value", static_cast<int64_t>(v));
      return AttrPtr(VhloAttr("integer_v1", {TypeParam("type", type), std::move(value)}));
    }
    case 10: {
      EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> out_idx, r.SignedVarIntList());
      EMBER_ASSIGN_OR_RETURN(int64_t operand, r.SignedVarInt());
      EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> operand_idx, r.SignedVarIntList());
      return AttrPtr(VhloAttr("output_operand_alias_v1",
                              {IntListParam("output_tuple_indices", out_idx),
                               IntParam("operand_index", operand),
                               IntListParam("operand_tuple_indices", operand_idx)}));
    }
    case 11: return ReadEnum(r, "precision_v1", {"DEFAULT", "HIGH", "HIGHEST"});
    case 12: return ReadEnum(r, "rng_algorithm_v1", {"DEFAULT", "THREE_FRY", "PHILOX"});
    case 13: return ReadEnum(r, "rng_distribution_v1", {nullptr, "UNIFORM", "NORMAL"});
    case 14: {
      EMBER_ASSIGN_OR_RETURN(std::string s, r.String());
      return AttrPtr(VhloAttr("string_v1", {StringParam("value", std::move(s))}));
    }
    case 15: {
      EMBER_ASSIGN_OR_RETURN(TypePtr type, r.TypeRef());
      EMBER_ASSIGN_OR_RETURN(std::vector<uint8_t> data, r.Blob());
      if (!type) return r.Error("#vhlo.tensor_v1 without type");
      EMBER_RETURN_IF_ERROR(ValidateDenseData(*type, data.size(), r.bytes()));
      return AttrPtr(VhloAttr("tensor_v1", {TypeParam("type", type), BytesParam("data", data)}));
    }
    case 16:
      return ReadEnum(r, "transpose_v1",
                      {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"});
    case 17: {
      EMBER_ASSIGN_OR_RETURN(TypePtr type, r.TypeRef());
      return AttrPtr(VhloAttr("type_v1", {TypeParam("value", type)}));
    }
    case 18: {
      EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> bounds, r.SignedVarIntList());
      return AttrPtr(VhloAttr("type_extensions_v1", {IntListParam("bounds", bounds)}));
    }
    case 19:
      return ReadEnum(r, "result_accuracy_mode_v1", {"DEFAULT", "HIGHEST", "TOLERANCE"});
    case 20: {
      EMBER_ASSIGN_OR_RETURN(std::vector<uint64_t> atol, r.APInt(64));
      EMBER_ASSIGN_OR_RETURN(std::vector<uint64_t> rtol, r.APInt(64));
      EMBER_ASSIGN_OR_RETURN(int64_t ulps, r.SignedVarInt());
      EMBER_ASSIGN_OR_RETURN(AttrPtr mode, r.Attr());
      return AttrPtr(VhloAttr("result_accuracy_v1",
                              {FloatBitsParam("atol", atol), FloatBitsParam("rtol", rtol),
                               IntParam("ulps", ulps), AttrParam("mode", mode)}));
    }
    case 21: {
      EMBER_ASSIGN_OR_RETURN(int64_t pre, r.SignedVarInt());
      EMBER_ASSIGN_OR_RETURN(int64_t size, r.SignedVarInt());
      return AttrPtr(
          VhloAttr("sub_axis_info_v1", {IntParam("pre_size", pre), IntParam("size", size)}));
    }
    case 22: {
      EMBER_ASSIGN_OR_RETURN(AttrPtr name, r.Attr());
      EMBER_ASSIGN_OR_RETURN(uint64_t has_sub, r.VarInt());
      if (has_sub > 1) return r.Error("#vhlo.axis_ref_v1 sub-axis flag is not 0/1");
      AttrPtr sub;
      if (has_sub == 1) {
        EMBER_ASSIGN_OR_RETURN(sub, r.Attr());
      }
      return AttrPtr(
          VhloAttr("axis_ref_v1", {AttrParam("name", name), AttrParam("sub_axis_info", sub)}));
    }
    case 23: {
      EMBER_ASSIGN_OR_RETURN(AttrPtr mesh, r.Attr());
      EMBER_ASSIGN_OR_RETURN(AttrPtr axes, r.Attr());
      return AttrPtr(VhloAttr("replica_group_mesh_axes_v1",
                              {AttrParam("mesh", mesh), AttrParam("axes", axes)}));
    }
    case 24: {
      EMBER_ASSIGN_OR_RETURN(AttrPtr name, r.Attr());
      EMBER_ASSIGN_OR_RETURN(int64_t size, r.SignedVarInt());
      return AttrPtr(VhloAttr("mesh_axis_v1", {AttrParam("name", name), IntParam("size", size)}));
    }
    case 25: {
      EMBER_ASSIGN_OR_RETURN(AttrPtr axes, r.Attr());
      EMBER_ASSIGN_OR_RETURN(AttrPtr device_ids, r.OptionalAttr());
      return AttrPtr(
          VhloAttr("mesh_v1", {AttrParam("axes", axes), AttrParam("device_ids", device_ids)}));
    }
    default:
      // Code 0 (ArgResultAliasV1) is dead upstream; anything else is newer than we know.
      return r.Error(absl::StrCat("unknown VHLO attribute code ", code));
  }
}

absl::StatusOr<TypePtr> DecodeVhloType(EntryReader& r) {
  EMBER_ASSIGN_OR_RETURN(uint64_t code, r.VarInt());
  // Types without parameters, by code.
  static const char* const kSimple[] = {
      "bool_v1", nullptr, "bf16_v1", "f16_v1", "f32_v1", "f64_v1", "f8E4M3FN_v1", "f8E5M2_v1",
      nullptr, "index_v1", "i4_v1", "i8_v1", "i16_v1", "i32_v1", "i64_v1", "ui4_v1", "ui8_v1",
      "ui16_v1", "ui32_v1", "ui64_v1", nullptr, nullptr, "token_v1", nullptr, nullptr, nullptr,
      "witness_v1", "f8E4M3FNUZ_v1", "f8E5M2FNUZ_v1", "f8E4M3B11FNUZ_v1", nullptr, "i2_v1",
      "ui2_v1", "none_v1", "tf31_v1", "f8E4M3_v1", "f8E3M4_v1", "f4E2M1FN_v1", "f6E2M3FN_v1",
      "f6E3M2FN_v1", "f8E8M0FNU_v1"};
  if (code < std::size(kSimple) && kSimple[code] != nullptr) {
    return TypePtr(VhloType(kSimple[code]));
  }
  switch (code) {
    case 1: {
      EMBER_ASSIGN_OR_RETURN(TypePtr element, r.TypeRef());
      return TypePtr(VhloType("complex_v1", {TypeParam("element", element)}));
    }
    case 8: {
      EMBER_ASSIGN_OR_RETURN(std::vector<TypePtr> inputs, r.TypeList());
      EMBER_ASSIGN_OR_RETURN(std::vector<TypePtr> outputs, r.TypeList());
      return TypePtr(VhloType(
          "func_v1", {TypeListParam("inputs", inputs), TypeListParam("outputs", outputs)}));
    }
    case 20:
    case 21: {
      AttrPtr encoding;
      if (code == 21) {
        EMBER_ASSIGN_OR_RETURN(encoding, r.Attr());
      }
      EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> shape, r.SignedVarIntList());
      EMBER_ASSIGN_OR_RETURN(TypePtr element, r.TypeRef());
      std::vector<DialectParam> params = {IntListParam("shape", shape),
                                          TypeParam("element", element)};
      if (code == 21) params.push_back(AttrParam("encoding", encoding));
      return TypePtr(VhloType("tensor_v1", std::move(params)));
    }
    case 23: {
      EMBER_ASSIGN_OR_RETURN(std::vector<TypePtr> types, r.TypeList());
      return TypePtr(VhloType("tuple_v1", {TypeListParam("types", types)}));
    }
    case 24: {
      EMBER_ASSIGN_OR_RETURN(uint64_t flags, r.VarInt());
      EMBER_ASSIGN_OR_RETURN(TypePtr storage, r.TypeRef());
      EMBER_ASSIGN_OR_RETURN(TypePtr expressed, r.TypeRef());
      EMBER_ASSIGN_OR_RETURN(std::vector<uint64_t> scale, r.APInt(64));
      EMBER_ASSIGN_OR_RETURN(int64_t zero_point, r.SignedVarInt());
      EMBER_ASSIGN_OR_RETURN(int64_t storage_min, r.SignedVarInt());
      EMBER_ASSIGN_OR_RETURN(int64_t storage_max, r.SignedVarInt());
      return TypePtr(VhloType(
          "quant_v1", {UIntParam("flags", flags), TypeParam("storage_type", storage),
                       TypeParam("expressed_type", expressed), FloatBitsParam("scale", scale),
                       IntParam("zero_point", zero_point),
                       IntParam("storage_type_min", storage_min),
                       IntParam("storage_type_max", storage_max)}));
    }
    case 25: {
      EMBER_ASSIGN_OR_RETURN(TypePtr element, r.TypeRef());
      return TypePtr(VhloType("unranked_tensor_v1", {TypeParam("element", element)}));
    }
    case 30: {
      // Read order differs from the upstream doc comment (see the reference, §3.4).
      EMBER_ASSIGN_OR_RETURN(uint64_t flags, r.VarInt());
      EMBER_ASSIGN_OR_RETURN(TypePtr storage, r.TypeRef());
      EMBER_ASSIGN_OR_RETURN(TypePtr expressed, r.TypeRef());
      EMBER_ASSIGN_OR_RETURN(uint64_t dim, r.VarInt());
      EMBER_ASSIGN_OR_RETURN(int64_t storage_min, r.SignedVarInt());
      EMBER_ASSIGN_OR_RETURN(int64_t storage_max, r.SignedVarInt());
      EMBER_ASSIGN_OR_RETURN(uint64_t num_scales, r.Count());
      DialectParam scales;
      scales.name = "scales";
      scales.kind = DialectParam::Kind::kList;
      for (uint64_t i = 0; i < num_scales; ++i) {
        EMBER_ASSIGN_OR_RETURN(std::vector<uint64_t> bits, r.APInt(64));
        scales.list.push_back(FloatBitsParam("", std::move(bits)));
      }
      EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> zero_points, r.SignedVarIntList());
      return TypePtr(VhloType(
          "quant_per_axis_v1",
          {UIntParam("flags", flags), TypeParam("storage_type", storage),
           TypeParam("expressed_type", expressed), UIntParam("quantized_dimension", dim),
           IntParam("storage_type_min", storage_min), IntParam("storage_type_max", storage_max),
           std::move(scales), IntListParam("zero_points", zero_points)}));
    }
    case 41: {
      EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> shape, r.SignedVarIntList());
      EMBER_ASSIGN_OR_RETURN(TypePtr element, r.TypeRef());
      return TypePtr(
          VhloType("buffer_v1", {IntListParam("shape", shape), TypeParam("element", element)}));
    }
    case 42: {
      EMBER_ASSIGN_OR_RETURN(std::vector<TypePtr> types, r.TypeList());
      return TypePtr(VhloType("future_v1", {TypeListParam("types", types)}));
    }
    default: return r.Error(absl::StrCat("unknown VHLO type code ", code));
  }
}

}  // namespace ember::frontend::bytecode
