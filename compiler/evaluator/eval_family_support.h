// Helpers shared by the evaluator's window, linalg, indexing, random, collective and custom_call
// families, on top of eval_util.h: attribute readers with spec defaults, typed conversion of whole
// literals to and from an accumulation type, and the cores two families share. Private to
// compiler/evaluator (namespace family_support).
#ifndef EMBER_COMPILER_EVALUATOR_EVAL_FAMILY_SUPPORT_H_
#define EMBER_COMPILER_EVALUATOR_EVAL_FAMILY_SUPPORT_H_

#include <complex>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/status_macros.h"
#include "compiler/evaluator/eval_util.h"
#include "compiler/evaluator/eval_value.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/ir/literal.h"
#include "compiler/ir/module.h"
#include "compiler/ir/native_types.h"

namespace ember::eval::family_support {

// From eval_util.h: errors naming the instruction, operand access, strides, element copies.
using ::ember::eval::ArrayOperand;
using ::ember::eval::CheckOperandCount;
using ::ember::eval::IsComplexT;
using ::ember::eval::IsNarrowFloatT;
using ::ember::eval::IsSubByteIntT;
using ::ember::eval::OpError;
using ::ember::eval::OpUnimplemented;
using ::ember::eval::RowMajorStrides;

// Runs fn(std::type_identity<S>{}) with S = double for real floating-point element types and
// std::complex<double> for complex ones (the linear-algebra families compute in those); other
// types are an error naming the instruction.
template <typename Fn>
absl::StatusOr<std::vector<EvalValue>> ByLinalgScalar(const ir::Instruction& inst,
                                                      ir::ElementType type, Fn&& fn) {
  if (ir::IsFloat(type)) return fn(std::type_identity<double>{});
  if (ir::IsComplex(type)) return fn(std::type_identity<std::complex<double>>{});
  return OpError(inst, "operands must have a floating-point or complex element type");
}

// ---- Attributes --------------------------------------------------------------------------------
// Readers accept the spellings frontends produce: Ints as kInts, a rank-0/1 integer kLiteral or
// a kInt; Bools as kBools, kBool or a pred kLiteral. A missing attribute gives `fallback` when one
// is given, else an error naming the attribute.

absl::StatusOr<std::vector<int64_t>> IntsAttr(
    const ir::Instruction& inst, std::string_view name,
    std::optional<std::vector<int64_t>> fallback = std::nullopt);
absl::StatusOr<int64_t> IntAttr(const ir::Instruction& inst, std::string_view name,
                                std::optional<int64_t> fallback = std::nullopt);
absl::StatusOr<bool> BoolAttr(const ir::Instruction& inst, std::string_view name,
                              std::optional<bool> fallback = std::nullopt);
absl::StatusOr<std::vector<bool>> BoolsAttr(
    const ir::Instruction& inst, std::string_view name,
    std::optional<std::vector<bool>> fallback = std::nullopt);
absl::StatusOr<std::string> StringAttr(const ir::Instruction& inst, std::string_view name,
                                       std::optional<std::string> fallback = std::nullopt);
absl::StatusOr<double> FloatAttr(const ir::Instruction& inst, std::string_view name,
                                 std::optional<double> fallback = std::nullopt);
// An entry of a custom call's dictionary `backend_config` (or `mhlo.backend_config`): where
// typed-FFI custom calls keep their attributes. Null when absent.
const ir::Attribute* BackendConfigEntry(const ir::Instruction& inst, std::string_view key);
// A boolean (or integer, nonzero is true) backend_config entry; `fallback` when absent.
absl::StatusOr<bool> BackendConfigFlag(const ir::Instruction& inst, std::string_view key,
                                       bool fallback);
// An integer literal (or Ints) attribute as rows: a rank-2 literal [[0, 1], [2, 3]] gives
// {{0, 1}, {2, 3}}; Ints with `row_size` > 0 are cut into rows of that size. Missing: empty.
absl::StatusOr<std::vector<std::vector<int64_t>>> IntRowsAttr(const ir::Instruction& inst,
                                                              std::string_view name,
                                                              int64_t row_size);

// ---- Results -----------------------------------------------------------------------------------

// Row-major shape of result `i` (an error unless it is a tensor).
absl::StatusOr<ir::Shape> ResultShape(const ir::Instruction& inst, size_t i);
// A zero-filled row-major literal of result `i`'s type.
inline absl::StatusOr<ir::Literal> ZeroResult(const ir::Instruction& inst, size_t i) {
  return NewResultArray(inst, i);
}

// ---- Indices
// -------------------------------------------------------------------------------------

int64_t Product(absl::Span<const int64_t> dims);
// Advances a row-major multi-index; false once it wraps around to all zeros.
bool NextIndex(std::vector<int64_t>& index, absl::Span<const int64_t> dims);
int64_t Linearize(absl::Span<const int64_t> index, absl::Span<const int64_t> strides);
// Checks that `dims` are distinct and in [0, rank).
absl::Status CheckDims(const ir::Instruction& inst, std::string_view what,
                       absl::Span<const int64_t> dims, int64_t rank);

// ---- Element access by bytes (any element type; literals are row-major)
// --------------------------

inline int64_t ElementBytes(const ir::Literal& literal) {
  return ir::StorageBytes(literal.element_type());
}
inline void CopyElement(const ir::Literal& src, int64_t src_index, ir::Literal& dst,
                        int64_t dst_index) {
  CopyElements(src, src_index, dst, dst_index, 1);
}
// Element `index` of `literal` as a rank-0 literal.
inline absl::StatusOr<ir::Literal> ScalarAt(const ir::Literal& literal, int64_t index) {
  return ScalarFromElement(literal, index);
}
// Integer element as int64 (sign- or zero-extended as its type says); pred gives 0/1.
absl::StatusOr<std::vector<int64_t>> IntegerValues(const ir::Literal& literal);

// Runs a scalar region (reduce body, comparator, scatter update) on rank-0 arguments.
absl::StatusOr<std::vector<EvalValue>> RunRegion(Evaluator& evaluator,
                                                 const ir::Computation& region,
                                                 std::vector<ir::Literal> arguments);

// ---- Typed conversion --------------------------------------------------------------------------
// Acc is one of bool, uint64_t (integers, wrapping: signed values are sign-extended),
// float, double, std::complex<float>, std::complex<double>.

// One stored element to Acc.
template <typename Acc, typename T>
Acc ElementTo(const T& v) {
  if constexpr (IsNarrowFloatT<T>::value) {
    return ElementTo<Acc>(v.ToFloat());
  } else if constexpr (IsSubByteIntT<T>::value) {
    return ElementTo<Acc>(static_cast<int64_t>(v.value()));
  } else if constexpr (IsComplexT<T>::value) {
    if constexpr (IsComplexT<Acc>::value) {
      return Acc(static_cast<typename Acc::value_type>(v.real()),
                 static_cast<typename Acc::value_type>(v.imag()));
    } else {
      return ElementTo<Acc>(v.real());
    }
  } else if constexpr (std::is_same_v<Acc, bool>) {
    return v != T(0);
  } else if constexpr (std::is_same_v<Acc, uint64_t>) {
    if constexpr (std::is_floating_point_v<T>) {
      return static_cast<uint64_t>(static_cast<int64_t>(v));
    } else if constexpr (std::is_signed_v<T>) {
      return static_cast<uint64_t>(static_cast<int64_t>(v));
    } else {
      return static_cast<uint64_t>(v);
    }
  } else if constexpr (IsComplexT<Acc>::value) {
    return Acc(static_cast<typename Acc::value_type>(v), 0);
  } else {
    return static_cast<Acc>(v);
  }
}

// Acc to one stored element of type T (rounds once for narrow floats; wraps for integers).
template <typename T, typename Acc>
T ElementFrom(const Acc& v) {
  if constexpr (IsComplexT<Acc>::value && !IsComplexT<T>::value) {
    return ElementFrom<T>(v.real());
  } else if constexpr (IsNarrowFloatT<T>::value) {
    return T::FromDouble(static_cast<double>(v));
  } else if constexpr (IsSubByteIntT<T>::value) {
    if constexpr (std::is_floating_point_v<Acc>) {
      return T::FromValue(static_cast<int64_t>(v));
    } else {
      return T::FromValue(static_cast<int64_t>(static_cast<uint64_t>(v)));
    }
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != Acc(0);
  } else if constexpr (IsComplexT<T>::value) {
    if constexpr (IsComplexT<Acc>::value) {
      return T(static_cast<typename T::value_type>(v.real()),
               static_cast<typename T::value_type>(v.imag()));
    } else {
      return T(static_cast<typename T::value_type>(v), 0);
    }
  } else if constexpr (std::is_integral_v<T> && std::is_floating_point_v<Acc>) {
    return static_cast<T>(static_cast<int64_t>(v));
  } else {
    return static_cast<T>(v);
  }
}

// How vectors store Acc values: bool as uint8_t (std::vector<bool> has no element references).
template <typename Acc>
using AccStore = std::conditional_t<std::is_same_v<Acc, bool>, uint8_t, Acc>;

// All elements of `literal` (any element type but token) converted to Acc.
template <typename Acc>
absl::StatusOr<std::vector<AccStore<Acc>>> LiteralTo(const ir::Literal& literal) {
  return ir::VisitElementType(
      literal.element_type(), [&](auto tag) -> absl::StatusOr<std::vector<AccStore<Acc>>> {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_void_v<T>) {
          return absl::InvalidArgumentError(
              absl::StrCat("no element values in a ", literal.shape().ToString()));
        } else {
          EMBER_ASSIGN_OR_RETURN(absl::Span<const T> data, literal.data<T>());
          std::vector<AccStore<Acc>> out;
          out.reserve(data.size());
          for (const T& v : data) out.push_back(ElementTo<Acc>(v));
          return out;
        }
      });
}

