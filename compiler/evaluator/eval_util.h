// Shared helpers for the reference evaluator's op families (compiler/evaluator/eval_*.cc): errors that
// name the instruction, attribute and operand access, row-major multi-index iteration and
// broadcasting, element-type traits, and the scalar conversions every op family agrees on.
#ifndef EMBER_COMPILER_EVALUATOR_EVAL_UTIL_H_
#define EMBER_COMPILER_EVALUATOR_EVAL_UTIL_H_

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "compiler/evaluator/eval_value.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/ir/literal.h"
#include "compiler/ir/module.h"
#include "compiler/ir/native_types.h"

namespace ember::eval {

// ---- Errors ------------------------------------------------------------------------------------
// Every error an op returns starts with Instruction::Describe(): "stablehlo.add at f.py:3:1: ...".
// Pass std::string (not std::string_view) pieces: Debian's Abseil has its own string_view.

template <typename... Args>
absl::Status OpError(const ir::Instruction& instruction, const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(instruction.Describe(), ": ", args...));
}
template <typename... Args>
absl::Status OpUnimplemented(const ir::Instruction& instruction, const Args&... args) {
  return absl::UnimplementedError(absl::StrCat(instruction.Describe(), ": ", args...));
}
// Adds the instruction's description to an error from a helper that did not know it.
absl::Status AnnotateError(const ir::Instruction& instruction, const absl::Status& status);
// "f32", "complex<f32>", ... for messages.
std::string TypeName(ir::ElementType type);
// "tensor<2x3xf32>" for messages.
std::string DescribeArray(const ir::Literal& literal);

// ---- Attributes --------------------------------------------------------------------------------
// Missing attributes and wrong kinds are errors naming the instruction and the attribute.

absl::StatusOr<int64_t> IntAttr(const ir::Instruction& instruction, std::string_view name);
absl::StatusOr<int64_t> IntAttrOr(const ir::Instruction& instruction, std::string_view name,
                                  int64_t default_value);
// Accepts an Ints attribute, or a 1-D integer Literal (dense arrays from older producers).
absl::StatusOr<std::vector<int64_t>> IntsAttr(const ir::Instruction& instruction,
                                              std::string_view name);
absl::StatusOr<std::vector<int64_t>> IntsAttrOr(const ir::Instruction& instruction,
                                                std::string_view name,
                                                std::vector<int64_t> default_value);
absl::StatusOr<bool> BoolAttrOr(const ir::Instruction& instruction, std::string_view name,
                                bool default_value);
absl::StatusOr<std::string> StringAttr(const ir::Instruction& instruction, std::string_view name);
absl::StatusOr<const ir::Literal*> LiteralAttr(const ir::Instruction& instruction,
                                               std::string_view name);

// ---- Operands and results ----------------------------------------------------------------------

absl::Status CheckOperandCount(const ir::Instruction& instruction,
                               const std::vector<EvalValue>& operands, size_t expected);
// Operand `i` as an array (an error if it is a token or a tuple, or missing).
absl::StatusOr<const ir::Literal*> ArrayOperand(const ir::Instruction& instruction,
                                                const std::vector<EvalValue>& operands, size_t i);
absl::StatusOr<ir::Literal*> MutableArrayOperand(const ir::Instruction& instruction,
                                                 std::vector<EvalValue>& operands, size_t i);
// A zero-filled row-major array of the declared type of result `i` (which must be a tensor).
absl::StatusOr<ir::Literal> NewResultArray(const ir::Instruction& instruction, size_t i = 0);
// A zero-filled row-major array.
absl::StatusOr<ir::Literal> NewArray(ir::ElementType type, absl::Span<const int64_t> dims);
// The single-array result list ops return.
std::vector<EvalValue> ArrayResult(ir::Literal literal);

