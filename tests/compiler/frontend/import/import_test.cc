// Unit tests of the MLIR -> ir::Module importer, on modules written as MLIR text.
#include "compiler/frontend/import/import.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/frontend/text/mlir_text_parser.h"
#include "compiler/ir/verifier.h"
#include "gtest/gtest.h"

namespace ember::frontend {
namespace {

absl::StatusOr<std::unique_ptr<ir::Module>> ImportText(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Operation>> tree = ParseMlirText(text, "model.mlir");
  if (!tree.ok()) return tree.status();
  return ImportModule(**tree);
}

TEST(ImportTest, AddFunction) {
  auto m = ImportText(R"(
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %b : tensor<2xf32>
  return %0 : tensor<2xf32>
})");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)->ToString(),
            "module @module\n"
            "func public @main(%0: tensor<2xf32>, %1: tensor<2xf32>) -> (tensor<2xf32>) {\n"
            "  %2 = add(%0, %1) : tensor<2xf32>\n"
            "  return(%2)\n"
            "}\n");
}

std::string Text(const std::string& mlir) {
  auto m = ImportText(mlir);
  if (!m.ok()) return std::string("error: ") + std::string(m.status().message());
  return (*m)->ToString();
}

std::string Error(const std::string& mlir) {
  auto m = ImportText(mlir);
  return m.ok() ? "OK" : std::string(m.status().message());
}

TEST(ImportTest, DotGeneralIsFlattenedWithDefaultsAndJaxLocation) {
  auto m = ImportText(R"(
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%a: tensor<2x3xf32> {jax.buffer_donor = true}, %b: tensor<3x4xf32>)
      -> (tensor<2x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32> loc(#loc3)
    return %0 : tensor<2x4xf32>
  }
}
#loc1 = loc("model.py":41:7)
#loc2 = loc("jax/_src/core.py":100:3)
#loc3 = loc("jit(f)/dot_general"(callsite(#loc1 at #loc2)))
)");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)->ToString(),
            "module @jit_f {mhlo.num_partitions = 1, mhlo.num_replicas = 1}\n"
            "func public @main(%0: tensor<2x3xf32>, %1: tensor<3x4xf32>) -> (tensor<2x4xf32>) {\n"
            "  %2 = dot_general(%0, %1) {lhs_batching_dimensions = [], rhs_batching_dimensions = "
            "[], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0], "
            "precision_config = [\"DEFAULT\", \"DEFAULT\"]} : tensor<2x4xf32>\n"
            "  return(%2)\n"
            "}\n");
  const ir::Computation* main = (*m)->entry();
  ASSERT_NE(main, nullptr);
  const ir::Instruction& dot = *main->instructions()[0];
  EXPECT_EQ(dot.location().ToString(), "model.py:41:7");  // the innermost frame
  EXPECT_EQ(dot.location().name, "jit(f)/dot_general");
  ASSERT_EQ(main->arg_attributes().size(), 2u);
  EXPECT_EQ(main->arg_attributes()[0].entries().size(), 1u);
  EXPECT_EQ(main->arg_attributes()[0].Find("jax.buffer_donor")->ToString(), "true");
  EXPECT_EQ(main->result_attributes()[0].Find("jax.result_info")->ToString(), "\"result\"");
}

TEST(ImportTest, ConvolutionWindowDefaultsAreMaterialized) {
  EXPECT_EQ(Text(R"(
func.func @main(%x: tensor<1x8x3xf32>, %k: tensor<3x3x4xf32>) -> tensor<1x6x4xf32> {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x3xf32>, tensor<3x3x4xf32>) -> tensor<1x6x4xf32>
  return %0 : tensor<1x6x4xf32>
})"),
            "module @module\n"
            "func public @main(%0: tensor<1x8x3xf32>, %1: tensor<3x3x4xf32>) -> (tensor<1x6x4xf32>) {\n"
            "  %2 = convolution(%0, %1) {window_strides = [1], padding = [0, 0], lhs_dilation = [1], "
            "rhs_dilation = [1], window_reversal = [false], input_batch_dimension = 0, "
            "input_feature_dimension = 2, input_spatial_dimensions = [1], "
            "kernel_input_feature_dimension = 1, kernel_output_feature_dimension = 2, "
            "kernel_spatial_dimensions = [0], output_batch_dimension = 0, "
            "output_feature_dimension = 2, output_spatial_dimensions = [1], feature_group_count = 1, "
            "batch_group_count = 1, precision_config = [\"DEFAULT\", \"DEFAULT\"]} : tensor<1x6x4xf32>\n"
            "  return(%2)\n"
            "}\n");
}

