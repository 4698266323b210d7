// Pretty forms of StableHLO ops (assembly formats of stablehlo/dialect/StablehloOps.td and the
// hand-written printers of constant, while and reduce). Each produces the tree of its generic
// form: same op name, same attribute names and kinds.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/frontend/text/stablehlo_text.h"
#include "compiler/frontend/text/text_parser_internal.h"

namespace ember::frontend::text {
namespace {

// operand (, operand)* -> added to op.
absl::StatusOr<size_t> Operands(Parser& p, Operation& op) {
  EMBER_ASSIGN_OR_RETURN(std::vector<UnresolvedOperand> ops, p.ParseOperandList());
  EMBER_RETURN_IF_ERROR(p.AddOperands(op, ops));
  return ops.size();
}

absl::Status One(Parser& p, Operation& op) {
  EMBER_ASSIGN_OR_RETURN(UnresolvedOperand u, p.ParseOperandName());
  return p.AddOperands(op, {u});
}

absl::Status Comma(Parser& p) { return p.Expect(TokKind::kComma, ""); }

absl::Status Keyword(Parser& p, std::string_view kw) {
  EMBER_RETURN_IF_ERROR(p.ExpectKeyword(kw, ""));
  return p.Expect(TokKind::kEqual, absl::StrCat("after '", std::string(kw), "'"));
}

// `$operand attr-dict : custom<SameOperandsAndResultType>` for n operands separated by commas.
absl::Status ParseElementwise(Parser& p, Operation& op) {
  EMBER_ASSIGN_OR_RETURN(size_t n, Operands(p, op));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseSameOperandsAndResultType(op, n);
}

// `operands attr-dict : functional-type(operands, results)`
absl::Status ParseOperandsFunctional(Parser& p, Operation& op) {
  EMBER_ASSIGN_OR_RETURN(size_t n, Operands(p, op));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseColonFunctionalType(op, n);
}

// `attr-dict : type(results)`
absl::Status ParseNullary(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kColon, "before the result type"));
  EMBER_ASSIGN_OR_RETURN(TypePtr t, p.ParseType());
  op.result_types = {t};
  return absl::OkStatus();
}

absl::Status ParseConstant(Parser& p, Operation& op) {
  if (p.ConsumeIf(TokKind::kLParen)) {
    // `stablehlo.constant() <{value = ...}> {attrs} : () -> T` (quantized results).
    EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kRParen, "in constant"));
    if (p.ConsumeIf(TokKind::kLess)) {
      EMBER_ASSIGN_OR_RETURN(std::vector<NamedAttribute> props, p.ParseAttrDict());
      for (NamedAttribute& a : props) Parser::AddAttr(op, a.name, a.value);
      EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kGreater, "to close the properties"));
    }
    EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
    return p.ParseColonFunctionalType(op, 0);
  }
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  EMBER_ASSIGN_OR_RETURN(AttrPtr value, p.ParseAttribute());
  if (!value->type) return p.Error("constant value must be a typed elements attribute");
  op.result_types = {value->type};
  Parser::AddAttr(op, "value", value);
  return absl::OkStatus();
}

absl::Status ParseIota(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(Keyword(p, "dim"));
  EMBER_ASSIGN_OR_RETURN(int64_t d, p.ParseInt64());
  Parser::AddAttr(op, "iota_dimension", MakeI64Attr(d));
  return ParseNullary(p, op);
}

absl::Status ParseDynamicIota(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(One(p, op));
  EMBER_RETURN_IF_ERROR(Comma(p));
  EMBER_RETURN_IF_ERROR(Keyword(p, "dim"));
  EMBER_ASSIGN_OR_RETURN(int64_t d, p.ParseInt64());
  Parser::AddAttr(op, "iota_dimension", MakeI64Attr(d));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseColonFunctionalType(op, 1);
}

absl::Status ParseGetTupleElement(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(One(p, op));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kLSquare, "before the tuple index"));
  EMBER_ASSIGN_OR_RETURN(int64_t index, p.ParseInt64());
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kRSquare, "after the tuple index"));
  Parser::AddAttr(op, "index", MakeI32Attr(index));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseColonFunctionalType(op, 1);
}

absl::Status ParseTuple(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(Operands(p, op).status());
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kColon, "before the tuple type"));
  EMBER_ASSIGN_OR_RETURN(TypePtr t, p.ParseType());
  if (t->kind != TypeKind::kTuple) return p.Error("expected tuple type");
  op.result_types = {t};
  return absl::OkStatus();
}

