#include "compiler/evaluator/fft_lines.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/evaluator/eval_family_support.h"

namespace ember::eval {
namespace {

namespace fs = family_support;

bool IsPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// exp(sign * 2 pi i * num / den) with num reduced modulo den first, so large products stay exact.
FftComplex Twiddle(int64_t num, int64_t den, double sign) {
  const int64_t r = num % den;
  const double angle =
      sign * 2.0 * std::numbers::pi * static_cast<double>(r) / static_cast<double>(den);
  return FftComplex(std::cos(angle), std::sin(angle));
}

// The product by its textbook formula (no recovery of infinities from NaN parts, as in numpy's
// pocketfft): unlike std::complex's operator*, it needs no call and the compiler can vectorize it.
inline FftComplex Multiply(const FftComplex& a, const FftComplex& b) {
  return FftComplex(a.real() * b.real() - a.imag() * b.imag(),
                    a.real() * b.imag() + a.imag() * b.real());
}

}  // namespace

// Every twiddle is the Twiddle the direct formula would compute, so the results do not depend on
// the tables.
FftLinePlan::FftLinePlan(int64_t n, bool inverse) : n_(n) {
  const double sign = inverse ? 1.0 : -1.0;
  if (n <= 1) return;
  if (IsPowerOfTwo(n)) {
    // Stage `len` uses Twiddle(k, len) = Twiddle(k * (n / len), n): the same double, since both
    // angles scale a rounded product by a power of two. Each stage's factors are stored side by
    // side (stage len's k-th at len/2 - 1 + k), so every stage reads its table in order.
    std::vector<FftComplex> full(static_cast<size_t>(n / 2));
    for (int64_t k = 0; k < n / 2; ++k) full[k] = Twiddle(k, n, sign);
    twiddles_.resize(static_cast<size_t>(n - 1));
    for (int64_t len = 2; len <= n; len <<= 1) {
      for (int64_t k = 0; k < len / 2; ++k) twiddles_[len / 2 - 1 + k] = full[k * (n / len)];
    }
    // Each index's bits reversed (log2(n) of them).
    reversed_.resize(static_cast<size_t>(n));
    for (int64_t i = 1, j = 0; i < n; ++i) {
      int64_t bit = n >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j ^= bit;
      reversed_[i] = static_cast<uint32_t>(j);
    }
  } else if (n <= 128) {
    twiddles_.resize(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) twiddles_[k] = Twiddle(k, n, sign);
    scratch_size_ = n;
  } else {
    // Bluestein: the chirp, and the forward transform of its conjugate's circulant.
    int64_t m = 1;
    while (m < 2 * n - 1) m <<= 1;
    chirp_.resize(static_cast<size_t>(n));
    // chirp[k] = exp(sign * pi i k^2 / n) = Twiddle(k^2 mod 2n, 2n).
    for (int64_t k = 0; k < n; ++k) chirp_[k] = Twiddle((k * k) % (2 * n), 2 * n, sign);
    forward_ = std::make_unique<FftLinePlan>(m, false);
    inverse_ = std::make_unique<FftLinePlan>(m, true);
    kernel_.assign(static_cast<size_t>(m), 0);
    kernel_[0] = std::conj(chirp_[0]);
    for (int64_t k = 1; k < n; ++k) kernel_[k] = kernel_[m - k] = std::conj(chirp_[k]);
    forward_->Run(kernel_.data(), nullptr);
    scratch_size_ = m;
  }
}

void FftLinePlan::Run(FftComplex* line, FftComplex* scratch, const FftPartRunner* parts) const {
  if (n_ <= 1) return;
  if (IsPowerOfTwo(n_)) {
    Radix2(line, parts);
  } else if (n_ <= 128) {
    DirectDft(line, scratch);
  } else {
    Bluestein(line, scratch, parts);
  }
}

namespace {

// fn over [0, count): in parts when `parts` is given, else at once.
void ForParts(const FftPartRunner* parts, int64_t count,
              const std::function<void(int64_t, int64_t)>& fn) {
  if (parts != nullptr) {
    (*parts)(count, fn);
  } else {
    fn(0, count);
  }
}

}  // namespace

// Iterative decimation in time: the bit-reversed order, then log2(n) stages of butterflies.
// Two consecutive stages run in one pass over the line (radix 4: each quartet of elements is
// loaded once for both), with exactly the radix-2 stages' arithmetic: the same bits as running
// them one after the other.
void FftLinePlan::Radix2(FftComplex* a, const FftPartRunner* parts) const {
  const size_t n = static_cast<size_t>(n_);
  // (Each swapped pair is visited once, from its smaller index: parts never share a pair.)
  ForParts(parts, n_, [&](int64_t begin, int64_t end) {
    for (size_t i = static_cast<size_t>(begin); i < static_cast<size_t>(end); ++i) {
      const size_t j = reversed_[i];
      if (i < j) std::swap(a[i], a[j]);
    }
  });
  size_t q = 1;  // the size of the sub-transforms the next pass combines
  size_t stages = 0;
  while ((size_t{1} << stages) < n) ++stages;
  if (stages % 2 == 1) {  // one stage alone first (length 2: its twiddle is 1)
    ForParts(parts, n_ / 2, [&](int64_t begin, int64_t end) {
      for (size_t i = 2 * static_cast<size_t>(begin); i < 2 * static_cast<size_t>(end); i += 2) {
        const FftComplex u = a[i];
        const FftComplex v = Multiply(a[i + 1], twiddles_[0]);
        a[i] = u + v;
        a[i + 1] = u - v;
      }
    });
    q = 2;
  }
  for (; 4 * q <= n; q *= 4) {
    const FftComplex* w2 = twiddles_.data() + q - 1;      // the stage of length 2q
    const FftComplex* w4 = twiddles_.data() + 2 * q - 1;  // the stage of length 4q
    // Butterfly quartet u (n/4 of them) is (k = u mod q) of the block of 4q at 4q (u div q).
    ForParts(parts, n_ / 4, [&, q, w2, w4](int64_t begin, int64_t end) {
      for (size_t u = static_cast<size_t>(begin); u < static_cast<size_t>(end);) {
        FftComplex* x = a + 4 * q * (u / q);
        const size_t k_end = std::min(q, u % q + (static_cast<size_t>(end) - u));
        for (size_t k = u % q; k < k_end; ++k) {
          const FftComplex t1 = Multiply(x[k + q], w2[k]);
          const FftComplex t3 = Multiply(x[k + 3 * q], w2[k]);
          const FftComplex b0 = x[k] + t1, b1 = x[k] - t1;
          const FftComplex b2 = x[k + 2 * q] + t3, b3 = x[k + 2 * q] - t3;
          const FftComplex t2 = Multiply(b2, w4[k]);
          const FftComplex t4 = Multiply(b3, w4[k + q]);
          x[k] = b0 + t2;
          x[k + 2 * q] = b0 - t2;
          x[k + q] = b1 + t4;
          x[k + 3 * q] = b1 - t4;
        }
        u += k_end - u % q;
      }
    });
  }
}

void FftLinePlan::DirectDft(FftComplex* a, FftComplex* scratch) const {
  for (int64_t k = 0; k < n_; ++k) {
    FftComplex sum = 0;
    for (int64_t j = 0; j < n_; ++j) sum += Multiply(a[j], twiddles_[(j * k) % n_]);
    scratch[k] = sum;
  }
  std::copy(scratch, scratch + n_, a);
}

void FftLinePlan::Bluestein(FftComplex* a, FftComplex* scratch, const FftPartRunner* parts) const {
  const int64_t m = static_cast<int64_t>(kernel_.size());
  FftComplex* x = scratch;
  ForParts(parts, m, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) x[k] = k < n_ ? Multiply(a[k], chirp_[k]) : FftComplex(0);
  });
  forward_->Run(x, nullptr, parts);
  ForParts(parts, m, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) x[i] = Multiply(x[i], kernel_[i]);
  });
  inverse_->Run(x, nullptr, parts);
  ForParts(parts, n_, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) a[k] = Multiply(x[k], chirp_[k]) / static_cast<double>(m);
  });
}

