// The compiled host path (passes + fusion plan + compiled kernels + buffer assignment) against
// the reference evaluator on the same programs and random inputs. Integer and predicate results,
// and float results of kernels without transcendentals or reductions, must agree bit for bit.
// The compiled kernels differ from the evaluator in two principled ways, each with its own bound:
//  - f32 exp / log / tanh / logistic are polynomial approximations accurate to a few ulp of the
//    correctly rounded result (the code generator's differential tests check the bounds): `ulps`;
//  - float sums and products of reductions are reassociated (32 lanes, parts split across
//    threads), as XLA:CPU reassociates them. Any order of an n-term float sum is within about n*eps
//    of the exact sum relative to the magnitudes involved, so results may differ by n*eps*(|result|
//    + max|input|): `n` is the largest reduction's length, `scale` a bound on its inputs'
//    magnitude.
// dot_general goes through Eigen, which reassociates the sums too: `dot` compares with a relative
// tolerance of 1e-4.
#include <gtest/gtest.h>

#include <cstdio>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/frontend/import/import.h"
#include "compiler/frontend/text/mlir_text_parser.h"
#include "compiler/evaluator/evaluator.h"
#include "tests/compiler/host/host_test_util.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/pass.h"
#include "tests/compiler/parse_module.h"

namespace ember::host {
namespace {

using testing::HostBackend;

using ::ember::test_util::Parse;

std::vector<eval::EvalValue> RandomArgs(const ir::Computation& entry, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<eval::EvalValue> args;
  for (const auto& p : entry.parameters()) {
    ir::Literal lit = ir::Literal::Create(p->type().shape()).value();
    switch (p->type().element_type()) {
      case ir::ElementType::kF32: {
        std::uniform_real_distribution<float> d(-3, 3);
        const absl::Span<float> data = lit.mutable_data<float>().value();
        for (float& x : data) x = d(rng);
        break;
      }
      case ir::ElementType::kF64: {
        std::uniform_real_distribution<double> d(-3, 3);
        const absl::Span<double> data = lit.mutable_data<double>().value();
        for (double& x : data) x = d(rng);
        break;
      }
      case ir::ElementType::kS32: {
        std::uniform_int_distribution<int32_t> d(-1000, 1000);
        const absl::Span<int32_t> data = lit.mutable_data<int32_t>().value();
        for (int32_t& x : data) x = d(rng);
        break;
      }
      case ir::ElementType::kS64: {
        std::uniform_int_distribution<int64_t> d(-(int64_t{1} << 40), int64_t{1} << 40);
        const absl::Span<int64_t> data = lit.mutable_data<int64_t>().value();
        for (int64_t& x : data) x = d(rng);
        break;
      }
      case ir::ElementType::kU32: {
        std::uniform_int_distribution<uint32_t> d;  // the whole range
        const absl::Span<uint32_t> data = lit.mutable_data<uint32_t>().value();
        for (uint32_t& x : data) x = d(rng);
        break;
      }
      case ir::ElementType::kPred: {
        std::uniform_int_distribution<int> d(0, 1);
        for (uint8_t& b : lit.mutable_bytes()) b = static_cast<uint8_t>(d(rng));
        break;
      }
      default:
        ADD_FAILURE() << "no random generator for " << p->type().ToString();
    }
    args.push_back(eval::EvalValue::Array(std::move(lit)));
  }
  return args;
}

struct Outcome {
  std::vector<eval::EvalValue> values;
  int64_t kernels = 0;
  std::string cost_report;
  HostBackend backend = HostBackend::kEvaluator;
};

Outcome RunBackend(const std::string& text, HostBackend backend, uint32_t seed) {
  Outcome outcome;
  std::unique_ptr<ir::Module> module = Parse(text);
  if (module == nullptr) return outcome;
  if (backend == HostBackend::kCompiled) {
    passes::PassPipeline pipeline = passes::CreateDefaultPipeline();
    auto changed = pipeline.Run(*module);
    EXPECT_TRUE(changed.ok()) << changed.status();
  }
  auto exe = testing::Compile(*module->entry(), backend);
  EXPECT_TRUE(exe.ok()) << exe.status();
  if (!exe.ok()) return outcome;
  outcome.kernels = (*exe)->kernel_count();
  outcome.cost_report = (*exe)->cost_report();
  outcome.backend = (*exe)->backend();
  // Twice: the second run reuses the first run's arena.
  for (int run = 0; run < 2; ++run) {
    auto out = (*exe)->Run(RandomArgs(*module->entry(), seed));
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) return outcome;
    outcome.values = *std::move(out);
  }
  return outcome;
}

// How closely float results must match (see the top of the file); all zero: bit for bit.
struct Tolerance {
  double ulps = 0;
  double n = 0;
  double scale = 0;
  bool dot = false;
};
constexpr Tolerance kDotTolerance{0, 0, 0, true};

template <typename T>
void ExpectClose(absl::Span<const T> x, absl::Span<const T> y, const Tolerance& tol, size_t i) {
  const double eps = std::numeric_limits<T>::epsilon();
  for (size_t j = 0; j < x.size(); ++j) {
    const double a = x[j], b = y[j];
    if (std::isnan(a) || std::isnan(b) || std::isinf(a) || std::isinf(b)) {
      EXPECT_TRUE((std::isnan(a) && std::isnan(b)) || a == b)
          << "result " << i << " element " << j << ": " << a << " vs " << b;
      continue;
    }
    const double m = std::max(std::fabs(a), std::fabs(b));
    const double bound = tol.ulps * eps * m + tol.n * eps * (m + tol.scale);
    EXPECT_LE(std::fabs(a - b), bound) << "result " << i << " element " << j << ": evaluator " << a
                                       << ", compiled " << b;
  }
}

// Compiles `text` both ways and compares.
Outcome ExpectSameResults(const std::string& text, const Tolerance& tol = {}, uint32_t seed = 11) {
  Outcome want = RunBackend(text, HostBackend::kEvaluator, seed);
  Outcome got = RunBackend(text, HostBackend::kCompiled, seed);
  EXPECT_EQ(got.backend, HostBackend::kCompiled) << got.cost_report;
  EXPECT_EQ(want.values.size(), got.values.size());
  const bool exact = tol.ulps == 0 && tol.n == 0 && !tol.dot;
  for (size_t i = 0; i < want.values.size() && i < got.values.size(); ++i) {
    const ir::Literal& a = want.values[i].array;
    const ir::Literal& b = got.values[i].array;
    EXPECT_TRUE(a.shape() == b.shape()) << a.shape().ToString() << " vs " << b.shape().ToString();
    if (!(a.shape() == b.shape())) continue;
    const ir::ElementType type = a.shape().element_type();
    if (exact || (type != ir::ElementType::kF32 && type != ir::ElementType::kF64)) {
      EXPECT_TRUE(a == b) << "result " << i << "\nevaluator: " << a.ToString()
                          << "\ncompiled:  " << b.ToString();
      continue;
    }
    if (tol.dot) {
      auto x = a.data<float>().value();
      auto y = b.data<float>().value();
      for (size_t j = 0; j < x.size(); ++j) {
        EXPECT_NEAR(x[j], y[j], 1e-4 * (1 + std::fabs(x[j]))) << "result " << i << " element " << j;
      }
      continue;
    }
    if (type == ir::ElementType::kF32) {
      ExpectClose<float>(a.data<float>().value(), b.data<float>().value(), tol, i);
    } else {
      ExpectClose<double>(a.data<double>().value(), b.data<double>().value(), tol, i);
    }
  }
  return got;
}

TEST(HostBackendTest, ElementwiseChainIsOneKernel) {
  Outcome o = ExpectSameResults(R"(
func.func @main(%x: tensor<37x129xf32>, %y: tensor<37x129xf32>) -> tensor<37x129xf32> {
  %0 = stablehlo.multiply %x, %y : tensor<37x129xf32>
  %1 = stablehlo.exponential %0 : tensor<37x129xf32>
  %2 = stablehlo.tanh %1 : tensor<37x129xf32>
  %3 = stablehlo.subtract %2, %x : tensor<37x129xf32>
  %4 = stablehlo.maximum %3, %y : tensor<37x129xf32>
  %5 = stablehlo.log_plus_one %4 : tensor<37x129xf32>
  %6 = stablehlo.divide %5, %y : tensor<37x129xf32>
  return %6 : tensor<37x129xf32>
})", Tolerance{/*ulps=*/8, /*n=*/4, /*scale=*/3});
  EXPECT_EQ(o.kernels, 1);
}

TEST(HostBackendTest, BroadcastTransposeSliceIotaSelect) {
  Outcome o = ExpectSameResults(R"(
func.func @main(%x: tensor<64x48xf32>, %b: tensor<48xf32>, %c: tensor<48x64xf32>) -> tensor<30x48xf32> {
  %0 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<48xf32>) -> tensor<64x48xf32>
  %1 = stablehlo.add %x, %0 : tensor<64x48xf32>
  %2 = stablehlo.transpose %c, dims = [1, 0] : (tensor<48x64xf32>) -> tensor<64x48xf32>
  %3 = stablehlo.multiply %1, %2 : tensor<64x48xf32>
  %4 = stablehlo.slice %3 [3:63:2, 0:48] : (tensor<64x48xf32>) -> tensor<30x48xf32>
  %5 = stablehlo.iota dim = 0 : tensor<30x48xi32>
  %6 = stablehlo.convert %5 : (tensor<30x48xi32>) -> tensor<30x48xf32>
  %7 = stablehlo.compare GT, %4, %6 : (tensor<30x48xf32>, tensor<30x48xf32>) -> tensor<30x48xi1>
  %8 = stablehlo.negate %4 : tensor<30x48xf32>
  %9 = stablehlo.select %7, %4, %8 : tensor<30x48xi1>, tensor<30x48xf32>
  return %9 : tensor<30x48xf32>
})");
  EXPECT_EQ(o.kernels, 1);
}

