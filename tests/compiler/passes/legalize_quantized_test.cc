// legalize-quantized on hand-written programs: quantized types import from MLIR text, verify,
// print back, and lower to storage integers plus float math whose results (run through the
// reference evaluator) are the spec's.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "compiler/frontend/import/import.h"
#include "compiler/frontend/text/mlir_text_parser.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/pass.h"

namespace ember::passes {
namespace {

absl::StatusOr<std::unique_ptr<ir::Module>> Import(const std::string& text) {
  auto tree = frontend::ParseMlirText(text, "test.mlir");
  if (!tree.ok()) return tree.status();
  return frontend::ImportModule(**tree);
}

std::unique_ptr<ir::Module> Parse(const std::string& text) {
  auto module = Import(text);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return nullptr;
  absl::Status verified = ir::Verify(**module);
  EXPECT_TRUE(verified.ok()) << verified;
  return *std::move(module);
}

// Lowers the module, checks no quantized type is left, and runs the entry without arguments.
std::vector<eval::EvalValue> LowerAndRun(ir::Module& module) {
  absl::StatusOr<bool> changed = CreateLegalizeQuantizedPass()->Run(module);
  EXPECT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(changed.value_or(false));
  absl::Status verified = ir::Verify(module);
  EXPECT_TRUE(verified.ok()) << verified << "\n" << module.ToString();
  EXPECT_FALSE(absl::StrContains(module.ToString(), "!quant.")) << module.ToString();
  eval::Evaluator evaluator;
  auto out = evaluator.Run(*module.entry(), {});
  EXPECT_TRUE(out.ok()) << out.status() << "\n" << module.ToString();
  return out.ok() ? *std::move(out) : std::vector<eval::EvalValue>{};
}

template <typename T>
std::vector<T> Values(const eval::EvalValue& v) {
  auto data = v.array.data<T>();
  EXPECT_TRUE(data.ok()) << data.status();
  if (!data.ok()) return {};
  return std::vector<T>(data->begin(), data->end());
}

TEST(LegalizeQuantizedTest, QuantizePerAxisRoundsToNearestEvenAndAddsZeroPoints) {
  auto module = Parse(R"(
func.func @main() -> tensor<2xi8> {
  %x = stablehlo.constant dense<[4.0, 15.0]> : tensor<2xf32>
  %q = "stablehlo.uniform_quantize"(%x) : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>>
  %b = "stablehlo.bitcast_convert"(%q) : (tensor<2x!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>>) -> tensor<2xi8>
  func.return %b : tensor<2xi8>
})");
  ASSERT_NE(module, nullptr);
  auto out = LowerAndRun(*module);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Values<int8_t>(out[0]), (std::vector<int8_t>{10, 10}));
}

TEST(LegalizeQuantizedTest, QuantizeClampsToTheStorageRange) {
  auto module = Parse(R"(
func.func @main() -> tensor<4xi8> {
  %x = stablehlo.constant dense<[1000.0, -1000.0, 0.25, 0.75]> : tensor<4xf32>
  %q = stablehlo.uniform_quantize %x : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8<-100:100>:f32, 0.5>>
  %b = stablehlo.bitcast_convert %q : (tensor<4x!quant.uniform<i8<-100:100>:f32, 0.5>>) -> tensor<4xi8>
  func.return %b : tensor<4xi8>
})");
  ASSERT_NE(module, nullptr);
  auto out = LowerAndRun(*module);
  ASSERT_EQ(out.size(), 1u);
  // 0.25 / 0.5 = 0.5 -> 0 and 0.75 / 0.5 = 1.5 -> 2 (ties to even).
  EXPECT_EQ(Values<int8_t>(out[0]), (std::vector<int8_t>{100, -100, 0, 2}));
}

TEST(LegalizeQuantizedTest, DequantizeDoesNotWrapInTheStorageType) {
  auto module = Parse(R"(
func.func @main() -> tensor<3xf32> {
  %c = stablehlo.constant dense<[127, -128, 0]> : tensor<3xi8>
  %q = stablehlo.bitcast_convert %c : (tensor<3xi8>) -> tensor<3x!quant.uniform<i8:f32, 0.5:-128>>
  %f = stablehlo.uniform_dequantize %q : (tensor<3x!quant.uniform<i8:f32, 0.5:-128>>) -> tensor<3xf32>
  func.return %f : tensor<3xf32>
})");
  ASSERT_NE(module, nullptr);
  auto out = LowerAndRun(*module);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Values<float>(out[0]), (std::vector<float>{127.5f, 0.0f, 64.0f}));
}