absl::Status ParseCompare(Parser& p, Operation& op) {
  EMBER_ASSIGN_OR_RETURN(AttrPtr dir, ParseEnumValue(p, "stablehlo", "comparison_direction"));
  Parser::AddAttr(op, "comparison_direction", dir);
  EMBER_RETURN_IF_ERROR(Comma(p));
  EMBER_RETURN_IF_ERROR(One(p, op));
  EMBER_RETURN_IF_ERROR(Comma(p));
  EMBER_RETURN_IF_ERROR(One(p, op));
  if (p.ConsumeIf(TokKind::kComma)) {
    EMBER_ASSIGN_OR_RETURN(AttrPtr type, ParseEnumValue(p, "stablehlo", "comparison_type"));
    Parser::AddAttr(op, "compare_type", type);
  }
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseColonFunctionalType(op, 2);
}

absl::Status ParseSlice(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(One(p, op));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kLSquare, "to start the slice ranges"));
  std::vector<int64_t> start, limit, stride;
  if (!p.ConsumeIf(TokKind::kRSquare)) {
    while (true) {
      EMBER_ASSIGN_OR_RETURN(int64_t s, p.ParseInt64());
      EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kColon, "in slice range"));
      EMBER_ASSIGN_OR_RETURN(int64_t l, p.ParseInt64());
      int64_t st = 1;
      if (p.ConsumeIf(TokKind::kColon)) {
        EMBER_ASSIGN_OR_RETURN(st, p.ParseInt64());
      }
      start.push_back(s);
      limit.push_back(l);
      stride.push_back(st);
      if (p.ConsumeIf(TokKind::kRSquare)) break;
      EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kComma, "or ']' in slice ranges"));
    }
  }
  Parser::AddAttr(op, "start_indices", MakeDenseI64Array(start));
  Parser::AddAttr(op, "limit_indices", MakeDenseI64Array(limit));
  Parser::AddAttr(op, "strides", MakeDenseI64Array(stride));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseColonFunctionalType(op, 1);
}

// `%a, %b, ..., keyword` (custom<VariadicOperandWithAttribute>): operands each followed by ','.
absl::StatusOr<size_t> OperandsThenComma(Parser& p, Operation& op) {
  std::vector<UnresolvedOperand> ops;
  while (p.AtOperand()) {
    EMBER_ASSIGN_OR_RETURN(UnresolvedOperand u, p.ParseOperandName());
    ops.push_back(std::move(u));
    EMBER_RETURN_IF_ERROR(Comma(p));
  }
  EMBER_RETURN_IF_ERROR(p.AddOperands(op, ops));
  return ops.size();
}

absl::Status ParseDynamicSlice(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(One(p, op));
  EMBER_RETURN_IF_ERROR(Comma(p));
  EMBER_ASSIGN_OR_RETURN(size_t n, OperandsThenComma(p, op));
  EMBER_RETURN_IF_ERROR(Keyword(p, "sizes"));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, p.ParseIntList());
  Parser::AddAttr(op, "slice_sizes", MakeDenseI64Array(sizes));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseColonFunctionalType(op, n + 1);
}

absl::Status ParseConcatenate(Parser& p, Operation& op) {
  EMBER_ASSIGN_OR_RETURN(size_t n, OperandsThenComma(p, op));
  EMBER_RETURN_IF_ERROR(Keyword(p, "dim"));
  EMBER_ASSIGN_OR_RETURN(int64_t d, p.ParseInt64());
  Parser::AddAttr(op, "dimension", MakeI64Attr(d));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseColonFunctionalType(op, n);
}

// `%x(, %y)*, keyword = [..] attr-dict : functional-type` with the list stored as attr_name.
absl::Status ParseOperandsWithDims(Parser& p, Operation& op, size_t num_operands,
                                   std::string_view keyword, const char* attr_name,
                                   bool same_type) {
  for (size_t i = 0; i < num_operands; ++i) {
    EMBER_RETURN_IF_ERROR(One(p, op));
    EMBER_RETURN_IF_ERROR(Comma(p));
  }
  EMBER_RETURN_IF_ERROR(Keyword(p, keyword));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> dims, p.ParseIntList());
  Parser::AddAttr(op, attr_name, MakeDenseI64Array(dims));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  if (same_type) return p.ParseSameOperandsAndResultType(op, num_operands);
  return p.ParseColonFunctionalType(op, num_operands);
}

absl::Status ParseBroadcast(Parser& p, Operation& op) {
  return ParseOperandsWithDims(p, op, 1, "sizes", "broadcast_sizes", false);
}
absl::Status ParseBroadcastInDim(Parser& p, Operation& op) {
  return ParseOperandsWithDims(p, op, 1, "dims", "broadcast_dimensions", false);
}
absl::Status ParseDynamicBroadcastInDim(Parser& p, Operation& op) {
  return ParseOperandsWithDims(p, op, 2, "dims", "broadcast_dimensions", false);
}
absl::Status ParseTranspose(Parser& p, Operation& op) {
  return ParseOperandsWithDims(p, op, 1, "dims", "permutation", false);
}
absl::Status ParseReverse(Parser& p, Operation& op) {
  return ParseOperandsWithDims(p, op, 1, "dims", "dimensions", true);
}