TEST(HostBackendTest, Reductions) {
  ExpectSameResults(R"(
func.func @main(%x: tensor<33x70x5xf32>) -> (tensor<33xf32>, tensor<70xf32>, tensor<f32>, tensor<33x5xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %e = stablehlo.exponential %x : tensor<33x70x5xf32>
  %0 = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1, 2] : (tensor<33x70x5xf32>, tensor<f32>) -> tensor<33xf32>
  %1 = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [0, 2] : (tensor<33x70x5xf32>, tensor<f32>) -> tensor<70xf32>
  %2 = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<33x70x5xf32>, tensor<f32>) -> tensor<f32>
  %3 = stablehlo.reduce(%e init: %ninf) applies stablehlo.minimum across dimensions = [1] : (tensor<33x70x5xf32>, tensor<f32>) -> tensor<33x5xf32>
  return %0, %1, %2, %3 : tensor<33xf32>, tensor<70xf32>, tensor<f32>, tensor<33x5xf32>
})", Tolerance{/*ulps=*/4, /*n=*/33 * 70 * 5, /*scale=*/21});
}

TEST(HostBackendTest, LargeRowReductionSplitsAcrossThreads) {
  ExpectSameResults(R"(
func.func @main(%x: tensor<256x1024xf32>, %y: tensor<256x1024xf32>) -> tensor<256xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.multiply %x, %y : tensor<256x1024xf32>
  %1 = stablehlo.reduce(%0 init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<256x1024xf32>, tensor<f32>) -> tensor<256xf32>
  return %1 : tensor<256xf32>
})", Tolerance{/*ulps=*/0, /*n=*/1024, /*scale=*/9});
}

TEST(HostBackendTest, LargeFullAndColumnReductionsSplitAcrossThreads) {
  // Big enough that the input is split across threads with partial results per part; the s32
  // and max reductions are exact in any order.
  ExpectSameResults(R"(
func.func @main(%x: tensor<512x300xf32>, %i: tensor<512x300xi32>) -> (tensor<f32>, tensor<300xf32>, tensor<f32>, tensor<i32>, tensor<300xi32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %izero = stablehlo.constant dense<7> : tensor<i32>
  %sq = stablehlo.multiply %x, %x : tensor<512x300xf32>
  %0 = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [0, 1] : (tensor<512x300xf32>, tensor<f32>) -> tensor<f32>
  %1 = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<512x300xf32>, tensor<f32>) -> tensor<300xf32>
  %2 = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [0, 1] : (tensor<512x300xf32>, tensor<f32>) -> tensor<f32>
  %3 = stablehlo.reduce(%i init: %izero) applies stablehlo.add across dimensions = [0, 1] : (tensor<512x300xi32>, tensor<i32>) -> tensor<i32>
  %4 = stablehlo.reduce(%i init: %izero) applies stablehlo.maximum across dimensions = [0] : (tensor<512x300xi32>, tensor<i32>) -> tensor<300xi32>
  return %0, %1, %2, %3, %4 : tensor<f32>, tensor<300xf32>, tensor<f32>, tensor<i32>, tensor<300xi32>
})", Tolerance{/*ulps=*/0, /*n=*/512 * 300, /*scale=*/9});
}

TEST(HostBackendTest, RunInPlaceReadsAndWritesCallerMemory) {
  // Results written in place, a returned parameter, a constant and a duplicate (copies).
  std::unique_ptr<ir::Module> module = Parse(R"(
func.func @main(%x: tensor<300xf32>, %y: tensor<300xf32>) -> (tensor<300xf32>, tensor<300xf32>, tensor<2xf32>, tensor<300xf32>, tensor<f32>) {
  %c = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.multiply %x, %y : tensor<300xf32>
  %1 = stablehlo.add %0, %x : tensor<300xf32>
  %2 = stablehlo.reduce(%1 init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<300xf32>, tensor<f32>) -> tensor<f32>
  return %1, %y, %c, %1, %2 : tensor<300xf32>, tensor<300xf32>, tensor<2xf32>, tensor<300xf32>, tensor<f32>
})");
  ASSERT_NE(module, nullptr);
  passes::PassPipeline pipeline = passes::CreateDefaultPipeline();
  ASSERT_TRUE(pipeline.Run(*module).ok());
  for (HostBackend backend : {HostBackend::kCompiled, HostBackend::kEvaluator}) {
    auto exe = testing::Compile(*module->entry(), backend);
    ASSERT_TRUE(exe.ok()) << exe.status();
    std::vector<eval::EvalValue> args = RandomArgs(*module->entry(), 5);
    auto want = (*exe)->Run(RandomArgs(*module->entry(), 5));
    ASSERT_TRUE(want.ok()) << want.status();
    std::vector<const void*> in = {args[0].array.bytes().data(), args[1].array.bytes().data()};
    std::vector<std::vector<uint8_t>> out;
    std::vector<void*> out_ptrs;
    std::vector<uint64_t> sizes;
    for (const eval::EvalValue& v : *want) {
      out.emplace_back(v.array.bytes().size(), 0xAB);
      sizes.push_back(v.array.bytes().size());
    }
    for (auto& o : out) out_ptrs.push_back(o.data());
    ASSERT_TRUE((*exe)->RunInPlace(in, out_ptrs, sizes).ok());
    for (size_t i = 0; i < out.size(); ++i) {
      const auto bytes = (*want)[i].array.bytes();
      EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), out[i].begin())) << "result " << i;
    }
    // Wrong result sizes are an error, not a write past the end.
    sizes[0] -= 4;
    EXPECT_FALSE((*exe)->RunInPlace(in, out_ptrs, sizes).ok());
  }
}

TEST(HostBackendTest, IntegersAndPredicates) {
  ExpectSameResults(R"(
func.func @main(%a: tensor<17x9xi32>, %b: tensor<17x9xi32>, %p: tensor<17x9xi1>, %l: tensor<17x9xi64>) -> (tensor<17x9xi32>, tensor<17x9xi1>, tensor<9xi64>, tensor<17x9xf64>) {
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %0 = stablehlo.multiply %a, %b : tensor<17x9xi32>
  %1 = stablehlo.subtract %0, %a : tensor<17x9xi32>
  %2 = stablehlo.maximum %1, %b : tensor<17x9xi32>
  %3 = stablehlo.abs %2 : tensor<17x9xi32>
  %4 = stablehlo.compare LT, %a, %b, SIGNED : (tensor<17x9xi32>, tensor<17x9xi32>) -> tensor<17x9xi1>
  %5 = stablehlo.xor %4, %p : tensor<17x9xi1>
  %6 = stablehlo.not %5 : tensor<17x9xi1>
  %7 = stablehlo.convert %a : (tensor<17x9xi32>) -> tensor<17x9xi64>
  %8 = stablehlo.add %7, %l : tensor<17x9xi64>
  %9 = stablehlo.reduce(%8 init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<17x9xi64>, tensor<i64>) -> tensor<9xi64>
  %10 = stablehlo.convert %8 : (tensor<17x9xi64>) -> tensor<17x9xf64>
  %11 = stablehlo.sqrt %10 : tensor<17x9xf64>
  return %3, %6, %9, %11 : tensor<17x9xi32>, tensor<17x9xi1>, tensor<9xi64>, tensor<17x9xf64>
})");
}

