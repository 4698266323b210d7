// Reference evaluation of fft: FFT, IFFT, RFFT and IRFFT over the last 1 to 3 dimensions.
//
// Everything is computed in complex<double> and rounded once into the result type. Lengths that
// are powers of two use radix-2 Cooley-Tukey; other lengths up to 128 a direct DFT with exactly
// reduced twiddle angles; longer ones Bluestein's algorithm (a power-of-two convolution), so
// every length costs O(n log n) past 128. IFFT and IRFFT scale by 1/n per transformed dimension
// (numpy's and XLA's convention). IRFFT rebuilds the full Hermitian spectrum from the first
// n/2+1 entries of the last dimension; the imaginary parts of the DC (and, for even n, Nyquist)
// terms therefore do not affect the result, as in numpy.irfft.
#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "compiler/evaluator/eval_family_support.h"
#include "compiler/evaluator/evaluator.h"

namespace ember::eval {
namespace {

namespace fs = family_support;
using Complex = std::complex<double>;

bool IsPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// exp(sign * 2 pi i * num / den) with num reduced modulo den first, so large products stay exact.
Complex Twiddle(int64_t num, int64_t den, double sign) {
  const int64_t r = num % den;
  const double angle =
      sign * 2.0 * std::numbers::pi * static_cast<double>(r) / static_cast<double>(den);
  return Complex(std::cos(angle), std::sin(angle));
}

// The twiddle factors of one transform length, computed once per axis and shared by all its
// lines (cos and sin per butterfly cost more than the butterflies). Every factor is the Twiddle
// the direct formula would compute, so the results do not depend on the tables.
class LinePlan {
 public:
  LinePlan(int64_t n, double sign) : n_(n) {
    if (n <= 1) return;
    if (IsPowerOfTwo(n)) {
      // Stage `len` uses Twiddle(k, len) = Twiddle(k * (n / len), n): the same double, since
      // both angles scale a rounded product by a power of two.
      twiddles_.resize(static_cast<size_t>(n / 2));
      for (int64_t k = 0; k < n / 2; ++k) twiddles_[k] = Twiddle(k, n, sign);
    } else if (n <= 128) {
      twiddles_.resize(static_cast<size_t>(n));
      for (int64_t k = 0; k < n; ++k) twiddles_[k] = Twiddle(k, n, sign);
    } else {
      // Bluestein: the chirp, and the forward transform of its conjugate's circulant.
      int64_t m = 1;
      while (m < 2 * n - 1) m <<= 1;
      chirp_.resize(static_cast<size_t>(n));
      // chirp[k] = exp(sign * pi i k^2 / n) = Twiddle(k^2 mod 2n, 2n).
      for (int64_t k = 0; k < n; ++k) chirp_[k] = Twiddle((k * k) % (2 * n), 2 * n, sign);
      forward_ = std::make_unique<LinePlan>(m, -1.0);
      inverse_ = std::make_unique<LinePlan>(m, +1.0);
      kernel_.assign(static_cast<size_t>(m), 0);
      kernel_[0] = std::conj(chirp_[0]);
      for (int64_t k = 1; k < n; ++k) kernel_[k] = kernel_[m - k] = std::conj(chirp_[k]);
      forward_->Run(kernel_);
      scratch_.resize(static_cast<size_t>(m));
    }
  }

  // In-place unnormalized DFT of one line of length n.
  void Run(std::vector<Complex>& a) {
    if (n_ <= 1) return;
    if (IsPowerOfTwo(n_)) {
      Radix2(a);
    } else if (n_ <= 128) {
      DirectDft(a);
    } else {
      Bluestein(a);
    }
  }

