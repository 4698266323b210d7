// Reference evaluation of the CHLO ops the importer keeps (as custom calls named "chlo.<op>",
// see compiler/frontend/import/module_import.cc): the special functions (lgamma, digamma, erf,
// erfc, erf_inv, bessel_i1e), the inverse and hyperbolic trigonometric functions (real and
// complex), next_after, mulhi and top_k.
//
// Real floats are computed in double and rounded once to the result type, as the evaluator's
// stablehlo math ops are (eval_unary.cc); complex values in std::complex<double>. Programs JAX
// sends never contain CHLO (JAX legalizes it before serializing); the StableHLO suites do.
#include <cmath>
#include <complex>
#include <limits>
#include <numbers>

#include "compiler/evaluator/eval_chlo.h"
#include "compiler/evaluator/eval_family_support.h"

namespace ember::eval {
namespace {

namespace fs = family_support;
using C = std::complex<double>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = std::numbers::pi;

double Lgamma(double x) {
  int sign = 0;
  return lgamma_r(x, &sign);  // the reentrant form: launches run on several threads
}

// psi(x): reflection below 1/2, the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the
// asymptotic series log x - 1/(2x) - sum B_2k / (2k x^2k) from x >= 10. Poles (0, -1, -2,
// ...) give NaN.
double Digamma(double x) {
  if (std::isnan(x) || x == -kInf) return kNaN;
  if (x == kInf) return kInf;
  if (x <= 0 && x == std::floor(x)) return kNaN;
  double result = 0;
  if (x < 0.5) {
    result = -kPi / std::tan(kPi * x);
    x = 1 - x;
  }
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  // B_2k / 2k for k = 1..7; at x >= 10 the next term is below 1e-16 relative.
  const double f = 1 / (x * x);
  double series = 0;
  for (double c : {1.0 / 12, -691.0 / 32760, 1.0 / 132, -1.0 / 240, 1.0 / 252, -1.0 / 120,
                   1.0 / 12}) {
    series = series * f + c;
  }
  series *= f;
  return result + std::log(x) - 0.5 / x - series;
}

// erf^-1(y): M. Giles' single-precision approximation ("Approximating the erfinv function",
// 2010) refined by Newton steps on erf (|y| <= 0.5) or erfc (the tails, where 1 - |y| is exact).
double ErfInv(double y) {
  if (std::isnan(y) || y < -1 || y > 1) return kNaN;
  if (y == 1) return kInf;
  if (y == -1) return -kInf;
  double w = -std::log((1 - y) * (1 + y));
  double p;
  if (w < 5) {
    w -= 2.5;
    p = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                     -0.00417768164, 0.246640727, 1.50140941}) {
      p = c + p * w;
    }
  } else {
    w = std::sqrt(w) - 3;
    p = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                     0.00943887047, 1.00167406, 2.83297682}) {
      p = c + p * w;
    }
  }
  double x = p * y;
  const double a = std::fabs(y);
  const double sign = y < 0 ? -1 : 1;
  double t = std::fabs(x);
  for (int i = 0; i < 4; ++i) {
    const double slope = 2 / std::sqrt(kPi) * std::exp(-t * t);
    if (slope == 0) break;
    const double err = a <= 0.5 ? std::erf(t) - a : (1 - a) - std::erfc(t);
    t -= err / slope;
  }
  return sign * t;
}

// exp(-|x|) I1(x); I1 is odd. Beyond exp's range the asymptotic series
// e^-x I1(x) ~ (1 - 3/(8x) - 15/(128x^2) - 315/(3072x^3)) / sqrt(2 pi x).
double BesselI1e(double x) {
  if (std::isnan(x)) return x;
  const double a = std::fabs(x);
  double r;
  if (a == 0) {
    return x;  // keeps the sign of zero
  } else if (a > 700) {
    const double inv = 1 / a;
    r = (1 - inv * (3.0 / 8 + inv * (15.0 / 128 + inv * (315.0 / 3072)))) / std::sqrt(2 * kPi * a);
  } else {
    r = std::cyl_bessel_i(1.0, a) * std::exp(-a);
  }
  return x < 0 ? -r : r;
}

enum class Fn { kAcos, kAcosh, kAsin, kAsinh, kAtan, kAtanh, kSinh, kCosh, kLgamma, kDigamma,
                kErf, kErfc, kErfInv, kBesselI1e, kIsInf, kIsNegInf, kIsPosInf };

