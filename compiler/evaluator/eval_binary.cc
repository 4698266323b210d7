// Binary elementwise ops: add, subtract, multiply, divide, remainder, maximum, minimum, power,
// atan2, and, or, xor, the three shifts, and complex.
//
// Where the spec leaves integer edge cases open we follow XLA (what JAX users observe):
//   * x / 0 = -1 for signed types and all ones for unsigned; INT_MIN / -1 = INT_MIN;
//   * x % 0 = x; INT_MIN % -1 = 0;
//   * shifts: the amount is read as unsigned; amounts >= the bit width give 0 for shift_left
//     and shift_right_logical, and the sign fill for shift_right_arithmetic;
//   * power with a negative exponent: 1 and -1 raise exactly, every other base gives 0 (as the
//     reference interpreter does); overflow wraps.
// Floats are computed in double and rounded once to the result type; for + - * / this equals
// computing in the type itself (double has more than twice the bits of every narrower format).
#include <cstdint>
#include <type_traits>
#include <vector>

#include "base/status_macros.h"
#include "compiler/evaluator/eval_elementwise.h"
#include "compiler/evaluator/tree_scan.h"

namespace ember::eval {
namespace {

using ir::Opcode;
using C = std::complex<double>;

template <Opcode kOp, typename T>
constexpr bool Supports() {
  if constexpr (std::is_void_v<T>) {
    return false;
  } else if constexpr (kOp == Opcode::kAdd || kOp == Opcode::kMultiply || kOp == Opcode::kMaximum ||
                       kOp == Opcode::kMinimum) {
    return true;
  } else if constexpr (kOp == Opcode::kSubtract || kOp == Opcode::kDivide ||
                       kOp == Opcode::kPower) {
    return kIsInt<T> || kIsRealFloat<T> || kIsComplex<T>;
  } else if constexpr (kOp == Opcode::kRemainder) {
    return kIsInt<T> || kIsRealFloat<T>;  // complex remainder is TBD in the spec
  } else if constexpr (kOp == Opcode::kAtan2) {
    return kIsRealFloat<T> || kIsComplex<T>;
  } else if constexpr (kOp == Opcode::kAnd || kOp == Opcode::kOr || kOp == Opcode::kXor) {
    return kIsPred<T> || kIsInt<T>;
  } else {
    static_assert(kOp == Opcode::kShiftLeft || kOp == Opcode::kShiftRightLogical ||
                  kOp == Opcode::kShiftRightArithmetic);
    return kIsInt<T>;
  }
}

constexpr const char* Expects(Opcode op) {
  switch (op) {
    case Opcode::kSubtract:
    case Opcode::kDivide:
    case Opcode::kPower:
      return "integer, float or complex";
    case Opcode::kRemainder:
      return "integer or float";
    case Opcode::kAtan2:
      return "float or complex";
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      return "pred or integer";
    default:
      return "integer";
  }
}

template <typename T>
T IntPower(T base_value, T exponent_value) {
  uint64_t base = IntToU64(base_value);
  uint64_t exponent = IntToU64(exponent_value);
  if constexpr (kIsSignedInt<T>) {
    const int64_t e = IntToI64(exponent_value);
    if (e < 0) {
      const int64_t b = IntToI64(base_value);
      if (b != 1 && b != -1) return IntFromI64<T>(0);
      exponent = 0 - static_cast<uint64_t>(e);
    }
  }
  uint64_t result = 1;
  while (exponent != 0) {
    if (exponent & 1) result *= base;
    base *= base;
    exponent >>= 1;
  }
  return IntFromU64<T>(result);
}

template <Opcode kOp, typename T>
T ApplyInt(T a, T b) {
  constexpr int kWidth = BitWidthOf<T>();
  constexpr uint64_t kMask = kWidth == 64 ? ~uint64_t{0} : (uint64_t{1} << kWidth) - 1;
  const uint64_t x = IntToU64(a), y = IntToU64(b);
  if constexpr (kOp == Opcode::kAdd) {
    return IntFromU64<T>(x + y);
  } else if constexpr (kOp == Opcode::kSubtract) {
    return IntFromU64<T>(x - y);
  } else if constexpr (kOp == Opcode::kMultiply) {
    return IntFromU64<T>(x * y);
  } else if constexpr (kOp == Opcode::kDivide || kOp == Opcode::kRemainder) {
    constexpr bool kDivide = kOp == Opcode::kDivide;
    if constexpr (kIsSignedInt<T>) {
      const int64_t p = IntToI64(a), q = IntToI64(b);
      if (q == 0) return kDivide ? IntFromI64<T>(-1) : a;
      if (q == -1) return kDivide ? IntFromU64<T>(0 - x) : IntFromI64<T>(0);  // INT_MIN wraps
      return IntFromI64<T>(kDivide ? p / q : p % q);
    } else {
      if (y == 0) return kDivide ? IntFromU64<T>(~uint64_t{0}) : a;
      return IntFromU64<T>(kDivide ? x / y : x % y);
    }
  } else if constexpr (kOp == Opcode::kMaximum) {
    return MaxElement(a, b);
  } else if constexpr (kOp == Opcode::kMinimum) {
    return MinElement(a, b);
  } else if constexpr (kOp == Opcode::kPower) {
    return IntPower(a, b);
  } else if constexpr (kOp == Opcode::kAnd) {
    return IntFromU64<T>(x & y);
  } else if constexpr (kOp == Opcode::kOr) {
    return IntFromU64<T>(x | y);
  } else if constexpr (kOp == Opcode::kXor) {
    return IntFromU64<T>(x ^ y);
  } else {
    const uint64_t amount = y & kMask;  // the shift amount's bits, read as unsigned
    if constexpr (kOp == Opcode::kShiftLeft) {
      return amount >= static_cast<uint64_t>(kWidth) ? IntFromU64<T>(0)
                                                     : IntFromU64<T>(x << amount);
    } else if constexpr (kOp == Opcode::kShiftRightLogical) {
      return amount >= static_cast<uint64_t>(kWidth) ? IntFromU64<T>(0)
                                                     : IntFromU64<T>((x & kMask) >> amount);
    } else {
      static_assert(kOp == Opcode::kShiftRightArithmetic);
      // Sign-extend from the type's width (unsigned types shift their top bit in as well).
      uint64_t bits = x & kMask;
      if (kWidth < 64 && ((bits >> (kWidth - 1)) & 1)) bits |= ~kMask;
      const int64_t extended = static_cast<int64_t>(bits);
      return IntFromI64<T>(extended >> (amount >= 63 ? 63 : amount));
    }
  }
}

template <Opcode kOp, typename T>
T ApplyPred(T a, T b) {
  if constexpr (kOp == Opcode::kAdd || kOp == Opcode::kOr || kOp == Opcode::kMaximum) {
    return a || b;
  } else if constexpr (kOp == Opcode::kMultiply || kOp == Opcode::kAnd || kOp == Opcode::kMinimum) {
    return a && b;
  } else {
    static_assert(kOp == Opcode::kXor);
    return a != b;
  }
}

template <Opcode kOp>
double RealMath(double x, double y) {
  if constexpr (kOp == Opcode::kAdd)
    return x + y;
  else if constexpr (kOp == Opcode::kSubtract)
    return x - y;
  else if constexpr (kOp == Opcode::kMultiply)
    return x * y;
  else if constexpr (kOp == Opcode::kDivide)
    return x / y;
  else if constexpr (kOp == Opcode::kRemainder)
    return std::fmod(x, y);  // sign of the dividend
  else if constexpr (kOp == Opcode::kPower)
    return std::pow(x, y);
  else
    return std::atan2(x, y);
}

template <Opcode kOp>
C ComplexMath(C x, C y) {
  if constexpr (kOp == Opcode::kAdd)
    return x + y;
  else if constexpr (kOp == Opcode::kSubtract)
    return x - y;
  else if constexpr (kOp == Opcode::kMultiply)
    return x * y;
  else if constexpr (kOp == Opcode::kDivide)
    return x / y;
  else if constexpr (kOp == Opcode::kPower)
    return std::pow(x, y);
  else {
    // atan2(y, x) = -i log((x + i y) / sqrt(x^2 + y^2)), the reference interpreter's definition.
    static_assert(kOp == Opcode::kAtan2);
    const C i(0, 1);
    return -i * std::log((y + i * x) / std::sqrt(y * y + x * x));
  }
}

template <Opcode kOp, typename T>
T ApplyBinary(T a, T b) {
  if constexpr (kIsPred<T>) {
    return ApplyPred<kOp>(a, b);
  } else if constexpr (kIsInt<T>) {
    return ApplyInt<kOp>(a, b);
  } else if constexpr (kOp == Opcode::kMaximum) {
    return MaxElement(a, b);
  } else if constexpr (kOp == Opcode::kMinimum) {
    return MinElement(a, b);
  } else if constexpr (kIsRealFloat<T>) {
    return FloatFromDouble<T>(RealMath<kOp>(FloatToDouble(a), FloatToDouble(b)));
  } else {
    static_assert(kIsComplex<T>);
    using F = typename T::value_type;
    const C r = ComplexMath<kOp>(C(a.real(), a.imag()), C(b.real(), b.imag()));
    return T(static_cast<F>(r.real()), static_cast<F>(r.imag()));
  }
}

template <Opcode kOp>
absl::StatusOr<std::vector<EvalValue>> EvalBinary(const ir::Instruction& instruction,
                                                  std::vector<EvalValue>& operands, Evaluator&) {
  EMBER_RETURN_IF_ERROR(CheckOperandCount(instruction, operands, 2));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* lhs, ArrayOperand(instruction, operands, 0));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* rhs, ArrayOperand(instruction, operands, 1));
  EMBER_ASSIGN_OR_RETURN(ir::Literal result, NewResultArray(instruction));
  EMBER_RETURN_IF_ERROR(CheckDims(instruction, *lhs, result.shape().dims(), "lhs"));
  EMBER_RETURN_IF_ERROR(CheckDims(instruction, *rhs, result.shape().dims(), "rhs"));
  const ir::ElementType type = lhs->element_type();
  if (rhs->element_type() != type || result.element_type() != type) {
    return OpError(instruction, "element types differ: lhs ", TypeName(type), ", rhs ",
                   TypeName(rhs->element_type()), ", result ", TypeName(result.element_type()));
  }
  EMBER_RETURN_IF_ERROR(ir::VisitElementType(type, [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    if constexpr (!Supports<kOp, T>()) {
      return UnsupportedType(instruction, type, Expects(kOp));
    } else {
      absl::Span<const T> x = Elements<T>(*lhs);
      absl::Span<const T> y = Elements<T>(*rhs);
      absl::Span<T> out = MutableElements<T>(result);
      for (size_t i = 0; i < out.size(); ++i) out[i] = ApplyBinary<kOp, T>(x[i], y[i]);
      return absl::OkStatus();
    }
  }));
  return ArrayResult(std::move(result));
}

