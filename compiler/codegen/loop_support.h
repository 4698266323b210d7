// Which loop fusions the code generator takes (asked without LLVM, by backends planning kernels).
#ifndef EMBER_COMPILER_CODEGEN_LOOP_SUPPORT_H_
#define EMBER_COMPILER_CODEGEN_LOOP_SUPPORT_H_

#include <string>

#include "compiler/passes/fusion_plan.h"

namespace ember::codegen {

// Empty when EmitLoopKernel (loop_emitter.h) emits `kernel`, else why not (the first
// instruction or output it does not cover).
std::string LoopKernelRefusal(const passes::Kernel& kernel);

// Whether a loop kernel may take `instruction`: an elementwise op (ElementalOpSupported), an
// index op (IndexOpSupported) or a reduce_window (ReduceWindowFold) over dense arrays of the
// emitter's types. A backend's fusion predicate.
bool LoopFusibleByCodegen(const ir::Instruction& instruction);

// Whether an index op of a loop kernel (broadcast_in_dim, reshape, transpose, slice, iota,
// reverse, pad, concatenate, dynamic_slice) is one the element generator maps; elementwise ops
// are ElementalOpSupported's.
bool IndexOpSupported(const ir::Instruction& instruction);

}  // namespace ember::codegen

#endif  // EMBER_COMPILER_CODEGEN_LOOP_SUPPORT_H_
