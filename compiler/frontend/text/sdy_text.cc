// Shardy (`sdy`) attributes and op pretty forms (openxla/shardy ops.td, attrs.td, parsers.cc):
// `#sdy.sharding<@mesh, [{"x", ?}p1, {}], replicated={"y"}>`, `sdy.mesh @mesh = <["x"=2]>`,
// `sdy.sharding_constraint`, `sdy.manual_computation`, ... Attributes are built exactly as the
// bytecode reader builds them (sdy_bytecode.cc), so both readers give one tree.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "base/status_macros.h"
#include "compiler/frontend/text/text_parser_internal.h"

namespace ember::frontend::text {
namespace {

AttrPtr Sdy(std::string name, std::vector<DialectParam> params) {
  return MakeDialectAttr("sdy", std::move(name), std::move(params));
}

// `"x"` or `"x":(1)2`
absl::StatusOr<AttrPtr> ParseAxisRef(Parser& p) {
  EMBER_ASSIGN_OR_RETURN(std::string name, p.ParseStringLiteral());
  AttrPtr sub;
  if (p.ConsumeIf(TokKind::kColon)) {
    EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kLParen, "in sub-axis"));
    EMBER_ASSIGN_OR_RETURN(int64_t pre, p.ParseInt64());
    EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kRParen, "in sub-axis"));
    EMBER_ASSIGN_OR_RETURN(int64_t size, p.ParseInt64());
    sub = Sdy("sub_axis_info", {IntParam("pre_size", pre), IntParam("size", size)});
  }
  return Sdy("axis_ref", {StringParam("name", std::move(name)), AttrParam("sub_axis_info", sub)});
}

// `{"x", "y"}` -> axis refs
absl::StatusOr<std::vector<AttrPtr>> ParseAxisList(Parser& p) {
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kLBrace, "to start an axis list"));
  std::vector<AttrPtr> axes;
  if (!p.ConsumeIf(TokKind::kRBrace)) {
    while (true) {
      EMBER_ASSIGN_OR_RETURN(AttrPtr a, ParseAxisRef(p));
      axes.push_back(std::move(a));
      if (p.ConsumeIf(TokKind::kRBrace)) break;
      EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kComma, "or '}' in axis list"));
    }
  }
  return axes;
}

// `{"x", ?}p2`
absl::StatusOr<AttrPtr> ParseDimensionSharding(Parser& p) {
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kLBrace, "to start a dimension sharding"));
  std::vector<AttrPtr> axes;
  bool closed = true;
  while (!p.ConsumeIf(TokKind::kRBrace)) {
    if (!axes.empty()) EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kComma, "in dimension sharding"));
    if (p.ConsumeIf(TokKind::kQuestion)) {
      closed = false;
      EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kRBrace, "after '?'"));
      break;
    }
    EMBER_ASSIGN_OR_RETURN(AttrPtr a, ParseAxisRef(p));
    axes.push_back(std::move(a));
  }
  std::vector<DialectParam> params = {AttrListParam("axes", axes), BoolParam("is_closed", closed)};
  if (p.Is(TokKind::kBareIdent) && p.tok().text.size() >= 2 && p.tok().text[0] == 'p') {
    int64_t priority = 0;
    if (!absl::SimpleAtoi(std::string(p.tok().text.substr(1)), &priority) || priority < 0) {
      return p.Error("expecting priority in format 'p<number>'");
    }
    p.Advance();
    params.push_back(IntParam("priority", priority));
  }
  return Sdy("dimension_sharding", std::move(params));
}

}  // namespace