// Element `linear` (row-major) of an integer or pred array as int64_t (unsigned values above
// INT64_MAX wrap, as index computations do in XLA). An error for other types.
absl::StatusOr<int64_t> IntegerElement(const ir::Literal& literal, int64_t linear);
// A rank-0 literal holding element `linear` of `source`.
absl::StatusOr<ir::Literal> ScalarFromElement(const ir::Literal& source, int64_t linear);
// Copies `count` elements (same element type) by storage bytes; row-major positions.
inline void CopyElements(const ir::Literal& src, int64_t src_linear, ir::Literal& dst,
                         int64_t dst_linear, int64_t count = 1) {
  const int64_t bytes = ir::StorageBytes(src.element_type());
  if (count <= 0 || bytes == 0) return;  // empty arrays may have no storage at all
  std::memcpy(dst.mutable_bytes().data() + dst_linear * bytes,
              src.bytes().data() + src_linear * bytes, static_cast<size_t>(count * bytes));
}

// Row-major typed views. The caller has checked the element type (e.g. by visiting it).
template <typename T>
absl::Span<const T> Elements(const ir::Literal& literal) {
  return absl::Span<const T>(reinterpret_cast<const T*>(literal.bytes().data()),
                             static_cast<size_t>(literal.shape().element_count()));
}
template <typename T>
absl::Span<T> MutableElements(ir::Literal& literal) {
  return absl::Span<T>(reinterpret_cast<T*>(literal.mutable_bytes().data()),
                       static_cast<size_t>(literal.shape().element_count()));
}

// ---- Multi-index iteration (row-major) ---------------------------------------------------------

std::vector<int64_t> RowMajorStrides(absl::Span<const int64_t> dims);
inline int64_t Linearize(absl::Span<const int64_t> strides, absl::Span<const int64_t> index) {
  int64_t linear = 0;
  for (size_t i = 0; i < index.size(); ++i) linear += strides[i] * index[i];
  return linear;
}
// Advances `index` to the next row-major position within `dims`; false after the last one.
inline bool NextIndex(absl::Span<const int64_t> dims, absl::Span<int64_t> index) {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}
// Calls fn(absl::Span<const int64_t> index, int64_t linear) for every position of `dims` in
// row-major order (nothing for an empty array; once for a scalar).
template <typename Fn>
void ForEachIndex(absl::Span<const int64_t> dims, Fn&& fn) {
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  std::vector<int64_t> index(dims.size(), 0);
  int64_t linear = 0;
  do {
    fn(absl::Span<const int64_t>(index), linear);
    ++linear;
  } while (NextIndex(dims, absl::Span<int64_t>(index)));
}

// broadcast_in_dim as strides: for a row-major operand of `operand_dims` whose dim i maps to
// result dim broadcast_dimensions[i], the stride (in operand elements) of each result dim; 0 for
// result dims the operand does not have or has with size 1. Errors name what does not fit.
absl::StatusOr<std::vector<int64_t>> BroadcastStrides(
    absl::Span<const int64_t> operand_dims, absl::Span<const int64_t> result_dims,
    absl::Span<const int64_t> broadcast_dimensions);
// For each row-major result position, the operand position broadcast_in_dim reads.
absl::StatusOr<std::vector<int64_t>> BroadcastSourceIndices(
    absl::Span<const int64_t> operand_dims, absl::Span<const int64_t> result_dims,
    absl::Span<const int64_t> broadcast_dimensions);

// ---- Element-type traits -----------------------------------------------------------------------

template <typename T>
struct IsSubByteIntT : std::false_type {};
template <ir::ElementType K>
struct IsSubByteIntT<ir::SubByteInt<K>> : std::true_type {};
template <typename T>
struct IsNarrowFloatT : std::false_type {};
template <ir::ElementType K>
struct IsNarrowFloatT<ir::NarrowFloat<K>> : std::true_type {};
template <typename T>
struct IsComplexT : std::false_type {};
template <typename F>
struct IsComplexT<std::complex<F>> : std::true_type {};

template <typename T>
inline constexpr bool kIsPred = std::is_same_v<T, bool>;
template <typename T>
inline constexpr bool kIsSubByteInt = IsSubByteIntT<T>::value;
template <typename T>
inline constexpr bool kIsNarrowFloat = IsNarrowFloatT<T>::value;
template <typename T>
inline constexpr bool kIsComplex = IsComplexT<T>::value;

