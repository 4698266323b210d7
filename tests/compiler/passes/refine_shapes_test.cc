// refine_shapes on hand-written shape-polymorphic programs: the static types it infers, the
// static ops it rewrites the dynamic_* ops to, folded shape computations, shape assertions, and
// errors that name the op when a dim stays dynamic. Refined programs are run on the evaluator.
#include "compiler/passes/refine_shapes.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "compiler/frontend/import/import.h"
#include "compiler/frontend/text/mlir_text_parser.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/ir/verifier.h"
#include "tests/compiler/parse_module.h"

namespace ember::passes {
namespace {

using ::ember::test_util::Parse;

ir::ValueType T(ir::ElementType e, std::vector<int64_t> dims) {
  return ir::ValueType::Tensor(ir::Shape::Make(e, dims).value());
}

int CountOps(const ir::Computation& c, ir::Opcode opcode) {
  int n = 0;
  for (const auto& inst : c.instructions()) n += inst->opcode() == opcode;
  return n;
}

constexpr char kBroadcastAdd[] = R"(
func.func public @main(%arg0: tensor<i64>, %arg1: tensor<?x4xf32>, %arg2: tensor<2x?x4xf32>) -> tensor<2x?x4xf32> {
  %0 = stablehlo.constant dense<2> : tensor<1xi32>
  %1 = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32>
  %2 = stablehlo.reshape %1 : (tensor<i32>) -> tensor<1xi32>
  %3 = stablehlo.constant dense<4> : tensor<1xi32>
  %4 = stablehlo.concatenate %0, %2, %3, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
  %5 = stablehlo.dynamic_broadcast_in_dim %arg1, %4, dims = [1, 2] : (tensor<?x4xf32>, tensor<3xi32>) -> tensor<2x?x4xf32>
  %6 = stablehlo.add %5, %arg2 : tensor<2x?x4xf32>
  %7 = stablehlo.get_dimension_size %arg1, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
  %8 = stablehlo.convert %7 : (tensor<i32>) -> tensor<f32>
  %9 = stablehlo.dynamic_broadcast_in_dim %8, %4, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<2x?x4xf32>
  %10 = stablehlo.multiply %6, %9 : tensor<2x?x4xf32>
  return %10 : tensor<2x?x4xf32>
}
)";

TEST(RefineShapesTest, DynamicBroadcastBecomesStatic) {
  std::unique_ptr<ir::Module> module = Parse(kBroadcastAdd);
  ASSERT_NE(module, nullptr);
  ir::Computation& entry = *module->entry();
  ShapeRefinement r;
  r.arg_types = {T(ir::ElementType::kS64, {}), T(ir::ElementType::kF32, {3, 4}),
                 T(ir::ElementType::kF32, {2, 3, 4})};
  r.dim_values = {{0, 3}};
  absl::Status s = RefineShapes(*module, entry, r);
  ASSERT_TRUE(s.ok()) << s << "\n" << module->ToString();
  ASSERT_TRUE(ir::Verify(*module).ok()) << module->ToString();
  EXPECT_EQ(CountOps(entry, ir::Opcode::kDynamicBroadcastInDim), 0);
  EXPECT_GE(CountOps(entry, ir::Opcode::kBroadcastInDim), 1);  // the scalar one may fold
  EXPECT_EQ(CountOps(entry, ir::Opcode::kGetDimensionSize), 0);
  ASSERT_EQ(entry.result_types().size(), 1u);
  EXPECT_EQ(entry.result_types()[0], T(ir::ElementType::kF32, {2, 3, 4}));

  // Values: (broadcast(x) + y) * 3.
  std::vector<eval::EvalValue> args;
  args.push_back(eval::EvalValue::Array(ir::Literal::Scalar<int64_t>(3).value()));
  ir::Literal x =
      ir::Literal::Create(ir::Shape::Make(ir::ElementType::kF32, {3, 4}).value()).value();
  ir::Literal y =
      ir::Literal::Create(ir::Shape::Make(ir::ElementType::kF32, {2, 3, 4}).value()).value();
  for (int i = 0; i < 12; ++i) x.mutable_data<float>().value()[i] = 0.5f * i - 2;
  for (int i = 0; i < 24; ++i) y.mutable_data<float>().value()[i] = 0.25f * i;
  args.push_back(eval::EvalValue::Array(x.Clone().value()));
  args.push_back(eval::EvalValue::Array(y.Clone().value()));
  eval::Evaluator evaluator;
  auto out = evaluator.Run(entry, std::move(args));
  ASSERT_TRUE(out.ok()) << out.status();
  const absl::Span<const float> got = (*out)[0].array.data<float>().value();
  for (int i = 0; i < 24; ++i) {
    EXPECT_FLOAT_EQ(got[i], (x.data<float>().value()[i % 12] + y.data<float>().value()[i]) * 3)
        << i;
  }
}

TEST(RefineShapesTest, DynamicIotaReshapePadSlice) {
  std::unique_ptr<ir::Module> module = Parse(R"(
func.func public @main(%arg0: tensor<i32>) -> (tensor<?x2xi32>, tensor<?xi32>, tensor<?xi32>) {
  %c2 = stablehlo.constant dense<2> : tensor<1xi32>
  %n = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
  %nn = stablehlo.multiply %n, %c2 : tensor<1xi32>
  %0 = stablehlo.dynamic_iota %nn, dim = 0 : (tensor<1xi32>) -> tensor<?xi32>
  %shape = stablehlo.concatenate %n, %c2, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %1 = stablehlo.dynamic_reshape %0, %shape : (tensor<?xi32>, tensor<2xi32>) -> tensor<?x2xi32>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<1xi32>
  %zero = stablehlo.constant dense<0> : tensor<1xi32>
  %2 = stablehlo.dynamic_pad %0, %z, %one, %c2, %zero : (tensor<?xi32>, tensor<i32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?xi32>
  %3 = stablehlo.real_dynamic_slice %2, %one, %nn, %c2 : (tensor<?xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?xi32>
  return %1, %2, %3 : tensor<?x2xi32>, tensor<?xi32>, tensor<?xi32>
}
)");
  ASSERT_NE(module, nullptr);
  ir::Computation& entry = *module->entry();
  ShapeRefinement r;
  r.arg_types = {T(ir::ElementType::kS32, {})};
  r.dim_values = {{0, 3}};
  absl::Status s = RefineShapes(*module, entry, r);
  ASSERT_TRUE(s.ok()) << s << "\n" << module->ToString();
  ASSERT_TRUE(ir::Verify(*module).ok()) << module->ToString();
  const std::vector<ir::ValueType> results = entry.result_types();
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0], T(ir::ElementType::kS32, {3, 2}));
  EXPECT_EQ(results[1], T(ir::ElementType::kS32, {9}));  // 6 + 1 + 2
  EXPECT_EQ(results[2], T(ir::ElementType::kS32, {3}));  // [1, 6) step 2
  for (ir::Opcode op : {ir::Opcode::kDynamicIota, ir::Opcode::kDynamicReshape,
                        ir::Opcode::kDynamicPad, ir::Opcode::kRealDynamicSlice}) {
    EXPECT_EQ(CountOps(entry, op), 0) << ir::OpcodeName(op);
  }
  eval::Evaluator evaluator;
  std::vector<eval::EvalValue> args;
  args.push_back(eval::EvalValue::Array(ir::Literal::Scalar<int32_t>(3).value()));
  auto out = evaluator.Run(entry, std::move(args));
  ASSERT_TRUE(out.ok()) << out.status();
  // iota 0..5 padded: [0, 0,1,2,3,4,5, 0,0]; slice [1:6:2] = 0, 2, 4.
  const absl::Span<const int32_t> sliced = (*out)[2].array.data<int32_t>().value();
  EXPECT_EQ(std::vector<int32_t>(sliced.begin(), sliced.end()), (std::vector<int32_t>{0, 2, 4}));
}

TEST(RefineShapesTest, ShapeAssertion) {
  const std::string text = R"(
func.func public @main(%arg0: tensor<i64>, %arg1: tensor<?xf32>) -> tensor<?xf32> {
  %0 = stablehlo.get_dimension_size %arg1, dim = 0 : (tensor<?xf32>) -> tensor<i32>
  %1 = stablehlo.convert %0 : (tensor<i32>) -> tensor<i64>
  %2 = stablehlo.compare EQ, %arg0, %1, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
  stablehlo.custom_call @shape_assertion(%2, %arg0) {error_message = "x has size {0}", has_side_effect = true} : (tensor<i1>, tensor<i64>) -> ()
  return %arg1 : tensor<?xf32>
}
)";
  for (int64_t n : {5, 6}) {
    std::unique_ptr<ir::Module> module = Parse(text);
    ASSERT_NE(module, nullptr);
    ShapeRefinement r;
    r.arg_types = {T(ir::ElementType::kS64, {}), T(ir::ElementType::kF32, {5})};
    r.dim_values = {{0, n}};
    absl::Status s = RefineShapes(*module, *module->entry(), r);
    if (n == 5) {
      ASSERT_TRUE(s.ok()) << s;
      EXPECT_EQ(CountOps(*module->entry(), ir::Opcode::kCustomCall), 0);
    } else {
      ASSERT_FALSE(s.ok());
      EXPECT_TRUE(absl::StrContains(s.message(), "shape assertion failed")) << s;
      EXPECT_TRUE(absl::StrContains(s.message(), "test.mlir:")) << s;
    }
  }
}