// complex(lhs, rhs): f32 pairs make c64, f64 pairs make c128.
absl::StatusOr<std::vector<EvalValue>> EvalComplex(const ir::Instruction& instruction,
                                                   std::vector<EvalValue>& operands, Evaluator&) {
  EMBER_RETURN_IF_ERROR(CheckOperandCount(instruction, operands, 2));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* lhs, ArrayOperand(instruction, operands, 0));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* rhs, ArrayOperand(instruction, operands, 1));
  EMBER_ASSIGN_OR_RETURN(ir::Literal result, NewResultArray(instruction));
  EMBER_RETURN_IF_ERROR(CheckDims(instruction, *lhs, result.shape().dims(), "lhs"));
  EMBER_RETURN_IF_ERROR(CheckDims(instruction, *rhs, result.shape().dims(), "rhs"));
  const ir::ElementType type = lhs->element_type();
  auto fill = [&](auto tag) -> absl::Status {
    using F = typename decltype(tag)::type;
    using T = std::complex<F>;
    if (rhs->element_type() != type || result.element_type() != ir::kElementTypeOf<T>) {
      return OpError(instruction, "expects two ", TypeName(type), " operands and a ",
                     TypeName(ir::kElementTypeOf<T>), " result");
    }
    absl::Span<const F> re = Elements<F>(*lhs);
    absl::Span<const F> im = Elements<F>(*rhs);
    absl::Span<T> out = MutableElements<T>(result);
    for (size_t i = 0; i < out.size(); ++i) out[i] = T(re[i], im[i]);
    return absl::OkStatus();
  };
  if (type == ir::ElementType::kF32) {
    EMBER_RETURN_IF_ERROR(fill(std::type_identity<float>{}));
  } else if (type == ir::ElementType::kF64) {
    EMBER_RETURN_IF_ERROR(fill(std::type_identity<double>{}));
  } else {
    return UnsupportedType(instruction, type, "f32 or f64");
  }
  return ArrayResult(std::move(result));
}

