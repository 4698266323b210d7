// Which scatters the code generator takes, and their dimension numbers (asked without LLVM, by
// backends planning kernels, and by the scatter emitter).
#ifndef EMBER_COMPILER_CODEGEN_SCATTER_SUPPORT_H_
#define EMBER_COMPILER_CODEGEN_SCATTER_SUPPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/opcode.h"
#include "compiler/passes/fusion_plan.h"

namespace ember::codegen {

// A scatter of one input, checked against its input, indices, updates and result (the spec's
// constraints): update element `u` goes to the input element at the start indices read at u's
// scatter index (on scatter_dims_to_operand_dims, not clamped), u's scatter index on the
// input_batching_dims and u's window index on the remaining input dims; an element whose
// destination falls outside the input is dropped.
struct ScatterDims {
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> window_input_dims;  // the input dim of each update window dim
  std::vector<int64_t> update_scatter_dims;  // the other update dims, in order
  std::vector<int64_t> scatter_dims_to_operand_dims;
  std::vector<int64_t> input_batching_dims;
  std::vector<int64_t> indices_batching_dims;
  int64_t index_vector_dim = 0;
  // The update region: `replace` (it returns the update), else opcode(current, update) (or
  // opcode(update, current) when !current_first).
  bool replace = false;
  ir::Opcode opcode = ir::Opcode::kAdd;
  bool current_first = true;
};

// Null when `instruction` is not a scatter the scatter emitter takes: one input of the
// emitter's types over dense arrays, integer indices, an update region that replaces or folds
// with one binary op the elemental emitter has, consistent dims.
std::optional<ScatterDims> ReadScatterDims(const ir::Instruction& instruction);

// Empty when EmitScatterKernel (scatter_emitter.h) emits `kernel` (a single scatter), else why
// not.
std::string ScatterKernelRefusal(const passes::Kernel& kernel);

}  // namespace ember::codegen

#endif  // EMBER_COMPILER_CODEGEN_SCATTER_SUPPORT_H_