std::optional<Fn> UnaryFn(std::string_view name) {
  static const std::pair<std::string_view, Fn> kFns[] = {
      {"acos", Fn::kAcos},       {"acosh", Fn::kAcosh},     {"asin", Fn::kAsin},
      {"asinh", Fn::kAsinh},     {"atan", Fn::kAtan},       {"atanh", Fn::kAtanh},
      {"sinh", Fn::kSinh},       {"cosh", Fn::kCosh},       {"lgamma", Fn::kLgamma},
      {"digamma", Fn::kDigamma}, {"erf", Fn::kErf},         {"erfc", Fn::kErfc},
      {"erf_inv", Fn::kErfInv},  {"bessel_i1e", Fn::kBesselI1e}, {"is_inf", Fn::kIsInf},
      {"is_neg_inf", Fn::kIsNegInf}, {"is_pos_inf", Fn::kIsPosInf}};
  for (const auto& [n, fn] : kFns) {
    if (n == name) return fn;
  }
  return std::nullopt;
}

double RealFn(Fn fn, double x) {
  switch (fn) {
    case Fn::kAcos: return std::acos(x);
    case Fn::kAcosh: return std::acosh(x);
    case Fn::kAsin: return std::asin(x);
    case Fn::kAsinh: return std::asinh(x);
    case Fn::kAtan: return std::atan(x);
    case Fn::kAtanh: return std::atanh(x);
    case Fn::kSinh: return std::sinh(x);
    case Fn::kCosh: return std::cosh(x);
    case Fn::kLgamma: return Lgamma(x);
    case Fn::kDigamma: return Digamma(x);
    case Fn::kErf: return std::erf(x);
    case Fn::kErfc: return std::erfc(x);
    case Fn::kErfInv: return ErfInv(x);
    case Fn::kBesselI1e: return BesselI1e(x);
    case Fn::kIsInf: return std::isinf(x) ? 1 : 0;
    case Fn::kIsNegInf: return x == -kInf ? 1 : 0;
    case Fn::kIsPosInf: return x == kInf ? 1 : 0;
  }
  return kNaN;
}

std::optional<C> ComplexFn(Fn fn, C z) {
  switch (fn) {
    case Fn::kAcos: return std::acos(z);
    case Fn::kAcosh: return std::acosh(z);
    case Fn::kAsin: return std::asin(z);
    case Fn::kAsinh: return std::asinh(z);
    case Fn::kAtan: return std::atan(z);
    case Fn::kAtanh: return std::atanh(z);
    case Fn::kSinh: return std::sinh(z);
    case Fn::kCosh: return std::cosh(z);
    default: return std::nullopt;
  }
}

absl::StatusOr<std::vector<EvalValue>> EvalUnary(const ir::Instruction& inst, Fn fn,
                                                 std::vector<EvalValue>& operands) {
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 1));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* x, fs::ArrayOperand(inst, operands, 0));
  EMBER_ASSIGN_OR_RETURN(ir::Shape shape, fs::ResultShape(inst, 0));
  if (shape.dims() != x->shape().dims()) {
    return fs::OpError(inst, "the result must have the operand's shape");
  }
  const ir::ElementType type = x->element_type();
  const bool predicate = fn == Fn::kIsInf || fn == Fn::kIsNegInf || fn == Fn::kIsPosInf;
  if (predicate ? shape.element_type() != ir::ElementType::kPred
                : shape.element_type() != type) {
    return fs::OpError(inst, "unexpected result element type");
  }
  if (ir::IsComplex(type) && !predicate) {
    EMBER_ASSIGN_OR_RETURN(std::vector<C> values, fs::LiteralTo<C>(*x));
    for (C& v : values) {
      std::optional<C> r = ComplexFn(fn, v);
      if (!r.has_value()) {
        return fs::OpError(inst, "element type ", TypeName(type), " is not supported");
      }
      v = *r;
    }
    EMBER_ASSIGN_OR_RETURN(ir::Literal out, fs::LiteralFrom<C>(shape, values));
    return ArrayResult(std::move(out));
  }
  if (!ir::IsFloat(type)) {
    return fs::OpError(inst, "element type ", TypeName(type), " is not supported (expects float)");
  }
  EMBER_ASSIGN_OR_RETURN(std::vector<double> values, fs::LiteralTo<double>(*x));
  for (double& v : values) v = RealFn(fn, v);
  EMBER_ASSIGN_OR_RETURN(ir::Literal out, fs::LiteralFrom<double>(shape, values));
  return ArrayResult(std::move(out));
}

// Operands and result of a binary op whose operands and result share one type.
struct SameTypeBinary {
  const ir::Literal* x;
  const ir::Literal* y;
  ir::Literal out;
};

absl::StatusOr<SameTypeBinary> SameTypeOperands(const ir::Instruction& inst,
                                                std::vector<EvalValue>& operands) {
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 2));
  SameTypeBinary b;
  EMBER_ASSIGN_OR_RETURN(b.x, fs::ArrayOperand(inst, operands, 0));
  EMBER_ASSIGN_OR_RETURN(b.y, fs::ArrayOperand(inst, operands, 1));
  if (b.x->shape() != b.y->shape()) return fs::OpError(inst, "operands must have the same type");
  EMBER_ASSIGN_OR_RETURN(b.out, fs::ZeroResult(inst, 0));
  if (b.out.shape() != b.x->shape()) {
    return fs::OpError(inst, "the result must have the operand type");
  }
  return b;
}

