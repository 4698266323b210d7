// compare, select and clamp.
//
// compare: `comparison_direction` is "EQ" | "NE" | "GE" | "GT" | "LE" | "LT"; `compare_type`
// is "SIGNED" | "UNSIGNED" | "FLOAT" | "TOTALORDER" and may be absent (then it follows the
// element type, as the spec's constraint C3 fixes it). FLOAT compares as IEEE-754 quiet
// predicates (NaN is unordered: only NE holds). TOTALORDER orders by IEEE totalOrder,
// -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN, for every direction (EQ means identical
// encodings, so -0 != +0 and a NaN equals itself), as XLA does; for the formats without -0 or
// inf the same sign-magnitude order of the encodings is used. SIGNED / UNSIGNED given for an
// integer type read its bits that way. Complex numbers compare lexicographically on
// (real, imag) with FLOAT semantics.
#include "base/status_macros.h"
#include "compiler/evaluator/eval_elementwise.h"

namespace ember::eval {
namespace {

enum class Direction { kEq, kNe, kGe, kGt, kLe, kLt };
enum class CompareType { kSigned, kUnsigned, kFloat, kTotalOrder };

absl::StatusOr<Direction> ParseDirection(const ir::Instruction& instruction) {
  EMBER_ASSIGN_OR_RETURN(std::string s, StringAttr(instruction, "comparison_direction"));
  if (s == "EQ") return Direction::kEq;
  if (s == "NE") return Direction::kNe;
  if (s == "GE") return Direction::kGe;
  if (s == "GT") return Direction::kGt;
  if (s == "LE") return Direction::kLe;
  if (s == "LT") return Direction::kLt;
  return OpError(instruction, "unknown comparison_direction \"", s, "\"");
}

absl::StatusOr<CompareType> ParseCompareType(const ir::Instruction& instruction,
                                             ir::ElementType type) {
  CompareType natural = CompareType::kFloat;
  if (ir::IsSignedInteger(type)) natural = CompareType::kSigned;
  if (ir::IsUnsignedInteger(type) || type == ir::ElementType::kPred) {
    natural = CompareType::kUnsigned;
  }
  if (instruction.attribute("compare_type") == nullptr) return natural;
  EMBER_ASSIGN_OR_RETURN(std::string s, StringAttr(instruction, "compare_type"));
  CompareType given;
  if (s == "SIGNED")
    given = CompareType::kSigned;
  else if (s == "UNSIGNED")
    given = CompareType::kUnsigned;
  else if (s == "FLOAT")
    given = CompareType::kFloat;
  else if (s == "TOTALORDER")
    given = CompareType::kTotalOrder;
  else if (s == "NOTYPE")
    return natural;
  else
    return OpError(instruction, "unknown compare_type \"", s, "\"");
  const bool integer = ir::IsInteger(type) || type == ir::ElementType::kPred;
  const bool integer_type = given == CompareType::kSigned || given == CompareType::kUnsigned;
  const bool ok =
      integer ? integer_type : (ir::IsFloat(type) ? !integer_type : given == CompareType::kFloat);
  if (!ok) {
    return OpError(instruction, "compare_type ", s, " does not apply to ", TypeName(type));
  }
  return given;
}

template <typename K>
bool Holds(Direction d, K a, K b) {
  switch (d) {
    case Direction::kEq:
      return a == b;
    case Direction::kNe:
      return a != b;
    case Direction::kGe:
      return a >= b;
    case Direction::kGt:
      return a > b;
    case Direction::kLe:
      return a <= b;
    case Direction::kLt:
      return a < b;
  }
  return false;
}

// A signed integer whose order is IEEE totalOrder on the encoding (sign-magnitude bits mapped to
// two's complement). f8E8M0FNU has no sign bit: its encodings are already ordered.
template <typename T>
int64_t TotalOrderKey(T x) {
  constexpr int kBits = BitWidthOf<T>();
  const uint64_t bits = FloatBits(x);
  if constexpr (std::is_same_v<T, ir::F8E8M0FNU>) {
    return static_cast<int64_t>(bits);
  } else {
    const uint64_t sign = uint64_t{1} << (kBits - 1);
    const int64_t magnitude = static_cast<int64_t>(bits & (sign - 1));
    return (bits & sign) ? -magnitude - 1 : magnitude;  // -0 sorts just below +0
  }
}

template <typename T>
bool CompareElements(Direction d, CompareType type, T a, T b) {
  if constexpr (kIsPred<T>) {
    return Holds(d, static_cast<int>(a), static_cast<int>(b));
  } else if constexpr (kIsInt<T>) {
    if (type == CompareType::kSigned) {
      constexpr int kWidth = BitWidthOf<T>();
      auto sext = [](uint64_t v) {
        if (kWidth < 64 && ((v >> (kWidth - 1)) & 1)) v |= ~((uint64_t{1} << kWidth) - 1);
        return static_cast<int64_t>(v);
      };
      return Holds(d, sext(IntToU64(a)), sext(IntToU64(b)));
    }
    constexpr int kWidth = BitWidthOf<T>();
    constexpr uint64_t kMask = kWidth == 64 ? ~uint64_t{0} : (uint64_t{1} << kWidth) - 1;
    return Holds(d, IntToU64(a) & kMask, IntToU64(b) & kMask);
  } else if constexpr (kIsRealFloat<T>) {
    if (type == CompareType::kTotalOrder) return Holds(d, TotalOrderKey(a), TotalOrderKey(b));
    return Holds(d, FloatToDouble(a), FloatToDouble(b));  // IEEE: NaN only satisfies NE
  } else {
    static_assert(kIsComplex<T>);
    const bool eq = a.real() == b.real() && a.imag() == b.imag();
    auto less = [](T x, T y) {
      return x.real() < y.real() || (x.real() == y.real() && x.imag() < y.imag());
    };
    switch (d) {
      case Direction::kEq:
        return eq;
      case Direction::kNe:
        return !eq;
      case Direction::kLt:
        return less(a, b);
      case Direction::kLe:
        return less(a, b) || eq;
      case Direction::kGt:
        return less(b, a);
      case Direction::kGe:
        return less(b, a) || eq;
    }
    return false;
  }
}

absl::StatusOr<std::vector<EvalValue>> EvalCompare(const ir::Instruction& instruction,
                                                   std::vector<EvalValue>& operands, Evaluator&) {
  EMBER_RETURN_IF_ERROR(CheckOperandCount(instruction, operands, 2));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* lhs, ArrayOperand(instruction, operands, 0));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* rhs, ArrayOperand(instruction, operands, 1));
  EMBER_ASSIGN_OR_RETURN(ir::Literal result, NewResultArray(instruction));
  EMBER_RETURN_IF_ERROR(CheckDims(instruction, *lhs, result.shape().dims(), "lhs"));
  EMBER_RETURN_IF_ERROR(CheckDims(instruction, *rhs, result.shape().dims(), "rhs"));
  const ir::ElementType type = lhs->element_type();
  if (rhs->element_type() != type || result.element_type() != ir::ElementType::kPred) {
    return OpError(instruction, "expects lhs and rhs of one element type and a pred result, got ",
                   TypeName(type), ", ", TypeName(rhs->element_type()), " -> ",
                   TypeName(result.element_type()));
  }
  EMBER_ASSIGN_OR_RETURN(Direction direction, ParseDirection(instruction));
  EMBER_ASSIGN_OR_RETURN(CompareType compare_type, ParseCompareType(instruction, type));
  EMBER_RETURN_IF_ERROR(ir::VisitElementType(type, [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_void_v<T>) {
      return UnsupportedType(instruction, type, "an array element type");
    } else {
      absl::Span<const T> x = Elements<T>(*lhs);
      absl::Span<const T> y = Elements<T>(*rhs);
      absl::Span<bool> out = MutableElements<bool>(result);
      for (size_t i = 0; i < out.size(); ++i) {
        out[i] = CompareElements(direction, compare_type, x[i], y[i]);
      }
      return absl::OkStatus();
    }
  }));
  return ArrayResult(std::move(result));
}

