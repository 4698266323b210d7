// The verifier against the StableHLO spec's attribute constraints, through the path a PJRT
// compile takes (MLIR text -> CompileProgram with the host backend): one malformed program per
// constraint (dimension numbers out of range or repeated, window and padding attributes,
// slice bounds, gather/scatter dimension numbers, rng state shapes, bit widths, ...) must be
// refused at compile time with an error that names the op and its location, never accepted
// (to fail or crash when it runs). Most are ir::Verify's; the rng_bit_generator state checks
// are the driver's implementation limits (upstream's verifier allows any state). Valid
// neighbours of the malformed programs must compile.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/driver/compile_program.h"
#include "tests/backend_test_util.h"

namespace ember::compiler {
namespace {

struct Case {
  const char* name;
  const char* params;   // "%a: tensor<2xf32>, ..."
  const char* results;  // "tensor<2xf32>" or "(tensor<2xf32>, tensor<i32>)"
  const char* op;       // the op under test, defining %0 (or %0:N); on line 2 of the program
  const char* ret;      // what @main returns: "%0 : tensor<2xf32>"
  const char* op_name;  // "stablehlo.pad"
  const char* expect;   // a substring of the error (the broken constraint)
};

// Regions as the generic form spells them: ({ region }) for one, ({ first }, { second }) for
// two.
#define ADD_F32_BODY                                            \
  "{\n  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"              \
  "    %s = stablehlo.add %x, %y : tensor<f32>\n"               \
  "    stablehlo.return %s : tensor<f32>\n  }"
#define ADD_I32_BODY                                            \
  "{\n  ^bb0(%x: tensor<i32>, %y: tensor<i32>):\n"              \
  "    %s = stablehlo.add %x, %y : tensor<i32>\n"               \
  "    stablehlo.return %s : tensor<i32>\n  }"
#define GE_F32_BODY                                                                   \
  "{\n  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"                                    \
  "    %s = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>\n" \
  "    stablehlo.return %s : tensor<i1>\n  }"
#define ADD_F32 "(" ADD_F32_BODY ")"
#define LT_F32                                                                        \
  "({\n  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"                                   \
  "    %s = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>\n" \
  "    stablehlo.return %s : tensor<i1>\n  })"
#define SELECT_GE_SCATTER_ADD_F32 "(" GE_F32_BODY ", " ADD_F32_BODY ")"
#define SELECT_GE_SCATTER_ADD_I32 "(" GE_F32_BODY ", " ADD_I32_BODY ")"
#define I64_MAX "9223372036854775807"

std::string Program(const Case& c) {
  return absl::StrCat("func.func @main(", c.params, ") -> ", c.results, " {\n  ", c.op,
                      "\n  return ", c.ret, "\n}\n");
}

absl::Status Compile(const std::string& text) {
  const auto bytes = absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()),
                                               text.size());
  return CompileProgram("mlir", bytes, frontend::CompileOptions{}, test_util::HostTestBackend())
      .status();
}

// Programs next to the malformed ones below that are valid (some at the edges: huge strides,
// empty results), so the malformed ones fail for the constraint they break.
const Case kValid[] = {
    {"pad", "%a: tensor<2x3xf32>, %p: tensor<f32>", "tensor<3x7xf32>",
     "%0 = \"stablehlo.pad\"(%a, %p) {edge_padding_low = array<i64: 1, 0>, edge_padding_high = "
     "array<i64: 0, 2>, interior_padding = array<i64: 0, 1>} : (tensor<2x3xf32>, tensor<f32>) -> "
     "tensor<3x7xf32>",
     "%0 : tensor<3x7xf32>", "", ""},
    {"slice_huge_stride", "%a: tensor<4xf32>", "tensor<1xf32>",
     "%0 = \"stablehlo.slice\"(%a) {start_indices = array<i64: 1>, limit_indices = array<i64: 4>, "
     "strides = array<i64: " I64_MAX ">} : (tensor<4xf32>) -> tensor<1xf32>",
     "%0 : tensor<1xf32>", "", ""},
    {"reduce_window", "%a: tensor<4x6xf32>, %z: tensor<f32>", "tensor<2x3xf32>",
     "%0 = \"stablehlo.reduce_window\"(%a, %z) " ADD_F32
     " {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>} : "
     "(tensor<4x6xf32>, tensor<f32>) -> tensor<2x3xf32>",
     "%0 : tensor<2x3xf32>", "", ""},
    {"select_and_scatter", "%a: tensor<4x6xf32>, %s: tensor<2x3xf32>, %z: tensor<f32>",
     "tensor<4x6xf32>",
     "%0 = \"stablehlo.select_and_scatter\"(%a, %s, %z) " SELECT_GE_SCATTER_ADD_F32
     " {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>, padding = "
     "dense<0> : tensor<2x2xi64>} : (tensor<4x6xf32>, tensor<2x3xf32>, tensor<f32>) -> "
     "tensor<4x6xf32>",
     "%0 : tensor<4x6xf32>", "", ""},
    {"gather", "%a: tensor<5x4xf32>, %i: tensor<3x1xi32>", "tensor<3x4xf32>",
     "%0 = \"stablehlo.gather\"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1], "
     "collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = "
     "array<i64: 1, 4>} : (tensor<5x4xf32>, tensor<3x1xi32>) -> tensor<3x4xf32>",
     "%0 : tensor<3x4xf32>", "", ""},
    {"scatter", "%a: tensor<5x4xf32>, %i: tensor<3x1xi32>, %u: tensor<3x4xf32>",
     "tensor<5x4xf32>",
     "%0 = \"stablehlo.scatter\"(%a, %i, %u) " ADD_F32
     " {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], "
     "inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : "
     "(tensor<5x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<5x4xf32>",
     "%0 : tensor<5x4xf32>", "", ""},
    {"scatter_smaller_window", "%a: tensor<5x4xf32>, %i: tensor<3x1xi32>, %u: tensor<3x2xf32>",
     "tensor<5x4xf32>",
     "%0 = \"stablehlo.scatter\"(%a, %i, %u) " ADD_F32
     " {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], "
     "inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : "
     "(tensor<5x4xf32>, tensor<3x1xi32>, tensor<3x2xf32>) -> tensor<5x4xf32>",
     "%0 : tensor<5x4xf32>", "", ""},
    {"rng_bit_generator", "%s: tensor<2xui64>", "(tensor<2xui64>, tensor<4xui32>)",
     "%0:2 = \"stablehlo.rng_bit_generator\"(%s) {rng_algorithm = #stablehlo<rng_algorithm "
     "THREE_FRY>} : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)",
     "%0#0, %0#1 : tensor<2xui64>, tensor<4xui32>", "", ""},
    {"rng", "%a: tensor<f32>, %b: tensor<f32>, %n: tensor<2xi64>", "tensor<3x4xf32>",
     "%0 = \"stablehlo.rng\"(%a, %b, %n) {rng_distribution = #stablehlo<rng_distribution "
     "NORMAL>} : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<3x4xf32>",
     "%0 : tensor<3x4xf32>", "", ""},
    {"fft_rfft", "%a: tensor<3x8xf32>", "tensor<3x5xcomplex<f32>>",
     "%0 = \"stablehlo.fft\"(%a) {fft_type = #stablehlo<fft_type RFFT>, fft_length = array<i64: "
     "8>} : (tensor<3x8xf32>) -> tensor<3x5xcomplex<f32>>",
     "%0 : tensor<3x5xcomplex<f32>>", "", ""},
    {"conv", "%a: tensor<1x8x8x3xf32>, %k: tensor<3x3x3x4xf32>", "tensor<1x6x6x4xf32>",
     "%0 = \"stablehlo.convolution\"(%a, %k) {dimension_numbers = #stablehlo.conv<raw "
     "input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1, 2], "
     "kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, "
     "kernel_spatial_dimensions = [0, 1], output_batch_dimension = 0, output_feature_dimension = "
     "3, output_spatial_dimensions = [1, 2]>, feature_group_count = 1 : i64, batch_group_count = "
     "1 : i64, window_strides = array<i64: 1, 1>} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) "
     "-> tensor<1x6x6x4xf32>",
     "%0 : tensor<1x6x6x4xf32>", "", ""},
    {"batch_norm_grad",
     "%a: tensor<2x3xf32>, %s: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>, %g: "
     "tensor<2x3xf32>",
     "(tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)",
     "%0:3 = \"stablehlo.batch_norm_grad\"(%a, %s, %m, %v, %g) {epsilon = 1.0e-3 : f32, "
     "feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, "
     "tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)",
     "%0#0, %0#1, %0#2 : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>", "", ""},
};

