#include "compiler/passes/io_alias.h"

#include <unordered_set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/passes/rewrite.h"

namespace ember::passes {
namespace {

using ir::Opcode;

// Ops whose output element i is a function of operand element i alone (or of a scalar operand).
bool SameIndexOp(Opcode op) {
  switch (op) {
    case Opcode::kAbs: case Opcode::kAdd: case Opcode::kAnd: case Opcode::kAtan2:
    case Opcode::kCbrt: case Opcode::kCeil: case Opcode::kClamp: case Opcode::kCompare:
    case Opcode::kComplex: case Opcode::kConvert: case Opcode::kCosine:
    case Opcode::kCountLeadingZeros: case Opcode::kDivide: case Opcode::kExponential:
    case Opcode::kExponentialMinusOne: case Opcode::kFloor: case Opcode::kImag:
    case Opcode::kIsFinite: case Opcode::kLog: case Opcode::kLogPlusOne: case Opcode::kLogistic:
    case Opcode::kMaximum: case Opcode::kMinimum: case Opcode::kMultiply: case Opcode::kNegate:
    case Opcode::kNot: case Opcode::kOr: case Opcode::kPopcnt: case Opcode::kPower:
    case Opcode::kReal: case Opcode::kReducePrecision: case Opcode::kRemainder:
    case Opcode::kRoundNearestAfz: case Opcode::kRoundNearestEven: case Opcode::kRsqrt:
    case Opcode::kSelect: case Opcode::kShiftLeft: case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical: case Opcode::kSign: case Opcode::kSine: case Opcode::kSqrt:
    case Opcode::kSubtract: case Opcode::kTan: case Opcode::kTanh: case Opcode::kXor:
      return true;
    default:
      return false;
  }
}

bool Reads(const Kernel& kernel, const ir::Value* v) {
  for (const ir::Value* input : kernel.inputs) {
    if (input == v) return true;
  }
  std::vector<const ir::Value*> captured;
  for (const ir::Instruction* inst : kernel.instructions) {
    for (const ir::Computation* region : inst->regions()) CollectCapturedValues(*region, captured);
  }
  for (const ir::Value* c : captured) {
    if (c == v) return true;
  }
  return false;
}

}  // namespace

bool ReadsOnlySameElement(const Kernel& kernel, const ir::Value* parameter) {
  if (kernel.kind != KernelKind::kLoop || !parameter->type().is_tensor()) return false;
  const std::vector<int64_t>& dims = parameter->type().dims();
  // Values of the kernel that depend on the parameter, in program order.
  std::unordered_set<const ir::Value*> derived = {parameter};
  for (const ir::Instruction* inst : kernel.instructions) {
    bool reads = false;
    for (const ir::Value* v : inst->operands()) reads = reads || derived.contains(v);
    if (!reads) continue;
    if (!inst->regions().empty() || !SameIndexOp(inst->opcode()) || inst->num_results() != 1 ||
        !inst->result()->type().is_tensor() || inst->result()->type().dims() != dims) {
      return false;
    }
    for (const ir::Value* v : inst->operands()) {
      if (!v->type().is_tensor()) return false;
      if (v->type().dims() != dims && !v->type().dims().empty()) return false;
    }
    derived.insert(inst->result());
  }
  return true;
}

std::string WhyNotAliased(const ir::Computation& entry, const FusionPlan& plan,
                          const BufferAssignment& buffers, const IoAlias& alias) {
  const ir::Instruction* ret = entry.return_instruction();
  if (ret == nullptr || alias.result < 0 ||
      static_cast<size_t>(alias.result) >= ret->operands().size() || alias.parameter < 0 ||
      static_cast<size_t>(alias.parameter) >= entry.parameters().size()) {
    return "no such parameter or result";
  }
  const ir::Value* param = entry.parameter(alias.parameter);
  const ir::Value* out = ret->operand(alias.result);
  if (!param->type().is_tensor() || !out->type().is_tensor() ||
      param->type().shape().ByteSize() != out->type().shape().ByteSize()) {
    return "the parameter and the result differ in size";
  }
  auto slot = buffers.slots.find(out);
  if (slot == buffers.slots.end() || slot->second.kind != BufferSlot::Kind::kOutput ||
      slot->second.index != alias.result || slot->second.defined_at < 0 ||
      static_cast<size_t>(slot->second.defined_at) >= plan.kernels.size()) {
    return "the result is not written by a kernel of its own";
  }
  for (const ir::Value* v : ret->operands()) {
    if (v == param) return "the parameter is also returned";
  }
  const int writer = slot->second.defined_at;
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    if (static_cast<int>(k) < writer || !Reads(plan.kernels[k], param)) continue;
    if (static_cast<int>(k) > writer) {
      return absl::StrCat("kernel ", k, " reads the parameter after kernel ", writer,
                          " writes the result");
    }
    if (!(param->type().shape() == out->type().shape()) ||
        !ReadsOnlySameElement(plan.kernels[k], param)) {
      return absl::StrCat("kernel ", k, " writes the result and reads the parameter at other "
                          "elements");
    }
  }
  return std::string();
}

}  // namespace ember::passes