absl::StatusOr<AttrPtr> Parser::ParseSdyMeshBody() {
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kLess, "to start a mesh"));
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kLSquare, "to start the mesh axes"));
  std::vector<AttrPtr> axes;
  if (!ConsumeIf(TokKind::kRSquare)) {
    while (true) {
      EMBER_ASSIGN_OR_RETURN(std::string name, ParseStringLiteral());
      EMBER_RETURN_IF_ERROR(Expect(TokKind::kEqual, "after mesh axis name"));
      EMBER_ASSIGN_OR_RETURN(int64_t size, ParseInt64());
      axes.push_back(Sdy("mesh_axis", {StringParam("name", std::move(name)), IntParam("size", size)}));
      if (ConsumeIf(TokKind::kRSquare)) break;
      EMBER_RETURN_IF_ERROR(Expect(TokKind::kComma, "or ']' in mesh axes"));
    }
  }
  std::vector<int64_t> device_ids;
  if (ConsumeIf(TokKind::kComma)) {
    EMBER_RETURN_IF_ERROR(ExpectKeyword("device_ids", "in mesh"));
    EMBER_RETURN_IF_ERROR(Expect(TokKind::kEqual, "after 'device_ids'"));
    EMBER_ASSIGN_OR_RETURN(device_ids, ParseIntList());
  }
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kGreater, "to close the mesh"));
  return Sdy("mesh", {AttrListParam("axes", axes), IntListParam("device_ids", device_ids)});
}

absl::StatusOr<AttrPtr> Parser::ParseSdyTensorSharding() {
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kLess, "to start a tensor sharding"));
  AttrPtr mesh_or_ref;
  if (ConsumeKeyword("mesh")) {
    EMBER_ASSIGN_OR_RETURN(mesh_or_ref, ParseSdyMeshBody());
  } else {
    EMBER_ASSIGN_OR_RETURN(std::string ref, ParseSymbolName());
    mesh_or_ref = MakeSymbolRefAttr(std::move(ref));
  }
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kComma, "after the sharding's mesh"));
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kLSquare, "to start the dimension shardings"));
  std::vector<AttrPtr> dims;
  if (!ConsumeIf(TokKind::kRSquare)) {
    while (true) {
      EMBER_ASSIGN_OR_RETURN(AttrPtr d, ParseDimensionSharding(*this));
      dims.push_back(std::move(d));
      if (ConsumeIf(TokKind::kRSquare)) break;
      EMBER_RETURN_IF_ERROR(Expect(TokKind::kComma, "or ']' in dimension shardings"));
    }
  }
  std::vector<AttrPtr> replicated, unreduced;
  int64_t reduction_op = 0;  // SUM
  while (ConsumeIf(TokKind::kComma)) {
    if (ConsumeKeyword("replicated")) {
      EMBER_RETURN_IF_ERROR(Expect(TokKind::kEqual, "after 'replicated'"));
      EMBER_ASSIGN_OR_RETURN(replicated, ParseAxisList(*this));
    } else if (ConsumeKeyword("unreduced")) {
      if (ConsumeIf(TokKind::kEqual)) {
        if (ConsumeKeyword("max")) {
          reduction_op = 1;
        } else if (ConsumeKeyword("min")) {
          reduction_op = 2;
        } else {
          ConsumeKeyword("sum");
        }
      }
      EMBER_ASSIGN_OR_RETURN(unreduced, ParseAxisList(*this));
    } else {
      return ExpectedError("'replicated' or 'unreduced'");
    }
  }
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kGreater, "to close the tensor sharding"));
  return Sdy("sharding", {AttrParam("mesh_or_ref", mesh_or_ref), AttrListParam("dim_shardings", dims),
                          AttrListParam("replicated_axes", replicated),
                          AttrListParam("unreduced_axes", unreduced),
                          IntParam("reduction_op", reduction_op)});
}

namespace {

// `[<@mesh, [...]>, ...]` -> #sdy.sharding_per_value
absl::StatusOr<AttrPtr> ParseShardingPerValueBody(Parser& p) {
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kLSquare, "to start the shardings"));
  std::vector<AttrPtr> values;
  if (!p.ConsumeIf(TokKind::kRSquare)) {
    while (true) {
      EMBER_ASSIGN_OR_RETURN(AttrPtr s, p.ParseSdyTensorSharding());
      values.push_back(std::move(s));
      if (p.ConsumeIf(TokKind::kRSquare)) break;
      EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kComma, "or ']' in shardings"));
    }
  }
  return Sdy("sharding_per_value", {AttrListParam("value", values)});
}

