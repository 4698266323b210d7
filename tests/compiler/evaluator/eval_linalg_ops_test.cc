// Tests of the evaluator's linear-algebra family: dot_general / dot against triple loops,
// convolution against a direct nested-loop definition (groups, dilations, padding, reversal),
// fft against a naive DFT, cholesky / triangular_solve / Householder QR by reconstruction, and
// batch_norm against its formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

#include "compiler/evaluator/evaluator.h"
#include "tests/compiler/evaluator/eval_ops_test_util.h"

namespace ember::eval {
namespace {

using testing::Ints;
using testing::Lit;
using testing::OpRunner;
using testing::RandomDoubles;
using testing::RandomFloats;
using testing::TensorType;
using testing::Values;
using ET = ir::ElementType;
using C64 = std::complex<float>;
using C128 = std::complex<double>;

ir::AttributeMap DotAttrs(std::vector<int64_t> lb, std::vector<int64_t> rb, std::vector<int64_t> lc,
                          std::vector<int64_t> rc) {
  ir::AttributeMap a;
  a.Set("lhs_batching_dimensions", Ints(lb));
  a.Set("rhs_batching_dimensions", Ints(rb));
  a.Set("lhs_contracting_dimensions", Ints(lc));
  a.Set("rhs_contracting_dimensions", Ints(rc));
  a.Set("precision_config",
        ir::Attribute::List({ir::Attribute::String("DEFAULT"), ir::Attribute::String("HIGHEST")}));
  return a;
}

// ---- dot_general ---------------------------------------------------------------------------

TEST(EvalDotGeneral, BatchDimsMatchTripleLoop) {
  OpRunner r;
  // lhs [K=4, B=2, M=3] (batch dim 1, contracting 0); rhs [N=5, K=4, B=2] (batch 2, contracting 1).
  const std::vector<float> lv = RandomFloats(24, 1), rv = RandomFloats(40, 2);
  auto out = r.Run(ir::Opcode::kDotGeneral, {Lit<float>({4, 2, 3}, lv), Lit<float>({5, 4, 2}, rv)},
                   {TensorType(ET::kF32, {2, 3, 5})}, DotAttrs({1}, {2}, {0}, {1}));
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> got = Values<float>((*out)[0].array);
  for (int b = 0; b < 2; ++b) {
    for (int m = 0; m < 3; ++m) {
      for (int n = 0; n < 5; ++n) {
        double want = 0;
        for (int k = 0; k < 4; ++k) want += double(lv[k * 6 + b * 3 + m]) * rv[n * 8 + k * 2 + b];
        EXPECT_NEAR(got[b * 15 + m * 5 + n], want, 1e-5 * (1 + std::abs(want))) << b << m << n;
      }
    }
  }
}

TEST(EvalDotGeneral, TwoContractingDimsAndNoBatch) {
  OpRunner r;
  // lhs [3, 2, 4] contracting {2, 0}; rhs [4, 5, 3] contracting {0, 2} -> [2, 5].
  const std::vector<double> lv = RandomDoubles(24, 3), rv = RandomDoubles(60, 4);
  auto out =
      r.Run(ir::Opcode::kDotGeneral, {Lit<double>({3, 2, 4}, lv), Lit<double>({4, 5, 3}, rv)},
            {TensorType(ET::kF64, {2, 5})}, DotAttrs({}, {}, {2, 0}, {0, 2}));
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> got = Values<double>((*out)[0].array);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 5; ++j) {
      double want = 0;
      for (int a = 0; a < 4; ++a) {
        for (int c = 0; c < 3; ++c) want += lv[c * 8 + i * 4 + a] * rv[a * 15 + j * 3 + c];
      }
      EXPECT_NEAR(got[i * 5 + j], want, 1e-12);
    }
  }
}

TEST(EvalDotGeneral, IntegersWrapAndWiden) {
  OpRunner r;
  // s8 x s8 -> s32 (no overflow), and s32 products that wrap modulo 2^32.
  std::vector<int8_t> a(2 * 64), b(64 * 3);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int8_t>((i * 37) % 255 - 127);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<int8_t>((i * 91) % 255 - 127);
  auto out = r.Run(ir::Opcode::kDotGeneral, {Lit<int8_t>({2, 64}, a), Lit<int8_t>({64, 3}, b)},
                   {TensorType(ET::kS32, {2, 3})}, DotAttrs({}, {}, {1}, {0}));
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<int32_t> got = Values<int32_t>((*out)[0].array);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      int32_t want = 0;
      for (int k = 0; k < 64; ++k) want += int32_t(a[i * 64 + k]) * b[k * 3 + j];
      EXPECT_EQ(got[i * 3 + j], want);
    }
  }
  auto wrap = r.Run(ir::Opcode::kDotGeneral,
                    {Lit<int32_t>({2}, {1 << 30, -7}), Lit<int32_t>({2}, {12, 1 << 29})},
                    {TensorType(ET::kS32, {})}, DotAttrs({}, {}, {0}, {0}));
  ASSERT_TRUE(wrap.ok()) << wrap.status();
  const uint32_t want = uint32_t(1u << 30) * 12u + uint32_t(-7) * uint32_t(1u << 29);
  EXPECT_EQ(Values<int32_t>((*wrap)[0].array)[0], static_cast<int32_t>(want));
}