absl::Status ParseCholesky(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(One(p, op));
  if (p.ConsumeIf(TokKind::kComma)) {
    EMBER_RETURN_IF_ERROR(Keyword(p, "lower"));
    EMBER_ASSIGN_OR_RETURN(bool lower, p.ParseBoolKeyword());
    Parser::AddAttr(op, "lower", MakeBoolAttr(lower));
  }
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseSameOperandsAndResultType(op, 1);
}

absl::Status ParseComposite(Parser& p, Operation& op) {
  EMBER_ASSIGN_OR_RETURN(std::string name, p.ParseStringLiteral());
  Parser::AddAttr(op, "name", MakeStringAttr(std::move(name)));
  EMBER_ASSIGN_OR_RETURN(size_t n, Operands(p, op));
  if (p.ConsumeIf(TokKind::kLParen)) {
    while (true) {
      EMBER_RETURN_IF_ERROR(p.ParseRegion(op, nullptr));
      if (p.ConsumeIf(TokKind::kRParen)) break;
      EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kComma, "or ')' in composite regions"));
    }
  }
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseColonFunctionalType(op, n);
}

// `window = {stride = [..], pad = [[l, h], ..], lhs_dilate = [..], rhs_dilate = [..], reverse = [..]}`
absl::Status ParseWindowAttributes(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kLBrace, "to start the window attributes"));
  std::vector<std::string> seen;
  while (p.Is(TokKind::kBareIdent)) {
    const size_t at = p.tok().offset;
    const std::string key(p.tok().text);
    for (const std::string& s : seen) {
      if (s == key) return p.ErrorAt(at, "duplicate window attribute '" + key + "'");
    }
    seen.push_back(key);
    p.Advance();
    EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kEqual, "after window attribute name"));
    if (key == "pad") {
      EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kLSquare, "to start the padding"));
      std::vector<int64_t> values;
      int64_t rows = 0;
      if (!p.ConsumeIf(TokKind::kRSquare)) {
        while (true) {
          EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> pair, p.ParseIntList());
          if (pair.size() != 2) return p.Error("expected [low, high] padding pairs");
          values.insert(values.end(), pair.begin(), pair.end());
          ++rows;
          if (p.ConsumeIf(TokKind::kRSquare)) break;
          EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kComma, "or ']' in padding"));
        }
      }
      Parser::AddAttr(op, "padding", MakeDenseI64Elements({rows, 2}, values));
    } else {
      EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> values, p.ParseIntList());
      if (key == "reverse") {
        std::vector<bool> b;
        for (int64_t v : values) b.push_back(v != 0);
        Parser::AddAttr(op, "window_reversal", MakeDenseBoolArray(b));
      } else if (key == "stride") {
        Parser::AddAttr(op, "window_strides", MakeDenseI64Array(values));
      } else if (key == "lhs_dilate") {
        Parser::AddAttr(op, "lhs_dilation", MakeDenseI64Array(values));
      } else if (key == "rhs_dilate") {
        Parser::AddAttr(op, "rhs_dilation", MakeDenseI64Array(values));
      } else {
        return p.ErrorAt(at, "unexpected window attribute '" + key + "'");
      }
    }
    if (!p.ConsumeIf(TokKind::kComma)) break;
  }
  return p.Expect(TokKind::kRBrace, "to close the window attributes");
}

absl::Status ParseConvolution(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kLParen, "before convolution operands"));
  EMBER_ASSIGN_OR_RETURN(size_t n, Operands(p, op));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kRParen, "after convolution operands"));
  EMBER_RETURN_IF_ERROR(Keyword(p, "dim_numbers"));
  EMBER_ASSIGN_OR_RETURN(AttrPtr dims, ParseConvDimensionNumbers(p, "stablehlo"));
  Parser::AddAttr(op, "dimension_numbers", dims);
  EMBER_RETURN_IF_ERROR(Comma(p));
  EMBER_RETURN_IF_ERROR(Keyword(p, "window"));
  EMBER_RETURN_IF_ERROR(ParseWindowAttributes(p, op));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseColonFunctionalType(op, n);
}

absl::Status ParseCustomCall(Parser& p, Operation& op) {
  EMBER_ASSIGN_OR_RETURN(std::string target, p.ParseSymbolName());
  Parser::AddAttr(op, "call_target_name", MakeStringAttr(std::move(target)));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kLParen, "before custom_call operands"));
  EMBER_ASSIGN_OR_RETURN(size_t n, Operands(p, op));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kRParen, "after custom_call operands"));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseColonFunctionalType(op, n);
}

// `precision = [DEFAULT, HIGH]`
absl::Status ParsePrecision(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(Keyword(p, "precision"));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kLSquare, "to start the precision list"));
  std::vector<AttrPtr> values;
  if (!p.ConsumeIf(TokKind::kRSquare)) {
    while (true) {
      EMBER_ASSIGN_OR_RETURN(AttrPtr v, ParseEnumValue(p, "stablehlo", "precision"));
      values.push_back(std::move(v));
      if (p.ConsumeIf(TokKind::kRSquare)) break;
      EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kComma, "or ']' in precision list"));
    }
  }
  Parser::AddAttr(op, "precision_config", MakeArrayAttr(std::move(values)));
  return absl::OkStatus();
}

