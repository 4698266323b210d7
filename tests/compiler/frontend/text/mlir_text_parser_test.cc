// Unit tests of the MLIR text parser: lexer, types, attributes (dense data bytes, floats),
// generic ops, SSA forms, locations and aliases, resources, and error messages.
#include <memory>
#include <string>
#include <vector>

#include "compiler/frontend/mlir_ast.h"
#include "compiler/frontend/text/mlir_lexer.h"
#include "compiler/frontend/text/mlir_text_parser.h"
#include "gtest/gtest.h"

namespace ember::frontend {
namespace {

std::unique_ptr<Operation> Parse(const std::string& text) {
  auto m = ParseMlirText(text, "t.mlir");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

std::string ParseError(const std::string& text) {
  auto m = ParseMlirText(text, "t.mlir");
  EXPECT_FALSE(m.ok());
  return m.ok() ? "" : std::string(m.status().message());
}

// The first op of the first func's body in `text`.
const Operation* FirstBodyOp(const Operation& module, size_t index = 0) {
  const Operation& func = *module.regions[0].blocks[0]->operations[0];
  return func.regions[0].blocks[0]->operations[index].get();
}

// Parses `dense<...> : type` as a constant and returns the attribute.
const Attribute* Constant(const std::unique_ptr<Operation>& m) {
  return FirstBodyOp(*m)->FindAttribute("value");
}

std::unique_ptr<Operation> ConstantModule(const std::string& value) {
  return Parse("func.func @f() {\n  %0 = stablehlo.constant " + value + "\n  return\n}\n");
}

TEST(MlirLexerTest, TokenKinds) {
  text::Lexer lex("%x#1 = \"a\\22b\" @sym ^bb0 #loc3 !t 0x1F 1.5e3 -> {-# #-} // c\n foo.bar");
  std::vector<text::TokKind> kinds;
  size_t pos = 0;
  while (true) {
    text::Token t = lex.LexAt(pos);
    kinds.push_back(t.kind);
    if (t.kind == text::TokKind::kEof) break;
    pos = t.offset + t.text.size();
  }
  using K = text::TokKind;
  std::vector<K> want = {K::kPercentIdent, K::kHashIdent, K::kEqual, K::kString, K::kAtIdent,
                         K::kCaretIdent, K::kHashIdent, K::kBangIdent, K::kInteger, K::kFloat,
                         K::kArrow, K::kFileMetadataBegin, K::kFileMetadataEnd, K::kBareIdent,
                         K::kEof};
  EXPECT_EQ(kinds, want);
  std::string s;
  ASSERT_TRUE(text::DecodeStringToken("\"a\\22b\\n\"", &s));
  EXPECT_EQ(s, "a\"b\n");
  uint32_t line = 0, col = 0;
  lex.LineCol(lex.source().find("foo"), &line, &col);
  EXPECT_EQ(line, 2u);
  EXPECT_EQ(col, 2u);
}

TEST(MlirTextParserTest, Types) {
  auto m = Parse(
      "func.func private @f(tensor<2x?x3xf32>, tensor<*xbf16>, tensor<0x1xi4>, "
      "tensor<complex<f64>>, !stablehlo.token, tuple<tensor<f32>, ui8>, "
      "tensor<4xf32, #stablehlo.bounds<?>>, tensor<2x!quant.uniform<i8:f32, 0.5:3>>, "
      "f8E4M3FN, index) -> ()\n");
  ASSERT_TRUE(m);
  const Operation& f = *m->regions[0].blocks[0]->operations[0];
  const Attribute* ft = f.FindAttribute("function_type");
  ASSERT_TRUE(ft && ft->type);
  const auto& in = ft->type->types;
  ASSERT_EQ(in.size(), 10u);
  EXPECT_EQ(PrintType(*in[0]), "tensor<2x?x3xf32>");
  EXPECT_EQ(in[0]->shape[1], kDynamicDim);
  EXPECT_EQ(in[1]->kind, TypeKind::kUnrankedTensor);
  EXPECT_EQ(in[2]->shape, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(PrintType(*in[3]), "tensor<complex<f64>>");
  EXPECT_EQ(in[4]->kind, TypeKind::kDialect);
  EXPECT_EQ(in[4]->name, "token");
  EXPECT_EQ(PrintType(*in[5]), "tuple<tensor<f32>, ui8>");
  ASSERT_TRUE(in[6]->encoding);
  EXPECT_EQ(in[6]->encoding->name, "type_extensions");
  EXPECT_EQ(in[7]->element->kind, TypeKind::kOpaque);
  EXPECT_EQ(in[7]->element->name, "!quant.uniform<i8:f32, 0.5:3>");
  EXPECT_EQ(in[8]->float_kind, FloatKind::kF8E4M3FN);
  EXPECT_EQ(in[9]->kind, TypeKind::kIndex);
  EXPECT_EQ(f.regions.size(), 1u);
  EXPECT_TRUE(f.regions[0].blocks.empty());
}

TEST(MlirTextParserTest, DenseData) {
  auto m = ConstantModule("dense<[[1, -2], [3, 4]]> : tensor<2x2xi16>");
  ASSERT_TRUE(m);
  EXPECT_EQ(Constant(m)->data, (std::vector<uint8_t>{1, 0, 0xFE, 0xFF, 3, 0, 4, 0}));
  m = ConstantModule("dense<[1.0, 1.0, 1.0]> : tensor<3xf32>");  // canonical splat
  EXPECT_EQ(Constant(m)->data, (std::vector<uint8_t>{0, 0, 0x80, 0x3F}));
  m = ConstantModule("dense<(1.0, -2.0)> : tensor<complex<f32>>");
  EXPECT_EQ(Constant(m)->data, (std::vector<uint8_t>{0, 0, 0x80, 0x3F, 0, 0, 0, 0xC0}));
  m = ConstantModule("dense<[true, false]> : tensor<2xi1>");
  EXPECT_EQ(Constant(m)->data, (std::vector<uint8_t>{1, 0}));
  m = ConstantModule("dense<[0.5, -1.5, 448.0, 0x7F]> : tensor<4xf8E4M3FN>");
  EXPECT_EQ(Constant(m)->data, (std::vector<uint8_t>{0x30, 0xBC, 0x7E, 0x7F}));
  m = ConstantModule("dense<[1.0, 65504.0, 1.0e6]> : tensor<3xf16>");
  EXPECT_EQ(Constant(m)->data, (std::vector<uint8_t>{0, 0x3C, 0xFF, 0x7B, 0, 0x7C}));
  m = ConstantModule("dense<1.0> : tensor<2xbf16>");
  EXPECT_EQ(Constant(m)->data, (std::vector<uint8_t>{0x80, 0x3F}));
  m = ConstantModule("dense<\"0x0100000002000000\"> : tensor<2xi32>");
  EXPECT_EQ(Constant(m)->data, (std::vector<uint8_t>{1, 0, 0, 0, 2, 0, 0, 0}));
  m = ConstantModule("dense<[]> : tensor<0x3xf32>");
  EXPECT_TRUE(Constant(m)->data.empty());
  m = ConstantModule("dense<[255, -1]> : tensor<2xui8>");
  EXPECT_EQ(Constant(m)->data, (std::vector<uint8_t>{0xFF}));  // both are 0xFF: splat
}

TEST(MlirTextParserTest, ScalarAttributes) {
  auto m = Parse(
      "\"test.op\"() {a = 42 : i64, b = -1 : i32, c = true, d = 1.5 : f32, e = 0x7FC00000 : f32, "
      "f = \"s\\0A\", g = [1, @x::@y], h = {k}, i = array<i64: 1, -2>, j = unit, "
      "k = affine_map<(d0) -> (d0)>, l = 2.0} : () -> ()\n");
  ASSERT_TRUE(m);
  const Operation& op = *m->regions[0].blocks[0]->operations[0];
  EXPECT_EQ(op.FindAttribute("a")->IntValue(), 42);
  EXPECT_EQ(op.FindAttribute("b")->IntValue(), -1);
  EXPECT_EQ(op.FindAttribute("b")->words[0], 0xFFFFFFFFu);
  EXPECT_EQ(PrintAttribute(*op.FindAttribute("c")), "true");
  EXPECT_EQ(op.FindAttribute("d")->words[0], 0x3FC00000u);
  EXPECT_EQ(op.FindAttribute("e")->words[0], 0x7FC00000u);
  EXPECT_EQ(op.FindAttribute("f")->str, "s\n");
  EXPECT_EQ(PrintAttribute(*op.FindAttribute("g")), "[1 : i64, @\"x\"::@\"y\"]");
  EXPECT_EQ(op.FindAttribute("h")->entries[0].value->kind, AttrKind::kUnit);
  EXPECT_EQ(op.FindAttribute("i")->count, 2u);
  EXPECT_EQ(op.FindAttribute("j")->kind, AttrKind::kUnit);
  EXPECT_EQ(op.FindAttribute("k")->str, "(d0) -> (d0)");
  EXPECT_EQ(op.FindAttribute("l")->type->float_kind, FloatKind::kF64);
  // Discardable attributes are sorted by name.
  EXPECT_EQ(op.attributes.front().name, "a");
  EXPECT_EQ(op.attributes.back().name, "l");
}

TEST(MlirTextParserTest, GenericOpsMultiResultsAndRegions) {
  auto m = Parse(
      "func.func @f(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0:2 = \"test.two\"(%arg0) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)\n"
      "  %a, %b = \"test.two\"(%0#1) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)\n"
      "  %1 = \"test.region\"(%b) ({\n"
      "  ^bb0(%x: tensor<4xf32>):\n"
      "    \"test.yield\"(%x, %arg0) : (tensor<4xf32>, tensor<4xf32>) -> ()\n"
      "  }) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %1 : tensor<4xf32>\n}\n");
  ASSERT_TRUE(m);
  const Operation* two = FirstBodyOp(*m, 0);
  const Operation* second = FirstBodyOp(*m, 1);
  const Operation* region = FirstBodyOp(*m, 2);
  EXPECT_EQ(second->operands[0].op, two);
  EXPECT_EQ(second->operands[0].index, 1u);
  EXPECT_EQ(region->operands[0].op, second);
  EXPECT_EQ(region->operands[0].index, 1u);
  const Block& body = *region->regions[0].blocks[0];
  EXPECT_EQ(body.parent, &region->regions[0]);
  const Operation& yield = *body.operations[0];
  EXPECT_EQ(yield.operands[0].block, &body);
  EXPECT_EQ(yield.parent, &body);
  const Block& func_body = *m->regions[0].blocks[0]->operations[0]->regions[0].blocks[0];
  EXPECT_EQ(yield.operands[1].block, &func_body);
}

TEST(MlirTextParserTest, ForwardReferenceInGraphRegion) {
  auto m = Parse(
      "\"test.graph\"() ({\n"
      "  \"test.use\"(%later) : (i32) -> ()\n"
      "  %later = \"test.def\"() : () -> i32\n"
      "}) : () -> ()\n");
  ASSERT_TRUE(m);
  const Block& b = *m->regions[0].blocks[0]->operations[0]->regions[0].blocks[0];
  EXPECT_EQ(b.operations[0]->operands[0].op, b.operations[1].get());
}

TEST(MlirTextParserTest, LocationsAndAliases) {
  auto m = Parse(
      "#map = affine_map<(d0) -> (d0)>\n"
      "!t = tensor<2xf32>\n"
      "module {\n"
      "  func.func @f(%arg0: !t loc(\"x.py\":1:2)) -> !t attributes {m = #map} {\n"
      "    %0 = stablehlo.abs %arg0 : !t loc(#loc2)\n"
      "    return %0 : !t loc(callsite(\"f\"(#loc1) at fused[#loc1, \"y.py\":5:6 to 7:8]))\n"
      "  }\n"
      "}\n"
      "#loc1 = loc(\"model.py\":41:7)\n"
      "#loc2 = loc(\"abs\"(#loc1))\n");
  ASSERT_TRUE(m);
  const Operation* abs = FirstBodyOp(*m, 0);
  EXPECT_EQ(PrintAttribute(*abs->loc), "loc(\"abs\"(loc(\"model.py\":41:7)))");
  EXPECT_EQ(PrintType(*abs->result_types[0]), "tensor<2xf32>");
  const Operation* ret = FirstBodyOp(*m, 1);
  EXPECT_EQ(ret->loc->kind, AttrKind::kCallSiteLoc);
  EXPECT_EQ(ret->loc->elements[1]->elements[1]->end_line, 7u);
  // Ops without `loc(...)` carry their position in this file.
  const Operation& func = *m->regions[0].blocks[0]->operations[0];
  EXPECT_EQ(PrintAttribute(*func.loc), "loc(\"t.mlir\":4:3)");
  EXPECT_EQ(PrintAttribute(*func.regions[0].blocks[0]->arguments[0].loc), "loc(\"x.py\":1:2)");
}

TEST(MlirTextParserTest, DenseResources) {
  auto m = Parse(
      "func.func @f() {\n"
      "  %0 = stablehlo.constant dense_resource<blob1> : tensor<2xi16>\n"
      "  return\n}\n"
      "{-#\n  dialect_resources: {\n    builtin: {\n      blob1: \"0x020000000100FFFF\"\n    }\n"
      "  }\n#-}\n");
  ASSERT_TRUE(m);
  const Attribute* v = Constant(m);
  EXPECT_EQ(v->kind, AttrKind::kDenseResource);
  EXPECT_EQ(v->str, "blob1");
  EXPECT_EQ(v->data, (std::vector<uint8_t>{1, 0, 0xFF, 0xFF}));
}

TEST(MlirTextParserTest, ImplicitModuleAndSplit) {
  auto m = Parse("func.func @a() {\n  return\n}\nfunc.func @b() {\n  return\n}\n");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->name, "builtin.module");
  EXPECT_EQ(m->regions[0].blocks[0]->operations.size(), 2u);
  std::vector<MlirTextChunk> chunks = SplitMlirInput("a\n// -----\nb\n");
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[1].first_line, 3);
  EXPECT_EQ(chunks[1].text, "\n\nb\n");
}

TEST(MlirTextParserTest, ErrorsNameFileLineAndColumn) {
  EXPECT_EQ(ParseError("func.func @f() {\n  %0 = stablehlo.add %x, %x : tensor<f32>\n  return\n}\n"),
            "t.mlir:2:22: use of undefined value %x");
  EXPECT_EQ(ParseError("func.func @f() {\n  %0 = stablehlo.constant dense<[1, 2]> : tensor<3xi32>\n}"),
            "t.mlir:2:27: dense literal of shape [2] does not match type tensor<3xi32>");
  EXPECT_EQ(ParseError("\"a.b\"() : () -> (tensor<2xf32>"),
            "t.mlir:1:31: expected ')' to close the result types, found end of input");
  EXPECT_EQ(ParseError("func.func @f() {\n  %0 = stablehlo.bogus %a : tensor<f32>\n}"),
            "t.mlir:2:8: custom assembly form of 'stablehlo.bogus' is not supported (write it "
            "in the generic form)");
  EXPECT_EQ(ParseError("%0 = \"a.b\"() : () -> i32\n%0 = \"a.b\"() : () -> i32\n"),
            "t.mlir:2:1: redefinition of SSA value %0");
  EXPECT_EQ(ParseError("func.func @f() {\n  %0 = stablehlo.compare XX, %a, %a : (tensor<f32>, "
                       "tensor<f32>) -> tensor<i1>\n}"),
            "t.mlir:2:26: invalid comparison_direction value 'XX'");
  // Deep nesting is an error, not a stack overflow.
  EXPECT_NE(ParseError("\"a.b\"() {x = " + std::string(100000, '[') + "} : () -> ()").find(
                "nesting deeper"),
            std::string::npos);
}

}  // namespace
}  // namespace ember::frontend
