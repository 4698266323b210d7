// Shardy (`sdy`) dialect attribute encodings, which XLA leaves unconverted inside mixed VHLO
// artifacts. Codes and field orders from shared/reference/mlir_bytecode.md §3.13 (checked
// against openxla/shardy bytecode.td). Enum attributes use the textual fallback instead.
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/frontend/bytecode_internal.h"

namespace ember::frontend::bytecode {
namespace {

DialectParam Int(std::string name, int64_t v) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kInt;
  p.i = v;
  return p;
}

DialectParam Str(std::string name, std::string v) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kString;
  p.s = std::move(v);
  return p;
}

DialectParam Bool(std::string name, bool v) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kBool;
  p.u = v;
  return p;
}

DialectParam AttrP(std::string name, AttrPtr a) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kAttr;
  p.attr = std::move(a);
  return p;
}

DialectParam IntList(std::string name, const std::vector<int64_t>& v) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kList;
  for (int64_t x : v) p.list.push_back(Int("", x));
  return p;
}

DialectParam AttrList(std::string name, const std::vector<AttrPtr>& v) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kList;
  for (const AttrPtr& x : v) p.list.push_back(AttrP("", x));
  return p;
}

AttrPtr SdyAttr(std::string name, std::vector<DialectParam> params) {
  auto a = std::make_shared<Attribute>();
  a->kind = AttrKind::kDialect;
  a->dialect = "sdy";
  a->name = std::move(name);
  a->params = std::move(params);
  return a;
}

// A list-of-attributes attribute with a single "value" parameter.
absl::StatusOr<AttrPtr> ListAttr(EntryReader& r, const char* name) {
  EMBER_ASSIGN_OR_RETURN(std::vector<AttrPtr> v, r.AttrList());
  return SdyAttr(name, {AttrList("value", v)});
}

// Tensor sharding, versions 1-3 (each adds one trailing field).
absl::StatusOr<AttrPtr> TensorSharding(EntryReader& r, int version) {
  EMBER_ASSIGN_OR_RETURN(AttrPtr mesh_or_ref, r.Attr());
  EMBER_ASSIGN_OR_RETURN(std::vector<AttrPtr> dims, r.AttrList());
  EMBER_ASSIGN_OR_RETURN(std::vector<AttrPtr> replicated, r.AttrList());
  std::vector<AttrPtr> unreduced;
  int64_t reduction_op = 0;  // SUM: implied by versions 1 and 2
  if (version >= 2) {
    EMBER_ASSIGN_OR_RETURN(unreduced, r.AttrList());
  }
  if (version >= 3) {
    EMBER_ASSIGN_OR_RETURN(reduction_op, r.SignedVarInt());
  }
  return SdyAttr("sharding", {AttrP("mesh_or_ref", mesh_or_ref), AttrList("dim_shardings", dims),
                              AttrList("replicated_axes", replicated),
                              AttrList("unreduced_axes", unreduced),
                              Int("reduction_op", reduction_op)});
}

}  // namespace

absl::StatusOr<AttrPtr> DecodeSdyAttribute(EntryReader& r) {
  EMBER_ASSIGN_OR_RETURN(uint64_t code, r.VarInt());
  switch (code) {
    case 0: return ListAttr(r, "manual_axes");
    case 1: {
      EMBER_ASSIGN_OR_RETURN(std::string name, r.String());
      EMBER_ASSIGN_OR_RETURN(int64_t size, r.SignedVarInt());
      return SdyAttr("mesh_axis", {Str("name", std::move(name)), Int("size", size)});
    }
    case 2: {
      EMBER_ASSIGN_OR_RETURN(std::vector<AttrPtr> axes, r.AttrList());
      EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> device_ids, r.SignedVarIntList());
      return SdyAttr("mesh", {AttrList("axes", axes), IntList("device_ids", device_ids)});
    }
    case 3: {
      EMBER_ASSIGN_OR_RETURN(int64_t pre_size, r.SignedVarInt());
      EMBER_ASSIGN_OR_RETURN(int64_t size, r.SignedVarInt());
      return SdyAttr("sub_axis_info", {Int("pre_size", pre_size), Int("size", size)});
    }
    case 4: {
      EMBER_ASSIGN_OR_RETURN(std::string name, r.String());
      EMBER_ASSIGN_OR_RETURN(AttrPtr sub, r.OptionalAttr());
      return SdyAttr("axis_ref", {Str("name", std::move(name)), AttrP("sub_axis_info", sub)});
    }
    case 5: {
      EMBER_ASSIGN_OR_RETURN(std::vector<AttrPtr> axes, r.AttrList());
      EMBER_ASSIGN_OR_RETURN(bool is_closed, r.Bool());
      EMBER_ASSIGN_OR_RETURN(uint64_t priority, r.VarInt());
      std::vector<DialectParam> params = {AttrList("axes", axes), Bool("is_closed", is_closed)};
      if (priority & 1) params.push_back(Int("priority", static_cast<int64_t>(priority >> 1)));
      return SdyAttr("dimension_sharding", std::move(params));
    }
    case 6: return TensorSharding(r, 1);
    case 15: return TensorSharding(r, 2);
    case 17: return TensorSharding(r, 3);
    case 7:
    case 16: return ListAttr(r, "sharding_per_value");
    case 8: {
      EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> factors, r.SignedVarIntList());
      return SdyAttr("dim_mapping", {IntList("factor_indices", factors)});
    }
    case 9: return ListAttr(r, "tensor_mapping");
    case 10: {
      EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> factor_sizes, r.SignedVarIntList());
      EMBER_ASSIGN_OR_RETURN(std::vector<AttrPtr> operands, r.AttrList());
      EMBER_ASSIGN_OR_RETURN(std::vector<AttrPtr> results, r.AttrList());
      EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> reduction, r.SignedVarIntList());
      EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> need_replication, r.SignedVarIntList());
      EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> permutation, r.SignedVarIntList());
      EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> blocked, r.SignedVarIntList());
      EMBER_ASSIGN_OR_RETURN(bool is_custom, r.Bool());
      return SdyAttr("op_sharding_rule",
                     {IntList("factor_sizes", factor_sizes), AttrList("operand_mappings", operands),
                      AttrList("result_mappings", results), IntList("reduction_factors", reduction),
                      IntList("need_replication_factors", need_replication),
                      IntList("permutation_factors", permutation),
                      IntList("blocked_propagation_factors", blocked),
                      Bool("is_custom_rule", is_custom)});
    }
    case 11: return ListAttr(r, "axis_ref_list");
    case 12: return ListAttr(r, "list_of_axis_ref_lists");
    case 13: {
      EMBER_ASSIGN_OR_RETURN(std::vector<AttrPtr> axes, r.AttrList());
      EMBER_ASSIGN_OR_RETURN(int64_t src, r.SignedVarInt());
      EMBER_ASSIGN_OR_RETURN(int64_t tgt, r.SignedVarInt());
      return SdyAttr("all_to_all_param",
                     {AttrList("axes", axes), Int("src_dim", src), Int("tgt_dim", tgt)});
    }
    case 14: return ListAttr(r, "all_to_all_param_list");
    default: return r.Error(absl::StrCat("unknown sdy attribute code ", code));
  }
}

}  // namespace ember::frontend::bytecode
