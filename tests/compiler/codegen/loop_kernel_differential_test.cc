// The code generator against the reference evaluator: every elementwise op the elemental
// emitter takes, over every element type it takes, compiled by the host target (LLVM ORC JIT)
// as a loop kernel and run on random inputs mixed with special values (NaN, +-0, +-inf,
// denormals, INT_MIN / -1, shift amounts >= the width). Results must match bit for bit; the
// only latitude is a NaN's payload (any NaN matches any NaN), which the evaluator's double
// arithmetic does not define either. Conversions the emitter refuses (f64 -> bf16/f16 and wide
// integers -> bf16/f16, which would round twice) are listed and must be refused. Then fused
// chains with index ops (broadcast, transpose, slice, reshape, iota), scalar constants, and the
// per-executable cache of identical kernels. Transcendentals: bit for bit where the emitter goes
// through the C library in double as the evaluator does, within a few ulp for the polynomial
// cores. Reduction kernels (row folds with fused producers, stored producers and epilogues):
// bit for bit except reassociated f32/f64 sums and products, checked to a relative bound.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "compiler/codegen/elemental_support.h"
#include "compiler/codegen/host_kernel_compiler.h"
#include "compiler/codegen/row_segments.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/passes/rewrite.h"
#include "tests/compiler/codegen/differential_harness.h"
#include "tests/compiler/codegen/differential_inputs.h"
#include "tests/compiler/parse_module.h"

