// Unary elementwise ops: abs, negate, sign, not, popcnt, count_leading_zeros, rounding,
// transcendental functions, is_finite, real and imag.
//
// Floats are computed in double and rounded once to the result type (f16, bf16, f8, f6, f4 and
// f32 included), as the StableHLO reference interpreter does for its math functions; complex
// numbers in std::complex<double>, each part rounded once. logistic is 1 / (1 + exp(-x))
// computed in double then rounded once (the reference rounds after each step; rounding once is
// the more accurate oracle). Integers wrap: abs(INT_MIN) = INT_MIN, negate(INT_MIN) = INT_MIN.
#include <bit>

#include "base/status_macros.h"
#include "compiler/evaluator/eval_elementwise.h"

namespace ember::eval {
namespace {

using ir::Opcode;

constexpr bool IsRealMathOp(Opcode op) {
  switch (op) {
    case Opcode::kCbrt:
    case Opcode::kCosine:
    case Opcode::kSine:
    case Opcode::kTan:
    case Opcode::kTanh:
    case Opcode::kExponential:
    case Opcode::kExponentialMinusOne:
    case Opcode::kLog:
    case Opcode::kLogPlusOne:
    case Opcode::kLogistic:
    case Opcode::kRsqrt:
    case Opcode::kSqrt:
    case Opcode::kCeil:
    case Opcode::kFloor:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
      return true;
    default:
      return false;
  }
}

template <Opcode kOp>
double RealMath(double x) {
  if constexpr (kOp == Opcode::kCbrt)
    return std::cbrt(x);
  else if constexpr (kOp == Opcode::kCosine)
    return std::cos(x);
  else if constexpr (kOp == Opcode::kSine)
    return std::sin(x);
  else if constexpr (kOp == Opcode::kTan)
    return std::tan(x);
  else if constexpr (kOp == Opcode::kTanh)
    return std::tanh(x);
  else if constexpr (kOp == Opcode::kExponential)
    return std::exp(x);
  else if constexpr (kOp == Opcode::kExponentialMinusOne)
    return std::expm1(x);
  else if constexpr (kOp == Opcode::kLog)
    return std::log(x);
  else if constexpr (kOp == Opcode::kLogPlusOne)
    return std::log1p(x);
  else if constexpr (kOp == Opcode::kLogistic)
    return 1.0 / (1.0 + std::exp(-x));
  else if constexpr (kOp == Opcode::kRsqrt)
    return 1.0 / std::sqrt(x);
  else if constexpr (kOp == Opcode::kSqrt)
    return std::sqrt(x);
  else if constexpr (kOp == Opcode::kCeil)
    return std::ceil(x);
  else if constexpr (kOp == Opcode::kFloor)
    return std::floor(x);
  else if constexpr (kOp == Opcode::kRoundNearestAfz)
    return std::round(x);
  else
    return std::nearbyint(x);  // kRoundNearestEven: the default rounding mode is to even
}

using C = std::complex<double>;

C ComplexExpm1(C z) {
  // exp(x + iy) - 1 without cancellation near 0: expm1(x) cos(y) - 2 sin^2(y/2) + i e^x sin(y).
  const double x = z.real(), y = z.imag();
  const double s = std::sin(y / 2);
  return C(std::expm1(x) * std::cos(y) - 2 * s * s, std::exp(x) * std::sin(y));
}

C ComplexLog1p(C z) {
  const double x = z.real(), y = z.imag();
  if (std::abs(x) > 1e150 || std::abs(y) > 1e150 || !std::isfinite(x) || !std::isfinite(y)) {
    return std::log(z + 1.0);
  }
  // |z + 1|^2 - 1 = x (2 + x) + y^2, so log|z + 1| = log1p(that) / 2 stays accurate near 0.
  return C(0.5 * std::log1p(x * (2 + x) + y * y), std::atan2(y, x + 1));
}

template <Opcode kOp>
C ComplexMath(C z) {
  if constexpr (kOp == Opcode::kCbrt) {
    // The principal cube root, as the reference interpreter defines it.
    const double theta = std::atan2(z.imag(), z.real()) / 3.0;
    return std::pow(std::norm(z), 1.0 / 6.0) * C(std::cos(theta), std::sin(theta));
  } else if constexpr (kOp == Opcode::kCosine) {
    return std::cos(z);
  } else if constexpr (kOp == Opcode::kSine) {
    return std::sin(z);
  } else if constexpr (kOp == Opcode::kTan) {
    return std::tan(z);
  } else if constexpr (kOp == Opcode::kTanh) {
    return std::tanh(z);
  } else if constexpr (kOp == Opcode::kExponential) {
    return std::exp(z);
  } else if constexpr (kOp == Opcode::kExponentialMinusOne) {
    return ComplexExpm1(z);
  } else if constexpr (kOp == Opcode::kLog) {
    return std::log(z);
  } else if constexpr (kOp == Opcode::kLogPlusOne) {
    return ComplexLog1p(z);
  } else if constexpr (kOp == Opcode::kLogistic) {
    return 1.0 / (1.0 + std::exp(-z));
  } else if constexpr (kOp == Opcode::kRsqrt) {
    return 1.0 / std::sqrt(z);
  } else {
    return std::sqrt(z);
  }
}

// Which element types op kOp accepts, as the spec lists them.
template <Opcode kOp, typename T>
constexpr bool Supports() {
  if constexpr (std::is_void_v<T>) {
    return false;
  } else if constexpr (kOp == Opcode::kAbs) {
    return kIsSignedInt<T> || kIsRealFloat<T> || kIsComplex<T>;
  } else if constexpr (kOp == Opcode::kNegate) {
    return kIsInt<T> || kIsRealFloat<T> || kIsComplex<T>;
  } else if constexpr (kOp == Opcode::kSign) {
    return kIsSignedInt<T> || kIsRealFloat<T> || kIsComplex<T>;
  } else if constexpr (kOp == Opcode::kNot) {
    return kIsPred<T> || kIsInt<T>;
  } else if constexpr (kOp == Opcode::kPopcnt || kOp == Opcode::kCountLeadingZeros) {
    return kIsInt<T>;
  } else if constexpr (kOp == Opcode::kIsFinite || kOp == Opcode::kCeil || kOp == Opcode::kFloor ||
                       kOp == Opcode::kRoundNearestAfz || kOp == Opcode::kRoundNearestEven) {
    return kIsRealFloat<T>;
  } else if constexpr (kOp == Opcode::kReal || kOp == Opcode::kImag) {
    return kIsRealFloat<T> || kIsComplex<T>;
  } else {
    static_assert(IsRealMathOp(kOp));
    return kIsRealFloat<T> || kIsComplex<T>;
  }
}

constexpr const char* Expects(Opcode op) {
  switch (op) {
    case Opcode::kAbs:
    case Opcode::kSign:
      return "signed integer, float or complex";
    case Opcode::kNegate:
      return "integer, float or complex";
    case Opcode::kNot:
      return "pred or integer";
    case Opcode::kPopcnt:
    case Opcode::kCountLeadingZeros:
      return "integer";
    case Opcode::kIsFinite:
    case Opcode::kCeil:
    case Opcode::kFloor:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
      return "float";
    default:
      return "float or complex";
  }
}

// The element type of the result for operand element type T.
template <Opcode kOp, typename T>
struct UnaryResult {
  using type = T;
};
template <typename F>
struct UnaryResult<Opcode::kAbs, std::complex<F>> {
  using type = F;
};
template <typename F>
struct UnaryResult<Opcode::kReal, std::complex<F>> {
  using type = F;
};
template <typename F>
struct UnaryResult<Opcode::kImag, std::complex<F>> {
  using type = F;
};

template <Opcode kOp, typename T>
auto ApplyUnary(T x) -> typename UnaryResult<kOp, T>::type {
  if constexpr (kOp == Opcode::kIsFinite) {
    return T{};  // handled separately (bool result)
  } else if constexpr (kOp == Opcode::kReal) {
    if constexpr (kIsComplex<T>)
      return x.real();
    else
      return x;
  } else if constexpr (kOp == Opcode::kImag) {
    if constexpr (kIsComplex<T>)
      return x.imag();
    else
      return FloatFromDouble<T>(0.0);
  } else if constexpr (kIsPred<T>) {
    return !x;  // not
  } else if constexpr (kIsInt<T>) {
    const uint64_t bits = IntToU64(x);
    constexpr int kWidth = BitWidthOf<T>();
    constexpr uint64_t kMask = kWidth == 64 ? ~uint64_t{0} : (uint64_t{1} << kWidth) - 1;
    if constexpr (kOp == Opcode::kAbs) {
      return IntToI64(x) < 0 ? IntFromU64<T>(0 - bits) : x;
    } else if constexpr (kOp == Opcode::kNegate) {
      return IntFromU64<T>(0 - bits);
    } else if constexpr (kOp == Opcode::kSign) {
      const int64_t v = IntToI64(x);
      return IntFromI64<T>(v < 0 ? -1 : v > 0 ? 1 : 0);
    } else if constexpr (kOp == Opcode::kNot) {
      return IntFromU64<T>(~bits);
    } else if constexpr (kOp == Opcode::kPopcnt) {
      return IntFromU64<T>(static_cast<uint64_t>(std::popcount(bits & kMask)));
    } else {
      static_assert(kOp == Opcode::kCountLeadingZeros);
      return IntFromU64<T>(static_cast<uint64_t>(std::countl_zero(bits & kMask) - (64 - kWidth)));
    }
  } else if constexpr (kIsRealFloat<T>) {
    const double v = FloatToDouble(x);
    if constexpr (kOp == Opcode::kAbs) {
      return FloatFromDouble<T>(std::fabs(v));
    } else if constexpr (kOp == Opcode::kNegate) {
      return FloatFromDouble<T>(-v);
    } else if constexpr (kOp == Opcode::kSign) {
      // NaN stays NaN and +-0 stay as they are; everything else is +-1.
      if (std::isnan(v) || v == 0) return x;
      return FloatFromDouble<T>(v < 0 ? -1.0 : 1.0);
    } else {
      return FloatFromDouble<T>(RealMath<kOp>(v));
    }
  } else {
    static_assert(kIsComplex<T>);
    using F = typename T::value_type;
    const C z(x.real(), x.imag());
    if constexpr (kOp == Opcode::kAbs) {
      return static_cast<F>(std::abs(z));
    } else if constexpr (kOp == Opcode::kNegate) {
      return -x;
    } else if constexpr (kOp == Opcode::kSign) {
      if (std::isnan(z.real()) || std::isnan(z.imag())) {
        return T(std::numeric_limits<F>::quiet_NaN(), std::numeric_limits<F>::quiet_NaN());
      }
      if (z == C(0, 0)) return T(0, 0);
      const C r = z / std::abs(z);
      return T(static_cast<F>(r.real()), static_cast<F>(r.imag()));
    } else {
      const C r = ComplexMath<kOp>(z);
      return T(static_cast<F>(r.real()), static_cast<F>(r.imag()));
    }
  }
}

template <Opcode kOp>
absl::StatusOr<std::vector<EvalValue>> EvalUnary(const ir::Instruction& instruction,
                                                 std::vector<EvalValue>& operands, Evaluator&) {
  EMBER_RETURN_IF_ERROR(CheckOperandCount(instruction, operands, 1));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* operand, ArrayOperand(instruction, operands, 0));
  EMBER_ASSIGN_OR_RETURN(ir::Literal result, NewResultArray(instruction));
  EMBER_RETURN_IF_ERROR(CheckDims(instruction, *operand, result.shape().dims(), "the operand"));
  const ir::ElementType type = operand->element_type();
  EMBER_RETURN_IF_ERROR(ir::VisitElementType(type, [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    if constexpr (!Supports<kOp, T>()) {
      return UnsupportedType(instruction, type, Expects(kOp));
    } else {
      using R =
          std::conditional_t<kOp == Opcode::kIsFinite, bool, typename UnaryResult<kOp, T>::type>;
      if (result.element_type() != ir::kElementTypeOf<R>) {
        return OpError(instruction, "result element type ", TypeName(result.element_type()),
                       " does not match ", TypeName(ir::kElementTypeOf<R>), " for a ",
                       TypeName(type), " operand");
      }
      absl::Span<const T> in = Elements<T>(*operand);
      absl::Span<R> out = MutableElements<R>(result);
      for (size_t i = 0; i < in.size(); ++i) {
        if constexpr (kOp == Opcode::kIsFinite) {
          out[i] = std::isfinite(FloatToDouble(in[i]));
        } else {
          out[i] = ApplyUnary<kOp, T>(in[i]);
        }
      }
      return absl::OkStatus();
    }
  }));
  return ArrayResult(std::move(result));
}

}  // namespace