TEST(EvalDotGeneral, Bf16OperandsAccumulateInF32) {
  OpRunner r;
  const std::vector<float> lf = RandomFloats(3 * 16, 5), rf = RandomFloats(16 * 2, 6);
  std::vector<ir::BF16> l, rr;
  for (float v : lf) l.push_back(ir::BF16::FromFloat(v));
  for (float v : rf) rr.push_back(ir::BF16::FromFloat(v));
  auto out = r.Run(ir::Opcode::kDotGeneral, {Lit<ir::BF16>({3, 16}, l), Lit<ir::BF16>({16, 2}, rr)},
                   {TensorType(ET::kF32, {3, 2})}, DotAttrs({}, {}, {1}, {0}));
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> got = Values<float>((*out)[0].array);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 2; ++j) {
      double want = 0;
      for (int k = 0; k < 16; ++k)
        want += double(l[i * 16 + k].ToFloat()) * rr[k * 2 + j].ToFloat();
      EXPECT_NEAR(got[i * 2 + j], want, 1e-5 * (1 + std::abs(want)));
    }
  }
  // bf16 result: accumulated in f32, rounded once.
  auto low = r.Run(ir::Opcode::kDotGeneral, {Lit<ir::BF16>({3, 16}, l), Lit<ir::BF16>({16, 2}, rr)},
                   {TensorType(ET::kBF16, {3, 2})}, DotAttrs({}, {}, {1}, {0}));
  ASSERT_TRUE(low.ok()) << low.status();
  const std::vector<ir::BF16> lo = Values<ir::BF16>((*low)[0].array);
  for (size_t i = 0; i < lo.size(); ++i) EXPECT_EQ(lo[i], ir::BF16::FromFloat(got[i]));
}

TEST(EvalDotGeneral, ComplexAndLegacyDot) {
  OpRunner r;
  const auto a = testing::RandomComplex<float>(6, 7), b = testing::RandomComplex<float>(3, 8);
  auto out =
      r.Run(ir::Opcode::kDot, {Lit<C64>({2, 3}, a), Lit<C64>({3}, b)}, {TensorType(ET::kC64, {2})});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<C64> got = Values<C64>((*out)[0].array);
  for (int i = 0; i < 2; ++i) {
    C128 want = 0;
    for (int k = 0; k < 3; ++k) want += C128(a[i * 3 + k]) * C128(b[k]);
    EXPECT_NEAR(std::abs(C128(got[i]) - want), 0, 1e-5);
  }
  auto bad = r.Run(ir::Opcode::kDotGeneral,
                   {Lit<float>({2, 3}, RandomFloats(6, 1)), Lit<float>({4, 2}, RandomFloats(8, 1))},
                   {TensorType(ET::kF32, {2, 2})}, DotAttrs({}, {}, {1}, {0}));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("stablehlo.dot_general"), absl::string_view::npos);
}

// ---- convolution ---------------------------------------------------------------------------

struct ConvSpec {
  // Physical positions of the logical dims: input {batch, feature, s0, s1}, kernel {out, in, s0,
  // s1}, output {batch, feature, s0, s1}.
  std::vector<int64_t> in_pos, k_pos, out_pos;
  std::vector<int64_t> in_logical, k_logical;  // [N, C, H, W], [O, I, KH, KW]
  std::vector<int64_t> stride, padding, lhs_dil, rhs_dil;
  std::vector<bool> reversal;
  int64_t fgc = 1, bgc = 1;
};

std::vector<int64_t> Physical(const std::vector<int64_t>& logical,
                              const std::vector<int64_t>& pos) {
  std::vector<int64_t> phys(logical.size());
  for (size_t i = 0; i < pos.size(); ++i) phys[pos[i]] = logical[i];
  return phys;
}

