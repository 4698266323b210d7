// Which loop fusions the code generator takes (asked without LLVM, by backends planning kernels).
#ifndef EMBER_COMPILER_CODEGEN_LOOP_SUPPORT_H_
#define EMBER_COMPILER_CODEGEN_LOOP_SUPPORT_H_

#include <optional>
#include <string>
#include <vector>

#include "compiler/passes/fusion_plan.h"

namespace ember::codegen {

// Empty when EmitLoopKernel (loop_emitter.h) emits `kernel`, else why not (the first
// instruction or output it does not cover).
std::string LoopKernelRefusal(const passes::Kernel& kernel);

// Whether a loop kernel may take `instruction`: LoopOpSupported over dense arrays of the
// emitter's types. A backend's fusion predicate.
bool LoopFusibleByCodegen(const ir::Instruction& instruction);

// An op the element generator computes at any index: an elementwise op (ElementalOpSupported),
// an index op (IndexOpSupported), a reduce_window (ReduceWindowFold) or a select_and_scatter
// (SelectAndScatterFold).
bool LoopOpSupported(const ir::Instruction& instruction);

// Why the element generator does not compute `instruction`, a reduce_window or
// select_and_scatter (empty when it does, or for other ops): the cost report's reason for
// leaving it to the evaluator.
std::string WindowOpRefusal(const ir::Instruction& instruction);

// Whether an index op of a loop kernel (broadcast_in_dim, reshape, transpose, slice, iota,
// reverse, pad, concatenate, dynamic_slice, gather) is one the element generator maps;
// elementwise ops are ElementalOpSupported's.
bool IndexOpSupported(const ir::Instruction& instruction);

// A gather's dimension numbers, checked against its operand, indices and result (the spec's
// constraints), for the element generator: result element `r` reads operand element
//   start[k] (clamped so the slice fits) on start_index_map[k], r's batch index on the
//   operand_batching_dims, and r's offset dims on the remaining operand dims.
struct GatherDims {
  std::vector<int64_t> offset_dims;          // result dims that index within the slice
  std::vector<int64_t> offset_operand_dims;  // the operand dim of each offset dim
  std::vector<int64_t> batch_dims;           // the other result dims, in order
  std::vector<int64_t> start_index_map;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> indices_batching_dims;
  std::vector<int64_t> slice_sizes;
  int64_t index_vector_dim = 0;
};
// Null when `instruction` is not a gather the element generator takes (a static one over dense
// arrays of the emitter's types, with integer indices, whose dims are consistent).
std::optional<GatherDims> ReadGatherDims(const ir::Instruction& instruction);

}  // namespace ember::codegen

#endif  // EMBER_COMPILER_CODEGEN_LOOP_SUPPORT_H_
