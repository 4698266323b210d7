#include "tests/virtual_gpu/ptx/ptx_compiler.h"

#include <algorithm>
#include <functional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "tests/virtual_gpu/ptx/instr_builder.h"
#include "tests/virtual_gpu/ptx/kernel_compiler.h"

namespace ember::vgpu::ptx {
namespace {

int64_t AlignUp(int64_t value, int64_t align) {
  if (align <= 1) return value;
  return (value + align - 1) / align * align;
}

// The callee named by a call statement (operand after the optional return list).
const Operand* CalleeOperand(const Instruction& inst) {
  for (const Operand& op : inst.operands) {
    if (op.kind == Operand::Kind::kSymbol) return &op;
    if (op.kind == Operand::Kind::kRegister) return &op;
  }
  return nullptr;
}

FunctionLayout Layout(const Function* function) {
  FunctionLayout layout;
  layout.function = function;
  return layout;
}

}  // namespace

int KernelCompiler::FunctionIndex(const std::string& name) const {
  for (size_t i = 0; i < functions_.size(); ++i) {
    if (functions_[i].function->name == name) return static_cast<int>(i);
  }
  return -1;
}

int32_t KernelCompiler::Constant(uint64_t bits) {
  auto it = constants_.find(bits);
  if (it != constants_.end()) return it->second;
  const int32_t slot = program_.constant_base + static_cast<int32_t>(program_.constants.size());
  program_.constants.push_back(bits);
  constants_[bits] = slot;
  return slot;
}

int32_t KernelCompiler::Relocated(const std::string& symbol, int64_t offset) {
  const std::string key = absl::StrCat(symbol, "+", offset);
  auto it = relocated_.find(key);
  if (it != relocated_.end()) return it->second;
  const int32_t index = static_cast<int32_t>(program_.constants.size());
  program_.constants.push_back(0);
  program_.relocations.push_back(Relocation{index, symbol, offset});
  const int32_t slot = program_.constant_base + index;
  relocated_[key] = slot;
  return slot;
}

absl::StatusOr<int64_t> KernelCompiler::ModuleSharedOffset(const Variable& variable) {
  if (variable.is_extern || variable.count == 0) {
    dynamic_align_ = std::max<int64_t>(dynamic_align_, variable.align);
    return -1;  // the dynamic area: resolved to KernelProgram's dynamic offset below
  }
  auto it = module_shared_.find(variable.name);
  if (it != module_shared_.end()) return it->second;
  static_shared_ = AlignUp(static_shared_, variable.align);
  const int64_t offset = static_shared_;
  static_shared_ += variable.size_bytes();
  module_shared_[variable.name] = offset;
  return offset;
}

absl::Status KernelCompiler::CollectFunctions(const Function& kernel) {
  functions_.push_back(Layout(&kernel));
  // Breadth-first over call statements; depth-first for recursion and the call depth.
  for (size_t i = 0; i < functions_.size(); ++i) {
    const Function& f = *functions_[i].function;
    for (const Instruction& inst : f.body) {
      if (inst.opcode != "call") continue;
      const Operand* callee = CalleeOperand(inst);
      if (callee == nullptr || callee->kind != Operand::Kind::kSymbol) {
        return absl::InvalidArgumentError(absl::StrCat(
            "line ", inst.line, ": indirect calls (through a register) are not supported"));
      }
      const Function* target = module_.FindFunction(callee->name);
      if (target == nullptr || target->is_declaration) {
        return absl::InvalidArgumentError(absl::StrCat(
            "line ", inst.line, ": call to '", callee->name,
            "', which this module does not define (external functions such as vprintf are not "
            "available on the virtual GPU)"));
      }
      if (target->is_entry) {
        return absl::InvalidArgumentError(
            absl::StrCat("line ", inst.line, ": call to kernel '", callee->name, "'"));
      }
      if (FunctionIndex(callee->name) < 0) functions_.push_back(Layout(target));
    }
  }
  // Call depth (frames) and recursion.
  std::vector<int> state(functions_.size(), 0);  // 0 new, 1 on stack, 2 done
  std::vector<int> depth(functions_.size(), 0);
  std::function<absl::Status(int)> visit = [&](int index) -> absl::Status {
    state[index] = 1;
    int deepest = 0;
    for (const Instruction& inst : functions_[index].function->body) {
      if (inst.opcode != "call") continue;
      const int callee = FunctionIndex(CalleeOperand(inst)->name);
      if (state[callee] == 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "line ", inst.line, ": recursive call to '", functions_[callee].function->name,
            "' (recursion is not supported by the virtual GPU)"));
      }
      if (state[callee] == 0) EMBER_RETURN_IF_ERROR(visit(callee));
      deepest = std::max(deepest, depth[callee] + 1);
    }
    depth[index] = deepest;
    state[index] = 2;
    return absl::OkStatus();
  };
  EMBER_RETURN_IF_ERROR(visit(0));
  program_.max_call_depth = depth[0];
  return absl::OkStatus();
}