// The threefry random-bit generator's ops (u64 iota and converts, shifts of every kind, a
// same-width bitcast to float, as jax.random lowers them) run in fused loop kernels (one for the
// float draw, one for the independent i32 output) that match the evaluator bit for bit, shift
// amounts of the width or more included.
TEST(HostBackendTest, ThreefryOpsFuseIntoOneLoop) {
  Outcome o = ExpectSameResults(R"(
func.func @main(%a: tensor<3x77xui32>, %k: tensor<3x77xui32>, %s: tensor<3x77xi32>) -> (tensor<3x77xf32>, tensor<3x77xi32>, tensor<3x77xi1>) {
  %i = stablehlo.iota dim = 1 : tensor<3x77xui64>
  %hi = stablehlo.constant dense<32> : tensor<3x77xui64>
  %0 = stablehlo.shift_right_logical %i, %hi : tensor<3x77xui64>
  %1 = stablehlo.convert %0 : (tensor<3x77xui64>) -> tensor<3x77xui32>
  %2 = stablehlo.convert %i : (tensor<3x77xui64>) -> tensor<3x77xui32>
  %3 = stablehlo.add %2, %a : tensor<3x77xui32>
  %m = stablehlo.constant dense<63> : tensor<3x77xui32>
  %km = stablehlo.and %k, %m : tensor<3x77xui32>
  %4 = stablehlo.shift_left %3, %km : tensor<3x77xui32>
  %5 = stablehlo.shift_right_logical %3, %km : tensor<3x77xui32>
  %6 = stablehlo.or %4, %5 : tensor<3x77xui32>
  %7 = stablehlo.xor %6, %1 : tensor<3x77xui32>
  %nine = stablehlo.constant dense<9> : tensor<3x77xui32>
  %8 = stablehlo.shift_right_logical %7, %nine : tensor<3x77xui32>
  %one = stablehlo.constant dense<1065353216> : tensor<3x77xui32>
  %9 = stablehlo.or %8, %one : tensor<3x77xui32>
  %10 = stablehlo.bitcast_convert %9 : (tensor<3x77xui32>) -> tensor<3x77xf32>
  %m2 = stablehlo.constant dense<63> : tensor<3x77xi32>
  %sm = stablehlo.and %s, %m2 : tensor<3x77xi32>
  %11 = stablehlo.shift_right_arithmetic %s, %sm : tensor<3x77xi32>
  %12 = stablehlo.shift_left %s, %sm : tensor<3x77xi32>
  %13 = stablehlo.add %11, %12 : tensor<3x77xi32>
  %h = stablehlo.constant dense<0.5> : tensor<3x77xf32>
  %14 = stablehlo.compare LT, %10, %h : (tensor<3x77xf32>, tensor<3x77xf32>) -> tensor<3x77xi1>
  return %10, %13, %14 : tensor<3x77xf32>, tensor<3x77xi32>, tensor<3x77xi1>
})");
  EXPECT_EQ(o.kernels, 2);
  EXPECT_NE(o.cost_report.find("fast kernels: 2 of 2"), std::string::npos) << o.cost_report;
}

// Forty rounds in which each value feeds two ops (a DAG like threefry's) under two slices, as
// jax.random.bernoulli lowers: the fused loop asks the rounds for other values than the chunk's,
// and must compute each round once per request rather than once per path through the DAG (2^40).
TEST(HostBackendTest, SharedRoundsUnderSlicesAreComputedOncePerRequest) {
  std::string body;
  std::string a = "%a", b = "%b";
  for (int i = 0; i < 40; ++i) {
    const std::string s = absl::StrCat("%s", i), x = absl::StrCat("%x", i), t = absl::StrCat("%t", i),
                      r = absl::StrCat("%r", i), y = absl::StrCat("%y", i);
    absl::StrAppend(&body, "  ", s, " = stablehlo.add ", a, ", ", b, " : tensor<2x77xui32>\n");
    absl::StrAppend(&body, "  ", x, " = stablehlo.shift_left ", b, ", %c13 : tensor<2x77xui32>\n");
    absl::StrAppend(&body, "  ", t, " = stablehlo.shift_right_logical ", b, ", %c19 : tensor<2x77xui32>\n");
    absl::StrAppend(&body, "  ", r, " = stablehlo.or ", x, ", ", t, " : tensor<2x77xui32>\n");
    absl::StrAppend(&body, "  ", y, " = stablehlo.xor ", r, ", ", s, " : tensor<2x77xui32>\n");
    a = s;
    b = y;
  }
  Outcome o = ExpectSameResults(absl::StrCat(R"(
func.func @main(%a: tensor<2x77xui32>, %b: tensor<2x77xui32>, %p: tensor<77xui32>) -> tensor<77xi1> {
  %c13 = stablehlo.constant dense<13> : tensor<2x77xui32>
  %c19 = stablehlo.constant dense<19> : tensor<2x77xui32>
)", body, "  %m = stablehlo.multiply ", a, ", ", b, R"( : tensor<2x77xui32>
  %lo = stablehlo.slice %m [0:1, 0:77] : (tensor<2x77xui32>) -> tensor<1x77xui32>
  %hi = stablehlo.slice %m [1:2, 0:77] : (tensor<2x77xui32>) -> tensor<1x77xui32>
  %l = stablehlo.reshape %lo : (tensor<1x77xui32>) -> tensor<77xui32>
  %h = stablehlo.reshape %hi : (tensor<1x77xui32>) -> tensor<77xui32>
  %d = stablehlo.subtract %h, %l : tensor<77xui32>
  %w = stablehlo.compare LT, %d, %p : (tensor<77xui32>, tensor<77xui32>) -> tensor<77xi1>
  return %w : tensor<77xi1>
})"));
  EXPECT_NE(o.cost_report.find("fast kernels: 1 of 1"), std::string::npos) << o.cost_report;
}

// x @ x: the dot kernel has one input (both operands are the same value) and still runs the
// fast dot, not the evaluator.
TEST(HostBackendTest, DotOfAValueWithItselfRunsTheFastDot) {
  Outcome o = ExpectSameResults(R"(
func.func @main(%x: tensor<48x48xf32>) -> tensor<48x48xf32> {
  %0 = stablehlo.dot_general %x, %x, contracting_dims = [1] x [0] : (tensor<48x48xf32>, tensor<48x48xf32>) -> tensor<48x48xf32>
  return %0 : tensor<48x48xf32>
})", Tolerance{.dot = true});
  EXPECT_NE(o.cost_report.find("fast kernels: 1 of 1"), std::string::npos) << o.cost_report;
}

TEST(HostBackendTest, DotGeneralVariants) {
  ExpectSameResults(R"(
func.func @main(%a: tensor<100x784xf32>, %w: tensor<784x10xf32>, %g: tensor<100x10xf32>, %p: tensor<4x8x16xf32>, %q: tensor<4x32x16xf32>, %r: tensor<16x3x5xf32>, %s: tensor<5x16x7xf32>) -> (tensor<100x10xf32>, tensor<10x784xf32>, tensor<4x8x32xf32>, tensor<3x7xf32>) {
  %0 = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : (tensor<100x784xf32>, tensor<784x10xf32>) -> tensor<100x10xf32>
  %1 = stablehlo.dot_general %g, %a, contracting_dims = [0] x [0] : (tensor<100x10xf32>, tensor<100x784xf32>) -> tensor<10x784xf32>
  %2 = stablehlo.dot_general %p, %q, batching_dims = [0] x [0], contracting_dims = [2] x [2] : (tensor<4x8x16xf32>, tensor<4x32x16xf32>) -> tensor<4x8x32xf32>
  %3 = stablehlo.dot_general %r, %s, contracting_dims = [0, 2] x [1, 0] : (tensor<16x3x5xf32>, tensor<5x16x7xf32>) -> tensor<3x7xf32>
  return %0, %1, %2, %3 : tensor<100x10xf32>, tensor<10x784xf32>, tensor<4x8x32xf32>, tensor<3x7xf32>
})", kDotTolerance);
}

TEST(HostBackendTest, SoftmaxTrainingStepLikeMainJob) {
  // Everything but the dots bit for bit is checked above; here the whole step with dots.
  Outcome o = ExpectSameResults(R"(
func.func private @log_softmax(%0: tensor<100x10xf32>) -> (tensor<100x10xf32>, tensor<100x1xf32>) {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %3 = stablehlo.reduce(%0 init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<100x10xf32>, tensor<f32>) -> tensor<100xf32>
  %6 = stablehlo.broadcast_in_dim %3, dims = [0] : (tensor<100xf32>) -> tensor<100x1xf32>
  %7 = stablehlo.broadcast_in_dim %6, dims = [0, 1] : (tensor<100x1xf32>) -> tensor<100x10xf32>
  %8 = stablehlo.subtract %0, %7 : tensor<100x10xf32>
  %9 = stablehlo.exponential %8 : tensor<100x10xf32>
  %10 = stablehlo.reduce(%9 init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<100x10xf32>, tensor<f32>) -> tensor<100xf32>
  %11 = stablehlo.broadcast_in_dim %10, dims = [0] : (tensor<100xf32>) -> tensor<100x1xf32>
  return %9, %11 : tensor<100x10xf32>, tensor<100x1xf32>
}
func.func @main(%w: tensor<784x10xf32>, %b: tensor<10xf32>, %x: tensor<100x784xf32>, %y: tensor<100x10xf32>) -> (tensor<784x10xf32>, tensor<10xf32>) {
  %half = stablehlo.constant dense<0.5> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %8 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<100x784xf32>, tensor<784x10xf32>) -> tensor<100x10xf32>
  %9 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<10xf32>) -> tensor<1x10xf32>
  %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1] : (tensor<1x10xf32>) -> tensor<100x10xf32>
  %11 = stablehlo.add %8, %10 : tensor<100x10xf32>
  %12:2 = func.call @log_softmax(%11) : (tensor<100x10xf32>) -> (tensor<100x10xf32>, tensor<100x1xf32>)
  %13 = stablehlo.broadcast_in_dim %12#1, dims = [0, 1] : (tensor<100x1xf32>) -> tensor<100x10xf32>
  %14 = stablehlo.divide %12#0, %13 : tensor<100x10xf32>
  %15 = stablehlo.subtract %14, %y : tensor<100x10xf32>
  %20 = stablehlo.reduce(%15 init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<100x10xf32>, tensor<f32>) -> tensor<10xf32>
  %23 = stablehlo.dot_general %15, %x, contracting_dims = [0] x [0] : (tensor<100x10xf32>, tensor<100x784xf32>) -> tensor<10x784xf32>
  %24 = stablehlo.transpose %23, dims = [1, 0] : (tensor<10x784xf32>) -> tensor<784x10xf32>
  %25 = stablehlo.broadcast_in_dim %half, dims = [] : (tensor<f32>) -> tensor<784x10xf32>
  %26 = stablehlo.multiply %25, %24 : tensor<784x10xf32>
  %27 = stablehlo.subtract %w, %26 : tensor<784x10xf32>
  %28 = stablehlo.broadcast_in_dim %half, dims = [] : (tensor<f32>) -> tensor<10xf32>
  %29 = stablehlo.multiply %28, %20 : tensor<10xf32>
  %30 = stablehlo.subtract %b, %29 : tensor<10xf32>
  return %27, %30 : tensor<784x10xf32>, tensor<10xf32>
})", kDotTolerance);
  // dot | bias add (written) with its row max | exp(x - max) (written) with its row sum |
  // exp/sum - y (written) with its sum over the batch and the b update as epilogue | dot |
  // w update (transpose fused). Without multi-output fusion: 10 kernels.
  EXPECT_EQ(o.kernels, 6);
}