template <Opcode kOp>
bool FoldWith(bool accumulator_first, const ir::Literal& input, absl::Span<const int64_t> targets,
              ir::Literal& acc) {
  if (acc.element_type() != input.element_type() ||
      targets.size() != static_cast<size_t>(input.shape().element_count())) {
    return false;
  }
  return ir::VisitElementType(input.element_type(), [&](auto tag) -> bool {
    using T = typename decltype(tag)::type;
    if constexpr (!Supports<kOp, T>()) {
      return false;
    } else {
      absl::Span<const T> in = Elements<T>(input);
      absl::Span<T> out = MutableElements<T>(acc);
      for (size_t i = 0; i < in.size(); ++i) {
        T& a = out[targets[i]];
        a = accumulator_first ? ApplyBinary<kOp, T>(a, in[i]) : ApplyBinary<kOp, T>(in[i], a);
      }
      return true;
    }
  });
}


template <Opcode kOp>
bool FoldAtWith(bool accumulator_first, const ir::Literal& input, absl::Span<const int64_t> sources,
                const ir::Literal& fill, absl::Span<const int64_t> targets, ir::Literal& acc) {
  if (acc.element_type() != input.element_type() || fill.element_type() != input.element_type() ||
      fill.shape().element_count() != 1 || targets.size() != sources.size()) {
    return false;
  }
  return ir::VisitElementType(input.element_type(), [&](auto tag) -> bool {
    using T = typename decltype(tag)::type;
    if constexpr (!Supports<kOp, T>()) {
      return false;
    } else {
      absl::Span<const T> in = Elements<T>(input);
      const T pad = Elements<T>(fill)[0];
      absl::Span<T> out = MutableElements<T>(acc);
      for (size_t k = 0; k < sources.size(); ++k) {
        const T v = sources[k] >= 0 ? in[sources[k]] : pad;
        T& a = out[targets[k]];
        a = accumulator_first ? ApplyBinary<kOp, T>(a, v) : ApplyBinary<kOp, T>(v, a);
      }
      return true;
    }
  });
}

