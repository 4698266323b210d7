// compiler/export: programs written back as StableHLO text must read back into the same IR
// (parse -> import -> export -> parse -> import gives equal functions), for hand-written
// programs covering every structured attribute and for the StableHLO conformance programs
// (../shared/testdata/stablehlo, skipped with a message when absent). Whether jaxlib's own
// parser accepts the text is checked from JAX: tests/jax/test_compiled_text.py.
#include "compiler/export/stablehlo_text.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "compiler/frontend/import/import.h"
#include "compiler/frontend/text/mlir_text_parser.h"
#include "compiler/ir/verifier.h"
#include "gtest/gtest.h"
#include "tests/compiler/parse_module.h"

namespace ember::compiler {
namespace {

// The module's functions and regions as Module::ToString prints them (its attributes, which the
// export rewrites, left out).
// (in name order: the export writes the entry first).
std::string Functions(const ir::Module& m) {
  const std::string text = m.ToString();
  std::vector<std::string> blocks;
  for (absl::string_view line : absl::StrSplit(text.substr(text.find('\n') + 1), '\n')) {
    if (blocks.empty() || absl::StartsWith(line, "func ") || absl::StartsWith(line, "region ")) {
      blocks.emplace_back();
    }
    absl::StrAppend(&blocks.back(), line, "\n");
  }
  std::sort(blocks.begin(), blocks.end());
  return absl::StrJoin(blocks, "");
}

absl::StatusOr<std::unique_ptr<ir::Module>> Import(const std::string& text) {
  EMBER_ASSIGN_OR_RETURN(auto tree, frontend::ParseMlirText(text, "exported.mlir"));
  EMBER_ASSIGN_OR_RETURN(auto module, frontend::ImportModule(*tree));
  EMBER_RETURN_IF_ERROR(ir::Verify(*module));
  return module;
}

// Exports `m`'s entry and reads it back: the functions must be the same.
void ExpectRoundTrip(const ir::Module& m, const std::string& what) {
  ASSERT_NE(m.entry(), nullptr) << what;
  absl::StatusOr<std::string> text = ExportStablehloText(m, *m.entry(), StablehloModuleHeader{});
  ASSERT_TRUE(text.ok()) << what << ": " << text.status();
  absl::StatusOr<std::unique_ptr<ir::Module>> back = Import(*text);
  ASSERT_TRUE(back.ok()) << what << ": " << back.status() << "\n" << *text;
  EXPECT_EQ(Functions(m), Functions(**back)) << what << "\n" << *text;
}

TEST(StablehloTextExportTest, StructuredAttributesAndRegionsReadBackUnchanged) {
  const std::string program = R"mlir(
module @m {
  func.func public @main(%x: tensor<2x4x4x3xf32>, %k: tensor<3x3x3x8xf32>, %i: tensor<5x1xi32>,
                         %v: tensor<8x6xbf16>, %n: tensor<i32>) -> (tensor<2x4x4x8xf32>,
      tensor<5x6xbf16>, tensor<8x6xbf16>, tensor<8x8xf32>, tensor<2x8xf32>, tensor<i32>,
      tensor<4xi1>, tensor<2xcomplex<f32>>, tensor<8x6xbf16>, tensor<3xi8>) {
    %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
        window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1],
        rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64,
        precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision DEFAULT>]}
        : (tensor<2x4x4x3xf32>, tensor<3x3x3x8xf32>) -> tensor<2x4x4x8xf32>
    %g = "stablehlo.gather"(%v, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1],
        collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,
        slice_sizes = array<i64: 1, 6>, indices_are_sorted = false}
        : (tensor<8x6xbf16>, tensor<5x1xi32>) -> tensor<5x6xbf16>
    %s = "stablehlo.scatter"(%v, %i, %g) ({
      ^bb0(%a: tensor<bf16>, %b: tensor<bf16>):
        %sum = stablehlo.add %a, %b : tensor<bf16>
        stablehlo.return %sum : tensor<bf16>
    }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1],
        inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,
        indices_are_sorted = false, unique_indices = false}
        : (tensor<8x6xbf16>, tensor<5x1xi32>, tensor<5x6xbf16>) -> tensor<8x6xbf16>
    %f = stablehlo.convert %v : (tensor<8x6xbf16>) -> tensor<8x6xf32>
    %d = stablehlo.dot_general %f, %f, contracting_dims = [1] x [1],
        precision = [DEFAULT, HIGH] : (tensor<8x6xf32>, tensor<8x6xf32>) -> tensor<8x8xf32>
    %r = "stablehlo.all_reduce"(%d) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %m = stablehlo.maximum %a, %b : tensor<f32>
        stablehlo.return %m : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
        channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>,
        use_global_device_ids} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %t = "stablehlo.all_to_all"(%r) {split_dimension = 0 : i64, concat_dimension = 1 : i64,
        split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}
        : (tensor<8x8xf32>) -> tensor<4x16xf32>
    %w = stablehlo.slice %t [0:2, 0:8] : (tensor<4x16xf32>) -> tensor<2x8xf32>
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %loop:2 = stablehlo.while(%it = %zero, %acc = %n) : tensor<i32>, tensor<i32>
      cond {
        %lt = stablehlo.compare LT, %it, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %lt : tensor<i1>
      } do {
        %one = stablehlo.constant dense<1> : tensor<i32>
        %next = stablehlo.add %it, %one : tensor<i32>
        %more = stablehlo.multiply %acc, %n : tensor<i32>
        stablehlo.return %next, %more : tensor<i32>, tensor<i32>
      }
    %p = stablehlo.constant dense<[true, false, false, true]> : tensor<4xi1>
    %z = stablehlo.constant dense<[(1.5, -2.0), (0.25, 3.0)]> : tensor<2xcomplex<f32>>
    %pick = "stablehlo.case"(%n) ({
        stablehlo.return %v : tensor<8x6xbf16>
      }, {
        %neg = stablehlo.negate %v : tensor<8x6xbf16>
        stablehlo.return %neg : tensor<8x6xbf16>
      }) : (tensor<i32>) -> tensor<8x6xbf16>
    %b = stablehlo.constant dense<[-3, 7, 127]> : tensor<3xi8>
    return %c, %g, %s, %d, %w, %loop#1, %p, %z, %pick, %b : tensor<2x4x4x8xf32>,
        tensor<5x6xbf16>, tensor<8x6xbf16>, tensor<8x8xf32>, tensor<2x8xf32>, tensor<i32>,
        tensor<4xi1>, tensor<2xcomplex<f32>>, tensor<8x6xbf16>, tensor<3xi8>
  }
}
)mlir";
  std::unique_ptr<ir::Module> m = test_util::Parse(program);
  ASSERT_NE(m, nullptr);
  ExpectRoundTrip(*m, "hand-written program");
}