TEST(HostBackendTest, FallbackOpsRunThroughTheOpTable) {
  // sort and while are not fast kernels: they run through the op table, mixed with fused
  // kernels before and after (the concatenate fuses with the negate and multiply around it when
  // the code generator is on, and runs through the op table without it).
  Outcome o = ExpectSameResults(R"(
func.func @main(%x: tensor<40xf32>, %y: tensor<24xf32>) -> (tensor<64xf32>, tensor<40xf32>) {
  %0 = stablehlo.exponential %x : tensor<40xf32>
  %1 = "stablehlo.sort"(%0) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<40xf32>) -> tensor<40xf32>
  %2 = stablehlo.negate %y : tensor<24xf32>
  %3 = stablehlo.concatenate %1, %2, dim = 0 : (tensor<40xf32>, tensor<24xf32>) -> tensor<64xf32>
  %4 = stablehlo.multiply %3, %3 : tensor<64xf32>
  %init = stablehlo.constant dense<0> : tensor<i32>
  %w:2 = stablehlo.while(%i = %init, %v = %x) : tensor<i32>, tensor<40xf32>
    cond {
      %lim = stablehlo.constant dense<3> : tensor<i32>
      %c = stablehlo.compare LT, %i, %lim : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %n = stablehlo.add %i, %one : tensor<i32>
      %s = stablehlo.sine %v : tensor<40xf32>
      stablehlo.return %n, %s : tensor<i32>, tensor<40xf32>
    }
  return %4, %w#1 : tensor<64xf32>, tensor<40xf32>
})", Tolerance{/*ulps=*/4});
  EXPECT_GE(o.kernels, 4);
}

TEST(HostBackendTest, LoopsWithCapturesRunCompiledAndUpdateInPlace) {
  // A scan as JAX lowers it: the trip count and a weight captured from the entry (made loop
  // operands by the loop-captures pass), a carried output array written one row per iteration
  // by dynamic_update_slice (in place), a pass-through value, and an elementwise state update.
  // Nested: an inner loop in the body captures the body's value. Nothing runs through the
  // evaluator's op table.
  Outcome o = ExpectSameResults(R"(
func.func @main(%xs: tensor<6x8xf32>, %w: tensor<8xf32>) -> (tensor<6x8xf32>, tensor<8xf32>, tensor<6x8xf32>) {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %six = stablehlo.constant dense<6> : tensor<i32>
  %h0 = stablehlo.constant dense<0.5> : tensor<8xf32>
  %out0 = stablehlo.constant dense<0.0> : tensor<6x8xf32>
  %r:4 = stablehlo.while(%i = %zero, %h = %h0, %out = %out0, %keep = %xs) : tensor<i32>, tensor<8xf32>, tensor<6x8xf32>, tensor<6x8xf32>
    cond {
      %c = stablehlo.compare LT, %i, %six : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %z = stablehlo.constant dense<0> : tensor<i32>
      %row = stablehlo.dynamic_slice %keep, %i, %z, sizes = [1, 8] : (tensor<6x8xf32>, tensor<i32>, tensor<i32>) -> tensor<1x8xf32>
      %x = stablehlo.reshape %row : (tensor<1x8xf32>) -> tensor<8xf32>
      %hw = stablehlo.multiply %h, %w : tensor<8xf32>
      %pre = stablehlo.add %hw, %x : tensor<8xf32>
      %two = stablehlo.constant dense<2> : tensor<i32>
      %inner:2 = stablehlo.while(%k = %z, %v = %pre) : tensor<i32>, tensor<8xf32>
        cond {
          %ck = stablehlo.compare LT, %k, %two : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %ck : tensor<i1>
        } do {
          %t = stablehlo.tanh %v : tensor<8xf32>
          %u = stablehlo.add %t, %hw : tensor<8xf32>
          %k1 = stablehlo.add %k, %one : tensor<i32>
          stablehlo.return %k1, %u : tensor<i32>, tensor<8xf32>
        }
      %upd = stablehlo.reshape %inner#1 : (tensor<8xf32>) -> tensor<1x8xf32>
      %out1 = stablehlo.dynamic_update_slice %out, %upd, %i, %z : (tensor<6x8xf32>, tensor<1x8xf32>, tensor<i32>, tensor<i32>) -> tensor<6x8xf32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %i1, %inner#1, %out1, %keep : tensor<i32>, tensor<8xf32>, tensor<6x8xf32>, tensor<6x8xf32>
    }
  return %r#2, %r#1, %r#3 : tensor<6x8xf32>, tensor<8xf32>, tensor<6x8xf32>
})", Tolerance{/*ulps=*/8});
  // The loops' bodies have their own reports; every program's kernels are all fast.
  EXPECT_NE(o.cost_report.find(" body:"), std::string::npos) << o.cost_report;
  EXPECT_EQ(o.cost_report.find("evaluator runs"), std::string::npos) << o.cost_report;
  int programs = 0;
  for (size_t at = o.cost_report.find("fast kernels: "); at != std::string::npos;
       at = o.cost_report.find("fast kernels: ", at + 1)) {
    int fast = -1, all = -2;
    ASSERT_EQ(std::sscanf(o.cost_report.c_str() + at, "fast kernels: %d of %d", &fast, &all), 2);
    EXPECT_EQ(fast, all) << o.cost_report;
    ++programs;
  }
  EXPECT_EQ(programs, 5);  // the entry, two conditions, two bodies
}