namespace ember::codegen {
namespace {

using ir::ElementType;

using namespace test_inputs;   // NOLINT: the shared input makers
using namespace test_harness;  // NOLINT: the shared comparison with the evaluator

constexpr int64_t kN = 700;  // more than specials^2 for every type, and not a vector multiple

std::string Program(const std::vector<ElementType>& in, ElementType out, const std::string& body,
                    int64_t n = kN) {
  std::string params;
  for (size_t k = 0; k < in.size(); ++k) {
    absl::StrAppend(&params, k ? ", " : "", "%p", k, ": tensor<", n, "x", Mlir(in[k]), ">");
  }
  return absl::StrCat("func.func @main(", params, ") -> tensor<", n, "x", Mlir(out), "> {\n",
                      body, "\n  return %r : tensor<", n, "x", Mlir(out), ">\n}\n");
}

struct OpCase {
  const char* op;
  int arity;
  bool floats, signed_ints, unsigned_ints, pred;
};
// The evaluator's domain of each op (eval_binary.cc, eval_unary.cc).
constexpr OpCase kOps[] = {
    {"add", 2, true, true, true, true},
    {"subtract", 2, true, true, true, false},
    {"multiply", 2, true, true, true, true},
    {"divide", 2, true, true, true, false},
    {"remainder", 2, true, true, true, false},
    {"maximum", 2, true, true, true, true},
    {"minimum", 2, true, true, true, true},
    {"and", 2, false, true, true, true},
    {"or", 2, false, true, true, true},
    {"xor", 2, false, true, true, true},
    {"shift_left", 2, false, true, true, false},
    {"shift_right_logical", 2, false, true, true, false},
    {"shift_right_arithmetic", 2, false, true, true, false},
    {"negate", 1, true, true, true, false},
    {"abs", 1, true, true, false, false},
    {"sign", 1, true, true, false, false},
    {"not", 1, false, true, true, true},
    {"popcnt", 1, false, true, true, false},
    {"count_leading_zeros", 1, false, true, true, false},
    {"sqrt", 1, true, false, false, false},
    {"floor", 1, true, false, false, false},
    {"ceil", 1, true, false, false, false},
    {"round_nearest_even", 1, true, false, false, false},
    {"round_nearest_afz", 1, true, false, false, false},
};

bool InDomain(const OpCase& op, ElementType t) {
  if (t == ElementType::kPred) return op.pred;
  if (IsF(t)) return op.floats;
  return ir::IsSignedInteger(t) ? op.signed_ints : op.unsigned_ints;
}

TEST(LoopKernelDifferentialTest, ElementwiseOpsOverEveryType) {
  ASSERT_TRUE(HostCodegenBuilt());
  int cases = 0;
  for (const OpCase& op : kOps) {
    for (const TypeInfo& info : kTypes) {
      if (!InDomain(op, info.type)) continue;
      SCOPED_TRACE(absl::StrCat(op.op, " ", info.mlir));
      const std::string t = absl::StrCat("tensor<", kN, "x", info.mlir, ">");
      const std::string body =
          op.arity == 2 ? absl::StrCat("  %r = stablehlo.", op.op, " %p0, %p1 : ", t)
                        : absl::StrCat("  %r = stablehlo.", op.op, " %p0 : ", t);
      std::vector<ElementType> types(op.arity, info.type);
      KernelRun run = CompareWithEvaluator(Program(types, info.type, body),
                                           MakeInputs(types, kN, 17 + cases));
      EXPECT_TRUE(run.compiled) << run.refusal;
      EXPECT_EQ(run.mismatches, 0);
      ++cases;
    }
  }
  EXPECT_GT(cases, 150);
}

TEST(LoopKernelDifferentialTest, CompareSelectClampIsFinite) {
  int cases = 0;
  for (const TypeInfo& info : kTypes) {
    const ElementType et = info.type;
    const std::string t = absl::StrCat("tensor<", kN, "x", info.mlir, ">");
    const std::string p = absl::StrCat("tensor<", kN, "xi1>");
    const char* ct = IsF(et) ? "FLOAT" : ir::IsSignedInteger(et) ? "SIGNED" : "UNSIGNED";
    for (const char* dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
      SCOPED_TRACE(absl::StrCat("compare ", dir, " ", info.mlir));
      const std::string body = absl::StrCat("  %r = stablehlo.compare ", dir, ", %p0, %p1, ", ct,
                                            " : (", t, ", ", t, ") -> ", p);
      KernelRun run = CompareWithEvaluator(Program({et, et}, ElementType::kPred, body),
                                           MakeInputs({et, et}, kN, 100 + cases++));
      EXPECT_TRUE(run.compiled) << run.refusal;
      EXPECT_EQ(run.mismatches, 0);
      if (!IsF(et)) continue;
      // The total order of the bit patterns (jnp.sort's comparator): -0 below +0, NaNs at the
      // ends. f16 is refused in loop kernels (their loads' conversion to f32 may quiet a
      // signalling NaN); sort comparators keep them (sort_thunk_test).
      SCOPED_TRACE("TOTALORDER");
      const std::string total = absl::StrCat("  %r = stablehlo.compare ", dir, ", %p0, %p1, ",
                                             "TOTALORDER : (", t, ", ", t, ") -> ", p);
      KernelRun ordered = CompareWithEvaluator(Program({et, et}, ElementType::kPred, total),
                                               MakeInputs({et, et}, kN, 100 + cases++));
      EXPECT_EQ(ordered.compiled, et != ElementType::kF16) << ordered.refusal;
      EXPECT_EQ(ordered.mismatches, 0);
    }
    {
      SCOPED_TRACE(absl::StrCat("select ", info.mlir));
      const std::string body =
          absl::StrCat("  %r = stablehlo.select %p0, %p1, %p2 : ", p, ", ", t);
      KernelRun run = CompareWithEvaluator(
          Program({ElementType::kPred, et, et}, et, body),
          MakeInputs({ElementType::kPred, et, et}, kN, 100 + cases++));
      EXPECT_TRUE(run.compiled) << run.refusal;
      EXPECT_EQ(run.mismatches, 0);
    }
    if (et != ElementType::kPred) {
      SCOPED_TRACE(absl::StrCat("clamp ", info.mlir));
      const std::string body = absl::StrCat("  %r = stablehlo.clamp %p0, %p1, %p2 : ", t);
      KernelRun run = CompareWithEvaluator(Program({et, et, et}, et, body),
                                           MakeInputs({et, et, et}, kN, 100 + cases++));
      EXPECT_TRUE(run.compiled) << run.refusal;
      EXPECT_EQ(run.mismatches, 0);
    }
    if (IsF(et)) {
      SCOPED_TRACE(absl::StrCat("is_finite ", info.mlir));
      const std::string body =
          absl::StrCat("  %r = stablehlo.is_finite %p0 : (", t, ") -> ", p);
      KernelRun run = CompareWithEvaluator(Program({et}, ElementType::kPred, body),
                                           MakeInputs({et}, kN, 100 + cases++));
      EXPECT_TRUE(run.compiled) << run.refusal;
      EXPECT_EQ(run.mismatches, 0);
    }
  }
}

// Conversions the emitter refuses: they would round twice through f32.
TEST(LoopKernelDifferentialTest, ConvertBetweenEveryPairOfTypes) {
  // Every pair, wide integers and f64 to bf16/f16 included (rounded once, through double rounded
  // to odd: random 64-bit inputs are mostly past 2^53, and the ties below sit exactly between
  // two bf16/f16 values after a first rounding to double would have moved them).
  int cases = 0;
  for (const TypeInfo& from : kTypes) {
    for (const TypeInfo& to : kTypes) {
      SCOPED_TRACE(absl::StrCat("convert ", from.mlir, " -> ", to.mlir));
      const std::string body = absl::StrCat("  %r = stablehlo.convert %p0 : (tensor<", kN, "x",
                                            from.mlir, ">) -> tensor<", kN, "x", to.mlir, ">");
      std::vector<ir::Literal> inputs = MakeInputs({from.type}, kN, 300 + cases++);
      if (from.type == ElementType::kS64 || from.type == ElementType::kU64) {
        // 2^62 + 2^54 + 1 and its neighbours: a bf16/f16 tie plus a sticky bit past double's.
        const uint64_t ties[] = {(uint64_t{1} << 62) + (uint64_t{1} << 54) + 1,
                                 (uint64_t{1} << 62) + (uint64_t{1} << 54),
                                 (uint64_t{1} << 62) + (uint64_t{1} << 54) - 1,
                                 (uint64_t{1} << 60) + (uint64_t{1} << 51) + 1};
        for (size_t i = 0; i < 4; ++i) {
          std::memcpy(inputs[0].mutable_bytes().data() + (kN - 1 - i) * 8, &ties[i], 8);
        }
      }
      KernelRun run = CompareWithEvaluator(Program({from.type}, to.type, body), std::move(inputs));
      EXPECT_TRUE(run.compiled) << run.refusal;
      EXPECT_EQ(run.mismatches, 0);
    }
  }
}

TEST(LoopKernelDifferentialTest, BitcastConvertBetweenTypesOfOneWidth) {
  // jax.random's bits -> floats, and jnp.signbit/copysign's bf16/f16 -> i16. Bitcasts to bf16/f16
  // are refused: those compute in f32 and canonicalize NaNs when stored, which would change the
  // bits a bitcast keeps. From them to integers the stored bits are read as they are.
  int cases = 0, refused = 0;
  auto narrow = [](ElementType t) { return t == ElementType::kBF16 || t == ElementType::kF16; };
  for (const TypeInfo& from : kTypes) {
    for (const TypeInfo& to : kTypes) {
      if (from.type == ElementType::kPred || to.type == ElementType::kPred ||
          ir::BitWidth(from.type) != ir::BitWidth(to.type)) {
        continue;
      }
      SCOPED_TRACE(absl::StrCat("bitcast_convert ", from.mlir, " -> ", to.mlir));
      const std::string body =
          absl::StrCat("  %r = stablehlo.bitcast_convert %p0 : (tensor<", kN, "x", from.mlir,
                       ">) -> tensor<", kN, "x", to.mlir, ">");
      std::vector<ir::Literal> inputs = MakeInputs({from.type}, kN, 700 + cases++);
      if (narrow(from.type)) {
        // NaNs with payloads, signalling and quiet, of both signs, and infinities.
        const uint16_t specials[] = {0x7F81, 0xFF81, 0x7FC1, 0xFFFF, 0x7C01, 0xFE01, 0x7D00,
                                     0x7C00, 0xFC00, 0x7F80, 0xFF80, 0x8000};
        for (size_t i = 0; i < std::size(specials); ++i) {
          std::memcpy(inputs[0].mutable_bytes().data() + 2 * i, &specials[i], 2);
        }
      }
      KernelRun run = CompareWithEvaluator(Program({from.type}, to.type, body), std::move(inputs));
      if (narrow(to.type)) {
        EXPECT_FALSE(run.compiled);
        ++refused;
        continue;
      }
      EXPECT_TRUE(run.compiled) << run.refusal;
      EXPECT_EQ(run.mismatches, 0);
    }
  }
  EXPECT_GE(cases, 12);  // every 32- and 64-bit pair at least
  EXPECT_GT(refused, 0);
  // A computed bf16/f16 operand: the bits of the value rounded to its type, as the evaluator
  // stores it. (Which NaN arithmetic makes, its sign included, depends on operand order, for
  // f32 as for these: the inputs here are finite, their sums overflow to inf at most.)
  for (const char* t : {"bf16", "f16"}) {
    SCOPED_TRACE(absl::StrCat("bitcast_convert of a computed ", t));
    const ElementType et = std::string(t) == "bf16" ? ElementType::kBF16 : ElementType::kF16;
    const std::string x = absl::StrCat("tensor<", kN, "x", t, ">");
    const std::string body = absl::StrCat(
        "  %s = stablehlo.add %p0, %p1 : ", x, "\n  %n = stablehlo.negate %s : ", x,
        "\n  %r = stablehlo.bitcast_convert %n : (", x, ") -> tensor<", kN, "xi16>");
    std::vector<ir::Literal> inputs = MakeInputs({et, et}, kN, 790);
    const uint16_t exponent = et == ElementType::kBF16 ? 0x7F80 : 0x7C00;
    const uint16_t one = et == ElementType::kBF16 ? 0x3F80 : 0x3C00;
    for (ir::Literal& in : inputs) {
      for (int64_t i = 0; i < kN; ++i) {
        uint16_t bits;
        std::memcpy(&bits, in.bytes().data() + 2 * i, 2);
        if ((bits & exponent) == exponent) std::memcpy(in.mutable_bytes().data() + 2 * i, &one, 2);
      }
    }
    KernelRun run =
        CompareWithEvaluator(Program({et, et}, ElementType::kS16, body), std::move(inputs));
    EXPECT_TRUE(run.compiled) << run.refusal;
    EXPECT_EQ(run.mismatches, 0);
  }
}

TEST(LoopKernelDifferentialTest, FusedChainWithIndexOpsAndScalarConstants) {
  // softmax-like and layernorm-like bodies: broadcasts of rows and columns, a transpose, a
  // strided slice, a reshape, an iota and scalar constants, in f32 and bf16.
  for (const char* ty : {"f32", "bf16", "f64"}) {
    SCOPED_TRACE(ty);
    const std::string text = absl::StrReplaceAll(R"(
func.func @main(%x: tensor<6x40x@T@>, %row: tensor<6x@T@>, %col: tensor<40x@T@>, %w: tensor<40x6x@T@>, %big: tensor<12x82x@T@>) -> (tensor<6x40x@T@>, tensor<6x40xi1>) {
  %c = stablehlo.constant dense<0.75> : tensor<@T@>
  %b1 = stablehlo.broadcast_in_dim %row, dims = [0] : (tensor<6x@T@>) -> tensor<6x40x@T@>
  %b2 = stablehlo.broadcast_in_dim %col, dims = [1] : (tensor<40x@T@>) -> tensor<6x40x@T@>
  %bc = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<@T@>) -> tensor<6x40x@T@>
  %t = stablehlo.transpose %w, dims = [1, 0] : (tensor<40x6x@T@>) -> tensor<6x40x@T@>
  %s = stablehlo.slice %big [1:12:2, 2:82:2] : (tensor<12x82x@T@>) -> tensor<6x40x@T@>
  %sp = stablehlo.reshape %x : (tensor<6x40x@T@>) -> tensor<240x@T@>
  %sr = stablehlo.reshape %sp : (tensor<240x@T@>) -> tensor<6x40x@T@>
  %i = stablehlo.iota dim = 1 : tensor<6x40xi16>
  %if = stablehlo.convert %i : (tensor<6x40xi16>) -> tensor<6x40x@T@>
  %d = stablehlo.subtract %sr, %b1 : tensor<6x40x@T@>
  %m = stablehlo.multiply %d, %b2 : tensor<6x40x@T@>
  %a0 = stablehlo.add %m, %t : tensor<6x40x@T@>
  %a = stablehlo.add %a0, %s : tensor<6x40x@T@>
  %q = stablehlo.multiply %a, %bc : tensor<6x40x@T@>
  %r0 = stablehlo.add %q, %if : tensor<6x40x@T@>
  %cmp = stablehlo.compare GT, %r0, %t, FLOAT : (tensor<6x40x@T@>, tensor<6x40x@T@>) -> tensor<6x40xi1>
  return %r0, %cmp : tensor<6x40x@T@>, tensor<6x40xi1>
}
)", {{"@T@", ty}});
    std::unique_ptr<ir::Module> probe = test_util::Parse(text);
    ASSERT_NE(probe, nullptr);
    const ElementType et = probe->entry()->parameter(0)->type().element_type();
    std::vector<ir::Literal> inputs;
    uint64_t seed = 7;
    for (const auto& p : probe->entry()->parameters()) {
      std::vector<ir::Literal> one = MakeInputs({et}, p->type().shape().element_count(), seed++);
      inputs.push_back(ir::Literal::FromBytes(p->type().shape(), one[0].bytes()).value());
    }
    for (int64_t split : {0, 1, 39, 40, 41, 239}) {
      KernelRun run = CompareWithEvaluator(text, [&] {
        std::vector<ir::Literal> copy;
        for (const ir::Literal& l : inputs) copy.push_back(l.Clone().value());
        return copy;
      }(), split);
      EXPECT_TRUE(run.compiled) << run.refusal;
      EXPECT_EQ(run.mismatches, 0) << "split " << split;
    }
  }
}

TEST(LoopKernelDifferentialTest, ReversePadConcatenateDynamicSlice) {
  // Padding with negative edges and interior gaps, a three-way concatenate, reversals, and
  // dynamic slices whose start indices (signed and unsigned, some out of range) are clamped.
  for (const char* ty : {"f32", "i8", "bf16"}) {
    SCOPED_TRACE(ty);
    const std::string text = absl::StrReplaceAll(R"(
func.func @main(%x: tensor<5x7x@T@>, %y: tensor<5x3x@T@>, %z: tensor<5x2x@T@>, %i: tensor<i32>, %j: tensor<ui8>, %big: tensor<9x20x@T@>) -> (tensor<5x12x@T@>, tensor<5x12x@T@>) {
  %c = stablehlo.concatenate %x, %y, %z, dim = 1 : (tensor<5x7x@T@>, tensor<5x3x@T@>, tensor<5x2x@T@>) -> tensor<5x12x@T@>
  %r = stablehlo.reverse %c, dims = [0, 1] : tensor<5x12x@T@>
  %d = stablehlo.dynamic_slice %big, %i, %i, sizes = [5, 12] : (tensor<9x20x@T@>, tensor<i32>, tensor<i32>) -> tensor<5x12x@T@>
  %e = stablehlo.dynamic_slice %big, %j, %j, sizes = [5, 12] : (tensor<9x20x@T@>, tensor<ui8>, tensor<ui8>) -> tensor<5x12x@T@>
  %de = stablehlo.maximum %d, %e : tensor<5x12x@T@>
  %s = stablehlo.add %de, %r : tensor<5x12x@T@>
  return %r, %s : tensor<5x12x@T@>, tensor<5x12x@T@>
}
)", {{"@T@", ty}});
    const std::string pad = absl::StrReplaceAll(R"(
func.func @main(%x: tensor<5x7x@T@>, %pv: tensor<@T@>) -> tensor<11x17x@T@> {
  %p = stablehlo.pad %x, %pv, low = [-1, 2], high = [3, 0], interior = [1, 1] : (tensor<5x7x@T@>, tensor<@T@>) -> tensor<11x15x@T@>
  %p2 = stablehlo.pad %p, %pv, low = [0, 1], high = [0, 1], interior = [0, 0] : (tensor<11x15x@T@>, tensor<@T@>) -> tensor<11x17x@T@>
  return %p2 : tensor<11x17x@T@>
}
)", {{"@T@", ty}});
    KernelRun padded = CompareWithEvaluator(pad, InputsFor(pad, 50), 17);
    EXPECT_TRUE(padded.compiled) << padded.refusal;
    EXPECT_EQ(padded.mismatches, 0);
    for (int32_t i : {-3, 0, 2, 4, 100}) {
      for (uint8_t j : {0, 5, 8, 200}) {
        std::vector<ir::Literal> inputs = InputsFor(text, 60 + i + j);
        std::memcpy(inputs[3].mutable_bytes().data(), &i, 4);
        std::memcpy(inputs[4].mutable_bytes().data(), &j, 1);
        KernelRun run = CompareWithEvaluator(text, std::move(inputs), 17);
        EXPECT_TRUE(run.compiled) << run.refusal;
        EXPECT_EQ(run.mismatches, 0) << "starts " << i << ", " << int{j};
      }
    }
  }
}

TEST(LoopKernelDifferentialTest, RowSegmentsFixConcatenatePadPicks) {
  // Rows built from pieces along the innermost dim (a strided slice, a reversal, a transposed
  // operand, a reshape that keeps the row, edge padding on both sides, negative padding), and a
  // roll along the outer dim: the element loop runs once per segment between the pieces'
  // boundaries, each reading one piece without clamps. Splits fall inside segments, on their
  // boundaries, and inside rows.
  const char* pieces = R"(
func.func @main(%a: tensor<6x9x@T@>, %b: tensor<6x7x@T@>, %w: tensor<5x6x@T@>, %r: tensor<2x3x4x@T@>, %pv: tensor<@T@>) -> tensor<8x29x@T@> {
  %s = stablehlo.slice %a [0:6, 1:9:2] : (tensor<6x9x@T@>) -> tensor<6x4x@T@>
  %rb = stablehlo.reverse %b, dims = [1] : tensor<6x7x@T@>
  %t = stablehlo.transpose %w, dims = [1, 0] : (tensor<5x6x@T@>) -> tensor<6x5x@T@>
  %rr = stablehlo.reshape %r : (tensor<2x3x4x@T@>) -> tensor<6x4x@T@>
  %c = stablehlo.concatenate %s, %rb, %t, %rr, dim = 1 : (tensor<6x4x@T@>, tensor<6x7x@T@>, tensor<6x5x@T@>, tensor<6x4x@T@>) -> tensor<6x20x@T@>
  %p = stablehlo.pad %c, %pv, low = [1, 3], high = [1, 6], interior = [0, 0] : (tensor<6x20x@T@>, tensor<@T@>) -> tensor<8x29x@T@>
  %top = stablehlo.slice %p [6:8, 0:29] : (tensor<8x29x@T@>) -> tensor<2x29x@T@>
  %rest = stablehlo.slice %p [0:6, 0:29] : (tensor<8x29x@T@>) -> tensor<6x29x@T@>
  %roll = stablehlo.concatenate %top, %rest, dim = 0 : (tensor<2x29x@T@>, tensor<6x29x@T@>) -> tensor<8x29x@T@>
  %q = stablehlo.reverse %roll, dims = [1] : tensor<8x29x@T@>
  %n = stablehlo.pad %q, %pv, low = [0, -2], high = [0, 2], interior = [0, 0] : (tensor<8x29x@T@>, tensor<@T@>) -> tensor<8x29x@T@>
  %out = @OUT@ : tensor<8x29x@T@>
  return %out : tensor<8x29x@T@>
}
)";
  struct Case {
    const char* out;
    std::vector<int64_t> starts;      // RowSegmentStarts with the default cap
    std::vector<int64_t> uncapped;    // ... and with room for every segment
  };
  // %p switches pieces at 3, 7, 14, 19 and 23; %n reads %p at 26 - j, so there at 24, 20, 13, 8
  // and 4, and its own padding starts at 27. Both together need 12 segments: over the cap.
  const std::vector<int64_t> p_starts = {0, 3, 7, 14, 19, 23};
  const std::vector<int64_t> n_starts = {0, 4, 8, 13, 20, 24, 27};
  const std::vector<int64_t> both = {0, 3, 4, 7, 8, 13, 14, 19, 20, 23, 24, 27};
  const Case cases[] = {{"stablehlo.add %p, %roll", p_starts, p_starts},
                        {"stablehlo.negate %n", n_starts, n_starts},
                        {"stablehlo.add %p, %n", {0}, both}};
  for (const char* ty : {"f32", "bf16", "i16"}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(absl::StrCat(ty, " ", c.out));
      const std::string text = absl::StrReplaceAll(pieces, {{"@OUT@", c.out}, {"@T@", ty}});
      std::unique_ptr<ir::Module> module = test_util::Parse(text);
      ASSERT_NE(module, nullptr);
      const passes::Kernel kernel = WholeEntryKernel(*module->entry());
      EXPECT_EQ(RowSegmentStarts(kernel), c.starts);
      EXPECT_EQ(RowSegmentStarts(kernel, 16), c.uncapped);
      for (int64_t split : {0, 1, 3, 12, 29, 30, 41, 100, 231}) {
        KernelRun run = CompareWithEvaluator(text, InputsFor(text, 80 + split), split);
        EXPECT_TRUE(run.compiled) << run.refusal;
        EXPECT_EQ(run.mismatches, 0) << "split " << split;
      }
    }
  }
}

