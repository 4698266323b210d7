// Evaluator::Run (the instruction walk, value storage and implicit captures) and the op table.
#include "compiler/evaluator/evaluator.h"

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/evaluator/eval_util.h"

namespace ember::eval {

// Values defined so far in one running computation.
struct Evaluator::Frame {
  const ir::Computation* computation = nullptr;
  std::unordered_map<const ir::Value*, EvalValue> values;
  std::unordered_map<const ir::Value*, int> remaining_uses;
};

// What Run needs to know about a computation before walking it: how often each value is an
// operand (so its last use can move it instead of copying), and which values nested regions read
// (those are always copied: a region may run many times).
struct Evaluator::Plan {
  std::unordered_map<const ir::Value*, int> uses;
  std::unordered_set<const ir::Value*> captured;
};

namespace {

constexpr int kNumOpcodes = 0
#define EMBER_EVAL_COUNT_OPCODE_(e, name) +1
    EMBER_IR_OPCODES(EMBER_EVAL_COUNT_OPCODE_)
#undef EMBER_EVAL_COUNT_OPCODE_
    ;

// Values that `region` (and regions inside it) read from outside itself.
void CollectCaptures(const ir::Computation& region,
                     std::unordered_set<const ir::Value*>& captured) {
  for (const auto& instruction : region.instructions()) {
    for (const ir::Value* operand : instruction->operands()) {
      if (operand->owner() != &region) captured.insert(operand);
    }
    for (const ir::Computation* nested : instruction->regions()) {
      CollectCaptures(*nested, captured);
    }
  }
}

bool SameType(const EvalValue& value, const ir::ValueType& type) {
  switch (value.kind) {
    case EvalValue::Kind::kArray:  // a tensor, or a buffer's contents
      return (type.is_tensor() || type.is_buffer()) &&
             value.array.element_type() == type.element_type() &&
             value.array.shape().dims() == type.dims();
    case EvalValue::Kind::kToken:
      return type.is_token();
    case EvalValue::Kind::kTuple:
    case EvalValue::Kind::kFuture:
      if (type.kind() != (value.kind == EvalValue::Kind::kTuple ? ir::ValueType::Kind::kTuple
                                                               : ir::ValueType::Kind::kFuture) ||
          type.elements().size() != value.elements.size()) {
        return false;
      }
      for (size_t i = 0; i < value.elements.size(); ++i) {
        if (!SameType(value.elements[i], type.elements()[i])) return false;
      }
      return true;
  }
  return false;
}

// Arrays are row-major inside the evaluator; arguments may come in any dense layout.
absl::Status MakeRowMajor(EvalValue& value) {
  if (value.kind == EvalValue::Kind::kArray) {
    const ir::Shape& shape = value.array.shape();
    if (shape.element_type() != ir::ElementType::kInvalid && !shape.layout().IsRowMajor()) {
      EMBER_ASSIGN_OR_RETURN(value.array, value.array.Relayout(ir::Layout::RowMajor(shape.rank())));
    }
  }
  for (EvalValue& element : value.elements) EMBER_RETURN_IF_ERROR(MakeRowMajor(element));
  return absl::OkStatus();
}

}  // namespace

Evaluator::Evaluator(EvalOptions options) : options_(options) {}
Evaluator::~Evaluator() = default;

void Evaluator::RecordProbe(const std::string& id, ir::Literal value) {
  probes_[id].push_back(std::move(value));
}

const ir::Literal* Evaluator::FindProbe(const std::string& id, int64_t iteration) const {
  auto it = probes_.find(id);
  if (it == probes_.end() || iteration < 0 ||
      iteration >= static_cast<int64_t>(it->second.size())) {
    return nullptr;
  }
  return &it->second[static_cast<size_t>(iteration)];
}

const Evaluator::Plan& Evaluator::GetPlan(const ir::Computation& computation) {
  for (const auto& [c, plan] : plans_) {
    if (c == &computation) return *plan;
  }
  auto plan = std::make_unique<Plan>();
  for (const auto& instruction : computation.instructions()) {
    for (const ir::Value* operand : instruction->operands()) ++plan->uses[operand];
    for (const ir::Computation* region : instruction->regions()) {
      CollectCaptures(*region, plan->captured);
    }
  }
  plans_.emplace_back(&computation, std::move(plan));
  return *plans_.back().second;
}

absl::StatusOr<EvalValue> Evaluator::TakeOperand(const ir::Value* value, Frame& frame,
                                                 const Plan& plan) {
  auto it = frame.values.find(value);
  if (it != frame.values.end()) {
    if (!plan.captured.contains(value)) {
      auto uses = frame.remaining_uses.find(value);
      if (uses == frame.remaining_uses.end()) {
        auto total = plan.uses.find(value);
        uses =
            frame.remaining_uses.emplace(value, total == plan.uses.end() ? 1 : total->second).first;
      }
      if (--uses->second <= 0) {
        EvalValue moved = std::move(it->second);
        frame.values.erase(it);
        return moved;
      }
    }
    return it->second.TryClone();
  }
  // An implicit capture: a value of an enclosing computation.
  for (auto f = frames_.rbegin(); f != frames_.rend(); ++f) {
    auto outer = (*f)->values.find(value);
    if (outer != (*f)->values.end()) return outer->second.TryClone();
  }
  return absl::InternalError("value used before it is defined");
}

absl::StatusOr<std::vector<EvalValue>> Evaluator::Run(const ir::Computation& computation,
                                                      std::vector<EvalValue> arguments) {
  if (arguments.size() != computation.parameters().size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "computation @", computation.name(), " takes ", computation.parameters().size(),
        " arguments but ", arguments.size(), " were given"));
  }
  Frame frame;
  frame.computation = &computation;
  frame.values.reserve(arguments.size() + computation.instructions().size());
  for (size_t i = 0; i < arguments.size(); ++i) {
    const ir::Value* parameter = computation.parameter(i);
    if (!SameType(arguments[i], parameter->type())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument #", i, " of computation @", computation.name(), " is ",
          arguments[i].Type().ToString(), " but the parameter is ", parameter->type().ToString()));
    }
    EMBER_RETURN_IF_ERROR(MakeRowMajor(arguments[i]));
    frame.values.emplace(parameter, std::move(arguments[i]));
  }

  // Pops this frame on every return path; the outermost Run also drops the plans.
  struct FrameScope {
    Evaluator* evaluator;
    ~FrameScope() {
      evaluator->frames_.pop_back();
      if (evaluator->frames_.empty()) evaluator->plans_.clear();
    }
  };
  const Plan& plan = GetPlan(computation);
  frames_.push_back(&frame);
  FrameScope scope{this};

  const OpTable& table = OpTable::Get();
  for (const auto& instruction_ptr : computation.instructions()) {
    const ir::Instruction& instruction = *instruction_ptr;
    std::vector<EvalValue> operands;
    operands.reserve(instruction.operands().size());
    for (size_t i = 0; i < instruction.operands().size(); ++i) {
      absl::StatusOr<EvalValue> operand = TakeOperand(instruction.operand(i), frame, plan);
      if (!operand.ok()) {
        return OpError(instruction, "operand #", i, ": ", std::string(operand.status().message()));
      }
      operands.push_back(*std::move(operand));
    }
    if (instruction.opcode() == ir::Opcode::kReturn) return operands;

    for (size_t i = 0; i < instruction.num_results(); ++i) {
      if (instruction.result(i)->type().is_quantized()) {
        return absl::FailedPreconditionError(absl::StrCat(
            instruction.Describe(), ": quantized types must be lowered (legalize-quantized) ",
            "before the evaluator runs a program"));
      }
    }
    const OpEvaluator fn = table.Find(instruction.opcode());
    if (fn == nullptr) {
      return absl::UnimplementedError(
          absl::StrCat(instruction.Describe(), ": not supported by the Ember evaluator"));
    }
    absl::StatusOr<std::vector<EvalValue>> ran = fn(instruction, operands, *this);
    if (!ran.ok()) return NameTheOp(instruction, ran.status());
    std::vector<EvalValue> results = *std::move(ran);
    if (results.size() != instruction.num_results()) {
      return absl::InternalError(absl::StrCat(instruction.Describe(), ": the evaluator produced ",
                                              results.size(), " results for ",
                                              instruction.num_results(), " declared"));
    }
    for (size_t i = 0; i < results.size(); ++i) {
      if (!SameType(results[i], instruction.result(i)->type())) {
        return absl::InternalError(absl::StrCat(
            instruction.Describe(), ": the evaluator produced ", results[i].Type().ToString(),
            " for result #", i, ", declared as ", instruction.result(i)->type().ToString()));
      }
      frame.values.insert_or_assign(instruction.result(i), std::move(results[i]));
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("computation @", computation.name(), " does not end with a return"));
}