TEST(HostBackendTest, ConditionalsWithCapturesRunCompiled) {
  // lax.cond and lax.switch as JAX lowers them: branches that take no arguments and read the
  // entry's values (made operands and branch parameters by the captures pass). Both if branches,
  // case indices in range, above and below it (the last branch runs), a selector computed from
  // the data, a branch returning a captured value as it is, a loop inside a branch and a
  // conditional inside a loop body. Nothing runs through the evaluator's op table.
  Outcome o = ExpectSameResults(R"(
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) {
  %t = stablehlo.constant dense<true> : tensor<i1>
  %f = stablehlo.constant dense<false> : tensor<i1>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c7 = stablehlo.constant dense<7> : tensor<i32>
  %cm = stablehlo.constant dense<-3> : tensor<i32>
  %wb = stablehlo.broadcast_in_dim %w, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %a = "stablehlo.if"(%t) ({
    %e = stablehlo.exponential %x : tensor<4x8xf32>
    stablehlo.return %e : tensor<4x8xf32>
  }, {
    stablehlo.return %x : tensor<4x8xf32>
  }) : (tensor<i1>) -> tensor<4x8xf32>
  %b = "stablehlo.if"(%f) ({
    %e = stablehlo.exponential %x : tensor<4x8xf32>
    stablehlo.return %e : tensor<4x8xf32>
  }, {
    stablehlo.return %x : tensor<4x8xf32>
  }) : (tensor<i1>) -> tensor<4x8xf32>
  %c = "stablehlo.case"(%c1) ({
    stablehlo.return %x : tensor<4x8xf32>
  }, {
    %m = stablehlo.multiply %x, %wb : tensor<4x8xf32>
    stablehlo.return %m : tensor<4x8xf32>
  }, {
    %n = stablehlo.negate %wb : tensor<4x8xf32>
    stablehlo.return %n : tensor<4x8xf32>
  }) : (tensor<i32>) -> tensor<4x8xf32>
  %d = "stablehlo.case"(%c7) ({
    stablehlo.return %x : tensor<4x8xf32>
  }, {
    %n = stablehlo.tanh %a : tensor<4x8xf32>
    stablehlo.return %n : tensor<4x8xf32>
  }) : (tensor<i32>) -> tensor<4x8xf32>
  %e = "stablehlo.case"(%cm) ({
    stablehlo.return %x : tensor<4x8xf32>
  }, {
    %n = stablehlo.subtract %c, %b : tensor<4x8xf32>
    stablehlo.return %n : tensor<4x8xf32>
  }) : (tensor<i32>) -> tensor<4x8xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<f32>
  %pos = stablehlo.compare GT, %sum, %zero : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %g = "stablehlo.if"(%pos) ({
    %i0 = stablehlo.constant dense<0> : tensor<i32>
    %three = stablehlo.constant dense<3> : tensor<i32>
    %r:2 = stablehlo.while(%i = %i0, %v = %w) : tensor<i32>, tensor<8xf32>
      cond {
        %lt = stablehlo.compare LT, %i, %three : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %lt : tensor<i1>
      } do {
        %v1 = stablehlo.sine %v : tensor<8xf32>
        %v2 = stablehlo.add %v1, %w : tensor<8xf32>
        %i1 = stablehlo.add %i, %c1 : tensor<i32>
        stablehlo.return %i1, %v2 : tensor<i32>, tensor<8xf32>
      }
    stablehlo.return %r#1 : tensor<8xf32>
  }, {
    %n = stablehlo.cosine %w : tensor<8xf32>
    stablehlo.return %n : tensor<8xf32>
  }) : (tensor<i1>) -> tensor<8xf32>
  %i0 = stablehlo.constant dense<0> : tensor<i32>
  %four = stablehlo.constant dense<4> : tensor<i32>
  %two = stablehlo.constant dense<2> : tensor<i32>
  %l:2 = stablehlo.while(%i = %i0, %v = %x) : tensor<i32>, tensor<4x8xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %four : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %sel = stablehlo.remainder %i, %two : tensor<i32>
      %u = "stablehlo.case"(%sel) ({
        %m = stablehlo.multiply %v, %wb : tensor<4x8xf32>
        stablehlo.return %m : tensor<4x8xf32>
      }, {
        %m = stablehlo.add %v, %x : tensor<4x8xf32>
        stablehlo.return %m : tensor<4x8xf32>
      }) : (tensor<i32>) -> tensor<4x8xf32>
      %i1 = stablehlo.add %i, %c1 : tensor<i32>
      stablehlo.return %i1, %u : tensor<i32>, tensor<4x8xf32>
    }
  return %a, %b, %c, %d, %e, %g, %l#1 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>
})", Tolerance{/*ulps=*/8});
  EXPECT_NE(o.cost_report.find(" branch 1:"), std::string::npos) << o.cost_report;
  EXPECT_EQ(o.cost_report.find("evaluator runs"), std::string::npos) << o.cost_report;
  for (size_t at = o.cost_report.find("fast kernels: "); at != std::string::npos;
       at = o.cost_report.find("fast kernels: ", at + 1)) {
    int fast = -1, all = -2;
    ASSERT_EQ(std::sscanf(o.cost_report.c_str() + at, "fast kernels: %d of %d", &fast, &all), 2);
    EXPECT_EQ(fast, all) << o.cost_report;
  }
}

TEST(HostBackendTest, GradientsOfGroupedConvolutionsRunOnTheFastConvolution) {
  // A depthwise-style convolution and both its gradients as JAX lowers them: the kernel gradient
  // is batch-grouped, which the pipeline makes feature-grouped; nothing runs on the evaluator.
  Outcome o = ExpectSameResults(R"(
func.func @main(%x: tensor<2x11x10x4xf32>, %w: tensor<3x3x2x6xf32>, %g: tensor<2x6x5x6xf32>) -> (tensor<2x6x5x6xf32>, tensor<3x3x2x6xf32>) {
  %y = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[1, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 2 : i64} : (tensor<2x11x10x4xf32>, tensor<3x3x2x6xf32>) -> tensor<2x6x5x6xf32>
  %dw = stablehlo.convolution(%x, %g) dim_numbers = [f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f], window = {stride = [1, 1], pad = [[1, 1], [0, 1]], lhs_dilate = [1, 1], rhs_dilate = [2, 2]} {batch_group_count = 2 : i64, feature_group_count = 1 : i64} : (tensor<2x11x10x4xf32>, tensor<2x6x5x6xf32>) -> tensor<3x3x2x6xf32>
  return %y, %dw : tensor<2x6x5x6xf32>, tensor<3x3x2x6xf32>
})", kDotTolerance);
  EXPECT_EQ(o.cost_report.find("  evaluator "), std::string::npos) << o.cost_report;
}

TEST(HostBackendTest, ReductionsOnlyTheCodeGeneratorTakesRunCompiledOnOneRow) {
  // optax's "all gradients finite" check: a pred fold over a whole array (one row, fewer rows
  // than threads), then the scalar epilogue. It must not fall to the evaluator's op table for
  // want of rows.
  Outcome o = ExpectSameResults(R"(
func.func @main(%x: tensor<512x256xf32>, %g: tensor<64x10xf32>) -> tensor<f32> {
  %t = stablehlo.constant dense<true> : tensor<i1>
  %inf = stablehlo.constant dense<0x7F800000> : tensor<512x256xf32>
  %big = stablehlo.constant dense<3.0> : tensor<512x256xf32>
  %m = stablehlo.compare GT, %x, %big : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<512x256xi1>
  %y = stablehlo.select %m, %inf, %x : tensor<512x256xi1>, tensor<512x256xf32>
  %a = stablehlo.is_finite %y : (tensor<512x256xf32>) -> tensor<512x256xi1>
  %r = stablehlo.reduce(%a init: %t) applies stablehlo.and across dimensions = [0, 1] : (tensor<512x256xi1>, tensor<i1>) -> tensor<i1>
  %b = stablehlo.is_finite %g : (tensor<64x10xf32>) -> tensor<64x10xi1>
  %s = stablehlo.reduce(%b init: %t) applies stablehlo.and across dimensions = [0, 1] : (tensor<64x10xi1>, tensor<i1>) -> tensor<i1>
  %both = stablehlo.and %r, %s : tensor<i1>
  %f = stablehlo.convert %both : (tensor<i1>) -> tensor<f32>
  return %f : tensor<f32>
})");
  EXPECT_EQ(o.cost_report.find("evaluator "), std::string::npos) << o.cost_report;
}