// A row-major literal of `shape`'s element type and dims from Acc values.
template <typename Acc>
absl::StatusOr<ir::Literal> LiteralFrom(const ir::Shape& shape,
                                        absl::Span<const AccStore<Acc>> values) {
  EMBER_ASSIGN_OR_RETURN(ir::Shape row_major, ir::Shape::Make(shape.element_type(), shape.dims()));
  EMBER_ASSIGN_OR_RETURN(ir::Literal out, ir::Literal::Create(row_major));
  if (static_cast<int64_t>(values.size()) != row_major.element_count()) {
    return absl::InternalError(
        absl::StrCat("LiteralFrom: ", values.size(), " values for ", row_major.ToString()));
  }
  absl::Status status = ir::VisitElementType(shape.element_type(), [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_void_v<T>) {
      return absl::InvalidArgumentError(absl::StrCat("no element values in a ", shape.ToString()));
    } else {
      EMBER_ASSIGN_OR_RETURN(absl::Span<T> data, out.mutable_data<T>());
      for (size_t i = 0; i < values.size(); ++i) {
        data[i] = ElementFrom<T>(static_cast<Acc>(values[i]));
      }
      return absl::OkStatus();
    }
  });
  EMBER_RETURN_IF_ERROR(status);
  return out;
}

// The accumulation type the evaluator computes `type` in: pred -> bool, integers -> uint64_t
// (wrapping), f64 -> double, other real floats (f32 and every narrower float) -> float,
// c64 -> complex<float>, c128 -> complex<double>. Calls fn(std::type_identity<Acc>{}); token and
// invalid give fn(std::type_identity<void>{}).
template <typename Fn>
decltype(auto) VisitAccumulationType(ir::ElementType type, Fn&& fn) {
  using ir::ElementType;
  if (type == ElementType::kPred) return fn(std::type_identity<bool>{});
  if (ir::IsInteger(type)) return fn(std::type_identity<uint64_t>{});
  if (type == ElementType::kF64) return fn(std::type_identity<double>{});
  if (ir::IsFloat(type)) return fn(std::type_identity<float>{});
  if (type == ElementType::kC64) return fn(std::type_identity<std::complex<float>>{});
  if (type == ElementType::kC128) return fn(std::type_identity<std::complex<double>>{});
  return fn(std::type_identity<void>{});
}