int64_t PhysIndex(const std::vector<int64_t>& logical_index, const std::vector<int64_t>& pos,
                  const std::vector<int64_t>& phys_dims) {
  std::vector<int64_t> p = Physical(logical_index, pos);
  int64_t linear = 0;
  for (size_t d = 0; d < p.size(); ++d) linear = linear * phys_dims[d] + p[d];
  return linear;
}

// The spec's definition, group by group: materialize the padded, base-dilated input, then take
// windows with window dilation and strides.
void CheckConvolution(const ConvSpec& s, uint32_t seed) {
  OpRunner r;
  const int64_t N = s.in_logical[0], C = s.in_logical[1], H = s.in_logical[2], W = s.in_logical[3];
  const int64_t O = s.k_logical[0], I = s.k_logical[1], KH = s.k_logical[2], KW = s.k_logical[3];
  const std::vector<int64_t> in_phys = Physical(s.in_logical, s.in_pos);
  const std::vector<int64_t> k_phys = Physical(s.k_logical, s.k_pos);
  const std::vector<float> x = RandomFloats(N * C * H * W, seed);
  const std::vector<float> k = RandomFloats(O * I * KH * KW, seed + 1);
  const int64_t sizes[2] = {H, W}, ksizes[2] = {KH, KW};
  int64_t padded[2], out_sp[2];
  for (int d = 0; d < 2; ++d) {
    padded[d] = s.padding[2 * d] + (sizes[d] - 1) * s.lhs_dil[d] + 1 + s.padding[2 * d + 1];
    const int64_t win = (ksizes[d] - 1) * s.rhs_dil[d] + 1;
    out_sp[d] = (padded[d] - win) / s.stride[d] + 1;
  }
  const int64_t ON = N / s.bgc;
  const std::vector<int64_t> out_logical = {ON, O, out_sp[0], out_sp[1]};
  const std::vector<int64_t> out_phys = Physical(out_logical, s.out_pos);
  // padded input P[n][c][ph][pw] (0 outside)
  std::vector<double> P(N * C * padded[0] * padded[1], 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) {
          const int64_t ph = s.padding[0] + h * s.lhs_dil[0], pw = s.padding[2] + w * s.lhs_dil[1];
          if (ph < 0 || ph >= padded[0] || pw < 0 || pw >= padded[1]) continue;
          P[((n * C + c) * padded[0] + ph) * padded[1] + pw] =
              x[PhysIndex({n, c, h, w}, s.in_pos, in_phys)];
        }
  std::vector<double> want(ON * O * out_sp[0] * out_sp[1], 0.0);
  const int64_t o_per_fg = O / s.fgc, o_per_bg = O / s.bgc;
  for (int64_t n = 0; n < ON; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t oh = 0; oh < out_sp[0]; ++oh)
        for (int64_t ow = 0; ow < out_sp[1]; ++ow) {
          const int64_t fg = o / o_per_fg, bg = o / o_per_bg;
          const int64_t src_n = bg * ON + n;
          double acc = 0;
          for (int64_t i = 0; i < I; ++i)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t ph = oh * s.stride[0] + kh * s.rhs_dil[0];
                const int64_t pw = ow * s.stride[1] + kw * s.rhs_dil[1];
                // window reversal reverses the window: kernel tap kh meets window position KH-1-kh
                const int64_t rkh = s.reversal[0] ? KH - 1 - kh : kh;
                const int64_t rkw = s.reversal[1] ? KW - 1 - kw : kw;
                const double xv = P[((src_n * C + fg * I + i) * padded[0] + ph) * padded[1] + pw];
                acc += xv * k[PhysIndex({o, i, rkh, rkw}, s.k_pos, k_phys)];
              }
          want[((n * O + o) * out_sp[0] + oh) * out_sp[1] + ow] = acc;
        }
  ir::AttributeMap a;
  a.Set("window_strides", Ints(s.stride));
  a.Set("padding", Ints(s.padding));
  a.Set("lhs_dilation", Ints(s.lhs_dil));
  a.Set("rhs_dilation", Ints(s.rhs_dil));
  a.Set("window_reversal", ir::Attribute::Bools(s.reversal));
  a.Set("input_batch_dimension", ir::Attribute::Int(s.in_pos[0]));
  a.Set("input_feature_dimension", ir::Attribute::Int(s.in_pos[1]));
  a.Set("input_spatial_dimensions", Ints({s.in_pos[2], s.in_pos[3]}));
  a.Set("kernel_output_feature_dimension", ir::Attribute::Int(s.k_pos[0]));
  a.Set("kernel_input_feature_dimension", ir::Attribute::Int(s.k_pos[1]));
  a.Set("kernel_spatial_dimensions", Ints({s.k_pos[2], s.k_pos[3]}));
  a.Set("output_batch_dimension", ir::Attribute::Int(s.out_pos[0]));
  a.Set("output_feature_dimension", ir::Attribute::Int(s.out_pos[1]));
  a.Set("output_spatial_dimensions", Ints({s.out_pos[2], s.out_pos[3]}));
  a.Set("feature_group_count", ir::Attribute::Int(s.fgc));
  a.Set("batch_group_count", ir::Attribute::Int(s.bgc));
  auto out = r.Run(ir::Opcode::kConvolution, {Lit<float>(in_phys, x), Lit<float>(k_phys, k)},
                   {TensorType(ET::kF32, out_phys)}, std::move(a));
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> got = Values<float>((*out)[0].array);
  ASSERT_EQ(got.size(), want.size());
  for (int64_t n = 0; n < ON; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t oh = 0; oh < out_sp[0]; ++oh)
        for (int64_t ow = 0; ow < out_sp[1]; ++ow) {
          const double w = want[((n * O + o) * out_sp[0] + oh) * out_sp[1] + ow];
          EXPECT_NEAR(got[PhysIndex({n, o, oh, ow}, s.out_pos, out_phys)], w,
                      1e-5 * (1 + std::abs(w)))
              << "n=" << n << " o=" << o << " oh=" << oh << " ow=" << ow;
        }
}

