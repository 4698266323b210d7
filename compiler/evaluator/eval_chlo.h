// Internal to compiler/evaluator: the CHLO ops the importer keeps as custom calls "chlo.<op>"
// (eval_chlo.cc), dispatched from the custom_call family (eval_custom_call.cc).
#ifndef EMBER_COMPILER_EVALUATOR_EVAL_CHLO_H_
#define EMBER_COMPILER_EVALUATOR_EVAL_CHLO_H_

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/evaluator/eval_value.h"
#include "compiler/ir/module.h"

namespace ember::eval {

// Whether `name` ("chlo.erf", ...) is a CHLO op the evaluator computes.
bool IsEvaluatedChloOp(std::string_view name);

// Elementwise CHLO ops (special functions, inverse/hyperbolic trigonometry, next_after, mulhi);
// chlo.top_k shares the custom-call family's top_k.
absl::StatusOr<std::vector<EvalValue>> EvalChloOp(const ir::Instruction& inst,
                                                  std::string_view name,
                                                  std::vector<EvalValue>& operands);

// chlo.ragged_dot (operands lhs, rhs, group_sizes; dimension numbers as Ints attributes, see the
// importer) and chlo.scan (operands inputs then inits; body region), in
// eval_chlo_structured.cc.
absl::StatusOr<std::vector<EvalValue>> EvalRaggedDot(const ir::Instruction& inst,
                                                     std::vector<EvalValue>& operands);
class Evaluator;
absl::StatusOr<std::vector<EvalValue>> EvalScan(const ir::Instruction& inst,
                                                std::vector<EvalValue>& operands,
                                                Evaluator& evaluator);

}  // namespace ember::eval

#endif  // EMBER_COMPILER_EVALUATOR_EVAL_CHLO_H_
