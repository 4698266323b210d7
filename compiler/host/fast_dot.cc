// dot_general of the fast host backend through Eigen (fast_gemm.inc, included here for the baseline
// ISA, by fast_dot_avx2.cc for AVX2 + FMA and by fast_dot_avx512.cc for AVX-512, chosen at run time
// by CPU; complex and integer products only in the baseline build). Operands are viewed as [B, M,
// K] and [B, K, N] matrices without a copy when their dimension order allows (either orientation of
// each matrix), else copied once through a permutation; the output [batch..., lhs free..., rhs
// free...] is [B, M, N] row-major.
#include <algorithm>
#include <array>
#include <complex>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/host/fast_gemm.h"
#include "compiler/host/fast_kernels.h"
#include "compiler/host/widen_to_f32.h"
#include "compiler/passes/rewrite.h"

#define EMBER_GEMM_NS gemm_base
#define EMBER_GEMM_OTHER_TYPES
#include "compiler/host/fast_gemm.inc"
#undef EMBER_GEMM_OTHER_TYPES
#undef EMBER_GEMM_NS

namespace ember::host::fast {
namespace gemm_avx2 {
// fast_dot_avx2.cc: the same Eigen product compiled for AVX2 + FMA.
void GemmRows(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n,
              int64_t r0, int64_t r1, bool lhs_row, bool rhs_row);
void GemmRows(const double* a, const double* b, double* c, int64_t m, int64_t k, int64_t n,
              int64_t r0, int64_t r1, bool lhs_row, bool rhs_row);
}  // namespace gemm_avx2
namespace gemm_avx512 {
// fast_dot_avx512.cc: the same Eigen product compiled for AVX-512 + FMA.
void GemmRows(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n,
              int64_t r0, int64_t r1, bool lhs_row, bool rhs_row);
void GemmRows(const double* a, const double* b, double* c, int64_t m, int64_t k, int64_t n,
              int64_t r0, int64_t r1, bool lhs_row, bool rhs_row);
}  // namespace gemm_avx512

namespace {

// The widest build of the product the CPU runs (checked once): AVX-512 (F, VL, DQ, BW) + FMA,
// else AVX2 + FMA, else the baseline. (AVX-512 also where it lowers the clock, as on Skylake-SP:
// a product is long, compute-bound work, for which the wider registers still win.)
enum class GemmIsa { kBaseline, kAvx2, kAvx512 };
GemmIsa BestGemmIsa() {
  static const GemmIsa isa = [] {
    const bool fma = __builtin_cpu_supports("fma");
    if (fma && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw")) {
      return GemmIsa::kAvx512;
    }
    return fma && __builtin_cpu_supports("avx2") ? GemmIsa::kAvx2 : GemmIsa::kBaseline;
  }();
  return isa;
}

// GemmRows of the widest build for f32 and f64.
template <typename T>
void GemmRowsBest(const T* a, const T* b, T* c, int64_t m, int64_t k, int64_t n, int64_t r0,
                  int64_t r1, bool lhs_row, bool rhs_row) {
  switch (BestGemmIsa()) {
    case GemmIsa::kAvx512:
      return gemm_avx512::GemmRows(a, b, c, m, k, n, r0, r1, lhs_row, rhs_row);
    case GemmIsa::kAvx2:
      return gemm_avx2::GemmRows(a, b, c, m, k, n, r0, r1, lhs_row, rhs_row);
    case GemmIsa::kBaseline:
      return gemm_base::GemmRows(a, b, c, m, k, n, r0, r1, lhs_row, rhs_row);
  }
}

bool IsRowMajor(const ir::ValueType& t) {
  absl::StatusOr<ir::Shape> plain = ir::Shape::Make(t.element_type(), t.dims());
  return plain.ok() && *plain == t.shape();
}

// dst[i] = load(source index) for dst laid out in the order `perm` (dst dim i = src dim
// perm[i]) of a source of dims `dims`. Rank is at most 16 (DotSupported).
template <typename T, typename Load>
void Permute(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm, Load load,
             T* dst) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  std::array<int64_t, 16> src_strides{}, out_dims{}, stride{}, m{};
  int64_t s = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    src_strides[d] = s;
    s *= dims[d];
  }
  int64_t total = 1;
  for (int64_t i = 0; i < rank; ++i) {
    out_dims[i] = dims[perm[i]];
    stride[i] = src_strides[perm[i]];
    total *= out_dims[i];
  }
  int64_t cur = 0;
  for (int64_t i = 0; i < total; ++i) {
    dst[i] = load(cur);
    for (int64_t d = rank - 1; d >= 0; --d) {
      ++m[d];
      cur += stride[d];
      if (m[d] < out_dims[d]) break;
      cur -= stride[d] * out_dims[d];
      m[d] = 0;
    }
  }
}

