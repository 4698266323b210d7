// Pretty forms of CHLO ops (stablehlo/dialect/ChloOps.td): broadcasting binary ops, unary
// elementwise ops (`chlo.erf %x : T -> T`), top_k, constant and the hand-written chlo.scan.
#include <string>
#include <utility>
#include <vector>

#include "base/status_macros.h"
#include "compiler/frontend/text/text_parser_internal.h"

namespace ember::frontend::text {
namespace {

absl::StatusOr<size_t> Operands(Parser& p, Operation& op) {
  EMBER_ASSIGN_OR_RETURN(std::vector<UnresolvedOperand> ops, p.ParseOperandList());
  EMBER_RETURN_IF_ERROR(p.AddOperands(op, ops));
  return ops.size();
}

// `operands attr-dict : (T, T) -> R`
absl::Status ParseBroadcastBinary(Parser& p, Operation& op) {
  EMBER_ASSIGN_OR_RETURN(size_t n, Operands(p, op));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseColonFunctionalType(op, n);
}

// `operands attr-dict : T, T -> R` (no parentheses around the operand types)
absl::Status ParseTypesArrow(Parser& p, Operation& op) {
  EMBER_ASSIGN_OR_RETURN(size_t n, Operands(p, op));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kColon, "before the op's types"));
  const size_t at = p.tok().offset;
  EMBER_ASSIGN_OR_RETURN(std::vector<TypePtr> types, p.ParseTypeList());
  if (types.size() == 1 && types[0]->kind == TypeKind::kFunction && !p.Is(TokKind::kArrow)) {
    // `(T) -> R` spelled as a function type is the same thing.
    if (types[0]->types.size() != n) return p.ErrorAt(at, "operand type count mismatch");
    op.result_types = types[0]->results;
    return absl::OkStatus();
  }
  if (types.size() != n) return p.ErrorAt(at, "operand type count mismatch");
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kArrow, "before the result type"));
  EMBER_ASSIGN_OR_RETURN(op.result_types, p.ParseFunctionResultTypes());
  return absl::OkStatus();
}

absl::Status ParseConstant(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  EMBER_ASSIGN_OR_RETURN(AttrPtr value, p.ParseAttribute());
  if (!value->type) return p.Error("constant value must be a typed elements attribute");
  op.result_types = {value->type};
  Parser::AddAttr(op, "value", value);
  return absl::OkStatus();
}

// `(%x, k = 4(, is_stable = true)?) attr-dict : T -> (T, T)`
absl::Status ParseTopK(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kLParen, "after chlo.top_k"));
  EMBER_ASSIGN_OR_RETURN(UnresolvedOperand x, p.ParseOperandName());
  EMBER_RETURN_IF_ERROR(p.AddOperands(op, {x}));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kComma, ""));
  EMBER_RETURN_IF_ERROR(p.ExpectKeyword("k", "in chlo.top_k"));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kEqual, "after 'k'"));
  EMBER_ASSIGN_OR_RETURN(int64_t k, p.ParseInt64());
  Parser::AddAttr(op, "k", MakeI64Attr(k));
  if (p.ConsumeIf(TokKind::kComma)) {
    EMBER_RETURN_IF_ERROR(p.ExpectKeyword("is_stable", "in chlo.top_k"));
    EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kEqual, "after 'is_stable'"));
    EMBER_ASSIGN_OR_RETURN(bool stable, p.ParseBoolKeyword());
    Parser::AddAttr(op, "is_stable", MakeBoolAttr(stable));
  }
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kRParen, "to close chlo.top_k operands"));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kColon, "before the chlo.top_k types"));
  EMBER_ASSIGN_OR_RETURN(TypePtr t, p.ParseType());
  (void)t;
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kArrow, "in chlo.top_k type"));
  EMBER_ASSIGN_OR_RETURN(op.result_types, p.ParseFunctionResultTypes());
  return absl::OkStatus();
}