// select(pred, on_true, on_false): pred is a scalar or has the result's shape.
absl::StatusOr<std::vector<EvalValue>> EvalSelect(const ir::Instruction& instruction,
                                                  std::vector<EvalValue>& operands, Evaluator&) {
  EMBER_RETURN_IF_ERROR(CheckOperandCount(instruction, operands, 3));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* pred, ArrayOperand(instruction, operands, 0));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* on_true, ArrayOperand(instruction, operands, 1));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* on_false, ArrayOperand(instruction, operands, 2));
  EMBER_ASSIGN_OR_RETURN(ir::Literal result, NewResultArray(instruction));
  const std::vector<int64_t>& dims = result.shape().dims();
  if (pred->element_type() != ir::ElementType::kPred) {
    return OpError(instruction, "pred is ", DescribeArray(*pred), ", expected pred elements");
  }
  if (pred->shape().rank() != 0) EMBER_RETURN_IF_ERROR(CheckDims(instruction, *pred, dims, "pred"));
  EMBER_RETURN_IF_ERROR(CheckDims(instruction, *on_true, dims, "on_true"));
  EMBER_RETURN_IF_ERROR(CheckDims(instruction, *on_false, dims, "on_false"));
  if (on_true->element_type() != result.element_type() ||
      on_false->element_type() != result.element_type()) {
    return OpError(instruction, "on_true, on_false and result element types differ");
  }
  absl::Span<const bool> p = Elements<bool>(*pred);
  const int64_t n = result.shape().element_count();
  for (int64_t i = 0; i < n; ++i) {
    const bool take_true = p[pred->shape().rank() == 0 ? 0 : static_cast<size_t>(i)];
    CopyElements(take_true ? *on_true : *on_false, i, result, i);
  }
  return ArrayResult(std::move(result));
}