TEST(RefineShapesTest, StaysDynamicIsAnErrorNamingTheOp) {
  // The reshape's shape depends on data (arg1), not on a dimension variable.
  std::unique_ptr<ir::Module> module = Parse(R"(
func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<2xi32>) -> tensor<?x?xf32> {
  %0 = stablehlo.dynamic_reshape %arg0, %arg1 : (tensor<4xf32>, tensor<2xi32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
)");
  ASSERT_NE(module, nullptr);
  ShapeRefinement r;
  r.arg_types = {T(ir::ElementType::kF32, {4}), T(ir::ElementType::kS32, {2})};
  absl::Status s = RefineShapes(*module, *module->entry(), r);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "stablehlo.dynamic_reshape at test.mlir:")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "does not fold to a constant")) << s;
}

TEST(RefineShapesTest, InconsistentArgumentsAreAnError) {
  std::unique_ptr<ir::Module> module = Parse(kBroadcastAdd);
  ASSERT_NE(module, nullptr);
  ShapeRefinement r;
  // The dimension variable says 5, the arguments have 3 rows.
  r.arg_types = {T(ir::ElementType::kS64, {}), T(ir::ElementType::kF32, {3, 4}),
                 T(ir::ElementType::kF32, {2, 3, 4})};
  r.dim_values = {{0, 5}};
  absl::Status s = RefineShapes(*module, *module->entry(), r);
  EXPECT_FALSE(s.ok());
  // A type that does not refine the declared one.
  std::unique_ptr<ir::Module> again = Parse(kBroadcastAdd);
  r.arg_types[1] = T(ir::ElementType::kF32, {3, 5});
  r.dim_values = {{0, 3}};
  s = RefineShapes(*again, *again->entry(), r);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "argument 1")) << s;
}

