// Type-changing elementwise ops: convert, bitcast_convert and reduce_precision.
//
// convert follows ConvertElement (eval_util.h). Where the spec says "TBD" (#180): int -> int
// wraps, int/float -> float rounds to nearest even once, float -> int truncates toward zero with
// NaN -> 0 and saturation at the type's bounds. That is what the reference interpreter gets from
// APFloat::convertToInteger and what XLA:CPU emits, so JAX users see the same.
//
// bitcast_convert works on each element's logical bits (sub-byte types too), element 0 of a
// split being the least significant part (the reference interpreter's and little-endian order).
//
// reduce_precision rounds the significand to `mantissa_bits` (ties to even), then flushes values
// whose exponent does not fit `exponent_bits` to +-0 or +-inf, on the operand's own bits, as the
// reference interpreter does for IEEE formats (f64, f32, f16, bf16, and the f8 types with inf:
// E5M2, E4M3, E3M4). NaN stays NaN (if mantissa_bits is 0 it becomes +inf, as in the reference).
// The f8/f6/f4 formats without inf or with an unusual zero go through f32 and back.
#include "base/status_macros.h"
#include "compiler/evaluator/eval_elementwise.h"

namespace ember::eval {
namespace {

absl::StatusOr<std::vector<EvalValue>> EvalConvert(const ir::Instruction& instruction,
                                                   std::vector<EvalValue>& operands, Evaluator&) {
  EMBER_RETURN_IF_ERROR(CheckOperandCount(instruction, operands, 1));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* operand, ArrayOperand(instruction, operands, 0));
  EMBER_ASSIGN_OR_RETURN(ir::Literal result, NewResultArray(instruction));
  EMBER_RETURN_IF_ERROR(CheckDims(instruction, *operand, result.shape().dims(), "the operand"));
  const auto unconvertible = [&] {
    return OpError(instruction, "cannot convert ", TypeName(operand->element_type()), " to ",
                   TypeName(result.element_type()));
  };
  // The source type is tested before the inner visit: a branch that names Span<const From> must
  // lie in the outer lambda's discarded branch for From = void (clang instantiates the inner
  // lambda's body for each From before it knows To).
  EMBER_RETURN_IF_ERROR(ir::VisitElementType(operand->element_type(), [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    if constexpr (std::is_void_v<From>) {
      return unconvertible();
    } else {
      return ir::VisitElementType(result.element_type(), [&](auto to_tag) -> absl::Status {
        using To = typename decltype(to_tag)::type;
        if constexpr (std::is_void_v<To>) {
          return unconvertible();
        } else {
          absl::Span<const From> in = Elements<From>(*operand);
          absl::Span<To> out = MutableElements<To>(result);
          for (size_t i = 0; i < in.size(); ++i) out[i] = ConvertElement<To>(in[i]);
          return absl::OkStatus();
        }
      });
    }
  }));
  return ArrayResult(std::move(result));
}

// ---- bitcast_convert ---------------------------------------------------------------------------

// The logical bits of every element of `array` (row-major), each as a uint64_t; complex types
// (up to 128 bits) do not come here: they are byte-aligned and take the memcpy path.
std::vector<uint64_t> ElementBits(const ir::Literal& array) {
  const int64_t n = array.shape().element_count();
  const int bytes = ir::StorageBytes(array.element_type());
  std::vector<uint64_t> bits(static_cast<size_t>(n), 0);
  const uint8_t* data = array.bytes().data();
  for (int64_t i = 0; i < n; ++i) {
    uint64_t v = 0;
    std::memcpy(&v, data + i * bytes, static_cast<size_t>(bytes));  // little-endian host
    bits[static_cast<size_t>(i)] = v;
  }
  return bits;
}

absl::StatusOr<std::vector<EvalValue>> EvalBitcastConvert(const ir::Instruction& instruction,
                                                          std::vector<EvalValue>& operands,
                                                          Evaluator&) {
  EMBER_RETURN_IF_ERROR(CheckOperandCount(instruction, operands, 1));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* operand, ArrayOperand(instruction, operands, 0));
  EMBER_ASSIGN_OR_RETURN(ir::Literal result, NewResultArray(instruction));
  const ir::ElementType from = operand->element_type(), to = result.element_type();
  const int from_bits = ir::BitWidth(from), to_bits = ir::BitWidth(to);
  const std::vector<int64_t>& in_dims = operand->shape().dims();
  const std::vector<int64_t>& out_dims = result.shape().dims();
  if (ir::IsComplex(from) != ir::IsComplex(to)) {
    return OpError(instruction, "cannot bitcast between ", TypeName(from), " and ", TypeName(to),
                   ": complex types convert only to complex types");
  }
  // Check the shapes the spec allows.
  bool shapes_ok;
  if (from_bits == to_bits) {
    shapes_ok = in_dims == out_dims;
  } else if (to_bits < from_bits) {
    shapes_ok = out_dims.size() == in_dims.size() + 1 &&
                std::equal(in_dims.begin(), in_dims.end(), out_dims.begin()) &&
                out_dims.back() * to_bits == from_bits;
  } else {
    shapes_ok = in_dims.size() == out_dims.size() + 1 &&
                std::equal(out_dims.begin(), out_dims.end(), in_dims.begin()) &&
                in_dims.back() * from_bits == to_bits;
  }
  if (!shapes_ok) {
    return OpError(instruction, "cannot bitcast ", DescribeArray(*operand), " to ",
                   DescribeArray(result));
  }
  const bool byte_aligned = from_bits % 8 == 0 && to_bits % 8 == 0;
  if (byte_aligned) {
    // Storage is exactly the little-endian bits, so the bytes carry over unchanged.
    if (operand->size_bytes() > 0) std::memcpy(result.mutable_bytes().data(), operand->bytes().data(),
                static_cast<size_t>(operand->size_bytes()));
  } else {
    // Concatenate logical bits, least significant part first, and split them again.
    const std::vector<uint64_t> in = ElementBits(*operand);
    const int out_bytes = ir::StorageBytes(to);
    const int64_t n_out = result.shape().element_count();
    const uint64_t out_mask = to_bits == 64 ? ~uint64_t{0} : (uint64_t{1} << to_bits) - 1;
    uint8_t* data = result.mutable_bytes().data();
    for (int64_t o = 0; o < n_out; ++o) {
      uint64_t v = 0;
      if (to_bits <= from_bits) {
        const int64_t ratio = from_bits / to_bits;
        v = (in[static_cast<size_t>(o / ratio)] >> ((o % ratio) * to_bits)) & out_mask;
      } else {
        const int64_t ratio = to_bits / from_bits;
        for (int64_t k = ratio - 1; k >= 0; --k) {
          v = (v << from_bits) | in[static_cast<size_t>(o * ratio + k)];
        }
      }
      if (to == ir::ElementType::kPred) v = v != 0;
      std::memcpy(data + o * out_bytes, &v, static_cast<size_t>(out_bytes));
    }
  }
  return ArrayResult(std::move(result));
}