TEST(EvalConvolution, FeatureGroupsDilationsPaddingReversal) {
  ConvSpec s;
  s.in_pos = {0, 3, 1, 2};   // NHWC
  s.k_pos = {0, 1, 2, 3};    // OIHW
  s.out_pos = {0, 1, 2, 3};  // NCHW
  s.in_logical = {2, 4, 7, 6};
  s.k_logical = {6, 2, 3, 2};
  s.stride = {2, 1};
  s.padding = {1, 2, -1, 1};
  s.lhs_dil = {1, 2};
  s.rhs_dil = {2, 1};
  s.reversal = {false, true};
  s.fgc = 2;
  CheckConvolution(s, 11);
}

TEST(EvalConvolution, BatchGroups) {
  ConvSpec s;
  s.in_pos = {0, 1, 2, 3};
  s.k_pos = {3, 2, 0, 1};    // HWIO
  s.out_pos = {3, 0, 1, 2};  // CNHW-like permutation
  s.in_logical = {4, 3, 5, 5};
  s.k_logical = {4, 3, 2, 3};
  s.stride = {1, 2};
  s.padding = {1, 1, 0, 2};
  s.lhs_dil = {1, 1};
  s.rhs_dil = {1, 1};
  s.reversal = {false, false};
  s.bgc = 2;
  CheckConvolution(s, 21);
}

ir::AttributeMap SpecExampleConvAttrs() {
  ir::AttributeMap a;
  a.Set("window_strides", Ints({4, 4}));
  a.Set("lhs_dilation", Ints({2, 2}));
  a.Set("rhs_dilation", Ints({1, 1}));
  a.Set("window_reversal", ir::Attribute::Bools({false, false}));
  a.Set("input_batch_dimension", ir::Attribute::Int(0));
  a.Set("input_feature_dimension", ir::Attribute::Int(3));
  a.Set("input_spatial_dimensions", Ints({1, 2}));
  a.Set("kernel_input_feature_dimension", ir::Attribute::Int(2));
  a.Set("kernel_output_feature_dimension", ir::Attribute::Int(3));
  a.Set("kernel_spatial_dimensions", Ints({0, 1}));
  a.Set("output_batch_dimension", ir::Attribute::Int(0));
  a.Set("output_feature_dimension", ir::Attribute::Int(3));
  a.Set("output_spatial_dimensions", Ints({1, 2}));
  a.Set("feature_group_count", ir::Attribute::Int(1));
  a.Set("batch_group_count", ir::Attribute::Int(1));
  return a;
}