TEST(ImportTest, ConstantsCallsAndReduceRegions) {
  EXPECT_EQ(Text(R"(
func.func private @sum(%x: tensor<2xi1>) -> tensor<i1> {
  %init = stablehlo.constant dense<false> : tensor<i1>
  %0 = stablehlo.reduce(%x init: %init) applies stablehlo.or across dimensions = [0] : (tensor<2xi1>, tensor<i1>) -> tensor<i1>
  return %0 : tensor<i1>
}
func.func @main() -> tensor<i1> {
  %c = stablehlo.constant dense<[true, false]> : tensor<2xi1>
  %0 = func.call @sum(%c) : (tensor<2xi1>) -> tensor<i1>
  return %0 : tensor<i1>
})"),
            "module @module\n"
            "func private @sum(%0: tensor<2xi1>) -> (tensor<i1>) {\n"
            "  %1 = constant() {value = pred[] false} : tensor<i1>\n"
            "  %2 = reduce(%0, %1) regions [@reduce.region0] {dimensions = [0]} : tensor<i1>\n"
            "  return(%2)\n"
            "}\n"
            "func public @main() -> (tensor<i1>) {\n"
            "  %0 = constant() {value = pred[2]{0} {true, false}} : tensor<2xi1>\n"
            "  %1 = call(%0) @sum : tensor<i1>\n"
            "  return(%1)\n"
            "}\n"
            "region @reduce.region0(%0: tensor<i1>, %1: tensor<i1>) -> (tensor<i1>) {\n"
            "  %2 = or(%0, %1) : tensor<i1>\n"
            "  return(%2)\n"
            "}\n");
}

TEST(ImportTest, ShardingConstraintBecomesAShardingCustomCall) {
  const std::string text = Text(R"(
module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = sdy.sharding_constraint %a <@mesh, [{"x"}]> : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
})");
  EXPECT_EQ(text.substr(0, 37), "module @module {sdy.meshes = {mesh = ") << text;
  // The mesh and the sharding are typed IR (printed in Shardy's syntax, not kept as strings).
  EXPECT_EQ(text.substr(37, 20), "#sdy.mesh<[\"x\"=2]>}}") << text;
  EXPECT_NE(text.find("%1 = custom_call(%0) {call_target_name = \"Sharding\", has_side_effect = "
                      "false, api_version = 1, sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}"),
            std::string::npos)
      << text;
}

TEST(ImportTest, ErrorsNameTheOpTheAttributeAndTheLocation) {
  EXPECT_EQ(Error(R"(
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.abs"(%a) {bogus = 1 : i64} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
})"),
            "stablehlo.abs at model.mlir:3:3: unknown attribute 'bogus' = 1 : i64");
  EXPECT_EQ(Error(R"(
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "mydialect.frob"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
})"),
            "mydialect.frob at model.mlir:3:3: unknown op 'mydialect.frob'");
  EXPECT_EQ(Error(R"(
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "chlo.broadcast_add"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
})"),
            "chlo.broadcast_add at model.mlir:3:3: chlo.broadcast_add is not supported by the "
            "importer (legalize CHLO to StableHLO first)");
  EXPECT_EQ(Error(R"(
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "chlo.ragged_dot"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
})"),
            "chlo.ragged_dot at model.mlir:3:3: missing attribute 'ragged_dot_dimension_numbers'");
  // Dynamic dims import (refine_shapes makes them static), but a constant cannot have one.
  EXPECT_NE(Error(R"(
func.func @main() -> tensor<?xf32> {
  %0 = stablehlo.constant dense<1.0> : tensor<?xf32>
  return %0 : tensor<?xf32>
})").find("dense elements need a static shape"),
            std::string::npos);
}