TEST(LoopKernelDifferentialTest, KernelsOverEmptyArrays) {
  // jnp.roll of a 7x4x0 array with a traced shift, flattened: reshapes between shapes of no
  // element whose innermost dims agree (0 and 0) once divided by that dim while emitting
  // (SIGFPE). Such a kernel is emitted, or refused with a reason, never a crash.
  const std::string text = R"(
func.func @main(%x: tensor<7x4x0xf32>, %s: tensor<i32>) -> tensor<7x4x0xf32> {
  %r = stablehlo.reshape %x : (tensor<7x4x0xf32>) -> tensor<0xf32>
  %c = stablehlo.concatenate %r, %r, dim = 0 : (tensor<0xf32>, tensor<0xf32>) -> tensor<0xf32>
  %d = stablehlo.dynamic_slice %c, %s, sizes = [0] : (tensor<0xf32>, tensor<i32>) -> tensor<0xf32>
  %o = stablehlo.reshape %d : (tensor<0xf32>) -> tensor<7x4x0xf32>
  return %o : tensor<7x4x0xf32>
}
)";
  std::vector<ir::Literal> inputs;
  inputs.push_back(ir::Literal::Create(ir::Shape::Make(ElementType::kF32, {7, 4, 0}).value()).value());
  inputs.push_back(ir::Literal::Create(ir::Shape::Make(ElementType::kS32, {}).value()).value());
  KernelRun run = CompareWithEvaluator(text, std::move(inputs));
  EXPECT_TRUE(run.compiled || !run.refusal.empty());
  EXPECT_EQ(run.mismatches, 0);
}

// Indices for a gather: mostly in [0, bound), some negative or past it (clamped), as bytes of
// `type`'s storage.
ir::Literal GatherIndices(const ir::Shape& shape, int64_t bound, uint64_t seed) {
  std::mt19937_64 rng(seed);
  ir::Literal l = ir::Literal::FromBytes(
                      shape, std::vector<uint8_t>(shape.ByteSize(), 0)).value();
  const int width = ir::BitWidth(shape.element_type()) / 8;
  const bool is_signed = ir::IsSignedInteger(shape.element_type());
  std::vector<uint8_t> bytes(l.bytes().begin(), l.bytes().end());
  for (int64_t e = 0; e < shape.element_count(); ++e) {
    int64_t v = static_cast<int64_t>(rng() % (bound + 6)) - (is_signed ? 3 : 0);
    std::memcpy(bytes.data() + e * width, &v, width);  // little-endian: the low bytes
  }
  return ir::Literal::FromBytes(shape, bytes).value();
}

TEST(LoopKernelDifferentialTest, GatherAsJaxLowersIt) {
  // An embedding lookup (one index per row, fused with its consumer), take_along_axis (batching
  // dims), and two-component start indices along dim 0 with window slices; index types signed
  // and unsigned, out-of-range starts clamped so the slice fits.
  struct Case {
    const char* name;
    const char* text;  // @T@: the element type, @I@: the index type
    int64_t bound;     // index values drawn around [0, bound)
  };
  const Case cases[] = {
      {"embedding", R"(
func.func @main(%t: tensor<10x6x@T@>, %i: tensor<4x5x1x@I@>) -> tensor<4x5x6x@T@> {
  %g = "stablehlo.gather"(%t, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 6>} : (tensor<10x6x@T@>, tensor<4x5x1x@I@>) -> tensor<4x5x6x@T@>
  %r = stablehlo.add %g, %g : tensor<4x5x6x@T@>
  return %r : tensor<4x5x6x@T@>
})", 10},
      {"take_along_axis", R"(
func.func @main(%t: tensor<3x8x@T@>, %i: tensor<3x5x1x@I@>) -> tensor<3x5x@T@> {
  %g = "stablehlo.gather"(%t, %i) {dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, slice_sizes = array<i64: 1, 1>} : (tensor<3x8x@T@>, tensor<3x5x1x@I@>) -> tensor<3x5x@T@>
  return %g : tensor<3x5x@T@>
})", 8},
      {"windows", R"(
func.func @main(%t: tensor<6x7x@T@>, %i: tensor<2x4x@I@>) -> tensor<4x2x3x@T@> {
  %g = "stablehlo.gather"(%t, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], start_index_map = [0, 1], index_vector_dim = 0>, slice_sizes = array<i64: 2, 3>} : (tensor<6x7x@T@>, tensor<2x4x@I@>) -> tensor<4x2x3x@T@>
  return %g : tensor<4x2x3x@T@>
})", 7},
  };
  uint64_t seed = 900;
  for (const Case& c : cases) {
    for (const char* ty : {"f32", "bf16", "i8"}) {
      for (const char* it : {"i32", "ui8", "i64"}) {
        SCOPED_TRACE(absl::StrCat(c.name, " ", ty, " indices ", it));
        const std::string text = absl::StrReplaceAll(c.text, {{"@T@", ty}, {"@I@", it}});
        std::unique_ptr<ir::Module> probe = test_util::Parse(text);
        ASSERT_NE(probe, nullptr);
        const ir::Shape& table = probe->entry()->parameter(0)->type().shape();
        const ir::Shape& index = probe->entry()->parameter(1)->type().shape();
        std::vector<ir::Literal> one =
            MakeInputs({table.element_type()}, table.element_count(), seed++);
        std::vector<ir::Literal> inputs;
        inputs.push_back(ir::Literal::FromBytes(table, one[0].bytes()).value());
        inputs.push_back(GatherIndices(index, c.bound, seed++));
        KernelRun run = CompareWithEvaluator(text, std::move(inputs));
        EXPECT_TRUE(run.compiled) << run.refusal;
        EXPECT_EQ(run.mismatches, 0);
      }
    }
  }
}

