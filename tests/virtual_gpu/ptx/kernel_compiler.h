// Internal to ptx_compiler.cc and instr_builder.cc: the state of compiling one kernel (slot and
// state-space layout of the kernel and its callees, the constant pool, pending branch targets).
#ifndef EMBER_TESTS_VIRTUAL_GPU_PTX_KERNEL_COMPILER_H_
#define EMBER_TESTS_VIRTUAL_GPU_PTX_KERNEL_COMPILER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/virtual_gpu/ptx/ptx_ast.h"
#include "tests/virtual_gpu/ptx/ptx_program.h"

namespace ember::vgpu::ptx {

struct FunctionLayout {
  const Function* function = nullptr;
  int32_t register_base = 0;
  uint32_t entry_pc = 0;
  std::vector<int64_t> variable_offsets;  // per Function::variables, in the variable's space
};

struct BranchFixup {
  uint32_t pc;
  int function;
  std::string label;
  int scope;
  int line;
};
struct CallFixup {
  uint32_t pc;
  int callee;
};

class KernelCompiler {
 public:
  KernelCompiler(const Module& module, KernelProgram& program)
      : module_(module), program_(program) {}

  absl::Status Compile(const Function& kernel);

  // Used by InstrBuilder.
  const Module& module() const { return module_; }
  KernelProgram& program() { return program_; }
  FunctionLayout& layout(int function) { return functions_[function]; }
  int FunctionIndex(const std::string& name) const;
  int32_t Constant(uint64_t bits);
  int32_t Relocated(const std::string& symbol, int64_t offset);
  absl::StatusOr<int64_t> ModuleSharedOffset(const Variable& variable);
  int32_t sink_slot() const { return sink_slot_; }
  int32_t carry_slot() const { return carry_slot_; }
  void AddBranchFixup(BranchFixup fixup) { branch_fixups_.push_back(std::move(fixup)); }
  void AddCallFixup(CallFixup fixup) { call_fixups_.push_back(fixup); }

 private:
  absl::Status CollectFunctions(const Function& kernel);
  absl::Status LayoutVariables();
  absl::Status CompileFunction(int index);

  const Module& module_;
  KernelProgram& program_;
  std::vector<FunctionLayout> functions_;
  std::map<uint64_t, int32_t> constants_;
  std::map<std::string, int32_t> relocated_;
  std::map<std::string, int64_t> module_shared_;
  std::vector<BranchFixup> branch_fixups_;
  std::vector<CallFixup> call_fixups_;
  int32_t sink_slot_ = -1;
  int32_t carry_slot_ = -1;
  int64_t static_shared_ = 0;
  int64_t local_bytes_ = 0;
  int64_t scratch_bytes_ = 0;
  int64_t dynamic_align_ = 16;
};

}  // namespace ember::vgpu::ptx

#endif  // EMBER_TESTS_VIRTUAL_GPU_PTX_KERNEL_COMPILER_H_