TEST(EvalConvolution, SpecExampleAndDynamicConv) {
  OpRunner r;
  const std::vector<int64_t> lhs = {1, 2, 5, 6, 3, 4, 7, 8, 10, 11, 14, 15, 12, 13, 16, 17};
  const std::vector<int64_t> rhs(9, 1);
  ir::AttributeMap a = SpecExampleConvAttrs();
  a.Set("padding", Ints({0, 0, 0, 0}));
  auto out = r.Run(ir::Opcode::kConvolution,
                   {Lit<int64_t>({1, 4, 4, 1}, lhs), Lit<int64_t>({3, 3, 1, 1}, rhs)},
                   {TensorType(ET::kS64, {1, 2, 2, 1})}, std::move(a));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int64_t>((*out)[0].array), (std::vector<int64_t>{10, 26, 46, 62}));
  // dynamic_conv takes the padding as an operand: pad 1 on top and left shifts the windows.
  auto dyn = r.Run(ir::Opcode::kDynamicConv,
                   {Lit<int64_t>({1, 4, 4, 1}, lhs), Lit<int64_t>({3, 3, 1, 1}, rhs),
                    Lit<int64_t>({2, 2}, {1, 0, 1, 0})},
                   {TensorType(ET::kS64, {1, 2, 2, 1})}, SpecExampleConvAttrs());
  ASSERT_TRUE(dyn.ok()) << dyn.status();
  // Element (i, j) lands at padded (2i + 1, 2j + 1) of 8x8; windows cover rows/cols 0..2 and
  // 4..6, so each holds one element: (0, 0), (0, 2), (2, 0), (2, 2).
  EXPECT_EQ(Values<int64_t>((*dyn)[0].array), (std::vector<int64_t>{1, 5, 10, 14}));
}

// ---- fft -----------------------------------------------------------------------------------

std::vector<C128> NaiveDft(const std::vector<C128>& x, bool inverse) {
  const size_t n = x.size();
  std::vector<C128> out(n);
  for (size_t k = 0; k < n; ++k) {
    C128 s = 0;
    for (size_t j = 0; j < n; ++j) {
      const double angle = (inverse ? 2 : -2) * M_PI * double((j * k) % n) / double(n);
      s += x[j] * C128(std::cos(angle), std::sin(angle));
    }
    out[k] = inverse ? s / double(n) : s;
  }
  return out;
}

// Applies NaiveDft along each of the last `l` axes of row-major `dims`.
std::vector<C128> NaiveDftNd(std::vector<C128> x, const std::vector<int64_t>& dims, int l,
                             bool inverse) {
  const int64_t rank = dims.size();
  for (int64_t axis = rank - l; axis < rank; ++axis) {
    int64_t inner = 1;
    for (int64_t d = axis + 1; d < rank; ++d) inner *= dims[d];
    const int64_t n = dims[axis], outer = int64_t(x.size()) / (n * inner);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        std::vector<C128> line(n);
        for (int64_t j = 0; j < n; ++j) line[j] = x[(o * n + j) * inner + i];
        line = NaiveDft(line, inverse);
        for (int64_t j = 0; j < n; ++j) x[(o * n + j) * inner + i] = line[j];
      }
  }
  return x;
}

absl::StatusOr<std::vector<EvalValue>> RunFft(OpRunner& r, ir::Literal x, const std::string& type,
                                              std::vector<int64_t> length, ir::ValueType result) {
  ir::AttributeMap a;
  a.Set("fft_type", ir::Attribute::String(type));
  a.Set("fft_length", Ints(std::move(length)));
  std::vector<ir::Literal> ops;
  ops.push_back(std::move(x));
  return r.RunVec(ir::Opcode::kFft, std::move(ops), {std::move(result)}, std::move(a));
}

TEST(EvalFft, ComplexForwardAndInverseMatchNaiveDft) {
  OpRunner r;
  struct Case {
    std::vector<int64_t> dims;
    int l;
  };
  for (const Case& c : {Case{{3, 8}, 1}, Case{{2, 6, 5}, 2}, Case{{2, 4, 3, 6}, 3}, Case{{300}, 1},
                        Case{{1, 256}, 1}}) {
    int64_t count = 1;
    for (int64_t d : c.dims) count *= d;
    const auto x = testing::RandomComplex<double>(count, 31 + count);
    std::vector<int64_t> length(c.dims.end() - c.l, c.dims.end());
    for (bool inverse : {false, true}) {
      auto out = RunFft(r, Lit<C128>(c.dims, x), inverse ? "IFFT" : "FFT", length,
                        TensorType(ET::kC128, c.dims));
      ASSERT_TRUE(out.ok()) << out.status();
      const std::vector<C128> got = Values<C128>((*out)[0].array);
      const std::vector<C128> want = NaiveDftNd(x, c.dims, c.l, inverse);
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_NEAR(std::abs(got[i] - want[i]), 0, 1e-10 * std::sqrt(double(count)))
            << "dims[0]=" << c.dims[0] << " element " << i;
      }
    }
  }
}