template <Opcode kOp>
bool ScanWith(bool accumulator_first, const ir::Literal& input, int64_t outer, int64_t n,
              int64_t inner, bool reverse, ir::Literal& out) {
  if (out.element_type() != input.element_type() ||
      input.shape().element_count() != outer * n * inner ||
      out.shape().element_count() != outer * n * inner) {
    return false;
  }
  return ir::VisitElementType(input.element_type(), [&](auto tag) -> bool {
    using T = typename decltype(tag)::type;
    if constexpr (!Supports<kOp, T>()) {
      return false;
    } else {
      absl::Span<const T> in = Elements<T>(input);
      absl::Span<T> res = MutableElements<T>(out);
      // Lines are held as S: std::vector<bool> has no references to elements.
      using S = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;
      auto combine = [accumulator_first](const S& a, const S& b, S& o) {
        const T x = static_cast<T>(a), y = static_cast<T>(b);
        o = static_cast<S>(accumulator_first ? ApplyBinary<kOp, T>(x, y) : ApplyBinary<kOp, T>(y, x));
        return absl::OkStatus();
      };
      std::vector<S> line(n), scanned;
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t j = 0; j < inner; ++j) {
          const int64_t base = o * n * inner + j;
          const S init = static_cast<S>(res[base]);  // the caller filled the result with init
          for (int64_t i = 0; i < n; ++i) line[i] = static_cast<S>(in[base + i * inner]);
          if (!TreeScan(line, init, TreeScanOrder{.reverse = reverse}, combine, scanned).ok()) {
            return false;
          }
          for (int64_t i = 0; i < n; ++i) res[base + i * inner] = static_cast<T>(scanned[i]);
        }
      }
      return true;
    }
  });
}

}  // namespace

