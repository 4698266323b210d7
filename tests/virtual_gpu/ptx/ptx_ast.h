// The parsed form of a PTX module: what the text says, with register names already resolved to
// per-function register ids (so nested `{ .reg ... }` scopes and shadowing are settled by the
// parser) and every statement carrying its source line. Semantics are checked later, when a
// kernel is compiled (ptx_compiler.h).
#ifndef EMBER_TESTS_VIRTUAL_GPU_PTX_PTX_AST_H_
#define EMBER_TESTS_VIRTUAL_GPU_PTX_PTX_AST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tests/virtual_gpu/ptx/ptx_types.h"

namespace ember::vgpu::ptx {

enum class Space : uint8_t { kNone, kReg, kGlobal, kShared, kLocal, kConst, kParam, kGeneric };
const char* SpaceName(Space space);

struct Operand {
  enum class Kind : uint8_t {
    kRegister,  // reg: register id in the function
    kSpecial,   // name: "%tid.x", "%laneid", ...
    kInt,       // int_value (also from hex, octal, binary literals)
    kF32Bits,   // 0fXXXXXXXX: bits in int_value
    kF64Bits,   // 0dXXXXXXXXXXXXXXXX or a decimal float: bits in int_value
    kSymbol,    // name: a module symbol or label; `var` >= 0 for a function's own variable
    kAddress,   // [base + offset]: base is `elements[0]` (register, symbol or int)
    kVector,    // {a, b, ...}: elements
    kSink,      // _
  };
  Kind kind = Kind::kInt;
  int reg = -1;
  int var = -1;  // kSymbol: index into Function::variables (params are variables too)
  std::string name;
  int64_t int_value = 0;
  bool negated = false;             // !%p
  std::vector<Operand> elements;    // address base or vector elements
  std::unique_ptr<Operand> second;  // d|p: the predicate after '|'
  int64_t offset = 0;               // address offset

  Operand() = default;
  Operand(const Operand& other) { *this = other; }
  Operand& operator=(const Operand& other);
  Operand(Operand&&) = default;
  Operand& operator=(Operand&&) = default;
};

struct Instruction {
  int line = 0;
  std::string opcode;               // "ld"
  std::vector<std::string> mods;    // {"global", "nc", "v4", "f32"} without the dots
  std::vector<Operand> operands;
  int scope = 0;                    // Function::scope_parent index (labels are scoped)
  int guard = -1;                   // predicate register id, or -1
  bool guard_negated = false;
  std::string text;                 // the statement as written, for messages
};

struct Register {
  std::string name;  // as declared (for messages)
  Type type = Type::kNone;
};

// A variable in a state space other than .reg: module-level .global/.const/.shared, or a
// function's .local/.shared/.param declarations.
struct Variable {
  std::string name;
  Space space = Space::kNone;
  Type type = Type::kNone;
  int align = 0;
  int64_t count = 1;  // array elements; 0 for `name[]` (extern dynamic shared memory)
  bool is_extern = false;
  bool has_array = false;
  std::vector<uint8_t> init;  // initializer bytes (empty: zero-filled / none)
  int line = 0;
  int64_t size_bytes() const { return static_cast<int64_t>(TypeSize(type)) * count; }
};

struct Label {
  std::string name;
  int scope = 0;
  int statement = -1;  // index into Function::body of the first instruction after it
};

struct Function {
  std::string name;
  bool is_entry = false;
  bool is_declaration = false;  // .extern .func without a body
  int line = 0;
  // Parameters and return parameters are listed by index into `variables`.
  std::vector<int> params;
  std::vector<int> return_params;
  std::vector<Register> registers;    // id -> register
  std::vector<Variable> variables;    // parameters, and .local/.shared/.param of the body
  std::vector<Instruction> body;
  std::vector<Label> labels;
  std::vector<int> scope_parent = {-1};  // scope 0 is the function body
  // The label named `name` visible from `scope`, or -1.
  int FindLabel(const std::string& name, int scope) const;
  int maxntid[3] = {0, 0, 0};
  int reqntid[3] = {0, 0, 0};
};

struct Module {
  int version_major = 0, version_minor = 0;
  std::string target;  // "sm_80"
  int address_size = 64;
  std::vector<Variable> globals;
  std::vector<Function> functions;
  const Function* FindFunction(const std::string& name) const;
  const Variable* FindGlobal(const std::string& name) const;
};

}  // namespace ember::vgpu::ptx

#endif  // EMBER_TESTS_VIRTUAL_GPU_PTX_PTX_AST_H_
