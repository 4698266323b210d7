// combine-all-reduces: independent all-reduces with the same participants and reduction become
// one variadic all_reduce at the last one's place; a use in between, another group, another
// element type or reduction, or a chain (one reading another's result) keeps them apart.
// (Values on devices, next to XLA:CPU: tests/jax/test_spmd_partition.py.)
#include <string>

#include "compiler/ir/verifier.h"
#include "compiler/passes/pass.h"
#include "gtest/gtest.h"
#include "tests/compiler/parse_module.h"

namespace ember::passes {
namespace {

using test_util::Parse;

// An all_reduce of `operand` (of `type`) over `groups`, summing unless `reduction` says
// otherwise.
std::string AllReduce(const std::string& result, const std::string& operand,
                      const std::string& type, const std::string& groups = "[[0, 1]]",
                      const std::string& reduction = "stablehlo.add",
                      const std::string& element = "f32") {
  return "    " + result + " = \"stablehlo.all_reduce\"(" + operand + ") ({\n" +
         "      ^bb0(%a: tensor<" + element + ">, %b: tensor<" + element + ">):\n" +
         "        %r = " + reduction + " %a, %b : tensor<" + element + ">\n" +
         "        stablehlo.return %r : tensor<" + element + ">\n" +
         "    }) {replica_groups = dense<" + groups + "> : tensor<1x2xi64>} : (" + type + ") -> " +
         type + "\n";
}

int AllReduces(const ir::Module& m) {
  return test_util::CountOps(*m.entry(), ir::Opcode::kAllReduce);
}

absl::Status Combine(ir::Module& m) {
  absl::StatusOr<bool> changed = CreateCombineAllReducesPass()->Run(m);
  if (!changed.ok()) return changed.status();
  return ir::Verify(m);
}

TEST(CombineAllReducesTest, IndependentGradientsMeetOnce) {
  std::unique_ptr<ir::Module> m = Parse(
      "module @m {\n  func.func public @main(%x: tensor<4xf32>, %y: tensor<2x3xf32>, "
      "%z: tensor<f32>) -> (tensor<4xf32>, tensor<2x3xf32>, tensor<f32>) {\n" +
      AllReduce("%gx", "%x", "tensor<4xf32>") + "    %s = stablehlo.sine %y : tensor<2x3xf32>\n" +
      AllReduce("%gy", "%s", "tensor<2x3xf32>") + AllReduce("%gz", "%z", "tensor<f32>") +
      "    %ux = stablehlo.negate %gx : tensor<4xf32>\n"
      "    return %ux, %gy, %gz : tensor<4xf32>, tensor<2x3xf32>, tensor<f32>\n  }\n}\n");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(Combine(*m).ok());
  EXPECT_EQ(AllReduces(*m), 1) << m->ToString();
  for (const auto& inst : m->entry()->instructions()) {
    if (inst->opcode() != ir::Opcode::kAllReduce) continue;
    EXPECT_EQ(inst->operands().size(), 3u);
    EXPECT_EQ(inst->result(1)->type().ToString(), "tensor<2x3xf32>");
  }
}

TEST(CombineAllReducesTest, UseInBetweenChainsGroupsAndTypesKeepThemApart) {
  // %a is used before %b's all-reduce; %c reads %b's result; %d has other groups; %e is s32;
  // %f takes the maximum.
  std::unique_ptr<ir::Module> m = Parse(
      "module @m {\n  func.func public @main(%x: tensor<4xf32>, %i: tensor<4xi32>) -> "
      "(tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>) {\n" +
      AllReduce("%a", "%x", "tensor<4xf32>") + "    %u = stablehlo.negate %a : tensor<4xf32>\n" +
      AllReduce("%b", "%u", "tensor<4xf32>") + AllReduce("%c", "%b", "tensor<4xf32>") +
      AllReduce("%d", "%x", "tensor<4xf32>", "[[0, 2]]") +
      AllReduce("%e", "%i", "tensor<4xi32>", "[[0, 1]]", "stablehlo.add", "i32") +
      AllReduce("%f", "%x", "tensor<4xf32>", "[[0, 1]]", "stablehlo.maximum") +
      "    return %c, %d, %u, %e, %f : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, "
      "tensor<4xi32>, tensor<4xf32>\n  }\n}\n");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(Combine(*m).ok());
  // Each all-reduce stays alone.
  EXPECT_EQ(AllReduces(*m), 6) << m->ToString();
}

TEST(CombineAllReducesTest, GroupsFormInsideLoopBodies) {
  std::unique_ptr<ir::Module> m = Parse(
      "module @m {\n  func.func public @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> "
      "(tensor<4xf32>, tensor<4xf32>) {\n"
      "    %zero = stablehlo.constant dense<0> : tensor<i32>\n"
      "    %n = stablehlo.constant dense<3> : tensor<i32>\n"
      "    %r:3 = stablehlo.while(%i = %zero, %p = %x, %q = %y) : tensor<i32>, tensor<4xf32>, "
      "tensor<4xf32>\n"
      "      cond {\n"
      "        %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> "
      "tensor<i1>\n"
      "        stablehlo.return %lt : tensor<i1>\n"
      "      } do {\n"
      "        %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "        %next = stablehlo.add %i, %one : tensor<i32>\n" +
      AllReduce("%sp", "%p", "tensor<4xf32>") + AllReduce("%sq", "%q", "tensor<4xf32>") +
      "        stablehlo.return %next, %sp, %sq : tensor<i32>, tensor<4xf32>, tensor<4xf32>\n"
      "      }\n"
      "    return %r#1, %r#2 : tensor<4xf32>, tensor<4xf32>\n  }\n}\n");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(Combine(*m).ok());
  int combined = 0;
  for (const auto& c : m->computations()) {
    for (const auto& inst : c->instructions()) {
      if (inst->opcode() == ir::Opcode::kAllReduce) {
        ++combined;
        EXPECT_EQ(inst->operands().size(), 2u);
      }
    }
  }
  EXPECT_EQ(combined, 1) << m->ToString();
}

}  // namespace
}  // namespace ember::passes
