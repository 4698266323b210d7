// Building and printing modules; opcode names.
#include "compiler/ir/module.h"

#include "gtest/gtest.h"

namespace ember::ir {
namespace {

ValueType F32(std::vector<int64_t> dims) { return ValueType::Tensor(*Shape::Make(ElementType::kF32, dims)); }

TEST(OpcodeTest, NamesRoundTrip) {
  EXPECT_EQ(OpcodeName(Opcode::kDotGeneral), "dot_general");
  EXPECT_EQ(OpcodeFromName("stablehlo.dot_general"), Opcode::kDotGeneral);
  EXPECT_EQ(OpcodeFromName("func.call"), Opcode::kCall);
  EXPECT_EQ(OpcodeFromName("func.return"), Opcode::kReturn);
  EXPECT_EQ(OpcodeFromName("stablehlo.not_an_op"), std::nullopt);
}

TEST(ModuleTest, BuildAndPrint) {
  Module module("m");
  Computation* main = *module.AddFunction("main");
  main->set_public(true);
  Value* a = main->AddParameter(F32({2}));
  Value* b = main->AddParameter(F32({2}));
  Computation* body = module.AddRegion("reduce");
  Value* x = body->AddParameter(F32({}));
  Value* y = body->AddParameter(F32({}));
  Instruction* sum = body->AddInstruction(Opcode::kAdd, {x, y}, {F32({})});
  body->AddInstruction(Opcode::kReturn, {sum->result()}, {});
  Instruction* add = main->AddInstruction(Opcode::kAdd, {a, b}, {F32({2})}, {}, {},
                                          Location{"model.py", 41, 7, ""});
  AttributeMap attrs;
  attrs.Set("dimensions", Attribute::Ints({0}));
  Instruction* init = main->AddInstruction(
      Opcode::kConstant, {}, {F32({})},
      [] { AttributeMap m; m.Set("value", Attribute::OfLiteral(*Literal::Scalar<float>(0.0f))); return m; }());
  Instruction* reduce = main->AddInstruction(Opcode::kReduce, {add->result(), init->result()},
                                             {F32({})}, attrs, {body});
  main->AddInstruction(Opcode::kReturn, {reduce->result()}, {});

  EXPECT_EQ(module.entry(), main);
  EXPECT_EQ(main->result_types(), std::vector<ValueType>{F32({})});
  EXPECT_EQ(add->Describe(), "stablehlo.add at model.py:41:7");
  EXPECT_FALSE(module.AddFunction("main").ok());
  const std::string text = module.ToString();
  EXPECT_NE(text.find("func public @main(%0: tensor<2xf32>, %1: tensor<2xf32>) -> (tensor<f32>)"),
            std::string::npos) << text;
  EXPECT_NE(text.find("%2 = add(%0, %1) : tensor<2xf32>"), std::string::npos) << text;
  EXPECT_NE(text.find("reduce(%2, %3) regions [@reduce.region0] {dimensions = [0]}"),
            std::string::npos) << text;
  EXPECT_EQ(reduce->attribute("dimensions")->ints, std::vector<int64_t>{0});
}

TEST(ValueTypeTest, Spellings) {
  EXPECT_EQ(F32({2, 3}).ToString(), "tensor<2x3xf32>");
  EXPECT_EQ(ValueType::Token().ToString(), "!stablehlo.token");
  EXPECT_EQ(ValueType::Tuple({F32({}), ValueType::Token()}).ToString(),
            "tuple<tensor<f32>, !stablehlo.token>");
  EXPECT_NE(F32({2}), F32({3}));
}

}  // namespace
}  // namespace ember::ir