// Shape-polymorphic programs import with `?` dims and the dynamic_* ops, and verify.
TEST(ImportTest, DynamicDimensionsImport) {
  auto tree = ParseMlirText(R"(
func.func @main(%n: tensor<i64>, %a: tensor<?x4xf32>) -> tensor<2x?x4xf32> {
  %0 = stablehlo.constant dense<2> : tensor<1xi32>
  %1 = stablehlo.convert %n : (tensor<i64>) -> tensor<i32>
  %2 = stablehlo.reshape %1 : (tensor<i32>) -> tensor<1xi32>
  %3 = stablehlo.constant dense<4> : tensor<1xi32>
  %4 = stablehlo.concatenate %0, %2, %3, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
  %5 = stablehlo.dynamic_broadcast_in_dim %a, %4, dims = [1, 2] : (tensor<?x4xf32>, tensor<3xi32>) -> tensor<2x?x4xf32>
  return %5 : tensor<2x?x4xf32>
})", "model.mlir");
  ASSERT_TRUE(tree.ok()) << tree.status();
  auto module = ImportModule(**tree);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_TRUE(ir::Verify(**module).ok());
  const ir::Computation* main = (*module)->entry();
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->parameter(1)->type().ToString(), "tensor<?x4xf32>");
  EXPECT_FALSE(main->parameter(1)->type().is_static());
  EXPECT_EQ(main->result_types()[0].ToString(), "tensor<2x?x4xf32>");
  // A broadcast whose known sizes contradict each other is still an error.
  auto bad = ParseMlirText(R"(
func.func @main(%a: tensor<?x4xf32>, %s: tensor<3xi32>) -> tensor<2x?x5xf32> {
  %0 = stablehlo.dynamic_broadcast_in_dim %a, %s, dims = [1, 2] : (tensor<?x4xf32>, tensor<3xi32>) -> tensor<2x?x5xf32>
  return %0 : tensor<2x?x5xf32>
})", "model.mlir");
  ASSERT_TRUE(bad.ok()) << bad.status();
  auto bad_module = ImportModule(**bad);
  ASSERT_TRUE(bad_module.ok()) << bad_module.status();
  absl::Status verified = ir::Verify(**bad_module);
  EXPECT_FALSE(verified.ok());
  EXPECT_NE(std::string(verified.message()).find("stablehlo.dynamic_broadcast_in_dim at model.mlir:3:"),
            std::string::npos)
      << verified;
  // Elementwise operands must have compatible shapes: `?` matches any size, 4 never matches 5.
  for (const char* rhs : {"tensor<?x5xf32>", "tensor<3x4xf32>"}) {
    auto add = ParseMlirText(absl::StrCat(R"(
func.func @main(%a: tensor<?x4xf32>, %b: )", rhs, R"() -> tensor<?x4xf32> {
  %0 = "stablehlo.add"(%a, %b) : (tensor<?x4xf32>, )", rhs, R"() -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
})"), "model.mlir");
    ASSERT_TRUE(add.ok()) << add.status();
    auto add_module = ImportModule(**add);
    ASSERT_TRUE(add_module.ok()) << add_module.status();
    EXPECT_EQ(ir::Verify(**add_module).ok(), std::string(rhs) == "tensor<3x4xf32>") << rhs;
  }
}