// clamp(min, operand, max) = minimum(maximum(operand, min), max); min and max are scalars or
// have the operand's shape.
absl::StatusOr<std::vector<EvalValue>> EvalClamp(const ir::Instruction& instruction,
                                                 std::vector<EvalValue>& operands, Evaluator&) {
  EMBER_RETURN_IF_ERROR(CheckOperandCount(instruction, operands, 3));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* lo, ArrayOperand(instruction, operands, 0));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* operand, ArrayOperand(instruction, operands, 1));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* hi, ArrayOperand(instruction, operands, 2));
  EMBER_ASSIGN_OR_RETURN(ir::Literal result, NewResultArray(instruction));
  const std::vector<int64_t>& dims = result.shape().dims();
  EMBER_RETURN_IF_ERROR(CheckDims(instruction, *operand, dims, "the operand"));
  if (lo->shape().rank() != 0) EMBER_RETURN_IF_ERROR(CheckDims(instruction, *lo, dims, "min"));
  if (hi->shape().rank() != 0) EMBER_RETURN_IF_ERROR(CheckDims(instruction, *hi, dims, "max"));
  const ir::ElementType type = operand->element_type();
  if (lo->element_type() != type || hi->element_type() != type || result.element_type() != type) {
    return OpError(instruction, "min, operand, max and result element types differ");
  }
  EMBER_RETURN_IF_ERROR(ir::VisitElementType(type, [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_void_v<T>) {
      return UnsupportedType(instruction, type, "an array element type");
    } else {
      absl::Span<const T> x = Elements<T>(*operand);
      absl::Span<const T> l = Elements<T>(*lo);
      absl::Span<const T> h = Elements<T>(*hi);
      const bool lo_scalar = lo->shape().rank() == 0, hi_scalar = hi->shape().rank() == 0;
      absl::Span<T> out = MutableElements<T>(result);
      for (size_t i = 0; i < out.size(); ++i) {
        out[i] = MinElement(MaxElement(x[i], l[lo_scalar ? 0 : i]), h[hi_scalar ? 0 : i]);
      }
      return absl::OkStatus();
    }
  }));
  return ArrayResult(std::move(result));
}

}  // namespace

void RegisterCompareOps(OpTable& table) {
  table.Register(ir::Opcode::kCompare, EvalCompare);
  table.Register(ir::Opcode::kSelect, EvalSelect);
  table.Register(ir::Opcode::kClamp, EvalClamp);
}

}  // namespace ember::eval
