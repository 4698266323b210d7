// dot_general over integers (every width and sign, results wrapping in their own width) and over
// complex numbers on the fast dot (fast_dot.cc: Eigen in uint32/uint64, complex<float>/<double>)
// against the reference evaluator. Integer results are bit-equal: sums modulo 2^n do not depend
// on their order. Complex results differ by the order of the sums only, bounded below. Every case
// must run as the fast dot kernel, not on the evaluator's op table (the cost report says which).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tests/compiler/host/dot_cases.h"

namespace ember::host {
namespace {

using testing::CloneArgs;
using testing::CompileDotBothWays;
using testing::CompiledDot;
using testing::DotCase;
using testing::DotProgram;

// Random arguments: integers of every bit pattern of their width (sub-byte ones in the low bits
// of their byte, the rest zero), complex numbers with both parts uniform in (-2, 2).
std::vector<eval::EvalValue> RandomArgs(const ir::Computation& entry, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> part(-2, 2);
  std::vector<eval::EvalValue> args;
  for (const auto& p : entry.parameters()) {
    ir::Literal lit = ir::Literal::Create(p->type().shape()).value();
    const ir::ElementType type = lit.shape().element_type();
    uint8_t* bytes = lit.mutable_bytes().data();
    const int64_t n = lit.shape().element_count();
    for (int64_t i = 0; i < n; ++i) {
      if (type == ir::ElementType::kC64) {
        const float v[2] = {static_cast<float>(part(rng)), static_cast<float>(part(rng))};
        std::memcpy(bytes + 8 * i, v, 8);
      } else if (type == ir::ElementType::kC128) {
        const double v[2] = {part(rng), part(rng)};
        std::memcpy(bytes + 16 * i, v, 16);
      } else {
        const int width = ir::StorageBytes(type);
        uint64_t bits = rng();
        if (ir::BitWidth(type) < 8) bits &= (uint64_t{1} << ir::BitWidth(type)) - 1;
        std::memcpy(bytes + width * i, &bits, static_cast<size_t>(width));  // little-endian
      }
    }
    args.push_back(eval::EvalValue::Array(std::move(lit)));
  }
  return args;
}

std::complex<double> ComplexElement(const ir::Literal& lit, int64_t i) {
  const uint8_t* bytes = lit.bytes().data();
  if (lit.shape().element_type() == ir::ElementType::kC64) {
    float v[2];
    std::memcpy(v, bytes + 8 * i, 8);
    return {v[0], v[1]};
  }
  double v[2];
  std::memcpy(v, bytes + 16 * i, 16);
  return {v[0], v[1]};
}

void Check(const DotCase& c) {
  SCOPED_TRACE(c.name);
  CompiledDot both = CompileDotBothWays(DotProgram(c));
  if (both.compiled == nullptr) return;
  const std::vector<eval::EvalValue> args = RandomArgs(*both.module->entry(), 11);
  auto want = both.evaluator->Run(CloneArgs(args));
  ASSERT_TRUE(want.ok()) << want.status();
  const ir::Literal& w = (*want)[0].array;
  const ir::ElementType type = w.shape().element_type();
  // Twice: the second run reuses the arena.
  for (int run = 0; run < 2; ++run) {
    auto got = both.compiled->Run(CloneArgs(args));
    ASSERT_TRUE(got.ok()) << got.status();
    const ir::Literal& g = (*got)[0].array;
    ASSERT_TRUE(w.shape() == g.shape()) << g.shape().ToString();
    if (!ir::IsComplex(type)) {
      ASSERT_EQ(w.bytes().size(), g.bytes().size());
      EXPECT_EQ(std::memcmp(w.bytes().data(), g.bytes().data(), w.bytes().size()), 0)
          << "integer results differ";
      continue;
    }
    // Each product's parts are below 8 in magnitude, so each sum is below 8 * depth; reordering
    // the `depth` sums of each part moves it by at most about depth * eps * (8 * depth).
    const double eps = type == ir::ElementType::kC64 ? 0x1p-24 : 0x1p-53;
    const double d = static_cast<double>(c.depth);
    const double bound = 4 * d * eps * 8 * d;
    int64_t bad = 0;
    for (int64_t i = 0; i < w.shape().element_count(); ++i) {
      const std::complex<double> x = ComplexElement(w, i), y = ComplexElement(g, i);
      if (!(std::abs(x.real() - y.real()) <= bound && std::abs(x.imag() - y.imag()) <= bound) &&
          bad++ < 5) {
        ADD_FAILURE() << "element " << i << ": evaluator " << x << ", fast dot " << y;
      }
    }
    EXPECT_EQ(bad, 0);
  }
}

TEST(IntegerAndComplexDotTest, IntegersWrapInTheResultsWidthAsTheEvaluatorComputesThem) {
  const std::vector<DotCase> cases = {
      {"s32 matmul", "tensor<8x40xi32>", "tensor<40x16xi32>", "tensor<8x16xi32>",
       "contracting_dims = [1] x [0]", 40},
      {"s8 operands, s32 result (preferred_element_type)", "tensor<9x33xi8>", "tensor<33x14xi8>",
       "tensor<9x14xi32>", "contracting_dims = [1] x [0]", 33},
      {"u8 operands, u32 result", "tensor<7x64xui8>", "tensor<64x5xui8>", "tensor<7x5xui32>",
       "contracting_dims = [1] x [0]", 64},
      {"s8 and u8 mixed, s32 result", "tensor<6x20xi8>", "tensor<20x4xui8>", "tensor<6x4xi32>",
       "contracting_dims = [1] x [0]", 20},
      {"s64 batched", "tensor<3x5x24xi64>", "tensor<3x24x7xi64>", "tensor<3x5x7xi64>",
       "batching_dims = [0] x [0], contracting_dims = [2] x [1]", 24},
      {"u64 both transposed", "tensor<30x6xui64>", "tensor<11x30xui64>", "tensor<6x11xui64>",
       "contracting_dims = [0] x [1]", 30},
      {"s16 wrapping in 16 bits, rhs contracting last", "tensor<4x6x16xi16>",
       "tensor<4x10x16xi16>", "tensor<4x6x10xi16>",
       "batching_dims = [0] x [0], contracting_dims = [2] x [2]", 16},
      {"u8 wrapping in 8 bits", "tensor<5x12xui8>", "tensor<12x3xui8>", "tensor<5x3xui8>",
       "contracting_dims = [1] x [0]", 12},
      {"s64 operands, s32 result", "tensor<4x9xi64>", "tensor<9x6xi64>", "tensor<4x6xi32>",
       "contracting_dims = [1] x [0]", 9},
      {"s32 contracting dims needing a permutation", "tensor<16x3x5xi32>", "tensor<5x16x7xi32>",
       "tensor<3x7xi32>", "contracting_dims = [0, 2] x [1, 0]", 80},
      {"s4 operands, s8 result", "tensor<6x10xi4>", "tensor<10x5xi4>", "tensor<6x5xi8>",
       "contracting_dims = [1] x [0]", 10},
      {"u4 operands and result (wrapping in 4 bits)", "tensor<3x7xui4>", "tensor<7x4xui4>",
       "tensor<3x4xui4>", "contracting_dims = [1] x [0]", 7},
      {"s2 operands, s4 result", "tensor<4x6xi2>", "tensor<6x3xi2>", "tensor<4x3xi4>",
       "contracting_dims = [1] x [0]", 6},
      {"s32 vector dot", "tensor<50xi32>", "tensor<50xi32>", "tensor<i32>",
       "contracting_dims = [0] x [0]", 50},
      {"s32 large enough to split across the pool", "tensor<96x160xi32>", "tensor<160x100xi32>",
       "tensor<96x100xi32>", "contracting_dims = [1] x [0]", 160},
      {"s32 empty contraction", "tensor<3x0xi32>", "tensor<0x4xi32>", "tensor<3x4xi32>",
       "contracting_dims = [1] x [0]", 0},
  };
  for (const DotCase& c : cases) Check(c);
}

TEST(IntegerAndComplexDotTest, ComplexProductsMatchTheEvaluator) {
  const std::vector<DotCase> cases = {
      {"c64 matmul", "tensor<8x40xcomplex<f32>>", "tensor<40x16xcomplex<f32>>",
       "tensor<8x16xcomplex<f32>>", "contracting_dims = [1] x [0]", 40},
      {"c128 batched, rhs contracting last", "tensor<4x6x16xcomplex<f64>>",
       "tensor<4x10x16xcomplex<f64>>", "tensor<4x6x10xcomplex<f64>>",
       "batching_dims = [0] x [0], contracting_dims = [2] x [2]", 16},
      {"c64 both transposed", "tensor<30x6xcomplex<f32>>", "tensor<11x30xcomplex<f32>>",
       "tensor<6x11xcomplex<f32>>", "contracting_dims = [0] x [1]", 30},
      {"c128 batch dim not leading: permuted", "tensor<6x3x20xcomplex<f64>>",
       "tensor<20x3x4xcomplex<f64>>", "tensor<3x6x4xcomplex<f64>>",
       "batching_dims = [1] x [1], contracting_dims = [2] x [0]", 20},
      {"c64 vector dot", "tensor<50xcomplex<f32>>", "tensor<50xcomplex<f32>>",
       "tensor<complex<f32>>", "contracting_dims = [0] x [0]", 50},
      {"c64 large enough to split across the pool", "tensor<64x96xcomplex<f32>>",
       "tensor<96x64xcomplex<f32>>", "tensor<64x64xcomplex<f32>>",
       "contracting_dims = [1] x [0]", 96},
  };
  for (const DotCase& c : cases) Check(c);
}

}  // namespace
}  // namespace ember::host