TEST(RefineShapesTest, StaticTypesPrintAndCompare) {
  ir::ValueType dyn = ir::ValueType::Tensor(
      ir::Shape::MakeDynamic(ir::ElementType::kF32, {ir::kDynamicDim, 4}).value());
  EXPECT_EQ(dyn.ToString(), "tensor<?x4xf32>");
  EXPECT_EQ(dyn.shape().ToString(), "f32[?,4]{1,0}");
  EXPECT_FALSE(dyn.is_static());
  EXPECT_TRUE(dyn.IsCompatibleWith(T(ir::ElementType::kF32, {7, 4})));
  EXPECT_FALSE(dyn.IsCompatibleWith(T(ir::ElementType::kF32, {7, 5})));
  EXPECT_FALSE(dyn.IsCompatibleWith(T(ir::ElementType::kF32, {7})));
  EXPECT_FALSE(ir::Shape::Make(ir::ElementType::kF32, {ir::kDynamicDim}).ok());
}

}  // namespace
}  // namespace ember::passes

namespace ember::passes {
namespace {

TEST(RefineShapesTest, OpsWithRegions) {
  std::unique_ptr<ir::Module> module = Parse(R"(
func.func public @main(%arg0: tensor<i64>, %arg1: tensor<?x5xi32>) -> (tensor<?x5xi32>, tensor<5xi32>) {
  %0 = "stablehlo.sort"(%arg1) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %1 = stablehlo.compare LT, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  }) {dimension = 1 : i64} : (tensor<?x5xi32>) -> tensor<?x5xi32>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %2 = stablehlo.reduce(%0 init: %z) applies stablehlo.add across dimensions = [0] : (tensor<?x5xi32>, tensor<i32>) -> tensor<5xi32>
  return %0, %2 : tensor<?x5xi32>, tensor<5xi32>
}
)");
  ASSERT_NE(module, nullptr);
  ShapeRefinement r;
  r.arg_types = {T(ir::ElementType::kS64, {}), T(ir::ElementType::kS32, {3, 5})};
  r.dim_values = {{0, 3}};
  absl::Status s = RefineShapes(*module, *module->entry(), r);
  ASSERT_TRUE(s.ok()) << s << "\n" << module->ToString();
  absl::Status verified = ir::Verify(*module);
  ASSERT_TRUE(verified.ok()) << verified << "\n" << module->ToString();
  EXPECT_EQ(module->entry()->result_types()[0], T(ir::ElementType::kS32, {3, 5}));
}

}  // namespace
}  // namespace ember::passes