// The representable value after x in the direction of y, in x's own type.
template <typename T>
T NextAfter(T x, T y) {
  if constexpr (kIsNarrowFloat<T>) {
    const double a = FloatToDouble(x), b = FloatToDouble(y);
    if (std::isnan(a) || std::isnan(b)) return FloatFromDouble<T>(kNaN);
    if (a == b) return y;
    const typename T::Rep sign_bit = typename T::Rep(1) << (T::kFormat.total_bits() - 1);
    if (a == 0) return T::FromBits(static_cast<typename T::Rep>(1 | (b < 0 ? sign_bit : 0)));
    const bool away_from_zero = (a < b) == (a > 0);
    return T::FromBits(static_cast<typename T::Rep>(away_from_zero ? x.bits + 1 : x.bits - 1));
  } else {
    return std::nextafter(x, y);
  }
}

absl::StatusOr<std::vector<EvalValue>> EvalNextAfter(const ir::Instruction& inst,
                                                     std::vector<EvalValue>& operands) {
  EMBER_ASSIGN_OR_RETURN(SameTypeBinary b, SameTypeOperands(inst, operands));
  const ir::Literal* x = b.x;
  const ir::Literal* y = b.y;
  ir::Literal& out = b.out;
  absl::Status status = ir::VisitElementType(x->element_type(), [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || kIsNarrowFloat<T>) {
      EMBER_ASSIGN_OR_RETURN(absl::Span<const T> a, x->data<T>());
      EMBER_ASSIGN_OR_RETURN(absl::Span<const T> b, y->data<T>());
      EMBER_ASSIGN_OR_RETURN(absl::Span<T> r, out.mutable_data<T>());
      for (size_t i = 0; i < r.size(); ++i) r[i] = NextAfter(a[i], b[i]);
      return absl::OkStatus();
    } else {
      return fs::OpError(inst, "element type ", TypeName(x->element_type()),
                         " is not supported (expects float)");
    }
  });
  EMBER_RETURN_IF_ERROR(status);
  return ArrayResult(std::move(out));
}

// The high half of the double-width product of two integers of one type.
absl::StatusOr<std::vector<EvalValue>> EvalMulhi(const ir::Instruction& inst,
                                                 std::vector<EvalValue>& operands) {
  EMBER_ASSIGN_OR_RETURN(SameTypeBinary b, SameTypeOperands(inst, operands));
  const ir::Literal* x = b.x;
  const ir::Literal* y = b.y;
  ir::Literal& out = b.out;
  absl::Status status = ir::VisitElementType(x->element_type(), [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      EMBER_ASSIGN_OR_RETURN(absl::Span<const T> a, x->data<T>());
      EMBER_ASSIGN_OR_RETURN(absl::Span<const T> b, y->data<T>());
      EMBER_ASSIGN_OR_RETURN(absl::Span<T> r, out.mutable_data<T>());
      constexpr int kBits = 8 * sizeof(T);
      for (size_t i = 0; i < r.size(); ++i) {
        if constexpr (std::is_signed_v<T>) {
          const __int128 p = static_cast<__int128>(a[i]) * static_cast<__int128>(b[i]);
          r[i] = static_cast<T>(p >> kBits);
        } else {
          const unsigned __int128 p =
              static_cast<unsigned __int128>(a[i]) * static_cast<unsigned __int128>(b[i]);
          r[i] = static_cast<T>(p >> kBits);
        }
      }
      return absl::OkStatus();
    } else {
      return fs::OpError(inst, "element type ", TypeName(x->element_type()),
                         " is not supported (expects an integer of 8 to 64 bits)");
    }
  });
  EMBER_RETURN_IF_ERROR(status);
  return ArrayResult(std::move(out));
}

}  // namespace

bool IsEvaluatedChloOp(std::string_view name) {
  if (name.substr(0, 5) != "chlo.") return false;
  name.remove_prefix(5);
  return UnaryFn(name).has_value() || name == "next_after" || name == "mulhi" || name == "top_k";
}

absl::StatusOr<std::vector<EvalValue>> EvalChloOp(const ir::Instruction& inst,
                                                  std::string_view name,
                                                  std::vector<EvalValue>& operands) {
  std::string_view op = name.substr(5);
  if (std::optional<Fn> fn = UnaryFn(op)) return EvalUnary(inst, *fn, operands);
  if (op == "next_after") return EvalNextAfter(inst, operands);
  if (op == "mulhi") return EvalMulhi(inst, operands);
  return fs::OpUnimplemented(inst, std::string(name), " is not supported by the evaluator");
}

}  // namespace ember::eval