TEST(EvalFft, RealTransforms) {
  OpRunner r;
  // RFFT f32 [4, 10] -> c64 [4, 6].
  const std::vector<float> x = RandomFloats(40, 41);
  auto out = RunFft(r, Lit<float>({4, 10}, x), "RFFT", {10}, TensorType(ET::kC64, {4, 6}));
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<C64> got = Values<C64>((*out)[0].array);
  for (int row = 0; row < 4; ++row) {
    std::vector<C128> line(x.begin() + row * 10, x.begin() + row * 10 + 10);
    const auto want = NaiveDft(line, false);
    for (int k = 0; k < 6; ++k) EXPECT_NEAR(std::abs(C128(got[row * 6 + k]) - want[k]), 0, 1e-5);
  }
  // IRFFT c128 [3, 2, 5] with fft_length [2, 8] -> f64 [3, 2, 8], checked by RFFT round trip.
  const std::vector<double> y = RandomDoubles(48, 43);
  auto spectrum =
      RunFft(r, Lit<double>({3, 2, 8}, y), "RFFT", {2, 8}, TensorType(ET::kC128, {3, 2, 5}));
  ASSERT_TRUE(spectrum.ok()) << spectrum.status();
  auto back =
      RunFft(r, std::move((*spectrum)[0].array), "IRFFT", {2, 8}, TensorType(ET::kF64, {3, 2, 8}));
  ASSERT_TRUE(back.ok()) << back.status();
  const std::vector<double> round_trip = Values<double>((*back)[0].array);
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(round_trip[i], y[i], 1e-12);
  // IRFFT of an odd length against the Hermitian-extended naive inverse.
  const auto half = testing::RandomComplex<double>(4, 47);
  auto odd = RunFft(r, Lit<C128>({4}, half), "IRFFT", {7}, TensorType(ET::kF64, {7}));
  ASSERT_TRUE(odd.ok()) << odd.status();
  std::vector<C128> full(7);
  for (int k = 0; k < 7; ++k) full[k] = k < 4 ? half[k] : std::conj(half[7 - k]);
  const auto want = NaiveDft(full, true);
  const std::vector<double> got_odd = Values<double>((*odd)[0].array);
  for (int k = 0; k < 7; ++k) EXPECT_NEAR(got_odd[k], want[k].real(), 1e-12);
}

// ---- cholesky, triangular_solve, QR --------------------------------------------------------

double Conj(double v) { return v; }
C128 Conj(C128 v) { return std::conj(v); }

// Random Hermitian positive definite [batch, n, n]: M M^H + n I (exactly Hermitian).
template <typename S>
std::vector<S> RandomSpd(int batch, int n, uint32_t seed) {
  std::vector<S> m;
  if constexpr (std::is_same_v<S, C128>) {
    m = testing::RandomComplex<double>(batch * n * n, seed);
  } else {
    m = RandomDoubles(batch * n * n, seed);
  }
  std::vector<S> a(batch * n * n);
  for (int b = 0; b < batch; ++b)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        S s = i == j ? S(n) : S(0);
        for (int k = 0; k < n; ++k) s += m[b * n * n + i * n + k] * Conj(m[b * n * n + j * n + k]);
        a[b * n * n + i * n + j] = s;
      }
  return a;
}

template <typename S>
void CheckCholesky(ET type, uint32_t seed) {
  OpRunner r;
  const int batch = 2, n = 5;
  const std::vector<S> a = RandomSpd<S>(batch, n, seed);
  for (bool lower : {true, false}) {
    ir::AttributeMap attrs;
    attrs.Set("lower", ir::Attribute::Bool(lower));
    auto out = r.Run(ir::Opcode::kCholesky, {Lit<S>({batch, n, n}, a)},
                     {TensorType(type, {batch, n, n})}, std::move(attrs));
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<S> f = Values<S>((*out)[0].array);
    for (int b = 0; b < batch; ++b) {
      const S* l = f.data() + b * n * n;
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          if (lower ? j > i : j < i) {
            EXPECT_EQ(l[i * n + j], S(0));
          }
          // lower: A = L L^H; upper: A = U^H U.
          C128 s = 0;
          for (int k = 0; k < n; ++k) {
            s += lower ? C128(l[i * n + k]) * std::conj(C128(l[j * n + k]))
                       : std::conj(C128(l[k * n + i])) * C128(l[k * n + j]);
          }
          EXPECT_NEAR(std::abs(s - C128(a[b * n * n + i * n + j])), 0, 1e-10) << i << "," << j;
        }
    }
  }
}

TEST(EvalCholesky, ReconstructsRealAndComplex) {
  CheckCholesky<double>(ET::kF64, 51);
  CheckCholesky<C128>(ET::kC128, 52);
}