TEST(ScatterKernelDifferentialTest, ScatterAsJaxLowersIt) {
  // An embedding gradient (scatter-add with many duplicate rows), .at[].set with batching dims
  // (a replacing region), and .at[].max of windows along two dims, some partly outside (skipped
  // whole, as XLA skips them). Indices signed and unsigned, some out of range. Bit for bit the
  // evaluator's: updates apply in the same order.
  struct Case {
    const char* name;
    const char* text;  // @T@: the element type, @I@: the index type, @B@: the region's body
    int64_t bound;     // index values drawn around [0, bound)
  };
  const char* add = "%s = stablehlo.add %x, %y : tensor<@T@>\n    stablehlo.return %s : tensor<@T@>";
  const char* set = "stablehlo.return %y : tensor<@T@>";
  const char* max = "%s = stablehlo.maximum %y, %x : tensor<@T@>\n    stablehlo.return %s : tensor<@T@>";
  const Case cases[] = {
      {"embedding grad", R"(
func.func @main(%t: tensor<10x6x@T@>, %i: tensor<4x5x1x@I@>, %u: tensor<4x5x6x@T@>) -> tensor<10x6x@T@> {
  %g = "stablehlo.scatter"(%t, %i, %u) ({
  ^bb0(%x: tensor<@T@>, %y: tensor<@T@>):
    @B@
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>} : (tensor<10x6x@T@>, tensor<4x5x1x@I@>, tensor<4x5x6x@T@>) -> tensor<10x6x@T@>
  return %g : tensor<10x6x@T@>
})", 10},
      {"batched", R"(
func.func @main(%t: tensor<3x8x@T@>, %i: tensor<3x5x1x@I@>, %u: tensor<3x5x@T@>) -> tensor<3x8x@T@> {
  %g = "stablehlo.scatter"(%t, %i, %u) ({
  ^bb0(%x: tensor<@T@>, %y: tensor<@T@>):
    @B@
  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1], index_vector_dim = 2>} : (tensor<3x8x@T@>, tensor<3x5x1x@I@>, tensor<3x5x@T@>) -> tensor<3x8x@T@>
  return %g : tensor<3x8x@T@>
})", 8},
      {"windows", R"(
func.func @main(%t: tensor<6x7x@T@>, %i: tensor<2x4x@I@>, %u: tensor<4x2x3x@T@>) -> tensor<6x7x@T@> {
  %g = "stablehlo.scatter"(%t, %i, %u) ({
  ^bb0(%x: tensor<@T@>, %y: tensor<@T@>):
    @B@
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1, 2], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 0>} : (tensor<6x7x@T@>, tensor<2x4x@I@>, tensor<4x2x3x@T@>) -> tensor<6x7x@T@>
  return %g : tensor<6x7x@T@>
})", 7},
  };
  uint64_t seed = 1300;
  int compiled = 0;
  for (const Case& c : cases) {
    for (const char* body : {add, set, max}) {
      for (const char* ty : {"f32", "bf16", "i8", "f64"}) {
        for (const char* it : {"i32", "ui8"}) {
          SCOPED_TRACE(absl::StrCat(c.name, " ", ty, " indices ", it, " ", body));
          const std::string text = absl::StrReplaceAll(
              absl::StrReplaceAll(c.text, {{"@B@", body}}), {{"@T@", ty}, {"@I@", it}});
          std::unique_ptr<ir::Module> probe = test_util::Parse(text);
          ASSERT_NE(probe, nullptr);
          const ir::Shape& table = probe->entry()->parameter(0)->type().shape();
          const ir::Shape& index = probe->entry()->parameter(1)->type().shape();
          const ir::Shape& updates = probe->entry()->parameter(2)->type().shape();
          std::vector<ir::Literal> inputs;
          inputs.push_back(ir::Literal::FromBytes(
              table, MakeInputs({table.element_type()}, table.element_count(), seed++)[0].bytes())
                               .value());
          inputs.push_back(GatherIndices(index, c.bound, seed++));
          inputs.push_back(ir::Literal::FromBytes(
              updates,
              MakeInputs({updates.element_type()}, updates.element_count(), seed++)[0].bytes())
                               .value());
          KernelRun run = CompareWithEvaluator(text, std::move(inputs));
          EXPECT_TRUE(run.compiled) << run.refusal;
          EXPECT_EQ(run.mismatches, 0);
          compiled += run.compiled;
        }
      }
    }
  }
  EXPECT_EQ(compiled, 3 * 3 * 4 * 2);
}

TEST(ScatterKernelDifferentialTest, RefusesWhatItDoesNotEmit) {
  // Two inputs (a variadic scatter) and an update region of two ops stay on the evaluator.
  const std::string two_ops = R"(
func.func @main(%t: tensor<10xf32>, %i: tensor<4x1xi32>, %u: tensor<4xf32>) -> tensor<10xf32> {
  %g = "stablehlo.scatter"(%t, %i, %u) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %a = stablehlo.add %x, %y : tensor<f32>
    %m = stablehlo.multiply %a, %y : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<10xf32>, tensor<4x1xi32>, tensor<4xf32>) -> tensor<10xf32>
  return %g : tensor<10xf32>
})";
  std::unique_ptr<ir::Module> module = test_util::Parse(two_ops);
  ASSERT_NE(module, nullptr);
  HostKernelCompiler compiler;
  absl::StatusOr<int> id = compiler.AddKernel(WholeEntryKernel(*module->entry()));
  EXPECT_FALSE(id.ok());
  EXPECT_NE(std::string(id.status().message()).find("scatter the emitter lacks"),
            std::string::npos)
      << id.status();
}

TEST(LoopKernelDifferentialTest, IdenticalKernelsShareOneFunction) {
  const std::string text = Program({ElementType::kF32, ElementType::kF32}, ElementType::kF32,
                                   absl::StrCat("  %r = stablehlo.add %p0, %p1 : tensor<", kN,
                                                "xf32>"));
  std::unique_ptr<ir::Module> a = test_util::Parse(text);
  std::unique_ptr<ir::Module> b = test_util::Parse(text);
  ASSERT_TRUE(a != nullptr && b != nullptr);
  passes::Kernel ka = WholeEntryKernel(*a->entry());
  passes::Kernel kb = WholeEntryKernel(*b->entry());
  HostKernelCompiler compiler;
  ASSERT_TRUE(compiler.AddKernel(ka).ok());
  ASSERT_TRUE(compiler.AddKernel(kb).ok());
  ASSERT_TRUE(compiler.Compile().ok());
  EXPECT_EQ(compiler.kernels(), 2);
  EXPECT_EQ(compiler.unique_kernels(), 1);
  EXPECT_EQ(compiler.Get(0).fn, compiler.Get(1).fn);
  EXPECT_NE(compiler.Get(0).fn, nullptr);
}

TEST(LoopKernelDifferentialTest, TranscendentalsOverFloatTypes) {
  // Polynomial cores (exp, log, tanh, logistic below f64): a few ulp of f32, at most one of
  // bf16/f16 (rounded from f32, where the evaluator rounds once from double). Everything else
  // goes through the C library in double, rounded once, as the evaluator: bit for bit.
  struct MathCase {
    const char* op;
    int arity;
    bool polynomial;
  };
  constexpr MathCase kMath[] = {
      {"exponential", 1, true},  {"log", 1, true},    {"tanh", 1, true},
      {"logistic", 1, true},     {"exponential_minus_one", 1, false},
      {"log_plus_one", 1, false}, {"sine", 1, false}, {"cosine", 1, false},
      {"tan", 1, false},         {"cbrt", 1, false},  {"rsqrt", 1, false},
      {"power", 2, false},       {"atan2", 2, false}};
  int cases = 0;
  for (const MathCase& op : kMath) {
    for (ElementType et : {ElementType::kBF16, ElementType::kF16, ElementType::kF32,
                           ElementType::kF64}) {
      SCOPED_TRACE(absl::StrCat(op.op, " ", Mlir(et)));
      const std::string t = absl::StrCat("tensor<", kN, "x", Mlir(et), ">");
      const std::string body =
          op.arity == 2 ? absl::StrCat("  %r = stablehlo.", op.op, " %p0, %p1 : ", t)
                        : absl::StrCat("  %r = stablehlo.", op.op, " %p0 : ", t);
      Tolerance tolerance;
      if (op.polynomial && et != ElementType::kF64) {
        tolerance.ulp = et == ElementType::kF32 ? 4 : 1;
      }
      std::vector<ElementType> types(op.arity, et);
      KernelRun run = CompareWithEvaluator(Program(types, et, body),
                                           MakeInputs(types, kN, 500 + cases), -1, tolerance);
      EXPECT_TRUE(run.compiled) << run.refusal;
      EXPECT_EQ(run.mismatches, 0);
      ++cases;
    }
  }
  // exp over its whole range, overflow and the subnormal results included.
  {
    const int64_t n = 4000;
    ir::Literal x = ir::Literal::Create(ir::Shape::Make(ElementType::kF32, {n}).value()).value();
    for (int64_t i = 0; i < n; ++i) {
      const float v = -110.0f + 200.0f * static_cast<float>(i) / static_cast<float>(n);
      std::memcpy(x.mutable_bytes().data() + i * 4, &v, 4);
    }
    std::vector<ir::Literal> inputs;
    inputs.push_back(std::move(x));
    KernelRun run = CompareWithEvaluator(
        Program({ElementType::kF32}, ElementType::kF32,
                absl::StrCat("  %r = stablehlo.exponential %p0 : tensor<", n, "xf32>"), n),
        std::move(inputs), -1, Tolerance{4, 0});
    EXPECT_TRUE(run.compiled) << run.refusal;
    EXPECT_EQ(run.mismatches, 0);
  }
}

