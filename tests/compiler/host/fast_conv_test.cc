// The compiled host path's convolution (fast_conv.cc: im2col blocks times the Eigen GEMM)
// against the reference evaluator over a sweep of configurations: layouts through dimension
// numbers (NHWC, NCHW, kernel-first orders), strides, padding (negative too), lhs and rhs
// dilation, window reversal, feature groups, 1-D, 2-D and 3-D, f32 and f64, and bf16/f16/f8
// (widened to f32 with one rounding of the result; compared with the bound derived in
// narrow_float_compare.h). What the fast kernel does not cover (batch groups) must still run,
// through the evaluator's op table.
// The GEMM reassociates sums: results agree to a relative 1e-5 (f32) / 1e-12 (f64) of the sum
// of |products| bound, checked here as |a - b| <= tol * (1 + |a|) * sqrt(depth).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/frontend/import/import.h"
#include "compiler/frontend/text/mlir_text_parser.h"
#include "compiler/evaluator/evaluator.h"
#include "tests/compiler/host/host_test_util.h"
#include "tests/compiler/host/narrow_float_compare.h"
#include "compiler/ir/verifier.h"
#include "tests/compiler/parse_module.h"

namespace ember::host {
namespace {

using testing::HostBackend;

struct Conv {
  std::string name;
  int64_t batch = 1, cin = 1, cout = 1;
  std::vector<int64_t> in, window;  // spatial sizes
  std::vector<int64_t> stride, pad, lhs_dilate, rhs_dilate;  // pad: lo, hi per dim
  std::vector<int64_t> reverse;
  int64_t feature_groups = 1, batch_groups = 1;
  // Dimension order of each operand: b/f (i/o for the kernel) and spatial digits.
  std::string lhs = "b01f", rhs = "01io", out = "b01f";
  std::string type = "f32";
  std::string out_type;  // the result's element type when it is not `type`
  bool fast = true;  // expected to run through the fast kernel
};

std::string Shape(const std::string& order, const std::vector<int64_t>& spatial, int64_t b,
                  int64_t f, const std::string& type) {
  std::vector<int64_t> dims;
  for (char c : order) {
    if (c == 'b') dims.push_back(b);
    else if (c == 'f' || c == 'i') dims.push_back(f);
    else if (c == 'o') dims.push_back(b);
    else dims.push_back(spatial[c - '0']);
  }
  return absl::StrCat("tensor<", absl::StrJoin(dims, "x"), "x", type, ">");
}

std::string DimNumbers(const std::string& order) {
  std::vector<std::string> parts;
  for (char c : order) parts.push_back(std::string(1, c));
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

std::string Program(const Conv& c) {
  const size_t s = c.in.size();
  std::vector<int64_t> out(s);
  std::vector<std::string> pads;
  for (size_t i = 0; i < s; ++i) {
    const int64_t dilated_in = (c.in[i] - 1) * c.lhs_dilate[i] + 1;
    const int64_t padded = c.pad[2 * i] + dilated_in + c.pad[2 * i + 1];
    const int64_t dilated_k = (c.window[i] - 1) * c.rhs_dilate[i] + 1;
    out[i] = padded < dilated_k ? 0 : (padded - dilated_k) / c.stride[i] + 1;
    pads.push_back(absl::StrCat("[", c.pad[2 * i], ", ", c.pad[2 * i + 1], "]"));
  }
  const std::string lhs = Shape(c.lhs, c.in, c.batch, c.cin, c.type);
  // Kernel: i is the per-group input features, o (passed as "b") the output features.
  const std::string rhs = Shape(c.rhs, c.window, c.cout, c.cin / c.feature_groups, c.type);
  const std::string res = Shape(c.out, out, c.batch / c.batch_groups, c.cout,
                                c.out_type.empty() ? c.type : c.out_type);
  return absl::StrCat(
      "func.func @main(%x: ", lhs, ", %w: ", rhs, ") -> ", res, " {\n",
      "  %0 = stablehlo.convolution(%x, %w) dim_numbers = ", DimNumbers(c.lhs), "x",
      DimNumbers(c.rhs), "->", DimNumbers(c.out), ", window = {stride = [",
      absl::StrJoin(c.stride, ", "), "], pad = [", absl::StrJoin(pads, ", "),
      "], lhs_dilate = [", absl::StrJoin(c.lhs_dilate, ", "), "], rhs_dilate = [",
      absl::StrJoin(c.rhs_dilate, ", "), "], reverse = [", absl::StrJoin(c.reverse, ", "),
      "]} {batch_group_count = ", c.batch_groups, " : i64, feature_group_count = ",
      c.feature_groups, " : i64} : (", lhs, ", ", rhs, ") -> ", res, "\n",
      "  return %0 : ", res, "\n}\n");
}

using ::ember::test_util::Parse;

std::vector<eval::EvalValue> RandomArgs(const ir::Computation& entry, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-2, 2);
  std::vector<eval::EvalValue> args;
  for (const auto& p : entry.parameters()) {
    ir::Literal lit = ir::Literal::Create(p->type().shape()).value();
    if (p->type().element_type() == ir::ElementType::kF64) {
      const absl::Span<double> data = lit.mutable_data<double>().value();
      for (double& x : data) x = d(rng);
    } else {
      const absl::Span<float> data = lit.mutable_data<float>().value();
      for (float& x : data) x = static_cast<float>(d(rng));
    }
    args.push_back(eval::EvalValue::Array(std::move(lit)));
  }
  return args;
}

template <typename T>
void ExpectClose(absl::Span<const T> want, absl::Span<const T> got, double tol, double depth) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_LE(std::fabs(want[i] - got[i]), tol * (1 + std::fabs(want[i])) * std::sqrt(depth))
        << "element " << i << ": evaluator " << want[i] << ", compiled " << got[i];
  }
}