TEST(VerifierConstraintsTest, ValidNeighboursCompile) {
  for (const Case& c : kValid) {
    const std::string text = Program(c);
    EXPECT_TRUE(Compile(text).ok()) << c.name << ": " << Compile(text) << "\n" << text;
  }
}

// One malformed program per constraint. The comment before a group names the spec's
// constraints it covers.
const Case kMalformed[] = {
    // broadcast_in_dim C2-C5.
    {"broadcast_in_dim_count", "%a: tensor<2x3xf32>", "tensor<2x3x4xf32>",
     "%0 = \"stablehlo.broadcast_in_dim\"(%a) {broadcast_dimensions = array<i64: 0>} : "
     "(tensor<2x3xf32>) -> tensor<2x3x4xf32>",
     "%0 : tensor<2x3x4xf32>", "stablehlo.broadcast_in_dim", "broadcast_dimensions has 1 elements"},
    {"broadcast_in_dim_range", "%a: tensor<2x3xf32>", "tensor<2x3x4xf32>",
     "%0 = \"stablehlo.broadcast_in_dim\"(%a) {broadcast_dimensions = array<i64: 0, 3>} : "
     "(tensor<2x3xf32>) -> tensor<2x3x4xf32>",
     "%0 : tensor<2x3x4xf32>", "stablehlo.broadcast_in_dim", "broadcast_dimensions[1] = 3 is out of range"},
    {"broadcast_in_dim_negative", "%a: tensor<2x3xf32>", "tensor<2x3x4xf32>",
     "%0 = \"stablehlo.broadcast_in_dim\"(%a) {broadcast_dimensions = array<i64: -1, 1>} : "
     "(tensor<2x3xf32>) -> tensor<2x3x4xf32>",
     "%0 : tensor<2x3x4xf32>", "stablehlo.broadcast_in_dim", "broadcast_dimensions[0] = -1 is out of range"},
    {"broadcast_in_dim_repeated", "%a: tensor<3x3xf32>", "tensor<4x3xf32>",
     "%0 = \"stablehlo.broadcast_in_dim\"(%a) {broadcast_dimensions = array<i64: 1, 1>} : "
     "(tensor<3x3xf32>) -> tensor<4x3xf32>",
     "%0 : tensor<4x3xf32>", "stablehlo.broadcast_in_dim", "repeats dimension 1"},
    {"broadcast_in_dim_size", "%a: tensor<2x3xf32>", "tensor<2x4xf32>",
     "%0 = \"stablehlo.broadcast_in_dim\"(%a) {broadcast_dimensions = array<i64: 0, 1>} : "
     "(tensor<2x3xf32>) -> tensor<2x4xf32>",
     "%0 : tensor<2x4xf32>", "stablehlo.broadcast_in_dim", "cannot broadcast"},
    // transpose C2-C4.
    {"transpose_count", "%a: tensor<2x3xf32>", "tensor<3x2xf32>",
     "%0 = \"stablehlo.transpose\"(%a) {permutation = array<i64: 1>} : (tensor<2x3xf32>) -> "
     "tensor<3x2xf32>",
     "%0 : tensor<3x2xf32>", "stablehlo.transpose", "permutation has 1 elements"},
    {"transpose_range", "%a: tensor<2x3xf32>", "tensor<3x2xf32>",
     "%0 = \"stablehlo.transpose\"(%a) {permutation = array<i64: 2, 0>} : (tensor<2x3xf32>) -> "
     "tensor<3x2xf32>",
     "%0 : tensor<3x2xf32>", "stablehlo.transpose", "permutation[0] = 2 is out of range"},
    {"transpose_repeated", "%a: tensor<3x3xf32>", "tensor<3x3xf32>",
     "%0 = \"stablehlo.transpose\"(%a) {permutation = array<i64: 0, 0>} : (tensor<3x3xf32>) -> "
     "tensor<3x3xf32>",
     "%0 : tensor<3x3xf32>", "stablehlo.transpose", "repeats dimension 0"},
    // slice C2-C4.
    {"slice_count", "%a: tensor<4x4xf32>", "tensor<2x4xf32>",
     "%0 = \"stablehlo.slice\"(%a) {start_indices = array<i64: 0>, limit_indices = array<i64: 2, "
     "4>, strides = array<i64: 1, 1>} : (tensor<4x4xf32>) -> tensor<2x4xf32>",
     "%0 : tensor<2x4xf32>", "stablehlo.slice", "start_indices has 1 elements"},
    {"slice_negative_start", "%a: tensor<4xf32>", "tensor<3xf32>",
     "%0 = \"stablehlo.slice\"(%a) {start_indices = array<i64: -1>, limit_indices = array<i64: "
     "2>, strides = array<i64: 1>} : (tensor<4xf32>) -> tensor<3xf32>",
     "%0 : tensor<3xf32>", "stablehlo.slice", "out of bounds"},
    {"slice_start_after_limit", "%a: tensor<4xf32>", "tensor<0xf32>",
     "%0 = \"stablehlo.slice\"(%a) {start_indices = array<i64: 3>, limit_indices = array<i64: "
     "2>, strides = array<i64: 1>} : (tensor<4xf32>) -> tensor<0xf32>",
     "%0 : tensor<0xf32>", "stablehlo.slice", "out of bounds"},
    {"slice_limit_past_end", "%a: tensor<4xf32>", "tensor<5xf32>",
     "%0 = \"stablehlo.slice\"(%a) {start_indices = array<i64: 0>, limit_indices = array<i64: "
     "5>, strides = array<i64: 1>} : (tensor<4xf32>) -> tensor<5xf32>",
     "%0 : tensor<5xf32>", "stablehlo.slice", "out of bounds"},
    {"slice_zero_stride", "%a: tensor<4xf32>", "tensor<4xf32>",
     "%0 = \"stablehlo.slice\"(%a) {start_indices = array<i64: 0>, limit_indices = array<i64: "
     "4>, strides = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>",
     "%0 : tensor<4xf32>", "stablehlo.slice", "strides[0] = 0 must be positive"},
    // concatenate C1-C4.
    {"concatenate_dimension", "%a: tensor<2x3xf32>, %b: tensor<2x3xf32>", "tensor<4x3xf32>",
     "%0 = \"stablehlo.concatenate\"(%a, %b) {dimension = 2 : i64} : (tensor<2x3xf32>, "
     "tensor<2x3xf32>) -> tensor<4x3xf32>",
     "%0 : tensor<4x3xf32>", "stablehlo.concatenate", "dimension[0] = 2 is out of range"},
    {"concatenate_negative", "%a: tensor<2x3xf32>, %b: tensor<2x3xf32>", "tensor<4x3xf32>",
     "%0 = \"stablehlo.concatenate\"(%a, %b) {dimension = -1 : i64} : (tensor<2x3xf32>, "
     "tensor<2x3xf32>) -> tensor<4x3xf32>",
     "%0 : tensor<4x3xf32>", "stablehlo.concatenate", "dimension[0] = -1 is out of range"},
    {"concatenate_shapes", "%a: tensor<2x3xf32>, %b: tensor<2x4xf32>", "tensor<4x3xf32>",
     "%0 = \"stablehlo.concatenate\"(%a, %b) {dimension = 0 : i64} : (tensor<2x3xf32>, "
     "tensor<2x4xf32>) -> tensor<4x3xf32>",
     "%0 : tensor<4x3xf32>", "stablehlo.concatenate", "operand 1 dimension 1 is 4"},
    // pad C2-C4, and sizes past int64.
    {"pad_count", "%a: tensor<2x3xf32>, %p: tensor<f32>", "tensor<3x3xf32>",
     "%0 = \"stablehlo.pad\"(%a, %p) {edge_padding_low = array<i64: 1>, edge_padding_high = "
     "array<i64: 0, 0>, interior_padding = array<i64: 0, 0>} : (tensor<2x3xf32>, tensor<f32>) -> "
     "tensor<3x3xf32>",
     "%0 : tensor<3x3xf32>", "stablehlo.pad", "edge_padding_low has 1 elements"},
    {"pad_negative_interior", "%a: tensor<4xf32>, %p: tensor<f32>", "tensor<1xf32>",
     "%0 = \"stablehlo.pad\"(%a, %p) {edge_padding_low = array<i64: 0>, edge_padding_high = "
     "array<i64: 0>, interior_padding = array<i64: -1>} : (tensor<4xf32>, tensor<f32>) -> "
     "tensor<1xf32>",
     "%0 : tensor<1xf32>", "stablehlo.pad", "interior_padding[0] = -1 is negative"},
    {"pad_negative_size", "%a: tensor<2xf32>, %p: tensor<f32>", "tensor<0xf32>",
     "%0 = \"stablehlo.pad\"(%a, %p) {edge_padding_low = array<i64: -5>, edge_padding_high = "
     "array<i64: 0>, interior_padding = array<i64: 0>} : (tensor<2xf32>, tensor<f32>) -> "
     "tensor<0xf32>",
     "%0 : tensor<0xf32>", "stablehlo.pad", "negative size"},
    {"pad_overflow", "%a: tensor<2xf32>, %p: tensor<f32>", "tensor<2xf32>",
     "%0 = \"stablehlo.pad\"(%a, %p) {edge_padding_low = array<i64: " I64_MAX ">, "
     "edge_padding_high = array<i64: " I64_MAX ">, interior_padding = array<i64: 0>} : "
     "(tensor<2xf32>, tensor<f32>) -> tensor<2xf32>",
     "%0 : tensor<2xf32>", "stablehlo.pad", "overflows"},
    {"pad_interior_overflow", "%a: tensor<3xf32>, %p: tensor<f32>", "tensor<2xf32>",
     "%0 = \"stablehlo.pad\"(%a, %p) {edge_padding_low = array<i64: 0>, edge_padding_high = "
     "array<i64: 0>, interior_padding = array<i64: " I64_MAX ">} : (tensor<3xf32>, "
     "tensor<f32>) -> tensor<2xf32>",
     "%0 : tensor<2xf32>", "stablehlo.pad", "overflows"},
    // iota C1.
    {"iota_dimension", "", "tensor<2x3xi32>",
     "%0 = \"stablehlo.iota\"() {iota_dimension = 2 : i64} : () -> tensor<2x3xi32>",
     "%0 : tensor<2x3xi32>", "stablehlo.iota", "iota_dimension[0] = 2 is out of range"},
    {"iota_negative", "", "tensor<2x3xi32>",
     "%0 = \"stablehlo.iota\"() {iota_dimension = -1 : i64} : () -> tensor<2x3xi32>",
     "%0 : tensor<2x3xi32>", "stablehlo.iota", "iota_dimension[0] = -1 is out of range"},
    // reverse C2-C3.
    {"reverse_range", "%a: tensor<2x3xf32>", "tensor<2x3xf32>",
     "%0 = \"stablehlo.reverse\"(%a) {dimensions = array<i64: 2>} : (tensor<2x3xf32>) -> "
     "tensor<2x3xf32>",
     "%0 : tensor<2x3xf32>", "stablehlo.reverse", "dimensions[0] = 2 is out of range"},
    {"reverse_repeated", "%a: tensor<2x3xf32>", "tensor<2x3xf32>",
     "%0 = \"stablehlo.reverse\"(%a) {dimensions = array<i64: 1, 1>} : (tensor<2x3xf32>) -> "
     "tensor<2x3xf32>",
     "%0 : tensor<2x3xf32>", "stablehlo.reverse", "repeats dimension 1"},
    // broadcast (XLA's): sizes are dimension sizes.
    {"broadcast_negative_size", "%a: tensor<2xf32>", "tensor<2xf32>",
     "%0 = \"stablehlo.broadcast\"(%a) {broadcast_sizes = array<i64: -1>} : (tensor<2xf32>) -> "
     "tensor<2xf32>",
     "%0 : tensor<2xf32>", "stablehlo.broadcast", "broadcast_sizes[0] = -1 is negative"},
    // dynamic_slice C2-C4, dynamic_update_slice C3-C5.
    {"dynamic_slice_sizes_range", "%a: tensor<4x4xf32>, %i: tensor<i32>, %j: tensor<i32>",
     "tensor<5x4xf32>",
     "%0 = \"stablehlo.dynamic_slice\"(%a, %i, %j) {slice_sizes = array<i64: 5, 4>} : "
     "(tensor<4x4xf32>, tensor<i32>, tensor<i32>) -> tensor<5x4xf32>",
     "%0 : tensor<5x4xf32>", "stablehlo.dynamic_slice", "slice_sizes[0] = 5 is out of range"},
    {"dynamic_slice_sizes_negative", "%a: tensor<4xf32>, %i: tensor<i32>", "tensor<1xf32>",
     "%0 = \"stablehlo.dynamic_slice\"(%a, %i) {slice_sizes = array<i64: -1>} : "
     "(tensor<4xf32>, tensor<i32>) -> tensor<1xf32>",
     "%0 : tensor<1xf32>", "stablehlo.dynamic_slice", "slice_sizes[0] = -1 is out of range"},
    {"dynamic_slice_sizes_count", "%a: tensor<4x4xf32>, %i: tensor<i32>, %j: tensor<i32>",
     "tensor<2xf32>",
     "%0 = \"stablehlo.dynamic_slice\"(%a, %i, %j) {slice_sizes = array<i64: 2>} : "
     "(tensor<4x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2xf32>",
     "%0 : tensor<2xf32>", "stablehlo.dynamic_slice", "slice_sizes has 1 elements"},
    {"dynamic_slice_index_count", "%a: tensor<4x4xf32>, %i: tensor<i32>", "tensor<2x2xf32>",
     "%0 = \"stablehlo.dynamic_slice\"(%a, %i) {slice_sizes = array<i64: 2, 2>} : "
     "(tensor<4x4xf32>, tensor<i32>) -> tensor<2x2xf32>",
     "%0 : tensor<2x2xf32>", "stablehlo.dynamic_slice", "expects 2 start indices"},
    {"dynamic_slice_index_types", "%a: tensor<4x4xf32>, %i: tensor<i32>, %j: tensor<i64>",
     "tensor<2x2xf32>",
     "%0 = \"stablehlo.dynamic_slice\"(%a, %i, %j) {slice_sizes = array<i64: 2, 2>} : "
     "(tensor<4x4xf32>, tensor<i32>, tensor<i64>) -> tensor<2x2xf32>",
     "%0 : tensor<2x2xf32>", "stablehlo.dynamic_slice", "start indices have different element types"},
    {"dynamic_update_slice_larger", "%a: tensor<4xf32>, %u: tensor<5xf32>, %i: tensor<i32>",
     "tensor<4xf32>",
     "%0 = \"stablehlo.dynamic_update_slice\"(%a, %u, %i) : (tensor<4xf32>, tensor<5xf32>, "
     "tensor<i32>) -> tensor<4xf32>",
     "%0 : tensor<4xf32>", "stablehlo.dynamic_update_slice", "update dimension 0 of size 5"},
    // get_dimension_size C1.
    {"get_dimension_size_range", "%a: tensor<2x3xf32>", "tensor<i32>",
     "%0 = \"stablehlo.get_dimension_size\"(%a) {dimension = 2 : i64} : (tensor<2x3xf32>) -> "
     "tensor<i32>",
     "%0 : tensor<i32>", "stablehlo.get_dimension_size", "dimension[0] = 2 is out of range"},
    // reduce C4-C5.
    {"reduce_range", "%a: tensor<2x3xf32>, %z: tensor<f32>", "tensor<2xf32>",
     "%0 = \"stablehlo.reduce\"(%a, %z) " ADD_F32
     " {dimensions = array<i64: 2>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>",
     "%0 : tensor<2xf32>", "stablehlo.reduce", "dimensions[0] = 2 is out of range"},
    {"reduce_repeated", "%a: tensor<2x3xf32>, %z: tensor<f32>", "tensor<2xf32>",
     "%0 = \"stablehlo.reduce\"(%a, %z) " ADD_F32
     " {dimensions = array<i64: 1, 1>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>",
     "%0 : tensor<2xf32>", "stablehlo.reduce", "repeats dimension 1"},
    // reduce_window C4-C12, and sizes past int64.
    {"reduce_window_count", "%a: tensor<4x6xf32>, %z: tensor<f32>", "tensor<3x6xf32>",
     "%0 = \"stablehlo.reduce_window\"(%a, %z) " ADD_F32
     " {window_dimensions = array<i64: 2>} : (tensor<4x6xf32>, tensor<f32>) -> tensor<3x6xf32>",
     "%0 : tensor<3x6xf32>", "stablehlo.reduce_window", "window_dimensions has 1 elements"},
    {"reduce_window_zero_window", "%a: tensor<4x6xf32>, %z: tensor<f32>", "tensor<5x6xf32>",
     "%0 = \"stablehlo.reduce_window\"(%a, %z) " ADD_F32
     " {window_dimensions = array<i64: 0, 1>} : (tensor<4x6xf32>, tensor<f32>) -> "
     "tensor<5x6xf32>",
     "%0 : tensor<5x6xf32>", "stablehlo.reduce_window", "window_dimensions[0] must be positive"},
    {"reduce_window_zero_stride", "%a: tensor<4x6xf32>, %z: tensor<f32>", "tensor<3x6xf32>",
     "%0 = \"stablehlo.reduce_window\"(%a, %z) " ADD_F32
     " {window_dimensions = array<i64: 2, 1>, window_strides = array<i64: 1, 0>} : "
     "(tensor<4x6xf32>, tensor<f32>) -> tensor<3x6xf32>",
     "%0 : tensor<3x6xf32>", "stablehlo.reduce_window", "window_strides[1] must be positive"},
    {"reduce_window_base_dilation", "%a: tensor<4x6xf32>, %z: tensor<f32>", "tensor<3x6xf32>",
     "%0 = \"stablehlo.reduce_window\"(%a, %z) " ADD_F32
     " {window_dimensions = array<i64: 2, 1>, base_dilations = array<i64: 0, 1>} : "
     "(tensor<4x6xf32>, tensor<f32>) -> tensor<3x6xf32>",
     "%0 : tensor<3x6xf32>", "stablehlo.reduce_window", "base_dilations[0] must be positive"},
    {"reduce_window_window_dilation", "%a: tensor<4x6xf32>, %z: tensor<f32>", "tensor<3x6xf32>",
     "%0 = \"stablehlo.reduce_window\"(%a, %z) " ADD_F32
     " {window_dimensions = array<i64: 2, 1>, window_dilations = array<i64: -1, 1>} : "
     "(tensor<4x6xf32>, tensor<f32>) -> tensor<3x6xf32>",
     "%0 : tensor<3x6xf32>", "stablehlo.reduce_window", "window_dilations[0] must be positive"},
    {"reduce_window_padding_shape", "%a: tensor<4x6xf32>, %z: tensor<f32>", "tensor<3x6xf32>",
     "%0 = \"stablehlo.reduce_window\"(%a, %z) " ADD_F32
     " {window_dimensions = array<i64: 2, 1>, padding = dense<0> : tensor<3x2xi64>} : "
     "(tensor<4x6xf32>, tensor<f32>) -> tensor<3x6xf32>",
     "%0 : tensor<3x6xf32>", "stablehlo.reduce_window", "padding has 6 elements"},
    {"reduce_window_dilation_overflow", "%a: tensor<4x6xf32>, %z: tensor<f32>", "tensor<0x6xf32>",
     "%0 = \"stablehlo.reduce_window\"(%a, %z) " ADD_F32
     " {window_dimensions = array<i64: 3, 1>, window_dilations = array<i64: " I64_MAX ", 1>} : "
     "(tensor<4x6xf32>, tensor<f32>) -> tensor<0x6xf32>",
     "%0 : tensor<0x6xf32>", "stablehlo.reduce_window", "overflows"},
    {"reduce_window_padding_overflow", "%a: tensor<4x6xf32>, %z: tensor<f32>", "tensor<3x6xf32>",
     "%0 = \"stablehlo.reduce_window\"(%a, %z) " ADD_F32
     " {window_dimensions = array<i64: 2, 1>, padding = dense<[[" I64_MAX ", " I64_MAX "], [0, "
     "0]]> : tensor<2x2xi64>} : (tensor<4x6xf32>, tensor<f32>) -> tensor<3x6xf32>",
     "%0 : tensor<3x6xf32>", "stablehlo.reduce_window", "overflows"},
    // select_and_scatter C1-C8.
    {"select_and_scatter_window_count", "%a: tensor<4x6xf32>, %s: tensor<2x3xf32>, %z: tensor<f32>",
     "tensor<4x6xf32>",
     "%0 = \"stablehlo.select_and_scatter\"(%a, %s, %z) " SELECT_GE_SCATTER_ADD_F32
     " {window_dimensions = array<i64: 2>, window_strides = array<i64: 2, 2>} : "
     "(tensor<4x6xf32>, tensor<2x3xf32>, tensor<f32>) -> tensor<4x6xf32>",
     "%0 : tensor<4x6xf32>", "stablehlo.select_and_scatter", "window_dimensions has 1 elements"},
    {"select_and_scatter_zero_window", "%a: tensor<4x6xf32>, %s: tensor<2x3xf32>, %z: tensor<f32>",
     "tensor<4x6xf32>",
     "%0 = \"stablehlo.select_and_scatter\"(%a, %s, %z) " SELECT_GE_SCATTER_ADD_F32
     " {window_dimensions = array<i64: 0, 2>, window_strides = array<i64: 2, 2>} : "
     "(tensor<4x6xf32>, tensor<2x3xf32>, tensor<f32>) -> tensor<4x6xf32>",
     "%0 : tensor<4x6xf32>", "stablehlo.select_and_scatter", "window_dimensions[0] must be positive"},
    {"select_and_scatter_zero_stride", "%a: tensor<4x6xf32>, %s: tensor<2x3xf32>, %z: tensor<f32>",
     "tensor<4x6xf32>",
     "%0 = \"stablehlo.select_and_scatter\"(%a, %s, %z) " SELECT_GE_SCATTER_ADD_F32
     " {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 0>} : "
     "(tensor<4x6xf32>, tensor<2x3xf32>, tensor<f32>) -> tensor<4x6xf32>",
     "%0 : tensor<4x6xf32>", "stablehlo.select_and_scatter", "window_strides[1] must be positive"},
    {"select_and_scatter_padding", "%a: tensor<4x6xf32>, %s: tensor<2x3xf32>, %z: tensor<f32>",
     "tensor<4x6xf32>",
     "%0 = \"stablehlo.select_and_scatter\"(%a, %s, %z) " SELECT_GE_SCATTER_ADD_F32
     " {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>, padding = "
     "dense<0> : tensor<1x2xi64>} : (tensor<4x6xf32>, tensor<2x3xf32>, tensor<f32>) -> "
     "tensor<4x6xf32>",
     "%0 : tensor<4x6xf32>", "stablehlo.select_and_scatter", "padding has 2 elements"},
    {"select_and_scatter_source_shape", "%a: tensor<4x6xf32>, %s: tensor<2x2xf32>, %z: tensor<f32>",
     "tensor<4x6xf32>",
     "%0 = \"stablehlo.select_and_scatter\"(%a, %s, %z) " SELECT_GE_SCATTER_ADD_F32
     " {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>} : "
     "(tensor<4x6xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x6xf32>",
     "%0 : tensor<4x6xf32>", "stablehlo.select_and_scatter", "source shape [2, 2] does not match"},
    {"select_and_scatter_source_type", "%a: tensor<4x6xf32>, %s: tensor<2x3xi32>, %z: tensor<f32>",
     "tensor<4x6xf32>",
     "%0 = \"stablehlo.select_and_scatter\"(%a, %s, %z) " SELECT_GE_SCATTER_ADD_F32
     " {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>} : "
     "(tensor<4x6xf32>, tensor<2x3xi32>, tensor<f32>) -> tensor<4x6xf32>",
     "%0 : tensor<4x6xf32>", "stablehlo.select_and_scatter", "source element type"},
    {"select_and_scatter_init_type", "%a: tensor<4x6xf32>, %s: tensor<2x3xf32>, %z: tensor<i32>",
     "tensor<4x6xi32>",
     "%0 = \"stablehlo.select_and_scatter\"(%a, %s, %z) " SELECT_GE_SCATTER_ADD_I32
     " {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>} : "
     "(tensor<4x6xf32>, tensor<2x3xf32>, tensor<i32>) -> tensor<4x6xi32>",
     "%0 : tensor<4x6xi32>", "stablehlo.select_and_scatter", "init_value element type"},
    // sort C1, C4.
    {"sort_dimension", "%a: tensor<2x3xf32>", "tensor<2x3xf32>",
     "%0 = \"stablehlo.sort\"(%a) " LT_F32
     " {dimension = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>",
     "%0 : tensor<2x3xf32>", "stablehlo.sort", "dimension = 2 is out of range"},
    {"sort_dimension_negative", "%a: tensor<2x3xf32>", "tensor<2x3xf32>",
     "%0 = \"stablehlo.sort\"(%a) " LT_F32
     " {dimension = -3 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>",
     "%0 : tensor<2x3xf32>", "stablehlo.sort", "dimension = -3 is out of range"},
    // dot_general C1-C10.
    {"dot_general_contracting_range", "%a: tensor<2x3xf32>, %b: tensor<3x4xf32>",
     "tensor<2x4xf32>",
     "%0 = \"stablehlo.dot_general\"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<"
     "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>} : (tensor<2x3xf32>, "
     "tensor<3x4xf32>) -> tensor<2x4xf32>",
     "%0 : tensor<2x4xf32>", "stablehlo.dot_general", "lhs_contracting_dimensions[0] = 2 is out of range"},
    {"dot_general_batching_count", "%a: tensor<2x3xf32>, %b: tensor<2x3xf32>", "tensor<2xf32>",
     "%0 = \"stablehlo.dot_general\"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<"
     "lhs_batching_dimensions = [0], lhs_contracting_dimensions = [1], "
     "rhs_contracting_dimensions = [1]>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2xf32>",
     "%0 : tensor<2xf32>", "stablehlo.dot_general", "have different sizes"},
    {"dot_general_repeated", "%a: tensor<3x3xf32>, %b: tensor<3x3xf32>", "tensor<3xf32>",
     "%0 = \"stablehlo.dot_general\"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<"
     "lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = "
     "[0], rhs_contracting_dimensions = [1]>} : (tensor<3x3xf32>, tensor<3x3xf32>) -> "
     "tensor<3xf32>",
     "%0 : tensor<3xf32>", "stablehlo.dot_general", "repeats dimension 0"},
    {"dot_general_contracting_sizes", "%a: tensor<2x3xf32>, %b: tensor<4x4xf32>",
     "tensor<2x4xf32>",
     "%0 = \"stablehlo.dot_general\"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<"
     "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x3xf32>, "
     "tensor<4x4xf32>) -> tensor<2x4xf32>",
     "%0 : tensor<2x4xf32>", "stablehlo.dot_general", "contracting dimension sizes differ"},
    {"dot_general_batching_sizes", "%a: tensor<2x3xf32>, %b: tensor<5x3xf32>", "tensor<2xf32>",
     "%0 = \"stablehlo.dot_general\"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<"
     "lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = "
     "[1], rhs_contracting_dimensions = [1]>} : (tensor<2x3xf32>, tensor<5x3xf32>) -> "
     "tensor<2xf32>",
     "%0 : tensor<2xf32>", "stablehlo.dot_general", "batching dimension sizes differ"},
    // convolution C1-C23 (dimension numbers as `raw` fields, so any value can be written).
#define CONV_DIMS(ib, if_, is, kif, kof, ks, ob, of, os)                                     \
  "dimension_numbers = #stablehlo.conv<raw input_batch_dimension = " ib                      \
  ", input_feature_dimension = " if_ ", input_spatial_dimensions = [" is                     \
  "], kernel_input_feature_dimension = " kif ", kernel_output_feature_dimension = " kof       \
  ", kernel_spatial_dimensions = [" ks "], output_batch_dimension = " ob                     \
  ", output_feature_dimension = " of ", output_spatial_dimensions = [" os "]>"
#define CONV_OK CONV_DIMS("0", "3", "1, 2", "2", "3", "0, 1", "0", "3", "1, 2")
#define CONV(attrs)                                                                          \
  "%0 = \"stablehlo.convolution\"(%a, %k) {" attrs "} : (tensor<1x8x8x3xf32>, "             \
  "tensor<3x3x3x4xf32>) -> tensor<1x6x6x4xf32>"
#define CONV_PARAMS "%a: tensor<1x8x8x3xf32>, %k: tensor<3x3x3x4xf32>"
    {"conv_input_spatial_range", CONV_PARAMS, "tensor<1x6x6x4xf32>",
     CONV(CONV_DIMS("0", "3", "1, 4", "2", "3", "0, 1", "0", "3", "1, 2")),
     "%0 : tensor<1x6x6x4xf32>", "stablehlo.convolution", "input dimensions[3] = 4 is out of range"},
    {"conv_kernel_repeated", CONV_PARAMS, "tensor<1x6x6x4xf32>",
     CONV(CONV_DIMS("0", "3", "1, 2", "2", "3", "0, 0", "0", "3", "1, 2")),
     "%0 : tensor<1x6x6x4xf32>", "stablehlo.convolution", "kernel dimensions"},
    {"conv_output_repeated", CONV_PARAMS, "tensor<1x6x6x4xf32>",
     CONV(CONV_DIMS("0", "3", "1, 2", "2", "3", "0, 1", "0", "0", "1, 2")),
     "%0 : tensor<1x6x6x4xf32>", "stablehlo.convolution", "output dimensions"},
    {"conv_spatial_count", CONV_PARAMS, "tensor<1x6x6x4xf32>",
     CONV(CONV_DIMS("0", "3", "1", "2", "3", "0, 1", "0", "3", "1, 2")),
     "%0 : tensor<1x6x6x4xf32>", "stablehlo.convolution", "input_spatial_dimensions has 1 elements"},
    {"conv_zero_stride", CONV_PARAMS, "tensor<1x6x6x4xf32>",
     CONV(CONV_OK ", window_strides = array<i64: 1, 0>"), "%0 : tensor<1x6x6x4xf32>",
     "stablehlo.convolution", "window_strides[1] = 0 must be positive"},
    {"conv_stride_count", CONV_PARAMS, "tensor<1x6x6x4xf32>",
     CONV(CONV_OK ", window_strides = array<i64: 1>"), "%0 : tensor<1x6x6x4xf32>",
     "stablehlo.convolution", "window_strides has 1 elements"},
    {"conv_lhs_dilation", CONV_PARAMS, "tensor<1x6x6x4xf32>",
     CONV(CONV_OK ", lhs_dilation = array<i64: 0, 1>"), "%0 : tensor<1x6x6x4xf32>",
     "stablehlo.convolution", "lhs_dilation[0] = 0 must be positive"},
    {"conv_rhs_dilation", CONV_PARAMS, "tensor<1x6x6x4xf32>",
     CONV(CONV_OK ", rhs_dilation = array<i64: 1, -2>"), "%0 : tensor<1x6x6x4xf32>",
     "stablehlo.convolution", "rhs_dilation[1] = -2 must be positive"},
    {"conv_padding_shape", CONV_PARAMS, "tensor<1x6x6x4xf32>",
     CONV(CONV_OK ", padding = dense<0> : tensor<1x2xi64>"), "%0 : tensor<1x6x6x4xf32>",
     "stablehlo.convolution", "padding has 2 elements"},
    {"conv_window_reversal", CONV_PARAMS, "tensor<1x6x6x4xf32>",
     CONV(CONV_OK ", window_reversal = array<i1: true>"), "%0 : tensor<1x6x6x4xf32>",
     "stablehlo.convolution", "window_reversal has 1 elements"},
    {"conv_feature_group_zero", CONV_PARAMS, "tensor<1x6x6x4xf32>",
     CONV(CONV_OK ", feature_group_count = 0 : i64"), "%0 : tensor<1x6x6x4xf32>",
     "stablehlo.convolution", "feature_group_count = 0 must be positive"},
    {"conv_batch_group_zero", CONV_PARAMS, "tensor<1x6x6x4xf32>",
     CONV(CONV_OK ", batch_group_count = -1 : i64"), "%0 : tensor<1x6x6x4xf32>",
     "stablehlo.convolution", "batch_group_count = -1 must be positive"},
    {"conv_feature_group_divides", CONV_PARAMS, "tensor<1x6x6x4xf32>",
     CONV(CONV_OK ", feature_group_count = 2 : i64"), "%0 : tensor<1x6x6x4xf32>",
     "stablehlo.convolution", "not a multiple of feature_group_count 2"},
    {"conv_batch_group_divides", CONV_PARAMS, "tensor<1x6x6x4xf32>",
     CONV(CONV_OK ", batch_group_count = 2 : i64"), "%0 : tensor<1x6x6x4xf32>",
     "stablehlo.convolution", "not a multiple of batch_group_count 2"},
    {"conv_input_features", "%a: tensor<1x8x8x3xf32>, %k: tensor<3x3x2x4xf32>",
     "tensor<1x6x6x4xf32>",
     "%0 = \"stablehlo.convolution\"(%a, %k) {" CONV_OK "} : (tensor<1x8x8x3xf32>, "
     "tensor<3x3x2x4xf32>) -> tensor<1x6x6x4xf32>",
     "%0 : tensor<1x6x6x4xf32>", "stablehlo.convolution", "differs from kernel input feature size 2"},
    {"conv_dilation_overflow", CONV_PARAMS, "tensor<1x6x6x4xf32>",
     CONV(CONV_OK ", rhs_dilation = array<i64: " I64_MAX ", 1>"), "%0 : tensor<1x6x6x4xf32>",
     "stablehlo.convolution", "overflows"},
    {"conv_padding_overflow", CONV_PARAMS, "tensor<1x6x6x4xf32>",
     CONV(CONV_OK ", padding = dense<[[" I64_MAX ", 1], [0, 0]]> : tensor<2x2xi64>"),
     "%0 : tensor<1x6x6x4xf32>", "stablehlo.convolution", "overflows"},
    // gather C1-C21.
#define GATHER(dims, sizes)                                                                  \
  "%0 = \"stablehlo.gather\"(%a, %i) {dimension_numbers = #stablehlo.gather<" dims           \
  ">, slice_sizes = array<i64: " sizes ">} : (tensor<5x4xf32>, tensor<3x1xi32>) -> "         \
  "tensor<3x4xf32>"
#define GATHER_PARAMS "%a: tensor<5x4xf32>, %i: tensor<3x1xi32>"
    {"gather_offset_dims_range", GATHER_PARAMS, "tensor<3x4xf32>",
     GATHER("offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], "
            "index_vector_dim = 1", "1, 4"),
     "%0 : tensor<3x4xf32>", "stablehlo.gather", "offset_dims[0] = 2 is out of range"},
    {"gather_collapsed_range", GATHER_PARAMS, "tensor<3x4xf32>",
     GATHER("offset_dims = [1], collapsed_slice_dims = [2], start_index_map = [0], "
            "index_vector_dim = 1", "1, 4"),
     "%0 : tensor<3x4xf32>", "stablehlo.gather", "collapsed_slice_dims[0] = 2 is out of range"},
    {"gather_collapsed_repeated", GATHER_PARAMS, "tensor<3x4xf32>",
     GATHER("offset_dims = [1], collapsed_slice_dims = [0, 0], start_index_map = [0], "
            "index_vector_dim = 1", "1, 4"),
     "%0 : tensor<3x4xf32>", "stablehlo.gather", "repeats dimension 0"},
    {"gather_start_index_map_count", GATHER_PARAMS, "tensor<3x4xf32>",
     GATHER("offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0, 1], "
            "index_vector_dim = 1", "1, 4"),
     "%0 : tensor<3x4xf32>", "stablehlo.gather", "start_index_map has 2 elements"},
    {"gather_start_index_map_range", GATHER_PARAMS, "tensor<3x4xf32>",
     GATHER("offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [3], "
            "index_vector_dim = 1", "1, 4"),
     "%0 : tensor<3x4xf32>", "stablehlo.gather", "start_index_map[0] = 3 is out of range"},
    {"gather_index_vector_dim", GATHER_PARAMS, "tensor<3x4xf32>",
     GATHER("offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], "
            "index_vector_dim = 3", "1, 4"),
     "%0 : tensor<3x4xf32>", "stablehlo.gather", "index_vector_dim = 3 is out of range"},
    {"gather_slice_sizes_count", GATHER_PARAMS, "tensor<3x4xf32>",
     GATHER("offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], "
            "index_vector_dim = 1", "1"),
     "%0 : tensor<3x4xf32>", "stablehlo.gather", "slice_sizes has 1 elements"},
    {"gather_slice_sizes_range", GATHER_PARAMS, "tensor<3x4xf32>",
     GATHER("offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], "
            "index_vector_dim = 1", "1, 5"),
     "%0 : tensor<3x4xf32>", "stablehlo.gather", "slice_sizes[1] = 5 is out of range"},
    {"gather_collapsed_size", GATHER_PARAMS, "tensor<3x4xf32>",
     GATHER("offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], "
            "index_vector_dim = 1", "2, 4"),
     "%0 : tensor<3x4xf32>", "stablehlo.gather", "of a collapsed dimension must be at most 1"},
    {"gather_batching_sizes", "%a: tensor<2x5x4xf32>, %i: tensor<3x1xi32>", "tensor<3x4xf32>",
     "%0 = \"stablehlo.gather\"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims = "
     "[1], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims "
     "= [0], start_index_map = [1], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1, 4>} : "
     "(tensor<2x5x4xf32>, tensor<3x1xi32>) -> tensor<3x4xf32>",
     "%0 : tensor<3x4xf32>", "stablehlo.gather", "batching dimension sizes differ"},
    {"gather_batching_index_vector_dim", "%a: tensor<3x5x4xf32>, %i: tensor<3x1xi32>",
     "tensor<3x4xf32>",
     "%0 = \"stablehlo.gather\"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims = "
     "[1], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims "
     "= [1], start_index_map = [1], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1, 4>} : "
     "(tensor<3x5x4xf32>, tensor<3x1xi32>) -> tensor<3x4xf32>",
     "%0 : tensor<3x4xf32>", "stablehlo.gather", "contains index_vector_dim"},
    {"gather_start_index_map_batching", "%a: tensor<3x5x4xf32>, %i: tensor<3x1xi32>",
     "tensor<3x4xf32>",
     "%0 = \"stablehlo.gather\"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims = "
     "[1], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims "
     "= [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1, 4>} : "
     "(tensor<3x5x4xf32>, tensor<3x1xi32>) -> tensor<3x4xf32>",
     "%0 : tensor<3x4xf32>", "stablehlo.gather", "both contain dimension 0"},
    // scatter C1-C22.
#define SCATTER(dims, updates)                                                               \
  "%0 = \"stablehlo.scatter\"(%a, %i, %u) " ADD_F32                                          \
  " {scatter_dimension_numbers = #stablehlo.scatter<" dims ">} : (tensor<5x4xf32>, "         \
  "tensor<3x1xi32>, " updates ") -> tensor<5x4xf32>"
#define SCATTER_DIMS                                                                         \
  "update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], " \
  "index_vector_dim = 1"
    {"scatter_window_dims_range", "%a: tensor<5x4xf32>, %i: tensor<3x1xi32>, %u: tensor<3x4xf32>",
     "tensor<5x4xf32>",
     SCATTER("update_window_dims = [2], inserted_window_dims = [0], "
             "scatter_dims_to_operand_dims = [0], index_vector_dim = 1", "tensor<3x4xf32>"),
     "%0 : tensor<5x4xf32>", "stablehlo.scatter", "update_window_dims[0] = 2 is out of range"},
    {"scatter_inserted_range", "%a: tensor<5x4xf32>, %i: tensor<3x1xi32>, %u: tensor<3x4xf32>",
     "tensor<5x4xf32>",
     SCATTER("update_window_dims = [1], inserted_window_dims = [2], "
             "scatter_dims_to_operand_dims = [0], index_vector_dim = 1", "tensor<3x4xf32>"),
     "%0 : tensor<5x4xf32>", "stablehlo.scatter", "inserted_window_dims[0] = 2 is out of range"},
    {"scatter_to_operand_range", "%a: tensor<5x4xf32>, %i: tensor<3x1xi32>, %u: tensor<3x4xf32>",
     "tensor<5x4xf32>",
     SCATTER("update_window_dims = [1], inserted_window_dims = [0], "
             "scatter_dims_to_operand_dims = [2], index_vector_dim = 1", "tensor<3x4xf32>"),
     "%0 : tensor<5x4xf32>", "stablehlo.scatter", "scatter_dims_to_operand_dims[0] = 2 is out of range"},
    {"scatter_index_vector_dim", "%a: tensor<5x4xf32>, %i: tensor<3x1xi32>, %u: tensor<3x4xf32>",
     "tensor<5x4xf32>",
     SCATTER("update_window_dims = [1], inserted_window_dims = [0], "
             "scatter_dims_to_operand_dims = [0], index_vector_dim = 3", "tensor<3x4xf32>"),
     "%0 : tensor<5x4xf32>", "stablehlo.scatter", "index_vector_dim = 3 is out of range"},
    {"scatter_window_too_large", "%a: tensor<5x4xf32>, %i: tensor<3x1xi32>, %u: tensor<3x6xf32>",
     "tensor<5x4xf32>", SCATTER(SCATTER_DIMS, "tensor<3x6xf32>"), "%0 : tensor<5x4xf32>",
     "stablehlo.scatter", "update window dimension 1 of size 6"},
    {"scatter_update_scatter_size", "%a: tensor<5x4xf32>, %i: tensor<3x1xi32>, %u: tensor<7x4xf32>",
     "tensor<5x4xf32>", SCATTER(SCATTER_DIMS, "tensor<7x4xf32>"), "%0 : tensor<5x4xf32>",
     "stablehlo.scatter", "update scatter dimension 0 of size 7"},
    {"scatter_update_type", "%a: tensor<5x4xf32>, %i: tensor<3x1xi32>, %u: tensor<3x4xi32>",
     "tensor<5x4xf32>", SCATTER(SCATTER_DIMS, "tensor<3x4xi32>"), "%0 : tensor<5x4xf32>",
     "stablehlo.scatter", "updates element type"},
    {"scatter_batching_range", "%a: tensor<3x5x4xf32>, %i: tensor<3x1xi32>, %u: tensor<3x4xf32>",
     "tensor<3x5x4xf32>",
     "%0 = \"stablehlo.scatter\"(%a, %i, %u) " ADD_F32
     " {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], "
     "inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = "
     "[2], scatter_dims_to_operand_dims = [1], index_vector_dim = 1>} : (tensor<3x5x4xf32>, "
     "tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<3x5x4xf32>",
     "%0 : tensor<3x5x4xf32>", "stablehlo.scatter", "scatter_indices_batching_dims[0] = 2 is out of range"},
    {"scatter_batching_index_vector_dim",
     "%a: tensor<3x5x4xf32>, %i: tensor<3x1xi32>, %u: tensor<3x4xf32>", "tensor<3x5x4xf32>",
     "%0 = \"stablehlo.scatter\"(%a, %i, %u) " ADD_F32
     " {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], "
     "inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = "
     "[1], scatter_dims_to_operand_dims = [1], index_vector_dim = 1>} : (tensor<3x5x4xf32>, "
     "tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<3x5x4xf32>",
     "%0 : tensor<3x5x4xf32>", "stablehlo.scatter", "contains index_vector_dim"},
    {"scatter_batching_sizes", "%a: tensor<2x5x4xf32>, %i: tensor<3x1xi32>, %u: tensor<3x4xf32>",
     "tensor<2x5x4xf32>",
     "%0 = \"stablehlo.scatter\"(%a, %i, %u) " ADD_F32
     " {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], "
     "inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = "
     "[0], scatter_dims_to_operand_dims = [1], index_vector_dim = 1>} : (tensor<2x5x4xf32>, "
     "tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<2x5x4xf32>",
     "%0 : tensor<2x5x4xf32>", "stablehlo.scatter", "batching dimension sizes differ"},
    {"scatter_to_operand_batching", "%a: tensor<3x5x4xf32>, %i: tensor<3x1xi32>, %u: tensor<3x4xf32>",
     "tensor<3x5x4xf32>",
     "%0 = \"stablehlo.scatter\"(%a, %i, %u) " ADD_F32
     " {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], "
     "inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = "
     "[0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<3x5x4xf32>, "
     "tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<3x5x4xf32>",
     "%0 : tensor<3x5x4xf32>", "stablehlo.scatter", "both contain dimension 0"},
    // bitcast_convert C1-C2.
    {"bitcast_convert_widths", "%a: tensor<3xf32>", "tensor<f64>",
     "%0 = \"stablehlo.bitcast_convert\"(%a) : (tensor<3xf32>) -> tensor<f64>", "%0 : tensor<f64>",
     "stablehlo.bitcast_convert", "cannot be bitcast"},
    {"bitcast_convert_shape", "%a: tensor<2xf64>", "tensor<2xf32>",
     "%0 = \"stablehlo.bitcast_convert\"(%a) : (tensor<2xf64>) -> tensor<2xf32>",
     "%0 : tensor<2xf32>", "stablehlo.bitcast_convert", "does not match the inferred shape [2, 2]"},
    {"bitcast_convert_complex", "%a: tensor<2xcomplex<f32>>", "tensor<2xi64>",
     "%0 = \"stablehlo.bitcast_convert\"(%a) : (tensor<2xcomplex<f32>>) -> tensor<2xi64>",
     "%0 : tensor<2xi64>", "stablehlo.bitcast_convert", "complex"},
    // rng_bit_generator C1-C2 (and the state's type: a 1-D ui64 tensor).
    {"rng_bit_generator_state_rank", "%s: tensor<ui64>", "(tensor<ui64>, tensor<4xui32>)",
     "%0:2 = \"stablehlo.rng_bit_generator\"(%s) {rng_algorithm = #stablehlo<rng_algorithm "
     "DEFAULT>} : (tensor<ui64>) -> (tensor<ui64>, tensor<4xui32>)",
     "%0#0, %0#1 : tensor<ui64>, tensor<4xui32>", "stablehlo.rng_bit_generator",
     "initial_state must be a 1-D ui64 tensor"},
    {"rng_bit_generator_state_type", "%s: tensor<2xi32>", "(tensor<2xi32>, tensor<4xui32>)",
     "%0:2 = \"stablehlo.rng_bit_generator\"(%s) {rng_algorithm = #stablehlo<rng_algorithm "
     "DEFAULT>} : (tensor<2xi32>) -> (tensor<2xi32>, tensor<4xui32>)",
     "%0#0, %0#1 : tensor<2xi32>, tensor<4xui32>", "stablehlo.rng_bit_generator",
     "initial_state must be a 1-D ui64 tensor"},
    {"rng_bit_generator_three_fry_size", "%s: tensor<3xui64>", "(tensor<3xui64>, tensor<4xui32>)",
     "%0:2 = \"stablehlo.rng_bit_generator\"(%s) {rng_algorithm = #stablehlo<rng_algorithm "
     "THREE_FRY>} : (tensor<3xui64>) -> (tensor<3xui64>, tensor<4xui32>)",
     "%0#0, %0#1 : tensor<3xui64>, tensor<4xui32>", "stablehlo.rng_bit_generator",
     "THREE_FRY takes a state of 2"},
    {"rng_bit_generator_philox_size", "%s: tensor<4xui64>", "(tensor<4xui64>, tensor<4xui32>)",
     "%0:2 = \"stablehlo.rng_bit_generator\"(%s) {rng_algorithm = #stablehlo<rng_algorithm "
     "PHILOX>} : (tensor<4xui64>) -> (tensor<4xui64>, tensor<4xui32>)",
     "%0#0, %0#1 : tensor<4xui64>, tensor<4xui32>", "stablehlo.rng_bit_generator",
     "PHILOX takes a state of 2 or 3"},
    {"rng_bit_generator_output_type", "%s: tensor<2xui64>", "(tensor<2xui64>, tensor<4xi1>)",
     "%0:2 = \"stablehlo.rng_bit_generator\"(%s) {rng_algorithm = #stablehlo<rng_algorithm "
     "THREE_FRY>} : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xi1>)",
     "%0#0, %0#1 : tensor<2xui64>, tensor<4xi1>", "stablehlo.rng_bit_generator",
     "output must be an integer or float tensor"},
    // rng C1-C3.
    {"rng_bounds_rank", "%a: tensor<2xf32>, %b: tensor<f32>, %n: tensor<2xi64>", "tensor<3x4xf32>",
     "%0 = \"stablehlo.rng\"(%a, %b, %n) {rng_distribution = #stablehlo<rng_distribution "
     "UNIFORM>} : (tensor<2xf32>, tensor<f32>, tensor<2xi64>) -> tensor<3x4xf32>",
     "%0 : tensor<3x4xf32>", "stablehlo.rng", "a must be a 0-d tensor"},
    {"rng_normal_integer", "%a: tensor<i32>, %b: tensor<i32>, %n: tensor<2xi64>", "tensor<3x4xi32>",
     "%0 = \"stablehlo.rng\"(%a, %b, %n) {rng_distribution = #stablehlo<rng_distribution "
     "NORMAL>} : (tensor<i32>, tensor<i32>, tensor<2xi64>) -> tensor<3x4xi32>",
     "%0 : tensor<3x4xi32>", "stablehlo.rng", "NORMAL"},
    {"rng_shape_rank", "%a: tensor<f32>, %b: tensor<f32>, %n: tensor<3xi64>", "tensor<3x4xf32>",
     "%0 = \"stablehlo.rng\"(%a, %b, %n) {rng_distribution = #stablehlo<rng_distribution "
     "UNIFORM>} : (tensor<f32>, tensor<f32>, tensor<3xi64>) -> tensor<3x4xf32>",
     "%0 : tensor<3x4xf32>", "stablehlo.rng", "shape has 3 elements"},
    {"rng_element_type", "%a: tensor<f64>, %b: tensor<f32>, %n: tensor<2xi64>", "tensor<3x4xf32>",
     "%0 = \"stablehlo.rng\"(%a, %b, %n) {rng_distribution = #stablehlo<rng_distribution "
     "UNIFORM>} : (tensor<f64>, tensor<f32>, tensor<2xi64>) -> tensor<3x4xf32>",
     "%0 : tensor<3x4xf32>", "stablehlo.rng", "element type"},
    // fft C1-C6.
    {"fft_length_count", "%a: tensor<2x3x4x5xcomplex<f32>>", "tensor<2x3x4x5xcomplex<f32>>",
     "%0 = \"stablehlo.fft\"(%a) {fft_type = #stablehlo<fft_type FFT>, fft_length = array<i64: "
     "2, 3, 4, 5>} : (tensor<2x3x4x5xcomplex<f32>>) -> tensor<2x3x4x5xcomplex<f32>>",
     "%0 : tensor<2x3x4x5xcomplex<f32>>", "stablehlo.fft", "fft_length must have 1 to 3"},
    {"fft_length_mismatch", "%a: tensor<3x8xcomplex<f32>>", "tensor<3x8xcomplex<f32>>",
     "%0 = \"stablehlo.fft\"(%a) {fft_type = #stablehlo<fft_type FFT>, fft_length = array<i64: "
     "16>} : (tensor<3x8xcomplex<f32>>) -> tensor<3x8xcomplex<f32>>",
     "%0 : tensor<3x8xcomplex<f32>>", "stablehlo.fft", "fft_length"},
    {"fft_rfft_leading_length", "%a: tensor<3x8xf32>", "tensor<3x5xcomplex<f32>>",
     "%0 = \"stablehlo.fft\"(%a) {fft_type = #stablehlo<fft_type RFFT>, fft_length = array<i64: "
     "4, 8>} : (tensor<3x8xf32>) -> tensor<3x5xcomplex<f32>>",
     "%0 : tensor<3x5xcomplex<f32>>", "stablehlo.fft", "fft_length"},
    {"fft_irfft_operand", "%a: tensor<3x7xcomplex<f32>>", "tensor<3x8xf32>",
     "%0 = \"stablehlo.fft\"(%a) {fft_type = #stablehlo<fft_type IRFFT>, fft_length = array<i64: "
     "8>} : (tensor<3x7xcomplex<f32>>) -> tensor<3x8xf32>",
     "%0 : tensor<3x8xf32>", "stablehlo.fft", "fft_length"},
    // batch_norm_* C1-C3 and operand/result counts.
    {"batch_norm_feature_index", "%a: tensor<2x3xf32>, %s: tensor<3xf32>, %o: tensor<3xf32>",
     "(tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)",
     "%0:3 = \"stablehlo.batch_norm_training\"(%a, %s, %o) {epsilon = 1.0e-3 : f32, "
     "feature_index = 2 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> "
     "(tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)",
     "%0#0, %0#1, %0#2 : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>",
     "stablehlo.batch_norm_training", "feature_index[0] = 2 is out of range"},
    {"batch_norm_training_results", "%a: tensor<2x3xf32>, %s: tensor<3xf32>, %o: tensor<3xf32>",
     "tensor<2x3xf32>",
     "%0 = \"stablehlo.batch_norm_training\"(%a, %s, %o) {epsilon = 1.0e-3 : f32, "
     "feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> "
     "tensor<2x3xf32>",
     "%0 : tensor<2x3xf32>", "stablehlo.batch_norm_training", "expects 3 results"},
    {"batch_norm_inference_operands", "%a: tensor<2x3xf32>, %s: tensor<3xf32>, %o: tensor<3xf32>",
     "tensor<2x3xf32>",
     "%0 = \"stablehlo.batch_norm_inference\"(%a, %s, %o) {epsilon = 1.0e-3 : f32, "
     "feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> "
     "tensor<2x3xf32>",
     "%0 : tensor<2x3xf32>", "stablehlo.batch_norm_inference", "expects 5 operands"},
    {"batch_norm_grad_output",
     "%a: tensor<2x3xf32>, %s: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>, %g: "
     "tensor<2x4xf32>",
     "(tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)",
     "%0:3 = \"stablehlo.batch_norm_grad\"(%a, %s, %m, %v, %g) {epsilon = 1.0e-3 : f32, "
     "feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, "
     "tensor<2x4xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)",
     "%0#0, %0#1, %0#2 : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>",
     "stablehlo.batch_norm_grad", "operand 4 must be tensor<2x3xf32>"},
    // Element types the spec gives these ops.
    {"cholesky_integer", "%a: tensor<3x3xi32>", "tensor<3x3xi32>",
     "%0 = \"stablehlo.cholesky\"(%a) {lower = true} : (tensor<3x3xi32>) -> tensor<3x3xi32>",
     "%0 : tensor<3x3xi32>", "stablehlo.cholesky", "element type i32 is not supported"},
    {"triangular_solve_integer", "%a: tensor<3x3xi32>, %b: tensor<3x2xi32>", "tensor<3x2xi32>",
     "%0 = \"stablehlo.triangular_solve\"(%a, %b) {left_side = true, lower = true, "
     "transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = false} : "
     "(tensor<3x3xi32>, tensor<3x2xi32>) -> tensor<3x2xi32>",
     "%0 : tensor<3x2xi32>", "stablehlo.triangular_solve", "element type i32 is not supported"},
    {"compare_totalorder_integer", "%a: tensor<2xi32>, %b: tensor<2xi32>", "tensor<2xi1>",
     "%0 = \"stablehlo.compare\"(%a, %b) {comparison_direction = #stablehlo<comparison_direction "
     "LT>, compare_type = #stablehlo<comparison_type TOTALORDER>} : (tensor<2xi32>, "
     "tensor<2xi32>) -> tensor<2xi1>",
     "%0 : tensor<2xi1>", "stablehlo.compare", "compare_type TOTALORDER does not apply"},
    {"reduce_precision_exponent", "%a: tensor<2xf32>", "tensor<2xf32>",
     "%0 = \"stablehlo.reduce_precision\"(%a) {exponent_bits = 0 : i32, mantissa_bits = 2 : "
     "i32} : (tensor<2xf32>) -> tensor<2xf32>",
     "%0 : tensor<2xf32>", "stablehlo.reduce_precision", "exponent_bits = 0 must be at least 1"},
    {"torch_index_select_dim", "%a: tensor<4x3xf32>, %i: tensor<2xi32>", "tensor<2x3xf32>",
     "%0 = \"stablehlo.torch_index_select\"(%a, %i) {dim = 2 : i64, batch_dims = 0 : i64} : "
     "(tensor<4x3xf32>, tensor<2xi32>) -> tensor<2x3xf32>",
     "%0 : tensor<2x3xf32>", "stablehlo.torch_index_select", "dim = 2 is out of range"},
    {"torch_index_select_result", "%a: tensor<4x3xf32>, %i: tensor<2xi32>", "tensor<4x3xf32>",
     "%0 = \"stablehlo.torch_index_select\"(%a, %i) {dim = 0 : i64, batch_dims = 0 : i64} : "
     "(tensor<4x3xf32>, tensor<2xi32>) -> tensor<4x3xf32>",
     "%0 : tensor<4x3xf32>", "stablehlo.torch_index_select", "does not match the inferred"},
};

TEST(VerifierConstraintsTest, MalformedProgramsFailToCompileNamingTheOp) {
  int missing = 0;
  for (const Case& c : kMalformed) {
    const std::string text = Program(c);
    const absl::Status s = Compile(text);
    if (s.ok()) {
      ++missing;
      ADD_FAILURE() << c.name << ": compiled, expected \"" << c.expect << "\"\n" << text;
      continue;
    }
    const std::string message(s.message());
    // The op is on line 2 of the program, and its location is where its text starts.
    const std::string where = absl::StrCat(c.op_name, " at <program>:2:3: ");
    EXPECT_TRUE(absl::StrContains(message, where)) << c.name << ": " << message;
    EXPECT_TRUE(absl::StrContains(message, c.expect))
        << c.name << ": expected \"" << c.expect << "\" in: " << message;
  }
  EXPECT_EQ(missing, 0);
}

}  // namespace
}  // namespace ember::compiler