// a * b and a + b in the accumulation type (bool: and / or, as the spec defines for i1).
template <typename Acc>
inline Acc AccMul(Acc a, Acc b) {
  if constexpr (std::is_same_v<Acc, bool>) {
    return a && b;
  } else {
    return a * b;
  }
}
template <typename Acc>
inline Acc AccAdd(Acc a, Acc b) {
  if constexpr (std::is_same_v<Acc, bool>) {
    return a || b;
  } else {
    return a + b;
  }
}

// Shared with custom_call: reduce_window's core on already-read window parameters.
struct WindowParams {
  std::vector<int64_t> window_dimensions;
  std::vector<int64_t> window_strides;
  std::vector<int64_t> base_dilations;
  std::vector<int64_t> window_dilations;
  std::vector<int64_t> padding;  // flattened [lo0, hi0, lo1, hi1, ...]
};
// The window attributes of reduce_window `inst` over an operand of `rank` (strides, dilations
// and padding default to 1, 1 and 0).
absl::StatusOr<WindowParams> ReadWindowParams(const ir::Instruction& inst, int64_t rank);
// reduce_window's result dims over an operand of `dims`.
std::vector<int64_t> WindowResultDims(absl::Span<const int64_t> dims, const WindowParams& p);
// A cumulative window: along one axis every result element's window holds all of the axis up to
// it (a prefix, `reverse` false) or from it (a suffix), and nothing else varies (JAX lowers
// cumsum, cumprod, cummax, cumlogsumexp this way). The evaluator folds those in XLA's blocked
// order (tree_scan.h), not window by window.
struct CumulativeAxis {
  size_t axis = 0;
  bool reverse = false;
};
std::optional<CumulativeAxis> FindCumulativeAxis(absl::Span<const int64_t> dims,
                                                 const WindowParams& p);
