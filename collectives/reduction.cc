#include "collectives/reduction.h"

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "base/float_formats.h"

namespace ember::collectives {
namespace {

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
void Store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// Integers: wrapping arithmetic (through the unsigned type), bitwise logic.
template <typename T>
T CombineInt(ReductionKind kind, T a, T b) {
  // U: the unsigned type, at least as wide as unsigned int (uint16_t operands would promote to
  // int, whose products overflow).
  using U = decltype(std::make_unsigned_t<T>{} + 0u);
  switch (kind) {
    case ReductionKind::kSum: return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    case ReductionKind::kProduct: return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    case ReductionKind::kMin: return b < a ? b : a;
    case ReductionKind::kMax: return a >= b ? a : b;
    case ReductionKind::kAnd: return static_cast<T>(a & b);
    case ReductionKind::kOr: return static_cast<T>(a | b);
    case ReductionKind::kXor: return static_cast<T>(a ^ b);
  }
  return a;
}

// Real floats, computed in F (float or double): the first NaN wins in min/max, and the signed
// zeros order as -0 < +0.
template <typename F>
F CombineFloat(ReductionKind kind, F a, F b) {
  switch (kind) {
    case ReductionKind::kSum: return a + b;
    case ReductionKind::kProduct: return a * b;
    case ReductionKind::kMax:
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      if (a == b) return std::signbit(a) ? b : a;
      return a > b ? a : b;
    case ReductionKind::kMin:
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      if (a == b) return std::signbit(a) ? a : b;
      return a < b ? a : b;
    default:
      return a;  // excluded by IsValidReduction
  }
}

bool CombinePred(ReductionKind kind, bool a, bool b) {
  switch (kind) {
    case ReductionKind::kSum:
    case ReductionKind::kOr:
    case ReductionKind::kMax:
      return a || b;
    case ReductionKind::kProduct:
    case ReductionKind::kAnd:
    case ReductionKind::kMin:
      return a && b;
    case ReductionKind::kXor:
      return a != b;
  }
  return a;
}

// acc[i] = combine(acc[i], in[i]): one loop per kind, so the compiler vectorizes the plain ones
// (a switch on the kind inside the loop kept every element scalar).
template <typename T, typename Combine>
void Combine2(const uint8_t* in, uint8_t* acc, size_t count, Combine combine) {
  for (size_t i = 0; i < count; ++i) {
    Store<T>(acc + i * sizeof(T),
             combine(Load<T>(acc + i * sizeof(T)), Load<T>(in + i * sizeof(T))));
  }
}

template <typename T>
void AccumulateInt(ReductionKind kind, const uint8_t* in, uint8_t* acc, size_t count) {
  switch (kind) {
    case ReductionKind::kSum:
      return Combine2<T>(in, acc, count,
                         [](T a, T b) { return CombineInt<T>(ReductionKind::kSum, a, b); });
    case ReductionKind::kMax:
      return Combine2<T>(in, acc, count,
                         [](T a, T b) { return CombineInt<T>(ReductionKind::kMax, a, b); });
    case ReductionKind::kMin:
      return Combine2<T>(in, acc, count,
                         [](T a, T b) { return CombineInt<T>(ReductionKind::kMin, a, b); });
    default:
      return Combine2<T>(in, acc, count, [kind](T a, T b) { return CombineInt<T>(kind, a, b); });
  }
}

template <typename F>
void AccumulateFloat(ReductionKind kind, const uint8_t* in, uint8_t* acc, size_t count) {
  switch (kind) {
    case ReductionKind::kSum:
      return Combine2<F>(in, acc, count, [](F a, F b) { return a + b; });
    case ReductionKind::kProduct:
      return Combine2<F>(in, acc, count, [](F a, F b) { return a * b; });
    default:
      return Combine2<F>(in, acc, count,
                         [kind](F a, F b) { return CombineFloat<F>(kind, a, b); });
  }
}

// f16 / bf16: each step in float, rounded back to the type (what a region of the type does).
template <float (*kDecode)(uint16_t), uint16_t (*kEncode)(float)>
void AccumulateHalf(ReductionKind kind, const uint8_t* in, uint8_t* acc, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const float a = kDecode(Load<uint16_t>(acc + 2 * i));
    const float b = kDecode(Load<uint16_t>(in + 2 * i));
    const float r = CombineFloat<float>(kind, a, b);
    // min/max return one of their inputs: keep its exact bits (NaN payloads, signed zeros).
    uint16_t bits;
    if (kind == ReductionKind::kMin || kind == ReductionKind::kMax) {
      bits = std::memcmp(&r, &a, sizeof(float)) == 0 ? Load<uint16_t>(acc + 2 * i)
                                                      : Load<uint16_t>(in + 2 * i);
    } else {
      bits = kEncode(r);
    }
    Store<uint16_t>(acc + 2 * i, bits);
  }
}

template <typename F>
void AccumulateComplex(ReductionKind kind, const uint8_t* in, uint8_t* acc, size_t count) {
  using C = std::complex<F>;
  for (size_t i = 0; i < count; ++i) {
    const C a = Load<C>(acc + i * sizeof(C));
    const C b = Load<C>(in + i * sizeof(C));
    // Products as the evaluator computes them: in double precision, rounded once.
    const std::complex<double> wide =
        kind == ReductionKind::kSum
            ? std::complex<double>(a) + std::complex<double>(b)
            : std::complex<double>(a) * std::complex<double>(b);
    Store<C>(acc + i * sizeof(C), C(static_cast<F>(wide.real()), static_cast<F>(wide.imag())));
  }
}

}  // namespace