// `{"x", "y"}` -> #sdy.manual_axes (strings)
absl::StatusOr<AttrPtr> ParseManualAxes(Parser& p) {
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kLBrace, "to start the manual axes"));
  std::vector<AttrPtr> names;
  if (!p.ConsumeIf(TokKind::kRBrace)) {
    while (true) {
      EMBER_ASSIGN_OR_RETURN(std::string n, p.ParseStringLiteral());
      names.push_back(MakeStringAttr(std::move(n)));
      if (p.ConsumeIf(TokKind::kRBrace)) break;
      EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kComma, "or '}' in manual axes"));
    }
  }
  return Sdy("manual_axes", {AttrListParam("value", names)});
}

absl::Status KeywordEq(Parser& p, std::string_view kw) {
  EMBER_RETURN_IF_ERROR(p.ExpectKeyword(kw, ""));
  return p.Expect(TokKind::kEqual, "");
}

absl::Status ParseMesh(Parser& p, Operation& op) {
  EMBER_ASSIGN_OR_RETURN(std::string name, p.ParseSymbolName());
  Parser::AddAttr(op, "sym_name", MakeStringAttr(std::move(name)));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kEqual, "after the mesh name"));
  EMBER_ASSIGN_OR_RETURN(AttrPtr mesh, p.ParseSdyMeshBody());
  Parser::AddAttr(op, "mesh", mesh);
  return p.ParseOptionalAttrDict(op);
}

absl::Status InputAndType(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kColon, "before the result type"));
  EMBER_ASSIGN_OR_RETURN(TypePtr t, p.ParseType());
  op.result_types = {t};
  return absl::OkStatus();
}

// `$input $sharding attr-dict : type` (sharding_constraint, reshard)
absl::Status ParseWithSharding(Parser& p, Operation& op) {
  EMBER_ASSIGN_OR_RETURN(UnresolvedOperand x, p.ParseOperandName());
  EMBER_RETURN_IF_ERROR(p.AddOperands(op, {x}));
  EMBER_ASSIGN_OR_RETURN(AttrPtr s, p.ParseSdyTensorSharding());
  Parser::AddAttr(op, "sharding", s);
  return InputAndType(p, op);
}

absl::Status ParseDataFlowEdge(Parser& p, Operation& op) {
  EMBER_ASSIGN_OR_RETURN(UnresolvedOperand x, p.ParseOperandName());
  EMBER_RETURN_IF_ERROR(p.AddOperands(op, {x}));
  if (p.IsKeyword("sharding")) {
    EMBER_RETURN_IF_ERROR(KeywordEq(p, "sharding"));
    EMBER_ASSIGN_OR_RETURN(AttrPtr s, p.ParseSdyTensorSharding());
    Parser::AddAttr(op, "sharding", s);
  }
  return InputAndType(p, op);
}

absl::Status ParseUnaryTyped(Parser& p, Operation& op) {
  EMBER_ASSIGN_OR_RETURN(UnresolvedOperand x, p.ParseOperandName());
  EMBER_RETURN_IF_ERROR(p.AddOperands(op, {x}));
  return InputAndType(p, op);
}

absl::Status ParseShardingGroup(Parser& p, Operation& op) {
  EMBER_ASSIGN_OR_RETURN(UnresolvedOperand x, p.ParseOperandName());
  EMBER_RETURN_IF_ERROR(p.AddOperands(op, {x}));
  EMBER_RETURN_IF_ERROR(KeywordEq(p, "group_id"));
  EMBER_ASSIGN_OR_RETURN(int64_t id, p.ParseInt64());
  Parser::AddAttr(op, "group_id", MakeIntAttr(id, 64, Signedness::kUnsigned));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kColon, "before the operand type"));
  return p.ParseType().status();
}