TEST(EvalCholesky, NotPositiveDefiniteGivesNaN) {
  OpRunner r;
  ir::AttributeMap attrs;
  attrs.Set("lower", ir::Attribute::Bool(true));
  auto out = r.Run(ir::Opcode::kCholesky, {Lit<float>({2, 2}, {1, 2, 2, 1})},
                   {TensorType(ET::kF32, {2, 2})}, std::move(attrs));
  ASSERT_TRUE(out.ok()) << out.status();
  for (float v : Values<float>((*out)[0].array)) EXPECT_TRUE(std::isnan(v));
}

TEST(EvalTriangularSolve, EveryVariantReconstructs) {
  OpRunner r;
  const int n = 4, m = 3;
  std::vector<double> a = RandomDoubles(n * n, 61);
  for (int i = 0; i < n; ++i) a[i * n + i] = 2.0 + 0.25 * i;  // well conditioned
  for (bool left : {true, false})
    for (bool lower : {true, false})
      for (bool unit : {false, true})
        for (const char* transpose : {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}) {
          const std::vector<int64_t> bdims =
              left ? std::vector<int64_t>{n, m} : std::vector<int64_t>{m, n};
          const std::vector<double> b = RandomDoubles(n * m, 62);
          ir::AttributeMap attrs;
          attrs.Set("left_side", ir::Attribute::Bool(left));
          attrs.Set("lower", ir::Attribute::Bool(lower));
          attrs.Set("unit_diagonal", ir::Attribute::Bool(unit));
          attrs.Set("transpose_a", ir::Attribute::String(transpose));
          auto out =
              r.Run(ir::Opcode::kTriangularSolve, {Lit<double>({n, n}, a), Lit<double>(bdims, b)},
                    {TensorType(ET::kF64, bdims)}, std::move(attrs));
          ASSERT_TRUE(out.ok()) << out.status();
          const std::vector<double> x = Values<double>((*out)[0].array);
          // op(a) from the used triangle only.
          auto op = [&](int i, int j) {
            int rr = i, cc = j;
            if (std::string(transpose) != "NO_TRANSPOSE") std::swap(rr, cc);
            if (rr == cc) return unit ? 1.0 : a[rr * n + cc];
            return (lower ? rr > cc : rr < cc) ? a[rr * n + cc] : 0.0;
          };
          const int rows = bdims[0], cols = bdims[1];
          for (int i = 0; i < rows; ++i)
            for (int j = 0; j < cols; ++j) {
              double s = 0;
              for (int k = 0; k < n; ++k) {
                s += left ? op(i, k) * x[k * cols + j] : x[i * cols + k] * op(k, j);
              }
              EXPECT_NEAR(s, b[i * cols + j], 1e-10)
                  << left << lower << unit << transpose << " at " << i << "," << j;
            }
        }
}

TEST(EvalCustomCallQr, QrAndHouseholderProductReconstruct) {
  OpRunner r;
  const int m = 5, n = 3, k = 3;
  const std::vector<double> a = RandomDoubles(2 * m * n, 71);
  ir::AttributeMap qr_attrs;
  qr_attrs.Set("call_target_name", ir::Attribute::String("Qr"));
  auto qr =
      r.Run(ir::Opcode::kCustomCall, {Lit<double>({2, m, n}, a)},
            {TensorType(ET::kF64, {2, m, n}), TensorType(ET::kF64, {2, k})}, std::move(qr_attrs));
  ASSERT_TRUE(qr.ok()) << qr.status();
  const std::vector<double> packed = Values<double>((*qr)[0].array);
  ir::AttributeMap hp_attrs;
  hp_attrs.Set("call_target_name",
               ir::Attribute::String("ProductOfElementaryHouseholderReflectors"));
  std::vector<ir::Literal> ops;
  ops.push_back(std::move((*qr)[0].array));
  ops.push_back(std::move((*qr)[1].array));
  auto q = r.RunVec(ir::Opcode::kCustomCall, std::move(ops), {TensorType(ET::kF64, {2, m, n})},
                    std::move(hp_attrs));
  ASSERT_TRUE(q.ok()) << q.status();
  const std::vector<double> qv = Values<double>((*q)[0].array);
  for (int b = 0; b < 2; ++b) {
    const double* Q = qv.data() + b * m * n;
    const double* R = packed.data() + b * m * n;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double s = 0;  // (Q R)[i][j] with R upper triangular (n x n)
        for (int t = 0; t <= j; ++t) s += Q[i * n + t] * R[t * n + j];
        EXPECT_NEAR(s, a[b * m * n + i * n + j], 1e-12);
      }
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double s = 0;  // Q^T Q = I
        for (int t = 0; t < m; ++t) s += Q[t * n + i] * Q[t * n + j];
        EXPECT_NEAR(s, i == j ? 1.0 : 0.0, 1e-12);
      }
  }
}