absl::Status ParseDot(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(One(p, op));
  EMBER_RETURN_IF_ERROR(Comma(p));
  EMBER_RETURN_IF_ERROR(One(p, op));
  if (p.ConsumeIf(TokKind::kComma)) EMBER_RETURN_IF_ERROR(ParsePrecision(p, op));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseColonFunctionalType(op, 2);
}

absl::Status ParseDotGeneral(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(One(p, op));
  EMBER_RETURN_IF_ERROR(Comma(p));
  EMBER_RETURN_IF_ERROR(One(p, op));
  EMBER_RETURN_IF_ERROR(Comma(p));
  std::vector<int64_t> lb, rb, lc, rc;
  auto lhs_rhs = [&](std::vector<int64_t>& l, std::vector<int64_t>& r) -> absl::Status {
    EMBER_ASSIGN_OR_RETURN(l, p.ParseIntList());
    EMBER_RETURN_IF_ERROR(p.ExpectKeyword("x", "between lhs and rhs dimensions"));
    EMBER_ASSIGN_OR_RETURN(r, p.ParseIntList());
    return absl::OkStatus();
  };
  if (p.IsKeyword("batching_dims")) {
    EMBER_RETURN_IF_ERROR(Keyword(p, "batching_dims"));
    EMBER_RETURN_IF_ERROR(lhs_rhs(lb, rb));
    EMBER_RETURN_IF_ERROR(Comma(p));
  }
  EMBER_RETURN_IF_ERROR(Keyword(p, "contracting_dims"));
  EMBER_RETURN_IF_ERROR(lhs_rhs(lc, rc));
  Parser::AddAttr(op, "dot_dimension_numbers",
                  MakeDialectAttr("stablehlo", "dot",
                                  {IntListParam("lhs_batching_dimensions", lb),
                                   IntListParam("rhs_batching_dimensions", rb),
                                   IntListParam("lhs_contracting_dimensions", lc),
                                   IntListParam("rhs_contracting_dimensions", rc)}));
  if (p.ConsumeIf(TokKind::kComma)) {
    if (!p.IsKeyword("algorithm")) {
      EMBER_RETURN_IF_ERROR(ParsePrecision(p, op));
      if (p.ConsumeIf(TokKind::kComma)) {
        if (!p.IsKeyword("algorithm")) return p.ExpectedError("'algorithm'");
      }
    }
    if (p.IsKeyword("algorithm")) {
      EMBER_RETURN_IF_ERROR(Keyword(p, "algorithm"));
      EMBER_ASSIGN_OR_RETURN(std::vector<DialectParam> params,
                             ParseStructFields(p, DotAlgorithmFields()));
      Parser::AddAttr(op, "algorithm",
                      MakeDialectAttr("stablehlo", "dot_algorithm", std::move(params)));
    }
  }
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseColonFunctionalType(op, 2);
}

absl::Status ParseEinsum(Parser& p, Operation& op, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    EMBER_RETURN_IF_ERROR(One(p, op));
    EMBER_RETURN_IF_ERROR(Comma(p));
  }
  EMBER_RETURN_IF_ERROR(Keyword(p, "config"));
  EMBER_ASSIGN_OR_RETURN(std::string config, p.ParseStringLiteral());
  Parser::AddAttr(op, "einsum_config", MakeStringAttr(std::move(config)));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseColonFunctionalType(op, n);
}
absl::Status ParseEinsum2(Parser& p, Operation& op) { return ParseEinsum(p, op, 2); }
absl::Status ParseEinsum1(Parser& p, Operation& op) { return ParseEinsum(p, op, 1); }

absl::Status ParseFft(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(One(p, op));
  EMBER_RETURN_IF_ERROR(Comma(p));
  EMBER_RETURN_IF_ERROR(Keyword(p, "type"));
  EMBER_ASSIGN_OR_RETURN(AttrPtr type, ParseEnumValue(p, "stablehlo", "fft_type"));
  Parser::AddAttr(op, "fft_type", type);
  EMBER_RETURN_IF_ERROR(Comma(p));
  EMBER_RETURN_IF_ERROR(Keyword(p, "length"));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> length, p.ParseIntList());
  Parser::AddAttr(op, "fft_length", MakeDenseI64Array(length));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseColonFunctionalType(op, 1);
}