template <typename T>
constexpr bool IsSignedIntImpl() {
  if constexpr (kIsSubByteInt<T>)
    return T::kSigned;
  else
    return std::is_integral_v<T> && std::is_signed_v<T>;
}
template <typename T>
constexpr bool IsUnsignedIntImpl() {
  if constexpr (kIsSubByteInt<T>)
    return !T::kSigned;
  else
    return std::is_integral_v<T> && std::is_unsigned_v<T> && !std::is_same_v<T, bool>;
}
template <typename T>
inline constexpr bool kIsSignedInt = IsSignedIntImpl<T>();
template <typename T>
inline constexpr bool kIsUnsignedInt = IsUnsignedIntImpl<T>();
template <typename T>
inline constexpr bool kIsInt = kIsSignedInt<T> || kIsUnsignedInt<T>;
template <typename T>
inline constexpr bool kIsRealFloat =
    std::is_same_v<T, float> || std::is_same_v<T, double> || kIsNarrowFloat<T>;

// Logical width in bits (pred 1, s4 4, f6E2M3FN 6, c64 64).
template <typename T>
constexpr int BitWidthOf() {
  if constexpr (std::is_void_v<T>)
    return 0;
  else if constexpr (kIsPred<T>)
    return 1;
  else if constexpr (kIsSubByteInt<T>)
    return T::kBits;
  else if constexpr (kIsNarrowFloat<T>)
    return T::kFormat.total_bits();
  else
    return static_cast<int>(8 * sizeof(T));
}

// ---- Scalar conversions ------------------------------------------------------------------------

// Integers as 64-bit two's complement: sign-extended for signed types, zero-extended otherwise.
template <typename T>
constexpr int64_t IntToI64(T x) {
  if constexpr (kIsSubByteInt<T>)
    return x.value();
  else
    return static_cast<int64_t>(x);
}
template <typename T>
constexpr uint64_t IntToU64(T x) {
  return static_cast<uint64_t>(IntToI64(x));
}
// The low bits of `v`, wrapped to T (two's complement).
template <typename T>
constexpr T IntFromU64(uint64_t v) {
  if constexpr (kIsSubByteInt<T>)
    return T::FromValue(static_cast<int64_t>(v));
  else
    return static_cast<T>(v);
}
template <typename T>
constexpr T IntFromI64(int64_t v) {
  return IntFromU64<T>(static_cast<uint64_t>(v));
}
// T's range as int64_t / uint64_t bounds.
template <typename T>
constexpr int64_t IntMin() {
  if constexpr (kIsSubByteInt<T>)
    return T::kMin;
  else
    return static_cast<int64_t>(std::numeric_limits<T>::min());
}
template <typename T>
constexpr uint64_t IntMaxU() {
  if constexpr (kIsSubByteInt<T>)
    return static_cast<uint64_t>(T::kMax);
  else
    return static_cast<uint64_t>(std::numeric_limits<T>::max());
}

// Real floats through double: every narrow float, f32 and f64 value is exact in double, and
// FloatFromDouble rounds once, to nearest even (overflow, NaN and the formats without inf or NaN
// follow float_conversions.h).
template <typename T>
double FloatToDouble(T x) {
  if constexpr (kIsNarrowFloat<T>)
    return static_cast<double>(x.ToFloat());
  else
    return static_cast<double>(x);
}
template <typename T>
T FloatFromDouble(double v) {
  if constexpr (kIsNarrowFloat<T>)
    return T::FromDouble(v);
  else
    return static_cast<T>(v);
}

// The raw bits of a real float (low total_bits), e.g. for total-order keys and bitcasts.
template <typename T>
uint64_t FloatBits(T x) {
  if constexpr (kIsNarrowFloat<T>) {
    return x.bits;
  } else if constexpr (std::is_same_v<T, float>) {
    uint32_t b;
    std::memcpy(&b, &x, 4);
    return b;
  } else {
    uint64_t b;
    std::memcpy(&b, &x, 8);
    return b;
  }
}