TEST(HostBackendTest, CalleeRegionsCapturingConstantsAreInlinedAndCompiled) {
  // jnp.sort's lowering: a private function whose region reads the function's constants. It is
  // inlined (the region's reads mapped to the copies) and the constants are copied into the
  // region, so nothing captures the entry's values and the compiled path takes the program.
  Outcome o = ExpectSameResults(R"(
func.func private @fold(%x: tensor<6x40xf32>) -> tensor<6xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %cap = stablehlo.constant dense<2.5> : tensor<f32>
  %r = stablehlo.reduce(%x init: %zero) across dimensions = [1] : (tensor<6x40xf32>, tensor<f32>) -> tensor<6xf32>
    reducer(%a: tensor<f32>, %b: tensor<f32>) {
      %c = stablehlo.minimum %b, %cap : tensor<f32>
      %s = stablehlo.add %a, %c : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }
  return %r : tensor<6xf32>
}
func.func @main(%x: tensor<6x40xf32>) -> tensor<6xf32> {
  %r = func.call @fold(%x) : (tensor<6x40xf32>) -> tensor<6xf32>
  return %r : tensor<6xf32>
})");
  EXPECT_EQ(o.cost_report.find("the reference evaluator runs"), std::string::npos)
      << o.cost_report;
  EXPECT_NE(o.cost_report.find("fast kernels: 1 of 1"), std::string::npos) << o.cost_report;
}

TEST(HostBackendTest, SortsRunWithACompiledComparator) {
  // jnp.argsort's sort of (keys, iota) with its total-order comparator over NaN-canonicalized
  // keys, along the last and the first dim, an unread values result, and an integer key sort
  // with ties (stability): the merge sort with the compiled comparator gives the evaluator's
  // permutation.
  Outcome o = ExpectSameResults(R"(
func.func @main(%x: tensor<9x70xf32>, %k: tensor<9x70xi32>) -> (tensor<9x70xi32>, tensor<9x70xf32>, tensor<9x70xi32>, tensor<9x70xf32>) {
  %i = stablehlo.iota dim = 1 : tensor<9x70xi32>
  %s:2 = "stablehlo.sort"(%x, %i) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %ia: tensor<i32>, %ib: tensor<i32>):
    %nan = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %zero = stablehlo.constant dense<0.0> : tensor<f32>
    %az = stablehlo.compare EQ, %a, %zero, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %a0 = stablehlo.select %az, %zero, %a : tensor<i1>, tensor<f32>
    %an = stablehlo.compare NE, %a, %a, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %a1 = stablehlo.select %an, %nan, %a0 : tensor<i1>, tensor<f32>
    %bz = stablehlo.compare EQ, %b, %zero, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %b0 = stablehlo.select %bz, %zero, %b : tensor<i1>, tensor<f32>
    %bn = stablehlo.compare NE, %b, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %b1 = stablehlo.select %bn, %nan, %b0 : tensor<i1>, tensor<f32>
    %lt = stablehlo.compare LT, %a1, %b1, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) {dimension = 1 : i64, is_stable = true} : (tensor<9x70xf32>, tensor<9x70xi32>) -> (tensor<9x70xf32>, tensor<9x70xi32>)
  %c:2 = "stablehlo.sort"(%x, %k) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %ka: tensor<i32>, %kb: tensor<i32>):
    %gt = stablehlo.compare GT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %gt : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<9x70xf32>, tensor<9x70xi32>) -> (tensor<9x70xf32>, tensor<9x70xi32>)
  %t:2 = "stablehlo.sort"(%k, %x) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>, %xa: tensor<f32>, %xb: tensor<f32>):
    %two = stablehlo.constant dense<4> : tensor<i32>
    %ra = stablehlo.remainder %a, %two : tensor<i32>
    %rb = stablehlo.remainder %b, %two : tensor<i32>
    %lt = stablehlo.compare LT, %ra, %rb, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) {dimension = 1 : i64, is_stable = true} : (tensor<9x70xi32>, tensor<9x70xf32>) -> (tensor<9x70xi32>, tensor<9x70xf32>)
  return %s#1, %c#0, %t#0, %t#1 : tensor<9x70xi32>, tensor<9x70xf32>, tensor<9x70xi32>, tensor<9x70xf32>
})");
  EXPECT_EQ(o.cost_report.find("  evaluator "), std::string::npos) << o.cost_report;
  // The three comparators and the iota kernel.
  EXPECT_NE(o.cost_report.find("llvm kernels: 4 of 4"), std::string::npos) << o.cost_report;
}

TEST(HostBackendTest, FuturesAndCompositeRegionsRunThroughTheOpTable) {
  // Futures are values of their own kind (not arena buffers): an async slice and an async
  // dynamic_update_slice stay in flight across fused kernels; a composite with a region runs
  // its decomposition.
  Outcome o = ExpectSameResults(R"(
func.func private @decomposition(%a: tensor<16xf32>) -> tensor<16xf32> {
  %0 = stablehlo.tanh %a : tensor<16xf32>
  return %0 : tensor<16xf32>
}
func.func @main(%x: tensor<16xf32>, %u: tensor<4xf32>, %i: tensor<i32>) -> (tensor<16xf32>, tensor<6xf32>) {
  %f = "stablehlo.async_start"(%x) ({
    ^bb0(%a: tensor<16xf32>):
      %s = stablehlo.slice %a [3:9] : (tensor<16xf32>) -> tensor<6xf32>
      stablehlo.return %s : tensor<6xf32>
  }) : (tensor<16xf32>) -> !stablehlo.future<tensor<6xf32>>
  %e = stablehlo.exponential %x : tensor<16xf32>
  %g = "stablehlo.async_start"(%e, %u, %i) ({
    ^bb0(%a: tensor<16xf32>, %b: tensor<4xf32>, %j: tensor<i32>):
      %s = stablehlo.dynamic_update_slice %a, %b, %j : (tensor<16xf32>, tensor<4xf32>, tensor<i32>) -> tensor<16xf32>
      stablehlo.return %s : tensor<16xf32>
  }) : (tensor<16xf32>, tensor<4xf32>, tensor<i32>) -> !stablehlo.future<tensor<16xf32>>
  %d = "stablehlo.async_done"(%g) : (!stablehlo.future<tensor<16xf32>>) -> tensor<16xf32>
  %c = "stablehlo.composite"(%d) ({
    ^bb0(%b: tensor<16xf32>):
      "stablehlo.return"(%b) : (tensor<16xf32>) -> ()
  }) {name = "my.tanh", decomposition = @decomposition} : (tensor<16xf32>) -> tensor<16xf32>
  %m = stablehlo.multiply %c, %x : tensor<16xf32>
  %r = "stablehlo.async_done"(%f) : (!stablehlo.future<tensor<6xf32>>) -> tensor<6xf32>
  return %m, %r : tensor<16xf32>, tensor<6xf32>
})", Tolerance{/*ulps=*/4});
  EXPECT_GE(o.kernels, 4);
}

TEST(HostBackendTest, BuffersThroughPinUnpinAndCreateBuffer) {
  // StableHLO's buffer type: Pin makes a buffer of a tensor, Unpin gives its contents back,
  // CreateBuffer makes one (zeros here); a buffer may cross a call. On both backends the
  // results are the input, and zeros.
  const std::string text = R"(
func.func private @keep(%b: memref<6xf32>) -> memref<6xf32> {
  return %b : memref<6xf32>
}
func.func @main(%x: tensor<6xf32>) -> (tensor<6xf32>, tensor<3xi32>) {
  %b = stablehlo.custom_call @Pin(%x) {api_version = 4 : i32} : (tensor<6xf32>) -> memref<6xf32>
  %k = func.call @keep(%b) : (memref<6xf32>) -> memref<6xf32>
  %y = stablehlo.custom_call @Unpin(%k) {api_version = 4 : i32} : (memref<6xf32>) -> tensor<6xf32>
  %c = stablehlo.custom_call @CreateBuffer() {api_version = 4 : i32} : () -> memref<3xi32>
  %z = stablehlo.custom_call @Unpin(%c) {api_version = 4 : i32} : (memref<3xi32>) -> tensor<3xi32>
  return %y, %z : tensor<6xf32>, tensor<3xi32>
})";
  for (HostBackend backend : {HostBackend::kEvaluator, HostBackend::kCompiled}) {
    Outcome o = RunBackend(text, backend, 5);
    ASSERT_EQ(o.values.size(), 2u);
    std::unique_ptr<ir::Module> module = Parse(text);
    ASSERT_NE(module, nullptr);
    std::vector<eval::EvalValue> args = RandomArgs(*module->entry(), 5);
    EXPECT_TRUE(o.values[0].array == args[0].array) << o.values[0].array.ToString();
    const absl::Span<const int32_t> zeros = o.values[1].array.data<int32_t>().value();
    for (int32_t v : zeros) EXPECT_EQ(v, 0);
  }
}