std::optional<SimpleBinaryRegion> MatchSimpleBinaryRegion(const ir::Computation& region,
                                                          ir::ElementType type) {
  auto scalar = [type](const ir::ValueType& t) {
    return t.is_tensor() && t.dims().empty() && t.element_type() == type;
  };
  if (region.parameters().size() != 2 || region.instructions().size() != 2) return std::nullopt;
  const ir::Instruction& op = *region.instructions()[0];
  const ir::Instruction& ret = *region.instructions()[1];
  if (ret.opcode() != Opcode::kReturn || ret.operands().size() != 1 || op.num_results() != 1 ||
      ret.operand(0) != op.result(0) || op.operands().size() != 2 || !op.attributes().empty() ||
      !op.regions().empty()) {
    return std::nullopt;
  }
  switch (op.opcode()) {
    case Opcode::kAdd:
    case Opcode::kMultiply:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      break;
    default:
      return std::nullopt;
  }
  const ir::Value* p0 = region.parameter(0);
  const ir::Value* p1 = region.parameter(1);
  if (!scalar(p0->type()) || !scalar(p1->type()) || !scalar(op.result(0)->type())) {
    return std::nullopt;
  }
  if (op.operand(0) == p0 && op.operand(1) == p1) return SimpleBinaryRegion{op.opcode(), true};
  if (op.operand(0) == p1 && op.operand(1) == p0) return SimpleBinaryRegion{op.opcode(), false};
  return std::nullopt;
}

bool FoldElements(const SimpleBinaryRegion& region, const ir::Literal& input,
                  absl::Span<const int64_t> targets, ir::Literal& acc) {
  const bool first = region.accumulator_first;
  switch (region.opcode) {
    case Opcode::kAdd:
      return FoldWith<Opcode::kAdd>(first, input, targets, acc);
    case Opcode::kMultiply:
      return FoldWith<Opcode::kMultiply>(first, input, targets, acc);
    case Opcode::kMaximum:
      return FoldWith<Opcode::kMaximum>(first, input, targets, acc);
    case Opcode::kMinimum:
      return FoldWith<Opcode::kMinimum>(first, input, targets, acc);
    case Opcode::kAnd:
      return FoldWith<Opcode::kAnd>(first, input, targets, acc);
    case Opcode::kOr:
      return FoldWith<Opcode::kOr>(first, input, targets, acc);
    case Opcode::kXor:
      return FoldWith<Opcode::kXor>(first, input, targets, acc);
    default:
      return false;
  }
}