// `%x(, %y)*, dim = N attr-dict : functional-type` with `dimension` i64.
absl::Status ParseOperandsWithDim(Parser& p, Operation& op, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    EMBER_RETURN_IF_ERROR(One(p, op));
    EMBER_RETURN_IF_ERROR(Comma(p));
  }
  EMBER_RETURN_IF_ERROR(Keyword(p, "dim"));
  EMBER_ASSIGN_OR_RETURN(int64_t d, p.ParseInt64());
  Parser::AddAttr(op, "dimension", MakeI64Attr(d));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseColonFunctionalType(op, n);
}
absl::Status ParseGetDimensionSize(Parser& p, Operation& op) { return ParseOperandsWithDim(p, op, 1); }
absl::Status ParseSetDimensionSize(Parser& p, Operation& op) { return ParseOperandsWithDim(p, op, 2); }

absl::Status ParseSelect(Parser& p, Operation& op) {
  EMBER_ASSIGN_OR_RETURN(size_t n, Operands(p, op));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kColon, "before the select types"));
  const size_t at = p.tok().offset;
  EMBER_ASSIGN_OR_RETURN(std::vector<TypePtr> types, p.ParseTypeList());
  if (types.size() == 2) {
    op.result_types = {types[1]};
  } else if (types.size() == 1 && types[0]->kind == TypeKind::kFunction) {
    if (types[0]->types.size() != n || types[0]->results.size() != 1) {
      return p.ErrorAt(at, "select function type does not match its operands");
    }
    op.result_types = types[0]->results;
  } else {
    return p.ErrorAt(at, "expected functional type or list of two types");
  }
  return absl::OkStatus();
}

absl::Status ParseComplex(Parser& p, Operation& op) {
  EMBER_ASSIGN_OR_RETURN(size_t n, Operands(p, op));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kColon, "before the complex type"));
  EMBER_ASSIGN_OR_RETURN(TypePtr t, p.ParseType());
  if (t->kind == TypeKind::kFunction) {
    if (t->types.size() != n || t->results.size() != 1) return p.Error("bad complex type");
    op.result_types = t->results;
  } else {
    op.result_types = {t};
  }
  return absl::OkStatus();
}

absl::Status ParsePad(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(One(p, op));
  EMBER_RETURN_IF_ERROR(Comma(p));
  EMBER_RETURN_IF_ERROR(One(p, op));
  const std::pair<const char*, const char*> parts[] = {
      {"low", "edge_padding_low"}, {"high", "edge_padding_high"}, {"interior", "interior_padding"}};
  for (const auto& [kw, name] : parts) {
    EMBER_RETURN_IF_ERROR(Comma(p));
    EMBER_RETURN_IF_ERROR(Keyword(p, kw));
    EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> v, p.ParseIntList());
    Parser::AddAttr(op, name, MakeDenseI64Array(v));
  }
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseColonFunctionalType(op, 2);
}

absl::Status ParseOptimizationBarrier(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  if (p.ConsumeIf(TokKind::kLParen)) return p.Expect(TokKind::kRParen, "in optimization_barrier()");
  EMBER_ASSIGN_OR_RETURN(size_t n, Operands(p, op));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kColon, "before the operand types"));
  EMBER_ASSIGN_OR_RETURN(std::vector<TypePtr> types, p.ParseTypeList());
  if (types.size() != n) return p.Error("optimization_barrier needs one type per operand");
  op.result_types = types;
  return absl::OkStatus();
}

absl::Status ParseRng(Parser& p, Operation& op) {
  for (int i = 0; i < 3; ++i) {
    EMBER_RETURN_IF_ERROR(One(p, op));
    EMBER_RETURN_IF_ERROR(Comma(p));
  }
  EMBER_RETURN_IF_ERROR(Keyword(p, "distribution"));
  EMBER_ASSIGN_OR_RETURN(AttrPtr d, ParseEnumValue(p, "stablehlo", "rng_distribution"));
  Parser::AddAttr(op, "rng_distribution", d);
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseColonFunctionalType(op, 3);
}

absl::Status ParseRngBitGenerator(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(One(p, op));
  EMBER_RETURN_IF_ERROR(Comma(p));
  EMBER_RETURN_IF_ERROR(Keyword(p, "algorithm"));
  EMBER_ASSIGN_OR_RETURN(AttrPtr a, ParseEnumValue(p, "stablehlo", "rng_algorithm"));
  Parser::AddAttr(op, "rng_algorithm", a);
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseColonFunctionalType(op, 1);
}

absl::Status ParseReducePrecision(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(One(p, op));
  EMBER_RETURN_IF_ERROR(Comma(p));
  EMBER_RETURN_IF_ERROR(Keyword(p, "format"));
  const size_t at = p.tok().offset;
  EMBER_ASSIGN_OR_RETURN(std::string f, p.ParseKeyword("exponent/mantissa format (e5m10)"));
  const size_t m = f.find('m');
  int64_t e = 0, mant = 0;
  if (f.size() < 4 || f[0] != 'e' || m == std::string::npos || m < 2 ||
      !absl::SimpleAtoi(f.substr(1, m - 1), &e) || !absl::SimpleAtoi(f.substr(m + 1), &mant)) {
    return p.ErrorAt(at, "expected exponent mantissa in format e#m#, saw " + f);
  }
  Parser::AddAttr(op, "exponent_bits", MakeI32Attr(e));
  Parser::AddAttr(op, "mantissa_bits", MakeI32Attr(mant));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  return p.ParseSameOperandsAndResultType(op, 1);
}