TEST(LoopKernelDifferentialTest, TanhOverItsWholeRange) {
  // f32 tanh is a rational approximation of its own, measured at most 2 ulp from the correctly
  // rounded tanh over every f32; the evaluator rounds libm's double tanh, which may differ from
  // that by one more. Both of its pieces (|x| below and above 1.25) and the clamp where tanh
  // rounds to 1 (9.01) within that; signed zeros, tiny and subnormal arguments (tanh(x) rounds
  // to x), infinities and NaN bit for bit.
  std::vector<float> near, exact;
  for (int i = 0; i <= 3000; ++i) near.push_back(-12.0f + 24.0f * static_cast<float>(i) / 3000);
  for (float v : {1.25f, std::nextafter(1.25f, 2.0f), 9.01f, 10.0f}) {
    near.push_back(v);
    near.push_back(-v);
  }
  for (float v = 1e-4f; v < 2.0f; v *= 1.37f) {
    near.push_back(v);
    near.push_back(-v);
  }
  for (float v = 1e-44f; v < 1e-4f; v *= 1.37f) {
    exact.push_back(v);
    exact.push_back(-v);
  }
  for (float v :
       {0.0f, -0.0f, 1e30f, -1e30f, std::numeric_limits<float>::infinity(),
        -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    exact.push_back(v);
  }
  for (const auto& [values, tolerance] :
       {std::pair{near, Tolerance{3, 0}}, std::pair{exact, Tolerance{}}}) {
    const int64_t n = static_cast<int64_t>(values.size());
    ir::Literal x = ir::Literal::Create(ir::Shape::Make(ElementType::kF32, {n}).value()).value();
    std::memcpy(x.mutable_bytes().data(), values.data(), n * 4);
    std::vector<ir::Literal> inputs;
    inputs.push_back(std::move(x));
    KernelRun run = CompareWithEvaluator(
        Program({ElementType::kF32}, ElementType::kF32,
                absl::StrCat("  %r = stablehlo.tanh %p0 : tensor<", n, "xf32>"), n),
        std::move(inputs), -1, tolerance);
    EXPECT_TRUE(run.compiled) << run.refusal;
    EXPECT_EQ(run.mismatches, 0);
  }
}

TEST(ReduceKernelDifferentialTest, EveryFoldOverEveryType) {
  // Three spaces: rows of 37 (a vector remainder) folded into 12 outputs, columns (12 folded
  // into 37), and the middle dim of 4x9x37; split between two calls at output 5. Row folds of
  // f32/f64 sums and products are reassociated (checked to a relative bound); everything else
  // must be bit for bit: maxima, minima, integer folds, bf16/f16 (folded in order, rounding every
  // step as the evaluator does), and every column fold (each output folds in input order).
  struct FoldCase {
    const char* op;
    bool floats, ints, pred;
  };
  constexpr FoldCase kFolds[] = {{"add", true, true, true},     {"multiply", true, true, true},
                                 {"maximum", true, true, true}, {"minimum", true, true, true},
                                 {"and", false, true, true},    {"or", false, true, true},
                                 {"xor", false, true, true}};
  struct Space {
    const char* in;
    const char* out;
    const char* dims;
    bool rows;
  };
  constexpr Space kSpaces[] = {{"12x37", "12", "1", true},
                               {"12x37", "37", "0", false},
                               {"4x9x37", "4x37", "1", false}};
  int cases = 0;
  for (const Space& space : kSpaces) {
    for (const FoldCase& fold : kFolds) {
      for (const TypeInfo& info : kTypes) {
        const ElementType et = info.type;
        if (!(et == ElementType::kPred ? fold.pred : IsF(et) ? fold.floats : fold.ints)) continue;
        // The middle space's index arithmetic is the same for every type: a few suffice.
        if (!space.rows && std::string(space.in) == "4x9x37" && et != ElementType::kPred &&
            et != ElementType::kS32 && et != ElementType::kBF16 && et != ElementType::kF32) {
          continue;
        }
        SCOPED_TRACE(absl::StrCat(fold.op, " ", info.mlir, " ", space.in, " over ", space.dims));
        const std::string text = absl::StrReplaceAll(R"(
func.func @main(%x: tensor<@IN@x@T@>, %init: tensor<@T@>) -> tensor<@OUT@x@T@> {
  %r = stablehlo.reduce(%x init: %init) applies stablehlo.@OP@ across dimensions = [@D@] : (tensor<@IN@x@T@>, tensor<@T@>) -> tensor<@OUT@x@T@>
  return %r : tensor<@OUT@x@T@>
}
)", {{"@T@", info.mlir}, {"@OP@", fold.op}, {"@IN@", space.in}, {"@OUT@", space.out},
     {"@D@", space.dims}});
        const std::string name = fold.op;
        const bool reassociated = space.rows &&
                                  (et == ElementType::kF32 || et == ElementType::kF64) &&
                                  (name == "add" || name == "multiply");
        Tolerance tolerance;
        if (reassociated) tolerance.relative = et == ElementType::kF32 ? 1e-4 : 1e-12;
        KernelRun run = CompareWithEvaluator(text, InputsFor(text, 900 + cases), 5, tolerance);
        EXPECT_TRUE(run.compiled) << run.refusal;
        EXPECT_EQ(run.mismatches, 0);
        ++cases;
      }
    }
  }
  EXPECT_GT(cases, 150);
}

TEST(ReduceKernelDifferentialTest, SplitReductionsOfFewLongLines) {
  // Few outputs over long lines fold in parts (ReducePartsPerRow): rows (2 lines of 70000 into 2,
  // and 140000 into a scalar), columns (70000 lines of 3: every output a strided line) and a
  // middle dim, with a producer, a stored body, an init other than the fold's identity, and an
  // epilogue. Integer, pred, maximum and minimum folds are exact in any order; f32/f64 sums are
  // reassociated (a relative bound); bf16 and f16 are never split (they round every step in the
  // evaluator's order) and stay exact.
  struct Space {
    const char* in;
    const char* out;
    const char* dims;
  };
  // (In 2, 4, 2 and 2 parts.)
  constexpr Space kSpaces[] = {
      {"2x70000", "2", "1"}, {"140000", "", "0"}, {"70000x3", "3", "0"}, {"2x70000x3", "2x3", "1"}};
  constexpr const char* kFolds[] = {"add", "maximum", "minimum", "multiply", "and", "xor"};
  int cases = 0, split = 0;
  for (const Space& space : kSpaces) {
    for (const char* op : kFolds) {
      for (const TypeInfo& info : kTypes) {
        const ElementType et = info.type;
        const std::string name = op;
        const bool bitwise = name == "and" || name == "xor";
        // (Float products of long lines overflow or vanish, in an order-dependent way.)
        if (IsF(et) && (bitwise || name == "multiply")) continue;
        if (et == ElementType::kPred && name != "and" && name != "xor" && name != "maximum") {
          continue;
        }
        // Every type and fold over the first space; the other spaces' index arithmetic is the
        // same for every type: a few suffice.
        if (&space != &kSpaces[0] &&
            (!(et == ElementType::kPred || et == ElementType::kS32 || et == ElementType::kU64 ||
               et == ElementType::kF32 || et == ElementType::kBF16) ||
             !(name == "add" || name == "maximum" || name == "xor"))) {
          continue;
        }
        const bool narrow = et == ElementType::kBF16 || et == ElementType::kF16;
        SCOPED_TRACE(absl::StrCat(op, " ", info.mlir, " ", space.in, " over ", space.dims));
        const std::string out = space.out[0] == '\0' ? "" : absl::StrCat(space.out, "x");
        const std::string text = absl::StrReplaceAll(
            R"(
func.func @main(%x: tensor<@IN@x@T@>, %y: tensor<@IN@x@T@>, %init: tensor<@T@>) -> (tensor<@OUT@@T@>, tensor<@IN@x@T@>) {
  %p = stablehlo.@PRODUCER@ %x, %y : tensor<@IN@x@T@>
  %r = stablehlo.reduce(%p init: %init) applies stablehlo.@OP@ across dimensions = [@D@] : (tensor<@IN@x@T@>, tensor<@T@>) -> tensor<@OUT@@T@>
  %e = stablehlo.@PRODUCER@ %r, %r : tensor<@OUT@@T@>
  return %e, %p : tensor<@OUT@@T@>, tensor<@IN@x@T@>
}
)",
            {{"@T@", info.mlir},
             {"@OP@", op},
             {"@IN@", space.in},
             {"@OUT@", out},
             {"@D@", space.dims},
             {"@PRODUCER@", et == ElementType::kPred || bitwise ? "xor" : "maximum"}});
        // Floats: values in [-1, 1) (a few thousand ulps of cancellation at most); others:
        // random bits.
        std::vector<ir::Literal> inputs = InputsFor(text, 1300 + cases);
        ASSERT_EQ(inputs.size(), 3u);
        if (IsF(et)) {
          std::mt19937_64 rng(77 + cases);
          std::uniform_real_distribution<double> uniform(-1.0, 1.0);
          for (size_t k = 0; k < 3; ++k) {
            for (int64_t i = 0; i < inputs[k].shape().element_count(); ++i) {
              const double v = uniform(rng);
              uint64_t bits = 0;
              if (et == ElementType::kF64) {
                std::memcpy(&bits, &v, 8);
              } else if (et == ElementType::kF32) {
                const float f = static_cast<float>(v);
                std::memcpy(&bits, &f, 4);
              } else if (et == ElementType::kBF16) {
                bits = ir::BF16::FromFloat(static_cast<float>(v)).bits;
              } else {
                bits = ir::F16::FromFloat(static_cast<float>(v)).bits;
              }
              std::memcpy(inputs[k].mutable_bytes().data() + i * ir::StorageBytes(et), &bits,
                          ir::StorageBytes(et));
            }
          }
        }
        const bool reassociated =
            (et == ElementType::kF32 || et == ElementType::kF64) && name == "add";
        Tolerance tolerance;
        if (reassociated) tolerance.relative = et == ElementType::kF32 ? 1e-3 : 1e-9;
        KernelRun run = CompareWithEvaluator(text, std::move(inputs), 1, tolerance);
        EXPECT_TRUE(run.compiled) << run.refusal;
        EXPECT_EQ(run.mismatches, 0);
        split += narrow ? 0 : 1;
        ++cases;
      }
    }
  }
  EXPECT_GT(cases, 60);
  EXPECT_GT(split, 50);
}