 private:
  void Radix2(std::vector<Complex>& a) const {
    const size_t n = a.size();
    for (size_t i = 1, j = 0; i < n; ++i) {
      size_t bit = n >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) std::swap(a[i], a[j]);
    }
    for (size_t len = 2; len <= n; len <<= 1) {
      const size_t step = n / len;
      for (size_t i = 0; i < n; i += len) {
        for (size_t k = 0; k < len / 2; ++k) {
          const Complex u = a[i + k];
          const Complex v = a[i + k + len / 2] * twiddles_[k * step];
          a[i + k] = u + v;
          a[i + k + len / 2] = u - v;
        }
      }
    }
  }

  void DirectDft(std::vector<Complex>& a) {
    scratch_.resize(a.size());
    for (int64_t k = 0; k < n_; ++k) {
      Complex sum = 0;
      for (int64_t j = 0; j < n_; ++j) sum += a[j] * twiddles_[(j * k) % n_];
      scratch_[k] = sum;
    }
    a.swap(scratch_);
  }

  void Bluestein(std::vector<Complex>& a) {
    const int64_t m = static_cast<int64_t>(kernel_.size());
    std::vector<Complex>& x = scratch_;
    std::fill(x.begin(), x.end(), Complex(0));
    for (int64_t k = 0; k < n_; ++k) x[k] = a[k] * chirp_[k];
    forward_->Run(x);
    for (int64_t i = 0; i < m; ++i) x[i] *= kernel_[i];
    inverse_->Run(x);
    for (int64_t k = 0; k < n_; ++k) a[k] = x[k] * chirp_[k] / static_cast<double>(m);
  }

  int64_t n_;
  std::vector<Complex> twiddles_, chirp_, kernel_, scratch_;
  std::unique_ptr<LinePlan> forward_, inverse_;
};

// Transforms `data` (row-major `dims`) along `axis`, scaling by 1/n when inverse.
void TransformAxis(std::vector<Complex>& data, const std::vector<int64_t>& dims, int64_t axis,
                   bool inverse) {
  const int64_t n = dims[axis];
  if (n == 0) return;
  int64_t inner = 1;
  for (size_t i = static_cast<size_t>(axis) + 1; i < dims.size(); ++i) inner *= dims[i];
  const int64_t outer = fs::Product(dims) / (n * inner);
  std::vector<Complex> line(static_cast<size_t>(n));
  LinePlan plan(n, inverse ? 1.0 : -1.0);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      const int64_t base = o * n * inner + in;
      for (int64_t j = 0; j < n; ++j) line[j] = data[base + j * inner];
      plan.Run(line);
      const double scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
      for (int64_t j = 0; j < n; ++j) data[base + j * inner] = line[j] * scale;
    }
  }
}

