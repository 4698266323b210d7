// Tests of the CHLO ops the evaluator computes (compiler/evaluator/eval_chlo.cc), imported as custom
// calls "chlo.<op>". Reference values: scipy.special 1.17 (i1e, psi, erfinv, gammaln) and
// closed forms (lgamma(1/2) = log sqrt(pi), psi(1) = -gamma, psi(1/2) = -gamma - 2 log 2).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "compiler/evaluator/evaluator.h"
#include "compiler/ir/native_types.h"
#include "tests/compiler/evaluator/eval_ops_test_util.h"

namespace ember::eval {
namespace {

using testing::Lit;
using testing::OpRunner;
using testing::TensorType;
using testing::Values;
using ET = ir::ElementType;

ir::AttributeMap Target(const std::string& name) {
  ir::AttributeMap a;
  a.Set("call_target_name", ir::Attribute::String(name));
  return a;
}

std::vector<double> RunF64(const std::string& op, std::vector<double> x) {
  OpRunner r;
  const int64_t n = static_cast<int64_t>(x.size());
  auto out = r.Run(ir::Opcode::kCustomCall, {Lit<double>({n}, x)}, {TensorType(ET::kF64, {n})},
                   Target("chlo." + op));
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  return Values<double>((*out)[0].array);
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, double rel) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << i;
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << i;
    } else {
      EXPECT_NEAR(got[i], want[i], rel * std::max(1.0, std::fabs(want[i]))) << i;
    }
  }
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(EvalChlo, SpecialFunctions) {
  ExpectNear(RunF64("lgamma", {0.5, -0.5, -2.5, 1, 2, -3}),
             {0.5723649429247001, 1.2655121234846454, -0.05624371649767401, 0, 0, kInf}, 1e-14);
  ExpectNear(RunF64("digamma", {1, 0.5, -0.5, 10, 0, -2, 1e-8}),
             {-0.5772156649015329, -1.9635100260214235, 0.03648997397857651, 2.251752589066721,
              kNaN, kNaN, -100000000.57721564},
             1e-13);
  ExpectNear(RunF64("erf", {0.5, -2}), {0.5204998778130465, -0.9953222650189527}, 1e-15);
  ExpectNear(RunF64("erfc", {0.5, 3}), {0.4795001221869535, 2.209049699858544e-05}, 1e-15);
  ExpectNear(RunF64("erf_inv", {0.5204998778130465, -0.3, 0.999999, 1, -1, 1.5, 0}),
             {0.5, -0.2724627147267544, 3.458910737275499, kInf, -kInf, kNaN, 0}, 1e-13);
  ExpectNear(RunF64("bessel_i1e", {1, -3.5, 1000, 0}),
             {0.2079104153497085, -0.18739997660304997, 0.01261093025692863, 0}, 1e-13);
}

TEST(EvalChlo, TrigonometryRealAndComplex) {
  ExpectNear(RunF64("acosh", {1, 2, 0.5}), {0, std::acosh(2.0), kNaN}, 1e-15);
  ExpectNear(RunF64("atanh", {0.5, 1}), {std::atanh(0.5), kInf}, 1e-15);
  ExpectNear(RunF64("sinh", {1}), {std::sinh(1.0)}, 1e-15);

  OpRunner r;
  using C = std::complex<double>;
  auto out = r.Run(ir::Opcode::kCustomCall, {Lit<C>({2}, {C(0.5, 1), C(-2, 0.25)})},
                   {TensorType(ET::kC128, {2})}, Target("chlo.asin"));
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<C> v = Values<C>((*out)[0].array);
  // Near, not equal: the compiler may fold std::asin of constants more exactly than libm does.
  EXPECT_LT(std::abs(v[0] - std::asin(C(0.5, 1))), 1e-15);
  EXPECT_LT(std::abs(v[1] - std::asin(C(-2, 0.25))), 1e-15);
}

TEST(EvalChlo, RoundsOnceToNarrowTypes) {
  OpRunner r;
  auto out = r.Run(ir::Opcode::kCustomCall, {Lit<float>({2}, {0.5f, 2.0f})},
                   {TensorType(ET::kF32, {2})}, Target("chlo.erf"));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0].array),
            (std::vector<float>{static_cast<float>(std::erf(0.5)),
                                static_cast<float>(std::erf(2.0))}));
}