void Check(const Conv& c) {
  SCOPED_TRACE(c.name);
  const std::string text = Program(c);
  std::unique_ptr<ir::Module> module = Parse(text);
  ASSERT_NE(module, nullptr);
  auto compiled = testing::Compile(*module->entry(), HostBackend::kCompiled);
  auto evaluator = testing::Compile(*module->entry(), HostBackend::kEvaluator);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ASSERT_TRUE(evaluator.ok()) << evaluator.status();
  ASSERT_EQ((*compiled)->backend(), HostBackend::kCompiled);
  EXPECT_EQ(absl::StrContains((*compiled)->cost_report(), "fast kernels: 1 of 1"), c.fast)
      << (*compiled)->cost_report();
  const double depth = static_cast<double>(c.cin / c.feature_groups) *
                       [&] {
                         double w = 1;
                         for (int64_t k : c.window) w *= static_cast<double>(k);
                         return w;
                       }();
  if ((c.type != "f32" && c.type != "f64") || !c.out_type.empty()) {
    // Narrow floats: the bound of narrow_float_compare.h.
    const std::vector<eval::EvalValue> args = testing::RandomFloatArgs(*module->entry(), 7);
    auto clone = [&] {
      std::vector<eval::EvalValue> copy;
      for (const eval::EvalValue& a : args) copy.push_back(a.Clone());
      return copy;
    };
    auto want = (*evaluator)->Run(clone());
    ASSERT_TRUE(want.ok()) << want.status();
    auto abs_sums = (*evaluator)->Run(testing::AbsoluteArgs(args));
    ASSERT_TRUE(abs_sums.ok()) << abs_sums.status();
    for (int run = 0; run < 2; ++run) {
      auto got = (*compiled)->Run(clone());
      ASSERT_TRUE(got.ok()) << got.status();
      ASSERT_EQ(got->size(), 1u);
      testing::ExpectWithinF32AccumulationBound((*want)[0].array, (*got)[0].array,
                                                (*abs_sums)[0].array, depth);
    }
    return;
  }
  auto want = (*evaluator)->Run(RandomArgs(*module->entry(), 7));
  ASSERT_TRUE(want.ok()) << want.status();
  // Twice: the second run reuses the first's arena and thread scratch.
  for (int run = 0; run < 2; ++run) {
    auto got = (*compiled)->Run(RandomArgs(*module->entry(), 7));
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), 1u);
    if (c.type == "f64") {
      ExpectClose<double>((*want)[0].array.data<double>().value(),
                          (*got)[0].array.data<double>().value(), 1e-13, depth);
    } else {
      ExpectClose<float>((*want)[0].array.data<float>().value(),
                         (*got)[0].array.data<float>().value(), 2e-6, depth);
    }
  }
}

Conv Conv2d(std::string name) {
  Conv c;
  c.name = std::move(name);
  c.batch = 2;
  c.cin = 3;
  c.cout = 4;
  c.in = {7, 6};
  c.window = {3, 3};
  c.stride = {1, 1};
  c.pad = {1, 1, 1, 1};
  c.lhs_dilate = {1, 1};
  c.rhs_dilate = {1, 1};
  c.reverse = {0, 0};
  return c;
}

