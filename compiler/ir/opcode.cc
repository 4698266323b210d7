#include "compiler/ir/opcode.h"

#include <utility>

namespace ember::ir {
namespace {

constexpr std::pair<Opcode, std::string_view> kOpcodeNames[] = {
#define EMBER_IR_OPCODE_NAME(e, name) {Opcode::e, name},
    EMBER_IR_OPCODES(EMBER_IR_OPCODE_NAME)
#undef EMBER_IR_OPCODE_NAME
};

}  // namespace

std::string_view OpcodeName(Opcode opcode) {
  for (const auto& [op, name] : kOpcodeNames) {
    if (op == opcode) return name;
  }
  return "<unknown>";
}

std::optional<Opcode> OpcodeFromName(std::string_view name) {
  for (std::string_view prefix : {"stablehlo.", "func.", "mhlo."}) {
    if (name.substr(0, prefix.size()) == prefix) {
      name.remove_prefix(prefix.size());
      break;
    }
  }
  for (const auto& [op, op_name] : kOpcodeNames) {
    if (op_name == name) return op;
  }
  return std::nullopt;
}

}  // namespace ember::ir
