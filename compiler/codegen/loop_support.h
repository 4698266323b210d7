// Which loop fusions the code generator takes (asked without LLVM, by backends planning kernels).
#ifndef EMBER_COMPILER_CODEGEN_LOOP_SUPPORT_H_
#define EMBER_COMPILER_CODEGEN_LOOP_SUPPORT_H_

#include <string>

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
// reverse, pad, concatenate, dynamic_slice) is one the element generator maps; elementwise ops
// are ElementalOpSupported's.
bool IndexOpSupported(const ir::Instruction& instruction);

}  // namespace ember::codegen

#endif  // EMBER_COMPILER_CODEGEN_LOOP_SUPPORT_H_