absl::Status ParseReturn(Parser& p, Operation& op) {
  EMBER_ASSIGN_OR_RETURN(size_t n, Operands(p, op));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  if (p.ConsumeIf(TokKind::kColon)) {
    EMBER_ASSIGN_OR_RETURN(std::vector<TypePtr> types, p.ParseTypeList());
    if (types.size() != n) return p.Error("number of returned values and types differ");
  } else if (n > 0) {
    return p.ExpectedError("':' and the returned types");
  }
  return absl::OkStatus();
}

// `(%iterArg = %init, ...) : T, ... attributes {...}? cond { ... } do { ... }`
absl::Status ParseWhile(Parser& p, Operation& op) {
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kLParen, "after stablehlo.while"));
  std::vector<UnresolvedOperand> iter_args, inits;
  if (!p.ConsumeIf(TokKind::kRParen)) {
    while (true) {
      EMBER_ASSIGN_OR_RETURN(UnresolvedOperand a, p.ParseOperandName());
      EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kEqual, "after the iteration value name"));
      EMBER_ASSIGN_OR_RETURN(UnresolvedOperand v, p.ParseOperandName());
      iter_args.push_back(std::move(a));
      inits.push_back(std::move(v));
      if (p.ConsumeIf(TokKind::kRParen)) break;
      EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kComma, "or ')' in while operands"));
    }
  }
  EMBER_RETURN_IF_ERROR(p.AddOperands(op, inits));
  if (!inits.empty()) {
    EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kColon, "before the while types"));
    EMBER_ASSIGN_OR_RETURN(op.result_types, p.ParseTypeList());
    if (op.result_types.size() != inits.size()) {
      return p.Error("while needs one type per iteration value");
    }
  }
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDictWithKeyword(op));
  std::vector<EntryArg> args;
  for (size_t i = 0; i < iter_args.size(); ++i) {
    args.push_back({iter_args[i], op.result_types[i], nullptr});
  }
  EMBER_RETURN_IF_ERROR(p.ExpectKeyword("cond", "in stablehlo.while"));
  EMBER_RETURN_IF_ERROR(p.ParseRegion(op, &args));
  EMBER_RETURN_IF_ERROR(p.ExpectKeyword("do", "in stablehlo.while"));
  return p.ParseRegion(op, &args);
}