TEST(EvalChlo, NextAfter) {
  OpRunner r;
  auto out = r.Run(ir::Opcode::kCustomCall,
                   {Lit<float>({4}, {1.0f, 0.0f, 1.0f, -1.0f}),
                    Lit<float>({4}, {2.0f, -1.0f, 1.0f, 0.0f})},
                   {TensorType(ET::kF32, {4})}, Target("chlo.next_after"));
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> v = Values<float>((*out)[0].array);
  EXPECT_EQ(v[0], std::nextafter(1.0f, 2.0f));
  EXPECT_EQ(v[1], -std::numeric_limits<float>::denorm_min());
  EXPECT_EQ(v[2], 1.0f);
  EXPECT_EQ(v[3], std::nextafter(-1.0f, 0.0f));

  // bf16: one step of the 7-bit mantissa, and the smallest subnormal from zero.
  using BF16 = ir::NarrowFloat<ET::kBF16>;
  auto bf = r.Run(ir::Opcode::kCustomCall,
                  {Lit<BF16>({2}, {BF16::FromDouble(1.0), BF16::FromDouble(0.0)}),
                   Lit<BF16>({2}, {BF16::FromDouble(2.0), BF16::FromDouble(1.0)})},
                  {TensorType(ET::kBF16, {2})}, Target("chlo.next_after"));
  ASSERT_TRUE(bf.ok()) << bf.status();
  const std::vector<BF16> b = Values<BF16>((*bf)[0].array);
  EXPECT_EQ(b[0].ToFloat(), 1.0078125f);
  EXPECT_EQ(b[1].bits, 1);
}

TEST(EvalChlo, Mulhi) {
  OpRunner r;
  auto s8 = r.Run(ir::Opcode::kCustomCall,
                  {Lit<int8_t>({3}, {64, -64, -64}), Lit<int8_t>({3}, {4, 4, -4})},
                  {TensorType(ET::kS8, {3})}, Target("chlo.mulhi"));
  ASSERT_TRUE(s8.ok()) << s8.status();
  EXPECT_EQ(Values<int8_t>((*s8)[0].array), (std::vector<int8_t>{1, -1, 1}));
  auto u64 = r.Run(ir::Opcode::kCustomCall,
                   {Lit<uint64_t>({1}, {uint64_t{1} << 63}), Lit<uint64_t>({1}, {6})},
                   {TensorType(ET::kU64, {1})}, Target("chlo.mulhi"));
  ASSERT_TRUE(u64.ok()) << u64.status();
  EXPECT_EQ(Values<uint64_t>((*u64)[0].array), (std::vector<uint64_t>{3}));
  auto f = r.Run(ir::Opcode::kCustomCall, {Lit<float>({1}, {1}), Lit<float>({1}, {1})},
                 {TensorType(ET::kF32, {1})}, Target("chlo.mulhi"));
  ASSERT_FALSE(f.ok());
  EXPECT_NE(std::string(f.status().message()).find("expects an integer"), std::string::npos);
}

TEST(EvalChlo, TopKLargestFirstTiesByIndex) {
  OpRunner r;
  auto out = r.Run(ir::Opcode::kCustomCall, {Lit<float>({2, 4}, {1, 3, 2, 3, -1, -2, -3, -4})},
                   {TensorType(ET::kF32, {2, 2}), TensorType(ET::kS32, {2, 2})},
                   Target("chlo.top_k"));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0].array), (std::vector<float>{3, 3, -1, -2}));
  EXPECT_EQ(Values<int32_t>((*out)[1].array), (std::vector<int32_t>{1, 3, 0, 1}));
}

ir::AttributeMap RaggedDims(std::vector<int64_t> lb, std::vector<int64_t> rb,
                            std::vector<int64_t> lc, std::vector<int64_t> rc,
                            std::vector<int64_t> lr, std::vector<int64_t> rg) {
  ir::AttributeMap a = Target("chlo.ragged_dot");
  a.Set("lhs_batching_dimensions", ir::Attribute::Ints(lb));
  a.Set("rhs_batching_dimensions", ir::Attribute::Ints(rb));
  a.Set("lhs_contracting_dimensions", ir::Attribute::Ints(lc));
  a.Set("rhs_contracting_dimensions", ir::Attribute::Ints(rc));
  a.Set("lhs_ragged_dimensions", ir::Attribute::Ints(lr));
  a.Set("rhs_group_dimensions", ir::Attribute::Ints(rg));
  return a;
}

std::vector<float> Iota(int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<float>(i + 1);
  return v;
}

TEST(EvalChlo, RaggedDotNonContractingRowsPastTheGroupsAreZero) {
  // lhs rows 0 | 1 2 | 3 (past the groups): rhs group 0, group 1, zeros.
  OpRunner r;
  const std::vector<float> lhs = Iota(8), rhs = Iota(12);  // [4, 2], [2 groups, 2, 3]
  auto out = r.Run(ir::Opcode::kCustomCall,
                   {Lit<float>({4, 2}, lhs), Lit<float>({2, 2, 3}, rhs), Lit<int64_t>({2}, {1, 2})},
                   {TensorType(ET::kF32, {4, 3})}, RaggedDims({}, {}, {1}, {1}, {0}, {0}));
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<float> want(12, 0);
  for (int m = 0; m < 3; ++m) {
    const int g = m == 0 ? 0 : 1;
    for (int n = 0; n < 3; ++n) {
      for (int k = 0; k < 2; ++k) want[m * 3 + n] += lhs[m * 2 + k] * rhs[g * 6 + k * 3 + n];
    }
  }
  EXPECT_EQ(Values<float>((*out)[0].array), want);
}