absl::Status NameTheOp(const ir::Instruction& instruction, absl::Status status) {
  const std::string op = instruction.Describe();
  if (status.code() != absl::StatusCode::kResourceExhausted ||
      absl::StrContains(status.message(), op)) {
    return status;
  }
  return absl::Status(status.code(), absl::StrCat(op, ": ", status.message()));
}

void OpTable::Register(ir::Opcode opcode, OpEvaluator fn) {
  const size_t index = static_cast<size_t>(opcode);
  if (table_.size() <= index) table_.resize(static_cast<size_t>(kNumOpcodes), nullptr);
  table_[index] = fn;
}

OpEvaluator OpTable::Find(ir::Opcode opcode) const {
  const size_t index = static_cast<size_t>(opcode);
  return index < table_.size() ? table_[index] : nullptr;
}

const OpTable& OpTable::Get() {
  static const OpTable table = [] {
    OpTable t;
    RegisterElementwiseOps(t);
    RegisterDataMovementOps(t);
    RegisterControlFlowOps(t);
    RegisterReductionOps(t);
    RegisterWindowOps(t);
    RegisterLinalgOps(t);
    RegisterIndexingOps(t);
    RegisterRandomOps(t);
    RegisterCollectiveOps(t);
    RegisterCustomCallOps(t);
    return t;
  }();
  return table;
}

}  // namespace ember::eval