// Layouts and (StableHLO 1.18) result tilings are 1-D tensors of `index`.
TEST(ImportTest, CustomCallLayoutsAndResultTilingsAreIndexTensors) {
  EXPECT_EQ(Text(R"(
func.func @main(%a: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %0 = stablehlo.custom_call @foo(%a) {
    operand_layouts = [dense<[1, 0]> : tensor<2xindex>],
    result_layouts = [dense<[0, 1]> : tensor<2xindex>],
    result_tilings = [[dense<[8, 128]> : tensor<2xindex>, dense<2> : tensor<1xindex>]]
  } : (tensor<64x256xf32>) -> tensor<64x256xf32>
  return %0 : tensor<64x256xf32>
})"),
            "module @module\n"
            "func public @main(%0: tensor<64x256xf32>) -> (tensor<64x256xf32>) {\n"
            "  %1 = custom_call(%0) {call_target_name = \"foo\", has_side_effect = false, "
            "api_version = 1, operand_layouts = [[1, 0]], result_layouts = [[0, 1]], "
            "result_tilings = [[[8, 128], [2]]]} : tensor<64x256xf32>\n"
            "  return(%1)\n"
            "}\n");
  // Empty lists are VHLO's default and are dropped.
  EXPECT_EQ(Text(R"(
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.custom_call @foo(%a) {result_tilings = []} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
})"),
            "module @module\n"
            "func public @main(%0: tensor<2xf32>) -> (tensor<2xf32>) {\n"
            "  %1 = custom_call(%0) {call_target_name = \"foo\", has_side_effect = false, "
            "api_version = 1} : tensor<2xf32>\n"
            "  return(%1)\n"
            "}\n");
  EXPECT_EQ(Error(R"(
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.custom_call @foo(%a) {
    result_tilings = [[dense<[[8, 128]]> : tensor<1x2xindex>]]
  } : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
})"),
            "stablehlo.custom_call at model.mlir:3:3: attribute 'result_tilings': expected a 1-D "
            "static index tensor, got dense<\"0x08000000000000008000000000000000\"> : "
            "tensor<1x2xindex>");
  EXPECT_EQ(Error(R"(
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.custom_call @foo(%a) {
    result_tilings = [dense<[8, 128]> : tensor<2xindex>]
  } : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
})"),
            "stablehlo.custom_call at model.mlir:3:3: attribute 'result_tilings': expected an "
            "array, got dense<\"0x08000000000000008000000000000000\"> : tensor<2xindex>");
}

TEST(ImportTest, SkippingFailingFunctionsReportsThem) {
  auto tree = ParseMlirText(R"(
func.func @dynamic(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "mydialect.frob"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  return %a : tensor<2xf32>
})", "model.mlir");
  ASSERT_TRUE(tree.ok()) << tree.status();
  ImportOptions options;
  options.skip_failing_functions = true;
  auto result = ImportModule(**tree, options);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->skipped.size(), 1u);
  EXPECT_EQ(result->skipped[0].substr(0, 10), "@dynamic: ");
  EXPECT_EQ(result->module->functions().size(), 1u);
  EXPECT_FALSE(ImportModule(**tree).ok());
}

// What the verifier says of an imported module ("OK" when it verifies).
std::string VerifyError(const std::string& mlir) {
  auto m = ImportText(mlir);
  if (!m.ok()) return std::string("import: ") + std::string(m.status().message());
  absl::Status s = ir::Verify(**m);
  return s.ok() ? "OK" : std::string(s.message());
}

// An async_start whose body is `body_op` (one op over %b, typed as given) and its async_done.
std::string AsyncModule(const std::string& body, const std::string& body_type,
                        const std::string& future) {
  return absl::StrCat(R"(
func.func @main(%a: tensor<4xf32>) -> )", body_type, R"( {
  %f = "stablehlo.async_start"(%a) ({
    ^bb0(%b: tensor<4xf32>):
)", body, R"(
  }) : (tensor<4xf32>) -> )", future, R"(
  %r = "stablehlo.async_done"(%f) : ()", future, ") -> ", body_type, R"(
  return %r : )", body_type, R"(
})");
}

