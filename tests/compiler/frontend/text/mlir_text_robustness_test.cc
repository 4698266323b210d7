// Malformed input never crashes the text parser: truncations and random byte flips of a few
// suite files either parse or fail with an error. Bounded so it runs in seconds (also under ASan).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/frontend/text/mlir_text_parser.h"
#include "gtest/gtest.h"

namespace ember::frontend {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(MlirTextRobustnessTest, TruncationsAndByteFlips) {
  const fs::path root = EMBER_STABLEHLO_TESTDATA;
  const std::vector<std::string> files = {
      "interpret/while.mlir", "interpret/reduce.mlir", "interpret/convolution.mlir",
      "interpret/chlo/scan.mlir", "testdata/abs_bfloat16_20_20.mlir",
      "vhlo/stablehlo_legalize_to_vhlo.1_20_0.mlir"};
  std::vector<std::string> inputs;
  for (const std::string& f : files) {
    if (fs::exists(root / f)) inputs.push_back(ReadFile(root / f).substr(0, 20000));
  }
  // A built-in sample keeps the test meaningful without the suite data.
  inputs.push_back(
      "#loc1 = loc(\"m.py\":1:2)\n"
      "module @m {\n  func.func public @main(%arg0: tensor<2xf32> {a = 1 : i32}) -> "
      "(tensor<2xf32>) {\n    %c = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
      "    %0 = stablehlo.add %arg0, %c : tensor<2xf32> loc(#loc1)\n"
      "    %1 = stablehlo.reduce(%0 init: %c) applies stablehlo.add across dimensions = [0] : "
      "(tensor<2xf32>, tensor<2xf32>) -> tensor<f32>\n    return %0 : tensor<2xf32>\n  }\n}\n");
  std::mt19937 rng(12345);
  const char kBytes[] = "%#@^!<>[]{}()\":,=-x?0123456789.abcdefFIN \n\\\x00\xff";
  size_t parsed = 0, failed = 0;
  for (const std::string& text : inputs) {
    for (int i = 0; i < 40; ++i) {
      const size_t cut = rng() % (text.size() + 1);
      auto r = ParseMlirText(std::string_view(text).substr(0, cut), "cut.mlir");
      r.ok() ? ++parsed : ++failed;
    }
    for (int i = 0; i < 150; ++i) {
      std::string mutated = text;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < flips && !mutated.empty(); ++k) {
        mutated[rng() % mutated.size()] = kBytes[rng() % (sizeof(kBytes) - 1)];
      }
      auto r = ParseMlirText(mutated, "flip.mlir");
      if (!r.ok()) {
        EXPECT_NE(r.status().message().find("flip.mlir:"), std::string::npos) << r.status();
      }
      r.ok() ? ++parsed : ++failed;
    }
  }
  std::cout << "robustness: " << parsed << " parsed, " << failed << " rejected\n";
  EXPECT_GT(failed, 0u);
}

}  // namespace
}  // namespace ember::frontend
