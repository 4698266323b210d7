#include "compiler/evaluator/compare_semantics.h"

#include <string>

#include "base/status_macros.h"

namespace ember::eval {

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

}  // namespace ember::eval