FftAxisLines::FftAxisLines(const std::vector<int64_t>& dims, int64_t axis) {
  n = dims[axis];
  for (size_t i = static_cast<size_t>(axis) + 1; i < dims.size(); ++i) stride *= dims[i];
  count = n == 0 ? 0 : fs::Product(dims) / n;
}

void TransformFftLines(FftComplex* data, const FftAxisLines& lines, const FftLinePlan& plan,
                       bool inverse, int64_t begin, int64_t end, FftComplex* line,
                       FftComplex* scratch, const FftPartRunner* parts) {
  const int64_t n = lines.n, stride = lines.stride;
  const double scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
  for (int64_t l = begin; l < end; ++l) {
    FftComplex* base = data + lines.first(l);
    if (stride == 1) {
      plan.Run(base, scratch, parts);
      if (inverse) {
        for (int64_t j = 0; j < n; ++j) base[j] *= scale;
      }
      continue;
    }
    for (int64_t j = 0; j < n; ++j) line[j] = base[j * stride];
    plan.Run(line, scratch, parts);
    for (int64_t j = 0; j < n; ++j) base[j * stride] = inverse ? line[j] * scale : line[j];
  }
}

FftPlan::FftPlan(FftForm form) : form_(std::move(form)) {
  const int64_t rank = static_cast<int64_t>(form_.full_dims.size());
  for (int64_t axis = rank - form_.transformed; axis < rank; ++axis) {
    plans_.push_back(std::make_unique<FftLinePlan>(form_.full_dims[axis], !form_.forward()));
    scratch_size_ = std::max(scratch_size_, plans_.back()->scratch_size());
  }
}