TEST(LegalizeQuantizedTest, AddDequantizesComputesAndRequantizes) {
  // interpret/quantized_ops.mlir's quantized_add.
  auto module = Parse(R"(
func.func @main() -> tensor<2xi8> {
  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = stablehlo.constant dense<[3.0, 4.0]> : tensor<2xf32>
  %qa = "stablehlo.uniform_quantize"(%a) : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.1:-30>>
  %qb = "stablehlo.uniform_quantize"(%b) : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5:-20>>
  %r = "stablehlo.add"(%qa, %qb) : (tensor<2x!quant.uniform<i8:f32, 0.1:-30>>, tensor<2x!quant.uniform<i8:f32, 0.5:-20>>) -> tensor<2x!quant.uniform<i8:f32, 0.5:-20>>
  %c = "stablehlo.bitcast_convert"(%r) : (tensor<2x!quant.uniform<i8:f32, 0.5:-20>>) -> tensor<2xi8>
  func.return %c : tensor<2xi8>
})");
  ASSERT_NE(module, nullptr);
  auto out = LowerAndRun(*module);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Values<int8_t>(out[0]), (std::vector<int8_t>{-12, -8}));
}

TEST(LegalizeQuantizedTest, DotGeneralSumsExactlyAndRescalesOnce) {
  // lhs = [[1, 2], [3, 4]] * 0.5 (zero point 1), rhs = [[1, 0], [2, 1]] * 0.25 (zero point -2);
  // the float product is [[5, 2], [11, 4]]; with the result scale 0.125 the i32 storage holds
  // [[40, 16], [88, 32]] (the i32 sums of (q - zp) products times 0.5 * 0.25 / 0.125 = 1),
  // dequantized back exactly.
  auto module = Parse(R"(
func.func @main() -> tensor<2x2xf32> {
  %l = stablehlo.constant dense<[[3, 5], [7, 9]]> : tensor<2x2xi8>
  %r = stablehlo.constant dense<[[2, -2], [6, 2]]> : tensor<2x2xi8>
  %ql = stablehlo.bitcast_convert %l : (tensor<2x2xi8>) -> tensor<2x2x!quant.uniform<i8:f32, 0.5:1>>
  %qr = stablehlo.bitcast_convert %r : (tensor<2x2xi8>) -> tensor<2x2x!quant.uniform<i8:f32, 0.25:-2>>
  %d = stablehlo.dot_general %ql, %qr, contracting_dims = [1] x [0] : (tensor<2x2x!quant.uniform<i8:f32, 0.5:1>>, tensor<2x2x!quant.uniform<i8:f32, 0.25:-2>>) -> tensor<2x2x!quant.uniform<i32:f32, 0.125>>
  %f = stablehlo.uniform_dequantize %d : (tensor<2x2x!quant.uniform<i32:f32, 0.125>>) -> tensor<2x2xf32>
  func.return %f : tensor<2x2xf32>
})");
  ASSERT_NE(module, nullptr);
  auto out = LowerAndRun(*module);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Values<float>(out[0]), (std::vector<float>{5.0f, 2.0f, 11.0f, 4.0f}));
}

TEST(LegalizeQuantizedTest, HybridDotDequantizesRhs) {
  auto module = Parse(R"(
func.func @main() -> tensor<1x2xf32> {
  %l = stablehlo.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %r = stablehlo.constant dense<[[2, 4], [6, 8]]> : tensor<2x2xi8>
  %qr = stablehlo.bitcast_convert %r : (tensor<2x2xi8>) -> tensor<2x2x!quant.uniform<i8:f32:1, {0.5, 0.25}>>
  %d = stablehlo.dot_general %l, %qr, contracting_dims = [1] x [0] : (tensor<1x2xf32>, tensor<2x2x!quant.uniform<i8:f32:1, {0.5, 0.25}>>) -> tensor<1x2xf32>
  func.return %d : tensor<1x2xf32>
})");
  ASSERT_NE(module, nullptr);
  auto out = LowerAndRun(*module);
  ASSERT_EQ(out.size(), 1u);
  // rhs = [[1, 1], [3, 2]]: [1*1 + 2*3, 1*1 + 2*2].
  EXPECT_EQ(Values<float>(out[0]), (std::vector<float>{7.0f, 5.0f}));
}