TEST(ImportTest, AsyncStartAndDoneWithFutures) {
  const std::string slice = AsyncModule(R"(
    %s = stablehlo.slice %b [1:3] : (tensor<4xf32>) -> tensor<2xf32>
    stablehlo.return %s : tensor<2xf32>)",
                                        "tensor<2xf32>", "!stablehlo.future<tensor<2xf32>>");
  EXPECT_EQ(Text(slice),
            "module @module\n"
            "func public @main(%0: tensor<4xf32>) -> (tensor<2xf32>) {\n"
            "  %1 = async_start(%0) regions [@async_start.region0] : "
            "!stablehlo.future<tensor<2xf32>>\n"
            "  %2 = async_done(%1) : tensor<2xf32>\n"
            "  return(%2)\n"
            "}\n"
            "region @async_start.region0(%0: tensor<4xf32>) -> (tensor<2xf32>) {\n"
            "  %1 = slice(%0) {start_indices = [1], limit_indices = [3], strides = [1]} : "
            "tensor<2xf32>\n"
            "  return(%1)\n"
            "}\n");
  EXPECT_EQ(VerifyError(slice), "OK");
  // The spec's constraints: one collective or slice op in the body, the operands' types, and a
  // future of what the body returns; async_done takes a one-value future.
  EXPECT_EQ(VerifyError(AsyncModule(R"(
    %s = stablehlo.abs %b : tensor<4xf32>
    stablehlo.return %s : tensor<4xf32>)",
                                    "tensor<4xf32>", "!stablehlo.future<tensor<4xf32>>")),
            "stablehlo.async_start at model.mlir:3:3: the body's operation must be a collective "
            "or a slice, not stablehlo.abs");
  EXPECT_EQ(VerifyError(AsyncModule(R"(
    %s = stablehlo.slice %b [1:3] : (tensor<4xf32>) -> tensor<2xf32>
    %t = stablehlo.slice %s [0:1] : (tensor<2xf32>) -> tensor<1xf32>
    stablehlo.return %t : tensor<1xf32>)",
                                    "tensor<1xf32>", "!stablehlo.future<tensor<1xf32>>")),
            "stablehlo.async_start at model.mlir:3:3: the body must hold exactly one operation "
            "and a return, but holds 3 operations");
  EXPECT_EQ(VerifyError(AsyncModule(R"(
    %s = stablehlo.slice %b [1:3] : (tensor<4xf32>) -> tensor<2xf32>
    stablehlo.return %s : tensor<2xf32>)",
                                    "tensor<3xf32>", "!stablehlo.future<tensor<3xf32>>")),
            "stablehlo.async_start at model.mlir:3:3: result type "
            "!stablehlo.future<tensor<3xf32>> does not match the inferred "
            "!stablehlo.future<tensor<2xf32>>");
  EXPECT_EQ(VerifyError(R"(
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = "stablehlo.async_done"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
})"),
            "stablehlo.async_done at model.mlir:3:3: operand must be a !stablehlo.future, got "
            "tensor<4xf32>");
  EXPECT_EQ(VerifyError(R"(
func.func @main(%f: !stablehlo.future<tensor<4xf32>, tensor<i32>>) -> tensor<4xf32> {
  %r = "stablehlo.async_done"(%f) : (!stablehlo.future<tensor<4xf32>, tensor<i32>>) -> tensor<4xf32>
  return %r : tensor<4xf32>
})"),
            "stablehlo.async_done at model.mlir:3:3: the future must hold exactly one value, but "
            "holds 2");
  // A future holds tensors.
  EXPECT_NE(Error(R"(
func.func @main(%f: !stablehlo.future<!stablehlo.token>) -> () {
  return
})").find("a future holds tensors, not !stablehlo.token"),
            std::string::npos);
}