// Compact: `(%x init: %i), ... applies stablehlo.add across dimensions = [..] : fn-type`
// General: `(%x init: %i) across dimensions = [..] : fn-type reducer(%a: T, %b: T) { ... }`
absl::Status ParseReduce(Parser& p, Operation& op) {
  const size_t start = p.tok().offset;
  std::vector<UnresolvedOperand> inputs, inits;
  while (p.ConsumeIf(TokKind::kLParen)) {
    EMBER_ASSIGN_OR_RETURN(UnresolvedOperand x, p.ParseOperandName());
    EMBER_RETURN_IF_ERROR(p.ExpectKeyword("init", "in reduce operand"));
    EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kColon, "after 'init'"));
    EMBER_ASSIGN_OR_RETURN(UnresolvedOperand i, p.ParseOperandName());
    EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kRParen, "after reduce init value"));
    inputs.push_back(std::move(x));
    inits.push_back(std::move(i));
    if (!p.ConsumeIf(TokKind::kComma)) break;
  }
  std::vector<UnresolvedOperand> all = inputs;
  all.insert(all.end(), inits.begin(), inits.end());
  EMBER_RETURN_IF_ERROR(p.AddOperands(op, all));
  std::string inner;
  const size_t inner_at = p.tok().offset;
  if (p.ConsumeKeyword("applies")) {
    if (p.Is(TokKind::kString)) {
      EMBER_ASSIGN_OR_RETURN(inner, p.ParseStringLiteral());
    } else {
      EMBER_ASSIGN_OR_RETURN(inner, p.ParseKeyword("reduction op name"));
    }
    if (inner.find('.') == std::string::npos) inner = "stablehlo." + inner;
  }
  EMBER_RETURN_IF_ERROR(p.ExpectKeyword("across", "in stablehlo.reduce"));
  EMBER_RETURN_IF_ERROR(Keyword(p, "dimensions"));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> dims, p.ParseIntList());
  Parser::AddAttr(op, "dimensions", MakeDenseI64Array(dims));
  EMBER_RETURN_IF_ERROR(p.ParseOptionalAttrDict(op));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kColon, "before the reduce type"));
  const size_t type_at = p.tok().offset;
  EMBER_ASSIGN_OR_RETURN(TypePtr fn, p.ParseFunctionType());
  if (fn->types.size() != all.size()) {
    return p.ErrorAt(type_at, absl::StrCat(all.size(), " operands present, but the type names ",
                                           fn->types.size()));
  }
  op.result_types = fn->results;
  if (inner.empty()) {
    EMBER_RETURN_IF_ERROR(p.ExpectKeyword("reducer", "in stablehlo.reduce"));
    std::vector<EntryArg> lhs, rhs;
    while (p.ConsumeIf(TokKind::kLParen)) {
      EMBER_ASSIGN_OR_RETURN(EntryArg a, p.ParseArgumentDef(false, nullptr));
      EMBER_RETURN_IF_ERROR(Comma(p));
      EMBER_ASSIGN_OR_RETURN(EntryArg b, p.ParseArgumentDef(false, nullptr));
      EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kRParen, "after reducer arguments"));
      lhs.push_back(std::move(a));
      rhs.push_back(std::move(b));
    }
    lhs.insert(lhs.end(), rhs.begin(), rhs.end());
    return p.ParseRegion(op, &lhs);
  }
  // The compact form stands for the body ^bb0(%a: tensor<E>, %b: tensor<E>):
  // `%r = inner %a, %b` and `stablehlo.return %r`, located at the op (or its explicit loc).
  if (inputs.size() != 1) return p.ErrorAt(inner_at, "compact reduce takes one input");
  if (inner.rfind("stablehlo.", 0) != 0) {
    return p.ErrorAt(inner_at, "the compact reduce body must be a stablehlo binary op");
  }
  EMBER_ASSIGN_OR_RETURN(AttrPtr explicit_loc, p.ParseOptionalLocation());
  if (explicit_loc) op.loc = explicit_loc;
  const TypePtr& input = fn->types.front();
  if (!input->element) return p.ErrorAt(type_at, "reduce input must be a tensor");
  TypePtr scalar = MakeTensorType({}, input->element);
  Region region;
  region.blocks.push_back(std::make_unique<Block>());
  Block& block = *region.blocks.back();
  block.arguments = {{scalar, op.loc}, {scalar, op.loc}};
  auto body = std::make_unique<Operation>();
  body->name = inner;
  body->operands = {ValueRef{nullptr, &block, 0}, ValueRef{nullptr, &block, 1}};
  body->result_types = {scalar};
  body->loc = op.loc;
  auto ret = std::make_unique<Operation>();
  ret->name = "stablehlo.return";
  ret->operands = {ValueRef{body.get(), nullptr, 0}};
  ret->loc = op.loc;
  block.operations.push_back(std::move(body));
  block.operations.push_back(std::move(ret));
  for (auto& o : block.operations) o->parent = &block;
  op.regions.push_back(std::move(region));
  (void)start;
  return absl::OkStatus();
}

}  // namespace