// An f32 GEMM operand from `src` of type `conv.type()`: `src` itself when it is f32 in GEMM
// order, else widened (and permuted when `perm` is non-empty) into scratch slot `slot` (n floats).
const float* F32Operand(const void* src, const F32Converter& conv, const std::vector<int64_t>& dims,
                        const std::vector<int64_t>& perm, int64_t n, F32Scratch& scratch,
                        int slot, ThreadPool& pool) {
  if (perm.empty() && conv.is_f32()) return static_cast<const float*>(src);
  float* buffer = scratch.Get(slot, n);
  if (perm.empty()) {
    conv.WidenAll(src, n, buffer, pool);
    return buffer;
  }
  if (conv.is_f32()) {
    const float* f = static_cast<const float*>(src);
    Permute(dims, perm, [f](int64_t i) { return f[i]; }, buffer);
  } else {
    Permute(dims, perm, [&conv, src](int64_t i) { return conv.Widen(src, i); }, buffer);
  }
  return buffer;
}

template <typename T>
void RunTyped(const DotKernel&, const T* lhs, const T* rhs, T* out, int64_t batch, int64_t m,
              int64_t k, int64_t n, bool lhs_row, bool rhs_row, ThreadPool& pool) {
  auto one = [&](int64_t b, int64_t r0, int64_t r1) {
    const T* a = lhs + b * m * k;
    const T* x = rhs + b * k * n;
    T* c = out + b * m * n;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      GemmRowsBest(a, x, c, m, k, n, r0, r1, lhs_row, rhs_row);
    } else {
      gemm_base::GemmRows(a, x, c, m, k, n, r0, r1, lhs_row, rhs_row);
    }
  };
  const int64_t flops = batch * m * k * n;
  if (flops < (int64_t{1} << 18) || pool.size() == 1) {
    for (int64_t b = 0; b < batch; ++b) one(b, 0, m);
    return;
  }
  if (batch >= pool.size()) {
    pool.ParallelFor(batch, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) one(b, 0, m);
    });
    return;
  }
  for (int64_t b = 0; b < batch; ++b) {
    pool.ParallelFor(m, 16, [&](int64_t r0, int64_t r1) { one(b, r0, r1); });
  }
}

// An operand of a dot computed in its own type (f64, c64, c128): `src` itself in GEMM order, else
// permuted into `copy`.
template <typename T>
const T* SameTypeOperand(const void* src, const std::vector<int64_t>& dims,
                         const std::vector<int64_t>& perm, int64_t n, std::vector<T>& copy) {
  const T* typed = static_cast<const T*>(src);
  if (perm.empty()) return typed;
  copy.resize(static_cast<size_t>(n));
  Permute(dims, perm, [typed](int64_t i) { return typed[i]; }, copy.data());
  return copy.data();
}

// The value of integer element `v` (stored in S, the unsigned type of its storage width) of
// type `bits` wide, sign-extended when `is_signed`, modulo 2^(8 sizeof(Acc)). Sub-byte integers
// hold their value in the low bits of a byte (ir::StorageBytes).
template <typename Acc, typename S>
Acc ExtendInteger(S v, int bits, bool is_signed) {
  if (bits < static_cast<int>(8 * sizeof(S))) {
    const uint64_t low = static_cast<uint64_t>(v) & ((uint64_t{1} << bits) - 1);
    const bool negative = is_signed && ((low >> (bits - 1)) & 1) != 0;
    return static_cast<Acc>(negative ? low | ~((uint64_t{1} << bits) - 1) : low);
  }
  if (is_signed) return static_cast<Acc>(static_cast<std::make_signed_t<S>>(v));
  return static_cast<Acc>(v);
}