// Older and rarer spellings: `index` elements are 64-bit integers (as XLA reads them), the legacy
// cross-replica-sum is an all_reduce that adds, and a function without a body is a declaration
// (its signature kept on the module; calling it is an error).
TEST(ImportTest, IndexCrossReplicaSumAndDeclarations) {
  EXPECT_EQ(Text(R"(
module {
  func.func private @external(tensor<2xf32>) -> !stablehlo.future<tensor<2xf32>>
  func.func @main(%a: tensor<2xf32>, %shape: tensor<1xindex>) -> (tensor<2xf32>, tensor<1xindex>) {
    %0 = "stablehlo.cross-replica-sum"(%a) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    return %0, %shape : tensor<2xf32>, tensor<1xindex>
  }
})"),
            "module @module {func.declarations = {external = \"(tensor<2xf32>) -> "
            "(!stablehlo.future<tensor<2xf32>>)\"}}\n"
            "func public @main(%0: tensor<2xf32>, %1: tensor<1xi64>) -> (tensor<2xf32>, "
            "tensor<1xi64>) {\n"
            "  %2 = all_reduce(%0) regions [@all_reduce.region0] {replica_groups = s64[1,2]{1,0} "
            "{{0, 1}}, channel_id = 0, use_global_device_ids = false} : tensor<2xf32>\n"
            "  return(%2, %1)\n"
            "}\n"
            "region @all_reduce.region0(%0: tensor<f32>, %1: tensor<f32>) -> (tensor<f32>) {\n"
            "  %2 = add(%0, %1) : tensor<f32>\n"
            "  return(%2)\n"
            "}\n");
  EXPECT_EQ(Error(R"(
module {
  func.func private @external(tensor<2xf32>) -> tensor<2xf32>
  func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
    %0 = func.call @external(%a) : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
})"),
            "func.call at model.mlir:5:5: callee @external is only declared: it has no body to run");
}

// #stablehlo.replica_group_mesh_axes keeps its mesh (a symbol, or inline with device ids) and
// its axes (sub-axes with their pre-size and size); the verifier checks inline meshes.
TEST(ImportTest, MeshAxesReplicaGroups) {
  const std::string inline_mesh = R"(
func.func @main(%a: tensor<4xf32>) -> tensor<8xf32> {
  %0 = "stablehlo.all_gather"(%a) {all_gather_dim = 0 : i64,
      replica_groups = #stablehlo.replica_group_mesh_axes<
        mesh = #stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "x", size = 4>],
                               device_ids = dense<[3, 2, 1, 0]> : tensor<4xi64>>,
        axes = [#stablehlo.axis_ref<name = "x", sub_axis_info = (1)2>]>} : (tensor<4xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
})";
  EXPECT_NE(Text(inline_mesh).find(
                "replica_groups = {mesh = {axes = [{name = \"x\", size = 4}], device_ids = [3, 2, "
                "1, 0]}, axes = [{name = \"x\", pre_size = 1, size = 2}]}"),
            std::string::npos)
      << Text(inline_mesh);
  EXPECT_EQ(VerifyError(inline_mesh), "OK");
  std::string bad = inline_mesh;
  bad.replace(bad.find("(1)2"), 4, "(1)3");
  EXPECT_EQ(VerifyError(bad),
            "stablehlo.all_gather at model.mlir:3:3: replica_groups: sub-axis \"x\":(1)3 does not "
            "divide the axis of size 4");
  const std::string by_symbol = R"(
module {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = "stablehlo.collective_broadcast"(%a) {replica_groups = #stablehlo.replica_group_mesh_axes<
        mesh = @mesh, axes = [#stablehlo.axis_ref<name = "y">]>} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
})";
  EXPECT_NE(Text(by_symbol).find(
                "replica_groups = {mesh = \"mesh\", axes = [{name = \"y\"}]}"),
            std::string::npos)
      << Text(by_symbol);
  EXPECT_EQ(VerifyError(by_symbol), "OK");
}

// Buffers (memref<...>) and their special custom calls; other ops take no buffer.
TEST(ImportTest, BufferTypes) {
  EXPECT_EQ(Text(R"(
func.func @main(%x: tensor<2xf32>) -> memref<2xf32> {
  %b = "stablehlo.custom_call"(%x) {call_target_name = "Pin", api_version = 4 : i32} : (tensor<2xf32>) -> memref<2xf32>
  return %b : memref<2xf32>
})"),
            "module @module\n"
            "func public @main(%0: tensor<2xf32>) -> (memref<2xf32>) {\n"
            "  %1 = custom_call(%0) {call_target_name = \"Pin\", has_side_effect = false, "
            "api_version = 4} : memref<2xf32>\n"
            "  return(%1)\n"
            "}\n");
  EXPECT_EQ(VerifyError(R"(
func.func @main(%x: tensor<2xf32>) -> memref<3xf32> {
  %b = "stablehlo.custom_call"(%x) {call_target_name = "Pin", api_version = 4 : i32} : (tensor<2xf32>) -> memref<3xf32>
  return %b : memref<3xf32>
})"),
            "stablehlo.custom_call at model.mlir:3:3: Pin keeps the shape: tensor<2xf32> -> "
            "memref<3xf32>");
  EXPECT_EQ(VerifyError(R"(
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %b = "stablehlo.custom_call"(%x) {call_target_name = "Unpin", api_version = 4 : i32} : (tensor<2xf32>) -> tensor<2xf32>
  return %b : tensor<2xf32>
})"),
            "stablehlo.custom_call at model.mlir:3:3: Unpin takes a buffer and returns a tensor, "
            "not tensor<2xf32> -> tensor<2xf32>");
  EXPECT_EQ(VerifyError(R"(
func.func @main(%b: memref<2xf32>) -> tensor<2xf32> {
  %y = stablehlo.abs %b : (memref<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
})"),
            "stablehlo.abs at model.mlir:3:3: operand 0 must be a tensor, got memref<2xf32>");
  EXPECT_NE(Error(R"(
func.func @main(%b: memref<2xf32, 1>) -> () {
  return
})").find("a buffer takes no layout and no memory space but the default (0)"),
            std::string::npos);
  // Memory space 0 is the default one (JAX's pin(to='hbm')).
  EXPECT_EQ(VerifyError(R"(
func.func @main(%b: memref<2xf32, 0>) -> memref<2xf32> {
  return %b : memref<2xf32>
})"),
            "OK");
}

}  // namespace
}  // namespace ember::frontend

