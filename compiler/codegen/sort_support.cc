#include "compiler/codegen/sort_support.h"

#include "compiler/codegen/elemental_support.h"

namespace ember::codegen {

std::string SortKernelRefusal(const passes::Kernel& kernel) {
  if (kernel.instructions.size() != 1 || kernel.root()->opcode() != ir::Opcode::kSort) {
    return "not a single sort";
  }
  const ir::Instruction& sort = *kernel.root();
  const size_t n = sort.operands().size();
  if (n == 0 || sort.num_results() != n || sort.regions().size() != 1) {
    return sort.Describe() + " is malformed";
  }
  const ir::Computation& comparator = *sort.regions()[0];
  if (!ScalarRegionSupported(comparator, /*exact_f16=*/true) || comparator.parameters().size() != 2 * n ||
      comparator.return_instruction()->operands().size() != 1 ||
      comparator.return_instruction()->operand(0)->type().element_type() !=
          ir::ElementType::kPred) {
    return sort.Describe() + ": its comparator is not a scalar region the emitter takes";
  }
  for (size_t i = 0; i < n; ++i) {
    const ir::Value* in = sort.operand(i);
    if (!ElementalArraySupported(in) || !ElementalArraySupported(sort.result(i)) ||
        in->type().dims() != sort.operand(0)->type().dims() || in->type().dims().empty() ||
        sort.result(i)->type() != in->type() ||
        comparator.parameter(2 * i)->type().element_type() != in->type().element_type() ||
        comparator.parameter(2 * i + 1)->type().element_type() != in->type().element_type()) {
      return sort.Describe() + ": operand or comparator types the emitter lacks";
    }
  }
  return "";
}

}  // namespace ember::codegen
