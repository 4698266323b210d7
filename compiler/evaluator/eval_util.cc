#include "compiler/evaluator/eval_util.h"

#include <bit>

#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace ember::eval {

absl::Status AnnotateError(const ir::Instruction& instruction, const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat(instruction.Describe(), ": ", std::string(status.message())));
}

std::string TypeName(ir::ElementType type) { return std::string(ir::ElementTypeName(type)); }

std::string DescribeArray(const ir::Literal& literal) {
  return ir::ValueType::Tensor(literal.shape()).ToString();
}

namespace {

absl::StatusOr<const ir::Attribute*> FindAttr(const ir::Instruction& instruction,
                                              std::string_view name) {
  const ir::Attribute* a = instruction.attribute(name);
  if (a == nullptr) return OpError(instruction, "missing attribute `", std::string(name), "`");
  return a;
}

absl::Status WrongKind(const ir::Instruction& instruction, std::string_view name,
                       const ir::Attribute& a, const char* expected) {
  return OpError(instruction, "attribute `", std::string(name), "` should be ", expected,
                 " but is ", a.ToString());
}

}  // namespace

absl::StatusOr<int64_t> IntAttr(const ir::Instruction& instruction, std::string_view name) {
  EMBER_ASSIGN_OR_RETURN(const ir::Attribute* a, FindAttr(instruction, name));
  if (a->kind == ir::Attribute::Kind::kInt) return a->i;
  if (a->kind == ir::Attribute::Kind::kLiteral && a->literal != nullptr &&
      a->literal->shape().element_count() == 1) {
    absl::StatusOr<int64_t> v = IntegerElement(*a->literal, 0);
    if (v.ok()) return v;
  }
  return WrongKind(instruction, name, *a, "an integer");
}

absl::StatusOr<int64_t> IntAttrOr(const ir::Instruction& instruction, std::string_view name,
                                  int64_t default_value) {
  if (instruction.attribute(name) == nullptr) return default_value;
  return IntAttr(instruction, name);
}

absl::StatusOr<std::vector<int64_t>> IntsAttr(const ir::Instruction& instruction,
                                              std::string_view name) {
  EMBER_ASSIGN_OR_RETURN(const ir::Attribute* a, FindAttr(instruction, name));
  if (a->kind == ir::Attribute::Kind::kInts) return a->ints;
  if (a->kind == ir::Attribute::Kind::kLiteral && a->literal != nullptr &&
      a->literal->shape().rank() <= 1) {
    std::vector<int64_t> values;
    for (int64_t i = 0; i < a->literal->shape().element_count(); ++i) {
      absl::StatusOr<int64_t> v = IntegerElement(*a->literal, i);
      if (!v.ok()) return WrongKind(instruction, name, *a, "a list of integers");
      values.push_back(*v);
    }
    return values;
  }
  return WrongKind(instruction, name, *a, "a list of integers");
}

absl::StatusOr<std::vector<int64_t>> IntsAttrOr(const ir::Instruction& instruction,
                                                std::string_view name,
                                                std::vector<int64_t> default_value) {
  if (instruction.attribute(name) == nullptr) return default_value;
  return IntsAttr(instruction, name);
}

absl::StatusOr<bool> BoolAttrOr(const ir::Instruction& instruction, std::string_view name,
                                bool default_value) {
  const ir::Attribute* a = instruction.attribute(name);
  if (a == nullptr) return default_value;
  if (a->kind == ir::Attribute::Kind::kBool) return a->b;
  if (a->kind == ir::Attribute::Kind::kInt) return a->i != 0;
  return WrongKind(instruction, name, *a, "a boolean");
}

absl::StatusOr<std::string> StringAttr(const ir::Instruction& instruction, std::string_view name) {
  EMBER_ASSIGN_OR_RETURN(const ir::Attribute* a, FindAttr(instruction, name));
  if (a->kind == ir::Attribute::Kind::kString) return a->s;
  return WrongKind(instruction, name, *a, "a string");
}

absl::StatusOr<const ir::Literal*> LiteralAttr(const ir::Instruction& instruction,
                                               std::string_view name) {
  EMBER_ASSIGN_OR_RETURN(const ir::Attribute* a, FindAttr(instruction, name));
  if (a->kind == ir::Attribute::Kind::kLiteral && a->literal != nullptr) return a->literal.get();
  return WrongKind(instruction, name, *a, "a dense literal");
}

absl::Status CheckOperandCount(const ir::Instruction& instruction,
                               const std::vector<EvalValue>& operands, size_t expected) {
  if (operands.size() != expected) {
    return OpError(instruction, "expects ", expected, " operands but has ", operands.size());
  }
  return absl::OkStatus();
}

absl::StatusOr<const ir::Literal*> ArrayOperand(const ir::Instruction& instruction,
                                                const std::vector<EvalValue>& operands, size_t i) {
  if (i >= operands.size()) {
    return OpError(instruction, "operand #", i, " is missing (", operands.size(),
                   " operands given)");
  }
  if (operands[i].kind != EvalValue::Kind::kArray) {
    return OpError(instruction, "operand #", i, " should be a tensor but is a ",
                   operands[i].kind == EvalValue::Kind::kToken ? "token" : "tuple");
  }
  return &operands[i].array;
}