// `(%in...) inits (%init...) dimension = N attributes {...}? { region } : fn-type`
absl::Status ParseScan(Parser& p, Operation& op) {
  auto paren_list = [&](std::vector<UnresolvedOperand>& out) -> absl::Status {
    EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kLParen, "in chlo.scan"));
    EMBER_ASSIGN_OR_RETURN(out, p.ParseOperandList());
    return p.Expect(TokKind::kRParen, "in chlo.scan");
  };
  std::vector<UnresolvedOperand> inputs, inits;
  EMBER_RETURN_IF_ERROR(paren_list(inputs));
  EMBER_RETURN_IF_ERROR(p.ExpectKeyword("inits", "in chlo.scan"));
  EMBER_RETURN_IF_ERROR(paren_list(inits));
  EMBER_RETURN_IF_ERROR(p.ExpectKeyword("dimension", "in chlo.scan"));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kEqual, "after 'dimension'"));
  EMBER_ASSIGN_OR_RETURN(int64_t dim, p.ParseInt64());
  std::vector<UnresolvedOperand> all = inputs;
  all.insert(all.end(), inits.begin(), inits.end());
  EMBER_RETURN_IF_ERROR(p.AddOperands(op, all));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDictWithKeyword(op));
  EMBER_RETURN_IF_ERROR(p.ParseRegion(op, nullptr));
  EMBER_RETURN_IF_ERROR(p.ParseColonFunctionalType(op, all.size()));
  const int64_t carries = static_cast<int64_t>(inits.size());
  const int64_t outputs = static_cast<int64_t>(op.result_types.size()) - carries;
  if (outputs < 0) return p.Error("not enough result types to cover the required carries");
  Parser::AddAttr(op, "dimension", MakeI64Attr(dim));
  Parser::AddAttr(op, "operandSegmentSizes",
                  MakeDenseI32Array({static_cast<int64_t>(inputs.size()), carries}));
  Parser::AddAttr(op, "resultSegmentSizes", MakeDenseI32Array({outputs, carries}));
  return absl::OkStatus();
}

}  // namespace

void RegisterChloOps(absl::flat_hash_map<std::string, OpInfo>& ops) {
  auto add = [&](const char* name, CustomOpParser parse, std::vector<std::string> inherent,
                 bool isolated = false) {
    ops[std::string("chlo.") + name] = {parse, std::move(inherent), isolated, ""};
  };
  for (const char* name :
       {"broadcast_add", "broadcast_atan2", "broadcast_divide", "broadcast_maximum",
        "broadcast_minimum", "broadcast_multiply", "broadcast_next_after", "broadcast_polygamma",
        "broadcast_power", "broadcast_remainder", "broadcast_shift_left",
        "broadcast_shift_right_arithmetic", "broadcast_shift_right_logical", "broadcast_subtract",
        "broadcast_zeta", "broadcast_and", "broadcast_or", "broadcast_xor", "broadcast_complex"}) {
    add(name, ParseBroadcastBinary, {"broadcast_dimensions"});
  }
  add("broadcast_compare", ParseBroadcastBinary,
      {"broadcast_dimensions", "compare_type", "comparison_direction"});
  add("broadcast_select", ParseBroadcastBinary, {});
  for (const char* name :
       {"_asin_acos_kernel", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bessel_i1e",
        "conj", "cosh", "sinh", "tan", "digamma", "erf", "erf_inv", "erfc", "is_inf",
        "is_neg_inf", "is_pos_inf", "lgamma", "square", "next_after", "polygamma", "zeta",
        "mulhi"}) {
    add(name, ParseTypesArrow, {});
  }
  add("constant", ParseConstant, {"value"});
  add("constant_like", nullptr, {"value"});
  add("top_k", ParseTopK, {"is_stable", "k"});
  add("scan", ParseScan,
      {"dimension", "is_associative", "is_reverse", "operandSegmentSizes", "resultSegmentSizes",
       "scan_dim_size"},
      /*isolated=*/true);
  add("ragged_dot", nullptr, {"precision_config", "ragged_dot_dimension_numbers"});
}

}  // namespace ember::frontend::text