absl::Status Accumulate(DataType type, ReductionKind kind, const void* in_ptr, void* acc_ptr,
                        size_t count) {
  if (!IsValidReduction(kind, type)) {
    return absl::InvalidArgumentError(absl::StrCat("reduction '", ReductionKindName(kind),
                                                   "' is not defined on ", DataTypeName(type)));
  }
  const auto* in = static_cast<const uint8_t*>(in_ptr);
  auto* acc = static_cast<uint8_t*>(acc_ptr);
  switch (type) {
    case DataType::kPred:
      for (size_t i = 0; i < count; ++i) acc[i] = CombinePred(kind, acc[i] != 0, in[i] != 0);
      return absl::OkStatus();
    case DataType::kS8: AccumulateInt<int8_t>(kind, in, acc, count); break;
    case DataType::kU8: AccumulateInt<uint8_t>(kind, in, acc, count); break;
    case DataType::kS16: AccumulateInt<int16_t>(kind, in, acc, count); break;
    case DataType::kU16: AccumulateInt<uint16_t>(kind, in, acc, count); break;
    case DataType::kS32: AccumulateInt<int32_t>(kind, in, acc, count); break;
    case DataType::kU32: AccumulateInt<uint32_t>(kind, in, acc, count); break;
    case DataType::kS64: AccumulateInt<int64_t>(kind, in, acc, count); break;
    case DataType::kU64: AccumulateInt<uint64_t>(kind, in, acc, count); break;
    case DataType::kF16: AccumulateHalf<F16ToFloat, FloatToF16>(kind, in, acc, count); break;
    case DataType::kBF16: AccumulateHalf<BF16ToFloat, FloatToBF16>(kind, in, acc, count); break;
    case DataType::kF32: AccumulateFloat<float>(kind, in, acc, count); break;
    case DataType::kF64: AccumulateFloat<double>(kind, in, acc, count); break;
    case DataType::kC64: AccumulateComplex<float>(kind, in, acc, count); break;
    case DataType::kC128: AccumulateComplex<double>(kind, in, acc, count); break;
    case DataType::kF8E4M3FN:
    case DataType::kF8E5M2:
      break;  // excluded by IsValidReduction
  }
  return absl::OkStatus();
}

}  // namespace ember::collectives