TEST(StablehloTextExportTest, WindowsSortsCallsAndCustomCallsReadBackUnchanged) {
  const std::string program = R"mlir(
module @m {
  func.func private @twice(%a: tensor<4x6xf32>) -> tensor<4x6xf32> {
    %b = stablehlo.add %a, %a : tensor<4x6xf32>
    return %b : tensor<4x6xf32>
  }
  func.func public @main(%x: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>,
      tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) {
    %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %w = "stablehlo.reduce_window"(%x, %init) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %m = stablehlo.maximum %a, %b : tensor<f32>
        stablehlo.return %m : tensor<f32>
    }) {window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 1, 1>,
        padding = dense<[[0, 1], [1, 1]]> : tensor<2x2xi64>} : (tensor<4x6xf32>, tensor<f32>)
        -> tensor<4x6xf32>
    %s = "stablehlo.sort"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %lt = stablehlo.compare GT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
        stablehlo.return %lt : tensor<i1>
    }) {dimension = 1 : i64, is_stable = true} : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %c = func.call @twice(%s) : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %cc = stablehlo.custom_call @my_target(%c) {backend_config = "opaque\n\"bytes\"",
        api_version = 2 : i32, has_side_effect = true} : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %e = stablehlo.reduce_precision %x, format = e5m10 : tensor<4x6xf32>
    return %w, %s, %c, %cc, %e : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>,
        tensor<4x6xf32>, tensor<4x6xf32>
  }
}
)mlir";
  std::unique_ptr<ir::Module> m = test_util::Parse(program);
  ASSERT_NE(m, nullptr);
  ExpectRoundTrip(*m, "windows, sorts, calls");
}

TEST(StablehloTextExportTest, HeaderCarriesTheShardingsTheFrameworkReads) {
  std::unique_ptr<ir::Module> m = test_util::Parse(R"mlir(
module @m {
  func.func public @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %y = stablehlo.sine %x : tensor<2x3xf32>
    return %y : tensor<2x3xf32>
  }
}
)mlir");
  ASSERT_NE(m, nullptr);
  StablehloModuleHeader header{
      "jit_f", 1, 4, {"{devices=[2,1,2]<=[4] last_tile_dim_replicate}"}, {"{replicated}"}};
  absl::StatusOr<std::string> text = ExportStablehloText(*m, *m->entry(), header);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_TRUE(absl::StrContains(*text, "module @jit_f attributes {mhlo.num_partitions = 4 : i32"))
      << *text;
  EXPECT_TRUE(absl::StrContains(*text, "mhlo.spmd_output_sharding = \"{replicated}\"")) << *text;
  EXPECT_TRUE(absl::StrContains(*text,
                                "%arg0: tensor<2x3xf32> {mhlo.sharding = \"{devices=[2,1,2]<=[4] "
                                "last_tile_dim_replicate}\"}"))
      << *text;
  ASSERT_TRUE(Import(*text).ok());
}

