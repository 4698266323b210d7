// Pretty forms must build the same tree as their generic forms (StructurallyEqual): same op
// names, operands, result types, attribute names, kinds and values, regions.
#include <memory>
#include <string>

#include "compiler/frontend/mlir_ast.h"
#include "compiler/frontend/text/mlir_text_parser.h"
#include "gtest/gtest.h"

namespace ember::frontend {
namespace {

std::unique_ptr<Operation> Parse(const std::string& text) {
  auto m = ParseMlirText(text, "test.mlir");
  EXPECT_TRUE(m.ok()) << m.status() << "\n" << text;
  return m.ok() ? std::move(*m) : nullptr;
}

void ExpectSame(const std::string& args, const std::string& pretty, const std::string& generic) {
  const std::string head = "func.func @f(" + args + ") {\n";
  auto a = Parse(head + pretty + "\n  func.return\n}\n");
  auto b = Parse(head + generic + "\n  func.return\n}\n");
  ASSERT_TRUE(a && b);
  std::string why;
  EXPECT_TRUE(StructurallyEqual(*a, *b, &why)) << why << "\npretty:\n"
                                               << PrintOperation(*a) << "generic:\n"
                                               << PrintOperation(*b);
}

TEST(MlirTextPrettyTest, ElementwiseBinary) {
  ExpectSame("%a: tensor<4xf32>, %b: tensor<4xf32>", "%0 = stablehlo.add %a, %b : tensor<4xf32>",
             "%0 = \"stablehlo.add\"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>");
  ExpectSame("%a: tensor<4xf32>, %b: tensor<4xf32>",
             "%0 = stablehlo.multiply %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",
             "%0 = \"stablehlo.multiply\"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>");
}

TEST(MlirTextPrettyTest, UnaryWithResultAccuracy) {
  ExpectSame("%a: tensor<4xf32>",
             "%0 = stablehlo.exponential %a {result_accuracy = #stablehlo.result_accuracy<ulps = 2, "
             "mode = #stablehlo.result_accuracy_mode<TOLERANCE>>} : tensor<4xf32>",
             "%0 = \"stablehlo.exponential\"(%a) <{result_accuracy = #stablehlo.result_accuracy<atol "
             "= 0.0, rtol = 0.0, ulps = 2, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>}> : "
             "(tensor<4xf32>) -> tensor<4xf32>");
}

TEST(MlirTextPrettyTest, Constant) {
  ExpectSame("", "%0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>",
             "%0 = \"stablehlo.constant\"() <{value = dense<[1.0, 2.0]> : tensor<2xf32>}> : () -> "
             "tensor<2xf32>");
  // Hex and decimal spell the same data; an all-equal list is a splat.
  ExpectSame("", "%0 = stablehlo.constant dense<\"0x0000803F0000803F\"> : tensor<2xf32>",
             "%0 = \"stablehlo.constant\"() {value = dense<1.0> : tensor<2xf32>} : () -> "
             "tensor<2xf32>");
}

TEST(MlirTextPrettyTest, Compare) {
  ExpectSame("%a: tensor<f32>, %b: tensor<f32>",
             "%0 = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
             "%0 = \"stablehlo.compare\"(%a, %b) {comparison_direction = "
             "#stablehlo<comparison_direction GT>, compare_type = #stablehlo<comparison_type FLOAT>} "
             ": (tensor<f32>, tensor<f32>) -> tensor<i1>");
}

TEST(MlirTextPrettyTest, BroadcastTransposeSliceConcat) {
  ExpectSame("%a: tensor<3xf32>",
             "%0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>",
             "%0 = \"stablehlo.broadcast_in_dim\"(%a) <{broadcast_dimensions = array<i64: 1>}> : "
             "(tensor<3xf32>) -> tensor<2x3xf32>");
  ExpectSame("%a: tensor<2x3xf32>",
             "%0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>",
             "%0 = \"stablehlo.transpose\"(%a) {permutation = array<i64: 1, 0>} : "
             "(tensor<2x3xf32>) -> tensor<3x2xf32>");
  ExpectSame("%a: tensor<8xf32>", "%0 = stablehlo.slice %a [1:7:2] : (tensor<8xf32>) -> tensor<3xf32>",
             "%0 = \"stablehlo.slice\"(%a) {start_indices = array<i64: 1>, limit_indices = "
             "array<i64: 7>, strides = array<i64: 2>} : (tensor<8xf32>) -> tensor<3xf32>");
  ExpectSame("%a: tensor<2xf32>, %b: tensor<3xf32>",
             "%0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<2xf32>, tensor<3xf32>) -> "
             "tensor<5xf32>",
             "%0 = \"stablehlo.concatenate\"(%a, %b) {dimension = 0 : i64} : (tensor<2xf32>, "
             "tensor<3xf32>) -> tensor<5xf32>");
  ExpectSame("%a: tensor<2xf32>, %p: tensor<f32>",
             "%0 = stablehlo.pad %a, %p, low = [1], high = [2], interior = [0] : (tensor<2xf32>, "
             "tensor<f32>) -> tensor<5xf32>",
             "%0 = \"stablehlo.pad\"(%a, %p) {edge_padding_low = array<i64: 1>, edge_padding_high = "
             "array<i64: 2>, interior_padding = array<i64: 0>} : (tensor<2xf32>, tensor<f32>) -> "
             "tensor<5xf32>");
}

TEST(MlirTextPrettyTest, DotGeneral) {
  ExpectSame("%a: tensor<2x3xf32>, %b: tensor<3x4xf32>",
             "%0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = "
             "[DEFAULT, HIGHEST] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>",
             "%0 = \"stablehlo.dot_general\"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<"
             "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, "
             "precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]} : "
             "(tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>");
}

TEST(MlirTextPrettyTest, ReduceCompactAndGeneral) {
  const std::string generic =
      "%0 = \"stablehlo.reduce\"(%a, %c) ({\n"
      "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "    %1 = \"stablehlo.add\"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
      "    \"stablehlo.return\"(%1) : (tensor<f32>) -> ()\n"
      "  }) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<f32>) -> tensor<f32>";
  ExpectSame("%a: tensor<4xf32>, %c: tensor<f32>",
             "%0 = stablehlo.reduce(%a init: %c) applies stablehlo.add across dimensions = [0] : "
             "(tensor<4xf32>, tensor<f32>) -> tensor<f32>",
             generic);
  ExpectSame("%a: tensor<4xf32>, %c: tensor<f32>",
             "%0 = stablehlo.reduce(%a init: %c) across dimensions = [0] : (tensor<4xf32>, "
             "tensor<f32>) -> tensor<f32>\n reducer(%x: tensor<f32>, %y: tensor<f32>) {\n"
             "  %1 = stablehlo.add %x, %y : tensor<f32>\n  stablehlo.return %1 : tensor<f32>\n}",
             generic);
}

TEST(MlirTextPrettyTest, While) {
  ExpectSame("%i: tensor<i64>, %n: tensor<i64>",
             "%0:2 = stablehlo.while(%a = %i, %b = %n) : tensor<i64>, tensor<i64>\n"
             " cond {\n  %c = stablehlo.compare LT, %a, %b : (tensor<i64>, tensor<i64>) -> "
             "tensor<i1>\n  stablehlo.return %c : tensor<i1>\n"
             "} do {\n  %s = stablehlo.add %a, %a : tensor<i64>\n  stablehlo.return %s, %b : "
             "tensor<i64>, tensor<i64>\n}",
             "%0:2 = \"stablehlo.while\"(%i, %n) ({\n^bb0(%a: tensor<i64>, %b: tensor<i64>):\n"
             "  %c = \"stablehlo.compare\"(%a, %b) {comparison_direction = "
             "#stablehlo<comparison_direction LT>} : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
             "  \"stablehlo.return\"(%c) : (tensor<i1>) -> ()\n}, {\n"
             "^bb0(%a: tensor<i64>, %b: tensor<i64>):\n"
             "  %s = \"stablehlo.add\"(%a, %a) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
             "  \"stablehlo.return\"(%s, %b) : (tensor<i64>, tensor<i64>) -> ()\n"
             "}) : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>)");
}

TEST(MlirTextPrettyTest, ConvolutionAndCustomCall) {
  ExpectSame(
      "%a: tensor<1x4x4x1xf32>, %k: tensor<3x3x1x1xf32>",
      "%0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
      "window = {stride = [1, 1], pad = [[1, 1], [1, 1]], rhs_dilate = [1, 1]} "
      "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, "
      "tensor<3x3x1x1xf32>) -> tensor<1x4x4x1xf32>",
      "%0 = \"stablehlo.convolution\"(%a, %k) {batch_group_count = 1 : i64, dimension_numbers = "
      "#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, "
      "padding = dense<1> : tensor<2x2xi64>, rhs_dilation = array<i64: 1, 1>, window_strides = "
      "array<i64: 1, 1>} : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x4x4x1xf32>");
  ExpectSame("%a: tensor<2xf32>",
             "%0 = stablehlo.custom_call @foo(%a) {has_side_effect = true, mhlo.sharding = "
             "\"{replicated}\"} : (tensor<2xf32>) -> tensor<2xf32>",
             "%0 = \"stablehlo.custom_call\"(%a) <{call_target_name = \"foo\", has_side_effect = "
             "true}> {mhlo.sharding = \"{replicated}\"} : (tensor<2xf32>) -> tensor<2xf32>");
}

TEST(MlirTextPrettyTest, SelectIotaConvertReshape) {
  ExpectSame("%p: tensor<2xi1>, %a: tensor<2xf32>, %b: tensor<2xf32>",
             "%0 = stablehlo.select %p, %a, %b : tensor<2xi1>, tensor<2xf32>",
             "%0 = \"stablehlo.select\"(%p, %a, %b) : (tensor<2xi1>, tensor<2xf32>, tensor<2xf32>) "
             "-> tensor<2xf32>");
  ExpectSame("", "%0 = stablehlo.iota dim = 0 : tensor<4xi32>",
             "%0 = \"stablehlo.iota\"() {iota_dimension = 0 : i64} : () -> tensor<4xi32>");
  ExpectSame("%a: tensor<4xf32>", "%0 = stablehlo.reshape %a : (tensor<4xf32>) -> tensor<2x2xf32>",
             "%0 = \"stablehlo.reshape\"(%a) : (tensor<4xf32>) -> tensor<2x2xf32>");
}

TEST(MlirTextPrettyTest, FuncAndCall) {
  auto a = Parse(
      "module @m attributes {mhlo.num_replicas = 1 : i32} {\n"
      "  func.func public @main(%arg0: tensor<f32> {jax.buffer_donor = true}) -> (tensor<f32> "
      "{jax.result_info = \"\"}) {\n"
      "    %0 = call @g(%arg0) : (tensor<f32>) -> tensor<f32>\n    return %0 : tensor<f32>\n  }\n"
      "  func.func private @g(%x: tensor<f32>) -> tensor<f32> {\n    return %x : tensor<f32>\n  }\n"
      "}\n");
  auto b = Parse(
      "\"builtin.module\"() <{sym_name = \"m\"}> ({\n"
      "  \"func.func\"() <{arg_attrs = [{jax.buffer_donor = true}], function_type = (tensor<f32>) "
      "-> tensor<f32>, res_attrs = [{jax.result_info = \"\"}], sym_name = \"main\", "
      "sym_visibility = \"public\"}> ({\n"
      "  ^bb0(%arg0: tensor<f32>):\n"
      "    %0 = \"func.call\"(%arg0) <{callee = @g}> : (tensor<f32>) -> tensor<f32>\n"
      "    \"func.return\"(%0) : (tensor<f32>) -> ()\n  }) : () -> ()\n"
      "  \"func.func\"() <{function_type = (tensor<f32>) -> tensor<f32>, sym_name = \"g\", "
      "sym_visibility = \"private\"}> ({\n"
      "  ^bb0(%x: tensor<f32>):\n    \"func.return\"(%x) : (tensor<f32>) -> ()\n  }) : () -> ()\n"
      "}) {mhlo.num_replicas = 1 : i32} : () -> ()\n");
  ASSERT_TRUE(a && b);
  std::string why;
  EXPECT_TRUE(StructurallyEqual(*a, *b, &why)) << why;
}

TEST(MlirTextPrettyTest, SdyShardingConstraint) {
  auto a = Parse(
      "sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n"
      "func.func @f(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {\"y\", "
      "?}p1]>}) -> tensor<8x8xf32> {\n"
      "  %0 = sdy.sharding_constraint %a <@mesh, [{}, {\"y\"}], replicated={\"x\"}> : "
      "tensor<8x8xf32>\n  return %0 : tensor<8x8xf32>\n}\n");
  auto b = Parse(
      "\"sdy.mesh\"() <{mesh = #sdy.mesh<[\"x\"=2, \"y\"=4]>, sym_name = \"mesh\"}> : () -> ()\n"
      "func.func @f(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {\"y\", "
      "?}p1]>}) -> tensor<8x8xf32> {\n"
      "  %0 = \"sdy.sharding_constraint\"(%a) <{sharding = #sdy.sharding<@mesh, [{}, {\"y\"}], "
      "replicated={\"x\"}>}> : (tensor<8x8xf32>) -> tensor<8x8xf32>\n"
      "  return %0 : tensor<8x8xf32>\n}\n");
  ASSERT_TRUE(a && b);
  std::string why;
  EXPECT_TRUE(StructurallyEqual(*a, *b, &why)) << why;
}

TEST(MlirTextPrettyTest, CheckOps) {
  ExpectSame("%a: tensor<2xf32>",
             "check.expect_almost_eq_const %a, dense<[1.0, 2.0]> : tensor<2xf32>, tolerance = 0.1",
             "\"check.expect_almost_eq_const\"(%a) {value = dense<[1.0, 2.0]> : tensor<2xf32>, "
             "tolerance = 0.1 : f64} : (tensor<2xf32>) -> ()");
}

}  // namespace
}  // namespace ember::frontend