TEST(LegalizeQuantizedTest, PerAxisDotGeneralScalesEachChannel) {
  // lhs = [1, 2] (scale 0.5), rhs = [[1, 1], [3, 2]] (column scales 0.5 and 0.25): the product
  // [7, 5] is stored with result scales 0.25 and 0.125 as [28, 40].
  auto module = Parse(R"(
func.func @main() -> (tensor<1x2xi32>, tensor<1x2xf32>) {
  %l = stablehlo.constant dense<[[2, 4]]> : tensor<1x2xi8>
  %r = stablehlo.constant dense<[[2, 4], [6, 8]]> : tensor<2x2xi8>
  %ql = stablehlo.bitcast_convert %l : (tensor<1x2xi8>) -> tensor<1x2x!quant.uniform<i8:f32, 0.5>>
  %qr = stablehlo.bitcast_convert %r : (tensor<2x2xi8>) -> tensor<2x2x!quant.uniform<i8:f32:1, {0.5, 0.25}>>
  %d = stablehlo.dot_general %ql, %qr, contracting_dims = [1] x [0] : (tensor<1x2x!quant.uniform<i8:f32, 0.5>>, tensor<2x2x!quant.uniform<i8:f32:1, {0.5, 0.25}>>) -> tensor<1x2x!quant.uniform<i32:f32:1, {0.25, 0.125}>>
  %s = stablehlo.bitcast_convert %d : (tensor<1x2x!quant.uniform<i32:f32:1, {0.25, 0.125}>>) -> tensor<1x2xi32>
  %f = stablehlo.uniform_dequantize %d : (tensor<1x2x!quant.uniform<i32:f32:1, {0.25, 0.125}>>) -> tensor<1x2xf32>
  func.return %s, %f : tensor<1x2xi32>, tensor<1x2xf32>
})");
  ASSERT_NE(module, nullptr);
  auto out = LowerAndRun(*module);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(Values<int32_t>(out[0]), (std::vector<int32_t>{28, 40}));
  EXPECT_EQ(Values<float>(out[1]), (std::vector<float>{7.0f, 5.0f}));
}

TEST(LegalizeQuantizedTest, QuantizedConstantsHoldStorageIntegers) {
  auto module = Parse(R"(
func.func @main() -> tensor<2xf32> {
  %c = stablehlo.constant() <{value = dense<[4, -6]> : tensor<2xi8>}> : () -> tensor<2x!quant.uniform<i8:f32, 0.5:-2>>
  %f = stablehlo.uniform_dequantize %c : (tensor<2x!quant.uniform<i8:f32, 0.5:-2>>) -> tensor<2xf32>
  func.return %f : tensor<2xf32>
})");
  ASSERT_NE(module, nullptr);
  auto out = LowerAndRun(*module);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Values<float>(out[0]), (std::vector<float>{3.0f, -2.0f}));
}