FftComplex* FftPlan::Run(FftComplex* in, FftComplex* work, const FftAxisRunner& run_axis) const {
  const int64_t rank = static_cast<int64_t>(form_.full_dims.size());
  const int64_t first = rank - form_.transformed;
  const bool inverse = !form_.forward();
  if (form_.type == FftForm::Type::kIrfft) {
    // Inverse over the leading transformed axes on the half spectrum, then Hermitian-extend the
    // last axis (the imaginary parts of its DC and, for even n, Nyquist terms do not matter, as
    // in numpy.irfft) and run it.
    for (int64_t axis = first; axis < rank - 1; ++axis) {
      run_axis(in, FftAxisLines(form_.in_dims, axis), *plans_[axis - first], true);
    }
    const int64_t n = form_.full_dims.back(), h = form_.in_dims.back();
    const int64_t lines = n == 0 ? 0 : fs::Product(form_.full_dims) / n;
    for (int64_t line = 0; line < lines; ++line) {
      for (int64_t k = 0; k < n; ++k) {
        FftComplex v;
        if (k < h && k <= n / 2) {
          v = in[line * h + k];
        } else if (n - k < h) {
          v = std::conj(in[line * h + (n - k)]);
        }
        work[line * n + k] = v;
      }
    }
    run_axis(work, FftAxisLines(form_.full_dims, rank - 1), *plans_.back(), true);
    return work;
  }
  if (form_.type != FftForm::Type::kRfft) {
    for (int64_t axis = rank - 1; axis >= first; --axis) {
      run_axis(in, FftAxisLines(form_.full_dims, axis), *plans_[axis - first], inverse);
    }
    return in;
  }
  // RFFT: the last axis on the full lines, keeping their first n/2+1 entries (moved down in
  // place); the other axes then transform only those (the entries past them are dropped, so
  // their transforms would be wasted).
  run_axis(in, FftAxisLines(form_.full_dims, rank - 1), *plans_.back(), false);
  const int64_t n = form_.full_dims.back(), h = form_.out_dims.back();
  const int64_t lines = n == 0 ? 0 : fs::Product(form_.full_dims) / n;
  for (int64_t line = 0; line < lines; ++line) {
    for (int64_t k = 0; k < h; ++k) in[line * h + k] = in[line * n + k];
  }
  for (int64_t axis = rank - 2; axis >= first; --axis) {
    run_axis(in, FftAxisLines(form_.out_dims, axis), *plans_[axis - first], false);
  }
  return in;
}

