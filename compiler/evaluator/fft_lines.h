// The evaluator's one-dimensional DFTs, shared with the host backend's fft thunk
// (compiler/host/fft_thunk.h) so that both give the same bits: every line is transformed in
// complex<double> by the same plan and rounded once into the result type. Lengths that are
// powers of two use radix-2 Cooley-Tukey; other lengths up to 128 a direct DFT with exactly
// reduced twiddle angles; longer ones Bluestein's algorithm (a power-of-two convolution), so
// every length costs O(n log n) past 128.
//
// Also here: the checks of an fft op's attributes and shapes (FftForm::Read), which both read.
#ifndef EMBER_COMPILER_EVALUATOR_FFT_LINES_H_
#define EMBER_COMPILER_EVALUATOR_FFT_LINES_H_

#include <complex>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/module.h"

namespace ember::eval {

using FftComplex = std::complex<double>;

// Runs fn(begin, end) over [0, count) in contiguous parts whose items are independent, possibly
// on several threads at once (the host backend passes its pool; nothing here starts threads).
using FftPartRunner =
    std::function<void(int64_t count, const std::function<void(int64_t, int64_t)>& fn)>;

// The unnormalized DFT of lines of one length and direction. Immutable once built (its twiddles
// are computed once): one plan serves many threads, each with scratch of its own.
class FftLinePlan {
 public:
  // inverse: exp(+2 pi i jk/n) (unscaled), else exp(-2 pi i jk/n).
  FftLinePlan(int64_t n, bool inverse);
  int64_t length() const { return n_; }
  // Elements of scratch Run needs.
  int64_t scratch_size() const { return scratch_size_; }
  // In place on `line` (n elements); `scratch` holds scratch_size() elements. With `parts`, the
  // passes over one long line are split into parts (for a line too long for one thread); the
  // arithmetic, and so every bit of the result, is the same either way.
  void Run(FftComplex* line, FftComplex* scratch, const FftPartRunner* parts = nullptr) const;

 private:
  void Radix2(FftComplex* a, const FftPartRunner* parts) const;
  void DirectDft(FftComplex* a, FftComplex* scratch) const;
  void Bluestein(FftComplex* a, FftComplex* scratch, const FftPartRunner* parts) const;

  int64_t n_;
  int64_t scratch_size_ = 0;
  std::vector<FftComplex> twiddles_, chirp_, kernel_;
  std::vector<uint32_t> reversed_;  // powers of two: the bit-reversed order
  std::unique_ptr<FftLinePlan> forward_, inverse_;  // Bluestein's power-of-two transforms
};

// The lines of `axis` of a row-major array of `dims`: line l (0 <= l < count) starts at
// first(l) and steps by stride.
struct FftAxisLines {
  FftAxisLines(const std::vector<int64_t>& dims, int64_t axis);
  int64_t n = 0, stride = 1, count = 0;
  int64_t first(int64_t l) const { return (l / stride) * n * stride + l % stride; }
};

// Transforms lines [begin, end) of `axis` in `data` in place, scaling by 1/n when the plan is
// inverse (numpy's and XLA's convention). `line` holds n elements, `scratch`
// plan.scratch_size(); `parts` as FftLinePlan::Run's.
void TransformFftLines(FftComplex* data, const FftAxisLines& lines, const FftLinePlan& plan,
                       bool inverse, int64_t begin, int64_t end, FftComplex* line,
                       FftComplex* scratch, const FftPartRunner* parts = nullptr);

// What an fft op computes, checked against its operand and result.
struct FftForm {
  enum class Type { kFft, kIfft, kRfft, kIrfft };
  Type type = Type::kFft;
  int64_t transformed = 1;         // the last 1 to 3 axes
  std::vector<int64_t> full_dims;  // the complex dims of the transform (fft_length last)
  std::vector<int64_t> in_dims, out_dims;
  bool forward() const { return type == Type::kFft || type == Type::kRfft; }
  // An error naming the op when attributes or shapes do not fit.
  static absl::StatusOr<FftForm> Read(const ir::Instruction& inst);
};

// Transforms every line of one axis of `data` (serially, or split across threads).
using FftAxisRunner = std::function<void(FftComplex* data, const FftAxisLines& lines,
                                         const FftLinePlan& plan, bool inverse)>;

// A whole fft: a line plan per transformed axis, built once, and the order the axes run in.
class FftPlan {
 public:
  explicit FftPlan(FftForm form);
  const FftForm& form() const { return form_; }
  // Scratch one line's transform needs (elements), at most.
  int64_t scratch_size() const { return scratch_size_; }
  // `in`: the operand as complex numbers (in_dims elements; it is overwritten); `work`: room for
  // full_dims elements (used by IRFFT only). Returns where the out_dims result elements are (for
  // IRFFT, their real parts are the result).
  FftComplex* Run(FftComplex* in, FftComplex* work, const FftAxisRunner& run_axis) const;

 private:
  FftForm form_;
  std::vector<std::unique_ptr<FftLinePlan>> plans_;  // per transformed axis, first to last
  int64_t scratch_size_ = 0;
};

}  // namespace ember::eval

#endif  // EMBER_COMPILER_EVALUATOR_FFT_LINES_H_
