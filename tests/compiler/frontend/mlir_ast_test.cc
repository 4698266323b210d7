// Tests of the generic MLIR tree: the text printer for builtin and dialect types/attributes,
// and structural equality up to value renaming (with a useful "why" on mismatch).
#include "compiler/frontend/mlir_ast.h"

#include <memory>

#include "gtest/gtest.h"

namespace ember::frontend {
namespace {

TypePtr Int(unsigned width, Signedness s = Signedness::kSignless) {
  auto t = std::make_shared<Type>();
  t->kind = TypeKind::kInteger;
  t->width = width;
  t->signedness = s;
  return t;
}

TypePtr Float(FloatKind k) {
  auto t = std::make_shared<Type>();
  t->kind = TypeKind::kFloat;
  t->float_kind = k;
  return t;
}

TypePtr Tensor(std::vector<int64_t> shape, TypePtr element) {
  auto t = std::make_shared<Type>();
  t->kind = TypeKind::kRankedTensor;
  t->shape = std::move(shape);
  t->element = std::move(element);
  return t;
}

AttrPtr IntAttr(int64_t v, TypePtr type) {
  auto a = std::make_shared<Attribute>();
  a->kind = AttrKind::kInteger;
  a->type = std::move(type);
  a->words = {static_cast<uint64_t>(v)};
  return a;
}

TEST(MlirAstTest, PrintsBuiltinTypes) {
  EXPECT_EQ(PrintType(*Int(32)), "i32");
  EXPECT_EQ(PrintType(*Int(8, Signedness::kUnsigned)), "ui8");
  EXPECT_EQ(PrintType(*Int(4, Signedness::kSigned)), "si4");
  EXPECT_EQ(PrintType(*Float(FloatKind::kF8E4M3FN)), "f8E4M3FN");
  EXPECT_EQ(PrintType(*Tensor({2, kDynamicDim, 3}, Float(FloatKind::kF32))), "tensor<2x?x3xf32>");
  EXPECT_EQ(PrintType(*Tensor({}, Float(FloatKind::kBF16))), "tensor<bf16>");
  auto fn = std::make_shared<Type>();
  fn->kind = TypeKind::kFunction;
  fn->types = {Int(1)};
  fn->results = {Int(64), Float(FloatKind::kF64)};
  EXPECT_EQ(PrintType(*fn), "(i1) -> (i64, f64)");
}

TEST(MlirAstTest, PrintsAttributes) {
  EXPECT_EQ(PrintAttribute(*IntAttr(-1, Int(32))), "-1 : i32");
  EXPECT_EQ(PrintAttribute(*IntAttr(0xFF, Int(8, Signedness::kUnsigned))), "255 : ui8");
  EXPECT_EQ(PrintAttribute(*IntAttr(1, Int(1))), "true");
  auto s = std::make_shared<Attribute>();
  s->kind = AttrKind::kString;
  s->str = "a\"b\n";
  EXPECT_EQ(PrintAttribute(*s), "\"a\\\"b\\0A\"");
  auto arr = std::make_shared<Attribute>();
  arr->kind = AttrKind::kArray;
  arr->elements = {IntAttr(3, Int(64)), s};
  EXPECT_EQ(PrintAttribute(*arr), "[3 : i64, \"a\\\"b\\0A\"]");
  auto dense = std::make_shared<Attribute>();
  dense->kind = AttrKind::kDenseElements;
  dense->type = Tensor({2}, Int(8));
  dense->data = {0x01, 0xFE};
  EXPECT_EQ(PrintAttribute(*dense), "dense<\"0x01FE\"> : tensor<2xi8>");
  auto dialect = std::make_shared<Attribute>();
  dialect->kind = AttrKind::kDialect;
  dialect->dialect = "vhlo";
  dialect->name = "bool_v1";
  DialectParam p;
  p.name = "value";
  p.kind = DialectParam::Kind::kBool;
  p.u = 1;
  dialect->params = {p};
  EXPECT_EQ(PrintAttribute(*dialect), "#vhlo.bool_v1<value = true>");
}

// Builds: op "t.outer" { ^bb0(%a: i32): %x = "t.add"(%a, %a); "t.ret"(%x) }.
std::unique_ptr<Operation> MakeTree(int64_t attr_value, bool swap_operands) {
  auto outer = std::make_unique<Operation>();
  outer->name = "t.outer";
  outer->regions.resize(1);
  outer->regions[0].parent = outer.get();
  outer->regions[0].blocks.push_back(std::make_unique<Block>());
  Block& b = *outer->regions[0].blocks[0];
  b.parent = &outer->regions[0];
  b.arguments.push_back({Int(32), nullptr});
  b.arguments.push_back({Int(32), nullptr});
  auto add = std::make_unique<Operation>();
  add->name = "t.add";
  add->operands = {ValueRef{nullptr, &b, swap_operands ? 1u : 0u},
                   ValueRef{nullptr, &b, swap_operands ? 0u : 1u}};
  add->result_types = {Int(32)};
  add->attributes.push_back({"k", IntAttr(attr_value, Int(32)), true});
  auto ret = std::make_unique<Operation>();
  ret->name = "t.ret";
  ret->operands = {ValueRef{add.get(), nullptr, 0}};
  b.operations.push_back(std::move(add));
  b.operations.push_back(std::move(ret));
  return outer;
}

TEST(MlirAstTest, StructuralEqualityUpToRenaming) {
  std::unique_ptr<Operation> a = MakeTree(7, false);
  std::unique_ptr<Operation> b = MakeTree(7, false);
  std::string why;
  EXPECT_TRUE(StructurallyEqual(*a, *b, &why)) << why;

  std::unique_ptr<Operation> c = MakeTree(8, false);
  EXPECT_FALSE(StructurallyEqual(*a, *c, &why));
  EXPECT_NE(why.find("attribute k"), std::string::npos) << why;

  std::unique_ptr<Operation> d = MakeTree(7, true);
  EXPECT_FALSE(StructurallyEqual(*a, *d, &why));
  EXPECT_NE(why.find("operand 0"), std::string::npos) << why;
}

TEST(MlirAstTest, LocationsAreIgnoredUnlessAsked) {
  std::unique_ptr<Operation> a = MakeTree(7, false);
  std::unique_ptr<Operation> b = MakeTree(7, false);
  auto loc = std::make_shared<Attribute>();
  loc->kind = AttrKind::kFileLineColLoc;
  loc->str = "x.py";
  loc->line = 3;
  loc->column = 4;
  b->loc = loc;
  std::string why;
  EXPECT_TRUE(StructurallyEqual(*a, *b, &why));
  StructuralEqualityOptions strict;
  strict.compare_locations = true;
  EXPECT_FALSE(StructurallyEqual(*a, *b, strict, &why));
  EXPECT_EQ(PrintAttribute(*loc), "loc(\"x.py\":3:4)");
}

TEST(MlirAstTest, PrintsGenericForm) {
  std::unique_ptr<Operation> a = MakeTree(7, false);
  EXPECT_EQ(PrintOperation(*a),
            "\"t.outer\"() ({\n"
            "^bb0(%0: i32, %1: i32):\n"
            "  %2 = \"t.add\"(%0, %1) {k = 7 : i32} : (i32, i32) -> (i32)\n"
            "  \"t.ret\"(%2) : (i32) -> ()\n"
            "}) : () -> ()\n");
}

}  // namespace
}  // namespace ember::frontend