TEST(FastConvTest, TwoDimensionalSweep) {
  std::vector<Conv> cases;
  cases.push_back(Conv2d("nhwc same"));
  {
    Conv c = Conv2d("nchw oihw -> nchw");
    c.lhs = "bf01";
    c.rhs = "oi01";
    c.out = "bf01";
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("mixed layouts");
    c.lhs = "f0b1";
    c.rhs = "i0o1";
    c.out = "1fb0";
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("strides and asymmetric padding");
    c.stride = {2, 3};
    c.pad = {0, 2, 1, 0};
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("negative padding");
    c.pad = {-1, 0, 0, -2};
    c.window = {2, 2};
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("rhs dilation (atrous)");
    c.rhs_dilate = {2, 3};
    c.pad = {2, 2, 3, 3};
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("lhs dilation (transposed conv)");
    c.lhs_dilate = {2, 2};
    c.pad = {2, 2, 1, 2};
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("window reversal");
    c.reverse = {1, 0};
    c.window = {3, 2};
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("feature groups");
    c.cin = 6;
    c.cout = 9;
    c.feature_groups = 3;
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("depthwise nchw");
    c.cin = 4;
    c.cout = 8;
    c.feature_groups = 4;
    c.lhs = "bf01";
    c.out = "bf01";
    c.stride = {2, 2};
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("pointwise 1x1");
    c.window = {1, 1};
    c.pad = {0, 0, 0, 0};
    c.cin = 16;
    c.cout = 8;
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("pointwise 1x1 nchw");
    c.window = {1, 1};
    c.pad = {0, 0, 0, 0};
    c.lhs = "bf01";
    c.out = "bf01";
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("window larger than input: empty result");
    c.window = {9, 2};
    c.pad = {0, 0, 0, 0};
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("f64 everything");
    c.type = "f64";
    c.stride = {2, 1};
    c.rhs_dilate = {1, 2};
    c.pad = {1, 0, 2, 2};
    c.cin = 4;
    c.cout = 6;
    c.feature_groups = 2;
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("batch groups: evaluator");
    c.batch = 4;
    c.cout = 6;
    c.batch_groups = 2;
    c.fast = false;
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("many rows: several blocks on several threads");
    c.batch = 3;
    c.in = {40, 33};
    c.cin = 8;
    c.cout = 5;
    cases.push_back(c);
  }
  for (const Conv& c : cases) Check(c);
}

TEST(FastConvTest, DilatedInputsByPhase) {
  // lhs dilation runs one output phase at a time over that phase's taps (fast_conv.cc
  // RunPhases): with strides and rhs dilation shifting the phases, phases without any tap (zero
  // outputs), feature groups, reversal, non-canonical layouts, 1-D and 3-D, and many rows.
  std::vector<Conv> cases;
  {
    Conv c = Conv2d("lhs dilation 3x2, stride 2, rhs dilation 2");
    c.lhs_dilate = {3, 2};
    c.stride = {2, 1};
    c.rhs_dilate = {2, 1};
    c.pad = {3, 1, 2, 2};
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("window 1 and 2 under dilation 2 and 3: phases without taps");
    c.window = {1, 2};
    c.lhs_dilate = {2, 3};
    c.pad = {1, 0, 0, 2};
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("lhs dilation with groups, reversal and nchw");
    c.cin = 6;
    c.cout = 9;
    c.feature_groups = 3;
    c.lhs_dilate = {2, 2};
    c.pad = {2, 1, 1, 2};
    c.reverse = {1, 0};
    c.lhs = "bf01";
    c.out = "bf01";
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("lhs dilation over many rows");
    c.batch = 3;
    c.in = {30, 21};
    c.cin = 8;
    c.cout = 5;
    c.lhs_dilate = {2, 2};
    c.pad = {2, 2, 2, 2};
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("f64 lhs dilation");
    c.type = "f64";
    c.lhs_dilate = {2, 3};
    c.pad = {1, 1, 2, 0};
    cases.push_back(c);
  }
  for (const Conv& c : cases) Check(c);
  Conv c3;
  c3.name = "3-D lhs dilation";
  c3.batch = 2;
  c3.cin = 3;
  c3.cout = 4;
  c3.in = {4, 5, 3};
  c3.window = {3, 2, 3};
  c3.stride = {1, 1, 2};
  c3.pad = {2, 2, 1, 1, 2, 1};
  c3.lhs_dilate = {2, 1, 3};
  c3.rhs_dilate = {1, 1, 1};
  c3.reverse = {0, 1, 0};
  c3.lhs = "b012f";
  c3.rhs = "012io";
  c3.out = "b012f";
  Check(c3);
  Conv c1;
  c1.name = "1-D lhs dilation 4";
  c1.batch = 2;
  c1.cin = 3;
  c1.cout = 2;
  c1.in = {9};
  c1.window = {5};
  c1.stride = {1};
  c1.pad = {4, 4};
  c1.lhs_dilate = {4};
  c1.rhs_dilate = {1};
  c1.reverse = {0};
  c1.lhs = "b0f";
  c1.rhs = "0io";
  c1.out = "b0f";
  Check(c1);
}