absl::StatusOr<FftForm> FftForm::Read(const ir::Instruction& inst) {
  if (inst.operands().size() != 1 || inst.num_results() != 1 ||
      !inst.operand(0)->type().is_tensor()) {
    return fs::OpError(inst, "fft takes one array and has one result");
  }
  EMBER_ASSIGN_OR_RETURN(std::string type, fs::StringAttr(inst, "fft_type"));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> fft_length, fs::IntsAttr(inst, "fft_length"));
  EMBER_ASSIGN_OR_RETURN(ir::Shape result_shape, fs::ResultShape(inst, 0));
  const ir::Shape& in_shape = inst.operand(0)->type().shape();
  const int64_t rank = in_shape.rank();
  const int64_t l = static_cast<int64_t>(fft_length.size());
  if (l < 1 || l > 3 || l > rank) {
    return fs::OpError(inst, absl::StrCat("fft_length [", absl::StrJoin(fft_length, ", "),
                                          "] must have 1 to 3 entries, at most the rank ", rank));
  }
  FftForm form;
  if (type == "FFT") {
    form.type = Type::kFft;
  } else if (type == "IFFT") {
    form.type = Type::kIfft;
  } else if (type == "RFFT") {
    form.type = Type::kRfft;
  } else if (type == "IRFFT") {
    form.type = Type::kIrfft;
  } else {
    return fs::OpError(inst, absl::StrCat("unknown fft_type '", type, "'"));
  }
  const bool real_in = form.type == Type::kRfft, real_out = form.type == Type::kIrfft;
  if (real_in ? !ir::IsFloat(in_shape.element_type()) : !ir::IsComplex(in_shape.element_type())) {
    return fs::OpError(inst, absl::StrCat(type, " does not take ", in_shape.ToString()));
  }
  if (real_out ? !ir::IsFloat(result_shape.element_type())
               : !ir::IsComplex(result_shape.element_type())) {
    return fs::OpError(inst, absl::StrCat(type, " does not produce ", result_shape.ToString()));
  }
  for (int64_t length : fft_length) {
    if (length < 0) return fs::OpError(inst, "fft_length must not be negative");
  }
  if ((real_in || real_out) && fft_length.back() == 0) {
    return fs::OpError(inst, absl::StrCat(type, " of length 0 (it has no half spectrum)"));
  }
  form.transformed = l;
  form.full_dims = in_shape.dims();
  for (int64_t i = 0; i < l; ++i) form.full_dims[rank - l + i] = fft_length[i];
  form.in_dims = form.full_dims;
  form.out_dims = form.full_dims;
  if (real_in) form.out_dims.back() = fft_length.back() / 2 + 1;
  if (real_out) form.in_dims.back() = fft_length.back() / 2 + 1;
  if (in_shape.dims() != form.in_dims || result_shape.dims() != form.out_dims) {
    return fs::OpError(
        inst, absl::StrCat(type, " with fft_length [", absl::StrJoin(fft_length, ", "), "] maps ",
                           in_shape.ToString(), " to ", result_shape.ToString(),
                           "; expected dims [", absl::StrJoin(form.in_dims, ", "), "] -> [",
                           absl::StrJoin(form.out_dims, ", "), "]"));
  }
  return form;
}

}  // namespace ember::eval