absl::Status ParsePropagationBarrier(Parser& p, Operation& op) {
  EMBER_ASSIGN_OR_RETURN(UnresolvedOperand x, p.ParseOperandName());
  EMBER_RETURN_IF_ERROR(p.AddOperands(op, {x}));
  EMBER_RETURN_IF_ERROR(KeywordEq(p, "allowed_direction"));
  EMBER_ASSIGN_OR_RETURN(std::string dir, p.ParseKeyword("propagation direction"));
  // sdy enums travel as their textual form (the bytecode reader keeps them the same way).
  auto a = std::make_shared<Attribute>();
  a->kind = AttrKind::kOpaque;
  a->dialect = "sdy";
  a->str = "#sdy<propagation_direction " + dir + ">";
  Parser::AddAttr(op, "allowed_direction", a);
  return InputAndType(p, op);
}

absl::Status ParseReturn(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  EMBER_ASSIGN_OR_RETURN(std::vector<UnresolvedOperand> ops, p.ParseOperandList());
  EMBER_RETURN_IF_ERROR(p.AddOperands(op, ops));
  if (!ops.empty()) {
    EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kColon, "before the returned types"));
    EMBER_ASSIGN_OR_RETURN(std::vector<TypePtr> types, p.ParseTypeList());
    if (types.size() != ops.size()) return p.Error("number of returned values and types differ");
  }
  return absl::OkStatus();
}

// `(%a: T, ...) { body }` (custom<SingleBlockRegionNoBlockId>)
absl::Status ParseArgsAndBody(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kLParen, "to start the region arguments"));
  std::vector<EntryArg> args;
  if (!p.ConsumeIf(TokKind::kRParen)) {
    while (true) {
      EMBER_ASSIGN_OR_RETURN(EntryArg a, p.ParseArgumentDef(false, nullptr));
      args.push_back(std::move(a));
      if (p.ConsumeIf(TokKind::kRParen)) break;
      EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kComma, "or ')' in region arguments"));
    }
  }
  return p.ParseRegion(op, &args);
}

absl::Status ParseManualComputation(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kLParen, "before the operands"));
  EMBER_ASSIGN_OR_RETURN(std::vector<UnresolvedOperand> ops, p.ParseOperandList());
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kRParen, "after the operands"));
  EMBER_RETURN_IF_ERROR(p.AddOperands(op, ops));
  EMBER_RETURN_IF_ERROR(KeywordEq(p, "in_shardings"));
  EMBER_ASSIGN_OR_RETURN(AttrPtr in, ParseShardingPerValueBody(p));
  Parser::AddAttr(op, "in_shardings", in);
  EMBER_RETURN_IF_ERROR(KeywordEq(p, "out_shardings"));
  EMBER_ASSIGN_OR_RETURN(AttrPtr out, ParseShardingPerValueBody(p));
  Parser::AddAttr(op, "out_shardings", out);
  EMBER_RETURN_IF_ERROR(KeywordEq(p, "manual_axes"));
  EMBER_ASSIGN_OR_RETURN(AttrPtr axes, ParseManualAxes(p));
  Parser::AddAttr(op, "manual_axes", axes);
  EMBER_RETURN_IF_ERROR(ParseArgsAndBody(p, op));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseColonFunctionalType(op, ops.size());
}

absl::Status ParseNamedComputation(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kLess, "before the computation name"));
  EMBER_ASSIGN_OR_RETURN(std::string name, p.ParseStringLiteral());
  Parser::AddAttr(op, "name", MakeStringAttr(std::move(name)));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kGreater, "after the computation name"));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kLParen, "before the operands"));
  EMBER_ASSIGN_OR_RETURN(std::vector<UnresolvedOperand> ops, p.ParseOperandList());
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kRParen, "after the operands"));
  EMBER_RETURN_IF_ERROR(p.AddOperands(op, ops));
  for (const char* key : {"in_shardings", "out_shardings"}) {
    if (!p.IsKeyword(key)) continue;
    EMBER_RETURN_IF_ERROR(KeywordEq(p, key));
    EMBER_ASSIGN_OR_RETURN(AttrPtr s, ParseShardingPerValueBody(p));
    Parser::AddAttr(op, key, s);
  }
  EMBER_RETURN_IF_ERROR(ParseArgsAndBody(p, op));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseColonFunctionalType(op, ops.size());
}

}  // namespace