std::string CompiledCostReport(const std::string& text) {
  std::unique_ptr<ir::Module> module = Parse(text);
  if (module == nullptr) return "";
  passes::PassPipeline pipeline = passes::CreateDefaultPipeline();
  EXPECT_TRUE(pipeline.Run(*module).ok());
  auto exe = testing::Compile(*module->entry());
  EXPECT_TRUE(exe.ok()) << exe.status();
  return exe.ok() ? (*exe)->cost_report() : "";
}

TEST(HostBackendTest, RowGroupsMatchTheEvaluator) {
  // Softmax over 40 columns (rows never line up with the kernels' chunks) and a layernorm over the
  // last dim of a 3-D array (rows are [4, 24]): each runs as one row group, tile by tile.
  const std::string softmax = R"(
func.func @main(%x: tensor<96x40xf32>) -> (tensor<96x40xf32>, tensor<96xf32>) {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<96x40xf32>, tensor<f32>) -> tensor<96xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<96xf32>) -> tensor<96x40xf32>
  %d = stablehlo.subtract %x, %mb : tensor<96x40xf32>
  %e = stablehlo.exponential %d : tensor<96x40xf32>
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<96x40xf32>, tensor<f32>) -> tensor<96xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<96xf32>) -> tensor<96x40xf32>
  %r = stablehlo.divide %e, %sb : tensor<96x40xf32>
  return %r, %m : tensor<96x40xf32>, tensor<96xf32>
})";
  ExpectSameResults(softmax, Tolerance{/*ulps=*/8, /*n=*/40, /*scale=*/1});
  // max | exp(x - max) with its row sum | divide
  EXPECT_NE(CompiledCostReport(softmax).find("row group: kernels 0-2 over 96 rows"),
            std::string::npos)
      << CompiledCostReport(softmax);
  // Over 2003 rows: many tiles (of a few hundred rows) on both pool threads, the last one short;
  // the exponentials live in each tile's scratch, not in the arena.
  std::string tall = softmax;
  for (size_t at = tall.find("96x"); at != std::string::npos; at = tall.find("96x", at)) {
    tall.replace(at, 2, "2003");
  }
  for (size_t at = tall.find("<96xf32>"); at != std::string::npos; at = tall.find("<96xf32>", at)) {
    tall.replace(at + 1, 2, "2003");
  }
  ExpectSameResults(tall, Tolerance{/*ulps=*/8, /*n=*/40, /*scale=*/1});
  EXPECT_NE(CompiledCostReport(tall).find("over 2003 rows"), std::string::npos)
      << CompiledCostReport(tall);
  const std::string layernorm = R"(
func.func @main(%x: tensor<4x24x40xf32>, %g: tensor<40xf32>) -> tensor<4x24x40xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %n = stablehlo.constant dense<40.0> : tensor<4x24xf32>
  %eps = stablehlo.constant dense<1.0e-5> : tensor<4x24xf32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [2] : (tensor<4x24x40xf32>, tensor<f32>) -> tensor<4x24xf32>
  %mean = stablehlo.divide %s, %n : tensor<4x24xf32>
  %mb = stablehlo.broadcast_in_dim %mean, dims = [0, 1] : (tensor<4x24xf32>) -> tensor<4x24x40xf32>
  %c = stablehlo.subtract %x, %mb : tensor<4x24x40xf32>
  %sq = stablehlo.multiply %c, %c : tensor<4x24x40xf32>
  %v = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [2] : (tensor<4x24x40xf32>, tensor<f32>) -> tensor<4x24xf32>
  %var = stablehlo.divide %v, %n : tensor<4x24xf32>
  %ve = stablehlo.add %var, %eps : tensor<4x24xf32>
  %r = stablehlo.rsqrt %ve : tensor<4x24xf32>
  %rb = stablehlo.broadcast_in_dim %r, dims = [0, 1] : (tensor<4x24xf32>) -> tensor<4x24x40xf32>
  %y = stablehlo.multiply %c, %rb : tensor<4x24x40xf32>
  %gb = stablehlo.broadcast_in_dim %g, dims = [2] : (tensor<40xf32>) -> tensor<4x24x40xf32>
  %out = stablehlo.multiply %y, %gb : tensor<4x24x40xf32>
  return %out : tensor<4x24x40xf32>
})";
  ExpectSameResults(layernorm, Tolerance{/*ulps=*/8, /*n=*/80, /*scale=*/4});
  EXPECT_NE(CompiledCostReport(layernorm).find("over 96 rows"), std::string::npos)
      << CompiledCostReport(layernorm);
}

TEST(HostBackendTest, MaxMinKeepNaNAndSignedZeroSemantics) {
  // max/min propagate NaN and order -0 below +0, elementwise and in (long, vectorized) reductions,
  // exactly as the evaluator does. The operands are constants scaled by x*x+1 (positive), so they
  // are not folded away but keep their NaNs, infinities and zero signs.
  const char* kValues[] = {"0x7FC00000", "-0.0", "0.0", "-0.0", "1.0", "0xFF800000", "2.0", "0.0"};
  const char* kOthers[] = {"1.0", "0.0", "-0.0", "-0.0", "0x7FC00000", "3.0", "2.0", "0.0"};
  auto constant = [](const char* const* v, int n) {
    std::string out = "[";
    for (int i = 0; i < n; ++i) out += std::string(i ? ", " : "") + v[i % 8];
    return out + "]";
  };
  for (int n : {8, 96}) {
    // Leading NaN only in the first case: the long case checks the zero signs of long folds.
    const char* const* a = kValues;
    std::vector<const char*> no_nan(kValues, kValues + 8);
    if (n > 8) no_nan[0] = "-0.0";
    if (n > 8) a = no_nan.data();
    const std::string t = absl::StrCat("tensor<", n, "xf32>");
    ExpectSameResults(absl::StrCat(R"(
func.func @main(%x: )", t, R"() -> ()", t, ", ", t, R"(, tensor<f32>, tensor<f32>) {
  %one = stablehlo.constant dense<1.0> : )", t, R"(
  %c1 = stablehlo.constant dense<)", constant(a, n), "> : ", t, R"(
  %c2 = stablehlo.constant dense<)", constant(kOthers, n), "> : ", t, R"(
  %xx = stablehlo.multiply %x, %x : )", t, R"(
  %p = stablehlo.add %xx, %one : )", t, R"(
  %a = stablehlo.multiply %c1, %p : )", t, R"(
  %b = stablehlo.multiply %c2, %p : )", t, R"(
  %mx = stablehlo.maximum %a, %b : )", t, R"(
  %mn = stablehlo.minimum %a, %b : )", t, R"(
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %pinf = stablehlo.constant dense<0x7F800000> : tensor<f32>
  %r1 = stablehlo.reduce(%a init: %ninf) applies stablehlo.maximum across dimensions = [0] : ()", t, R"(, tensor<f32>) -> tensor<f32>
  %r2 = stablehlo.reduce(%b init: %pinf) applies stablehlo.minimum across dimensions = [0] : ()", t, R"(, tensor<f32>) -> tensor<f32>
  return %mx, %mn, %r1, %r2 : )", t, ", ", t, R"(, tensor<f32>, tensor<f32>
})"));
  }
}

// Every kernel of the compiled plan runs on the fast kernels (none through the op table).
void ExpectAllFast(const std::string& text, int64_t kernels) {
  const std::string report = CompiledCostReport(text);
  EXPECT_NE(report.find(absl::StrCat("fast kernels: ", kernels, " of ", kernels)), std::string::npos)
      << report;
}

TEST(HostBackendTest, SiblingReductionsWithEpiloguesMatchTheEvaluator) {
  // Row statistics of a 512x160 array (rows split across threads, each range running its
  // epilogue): sum, sum of squares and max in one pass; mean and rsqrt(var + eps) as epilogues.
  const std::string rows = R"(
func.func @main(%x: tensor<512x160xf32>) -> (tensor<512xf32>, tensor<512x1xf32>, tensor<512xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %inv = stablehlo.constant dense<0.00625> : tensor<512xf32>
  %eps = stablehlo.constant dense<1.0e-3> : tensor<f32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<512x160xf32>, tensor<f32>) -> tensor<512xf32>
  %sq = stablehlo.multiply %x, %x : tensor<512x160xf32>
  %s2 = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<512x160xf32>, tensor<f32>) -> tensor<512xf32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<512x160xf32>, tensor<f32>) -> tensor<512xf32>
  %mean = stablehlo.multiply %s, %inv : tensor<512xf32>
  %ex2 = stablehlo.multiply %s2, %inv : tensor<512xf32>
  %mm = stablehlo.multiply %mean, %mean : tensor<512xf32>
  %var = stablehlo.subtract %ex2, %mm : tensor<512xf32>
  %eb = stablehlo.broadcast_in_dim %eps, dims = [] : (tensor<f32>) -> tensor<512xf32>
  %ve = stablehlo.add %var, %eb : tensor<512xf32>
  %r = stablehlo.rsqrt %ve : tensor<512xf32>
  %r1 = stablehlo.reshape %r : (tensor<512xf32>) -> tensor<512x1xf32>
  return %mean, %r1, %m : tensor<512xf32>, tensor<512x1xf32>, tensor<512xf32>
})";
  Outcome o = ExpectSameResults(rows, Tolerance{/*ulps=*/8, /*n=*/160, /*scale=*/9});
  EXPECT_EQ(o.kernels, 1);
  ExpectAllFast(rows, 1);
  // Column statistics (the input split across threads into partial results): sum and sum of
  // exp over the rows of a 300x512 array, and their quotient.
  const std::string cols = R"(