// ---- batch_norm ------------------------------------------------------------------------------

TEST(EvalBatchNorm, TrainingInferenceAndGradMatchFormulas) {
  OpRunner r;
  // operand [2, 3, 4] with feature_index 1.
  const std::vector<float> x = RandomFloats(24, 81), gy = RandomFloats(24, 82);
  const std::vector<float> scale = {0.5f, 1.5f, -2.0f}, offset = {0.1f, -0.2f, 0.3f};
  const double eps = 1e-3;
  auto feature = [](int i) { return (i / 4) % 3; };
  std::vector<double> mean(3, 0), var(3, 0);
  for (int i = 0; i < 24; ++i) mean[feature(i)] += x[i] / 8.0;
  for (int i = 0; i < 24; ++i)
    var[feature(i)] += (x[i] - mean[feature(i)]) * (x[i] - mean[feature(i)]) / 8.0;
  auto attrs = [&] {
    ir::AttributeMap a;
    a.Set("epsilon", ir::Attribute::Float(eps));
    a.Set("feature_index", ir::Attribute::Int(1));
    return a;
  };
  auto train =
      r.Run(ir::Opcode::kBatchNormTraining,
            {Lit<float>({2, 3, 4}, x), Lit<float>({3}, scale), Lit<float>({3}, offset)},
            {TensorType(ET::kF32, {2, 3, 4}), TensorType(ET::kF32, {3}), TensorType(ET::kF32, {3})},
            attrs());
  ASSERT_TRUE(train.ok()) << train.status();
  const std::vector<float> y = Values<float>((*train)[0].array);
  for (int f = 0; f < 3; ++f) {
    EXPECT_NEAR(Values<float>((*train)[1].array)[f], mean[f], 1e-6);
    EXPECT_NEAR(Values<float>((*train)[2].array)[f], var[f], 1e-6);
  }
  for (int i = 0; i < 24; ++i) {
    const int f = feature(i);
    EXPECT_NEAR(y[i], scale[f] * (x[i] - mean[f]) / std::sqrt(var[f] + eps) + offset[f], 1e-5);
  }
  std::vector<float> meanf(mean.begin(), mean.end()), varf(var.begin(), var.end());
  auto infer = r.Run(ir::Opcode::kBatchNormInference,
                     {Lit<float>({2, 3, 4}, x), Lit<float>({3}, scale), Lit<float>({3}, offset),
                      Lit<float>({3}, meanf), Lit<float>({3}, varf)},
                     {TensorType(ET::kF32, {2, 3, 4})}, attrs());
  ASSERT_TRUE(infer.ok()) << infer.status();
  for (int i = 0; i < 24; ++i) EXPECT_NEAR(Values<float>((*infer)[0].array)[i], y[i], 1e-5);
  auto grad =
      r.Run(ir::Opcode::kBatchNormGrad,
            {Lit<float>({2, 3, 4}, x), Lit<float>({3}, scale), Lit<float>({3}, meanf),
             Lit<float>({3}, varf), Lit<float>({2, 3, 4}, gy)},
            {TensorType(ET::kF32, {2, 3, 4}), TensorType(ET::kF32, {3}), TensorType(ET::kF32, {3})},
            attrs());
  ASSERT_TRUE(grad.ok()) << grad.status();
  // Textbook batch-norm backward: dx = scale/sigma * (gy - mean(gy) - xhat * mean(gy * xhat)).
  std::vector<double> mgy(3, 0), mgyx(3, 0), gscale(3, 0), goffset(3, 0);
  for (int i = 0; i < 24; ++i) {
    const int f = feature(i);
    const double xhat = (x[i] - meanf[f]) / std::sqrt(varf[f] + eps);
    mgy[f] += gy[i] / 8.0;
    mgyx[f] += gy[i] * xhat / 8.0;
    gscale[f] += gy[i] * xhat;
    goffset[f] += gy[i];
  }
  for (int i = 0; i < 24; ++i) {
    const int f = feature(i);
    const double sigma = std::sqrt(varf[f] + eps);
    const double xhat = (x[i] - meanf[f]) / sigma;
    EXPECT_NEAR(Values<float>((*grad)[0].array)[i],
                scale[f] / sigma * (gy[i] - mgy[f] - xhat * mgyx[f]), 1e-4);
  }
  for (int f = 0; f < 3; ++f) {
    EXPECT_NEAR(Values<float>((*grad)[1].array)[f], gscale[f], 1e-5);
    EXPECT_NEAR(Values<float>((*grad)[2].array)[f], goffset[f], 1e-5);
  }
}

}  // namespace
}  // namespace ember::eval