TEST(ReduceKernelDifferentialTest, FusedProducersEpilogueAndStoredBody) {
  // Softmax and layernorm shapes: producers with row broadcasts and an exponential, two reduces
  // over the same rows, a stored producer, an epilogue that reshapes to [rows, 1], and a 3-d
  // input folding its two trailing dims; then a reduce to a scalar.
  for (const char* ty : {"f32", "bf16"}) {
    SCOPED_TRACE(ty);
    const std::string text = absl::StrReplaceAll(R"(
func.func @main(%x: tensor<6x5x8x@T@>, %m: tensor<6x@T@>, %w: tensor<5x8x@T@>) -> (tensor<6x5x8x@T@>, tensor<6x1x@T@>, tensor<6x@T@>) {
  %zero = stablehlo.constant dense<0.0> : tensor<@T@>
  %bm = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<6x@T@>) -> tensor<6x5x8x@T@>
  %bw = stablehlo.broadcast_in_dim %w, dims = [1, 2] : (tensor<5x8x@T@>) -> tensor<6x5x8x@T@>
  %d = stablehlo.subtract %x, %bm : tensor<6x5x8x@T@>
  %e = stablehlo.exponential %d : tensor<6x5x8x@T@>
  %ew = stablehlo.multiply %e, %bw : tensor<6x5x8x@T@>
  %sq = stablehlo.multiply %d, %d : tensor<6x5x8x@T@>
  %s = stablehlo.reduce(%ew init: %zero) applies stablehlo.add across dimensions = [1, 2] : (tensor<6x5x8x@T@>, tensor<@T@>) -> tensor<6x@T@>
  %v = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [1, 2] : (tensor<6x5x8x@T@>, tensor<@T@>) -> tensor<6x@T@>
  %s1 = stablehlo.reshape %s : (tensor<6x@T@>) -> tensor<6x1x@T@>
  %r = stablehlo.rsqrt %s1 : tensor<6x1x@T@>
  %vm = stablehlo.add %v, %m : tensor<6x@T@>
  return %ew, %r, %vm : tensor<6x5x8x@T@>, tensor<6x1x@T@>, tensor<6x@T@>
}
)", {{"@T@", ty}});
    for (int64_t split : {0, 1, 5}) {
      // f32 sums are reassociated; bf16 folds in order but its exponentials may round one bf16
      // ulp apart from the evaluator's, which the sums then carry.
      Tolerance tolerance{0, std::string(ty) == "f32" ? 1e-5 : 2e-2};
      KernelRun run = CompareWithEvaluator(text, InputsFor(text, 40), split, tolerance);
      EXPECT_TRUE(run.compiled) << run.refusal;
      EXPECT_EQ(run.mismatches, 0) << "split " << split;
    }
  }
  const std::string scalar = R"(
func.func @main(%x: tensor<7x300xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = stablehlo.reduce(%x init: %init) applies stablehlo.maximum across dimensions = [0, 1] : (tensor<7x300xf32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}
)";
  KernelRun run = CompareWithEvaluator(scalar, InputsFor(scalar, 3), 0);
  EXPECT_TRUE(run.compiled) << run.refusal;
  EXPECT_EQ(run.mismatches, 0);
}

TEST(ReduceKernelDifferentialTest, FoldsOverDimsApartRunInTheEvaluatorsOrder) {
  // Dims apart are no line the reduction emitter lays out: the region reduce emitter folds them
  // (a fused producer, an epilogue dividing by a broadcast count), in row-major order, so even
  // float sums are the evaluator's bits.
  for (const char* ty : {"f32", "bf16", "i32", "f64"}) {
    SCOPED_TRACE(ty);
    const std::string text = absl::StrReplaceAll(R"(
func.func @main(%x: tensor<4x9x37x@T@>, %init: tensor<@T@>, %n: tensor<@T@>) -> tensor<9x@T@> {
  %sq = stablehlo.multiply %x, %x : tensor<4x9x37x@T@>
  %r = stablehlo.reduce(%sq init: %init) applies stablehlo.add across dimensions = [0, 2] : (tensor<4x9x37x@T@>, tensor<@T@>) -> tensor<9x@T@>
  %nb = stablehlo.broadcast_in_dim %n, dims = [] : (tensor<@T@>) -> tensor<9x@T@>
  %m = stablehlo.divide %r, %nb : tensor<9x@T@>
  return %m : tensor<9x@T@>
}
)", {{"@T@", ty}});
    KernelRun run = CompareWithEvaluator(text, InputsFor(text, 3));
    EXPECT_TRUE(run.compiled) << run.refusal;
    EXPECT_EQ(run.mismatches, 0);
  }
}

TEST(ReduceKernelDifferentialTest, ArgmaxAndArgminAsJaxLowersThem) {
  // A variadic reduce of (value, index) with JAX's body: the larger value wins, NaN wins, ties
  // go to the lower index. Folded dims last, first, and apart; special values (NaN, -0, inf)
  // among the inputs.
  struct Case {
    const char* dims;
    const char* out;  // the result dims
    const char* dir;  // GT: argmax, LT: argmin
  };
  const Case cases[] = {{"1", "6x5", "GT"}, {"0", "7x5", "LT"}, {"0, 2", "7", "GT"}};
  for (const Case& c : cases) {
    for (const char* ty : {"f32", "bf16", "i8", "ui16"}) {
      const bool is_float = ty[0] == 'f' || ty[0] == 'b';
      const char* kind = is_float ? "FLOAT" : ty[0] == 'u' ? "UNSIGNED" : "SIGNED";
      SCOPED_TRACE(absl::StrCat(ty, " dims ", c.dims, " ", c.dir));
      const std::string text = absl::StrReplaceAll(R"(
func.func @main(%x: tensor<6x7x5x@T@>, %v0: tensor<@T@>, %i0: tensor<i32>) -> (tensor<@O@x@T@>, tensor<@O@xi32>) {
  %i = stablehlo.iota dim = 1 : tensor<6x7x5xi32>
  %r:2 = "stablehlo.reduce"(%x, %i, %v0, %i0) ({
  ^bb0(%a: tensor<@T@>, %ai: tensor<i32>, %b: tensor<@T@>, %bi: tensor<i32>):
    %better = stablehlo.compare @D@, %b, %a, @K@ : (tensor<@T@>, tensor<@T@>) -> tensor<i1>
    %nan = stablehlo.compare NE, %b, %b, @K@ : (tensor<@T@>, tensor<@T@>) -> tensor<i1>
    %pick = stablehlo.or %better, %nan : tensor<i1>
    %eq = stablehlo.compare EQ, %b, %a, @K@ : (tensor<@T@>, tensor<@T@>) -> tensor<i1>
    %lt = stablehlo.compare LT, %bi, %ai, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %tie = stablehlo.and %eq, %lt : tensor<i1>
    %pick_index = stablehlo.or %pick, %tie : tensor<i1>
    %v = stablehlo.select %pick, %b, %a : tensor<i1>, tensor<@T@>
    %j = stablehlo.select %pick_index, %bi, %ai : tensor<i1>, tensor<i32>
    stablehlo.return %v, %j : tensor<@T@>, tensor<i32>
  }) {dimensions = array<i64: @R@>} : (tensor<6x7x5x@T@>, tensor<6x7x5xi32>, tensor<@T@>, tensor<i32>) -> (tensor<@O@x@T@>, tensor<@O@xi32>)
  return %r#0, %r#1 : tensor<@O@x@T@>, tensor<@O@xi32>
}
)", {{"@T@", ty}, {"@O@", c.out}, {"@D@", c.dir}, {"@K@", kind}, {"@R@", c.dims}});
      KernelRun run = CompareWithEvaluator(text, InputsFor(text, 11));
      EXPECT_TRUE(run.compiled) << run.refusal;
      EXPECT_EQ(run.mismatches, 0);
    }
  }
}

// Element i of a c64 or c128 literal, its parts given in double (rounded to f32 for c64).
void SetComplex(ir::Literal& lit, int64_t i, double re, double im) {
  if (lit.shape().element_type() == ElementType::kC64) {
    const float parts[2] = {static_cast<float>(re), static_cast<float>(im)};
    std::memcpy(lit.mutable_bytes().data() + i * 8, parts, 8);
  } else {
    const double parts[2] = {re, im};
    std::memcpy(lit.mutable_bytes().data() + i * 16, parts, 16);
  }
}

// n complex numbers of `type` (c64, c128): every pair of special parts (zeros, ones, infinities,
// NaN, tiny, huge), then random parts of random magnitudes.
ir::Literal ComplexInputs(ElementType type, int64_t n, uint64_t seed) {
  ir::Literal lit = ir::Literal::Create(ir::Shape::Make(type, {n}).value()).value();
  const double inf = std::numeric_limits<double>::infinity();
  const double specials[] = {0.0, -0.0, 1.0, -1.0, 0.5, inf, -inf,
                             std::numeric_limits<double>::quiet_NaN(), 1e-30, -3e30, 2.5, -7.0};
  const int k = sizeof(specials) / sizeof(specials[0]);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-8, 8);
  for (int64_t i = 0; i < n; ++i) {
    double re, im;
    if (i < k * k) {
      re = specials[i / k];
      im = specials[i % k];
    } else {
      re = std::ldexp(mantissa(rng), exponent(rng));
      im = std::ldexp(mantissa(rng), exponent(rng));
    }
    SetComplex(lit, i, re, im);
  }
  return lit;
}