void RegisterStablehloOps(absl::flat_hash_map<std::string, OpInfo>& ops) {
  auto add = [&](const char* name, CustomOpParser parse, std::vector<std::string> inherent) {
    ops[std::string("stablehlo.") + name] = {parse, std::move(inherent), false, ""};
  };
  for (const char* name :
       {"abs", "ceil", "convert", "count_leading_zeros", "floor", "imag", "not", "negate",
        "popcnt", "real", "round_nearest_afz", "round_nearest_even", "sign", "uniform_quantize",
        "uniform_dequantize", "add", "atan2", "divide", "maximum", "minimum", "multiply", "power",
        "remainder", "shift_left", "shift_right_arithmetic", "shift_right_logical", "subtract",
        "and", "or", "xor", "clamp", "after_all"}) {
    add(name, ParseElementwise, {});
  }
  for (const char* name : {"cbrt", "cosine", "exponential", "exponential_minus_one", "log",
                           "log_plus_one", "logistic", "rsqrt", "sine", "sqrt", "tan", "tanh"}) {
    add(name, ParseElementwise, {"result_accuracy"});
  }
  for (const char* name : {"is_finite", "reshape", "bitcast_convert", "dynamic_update_slice",
                           "dynamic_reshape", "dynamic_pad", "real_dynamic_slice"}) {
    add(name, ParseOperandsFunctional, {});
  }
  add("constant", ParseConstant, {"value"});
  add("iota", ParseIota, {"iota_dimension"});
  add("dynamic_iota", ParseDynamicIota, {"iota_dimension"});
  add("create_token", ParseNullary, {});
  add("replica_id", ParseNullary, {});
  add("partition_id", ParseNullary, {});
  add("get_tuple_element", ParseGetTupleElement, {"index"});
  add("tuple", ParseTuple, {});
  add("compare", ParseCompare, {"compare_type", "comparison_direction"});
  add("slice", ParseSlice, {"limit_indices", "start_indices", "strides"});
  add("dynamic_slice", ParseDynamicSlice, {"slice_sizes"});
  add("broadcast", ParseBroadcast, {"broadcast_sizes"});
  add("broadcast_in_dim", ParseBroadcastInDim, {"broadcast_dimensions"});
  add("dynamic_broadcast_in_dim", ParseDynamicBroadcastInDim,
      {"broadcast_dimensions", "known_expanding_dimensions", "known_nonexpanding_dimensions"});
  add("cholesky", ParseCholesky, {"lower"});
  add("concatenate", ParseConcatenate, {"dimension"});
  add("composite", ParseComposite, {"composite_attributes", "decomposition", "name", "version"});
  add("convolution", ParseConvolution,
      {"batch_group_count", "dimension_numbers", "feature_group_count", "lhs_dilation", "padding",
       "precision_config", "rhs_dilation", "window_reversal", "window_strides"});
  add("custom_call", ParseCustomCall,
      {"api_version", "backend_config", "call_target_name", "called_computations",
       "has_side_effect", "operand_layouts", "output_operand_aliases", "result_layouts",
       "result_tilings"});
  add("dot", ParseDot, {"precision_config"});
  add("dot_general", ParseDotGeneral, {"algorithm", "dot_dimension_numbers", "precision_config"});
  add("einsum", ParseEinsum2, {"einsum_config"});
  add("unary_einsum", ParseEinsum1, {"einsum_config"});
  add("fft", ParseFft, {"fft_length", "fft_type"});
  add("get_dimension_size", ParseGetDimensionSize, {"dimension"});
  add("set_dimension_size", ParseSetDimensionSize, {"dimension"});
  add("select", ParseSelect, {});
  add("complex", ParseComplex, {});
  add("reverse", ParseReverse, {"dimensions"});
  add("pad", ParsePad, {"edge_padding_high", "edge_padding_low", "interior_padding"});
  add("transpose", ParseTranspose, {"permutation"});
  add("optimization_barrier", ParseOptimizationBarrier, {});
  add("rng", ParseRng, {"rng_distribution"});
  add("rng_bit_generator", ParseRngBitGenerator, {"rng_algorithm"});
  add("reduce_precision", ParseReducePrecision, {"exponent_bits", "mantissa_bits"});
  add("return", ParseReturn, {});
  add("while", ParseWhile, {});
  add("reduce", ParseReduce, {"dimensions"});
  // Generic-only ops: inherent attribute names, so `{...}` and `<{...}>` spellings agree.
  add("infeed", nullptr, {"infeed_config", "layout"});
  add("outfeed", nullptr, {"outfeed_config"});
  add("send", nullptr, {"channel_handle", "is_host_transfer", "source_target_pairs"});
  add("recv", nullptr, {"channel_handle", "is_host_transfer", "source_target_pairs"});
  add("all_gather", nullptr,
      {"all_gather_dim", "channel_handle", "replica_groups", "use_global_device_ids"});
  add("all_reduce", nullptr, {"channel_handle", "replica_groups", "use_global_device_ids"});
  add("reduce_scatter", nullptr,
      {"channel_handle", "replica_groups", "scatter_dimension", "use_global_device_ids"});
  add("all_to_all", nullptr,
      {"channel_handle", "concat_dimension", "replica_groups", "split_count", "split_dimension"});
  add("batch_norm_grad", nullptr, {"epsilon", "feature_index"});
  add("batch_norm_inference", nullptr, {"epsilon", "feature_index"});
  add("batch_norm_training", nullptr, {"epsilon", "feature_index"});
  add("collective_broadcast", nullptr, {"channel_handle", "has_dynamic_root", "replica_groups"});
  add("collective_reduce", nullptr,
      {"channel_handle", "has_dynamic_root", "replica_groups", "use_global_device_ids"});
  add("collective_permute", nullptr, {"channel_handle", "source_target_pairs"});
  add("cross-replica-sum", nullptr, {"replica_groups"});
  add("gather", nullptr, {"dimension_numbers", "indices_are_sorted", "slice_sizes"});
  add("map", nullptr, {"dimensions"});
  add("scatter", nullptr, {"indices_are_sorted", "scatter_dimension_numbers", "unique_indices"});
  add("select_and_scatter", nullptr, {"padding", "window_dimensions", "window_strides"});
  add("sort", nullptr, {"dimension", "is_stable"});
  add("triangular_solve", nullptr, {"left_side", "lower", "transpose_a", "unit_diagonal"});
  add("reduce_window", nullptr,
      {"base_dilations", "padding", "window_dilations", "window_dimensions", "window_strides"});
  add("torch_index_select", nullptr, {"batch_dims", "dim"});
  add("dynamic_gather", nullptr, {"dimension_numbers", "indices_are_sorted"});
  add("dynamic_conv", nullptr,
      {"batch_group_count", "dimension_numbers", "feature_group_count", "lhs_dilation",
       "precision_config", "rhs_dilation", "window_reversal", "window_strides"});
}

}  // namespace ember::frontend::text