absl::StatusOr<ir::Literal*> MutableArrayOperand(const ir::Instruction& instruction,
                                                 std::vector<EvalValue>& operands, size_t i) {
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* l, ArrayOperand(instruction, operands, i));
  (void)l;
  return &operands[i].array;
}

absl::StatusOr<ir::Literal> NewArray(ir::ElementType type, absl::Span<const int64_t> dims) {
  EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ir::Shape::Make(type, dims));
  return ir::Literal::Create(shape);
}

absl::StatusOr<ir::Literal> NewResultArray(const ir::Instruction& instruction, size_t i) {
  if (i >= instruction.num_results()) {
    return OpError(instruction, "has no result #", i);
  }
  const ir::ValueType& type = instruction.result(i)->type();
  if (!type.is_tensor()) {
    return OpError(instruction, "result #", i, " should be a tensor but is ", type.ToString());
  }
  // Declared shapes are normally row-major already: then no new Shape needs building.
  absl::StatusOr<ir::Literal> result = type.shape().layout().IsRowMajor()
                                           ? ir::Literal::Create(type.shape())
                                           : NewArray(type.element_type(), type.dims());
  if (!result.ok()) return AnnotateError(instruction, result.status());
  return result;
}

std::vector<EvalValue> ArrayResult(ir::Literal literal) {
  std::vector<EvalValue> results;
  results.push_back(EvalValue::Array(std::move(literal)));
  return results;
}

absl::StatusOr<int64_t> IntegerElement(const ir::Literal& literal, int64_t linear) {
  if (linear < 0 || linear >= literal.shape().element_count()) {
    return absl::OutOfRangeError(
        absl::StrCat("element ", linear, " of ", DescribeArray(literal), " is out of range"));
  }
  return ir::VisitElementType(literal.element_type(), [&](auto tag) -> absl::StatusOr<int64_t> {
    using T = typename decltype(tag)::type;
    if constexpr (kIsPred<T>) {
      return Elements<T>(literal)[linear] ? 1 : 0;
    } else if constexpr (kIsInt<T>) {
      return IntToI64(Elements<T>(literal)[linear]);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("expected an integer array but got ", DescribeArray(literal)));
    }
  });
}

absl::StatusOr<ir::Literal> ScalarFromElement(const ir::Literal& source, int64_t linear) {
  EMBER_ASSIGN_OR_RETURN(ir::Literal scalar,
                         ir::Literal::Create(ir::Shape::Scalar(source.element_type())));
  CopyElements(source, linear, scalar, 0);
  return scalar;
}

std::vector<int64_t> RowMajorStrides(absl::Span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * dims[d + 1];
  }
  return strides;
}

absl::StatusOr<std::vector<int64_t>> BroadcastStrides(
    absl::Span<const int64_t> operand_dims, absl::Span<const int64_t> result_dims,
    absl::Span<const int64_t> broadcast_dimensions) {
  if (broadcast_dimensions.size() != operand_dims.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "broadcast_dimensions [", absl::StrJoin(broadcast_dimensions, ","), "] has ",
        broadcast_dimensions.size(), " entries for an operand of rank ", operand_dims.size()));
  }
  const std::vector<int64_t> operand_strides = RowMajorStrides(operand_dims);
  std::vector<int64_t> strides(result_dims.size(), 0);
  std::vector<bool> used(result_dims.size(), false);
  for (size_t i = 0; i < operand_dims.size(); ++i) {
    const int64_t d = broadcast_dimensions[i];
    if (d < 0 || d >= static_cast<int64_t>(result_dims.size()) || used[d]) {
      return absl::InvalidArgumentError(
          absl::StrCat("broadcast_dimensions [", absl::StrJoin(broadcast_dimensions, ","),
                       "] is not a list of distinct result dimensions of a rank-",
                       result_dims.size(), " result"));
    }
    used[d] = true;
    if (operand_dims[i] == 1) continue;
    if (operand_dims[i] != result_dims[d]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "operand dimension ", i, " (size ", operand_dims[i],
          ") cannot broadcast to result dimension ", d, " (size ", result_dims[d], ")"));
    }
    strides[d] = operand_strides[i];
  }
  return strides;
}

absl::StatusOr<std::vector<int64_t>> BroadcastSourceIndices(
    absl::Span<const int64_t> operand_dims, absl::Span<const int64_t> result_dims,
    absl::Span<const int64_t> broadcast_dimensions) {
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                         BroadcastStrides(operand_dims, result_dims, broadcast_dimensions));
  std::vector<int64_t> sources;
  EMBER_ASSIGN_OR_RETURN(int64_t count, ir::CheckedElementCount(result_dims));
  sources.reserve(static_cast<size_t>(count));
  ForEachIndex(result_dims, [&](absl::Span<const int64_t> index, int64_t) {
    sources.push_back(Linearize(strides, index));
  });
  return sources;
}

double IntegerToDoubleRoundToOdd(uint64_t magnitude, bool negative) {
  double result;
  if (magnitude < (uint64_t{1} << 53)) {
    result = static_cast<double>(magnitude);
  } else {
    const int shift = 64 - std::countl_zero(magnitude) - 53;
    uint64_t kept = magnitude >> shift;
    if ((magnitude & ((uint64_t{1} << shift) - 1)) != 0) kept |= 1;  // sticky: round to odd
    result = std::ldexp(static_cast<double>(kept), shift);
  }
  return negative ? -result : result;
}

}  // namespace ember::eval