namespace ember::frontend {
namespace {

// A splat of more elements than constant folding makes (JAX's full-size fills, e.g. in
// jax.random.normal) imports as a scalar constant and a broadcast, never as the expanded array;
// smaller splats and non-splat constants stay constants.
TEST(ImportTest, LargeSplatConstantsBecomeBroadcasts) {
  auto m = ImportText(R"(
func.func @main() -> (tensor<2000xf32>, tensor<8xi32>, tensor<3000xi1>) {
  %0 = stablehlo.constant dense<1.5> : tensor<2000xf32>
  %1 = stablehlo.constant dense<7> : tensor<8xi32>
  %2 = stablehlo.constant dense<true> : tensor<3000xi1>
  return %0, %1, %2 : tensor<2000xf32>, tensor<8xi32>, tensor<3000xi1>
})");
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(ir::Verify(**m).ok());
  const ir::Computation& main = *(*m)->entry();
  const ir::Instruction* ret = main.return_instruction();
  ASSERT_NE(ret, nullptr);
  const ir::Instruction* big = ret->operand(0)->producer();
  ASSERT_EQ(big->opcode(), ir::Opcode::kBroadcastInDim);
  const ir::Instruction* scalar = big->operand(0)->producer();
  ASSERT_EQ(scalar->opcode(), ir::Opcode::kConstant);
  EXPECT_EQ(scalar->attribute("value")->literal->ToString(), "f32[] 1.5");
  EXPECT_EQ(ret->operand(1)->producer()->opcode(), ir::Opcode::kConstant);
  const ir::Instruction* flags = ret->operand(2)->producer();
  ASSERT_EQ(flags->opcode(), ir::Opcode::kBroadcastInDim);
  EXPECT_EQ(flags->operand(0)->producer()->attribute("value")->literal->ToString(), "pred[] true");
}

}  // namespace
}  // namespace ember::frontend