bool FoldElementsAt(const SimpleBinaryRegion& region, const ir::Literal& input,
                    absl::Span<const int64_t> sources, const ir::Literal& fill,
                    absl::Span<const int64_t> targets, ir::Literal& acc) {
  const bool first = region.accumulator_first;
  switch (region.opcode) {
    case Opcode::kAdd: return FoldAtWith<Opcode::kAdd>(first, input, sources, fill, targets, acc);
    case Opcode::kMultiply:
      return FoldAtWith<Opcode::kMultiply>(first, input, sources, fill, targets, acc);
    case Opcode::kMaximum:
      return FoldAtWith<Opcode::kMaximum>(first, input, sources, fill, targets, acc);
    case Opcode::kMinimum:
      return FoldAtWith<Opcode::kMinimum>(first, input, sources, fill, targets, acc);
    case Opcode::kAnd: return FoldAtWith<Opcode::kAnd>(first, input, sources, fill, targets, acc);
    case Opcode::kOr: return FoldAtWith<Opcode::kOr>(first, input, sources, fill, targets, acc);
    case Opcode::kXor: return FoldAtWith<Opcode::kXor>(first, input, sources, fill, targets, acc);
    default: return false;
  }
}

bool ScanElements(const SimpleBinaryRegion& region, const ir::Literal& input, int64_t outer,
                  int64_t n, int64_t inner, bool reverse, ir::Literal& out) {
  const bool first = region.accumulator_first;
  switch (region.opcode) {
    case Opcode::kAdd: return ScanWith<Opcode::kAdd>(first, input, outer, n, inner, reverse, out);
    case Opcode::kMultiply:
      return ScanWith<Opcode::kMultiply>(first, input, outer, n, inner, reverse, out);
    case Opcode::kMaximum:
      return ScanWith<Opcode::kMaximum>(first, input, outer, n, inner, reverse, out);
    case Opcode::kMinimum:
      return ScanWith<Opcode::kMinimum>(first, input, outer, n, inner, reverse, out);
    case Opcode::kAnd: return ScanWith<Opcode::kAnd>(first, input, outer, n, inner, reverse, out);
    case Opcode::kOr: return ScanWith<Opcode::kOr>(first, input, outer, n, inner, reverse, out);
    case Opcode::kXor: return ScanWith<Opcode::kXor>(first, input, outer, n, inner, reverse, out);
    default: return false;
  }
}

void RegisterBinaryOps(OpTable& table) {
  table.Register(Opcode::kAdd, EvalBinary<Opcode::kAdd>);
  table.Register(Opcode::kSubtract, EvalBinary<Opcode::kSubtract>);
  table.Register(Opcode::kMultiply, EvalBinary<Opcode::kMultiply>);
  table.Register(Opcode::kDivide, EvalBinary<Opcode::kDivide>);
  table.Register(Opcode::kRemainder, EvalBinary<Opcode::kRemainder>);
  table.Register(Opcode::kMaximum, EvalBinary<Opcode::kMaximum>);
  table.Register(Opcode::kMinimum, EvalBinary<Opcode::kMinimum>);
  table.Register(Opcode::kPower, EvalBinary<Opcode::kPower>);
  table.Register(Opcode::kAtan2, EvalBinary<Opcode::kAtan2>);
  table.Register(Opcode::kAnd, EvalBinary<Opcode::kAnd>);
  table.Register(Opcode::kOr, EvalBinary<Opcode::kOr>);
  table.Register(Opcode::kXor, EvalBinary<Opcode::kXor>);
  table.Register(Opcode::kShiftLeft, EvalBinary<Opcode::kShiftLeft>);
  table.Register(Opcode::kShiftRightLogical, EvalBinary<Opcode::kShiftRightLogical>);
  table.Register(Opcode::kShiftRightArithmetic, EvalBinary<Opcode::kShiftRightArithmetic>);
  table.Register(Opcode::kComplex, EvalComplex);
}

}  // namespace ember::eval