TEST(EvalChlo, RaggedDotContractingGivesOneProductPerGroup) {
  // lhs [2, 4], rhs [4, 3], groups of the contracting dim {1, 3}: out [2 groups, 2, 3].
  OpRunner r;
  const std::vector<float> lhs = Iota(8), rhs = Iota(12);
  auto out = r.Run(ir::Opcode::kCustomCall,
                   {Lit<float>({2, 4}, lhs), Lit<float>({4, 3}, rhs), Lit<int32_t>({2}, {1, 3})},
                   {TensorType(ET::kF32, {2, 2, 3})}, RaggedDims({}, {}, {1}, {0}, {1}, {}));
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<float> want(12, 0);
  const int start[] = {0, 1, 4};
  for (int g = 0; g < 2; ++g) {
    for (int m = 0; m < 2; ++m) {
      for (int n = 0; n < 3; ++n) {
        for (int k = start[g]; k < start[g + 1]; ++k) {
          want[g * 6 + m * 3 + n] += lhs[m * 4 + k] * rhs[k * 3 + n];
        }
      }
    }
  }
  EXPECT_EQ(Values<float>((*out)[0].array), want);
}

TEST(EvalChlo, RaggedDotBatchIsABatchedProduct) {
  // Ragged batch dim, groups {1}: batch 0 is a product, batch 1 (past the groups) zeros.
  OpRunner r;
  const std::vector<float> lhs = Iota(12), rhs = Iota(12);  // [2, 2, 3], [2, 3, 2]
  auto out = r.Run(ir::Opcode::kCustomCall,
                   {Lit<float>({2, 2, 3}, lhs), Lit<float>({2, 3, 2}, rhs), Lit<int64_t>({1}, {1})},
                   {TensorType(ET::kF32, {2, 2, 2})}, RaggedDims({0}, {0}, {2}, {1}, {0}, {}));
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<float> want(8, 0);
  for (int m = 0; m < 2; ++m) {
    for (int n = 0; n < 2; ++n) {
      for (int k = 0; k < 3; ++k) want[m * 2 + n] += lhs[m * 3 + k] * rhs[k * 2 + n];
    }
  }
  EXPECT_EQ(Values<float>((*out)[0].array), want);
}

TEST(EvalChlo, RaggedDotErrorsNameTheProblem) {
  OpRunner r;
  // Three groups for an rhs with two.
  auto groups = r.Run(ir::Opcode::kCustomCall,
                      {Lit<float>({4, 2}, Iota(8)), Lit<float>({2, 2, 3}, Iota(12)),
                       Lit<int64_t>({3}, {1, 1, 1})},
                      {TensorType(ET::kF32, {4, 3})}, RaggedDims({}, {}, {1}, {1}, {0}, {0}));
  ASSERT_FALSE(groups.ok());
  EXPECT_NE(std::string(groups.status().message()).find("group_sizes has 3 groups"),
            std::string::npos)
      << groups.status();
  // A wrong result type.
  auto type = r.Run(ir::Opcode::kCustomCall,
                    {Lit<float>({4, 2}, Iota(8)), Lit<float>({2, 2, 3}, Iota(12)),
                     Lit<int64_t>({2}, {1, 1})},
                    {TensorType(ET::kF32, {3, 4})}, RaggedDims({}, {}, {1}, {1}, {0}, {0}));
  ASSERT_FALSE(type.ok());
  EXPECT_NE(std::string(type.status().message()).find("does not match"), std::string::npos)
      << type.status();
  // Contracting sizes differ.
  auto contract = r.Run(ir::Opcode::kCustomCall,
                        {Lit<float>({4, 2}, Iota(8)), Lit<float>({2, 3, 3}, Iota(18)),
                         Lit<int64_t>({2}, {1, 1})},
                        {TensorType(ET::kF32, {4, 3})}, RaggedDims({}, {}, {1}, {1}, {0}, {0}));
  ASSERT_FALSE(contract.ok());
  EXPECT_NE(std::string(contract.status().message()).find("contracting dimension 0 sizes differ"),
            std::string::npos)
      << contract.status();
}

TEST(EvalChlo, WrongTypesAreErrors) {
  OpRunner r;
  auto out = r.Run(ir::Opcode::kCustomCall, {Lit<int32_t>({1}, {1})}, {TensorType(ET::kS32, {1})},
                   Target("chlo.erf"));
  ASSERT_FALSE(out.ok());
  EXPECT_NE(std::string(out.status().message()).find("expects float"), std::string::npos);
}

}  // namespace
}  // namespace ember::eval