absl::StatusOr<std::vector<EvalValue>> EvalFft(const ir::Instruction& inst,
                                               std::vector<EvalValue>& operands, Evaluator&) {
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 1));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* operand, fs::ArrayOperand(inst, operands, 0));
  EMBER_ASSIGN_OR_RETURN(std::string type, fs::StringAttr(inst, "fft_type"));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> fft_length, fs::IntsAttr(inst, "fft_length"));
  EMBER_ASSIGN_OR_RETURN(ir::Shape result_shape, fs::ResultShape(inst, 0));
  const ir::Shape& in_shape = operand->shape();
  const int64_t rank = in_shape.rank();
  const int64_t l = static_cast<int64_t>(fft_length.size());
  if (l < 1 || l > 3 || l > rank) {
    return fs::OpError(inst, absl::StrCat("fft_length [", absl::StrJoin(fft_length, ", "),
                                          "] must have 1 to 3 entries, at most the rank ", rank));
  }
  const bool forward = type == "FFT" || type == "RFFT";
  const bool real_in = type == "RFFT";
  const bool real_out = type == "IRFFT";
  if (type != "FFT" && type != "IFFT" && type != "RFFT" && type != "IRFFT") {
    return fs::OpError(inst, absl::StrCat("unknown fft_type '", type, "'"));
  }
  if (real_in ? !ir::IsFloat(in_shape.element_type()) : !ir::IsComplex(in_shape.element_type())) {
    return fs::OpError(inst, absl::StrCat(type, " does not take ", in_shape.ToString()));
  }
  if (real_out ? !ir::IsFloat(result_shape.element_type())
               : !ir::IsComplex(result_shape.element_type())) {
    return fs::OpError(inst, absl::StrCat(type, " does not produce ", result_shape.ToString()));
  }
  // The full (complex) dims of the transform: fft_length on the last l axes.
  std::vector<int64_t> full_dims = in_shape.dims();
  for (int64_t i = 0; i < l; ++i) full_dims[rank - l + i] = fft_length[i];
  std::vector<int64_t> expect_in = full_dims, expect_out = full_dims;
  if (real_in) expect_out.back() = fft_length.back() / 2 + 1;
  if (real_out) expect_in.back() = fft_length.back() / 2 + 1;
  if (in_shape.dims() != expect_in || result_shape.dims() != expect_out) {
    return fs::OpError(
        inst, absl::StrCat(type, " with fft_length [", absl::StrJoin(fft_length, ", "), "] maps ",
                           in_shape.ToString(), " to ", result_shape.ToString(),
                           "; expected dims [", absl::StrJoin(expect_in, ", "), "] -> [",
                           absl::StrJoin(expect_out, ", "), "]"));
  }
  EMBER_ASSIGN_OR_RETURN(std::vector<Complex> in, fs::LiteralTo<Complex>(*operand));

  std::vector<Complex> data;
  if (real_out) {
    // Inverse over the leading transformed axes on the half spectrum, then Hermitian-extend the
    // last axis.
    const std::vector<int64_t>& half_dims = in_shape.dims();
    for (int64_t axis = rank - l; axis < rank - 1; ++axis) TransformAxis(in, half_dims, axis, true);
    const int64_t n = full_dims.back();
    const int64_t h = half_dims.back();
    const int64_t lines = n == 0 ? 0 : fs::Product(full_dims) / n;
    data.assign(static_cast<size_t>(fs::Product(full_dims)), 0);
    for (int64_t line = 0; line < lines; ++line) {
      for (int64_t k = 0; k < n; ++k) {
        Complex v;
        if (k < h && k <= n / 2) {
          v = in[line * h + k];
        } else if (n - k < h) {
          v = std::conj(in[line * h + (n - k)]);
        }
        data[line * n + k] = v;
      }
    }
    TransformAxis(data, full_dims, rank - 1, true);
  } else {
    data = std::move(in);
    for (int64_t axis = rank - 1; axis >= rank - l; --axis) {
      TransformAxis(data, full_dims, axis, !forward);
    }
    if (real_in) {
      // Keep the first n/2+1 entries of the last axis.
      const int64_t n = full_dims.back();
      const int64_t h = expect_out.back();
      const int64_t lines = n == 0 ? 0 : fs::Product(full_dims) / n;
      std::vector<Complex> truncated(static_cast<size_t>(lines * h));
      for (int64_t line = 0; line < lines; ++line) {
        for (int64_t k = 0; k < h; ++k) truncated[line * h + k] = data[line * n + k];
      }
      data = std::move(truncated);
    }
  }
  ir::Literal result;
  if (real_out) {
    std::vector<double> re(data.size());
    for (size_t i = 0; i < data.size(); ++i) re[i] = data[i].real();
    EMBER_ASSIGN_OR_RETURN(result, fs::LiteralFrom<double>(result_shape, absl::MakeConstSpan(re)));
  } else {
    EMBER_ASSIGN_OR_RETURN(result,
                           fs::LiteralFrom<Complex>(result_shape, absl::MakeConstSpan(data)));
  }
  std::vector<EvalValue> results;
  results.push_back(EvalValue::Array(std::move(result)));
  return results;
}

}  // namespace

namespace family_support {
void RegisterFftOps(OpTable& table) { table.Register(ir::Opcode::kFft, EvalFft); }
}  // namespace family_support

}  // namespace ember::eval
