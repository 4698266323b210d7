// The loop kernel emitter: one LLVM function for a loop fusion of the fusion plan (a chain of
// elementwise and index ops over one output shape), computing every kernel output at each
// element with the elemental emitter and no temporaries between the fused ops. Each output
// element is generated from its index the way XLA's elemental IR emitter does: an index op
// (broadcast_in_dim, reshape, transpose, slice) maps the index to its operand's, inputs are
// loaded at their index. The function is
//   void name(const void* const* inputs, void* const* outputs, int64 begin, int64 end)
// over the output elements [begin, end) in row-major order; the innermost dim is a unit-stride
// loop that LLVM vectorizes. A GPU target would call the same element generator from a thread
// index instead of this loop.
#ifndef EMBER_COMPILER_CODEGEN_LOOP_EMITTER_H_
#define EMBER_COMPILER_CODEGEN_LOOP_EMITTER_H_

#include <string>

#include "absl/status/status.h"
#include "compiler/passes/fusion_plan.h"
#include "llvm/IR/Module.h"

namespace ember::codegen {

// Whether EmitLoopKernel takes `kernel` (a kLoop kernel whose instructions and types the
// emitters cover, whose outputs all have the root's dims). LLVM-free: see loop_support.h.
absl::Status EmitLoopKernel(const passes::Kernel& kernel, const std::string& name,
                            llvm::Module& module);

}  // namespace ember::codegen

#endif  // EMBER_COMPILER_CODEGEN_LOOP_EMITTER_H_