TEST(LoopKernelDifferentialTest, ComplexProductsAndQuotientsOfEveryPairOfSpecialValues) {
  // Products and quotients are inline, calling __muldc3 or __divdc3 only when both parts are NaN
  // (elemental_complex.cc): every pair of complex numbers made of special parts, both orders,
  // bit for bit with the evaluator's std::complex. The parts reach each path: for products each
  // recovery of C's Annex G (boxed infinities, NaN parts to zero, overflow); for quotients each
  // scaling of libgcc's division (a divisor part of at least DBL_MAX / 2, one under
  // DBL_EPSILON, subnormal numerator parts), the subnormal ratio's other order (1e-300 over
  // 1e10), division by zero, and each recovery.
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double parts[] = {0.0,     -0.0,  1.0,    -1.0,   inf,      -inf,       nan,    1e200,
                          -3e30,   2.5e-300, 1.7e308, -1e-20, 4.9e-324, -2.5e-310, 1e10, 3e-160};
  std::vector<std::pair<double, double>> values;
  for (double re : parts) {
    for (double im : parts) values.emplace_back(re, im);
  }
  const int64_t n = static_cast<int64_t>(values.size() * values.size());
  for (const char* op : {"multiply", "divide"}) {
    for (ElementType et : {ElementType::kC64, ElementType::kC128}) {
      const std::string c = et == ElementType::kC64 ? "complex<f32>" : "complex<f64>";
      SCOPED_TRACE(absl::StrCat(op, " ", c));
      const std::string t = absl::StrCat("tensor<", n, "x", c, ">");
      std::vector<ir::Literal> in;
      for (int side = 0; side < 2; ++side) {
        ir::Literal lit = ir::Literal::Create(ir::Shape::Make(et, {n}).value()).value();
        for (int64_t i = 0; i < n; ++i) {
          const auto [re, im] = values[side == 0 ? i / values.size() : i % values.size()];
          SetComplex(lit, i, re, im);
        }
        in.push_back(std::move(lit));
      }
      KernelRun r = CompareWithEvaluator(
          absl::StrCat("func.func @main(%p0: ", t, ", %p1: ", t, ") -> ", t,
                       " {\n  %r = stablehlo.", op, " %p0, %p1 : ", t, "\n  return %r : ", t,
                       "\n}\n"),
          std::move(in));
      EXPECT_TRUE(r.compiled) << r.refusal;
      EXPECT_EQ(r.mismatches, 0);
    }
  }
}

TEST(LoopKernelDifferentialTest, ComplexOpsAsTheEvaluatorComputesThem) {
  // c64 and c128: arithmetic (products and quotients as libgcc's, as the evaluator's
  // std::complex<double>), the C library's exp/log/sqrt/sin/cos/tan/tanh/pow, abs, sign,
  // compares, maximum/minimum, select, real/imag/complex and converts; bit for bit.
  const char* kUnary[] = {"negate", "sign", "sqrt", "exponential", "log", "sine", "cosine",
                          "tan", "tanh", "logistic", "rsqrt"};
  const char* kBinary[] = {"add", "subtract", "multiply", "divide", "maximum", "minimum", "power"};
  int cases = 0;
  for (ElementType et : {ElementType::kC64, ElementType::kC128}) {
    const std::string c = et == ElementType::kC64 ? "complex<f32>" : "complex<f64>";
    const std::string f = et == ElementType::kC64 ? "f32" : "f64";
    const std::string t = absl::StrCat("tensor<", kN, "x", c, ">");
    const std::string ft = absl::StrCat("tensor<", kN, "x", f, ">");
    auto run = [&](const std::string& text, int inputs) {
      std::vector<ir::Literal> in;
      for (int k = 0; k < inputs; ++k) in.push_back(ComplexInputs(et, kN, 500 + cases * 3 + k));
      KernelRun r = CompareWithEvaluator(text, std::move(in));
      EXPECT_TRUE(r.compiled) << r.refusal;
      EXPECT_EQ(r.mismatches, 0);
      ++cases;
    };
    for (const char* op : kUnary) {
      SCOPED_TRACE(absl::StrCat(op, " ", c));
      run(absl::StrCat("func.func @main(%p0: ", t, ") -> ", t, " {\n  %r = stablehlo.", op,
                       " %p0 : ", t, "\n  return %r : ", t, "\n}\n"),
          1);
    }
    for (const char* op : kBinary) {
      SCOPED_TRACE(absl::StrCat(op, " ", c));
      run(absl::StrCat("func.func @main(%p0: ", t, ", %p1: ", t, ") -> ", t,
                       " {\n  %r = stablehlo.", op, " %p0, %p1 : ", t, "\n  return %r : ", t,
                       "\n}\n"),
          2);
    }
    for (const char* d : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
      SCOPED_TRACE(absl::StrCat("compare ", d, " ", c));
      const std::string pt = absl::StrCat("tensor<", kN, "xi1>");
      run(absl::StrCat("func.func @main(%p0: ", t, ", %p1: ", t, ") -> ", pt, " {\n",
                       "  %q = stablehlo.compare ", d, ", %p0, %p1, FLOAT : (", t, ", ", t,
                       ") -> ", pt, "\n  %r = stablehlo.not %q : ", pt, "\n  return %r : ", pt,
                       "\n}\n"),
          2);
    }
    SCOPED_TRACE(absl::StrCat("parts, select, converts ", c));
    // |z|, real, imag, complex(imag, real), a select between the two by |z| > 1, and the
    // conversions to the other complex type and back, to s32, to pred and from f32.
    const std::string other = et == ElementType::kC64 ? "complex<f64>" : "complex<f32>";
    const std::string ot = absl::StrCat("tensor<", kN, "x", other, ">");
    const std::string text = absl::StrCat(
        "func.func @main(%p0: ", t, ") -> (", t, ", ", t, ", tensor<", kN, "xi32>, tensor<", kN,
        "xi1>) {\n",
        "  %a = stablehlo.abs %p0 : (", t, ") -> ", ft, "\n",
        "  %re = stablehlo.real %p0 : (", t, ") -> ", ft, "\n",
        "  %im = stablehlo.imag %p0 : (", t, ") -> ", ft, "\n",
        "  %sw = stablehlo.complex %im, %a : ", t, "\n",
        "  %one = stablehlo.constant dense<1.0> : ", ft, "\n",
        "  %big = stablehlo.compare GT, %a, %one : (", ft, ", ", ft, ") -> tensor<", kN, "xi1>\n",
        "  %s = stablehlo.select %big, %sw, %p0 : tensor<", kN, "xi1>, ", t, "\n",
        "  %o = stablehlo.convert %s : (", t, ") -> ", ot, "\n",
        "  %b = stablehlo.convert %o : (", ot, ") -> ", t, "\n",
        "  %fr = stablehlo.convert %re : (", ft, ") -> ", t, "\n",
        "  %sum = stablehlo.add %b, %fr : ", t, "\n",
        "  %i = stablehlo.convert %p0 : (", t, ") -> tensor<", kN, "xi32>\n",
        "  %pr = stablehlo.convert %p0 : (", t, ") -> tensor<", kN, "xi1>\n",
        "  return %sum, %s, %i, %pr : ", t, ", ", t, ", tensor<", kN, "xi32>, tensor<", kN,
        "xi1>\n}\n");
    run(text, 1);
    // A sum over rows of complex numbers (in order, as the evaluator folds).
    SCOPED_TRACE(absl::StrCat("reduce ", c));
    const std::string rt = absl::StrCat("tensor<7x100x", c, ">");
    std::vector<ir::Literal> in;
    ir::Literal flat = ComplexInputs(et, 700, 77);
    in.push_back(ir::Literal::FromBytes(ir::Shape::Make(et, {7, 100}).value(), flat.bytes()).value());
    KernelRun r = CompareWithEvaluator(
        absl::StrCat("func.func @main(%p0: ", rt, ") -> tensor<7x", c, "> {\n",
                     "  %z = stablehlo.constant dense<(0.5, -1.0)> : tensor<", c, ">\n",
                     "  %r = stablehlo.reduce(%p0 init: %z) applies stablehlo.add across dimensions"
                     " = [1] : (",
                     rt, ", tensor<", c, ">) -> tensor<7x", c, ">\n  return %r : tensor<7x", c,
                     ">\n}\n"),
        std::move(in));
    EXPECT_TRUE(r.compiled) << r.refusal;
    EXPECT_EQ(r.mismatches, 0);
  }
  EXPECT_GT(cases, 40);
}

// The f8/f6/f4 formats and the sub-byte integers (stored a byte each): every stored pattern
// decoded, f32 values of every magnitude (their specials, binade edges, ties, random bits)
// encoded, and arithmetic, compares, selects, transcendentals and a row sum in each.
struct NarrowType {
  ElementType type;
  const char* mlir;
};
constexpr NarrowType kNarrowTypes[] = {
    {ElementType::kF8E5M2, "f8E5M2"},           {ElementType::kF8E4M3, "f8E4M3"},
    {ElementType::kF8E3M4, "f8E3M4"},           {ElementType::kF8E4M3FN, "f8E4M3FN"},
    {ElementType::kF8E4M3FNUZ, "f8E4M3FNUZ"},   {ElementType::kF8E5M2FNUZ, "f8E5M2FNUZ"},
    {ElementType::kF8E4M3B11FNUZ, "f8E4M3B11FNUZ"}, {ElementType::kF8E8M0FNU, "f8E8M0FNU"},
    {ElementType::kF6E2M3FN, "f6E2M3FN"},       {ElementType::kF6E3M2FN, "f6E3M2FN"},
    {ElementType::kF4E2M1FN, "f4E2M1FN"},       {ElementType::kS4, "i4"},
    {ElementType::kU4, "ui4"},                  {ElementType::kS2, "i2"},
    {ElementType::kU2, "ui2"}};

