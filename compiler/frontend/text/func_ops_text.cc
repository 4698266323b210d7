// Pretty forms of builtin.module and the func dialect (func.func, func.call, func.return), after
// MLIR's function_interface_impl: `func.func public @main(%arg0: T {attrs} loc(..)) -> (T {attrs})
// attributes {...} { body }`.
#include <string>
#include <utility>
#include <vector>

#include "base/status_macros.h"
#include "compiler/frontend/text/text_parser_internal.h"

namespace ember::frontend::text {
namespace {

bool AnyNonEmpty(const std::vector<AttrPtr>& dicts) {
  for (const AttrPtr& d : dicts) {
    if (d && !d->entries.empty()) return true;
  }
  return false;
}

std::vector<AttrPtr> FillEmpty(std::vector<AttrPtr> dicts) {
  for (AttrPtr& d : dicts) {
    if (!d) d = MakeDictAttr({});
  }
  return dicts;
}

absl::Status ParseModule(Parser& p, Operation& op) {
  if (p.Is(TokKind::kAtIdent)) {
    EMBER_ASSIGN_OR_RETURN(std::string name, p.ParseSymbolName());
    Parser::AddAttr(op, "sym_name", MakeStringAttr(std::move(name)));
  }
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDictWithKeyword(op));
  static const std::vector<EntryArg> kNoArgs;
  EMBER_RETURN_IF_ERROR(p.ParseRegion(op, &kNoArgs));
  return absl::OkStatus();
}

absl::Status ParseFunc(Parser& p, Operation& op) {
  if (p.IsKeyword("public") || p.IsKeyword("private") || p.IsKeyword("nested")) {
    Parser::AddAttr(op, "sym_visibility", MakeStringAttr(std::string(p.tok().text)));
    p.Advance();
  }
  EMBER_ASSIGN_OR_RETURN(std::string name, p.ParseSymbolName());
  Parser::AddAttr(op, "sym_name", MakeStringAttr(std::move(name)));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kLParen, "to start the function arguments"));
  std::vector<EntryArg> args;
  std::vector<AttrPtr> arg_attrs;
  bool named = false;
  auto fn_type = std::make_shared<Type>();
  fn_type->kind = TypeKind::kFunction;
  if (!p.ConsumeIf(TokKind::kRParen)) {
    while (true) {
      AttrPtr attrs;
      if (p.AtOperand()) {
        if (!args.empty() && !named) return p.Error("mixed named and unnamed arguments");
        named = true;
        EMBER_ASSIGN_OR_RETURN(EntryArg a, p.ParseArgumentDef(/*allow_attrs=*/true, &attrs));
        fn_type->types.push_back(a.type);
        args.push_back(std::move(a));
      } else {
        if (named) return p.Error("mixed named and unnamed arguments");
        EntryArg a;
        EMBER_ASSIGN_OR_RETURN(a.type, p.ParseType());
        if (p.Is(TokKind::kLBrace)) {
          EMBER_ASSIGN_OR_RETURN(std::vector<NamedAttribute> entries, p.ParseAttrDict());
          attrs = MakeDictAttr(std::move(entries));
        }
        EMBER_ASSIGN_OR_RETURN(a.loc, p.ParseOptionalLocation());
        fn_type->types.push_back(a.type);
        args.push_back(std::move(a));
      }
      arg_attrs.push_back(attrs);
      if (p.ConsumeIf(TokKind::kRParen)) break;
      EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kComma, "or ')' in function arguments"));
    }
  }
  std::vector<AttrPtr> res_attrs;
  if (p.ConsumeIf(TokKind::kArrow)) {
    if (p.ConsumeIf(TokKind::kLParen)) {
      if (!p.ConsumeIf(TokKind::kRParen)) {
        while (true) {
          EMBER_ASSIGN_OR_RETURN(TypePtr t, p.ParseType());
          fn_type->results.push_back(std::move(t));
          AttrPtr attrs;
          if (p.Is(TokKind::kLBrace)) {
            EMBER_ASSIGN_OR_RETURN(std::vector<NamedAttribute> entries, p.ParseAttrDict());
            attrs = MakeDictAttr(std::move(entries));
          }
          res_attrs.push_back(attrs);
          if (p.ConsumeIf(TokKind::kRParen)) break;
          EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kComma, "or ')' in function results"));
        }
      }
    } else {
      EMBER_ASSIGN_OR_RETURN(TypePtr t, p.ParseType());
      fn_type->results.push_back(std::move(t));
      res_attrs.push_back(nullptr);
    }
  }
  Parser::AddAttr(op, "function_type", MakeTypeAttr(fn_type));
  if (AnyNonEmpty(arg_attrs)) Parser::AddAttr(op, "arg_attrs", MakeArrayAttr(FillEmpty(arg_attrs)));
  if (AnyNonEmpty(res_attrs)) Parser::AddAttr(op, "res_attrs", MakeArrayAttr(FillEmpty(res_attrs)));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDictWithKeyword(op));
  if (p.Is(TokKind::kLBrace)) {
    if (!named && !args.empty()) return p.Error("a function with a body must name its arguments");
    EMBER_RETURN_IF_ERROR(p.ParseRegion(op, &args));
  } else {
    op.regions.emplace_back();  // a declaration: one empty region
  }
  return absl::OkStatus();
}

absl::Status ParseCall(Parser& p, Operation& op) {
  EMBER_ASSIGN_OR_RETURN(std::string callee, p.ParseSymbolName());
  Parser::AddAttr(op, "callee", MakeSymbolRefAttr(std::move(callee)));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kLParen, "before call operands"));
  EMBER_ASSIGN_OR_RETURN(std::vector<UnresolvedOperand> operands, p.ParseOperandList());
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kRParen, "after call operands"));
  EMBER_RETURN_IF_ERROR(p.AddOperands(op, operands));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseColonFunctionalType(op, operands.size());
}

absl::Status ParseReturn(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  EMBER_ASSIGN_OR_RETURN(std::vector<UnresolvedOperand> operands, p.ParseOperandList());
  EMBER_RETURN_IF_ERROR(p.AddOperands(op, operands));
  if (!operands.empty()) {
    EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kColon, "before the returned types"));
    EMBER_ASSIGN_OR_RETURN(std::vector<TypePtr> types, p.ParseTypeList());
    if (types.size() != operands.size()) {
      return p.Error("number of returned values and types differ");
    }
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterFuncOps(absl::flat_hash_map<std::string, OpInfo>& ops) {
  ops["builtin.module"] = {ParseModule, {"sym_name", "sym_visibility"}, true, ""};
  ops["builtin.unrealized_conversion_cast"] = {nullptr, {}, false, ""};
  ops["func.func"] = {ParseFunc,
                      {"arg_attrs", "function_type", "no_inline", "res_attrs", "sym_name",
                       "sym_visibility"},
                      true,
                      "func"};
  ops["func.call"] = {ParseCall, {"arg_attrs", "callee", "no_inline", "res_attrs"}, false, ""};
  ops["func.return"] = {ParseReturn, {}, false, ""};
}

}  // namespace ember::frontend::text
