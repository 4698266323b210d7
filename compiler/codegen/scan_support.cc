#include "compiler/codegen/scan_support.h"

#include "compiler/codegen/elemental_support.h"

namespace ember::codegen {

std::string ScanCombinerRefusal(const passes::Kernel& kernel) {
  if (kernel.instructions.size() != 1 ||
      kernel.root()->opcode() != ir::Opcode::kReduceWindow) {
    return "not a single reduce_window";
  }
  const ir::Instruction& window = *kernel.root();
  if (window.operands().size() != 2 || window.num_results() != 1 ||
      window.regions().size() != 1) {
    return window.Describe() + ": not a reduce_window of one operand";
  }
  const ir::Value* in = window.operand(0);
  const ir::Value* init = window.operand(1);
  const ir::ElementType t = in->type().element_type();
  if (!ElementalArraySupported(in) || !ElementalArraySupported(window.result()) ||
      !init->type().is_tensor() || !init->type().dims().empty() ||
      init->type().element_type() != t || window.result()->type().element_type() != t ||
      t == ir::ElementType::kPred || ir::StorageBytes(t) > 8) {
    return window.Describe() + ": operand, init or result types the emitter lacks";
  }
  const ir::Computation& body = *window.regions()[0];
  if (!ScalarRegionSupported(body, /*exact_f16=*/true) || body.parameters().size() != 2 ||
      body.parameter(0)->type().element_type() != t ||
      body.parameter(1)->type().element_type() != t ||
      body.return_instruction()->operands().size() != 1 ||
      body.return_instruction()->operand(0)->type().element_type() != t) {
    return window.Describe() + ": its body is not a scalar region the emitter takes";
  }
  return "";
}

}  // namespace ember::codegen
