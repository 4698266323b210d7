// Which select_and_scatter instructions the code generator computes (asked without LLVM, by
// backends planning kernels, and by the element generator). The element generator gathers:
// result element p folds, in the source's row-major order, the source elements of the windows
// that hold p and select it, each window's selection made again in its row-major order (the
// evaluator's scatter, computed per result element).
#ifndef EMBER_COMPILER_CODEGEN_SELECT_AND_SCATTER_SUPPORT_H_
#define EMBER_COMPILER_CODEGEN_SELECT_AND_SCATTER_SUPPORT_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/module.h"

namespace ember::codegen {

struct WindowScatter {
  std::vector<int64_t> window;       // window_dimensions
  std::vector<int64_t> strides;      // window_strides
  std::vector<int64_t> padding_low;  // at least 0
  std::vector<int64_t> windows;      // per dim: how many windows (the source's dims)
  // Per dim: the most windows that hold one element, ceil(window / stride).
  std::vector<int64_t> holding;
  // The select region's one compare, of (current, candidate), or of (candidate, current) when
  // `swapped`: the current pick stays while it holds.
  const ir::Instruction* compare = nullptr;
  bool swapped = false;
  ir::Opcode scatter_op = ir::Opcode::kAdd;  // the scatter region's fold
};

// The windows of `instruction` when the element generator computes it, else why not. Refused:
// select regions other than one compare of the two parameters, scatter regions of more than one
// op, negative padding, empty operands or sources, and windows whose gather would take more than
// a few hundred element reads per result element.
absl::StatusOr<WindowScatter> SelectAndScatterFold(const ir::Instruction& instruction);

}  // namespace ember::codegen

#endif  // EMBER_COMPILER_CODEGEN_SELECT_AND_SCATTER_SUPPORT_H_