absl::Status KernelCompiler::LayoutVariables() {
  int32_t next_slot = kNumSpecialSlots;
  for (size_t i = 0; i < functions_.size(); ++i) {
    FunctionLayout& layout = functions_[i];
    const Function& f = *layout.function;
    layout.register_base = next_slot;
    next_slot += static_cast<int32_t>(f.registers.size());
    program_.registers += static_cast<int>(f.registers.size());
    layout.variable_offsets.assign(f.variables.size(), 0);
    std::set<int> params(f.params.begin(), f.params.end());
    for (size_t v = 0; v < f.variables.size(); ++v) {
      const Variable& var = f.variables[v];
      const int64_t align = std::max(var.align, 1);
      if (var.space == Space::kParam && f.is_entry && params.count(static_cast<int>(v))) {
        int64_t offset = AlignUp(program_.param_bytes, align);
        layout.variable_offsets[v] = offset;
        program_.params.push_back(KernelParam{var.name, static_cast<uint32_t>(offset),
                                              static_cast<uint32_t>(var.size_bytes()),
                                              static_cast<uint32_t>(align)});
        program_.param_bytes = static_cast<uint32_t>(offset + var.size_bytes());
      } else if (var.space == Space::kParam) {
        scratch_bytes_ = AlignUp(scratch_bytes_, std::max<int64_t>(align, 8));
        layout.variable_offsets[v] = scratch_bytes_;
        scratch_bytes_ += var.size_bytes();
      } else if (var.space == Space::kLocal) {
        local_bytes_ = AlignUp(local_bytes_, align);
        layout.variable_offsets[v] = local_bytes_;
        local_bytes_ += var.size_bytes();
      } else if (var.space == Space::kShared) {
        if (var.count == 0) {
          dynamic_align_ = std::max(dynamic_align_, align);
          layout.variable_offsets[v] = -1;
        } else {
          static_shared_ = AlignUp(static_shared_, align);
          layout.variable_offsets[v] = static_shared_;
          static_shared_ += var.size_bytes();
        }
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("line ", var.line, ": unsupported variable space .", SpaceName(var.space)));
      }
    }
  }
  sink_slot_ = next_slot++;
  carry_slot_ = next_slot++;
  program_.constant_base = next_slot;
  return absl::OkStatus();
}

absl::Status KernelCompiler::CompileFunction(int index) {
  FunctionLayout& layout = functions_[index];
  const Function& f = *layout.function;
  layout.entry_pc = static_cast<uint32_t>(program_.code.size());
  const InstructionTable& table = Instructions();
  for (const Instruction& inst : f.body) {
    Instr instr;
    instr.line = inst.line;
    instr.function = index;
    program_.texts.push_back(std::make_unique<std::string>(inst.text));
    instr.text = program_.texts.back().get();
    InstrBuilder builder(*this, inst, instr, index);
    if (inst.guard >= 0) {
      const Register& reg = f.registers[inst.guard];
      if (reg.type != Type::kPred) {
        return builder.Error(absl::StrCat("guard ", reg.name, " is not a predicate"));
      }
      instr.guard = layout.register_base + inst.guard;
      instr.guard_negated = inst.guard_negated;
    }
    CompileFn fn = table.Find(inst.opcode);
    if (fn == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "line ", inst.line, ": unknown instruction '", inst.opcode,
          inst.mods.empty() ? "" : ".", absl::StrJoin(inst.mods, "."),
          "' (the virtual GPU does not implement it): ", inst.text));
    }
    EMBER_RETURN_IF_ERROR(fn(builder));
    EMBER_RETURN_IF_ERROR(builder.CheckAllTaken());
    if (instr.flow == Flow::kNext && instr.exec == nullptr) {
      return builder.Error("internal: no handler bound");
    }
    program_.code.push_back(instr);
  }
  // Falling off the end of a function returns from it.
  Instr ret;
  ret.flow = Flow::kReturn;
  ret.line = f.body.empty() ? f.line : f.body.back().line;
  ret.function = index;
  program_.texts.push_back(std::make_unique<std::string>("(end of function)"));
  ret.text = program_.texts.back().get();
  program_.code.push_back(ret);
  return absl::OkStatus();
}