// n stored elements of `type`: every pattern of its width in turn.
ir::Literal EveryPattern(ElementType type, int64_t n) {
  ir::Literal lit = ir::Literal::Create(ir::Shape::Make(type, {n}).value()).value();
  const int width = ir::BitWidth(type);
  for (int64_t i = 0; i < n; ++i) {
    lit.mutable_bytes()[i] = static_cast<uint8_t>(i & ((1 << width) - 1));
  }
  return lit;
}

// n f32 values: specials, powers of two and their neighbours across every narrow range, ties
// between adjacent narrow values (x.5 ulps at several scales), then random bits and random
// values of moderate magnitude.
ir::Literal F32Values(int64_t n, uint64_t seed) {
  std::vector<float> v = {0.0f, -0.0f, 1.0f, -1.0f, std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN(),
                          -std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::denorm_min(), 1e-40f, 3e38f};
  for (int e = -135; e <= 130 && static_cast<int64_t>(v.size()) < n / 2; e += 1) {
    const float p = std::ldexp(1.0f, e);
    for (float m : {1.0f, 1.0625f, 1.125f, 1.1875f, 1.25f, 1.5f, 1.75f, 1.9375f}) {
      v.push_back(p * m);
      v.push_back(-p * m);
    }
    v.push_back(std::nextafter(p, 0.0f));
  }
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> moderate(-600, 600);
  while (static_cast<int64_t>(v.size()) < n) {
    if (rng() % 2) {
      const uint32_t bits = static_cast<uint32_t>(rng());
      float f;
      std::memcpy(&f, &bits, 4);
      v.push_back(f);
    } else {
      v.push_back(moderate(rng));
    }
  }
  v.resize(n);
  return ir::Literal::FromValues<float>({n}, v).value();
}

TEST(LoopKernelDifferentialTest, NarrowFloatFormatsAndSubByteIntegers) {
  constexpr int64_t n = 3000;
  int cases = 0;
  for (const NarrowType& nt : kNarrowTypes) {
    const ElementType et = nt.type;
    const bool is_float = ir::IsFloat(et);
    const std::string t = absl::StrCat("tensor<", n, "x", nt.mlir, ">");
    const std::string wide = is_float ? "f32" : "i32";
    const std::string wt = absl::StrCat("tensor<", n, "x", wide, ">");
    auto check = [&](const std::string& body, std::vector<ir::Literal> in,
                     const std::vector<std::string>& params, const std::string& out,
                     Tolerance tolerance = {}) {
      std::string sig;
      for (size_t k = 0; k < params.size(); ++k) {
        absl::StrAppend(&sig, k ? ", " : "", "%p", k, ": ", params[k]);
      }
      const std::string text = absl::StrCat("func.func @main(", sig, ") -> ", out, " {\n", body,
                                            "\n  return %r : ", out, "\n}\n");
      KernelRun run = CompareWithEvaluator(text, std::move(in), -1, tolerance);
      EXPECT_TRUE(run.compiled) << run.refusal;
      EXPECT_EQ(run.mismatches, 0);
      ++cases;
    };
    {
      SCOPED_TRACE(absl::StrCat("decode ", nt.mlir));
      std::vector<ir::Literal> in;
      in.push_back(EveryPattern(et, n));
      check(absl::StrCat("  %r = stablehlo.convert %p0 : (", t, ") -> ", wt), std::move(in), {t},
            wt);
    }
    if (is_float) {
      SCOPED_TRACE(absl::StrCat("encode ", nt.mlir));
      std::vector<ir::Literal> in;
      in.push_back(F32Values(n, 5 + cases));
      check(absl::StrCat("  %r = stablehlo.convert %p0 : (", wt, ") -> ", t), std::move(in), {wt},
            t);
    }
    // Arithmetic in the type (each op rounded to it), a compare and a select.
    const std::vector<std::string> ops =
        is_float ? std::vector<std::string>{"add", "multiply", "divide"}
                 : std::vector<std::string>{"add", "multiply", "divide", "remainder",
                                            "shift_right_arithmetic"};
    for (const std::string& op : ops) {
      SCOPED_TRACE(absl::StrCat(op, " ", nt.mlir));
      std::vector<ir::Literal> in;
      in.push_back(EveryPattern(et, n));
      // Every pair of patterns, as far as n reaches: the second operand steps every 256.
      ir::Literal second = ir::Literal::Create(ir::Shape::Make(et, {n}).value()).value();
      const int width = ir::BitWidth(et);
      for (int64_t i = 0; i < n; ++i) {
        second.mutable_bytes()[i] = static_cast<uint8_t>((i / 17 + i * 7) & ((1 << width) - 1));
      }
      in.push_back(std::move(second));
      check(absl::StrCat("  %a = stablehlo.", op, " %p0, %p1 : ", t,
                         "\n  %c = stablehlo.compare GT, %a, %p0 : (", t, ", ", t, ") -> tensor<",
                         n, "xi1>\n  %r = stablehlo.select %c, %a, %p1 : tensor<", n, "xi1>, ", t),
            std::move(in), {t, t}, t);
    }
    if (is_float) {
      // Computed in f32 (a few f32 ulp) and rounded once more: within one step of the type.
      for (const char* op : {"exponential", "tanh", "abs"}) {
        SCOPED_TRACE(absl::StrCat(op, " ", nt.mlir));
        std::vector<ir::Literal> in;
        in.push_back(EveryPattern(et, n));
        check(absl::StrCat("  %r = stablehlo.", op, " %p0 : ", t), std::move(in), {t}, t,
              Tolerance{1, 0});
      }
    } else {
      for (const char* op : {"popcnt", "count_leading_zeros", "negate"}) {
        SCOPED_TRACE(absl::StrCat(op, " ", nt.mlir));
        std::vector<ir::Literal> in;
        in.push_back(EveryPattern(et, n));
        check(absl::StrCat("  %r = stablehlo.", op, " %p0 : ", t), std::move(in), {t}, t);
      }
    }
    // A row sum in the type, folded in order.
    SCOPED_TRACE(absl::StrCat("reduce ", nt.mlir));
    const std::string rt = absl::StrCat("tensor<30x100x", nt.mlir, ">");
    std::vector<ir::Literal> in;
    ir::Literal flat = EveryPattern(et, 3000);
    in.push_back(
        ir::Literal::FromBytes(ir::Shape::Make(et, {30, 100}).value(), flat.bytes()).value());
    KernelRun r = CompareWithEvaluator(
        absl::StrCat("func.func @main(%p0: ", rt, ") -> tensor<30x", nt.mlir, "> {\n",
                     "  %z = stablehlo.constant dense<", is_float ? "0.0" : "0", "> : tensor<",
                     nt.mlir, ">\n",
                     "  %r = stablehlo.reduce(%p0 init: %z) applies stablehlo.add across "
                     "dimensions = [1] : (",
                     rt, ", tensor<", nt.mlir, ">) -> tensor<30x", nt.mlir,
                     ">\n  return %r : tensor<30x", nt.mlir, ">\n}\n"),
        std::move(in));
    EXPECT_TRUE(r.compiled) << r.refusal;
    EXPECT_EQ(r.mismatches, 0);
  }
  EXPECT_GT(cases, 80);
}

TEST(LoopKernelDifferentialTest, RefusesWhatItDoesNotEmit) {
  // expm1 of complex numbers is not emitted yet: the kernel is refused, naming the op.
  const std::string text = R"(
func.func @main(%p0: tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>> {
  %r = stablehlo.exponential_minus_one %p0 : tensor<8xcomplex<f32>>
  return %r : tensor<8xcomplex<f32>>
}
)";
  std::vector<ir::Literal> inputs;
  inputs.push_back(ComplexInputs(ElementType::kC64, 8, 1));
  KernelRun run = CompareWithEvaluator(text, std::move(inputs));
  EXPECT_FALSE(run.compiled);
  EXPECT_NE(run.refusal.find("exponential_minus_one"), std::string::npos) << run.refusal;
}

TEST(LoopKernelDifferentialTest, ReducePrecisionAndIotaOfEveryFloat) {
  // reduce_precision to bf16's, f16's, an e5m2-like and a 1-bit-mantissa format (rounding,
  // overflow to infinity, flushing to zero, NaNs kept or made infinities), and iota in every
  // type (bf16/f16 rounding once past their exact integers; complex: the real part).
  int cases = 0;
  for (ElementType et : {ElementType::kF32, ElementType::kF64, ElementType::kBF16,
                         ElementType::kF16}) {
    for (const auto& [e, m] : std::vector<std::pair<int, int>>{{8, 7}, {5, 10}, {5, 2}, {3, 0},
                                                               {11, 52}, {2, 1}}) {
      SCOPED_TRACE(absl::StrCat(Mlir(et), " e", e, "m", m));
      const std::string t = absl::StrCat("tensor<", kN, "x", Mlir(et), ">");
      const std::string body =
          absl::StrCat("  %r = stablehlo.reduce_precision %p0, format = e", e, "m", m, " : ", t);
      KernelRun run = CompareWithEvaluator(Program({et}, et, body), MakeInputs({et}, kN, 60 + cases++));
      EXPECT_TRUE(run.compiled) << run.refusal;
      EXPECT_EQ(run.mismatches, 0);
    }
  }
  std::vector<std::string> iota_types = {"complex<f32>", "complex<f64>"};
  for (const TypeInfo& info : kTypes) iota_types.push_back(info.mlir);
  for (const std::string& type : iota_types) {
    SCOPED_TRACE(absl::StrCat("iota ", type));
    const std::string text = absl::StrReplaceAll(R"(
func.func @main() -> tensor<3x70000x@T@> {
  %r = stablehlo.iota dim = 1 : tensor<3x70000x@T@>
  return %r : tensor<3x70000x@T@>
}
)", {{"@T@", type}});
    KernelRun run = CompareWithEvaluator(text, {});
    EXPECT_TRUE(run.compiled) << run.refusal;
    EXPECT_EQ(run.mismatches, 0);
  }
}

}  // namespace
}  // namespace ember::codegen
