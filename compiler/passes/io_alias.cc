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

// Is every instruction of `kernel` that reads `parameter` one that `out` is computed from?
// Fused kernels store their outputs one after another, each chunk computed on demand: the
// parameter's elements are read straight from its buffer, so a reader evaluated only for a later
// output would see `out` already stored over them. Readers that `out` needs have run (and keep
// their values) by the time it is stored.
bool ReadersFeedOnly(const Kernel& kernel, const ir::Value* parameter, const ir::Value* out) {
  std::unordered_set<const ir::Instruction*> in_kernel(kernel.instructions.begin(),
                                                       kernel.instructions.end());
  std::unordered_set<const ir::Instruction*> cone;
  std::vector<const ir::Instruction*> stack;
  if (out->producer() != nullptr && in_kernel.contains(out->producer())) {
    stack.push_back(out->producer());
  }
  while (!stack.empty()) {
    const ir::Instruction* inst = stack.back();
    stack.pop_back();
    if (!cone.insert(inst).second) continue;
    for (const ir::Value* v : inst->operands()) {
      if (v->producer() != nullptr && in_kernel.contains(v->producer())) {
        stack.push_back(v->producer());
      }
    }
  }
  for (const ir::Instruction* inst : kernel.instructions) {
    bool reads = false;
    for (const ir::Value* v : inst->operands()) reads = reads || v == parameter;
    if (reads && !cone.contains(inst)) return false;
  }
  return true;
}

}  // namespace

bool ReadsOnlySameElement(const Kernel& kernel, const ir::Value* parameter) {
  if (!parameter->type().is_tensor()) return false;
  const std::vector<int64_t>& dims = parameter->type().dims();
  if (kernel.kind == KernelKind::kReduce) {
    // A reduction kernel folds its whole input before its epilogue runs over the reduced
    // elements. The chain below keeps the parameter out of the reductions (they have regions);
    // the parameter's shape differing from every reduced operand's keeps it out of the fold's
    // element-wise body too, so only the epilogue reads it, element by element.
    for (const ir::Instruction* inst : kernel.instructions) {
      if (inst->opcode() != Opcode::kReduce) continue;
      const auto& operands = inst->operands();  // the reduced inputs, then their inits
      for (size_t i = 0; i < operands.size() / 2; ++i) {
        if (!operands[i]->type().is_tensor() || operands[i]->type().dims() == dims) return false;
      }
    }
  } else if (kernel.kind == KernelKind::kSingle && kernel.instructions.size() == 1 &&
             kernel.root()->opcode() == Opcode::kDynamicUpdateSlice) {
    // A dynamic_update_slice of the parameter: the result is the parameter with a window
    // replaced, so written over the parameter it copies nothing and writes only the window (the
    // update and the start indices are read before, and must not be the parameter).
    const ir::Instruction& update = *kernel.root();
    if (update.operands().empty() || update.operand(0) != parameter) return false;
    for (size_t i = 1; i < update.operands().size(); ++i) {
      if (update.operand(i) == parameter) return false;
    }
    return true;
  } else if (kernel.kind != KernelKind::kLoop) {
    return false;
  }
  // A region (a reduction's body, a map's) reading the parameter reads it at any element.
  for (const ir::Instruction* inst : kernel.instructions) {
    std::vector<const ir::Value*> captured;
    for (const ir::Computation* region : inst->regions()) CollectCapturedValues(*region, captured);
    for (const ir::Value* v : captured) {
      if (v == parameter) return false;
    }
  }
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
    if (std::string why = WhyNotWrittenOver(plan.kernels[k], static_cast<int>(k), param, out);
        !why.empty()) {
      return why;
    }
  }
  return std::string();
}

std::string WhyNotWrittenOver(const Kernel& kernel, int index, const ir::Value* in,
                              const ir::Value* out) {
  if (!in->type().is_tensor() || !out->type().is_tensor() ||
      !(in->type().shape() == out->type().shape())) {
    return absl::StrCat("kernel ", index, " writes the result and reads the parameter at other "
                        "elements");
  }
  if (kernel.kind == KernelKind::kSingle && kernel.instructions.size() == 1 &&
      kernel.root()->opcode() == Opcode::kAllReduce) {
    const ir::Instruction& reduce = *kernel.root();
    int reads = 0;
    bool pairs = false;
    for (size_t i = 0; i < reduce.operands().size(); ++i) {
      if (reduce.operand(i) != in) continue;
      ++reads;
      pairs = i < reduce.num_results() && reduce.result(i) == out;
    }
    if (reads == 1 && pairs) return std::string();
    return absl::StrCat("kernel ", index, " writes the result and reads the parameter at other "
                        "elements");
  }
  if (!ReadsOnlySameElement(kernel, in)) {
    return absl::StrCat("kernel ", index, " writes the result and reads the parameter at other "
                        "elements");
  }
  if (!ReadersFeedOnly(kernel, in, out)) {
    return absl::StrCat("kernel ", index, " reads the parameter for another of its outputs after "
                        "it stores the result");
  }
  return std::string();
}

}  // namespace ember::passes
