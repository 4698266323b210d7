// What an instruction family sees while compiling one PTX statement: its modifiers (each must be
// consumed, so an unknown one is an error rather than silently ignored), its operands resolved
// to register-file slots with PTX's type-compatibility rules checked, addresses resolved to a
// state space plus slot and offset, and labels. Families register their opcodes in an
// InstructionTable (explicit registration; no static initializers).
#ifndef EMBER_TESTS_VIRTUAL_GPU_PTX_INSTR_BUILDER_H_
#define EMBER_TESTS_VIRTUAL_GPU_PTX_INSTR_BUILDER_H_

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tests/virtual_gpu/ptx/ptx_ast.h"
#include "tests/virtual_gpu/ptx/ptx_program.h"

namespace ember::vgpu::ptx {

class KernelCompiler;

// Where an address operand points.
enum class AddressKind : uint8_t {
  kRegister,     // [%rd] or [%rd+8]: the space comes from the instruction
  kKernelParam,  // a kernel parameter (offset in the parameter buffer)
  kFuncParam,    // a function parameter or call-site .param (offset in the per-thread scratch)
  kLocal,        // a .local variable
  kShared,       // a .shared variable
  kGlobal,       // a module .global/.const variable (address patched at load)
  kImmediate,    // [1234]
};
struct Address {
  AddressKind kind = AddressKind::kRegister;
  int32_t slot = -1;   // slot holding the base address (a constant for symbols)
  int64_t offset = 0;
  Space symbol_space = Space::kNone;
};

// Kernel-parameter and function-parameter addresses share .param space: function parameters sit
// above this offset so a register address says which one it is.
inline constexpr uint64_t kFuncParamBase = 0x10000;

class InstrBuilder {
 public:
  InstrBuilder(KernelCompiler& compiler, const Instruction& ast, Instr& out, int function_index);

  const Instruction& ast() const { return ast_; }
  const std::string& opcode() const { return ast_.opcode; }
  Instr& out() { return out_; }

  // ---- modifiers
  bool Take(std::string_view mod);
  // The first of `mods` present (consumed), or nullopt.
  std::optional<std::string> TakeOneOf(std::initializer_list<std::string_view> mods);
  // Every type modifier, in order (consumed).
  std::vector<Type> TakeTypes();
  // Consumes modifiers that only tune caching or scheduling (.L1::evict_last, .L2::128B, .nc,
  // .ca, .cg, .cs, .lu, .cv, .wb, .wt, .aligned, .uni, ...).
  void TakePerformanceHints();
  // Error naming the first modifier no one consumed.
  absl::Status CheckAllTaken();
  // Rounding modifier (.rn .rz .rm .rp, and .rni... when `integral`).
  std::optional<Rounding> TakeRounding(bool integral = false);

  // ---- operands
  int num_operands() const { return static_cast<int>(ast_.operands.size()); }
  const Operand& operand(int i) const { return ast_.operands[i]; }
  absl::Status ExpectOperands(int count);
  absl::Status ExpectOperands(int min_count, int max_count);
  // A register written with a value of type `type` (a sink `_` gets a scratch slot).
  absl::StatusOr<int32_t> Dest(int i, Type type, bool allow_wider = false);
  absl::StatusOr<int32_t> DestOperand(const Operand& op, Type type, bool allow_wider = false);
  // A value of type `type`: register, immediate (converted to the type), or special register.
  absl::StatusOr<int32_t> Source(int i, Type type, bool allow_wider = false);
  absl::StatusOr<int32_t> SourceOperand(const Operand& op, Type type, bool allow_wider = false);
  // A predicate source; `negated` receives a leading '!' (only where the caller allows it).
  absl::StatusOr<int32_t> PredSource(int i, bool* negated);
  absl::StatusOr<Address> AddressOperand(int i);
  // The slot of a constant (deduplicated).
  int32_t Constant(uint64_t bits);
  // The slot holding the address of a symbol in its own state space (mov %rd, symbol).
  absl::StatusOr<Address> SymbolAddress(const Operand& op);
  // Byte size of the register named by operand i (0 if it is not a register).
  int RegisterBytes(const Operand& op) const;
  Type RegisterType(const Operand& op) const;
  // A branch target; resolved after the whole function is laid out.
  absl::Status BranchTarget(int i);
  // The callee of a call and its argument and result operands.
  absl::Status Call(int ret_operand, int callee_operand, int args_operand);

  absl::Status Error(const std::string& message) const;
  int32_t compiler_carry_slot();  // the hidden CC.CF register of the carry chain
  int function_index() const { return function_; }
  KernelCompiler& compiler() { return compiler_; }
  std::string_view target_name() const;
  int target_sm() const;

 private:
  KernelCompiler& compiler_;
  const Instruction& ast_;
  Instr& out_;
  int function_;
  std::vector<bool> taken_;
};

using CompileFn = absl::Status (*)(InstrBuilder& builder);

class InstructionTable {
 public:
  void Add(std::string_view opcode, CompileFn fn) { table_[std::string(opcode)] = fn; }
  CompileFn Find(const std::string& opcode) const {
    auto it = table_.find(opcode);
    return it == table_.end() ? nullptr : it->second;
  }

 private:
  std::map<std::string, CompileFn> table_;
};

// The table with every family registered (built on first use).
const InstructionTable& Instructions();

// Family registration (one per isa_*.cc).
void RegisterIntegerInstructions(InstructionTable& table);
void RegisterFloatInstructions(InstructionTable& table);
void RegisterLogicInstructions(InstructionTable& table);
void RegisterCompareInstructions(InstructionTable& table);
void RegisterMoveInstructions(InstructionTable& table);
void RegisterConvertInstructions(InstructionTable& table);
void RegisterMemoryInstructions(InstructionTable& table);
void RegisterAtomicInstructions(InstructionTable& table);
void RegisterControlInstructions(InstructionTable& table);
void RegisterWarpInstructions(InstructionTable& table);

// Shared by families whose opcodes exist for both integer and float types (add, mul, min, ...).
absl::Status CompileIntegerArithmetic(InstrBuilder& b, Type type);
absl::Status CompileFloatArithmetic(InstrBuilder& b, Type type);

}  // namespace ember::vgpu::ptx

#endif  // EMBER_TESTS_VIRTUAL_GPU_PTX_INSTR_BUILDER_H_