void RegisterUnaryOps(OpTable& table) {
  table.Register(Opcode::kAbs, EvalUnary<Opcode::kAbs>);
  table.Register(Opcode::kNegate, EvalUnary<Opcode::kNegate>);
  table.Register(Opcode::kSign, EvalUnary<Opcode::kSign>);
  table.Register(Opcode::kNot, EvalUnary<Opcode::kNot>);
  table.Register(Opcode::kPopcnt, EvalUnary<Opcode::kPopcnt>);
  table.Register(Opcode::kCountLeadingZeros, EvalUnary<Opcode::kCountLeadingZeros>);
  table.Register(Opcode::kIsFinite, EvalUnary<Opcode::kIsFinite>);
  table.Register(Opcode::kReal, EvalUnary<Opcode::kReal>);
  table.Register(Opcode::kImag, EvalUnary<Opcode::kImag>);
  table.Register(Opcode::kCeil, EvalUnary<Opcode::kCeil>);
  table.Register(Opcode::kFloor, EvalUnary<Opcode::kFloor>);
  table.Register(Opcode::kRoundNearestAfz, EvalUnary<Opcode::kRoundNearestAfz>);
  table.Register(Opcode::kRoundNearestEven, EvalUnary<Opcode::kRoundNearestEven>);
  table.Register(Opcode::kCbrt, EvalUnary<Opcode::kCbrt>);
  table.Register(Opcode::kCosine, EvalUnary<Opcode::kCosine>);
  table.Register(Opcode::kSine, EvalUnary<Opcode::kSine>);
  table.Register(Opcode::kTan, EvalUnary<Opcode::kTan>);
  table.Register(Opcode::kTanh, EvalUnary<Opcode::kTanh>);
  table.Register(Opcode::kExponential, EvalUnary<Opcode::kExponential>);
  table.Register(Opcode::kExponentialMinusOne, EvalUnary<Opcode::kExponentialMinusOne>);
  table.Register(Opcode::kLog, EvalUnary<Opcode::kLog>);
  table.Register(Opcode::kLogPlusOne, EvalUnary<Opcode::kLogPlusOne>);
  table.Register(Opcode::kLogistic, EvalUnary<Opcode::kLogistic>);
  table.Register(Opcode::kRsqrt, EvalUnary<Opcode::kRsqrt>);
  table.Register(Opcode::kSqrt, EvalUnary<Opcode::kSqrt>);
}

}  // namespace ember::eval
