// Control flow and structural ops: while, if, case, call, optimization_barrier, map, after_all,
// async_start and async_done.
// Regions run through Evaluator::Run, which also resolves values they capture from the
// computations around them. Regions: while {cond, body}, if {true_branch, false_branch},
// case {branches...}, map {computation}; call runs Instruction::callee(). An if/case's operands
// after its selector are its branches' arguments (once captures are made explicit).
// case: an index outside [0, N) runs the last branch, as the spec says. map: the spec's
// `dimensions` must list every dimension in order, so the evaluator does not need to read it.
// async_start runs its body (one collective or slice) to completion when it starts and holds the
// results in a future, which async_done hands out: the spec lets a backend perform an
// asynchronous op synchronously, and every device reaches a collective in program order.
#include "base/status_macros.h"
#include "compiler/evaluator/eval_util.h"

namespace ember::eval {
namespace {

using Results = absl::StatusOr<std::vector<EvalValue>>;

absl::Status CheckRegions(const ir::Instruction& instruction, size_t expected) {
  if (instruction.regions().size() != expected) {
    return OpError(instruction, "expects ", expected, " regions but has ",
                   instruction.regions().size());
  }
  return absl::OkStatus();
}

// The value of a rank-0 pred that a region or an operand produced.
absl::StatusOr<bool> ScalarPred(const ir::Instruction& instruction, const EvalValue& value,
                                const char* what) {
  if (value.kind != EvalValue::Kind::kArray ||
      value.array.element_type() != ir::ElementType::kPred ||
      value.array.shape().element_count() != 1) {
    return OpError(instruction, what, " should be tensor<i1> but is ", value.Type().ToString());
  }
  return Elements<bool>(value.array)[0];
}

absl::StatusOr<std::vector<EvalValue>> CloneAll(const std::vector<EvalValue>& values) {
  std::vector<EvalValue> copies;
  copies.reserve(values.size());
  for (const EvalValue& v : values) {
    EMBER_ASSIGN_OR_RETURN(EvalValue copy, v.TryClone());
    copies.push_back(std::move(copy));
  }
  return copies;
}

Results EvalWhile(const ir::Instruction& instruction, std::vector<EvalValue>& operands,
                  Evaluator& evaluator) {
  EMBER_RETURN_IF_ERROR(CheckRegions(instruction, 2));
  const ir::Computation& cond = *instruction.regions()[0];
  const ir::Computation& body = *instruction.regions()[1];
  const int64_t limit = evaluator.options().max_loop_iterations;
  std::vector<EvalValue> state = std::move(operands);
  for (int64_t iteration = 0;; ++iteration) {
    EMBER_ASSIGN_OR_RETURN(std::vector<EvalValue> cond_args, CloneAll(state));
    EMBER_ASSIGN_OR_RETURN(std::vector<EvalValue> cond_result,
                           evaluator.Run(cond, std::move(cond_args)));
    if (cond_result.size() != 1) {
      return OpError(instruction, "cond returns ", cond_result.size(), " values, expected 1");
    }
    EMBER_ASSIGN_OR_RETURN(bool go_on, ScalarPred(instruction, cond_result[0], "cond's result"));
    if (!go_on) break;
    if (limit > 0 && iteration >= limit) {
      return absl::ResourceExhaustedError(absl::StrCat(
          instruction.Describe(), ": ran more than max_loop_iterations (", limit, ") iterations"));
    }
    EMBER_ASSIGN_OR_RETURN(state, evaluator.Run(body, std::move(state)));
    if (state.size() != instruction.num_results()) {
      return OpError(instruction, "body returns ", state.size(), " values for ",
                     instruction.num_results(), " loop-carried values");
    }
  }
  return state;
}

// The operands after an if/case's selector: the branch's arguments.
std::vector<EvalValue> BranchArguments(std::vector<EvalValue>& operands) {
  std::vector<EvalValue> args;
  args.reserve(operands.size() - 1);
  for (size_t i = 1; i < operands.size(); ++i) args.push_back(std::move(operands[i]));
  return args;
}

Results EvalIf(const ir::Instruction& instruction, std::vector<EvalValue>& operands,
               Evaluator& evaluator) {
  if (operands.empty()) return OpError(instruction, "has no pred");
  EMBER_RETURN_IF_ERROR(CheckRegions(instruction, 2));
  EMBER_ASSIGN_OR_RETURN(bool pred, ScalarPred(instruction, operands[0], "pred"));
  return evaluator.Run(*instruction.regions()[pred ? 0 : 1], BranchArguments(operands));
}

Results EvalCase(const ir::Instruction& instruction, std::vector<EvalValue>& operands,
                 Evaluator& evaluator) {
  if (operands.empty()) return OpError(instruction, "has no index");
  const size_t n = instruction.regions().size();
  if (n == 0) return OpError(instruction, "has no branches");
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* index_array, ArrayOperand(instruction, operands, 0));
  if (index_array->shape().element_count() != 1) {
    return OpError(instruction, "index should be a scalar but is ", DescribeArray(*index_array));
  }
  absl::StatusOr<int64_t> index = IntegerElement(*index_array, 0);
  if (!index.ok()) return AnnotateError(instruction, index.status());
  const size_t branch =
      *index < 0 || *index >= static_cast<int64_t>(n) ? n - 1 : static_cast<size_t>(*index);
  return evaluator.Run(*instruction.regions()[branch], BranchArguments(operands));
}

Results EvalCall(const ir::Instruction& instruction, std::vector<EvalValue>& operands,
                 Evaluator& evaluator) {
  if (instruction.callee() == nullptr) return OpError(instruction, "has no callee");
  return evaluator.Run(*instruction.callee(), std::move(operands));
}

Results EvalOptimizationBarrier(const ir::Instruction&, std::vector<EvalValue>& operands,
                                Evaluator&) {
  return std::move(operands);
}

Results EvalAfterAll(const ir::Instruction&, std::vector<EvalValue>&, Evaluator&) {
  std::vector<EvalValue> results;
  results.push_back(EvalValue::Token());
  return results;
}

// map: result[i] = computation(inputs[0][i], ..., inputs[N-1][i]) on rank-0 tensors.
Results EvalMap(const ir::Instruction& instruction, std::vector<EvalValue>& operands,
                Evaluator& evaluator) {
  EMBER_RETURN_IF_ERROR(CheckRegions(instruction, 1));
  EMBER_ASSIGN_OR_RETURN(ir::Literal result, NewResultArray(instruction));
  std::vector<const ir::Literal*> inputs;
  for (size_t i = 0; i < operands.size(); ++i) {
    EMBER_ASSIGN_OR_RETURN(const ir::Literal* input, ArrayOperand(instruction, operands, i));
    if (input->shape().dims() != result.shape().dims()) {
      return OpError(instruction, "input #", i, " ", DescribeArray(*input),
                     " does not match the result ", DescribeArray(result));
    }
    inputs.push_back(input);
  }
  const ir::Computation& computation = *instruction.regions()[0];
  for (int64_t e = 0; e < result.shape().element_count(); ++e) {
    std::vector<EvalValue> args;
    for (const ir::Literal* input : inputs) {
      EMBER_ASSIGN_OR_RETURN(ir::Literal scalar, ScalarFromElement(*input, e));
      args.push_back(EvalValue::Array(std::move(scalar)));
    }
    EMBER_ASSIGN_OR_RETURN(std::vector<EvalValue> out, evaluator.Run(computation, std::move(args)));
    if (out.size() != 1 || out[0].kind != EvalValue::Kind::kArray ||
        out[0].array.element_type() != result.element_type() ||
        out[0].array.shape().element_count() != 1) {
      return OpError(instruction, "the computation should return one ",
                     TypeName(result.element_type()), " scalar");
    }
    CopyElements(out[0].array, 0, result, e);
  }
  return ArrayResult(std::move(result));
}

Results EvalAsyncStart(const ir::Instruction& instruction, std::vector<EvalValue>& operands,
                       Evaluator& evaluator) {
  EMBER_RETURN_IF_ERROR(CheckRegions(instruction, 1));
  EMBER_ASSIGN_OR_RETURN(std::vector<EvalValue> values,
                         evaluator.Run(*instruction.regions()[0], std::move(operands)));
  std::vector<EvalValue> results;
  results.push_back(EvalValue::Future(std::move(values)));
  return results;
}

Results EvalAsyncDone(const ir::Instruction& instruction, std::vector<EvalValue>& operands,
                      Evaluator&) {
  EMBER_RETURN_IF_ERROR(CheckOperandCount(instruction, operands, 1));
  if (operands[0].kind != EvalValue::Kind::kFuture) {
    return OpError(instruction, "operand should be a future but is ", operands[0].Type().ToString());
  }
  if (operands[0].elements.size() != instruction.num_results()) {
    return OpError(instruction, "the future holds ", operands[0].elements.size(), " values for ",
                   instruction.num_results(), " results");
  }
  return std::move(operands[0].elements);
}

}  // namespace

void RegisterControlFlowOps(OpTable& table) {
  using ir::Opcode;
  table.Register(Opcode::kWhile, EvalWhile);
  table.Register(Opcode::kIf, EvalIf);
  table.Register(Opcode::kCase, EvalCase);
  table.Register(Opcode::kCall, EvalCall);
  table.Register(Opcode::kOptimizationBarrier, EvalOptimizationBarrier);
  table.Register(Opcode::kAfterAll, EvalAfterAll);
  table.Register(Opcode::kMap, EvalMap);
  table.Register(Opcode::kAsyncStart, EvalAsyncStart);
  table.Register(Opcode::kAsyncDone, EvalAsyncDone);
}

}  // namespace ember::eval