// ---- reduce_precision --------------------------------------------------------------------------

// The reference interpreter's algorithm on an IEEE-style encoding with `bits` total bits and
// `src_mantissa` stored significand bits.
uint64_t ReducePrecisionBits(uint64_t value, int bits, int src_mantissa, int exponent_bits,
                             int mantissa_bits, bool is_nan) {
  const uint64_t original = value;
  if (mantissa_bits < src_mantissa) {
    const int shift = src_mantissa - mantissa_bits;
    const uint64_t last_mantissa_bit_mask = uint64_t{1} << shift;
    const uint64_t base_rounding_bias = (last_mantissa_bit_mask >> 1) - 1;
    const uint64_t x_last_mantissa_bit = (value & last_mantissa_bit_mask) >> shift;
    const uint64_t truncation_mask = ~(last_mantissa_bit_mask - 1);
    value = (value + x_last_mantissa_bit + base_rounding_bias) & truncation_mask;
  }
  const int src_exponent = bits - src_mantissa - 1;
  if (exponent_bits < src_exponent) {
    const uint64_t sign_mask = uint64_t{1} << (bits - 1);
    const uint64_t exp_mask = ((uint64_t{1} << src_exponent) - 1) << src_mantissa;
    const uint64_t bias = (uint64_t{1} << (src_exponent - 1)) - 1;
    const uint64_t reduced_bias = (uint64_t{1} << (exponent_bits - 1)) - 1;
    const uint64_t max_exponent = bias + reduced_bias;
    const uint64_t min_exponent = bias - reduced_bias;
    const uint64_t exponent = value & exp_mask;
    const uint64_t signed_zero = value & sign_mask;
    if (exponent > (max_exponent << src_mantissa)) value = signed_zero | exp_mask;
    if (exponent <= (min_exponent << src_mantissa)) value = signed_zero;
  }
  if (is_nan) {
    const uint64_t exp_mask = ((uint64_t{1} << (bits - src_mantissa - 1)) - 1) << src_mantissa;
    value = mantissa_bits > 0 ? original : exp_mask;  // +inf
  }
  return value;
}

