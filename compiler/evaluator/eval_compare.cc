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
#include "compiler/evaluator/compare_semantics.h"
#include "compiler/evaluator/eval_elementwise.h"

namespace ember::eval {
namespace {

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
