// Pretty forms of the StableHLO test dialects: `check.*` (stablehlo/tests/CheckOps.td) and
// `interpreter.*` (stablehlo/reference/InterpreterOps.td), as used by the interpret/ suite.
#include <string>
#include <utility>
#include <vector>

#include "base/status_macros.h"
#include "compiler/frontend/text/text_parser_internal.h"

namespace ember::frontend::text {
namespace {

absl::Status One(Parser& p, Operation& op) {
  EMBER_ASSIGN_OR_RETURN(UnresolvedOperand u, p.ParseOperandName());
  return p.AddOperands(op, {u});
}

absl::Status ColonType(Parser& p) {
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kColon, "before the operand type"));
  return p.ParseType().status();
}

// `$lhs, $value (, tolerance = F)? attr-dict` (the value carries its own type)
absl::Status ParseExpectConst(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(One(p, op));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kComma, ""));
  EMBER_ASSIGN_OR_RETURN(AttrPtr value, p.ParseAttribute());
  Parser::AddAttr(op, "value", value);
  if (op.name == "check.expect_almost_eq_const" && p.ConsumeIf(TokKind::kComma)) {
    EMBER_RETURN_IF_ERROR(p.ExpectKeyword("tolerance", ""));
    EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kEqual, "after 'tolerance'"));
    EMBER_ASSIGN_OR_RETURN(AttrPtr t, p.ParseAttribute(MakeFloatType(FloatKind::kF64)));
    Parser::AddAttr(op, "tolerance", t);
  }
  return p.ParseOptionalAttrDict(op);
}

// `$lhs, $rhs (, tolerance = F)? attr-dict : type`
absl::Status ParseExpectPair(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(One(p, op));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kComma, ""));
  EMBER_RETURN_IF_ERROR(One(p, op));
  if (op.name == "check.expect_almost_eq" && p.ConsumeIf(TokKind::kComma)) {
    EMBER_RETURN_IF_ERROR(p.ExpectKeyword("tolerance", ""));
    EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kEqual, "after 'tolerance'"));
    EMBER_ASSIGN_OR_RETURN(AttrPtr t, p.ParseAttribute(MakeFloatType(FloatKind::kF64)));
    Parser::AddAttr(op, "tolerance", t);
  }
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return ColonType(p);
}

// `$actual, $expected, max_ulp_difference = N (, min_ulp_difference = N)? : attr-dict T, T`
absl::Status ParseExpectClose(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(One(p, op));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kComma, ""));
  EMBER_RETURN_IF_ERROR(One(p, op));
  const TypePtr ui64 = MakeIntegerType(64, Signedness::kUnsigned);
  for (const char* key : {"max_ulp_difference", "min_ulp_difference"}) {
    if (!p.ConsumeIf(TokKind::kComma)) break;
    EMBER_RETURN_IF_ERROR(p.ExpectKeyword(key, ""));
    EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kEqual, ""));
    EMBER_ASSIGN_OR_RETURN(AttrPtr v, p.ParseAttribute(ui64));
    Parser::AddAttr(op, key, v);
  }
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kColon, "before the operand types"));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  EMBER_ASSIGN_OR_RETURN(std::vector<TypePtr> types, p.ParseTypeList());
  if (types.size() != 2) return p.Error("expected two operand types");
  return absl::OkStatus();
}

// `$expected, probe_id = "id" (, iter = N)? attr-dict : type`
absl::Status ParseExpectSerializedEq(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(One(p, op));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kComma, ""));
  EMBER_RETURN_IF_ERROR(p.ExpectKeyword("probe_id", ""));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kEqual, ""));
  EMBER_ASSIGN_OR_RETURN(std::string id, p.ParseStringLiteral());
  Parser::AddAttr(op, "probe_id", MakeStringAttr(std::move(id)));
  if (p.ConsumeIf(TokKind::kComma)) {
    EMBER_RETURN_IF_ERROR(p.ExpectKeyword("iter", ""));
    EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kEqual, ""));
    EMBER_ASSIGN_OR_RETURN(AttrPtr v, p.ParseAttribute(MakeIntegerType(32, Signedness::kUnsigned)));
    Parser::AddAttr(op, "iteration", v);
  }
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return ColonType(p);
}

absl::Status ParsePrint(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(One(p, op));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return ColonType(p);
}

// `$operand, probe_id = "id" attr-dict : type($result)`
absl::Status ParseProbe(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(One(p, op));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kComma, ""));
  EMBER_RETURN_IF_ERROR(p.ExpectKeyword("probe_id", ""));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kEqual, ""));
  EMBER_ASSIGN_OR_RETURN(std::string id, p.ParseStringLiteral());
  Parser::AddAttr(op, "probe_id", MakeStringAttr(std::move(id)));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kColon, "before the result type"));
  EMBER_ASSIGN_OR_RETURN(TypePtr t, p.ParseType());
  op.result_types = {t};
  return absl::OkStatus();
}

}  // namespace

void RegisterCheckOps(absl::flat_hash_map<std::string, OpInfo>& ops) {
  ops["check.expect_eq_const"] = {ParseExpectConst, {"value"}, false, ""};
  ops["check.expect_almost_eq_const"] = {ParseExpectConst, {"tolerance", "value"}, false, ""};
  ops["check.expect_eq"] = {ParseExpectPair, {}, false, ""};
  ops["check.expect_almost_eq"] = {ParseExpectPair, {"tolerance"}, false, ""};
  ops["check.expect_close"] = {
      ParseExpectClose, {"max_ulp_difference", "min_ulp_difference"}, false, ""};
  ops["check.expect_serialized_eq"] = {
      ParseExpectSerializedEq, {"iteration", "probe_id"}, false, ""};
  ops["interpreter.print"] = {ParsePrint, {}, false, ""};
  ops["interpreter.probe"] = {ParseProbe, {"probe_id"}, false, ""};
  ops["interpreter.run_parallel"] = {nullptr, {"infeed", "programs"}, false, ""};
}

}  // namespace ember::frontend::text