TEST(StablehloTextExportTest, SymbolsThatAreNotBareIdentifiersAreQuoted) {
  // JAX names the module of jit(scatter-add) (x.at[i].add) jit_scatter-add. MLIR's bare
  // identifiers have no '-': unquoted, jaxlib's parser stopped there, the executable had no
  // optimized program, hence no output shardings, and jit's fast path failed with bad_cast.
  std::unique_ptr<ir::Module> m = test_util::Parse(R"mlir(
module @m {
  func.func public @main(%x: tensor<3xf32>) -> tensor<3xf32> {
    %y = stablehlo.negate %x : tensor<3xf32>
    return %y : tensor<3xf32>
  }
}
)mlir");
  ASSERT_NE(m, nullptr);
  StablehloModuleHeader header{"jit_scatter-add", 1, 2, {"{replicated}"}, {"{replicated}"}};
  absl::StatusOr<std::string> text = ExportStablehloText(*m, *m->entry(), header);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_TRUE(absl::StartsWith(*text, "module @\"jit_scatter-add\" attributes")) << *text;
  ASSERT_TRUE(Import(*text).ok());
  header.name = "jit_f.g$1";
  text = ExportStablehloText(*m, *m->entry(), header);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_TRUE(absl::StartsWith(*text, "module @jit_f.g$1 attributes")) << *text;
  ASSERT_TRUE(Import(*text).ok());
}

TEST(StablehloTextExportTest, WhatTheTextCannotSayIsAnErrorNamingTheOp) {
  std::unique_ptr<ir::Module> m = test_util::Parse(R"mlir(
module @m {
  func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %y = stablehlo.exponential %x {result_accuracy = #stablehlo.result_accuracy<atol = 1.0e-5,
        rtol = 0.0, ulps = 2, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>} : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}
)mlir");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<std::string> text = ExportStablehloText(*m, *m->entry(), {});
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(text.status().message(), "stablehlo.exponential")) << text.status();
  EXPECT_TRUE(absl::StrContains(text.status().message(), "result_accuracy")) << text.status();
}

// Every conformance program Ember imports reads back unchanged from its exported text.
TEST(StablehloTextExportTest, ConformanceProgramsReadBackUnchanged) {
  const std::filesystem::path dir = std::filesystem::path(EMBER_CONFORMANCE_DATA_DIR) / "testdata";
  if (!std::filesystem::exists(dir)) {
    GTEST_SKIP() << "no conformance programs at " << dir;
  }
  int imported = 0, exported = 0;
  std::map<std::string, int> not_exported;  // reason -> count
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".mlir") continue;
    std::ifstream in(entry.path());
    std::stringstream buffer;
    buffer << in.rdbuf();
    absl::StatusOr<std::unique_ptr<ir::Module>> m = Import(buffer.str());
    if (!m.ok() || (*m)->entry() == nullptr) continue;  // the conformance test covers imports
    ++imported;
    absl::StatusOr<std::string> text =
        ExportStablehloText(**m, *(*m)->entry(), StablehloModuleHeader{});
    if (!text.ok()) {
      EXPECT_EQ(text.status().code(), absl::StatusCode::kUnimplemented)
          << entry.path() << ": " << text.status();
      ++not_exported[std::string(text.status().message())];
      continue;
    }
    ++exported;
    absl::StatusOr<std::unique_ptr<ir::Module>> back = Import(*text);
    ASSERT_TRUE(back.ok()) << entry.path() << ": " << back.status() << "\n" << *text;
    ASSERT_EQ(Functions(**m), Functions(**back)) << entry.path() << "\n" << *text;
  }
  for (const auto& [reason, count] : not_exported) {
    std::cout << "not exported (" << count << "):" << reason << "\n";
  }
  std::cout << exported << " of " << imported << " conformance programs exported\n";
  EXPECT_GT(imported, 1000);
  EXPECT_TRUE(not_exported.empty());
}

}  // namespace
}  // namespace ember::compiler
