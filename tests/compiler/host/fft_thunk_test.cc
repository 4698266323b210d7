// fft on the host backend's library thunk (fft_thunk.h) against the evaluator, bit for bit (both
// run the line transforms of fft_lines.h in complex<double>): FFT, IFFT, RFFT and IRFFT over 1
// to 3 axes, lengths that take each algorithm (powers of two, the direct DFT up to 128,
// Bluestein past it, 1 and 0), batches split across the pool, single long lines whose passes
// are split across it, f32/f64 and c64/c128, special
// values; bf16 and f16 RFFT operands.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/compiler/host/native_op_differential.h"

namespace ember::host {
namespace {

using namespace testing;  // NOLINT: the shared differential helpers

// Both backends' results agree bit for bit, component by component (complex results as pairs
// of reals; any NaN matches any NaN).
int64_t DifferingComponents(const NativeRun& run) {
  EXPECT_EQ(run.host.size(), 1u);
  EXPECT_EQ(run.evaluator.size(), 1u);
  if (run.host.size() != 1 || run.evaluator.size() != 1) return -1;
  const ir::Literal& a = run.host[0].array;
  const ir::Literal& b = run.evaluator[0].array;
  EXPECT_TRUE(a.shape() == b.shape());
  if (!(a.shape() == b.shape())) return -1;
  const ir::ElementType t = a.element_type();
  const bool wide = t == ir::ElementType::kF64 || t == ir::ElementType::kC128;
  const size_t width = wide ? 8 : 4;
  int64_t differing = 0;
  for (size_t i = 0; i + width <= a.bytes().size(); i += width) {
    double x, y;
    if (wide) {
      std::memcpy(&x, a.bytes().data() + i, 8);
      std::memcpy(&y, b.bytes().data() + i, 8);
    } else {
      float fx, fy;
      std::memcpy(&fx, a.bytes().data() + i, 4);
      std::memcpy(&fy, b.bytes().data() + i, 4);
      x = fx;
      y = fy;
    }
    const bool same_bits = std::memcmp(a.bytes().data() + i, b.bytes().data() + i, width) == 0;
    if (!same_bits && !(std::isnan(x) && std::isnan(y))) ++differing;
  }
  return differing;
}

struct Case {
  std::vector<int64_t> batch;
  std::vector<int64_t> lengths;
};

// `fft_type` over the last lengths.size() axes of batch + lengths (the half spectrum's length
// last for IRFFT's operand and RFFT's result).
std::string FftProgram(const char* fft_type, const Case& c, const char* real, const char* complex,
                       std::vector<int64_t>* in_dims) {
  std::vector<int64_t> full = c.batch;
  full.insert(full.end(), c.lengths.begin(), c.lengths.end());
  std::vector<int64_t> half = full;
  half.back() = c.lengths.back() / 2 + 1;
  const std::string type(fft_type);
  std::vector<int64_t> in = type == "IRFFT" ? half : full;
  std::vector<int64_t> out = type == "RFFT" ? half : full;
  const std::string it = TensorType(in, type == "RFFT" ? real : complex);
  const std::string ot = TensorType(out, type == "IRFFT" ? real : complex);
  *in_dims = in;
  return absl::StrCat("func.func @main(%x: ", it, ") -> ", ot, " {\n",
                      "  %r = stablehlo.fft %x, type = ", fft_type, ", length = [",
                      absl::StrJoin(c.lengths, ", "), "] : (", it, ") -> ", ot,
                      "\n  return %r : ", ot, "\n}\n");
}

TEST(FftThunkTest, EveryTypeAndLengthMatchesTheEvaluatorBitForBit) {
  const Case cases[] = {{{}, {8}},        {{3}, {1}},      {{5}, {12}},   {{2}, {100}},
                        {{2}, {129}},     {{4}, {256}},    {{}, {1000}},  {{3}, {4, 6}},
                        {{2}, {16, 130}}, {{}, {3, 4, 5}}, {{64}, {512}}, {{2}, {0}},
                        {{1}, {9, 1}},
                        // One long line: its passes split across the pool (fft_thunk.cc), for
                        // an odd and an even number of radix-2 stages, and Bluestein's.
                        {{}, {32768}},    {{1}, {65536}},  {{}, {20000}}};
  const std::pair<const char*, const char*> types[] = {{"f32", "complex<f32>"},
                                                       {"f64", "complex<f64>"}};
  uint64_t seed = 1;
  for (const char* fft_type : {"FFT", "IFFT", "RFFT", "IRFFT"}) {
    for (const auto& [real, complex] : types) {
      for (const Case& c : cases) {
        SCOPED_TRACE(absl::StrCat(fft_type, " ", real, " batch ", absl::StrJoin(c.batch, "x"),
                                  " lengths ", absl::StrJoin(c.lengths, "x")));
        // (A real transform of length 0 has no half spectrum: an error on both backends.)
        if (c.lengths.back() == 0 && std::string(fft_type).find("RFFT") != std::string::npos) {
          continue;
        }
        std::vector<int64_t> in_dims;
        const std::string text = FftProgram(fft_type, c, real, complex, &in_dims);
        const bool real_in = std::string(fft_type) == "RFFT";
        const ir::ElementType in_type =
            real_in ? (std::string(real) == "f32" ? ir::ElementType::kF32 : ir::ElementType::kF64)
                    : (std::string(real) == "f32" ? ir::ElementType::kC64 : ir::ElementType::kC128);
        std::mt19937_64 rng(seed++);
        // Finite values, and once per case special values too (NaN, inf spread through lines).
        for (bool specials : {false, true}) {
          if (in_type == ir::ElementType::kC64 || in_type == ir::ElementType::kC128) {
            // MixedArray makes real arrays: build the complex operand from pairs of reals.
            const ir::ElementType part =
                in_type == ir::ElementType::kC64 ? ir::ElementType::kF32 : ir::ElementType::kF64;
            std::vector<int64_t> pairs = in_dims;
            pairs.push_back(2);
            ir::Literal parts = MixedArray(part, pairs, rng, specials);
            ir::Literal arg =
                ir::Literal::Create(ir::Shape::Make(in_type, in_dims).value()).value();
            std::copy(parts.bytes().begin(), parts.bytes().end(), arg.mutable_bytes().begin());
            NativeRun run = RunBothBackends(text, arg);
            EXPECT_EQ(DifferingComponents(run), 0) << text;
            EXPECT_EQ(run.cost_report.find("  evaluator "), std::string::npos) << run.cost_report;
          } else {
            NativeRun run = RunBothBackends(text, MixedArray(in_type, in_dims, rng, specials));
            EXPECT_EQ(DifferingComponents(run), 0) << text;
            EXPECT_EQ(run.cost_report.find("  evaluator "), std::string::npos) << run.cost_report;
          }
        }
      }
    }
  }
}

TEST(FftThunkTest, NarrowRealOperandsMatchTheEvaluatorBitForBit) {
  // bf16/f16 RFFT operands are read through f32. (An IRFFT's result is f32 or f64: the
  // verifier rejects a narrow one.)
  std::mt19937_64 rng(5);
  const Case cases[] = {{{2}, {16}}, {{3}, {12}}, {{2}, {4, 6}}, {{}, {300}}};
  for (const char* real : {"bf16", "f16"}) {
    const ir::ElementType real_type =
        std::string(real) == "bf16" ? ir::ElementType::kBF16 : ir::ElementType::kF16;
    for (const Case& c : cases) {
      for (bool specials : {false, true}) {
        SCOPED_TRACE(absl::StrCat(real, " lengths ", absl::StrJoin(c.lengths, "x"), " specials ",
                                  specials));
        std::vector<int64_t> in_dims;
        const std::string rfft = FftProgram("RFFT", c, real, "complex<f32>", &in_dims);
        NativeRun run = RunBothBackends(rfft, MixedArray(real_type, in_dims, rng, specials));
        EXPECT_EQ(DifferingComponents(run), 0) << rfft;
        EXPECT_EQ(run.cost_report.find("  evaluator "), std::string::npos) << run.cost_report;
      }
    }
  }
}

}  // namespace
}  // namespace ember::host
