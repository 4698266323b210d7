// Which reduce_window instructions the code generator computes, and their windows (asked without
// LLVM, by backends planning kernels, and by the element generator, which computes each result
// element as a fold over its window inside any loop or reduction kernel).
#ifndef EMBER_COMPILER_CODEGEN_REDUCE_WINDOW_SUPPORT_H_
#define EMBER_COMPILER_CODEGEN_REDUCE_WINDOW_SUPPORT_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/module.h"

namespace ember::codegen {

// A reduce_window the element generator folds: one operand, a scalar init of its type, a body
// of one add, multiply, maximum, minimum, and, or or xor (reduce_support.h's BodyOp).
struct WindowFold {
  ir::Opcode op = ir::Opcode::kAdd;
  std::vector<int64_t> window;            // window_dimensions
  std::vector<int64_t> strides;           // window_strides
  std::vector<int64_t> base_dilations;
  std::vector<int64_t> window_dilations;
  std::vector<int64_t> padding_low;
  // Per dim: every window position of every result element lies inside the operand (no padding
  // or hole is ever read there, so no test is emitted).
  std::vector<bool> always_inside;
  int64_t positions = 1;  // elements per window
};

// The window of `instruction` when the element generator computes it, else why not. Refused:
// variadic reduce_windows, bodies of more than one op, an empty operand, and cumulative windows
// (cumsum and its kin) whose fold the evaluator orders otherwise (float sums and products, in
// XLA's blocked order) or which are long (folded window by window they cost O(n^2), the
// evaluator's scan O(n)).
absl::StatusOr<WindowFold> ReduceWindowFold(const ir::Instruction& instruction);

}  // namespace ember::codegen

#endif  // EMBER_COMPILER_CODEGEN_REDUCE_WINDOW_SUPPORT_H_