// An integer operand in the accumulation type Acc (uint32_t or uint64_t): `src` itself when it is
// already Acc-wide in GEMM order, else extended (and permuted) into `copy`.
template <typename Acc>
const Acc* IntegerOperand(const void* src, ir::ElementType type, const std::vector<int64_t>& dims,
                          const std::vector<int64_t>& perm, int64_t n, std::vector<Acc>& copy) {
  const int bits = ir::BitWidth(type);
  const bool is_signed = ir::IsSignedInteger(type);
  if (perm.empty() && bits == static_cast<int>(8 * sizeof(Acc))) {
    return static_cast<const Acc*>(src);
  }
  copy.resize(static_cast<size_t>(n));
  auto fill = [&](auto* typed) {
    auto load = [typed, bits, is_signed](int64_t i) {
      return ExtendInteger<Acc>(typed[i], bits, is_signed);
    };
    if (perm.empty()) {
      for (int64_t i = 0; i < n; ++i) copy[static_cast<size_t>(i)] = load(i);
    } else {
      Permute(dims, perm, load, copy.data());
    }
  };
  switch (ir::StorageBytes(type)) {
    case 1: fill(static_cast<const uint8_t*>(src)); break;
    case 2: fill(static_cast<const uint16_t*>(src)); break;
    case 4: fill(static_cast<const uint32_t*>(src)); break;
    default: fill(static_cast<const uint64_t*>(src)); break;
  }
  return copy.data();
}

// out[0, n) = c[0, n) truncated to integer `type` (narrower than Acc, so below 64 bits);
// sub-byte results keep their value bits only, the high bits of each byte zero.
template <typename Acc>
void StoreIntegers(const Acc* c, int64_t n, ir::ElementType type, void* out) {
  const uint64_t mask = (uint64_t{1} << ir::BitWidth(type)) - 1;
  auto store = [&](auto* typed) {
    using S = std::remove_pointer_t<decltype(typed)>;
    for (int64_t i = 0; i < n; ++i) typed[i] = static_cast<S>(static_cast<uint64_t>(c[i]) & mask);
  };
  switch (ir::StorageBytes(type)) {
    case 1: store(static_cast<uint8_t*>(out)); break;
    case 2: store(static_cast<uint16_t*>(out)); break;
    default: store(static_cast<uint32_t*>(out)); break;
  }
}

}  // namespace

void Gemm(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n) {
  GemmRowsBest(a, b, c, m, k, n, 0, m, true, true);
}
void Gemm(const double* a, const double* b, double* c, int64_t m, int64_t k, int64_t n) {
  GemmRowsBest(a, b, c, m, k, n, 0, m, true, true);
}

bool DotSupported(const ir::Instruction& inst) {
  if (inst.opcode() != ir::Opcode::kDotGeneral || inst.operands().size() != 2 ||
      inst.num_results() != 1) {
    return false;
  }
  const ir::ValueType& t = inst.result()->type();
  if (!t.is_tensor()) return false;
  // f64, c64 or c128 throughout; f32 and narrow floats in any mix (computed in f32, as XLA:CPU
  // does); integers of any widths and signs (wrapping in the result's width).
  const ir::ElementType r = t.element_type();
  const bool same_type = r == ir::ElementType::kF64 || ir::IsComplex(r);
  if (!same_type && !ir::IsInteger(r) && !WidensToF32(r)) return false;
  for (const ir::Value* v : inst.operands()) {
    if (!v->type().is_tensor() || !IsRowMajor(v->type()) || v->type().dims().size() > 16) {
      return false;
    }
    const ir::ElementType e = v->type().element_type();
    const bool ok = same_type           ? e == r
                    : ir::IsInteger(r) ? ir::IsInteger(e)
                                       : WidensToF32(e);
    if (!ok) return false;
  }
  if (!IsRowMajor(t)) return false;
  for (const char* name : {"lhs_batching_dimensions", "rhs_batching_dimensions",
                           "lhs_contracting_dimensions", "rhs_contracting_dimensions"}) {
    if (passes::IntsAttribute(inst, name) == nullptr && inst.attribute(name) != nullptr) return false;
  }
  return true;
}