// An integer's exact value as a double, rounded to odd when it needs more than 53 bits, so that a
// second rounding to any format of at most 51 significand bits (every format but f64) gives the
// correctly rounded result of converting the integer directly.
double IntegerToDoubleRoundToOdd(uint64_t magnitude, bool negative);

// What one value of type From becomes as type To under stablehlo.convert (see eval_convert.cc
// for the cases the spec leaves open):
//   * to pred: != 0 (complex: real part != 0; NaN is true);
//   * pred to anything: 0 or 1;
//   * int to int: wraps (two's complement truncation or extension);
//   * int to float: rounds to nearest even, once;
//   * float to float: rounds to nearest even, once;
//   * float to int: truncates toward zero; NaN gives 0; out-of-range values saturate to the
//     type's min/max (LLVM APFloat::convertToInteger as the StableHLO reference interpreter uses
//     it, and XLA:CPU's saturating fptosi);
//   * complex to real: the imaginary part is dropped; real to complex: imaginary part +0.
template <typename To, typename From>
To ConvertElement(From x) {
  if constexpr (kIsComplex<From>) {
    if constexpr (kIsComplex<To>) {
      using F = typename To::value_type;
      return To(static_cast<F>(x.real()), static_cast<F>(x.imag()));
    } else {
      return ConvertElement<To>(x.real());
    }
  } else if constexpr (kIsComplex<To>) {
    using F = typename To::value_type;
    return To(ConvertElement<F>(x), F(0));
  } else if constexpr (kIsPred<To>) {
    if constexpr (kIsPred<From>)
      return x;
    else if constexpr (kIsInt<From>)
      return IntToI64(x) != 0;
    else
      return FloatToDouble(x) != 0.0;  // NaN != 0
  } else if constexpr (kIsPred<From>) {
    if constexpr (kIsInt<To>)
      return IntFromI64<To>(x ? 1 : 0);
    else
      return FloatFromDouble<To>(x ? 1.0 : 0.0);
  } else if constexpr (kIsInt<From>) {
    if constexpr (kIsInt<To>) {
      return IntFromI64<To>(IntToI64(x));
    } else if constexpr (std::is_same_v<To, double>) {
      if constexpr (kIsUnsignedInt<From>)
        return static_cast<double>(IntToU64(x));
      else
        return static_cast<double>(IntToI64(x));
    } else if constexpr (std::is_same_v<To, float>) {
      if constexpr (kIsUnsignedInt<From>)
        return static_cast<float>(IntToU64(x));
      else
        return static_cast<float>(IntToI64(x));
    } else {
      const bool negative = kIsSignedInt<From> && IntToI64(x) < 0;
      const uint64_t magnitude = negative ? 0 - IntToU64(x) : IntToU64(x);
      return FloatFromDouble<To>(IntegerToDoubleRoundToOdd(magnitude, negative));
    }
  } else {
    // From is a real float.
    const double v = FloatToDouble(x);
    if constexpr (kIsInt<To>) {
      if (std::isnan(v)) return IntFromI64<To>(0);
      const double t = std::trunc(v);
      if constexpr (kIsSignedInt<To>) {
        const double lo = static_cast<double>(IntMin<To>());  // -2^(n-1): exact
        if (t < lo) return IntFromI64<To>(IntMin<To>());
        // 2^(n-1) is exact in double; anything >= it saturates.
        if (t >= -lo) return IntFromU64<To>(IntMaxU<To>());
        return IntFromI64<To>(static_cast<int64_t>(t));
      } else {
        if (t <= 0) return IntFromU64<To>(0);
        const double hi = static_cast<double>(IntMaxU<To>()) + 1.0;  // 2^n, exact after rounding
        if (t >= hi) return IntFromU64<To>(IntMaxU<To>());
        return IntFromU64<To>(static_cast<uint64_t>(t));
      }
    } else {
      return FloatFromDouble<To>(v);
    }
  }
}

}  // namespace ember::eval

#endif  // EMBER_COMPILER_EVALUATOR_EVAL_UTIL_H_