absl::StatusOr<std::vector<EvalValue>> ReduceWindowCore(
    const ir::Instruction& inst, const std::vector<const ir::Literal*>& inputs,
    const std::vector<const ir::Literal*>& inits, const WindowParams& params,
    const ir::Computation& body, Evaluator& evaluator);

// Shared with custom_call: rng_bit_generator on a state literal, for `algorithm` "DEFAULT",
// "THREE_FRY" or "PHILOX", producing {new_state, output of output_shape}.
absl::StatusOr<std::vector<EvalValue>> RngBitGeneratorCore(const ir::Instruction& inst,
                                                           const ir::Literal& state,
                                                           const std::string& algorithm,
                                                           const ir::Shape& output_shape);

// RegisterLinalgOps (eval_linalg.cc) is split over these files.
void RegisterDotOps(OpTable& table);            // eval_dot.cc: dot, dot_general
void RegisterConvolutionOps(OpTable& table);    // eval_convolution.cc: convolution, dynamic_conv
void RegisterFftOps(OpTable& table);            // eval_fft.cc: fft
void RegisterDecompositionOps(OpTable& table);  // eval_linalg_decomp.cc: cholesky, triangular_solve

// Householder QR (LAPACK geqrf / orgqr conventions), shared by custom_call @Qr and
// @ProductOfElementaryHouseholderReflectors (eval_linalg_decomp.cc).
absl::StatusOr<std::vector<EvalValue>> QrCore(const ir::Instruction& inst, const ir::Literal& a);
absl::StatusOr<std::vector<EvalValue>> HouseholderProductCore(const ir::Instruction& inst,
                                                              const ir::Literal& a,
                                                              const ir::Literal& taus);

// The channel id of a collective op (channel_handle or channel_id); 0 when it has none.
int64_t ChannelId(const ir::Instruction& inst);

}  // namespace ember::eval::family_support

#endif  // EMBER_COMPILER_EVALUATOR_EVAL_FAMILY_SUPPORT_H_