absl::StatusOr<std::unique_ptr<DotKernel>> DotKernel::Create(const ir::Instruction& inst) {
  if (!DotSupported(inst)) {
    return absl::UnimplementedError(absl::StrCat("the fast dot does not run ", inst.Describe()));
  }
  static const std::vector<int64_t> kNone;
  auto get = [&](const char* name) -> const std::vector<int64_t>& {
    const std::vector<int64_t>* v = passes::IntsAttribute(inst, name);
    return v != nullptr ? *v : kNone;
  };
  const std::vector<int64_t>& lb = get("lhs_batching_dimensions");
  const std::vector<int64_t>& rb = get("rhs_batching_dimensions");
  const std::vector<int64_t>& lc = get("lhs_contracting_dimensions");
  const std::vector<int64_t>& rc = get("rhs_contracting_dimensions");
  std::unique_ptr<DotKernel> k(new DotKernel());
  switch (inst.result()->type().element_type()) {
    case ir::ElementType::kF64: k->kind_ = Kind::kF64; break;
    case ir::ElementType::kC64: k->kind_ = Kind::kC64; break;
    case ir::ElementType::kC128: k->kind_ = Kind::kC128; break;
    default:
      k->kind_ = !ir::IsInteger(inst.result()->type().element_type()) ? Kind::kWidenedToF32
                 : ir::BitWidth(inst.result()->type().element_type()) > 32 ? Kind::kInteger64
                                                                            : Kind::kInteger32;
  }
  k->lhs_type_ = inst.operand(0)->type().element_type();
  k->rhs_type_ = inst.operand(1)->type().element_type();
  k->out_type_ = inst.result()->type().element_type();
  k->lhs_dims_ = inst.operand(0)->type().dims();
  k->rhs_dims_ = inst.operand(1)->type().dims();
  const int64_t lr = static_cast<int64_t>(k->lhs_dims_.size());
  const int64_t rr = static_cast<int64_t>(k->rhs_dims_.size());
  auto free_dims = [](int64_t rank, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    std::vector<int64_t> out;
    for (int64_t d = 0; d < rank; ++d) {
      if (std::find(a.begin(), a.end(), d) == a.end() && std::find(b.begin(), b.end(), d) == b.end()) {
        out.push_back(d);
      }
    }
    return out;
  };
  for (int64_t d : lb) {
    if (d < 0 || d >= lr) return absl::InvalidArgumentError(inst.Describe());
  }
  for (int64_t d : lc) {
    if (d < 0 || d >= lr) return absl::InvalidArgumentError(inst.Describe());
  }
  for (int64_t d : rb) {
    if (d < 0 || d >= rr) return absl::InvalidArgumentError(inst.Describe());
  }
  for (int64_t d : rc) {
    if (d < 0 || d >= rr) return absl::InvalidArgumentError(inst.Describe());
  }
  if (lb.size() != rb.size() || lc.size() != rc.size()) {
    return absl::InvalidArgumentError(inst.Describe());
  }
  const std::vector<int64_t> lf = free_dims(lr, lb, lc);
  const std::vector<int64_t> rf = free_dims(rr, rb, rc);
  for (int64_t d : lb) k->batch_ *= k->lhs_dims_[d];
  for (int64_t d : lf) k->m_ *= k->lhs_dims_[d];
  for (int64_t d : lc) k->k_ *= k->lhs_dims_[d];
  for (int64_t d : rf) k->n_ *= k->rhs_dims_[d];
  auto concat = [](std::initializer_list<const std::vector<int64_t>*> parts) {
    std::vector<int64_t> out;
    for (const auto* p : parts) out.insert(out.end(), p->begin(), p->end());
    return out;
  };
  auto is_identity = [](const std::vector<int64_t>& p) {
    for (size_t i = 0; i < p.size(); ++i) {
      if (p[i] != static_cast<int64_t>(i)) return false;
    }
    return true;
  };
  // lhs: [B, M, K] or [B, K, M] in place; else permute to [B, M, K].
  const std::vector<int64_t> lmk = concat({&lb, &lf, &lc});
  const std::vector<int64_t> lkm = concat({&lb, &lc, &lf});
  if (is_identity(lmk)) {
    k->lhs_row_major_ = true;
  } else if (is_identity(lkm)) {
    k->lhs_row_major_ = false;
  } else {
    k->lhs_row_major_ = true;
    k->lhs_perm_ = lmk;
  }
  const std::vector<int64_t> rkn = concat({&rb, &rc, &rf});
  const std::vector<int64_t> rnk = concat({&rb, &rf, &rc});
  if (is_identity(rkn)) {
    k->rhs_row_major_ = true;
  } else if (is_identity(rnk)) {
    k->rhs_row_major_ = false;
  } else {
    k->rhs_row_major_ = true;
    k->rhs_perm_ = rkn;
  }
  if (k->batch_ * k->m_ * k->n_ != inst.result()->type().shape().element_count()) {
    return absl::InvalidArgumentError(
        absl::StrCat(inst.Describe(), ": result size does not match the operands"));
  }
  return k;
}