func.func @main(%x: tensor<300x512xf32>) -> (tensor<512xf32>, tensor<512xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<300x512xf32>, tensor<f32>) -> tensor<512xf32>
  %e = stablehlo.exponential %x : tensor<300x512xf32>
  %se = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<300x512xf32>, tensor<f32>) -> tensor<512xf32>
  %q = stablehlo.subtract %se, %s : tensor<512xf32>
  return %s, %q : tensor<512xf32>, tensor<512xf32>
})";
  o = ExpectSameResults(cols, Tolerance{/*ulps=*/8, /*n=*/300, /*scale=*/24});
  EXPECT_EQ(o.kernels, 1);
  ExpectAllFast(cols, 1);
  // Full reductions to scalars with a scalar epilogue, and integers (exact).
  const std::string full = R"(
func.func @main(%x: tensor<70000xf32>, %i: tensor<40x30xi32>) -> (tensor<f32>, tensor<40xi32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %two = stablehlo.constant dense<2.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<70000xf32>, tensor<f32>) -> tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [0] : (tensor<70000xf32>, tensor<f32>) -> tensor<f32>
  %s2 = stablehlo.multiply %s, %two : tensor<f32>
  %r = stablehlo.add %s2, %m : tensor<f32>
  %izero = stablehlo.constant dense<0> : tensor<i32>
  %imin = stablehlo.constant dense<-2147483648> : tensor<i32>
  %is = stablehlo.reduce(%i init: %izero) applies stablehlo.add across dimensions = [1] : (tensor<40x30xi32>, tensor<i32>) -> tensor<40xi32>
  %im = stablehlo.reduce(%i init: %imin) applies stablehlo.maximum across dimensions = [1] : (tensor<40x30xi32>, tensor<i32>) -> tensor<40xi32>
  %ir = stablehlo.subtract %is, %im : tensor<40xi32>
  return %r, %ir : tensor<f32>, tensor<40xi32>
})";
  o = ExpectSameResults(full, Tolerance{/*ulps=*/8, /*n=*/70000, /*scale=*/4});
  EXPECT_EQ(o.kernels, 2);
  ExpectAllFast(full, 2);
}

TEST(HostBackendTest, MultiOutputLoopsMatchTheEvaluator) {
  // Sibling loops over x, a consumer of both (read elementwise), and exp(x) written by the row
  // sum that reads it: two kernels, five outputs.
  const std::string text = R"(
func.func @main(%x: tensor<96x200xf32>, %y: tensor<96x200xf32>) -> (tensor<96x200xf32>, tensor<96x200xf32>, tensor<96x200xf32>, tensor<96x200xf32>, tensor<96xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %a = stablehlo.tanh %x : tensor<96x200xf32>
  %b = stablehlo.multiply %x, %y : tensor<96x200xf32>
  %c = stablehlo.subtract %a, %b : tensor<96x200xf32>
  %e = stablehlo.exponential %y : tensor<96x200xf32>
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<96x200xf32>, tensor<f32>) -> tensor<96xf32>
  return %a, %b, %c, %e, %s : tensor<96x200xf32>, tensor<96x200xf32>, tensor<96x200xf32>, tensor<96x200xf32>, tensor<96xf32>
})";
  Outcome o = ExpectSameResults(text, Tolerance{/*ulps=*/8, /*n=*/200, /*scale=*/24});
  EXPECT_LE(o.kernels, 2);
  ExpectAllFast(text, o.kernels);
}

TEST(HostBackendTest, ReductionOverAnEmptyDimRunsItsEpilogue) {
  const std::string text = R"(
func.func @main(%x: tensor<4x0xf32>) -> tensor<4xf32> {
  %one = stablehlo.constant dense<1.5> : tensor<f32>
  %c = stablehlo.constant dense<2.0> : tensor<4xf32>
  %s = stablehlo.reduce(%x init: %one) applies stablehlo.add across dimensions = [1] : (tensor<4x0xf32>, tensor<f32>) -> tensor<4xf32>
  %r = stablehlo.multiply %s, %c : tensor<4xf32>
  return %r : tensor<4xf32>
})";
  Outcome o = ExpectSameResults(text);
  ASSERT_EQ(o.values.size(), 1u);
  const absl::Span<const float> values = o.values[0].array.data<float>().value();
  for (float v : values) EXPECT_EQ(v, 3.0f);
}

TEST(HostBackendTest, RecomputedBroadcastAlsoMaterializedForAnotherKernel) {
  // %b is recomputed inside the reduction kernel and also needed by concatenate (an op-table
  // kernel), so it gets a kernel of its own, which must find %a materialized (found by the JAX
  // battery's gather_take: the plan once fused %a into the reduction only).
  ExpectSameResults(R"(
func.func @main(%i: tensor<4xi32>) -> (tensor<4xi32>, tensor<4x2xi32>) {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %a = stablehlo.add %i, %i : tensor<4xi32>
  %b = stablehlo.broadcast_in_dim %a, dims = [0] : (tensor<4xi32>) -> tensor<4x1xi32>
  %c = stablehlo.multiply %b, %b : tensor<4x1xi32>
  %r = stablehlo.reduce(%c init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x1xi32>, tensor<i32>) -> tensor<4xi32>
  %g = stablehlo.concatenate %b, %b, dim = 1 : (tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<4x2xi32>
  return %r, %g : tensor<4xi32>, tensor<4x2xi32>
})");
}

TEST(HostBackendTest, ReturnsParametersConstantsAndDuplicates) {
  ExpectSameResults(R"(
func.func @main(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>) {
  %c = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %0 = stablehlo.exponential %x : tensor<3xf32>
  return %0, %x, %c, %0 : tensor<3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>
})", Tolerance{/*ulps=*/4});
}

TEST(HostBackendTest, RejectsWrongArgumentsWithAnError) {
  std::unique_ptr<ir::Module> module = Parse(R"(
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.exponential %x : tensor<3xf32>
  return %0 : tensor<3xf32>
})");
  ASSERT_NE(module, nullptr);
  auto exe = testing::Compile(*module->entry());
  ASSERT_TRUE(exe.ok());
  std::vector<eval::EvalValue> args;
  args.push_back(eval::EvalValue::Array(ir::Literal::Create(ir::Shape::Make(ir::ElementType::kF32, {4}).value()).value()));
  auto out = (*exe)->Run(std::move(args));
  EXPECT_FALSE(out.ok());
}

}  // namespace
}  // namespace ember::host