absl::StatusOr<AttrPtr> Parser::ParseSdyAttr(std::string_view mnemonic, size_t start) {
  const std::string m(mnemonic);
  if (m == "sharding") return ParseSdyTensorSharding();
  if (m == "mesh") return ParseSdyMeshBody();
  if (m == "sharding_per_value") {
    EMBER_RETURN_IF_ERROR(Expect(TokKind::kLess, "after #sdy.sharding_per_value"));
    EMBER_ASSIGN_OR_RETURN(AttrPtr a, ParseShardingPerValueBody(*this));
    EMBER_RETURN_IF_ERROR(Expect(TokKind::kGreater, "to close #sdy.sharding_per_value"));
    return a;
  }
  if (m == "manual_axes") {
    EMBER_RETURN_IF_ERROR(Expect(TokKind::kLess, "after #sdy.manual_axes"));
    EMBER_ASSIGN_OR_RETURN(AttrPtr a, ParseManualAxes(*this));
    EMBER_RETURN_IF_ERROR(Expect(TokKind::kGreater, "to close #sdy.manual_axes"));
    return a;
  }
  // Other sdy attributes (sharding rules, propagation details) are kept verbatim.
  std::string text = "#sdy." + m;
  if (Is(TokKind::kLess)) {
    EMBER_ASSIGN_OR_RETURN(std::string body, ScanVerbatim(tok().offset));
    text += body;
  }
  (void)start;
  auto a = std::make_shared<Attribute>();
  a->kind = AttrKind::kOpaque;
  a->dialect = "sdy";
  a->str = std::move(text);
  return AttrPtr(a);
}

void RegisterSdyOps(absl::flat_hash_map<std::string, OpInfo>& ops) {
  auto add = [&](const char* name, CustomOpParser parse, std::vector<std::string> inherent,
                 bool isolated = false) {
    ops[std::string("sdy.") + name] = {parse, std::move(inherent), isolated, ""};
  };
  add("mesh", ParseMesh, {"mesh", "sym_name"});
  add("sharding_constraint", ParseWithSharding, {"sharding"});
  add("reshard", ParseWithSharding, {"sharding"});
  add("return", ParseReturn, {});
  add("manual_computation", ParseManualComputation,
      {"in_shardings", "manual_axes", "out_shardings"}, /*isolated=*/true);
  add("named_computation", ParseNamedComputation, {"in_shardings", "name", "out_shardings"},
      /*isolated=*/true);
  add("sharding_group", ParseShardingGroup, {"group_id"});
  add("propagation_barrier", ParsePropagationBarrier, {"allowed_direction"});
  add("data_flow_edge", ParseDataFlowEdge, {"sharding"});
  add("func_data_flow_edge", ParseUnaryTyped, {});
  add("constant", nullptr, {"value"});
  add("all_gather", nullptr, {"gathering_axes", "out_sharding"});
  add("all_reduce", nullptr, {"out_sharding", "reduction_axes", "reduction_op"});
  add("all_slice", nullptr, {"out_sharding", "slicing_axes"});
  add("all_to_all", nullptr, {"out_sharding", "params"});
  add("collective_permute", nullptr, {"out_sharding"});
  add("reduce_scatter", nullptr, {"out_sharding", "reduce_scatter_axes", "reduction_op"});
  add("replicated_to_unreduced", nullptr, {"axes", "out_sharding"});
  add("sharded_to_unreduced", nullptr, {"axes", "out_sharding"});
}

}  // namespace ember::frontend::text