template <typename T>
void DotKernel::RunSameType(const void* lhs, const void* rhs, void* out, ThreadPool& pool) const {
  std::vector<T> a_copy, b_copy;
  const T* a = SameTypeOperand<T>(lhs, lhs_dims_, lhs_perm_, batch_ * m_ * k_, a_copy);
  const T* b = SameTypeOperand<T>(rhs, rhs_dims_, rhs_perm_, batch_ * k_ * n_, b_copy);
  T* c = static_cast<T*>(out);
  if (k_ == 0) {
    std::fill_n(c, batch_ * m_ * n_, T{});
    return;
  }
  RunTyped<T>(*this, a, b, c, batch_, m_, k_, n_, lhs_row_major_, rhs_row_major_, pool);
}

template <typename Acc>
void DotKernel::RunIntegers(const void* lhs, const void* rhs, void* out, ThreadPool& pool) const {
  const int64_t out_n = batch_ * m_ * n_;
  std::vector<Acc> a_copy, b_copy, c_copy;
  const bool direct_out = ir::BitWidth(out_type_) == static_cast<int>(8 * sizeof(Acc));
  Acc* c = static_cast<Acc*>(out);
  if (!direct_out) {
    c_copy.resize(static_cast<size_t>(out_n));
    c = c_copy.data();
  }
  if (k_ == 0) {
    std::fill_n(c, out_n, Acc{0});
  } else {
    const Acc* a =
        IntegerOperand<Acc>(lhs, lhs_type_, lhs_dims_, lhs_perm_, batch_ * m_ * k_, a_copy);
    const Acc* b =
        IntegerOperand<Acc>(rhs, rhs_type_, rhs_dims_, rhs_perm_, batch_ * k_ * n_, b_copy);
    RunTyped<Acc>(*this, a, b, c, batch_, m_, k_, n_, lhs_row_major_, rhs_row_major_, pool);
  }
  if (!direct_out) StoreIntegers<Acc>(c, out_n, out_type_, out);
}

void DotKernel::Run(const void* lhs, const void* rhs, void* out, ThreadPool& pool) const {
  switch (kind_) {
    case Kind::kF64: return RunSameType<double>(lhs, rhs, out, pool);
    case Kind::kC64: return RunSameType<std::complex<float>>(lhs, rhs, out, pool);
    case Kind::kC128: return RunSameType<std::complex<double>>(lhs, rhs, out, pool);
    case Kind::kInteger32: return RunIntegers<uint32_t>(lhs, rhs, out, pool);
    case Kind::kInteger64: return RunIntegers<uint64_t>(lhs, rhs, out, pool);
    case Kind::kWidenedToF32: break;
  }
  const int64_t out_n = batch_ * m_ * n_;
  // f32 and narrow floats: operands widened to f32 (exact), an f32 GEMM with f32 accumulation,
  // the result rounded once to its type.
  const F32Converter lhs_conv(lhs_type_), rhs_conv(rhs_type_), out_conv(out_type_);
  F32Scratch scratch;
  float* c = out_conv.is_f32() ? static_cast<float*>(out) : scratch.Get(2, out_n);
  if (k_ == 0) {
    std::fill_n(c, out_n, 0.0f);
  } else {
    const float* a =
        F32Operand(lhs, lhs_conv, lhs_dims_, lhs_perm_, batch_ * m_ * k_, scratch, 0, pool);
    const float* b =
        F32Operand(rhs, rhs_conv, rhs_dims_, rhs_perm_, batch_ * k_ * n_, scratch, 1, pool);
    RunTyped<float>(*this, a, b, c, batch_, m_, k_, n_, lhs_row_major_, rhs_row_major_, pool);
  }
  if (!out_conv.is_f32()) out_conv.NarrowAll(c, out_n, out, pool);
}

}  // namespace ember::host::fast