TEST(FastConvTest, OneAndThreeDimensional) {
  Conv c1;
  c1.name = "1-D nwc";
  c1.batch = 3;
  c1.cin = 5;
  c1.cout = 2;
  c1.in = {17};
  c1.window = {4};
  c1.stride = {2};
  c1.pad = {2, 1};
  c1.lhs_dilate = {1};
  c1.rhs_dilate = {2};
  c1.reverse = {1};
  c1.lhs = "b0f";
  c1.rhs = "0io";
  c1.out = "b0f";
  Check(c1);
  Conv c1t = c1;
  c1t.name = "1-D ncw, kernel oiw";
  c1t.lhs = "bf0";
  c1t.rhs = "oi0";
  c1t.out = "bf0";
  c1t.lhs_dilate = {3};
  Check(c1t);

  Conv c3;
  c3.name = "3-D ndhwc";
  c3.batch = 2;
  c3.cin = 3;
  c3.cout = 4;
  c3.in = {5, 6, 4};
  c3.window = {3, 2, 3};
  c3.stride = {1, 2, 1};
  c3.pad = {1, 1, 0, 1, 1, 1};
  c3.lhs_dilate = {1, 1, 1};
  c3.rhs_dilate = {1, 1, 2};
  c3.reverse = {0, 1, 0};
  c3.lhs = "b012f";
  c3.rhs = "012io";
  c3.out = "b012f";
  Check(c3);
  Conv c3g = c3;
  c3g.name = "3-D ncdhw, groups";
  c3g.cin = 6;
  c3g.cout = 4;
  c3g.feature_groups = 2;
  c3g.lhs = "bf012";
  c3g.rhs = "oi012";
  c3g.out = "bf012";
  Check(c3g);
}

TEST(FastConvTest, NarrowFloatTypes) {
  std::vector<Conv> cases;
  {
    Conv c = Conv2d("bf16 nhwc same");
    c.type = "bf16";
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("f16 nchw, strided, asymmetric padding");
    c.type = "f16";
    c.lhs = "bf01";
    c.rhs = "oi01";
    c.out = "bf01";
    c.stride = {2, 3};
    c.pad = {0, 2, 1, 0};
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("bf16 feature groups");
    c.type = "bf16";
    c.cin = 6;
    c.cout = 9;
    c.feature_groups = 3;
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("f16 depthwise, stride 2");
    c.type = "f16";
    c.cin = 4;
    c.cout = 8;
    c.feature_groups = 4;
    c.stride = {2, 2};
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("bf16 lhs dilation (the input gradient of a strided conv)");
    c.type = "bf16";
    c.lhs_dilate = {2, 2};
    c.pad = {2, 2, 1, 2};
    c.reverse = {1, 1};
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("bf16 operands, f32 result (preferred_element_type)");
    c.type = "bf16";
    c.out_type = "f32";
    c.cin = 8;
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("f16 pointwise 1x1");
    c.type = "f16";
    c.window = {1, 1};
    c.pad = {0, 0, 0, 0};
    c.cin = 16;
    c.cout = 8;
    cases.push_back(c);
  }
  {
    Conv c = Conv2d("f8E4M3FN operands, bf16 result");
    c.type = "f8E4M3FN";
    c.out_type = "bf16";
    cases.push_back(c);
  }
  {
    // Input above 64Ki elements: widening split across the pool; several GEMM blocks.
    Conv c = Conv2d("bf16 many rows");
    c.type = "bf16";
    c.batch = 3;
    c.in = {64, 48};
    c.cin = 8;
    c.cout = 16;
    cases.push_back(c);
  }
  for (const Conv& c : cases) Check(c);
}

}  // namespace
}  // namespace ember::host
