// Internal to compiler/evaluator: the linear-algebra custom calls Ember's JAX lowerings emit
// (ember_eigh, ember_svd, ember_eig, ember_schur, ember_hessenberg, ember_tridiagonal),
// dispatched from the custom_call family (eval_custom_call.cc).
#ifndef EMBER_COMPILER_EVALUATOR_EVAL_LINALG_CUSTOM_CALLS_H_
#define EMBER_COMPILER_EVALUATOR_EVAL_LINALG_CUSTOM_CALLS_H_

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/evaluator/eval_value.h"
#include "compiler/ir/module.h"

namespace ember::eval {

bool IsLinalgCustomCall(std::string_view target);

absl::StatusOr<std::vector<EvalValue>> EvalLinalgCustomCall(const ir::Instruction& inst,
                                                            std::string_view target,
                                                            std::vector<EvalValue>& operands);

}  // namespace ember::eval

#endif  // EMBER_COMPILER_EVALUATOR_EVAL_LINALG_CUSTOM_CALLS_H_