TEST(LegalizeQuantizedTest, RegionsCapturingQuantizedValues) {
  // The branch reads %q of the enclosing function, which is lowered first.
  auto module = Parse(R"(
func.func @main() -> tensor<2xf32> {
  %x = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %q = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5:3>>
  %p = stablehlo.constant dense<true> : tensor<i1>
  %r = "stablehlo.if"(%p) ({
    %d = stablehlo.uniform_dequantize %q : (tensor<2x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<2xf32>
    stablehlo.return %d : tensor<2xf32>
  }, {
    stablehlo.return %x : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
})");
  ASSERT_NE(module, nullptr);
  auto out = LowerAndRun(*module);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Values<float>(out[0]), (std::vector<float>{1.5f, -2.0f}));
}

TEST(LegalizeQuantizedTest, DataMovementKeepsStorageAndParametersAreRetyped) {
  auto module = Parse(R"(
func.func @main(%arg0: tensor<2x3x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<3x2x!quant.uniform<i8:f32, 0.5:3>> {
  %t = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<2x3x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<3x2x!quant.uniform<i8:f32, 0.5:3>>
  func.return %t : tensor<3x2x!quant.uniform<i8:f32, 0.5:3>>
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = CreateLegalizeQuantizedPass()->Run(*module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_TRUE(ir::Verify(*module).ok()) << module->ToString();
  const ir::Computation& main = *module->entry();
  EXPECT_EQ(main.parameter(0)->type().ToString(), "tensor<2x3xi8>");
  EXPECT_EQ(main.result_types()[0].ToString(), "tensor<3x2xi8>");
  // Nothing quantized: the pass leaves the module alone.
  auto plain = Parse("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                     "  %0 = stablehlo.add %a, %a : tensor<2xf32>\n  func.return %0 : tensor<2xf32>\n}\n");
  ASSERT_NE(plain, nullptr);
  EXPECT_FALSE(CreateLegalizeQuantizedPass()->Run(*plain).value_or(true));
}

TEST(LegalizeQuantizedTest, TypesPrintBackAndReimportEqual) {
  const std::string text = R"(
func.func @main(%a: tensor<2x!quant.uniform<i8:f32:0, {2.0:1, 3.0}>>, %b: tensor<4x!quant.uniform<i8<-127:127>:f32, 0.0039215482917486456:-100>>, %c: tensor<!quant.uniform<u8:bf16, 34.0:16>>) -> tensor<2x!quant.uniform<i8:f32:0, {2.0:1, 3.0}>> {
  func.return %a : tensor<2x!quant.uniform<i8:f32:0, {2.0:1, 3.0}>>
})";
  auto module = Parse(text);
  ASSERT_NE(module, nullptr);
  const ir::Computation& main = *module->entry();
  EXPECT_EQ(main.parameter(0)->type().ToString(), "tensor<2x!quant.uniform<i8:f32:0, {2.0:1, 3.0}>>");
  EXPECT_EQ(main.parameter(1)->type().ToString(),
            "tensor<4x!quant.uniform<i8<-127:127>:f32, 0.003921548291748646:-100>>");
  EXPECT_EQ(main.parameter(2)->type().ToString(), "tensor<!quant.uniform<u8:bf16, 34.0:16>>");
  EXPECT_EQ(main.parameter(2)->type().element_type(), ir::ElementType::kU8);
  // Printing the module and importing the text again gives the same types.
  std::string again = "func.func @main(";
  for (size_t i = 0; i < 3; ++i) {
    absl::StrAppend(&again, i ? ", " : "", "%p", i, ": ", main.parameter(i)->type().ToString());
  }
  absl::StrAppend(&again, ") {\n  func.return\n}\n");
  auto reimported = Parse(again);
  ASSERT_NE(reimported, nullptr);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(reimported->entry()->parameter(i)->type(), main.parameter(i)->type()) << i;
  }
  EXPECT_NE(main.parameter(0)->type(), main.parameter(1)->type());
}

TEST(LegalizeQuantizedTest, BadQuantizedTypesAndOpsAreErrors) {
  // Zero point outside the storage range; scale not positive; per-axis scales count.
  for (const char* type : {"!quant.uniform<i8:f32, 0.5:300>", "!quant.uniform<i8:f32, -1.0>",
                           "!quant.uniform<i8:f32:0, {1.0, 2.0, 3.0}>", "!quant.uniform<i8:f32"}) {
    auto module = Import(absl::StrCat("func.func @main(%a: tensor<2x", type,
                                      ">) {\n  func.return\n}\n"));
    EXPECT_FALSE(module.ok()) << type;
  }
  // uniform_dequantize must return the expressed type.
  auto bad = Import(R"(
func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.5>>) -> tensor<2xf16> {
  %0 = stablehlo.uniform_dequantize %a : (tensor<2x!quant.uniform<i8:f32, 0.5>>) -> tensor<2xf16>
  func.return %0 : tensor<2xf16>
})");
  ASSERT_TRUE(bad.ok()) << bad.status();
  absl::Status s = ir::Verify(**bad);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "stablehlo.uniform_dequantize")) << s;
  // add of a quantized and a float tensor.
  auto mixed = Import(R"(
func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.5>>, %b: tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5>> {
  %0 = stablehlo.add %a, %b : (tensor<2x!quant.uniform<i8:f32, 0.5>>, tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5>>
  func.return %0 : tensor<2x!quant.uniform<i8:f32, 0.5>>
})");
  ASSERT_TRUE(mixed.ok()) << mixed.status();
  s = ir::Verify(**mixed);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "stablehlo.add")) << s;
  // A reshape that changes the quantization.
  auto requant = Import(R"(
func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.5>>) -> tensor<1x2x!quant.uniform<i8:f32, 0.25>> {
  %0 = stablehlo.reshape %a : (tensor<2x!quant.uniform<i8:f32, 0.5>>) -> tensor<1x2x!quant.uniform<i8:f32, 0.25>>
  func.return %0 : tensor<1x2x!quant.uniform<i8:f32, 0.25>>
})");
  ASSERT_TRUE(requant.ok()) << requant.status();
  s = ir::Verify(**requant);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "same quantization")) << s;
}

TEST(LegalizeQuantizedTest, OpsWithRegionsAreNotLoweredYet) {
  auto module = Parse(R"(
func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.5>>, %init: tensor<!quant.uniform<i8:f32, 0.5>>) -> tensor<!quant.uniform<i8:f32, 0.5>> {
  %0 = stablehlo.reduce(%a init: %init) applies stablehlo.add across dimensions = [0] : (tensor<2x!quant.uniform<i8:f32, 0.5>>, tensor<!quant.uniform<i8:f32, 0.5>>) -> tensor<!quant.uniform<i8:f32, 0.5>>
  func.return %0 : tensor<!quant.uniform<i8:f32, 0.5>>
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = CreateLegalizeQuantizedPass()->Run(*module);
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(changed.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(changed.status().message(), "stablehlo.reduce")) << changed.status();
}

}  // namespace
}  // namespace ember::passes