absl::Status KernelCompiler::Compile(const Function& kernel) {
  program_.name = kernel.name;
  for (int i = 0; i < 3; ++i) {
    program_.maxntid[i] = kernel.maxntid[i];
    program_.reqntid[i] = kernel.reqntid[i];
  }
  program_.ptx_version = module_.version_major * 10 + module_.version_minor;
  if (module_.target.rfind("sm_", 0) == 0) {
    program_.target_sm = std::atoi(module_.target.c_str() + 3);
  }
  EMBER_RETURN_IF_ERROR(CollectFunctions(kernel));
  EMBER_RETURN_IF_ERROR(LayoutVariables());
  for (const FunctionLayout& layout : functions_) {
    program_.function_names.push_back(layout.function->name);
  }
  for (size_t i = 0; i < functions_.size(); ++i) {
    EMBER_RETURN_IF_ERROR(CompileFunction(static_cast<int>(i)));
  }
  for (const BranchFixup& fixup : branch_fixups_) {
    const Function& f = *functions_[fixup.function].function;
    const int label = f.FindLabel(fixup.label, fixup.scope);
    if (label < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", fixup.line, ": branch to undefined label ", fixup.label));
    }
    program_.code[fixup.pc].target =
        functions_[fixup.function].entry_pc + static_cast<uint32_t>(f.labels[label].statement);
  }
  for (const CallFixup& fixup : call_fixups_) {
    program_.code[fixup.pc].target = functions_[fixup.callee].entry_pc;
  }
  // Dynamic shared memory starts after the static variables, aligned.
  program_.dynamic_shared_align = static_cast<uint32_t>(dynamic_align_);
  program_.static_shared_bytes = static_cast<uint32_t>(static_shared_);
  const uint32_t dynamic_offset = static_cast<uint32_t>(AlignUp(static_shared_, dynamic_align_));
  program_.dynamic_shared_offset = dynamic_offset;
  // Constants that stand for "the dynamic shared area" were recorded as relocations of the
  // reserved symbol; resolve them now that the static layout is final.
  std::vector<Relocation> kept;
  for (const Relocation& r : program_.relocations) {
    if (r.symbol == "%dynamic_shared") {
      program_.constants[r.constant_index] = dynamic_offset + static_cast<uint64_t>(r.offset);
    } else {
      kept.push_back(r);
    }
  }
  program_.relocations = std::move(kept);
  program_.local_bytes = static_cast<uint32_t>(AlignUp(local_bytes_, 8));
  program_.param_scratch_bytes = static_cast<uint32_t>(AlignUp(scratch_bytes_, 8));
  program_.num_slots = program_.constant_base + static_cast<int32_t>(program_.constants.size());
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<KernelProgram>> CompileKernel(const Module& module,
                                                             const std::string& kernel) {
  const Function* entry = nullptr;
  for (const Function& f : module.functions) {
    if (f.is_entry && !f.is_declaration && f.name == kernel) entry = &f;
  }
  if (entry == nullptr) {
    return absl::NotFoundError(absl::StrCat("no kernel named '", kernel, "' in the module"));
  }
  auto program = std::make_unique<KernelProgram>();
  KernelCompiler compiler(module, *program);
  EMBER_RETURN_IF_ERROR(compiler.Compile(*entry));
  return program;
}

}  // namespace ember::vgpu::ptx