template <typename T>
T ReducePrecisionElement(T x, int exponent_bits, int mantissa_bits) {
  const double v = FloatToDouble(x);
  const bool is_nan = std::isnan(v);
  if constexpr (std::is_same_v<T, double>) {
    const uint64_t r =
        ReducePrecisionBits(FloatBits(x), 64, 52, exponent_bits, mantissa_bits, is_nan);
    double out;
    std::memcpy(&out, &r, 8);
    return out;
  } else if constexpr (std::is_same_v<T, float>) {
    const uint32_t r = static_cast<uint32_t>(
        ReducePrecisionBits(FloatBits(x), 32, 23, exponent_bits, mantissa_bits, is_nan));
    float out;
    std::memcpy(&out, &r, 4);
    return out;
  } else {
    constexpr const FloatFormat& kFormat = T::kFormat;
    if constexpr (kFormat.encoding == FloatEncoding::kIeee) {
      return T::FromBits(static_cast<typename T::Rep>(
          ReducePrecisionBits(x.bits, kFormat.total_bits(), kFormat.mantissa_bits, exponent_bits,
                              mantissa_bits, is_nan)));
    } else {
      return FloatFromDouble<T>(
          ReducePrecisionElement<float>(static_cast<float>(v), exponent_bits, mantissa_bits));
    }
  }
}

absl::StatusOr<std::vector<EvalValue>> EvalReducePrecision(const ir::Instruction& instruction,
                                                           std::vector<EvalValue>& operands,
                                                           Evaluator&) {
  EMBER_RETURN_IF_ERROR(CheckOperandCount(instruction, operands, 1));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* operand, ArrayOperand(instruction, operands, 0));
  EMBER_ASSIGN_OR_RETURN(int64_t exponent_bits, IntAttr(instruction, "exponent_bits"));
  EMBER_ASSIGN_OR_RETURN(int64_t mantissa_bits, IntAttr(instruction, "mantissa_bits"));
  if (exponent_bits < 1 || exponent_bits > 62 || mantissa_bits < 0 || mantissa_bits > 62) {
    return OpError(instruction, "exponent_bits ", exponent_bits, " / mantissa_bits ", mantissa_bits,
                   " out of range (needs exponent_bits >= 1, mantissa_bits >= 0)");
  }
  EMBER_ASSIGN_OR_RETURN(ir::Literal result, NewResultArray(instruction));
  EMBER_RETURN_IF_ERROR(CheckDims(instruction, *operand, result.shape().dims(), "the operand"));
  const ir::ElementType type = operand->element_type();
  if (result.element_type() != type) {
    return OpError(instruction, "result type ", TypeName(result.element_type()),
                   " differs from the operand's ", TypeName(type));
  }
  EMBER_RETURN_IF_ERROR(ir::VisitElementType(type, [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    if constexpr (!kIsRealFloat<T>) {
      return UnsupportedType(instruction, type, "float");
    } else {
      absl::Span<const T> in = Elements<T>(*operand);
      absl::Span<T> out = MutableElements<T>(result);
      for (size_t i = 0; i < in.size(); ++i) {
        out[i] = ReducePrecisionElement(in[i], static_cast<int>(exponent_bits),
                                        static_cast<int>(mantissa_bits));
      }
      return absl::OkStatus();
    }
  }));
  return ArrayResult(std::move(result));
}

}  // namespace

void RegisterConvertOps(OpTable& table) {
  table.Register(ir::Opcode::kConvert, EvalConvert);
  table.Register(ir::Opcode::kBitcastConvert, EvalBitcastConvert);
  table.Register(ir::Opcode::kReducePrecision, EvalReducePrecision);
}

}  // namespace ember::eval
