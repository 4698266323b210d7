// The scatter kernel emitter: one LLVM function for a scatter of one input (scatter_support.h):
// the input copied to the result (nothing to copy when they share memory), then every update
// element, in row-major order of the updates, combined into the result element it goes to (the
// update region: a replacement or one binary op); elements going outside are dropped. The order
// makes the result the evaluator's bit for bit, duplicates included. The function has the
// kernels' signature and runs once, on one thread, for [0, 1).
#ifndef EMBER_COMPILER_CODEGEN_SCATTER_EMITTER_H_
#define EMBER_COMPILER_CODEGEN_SCATTER_EMITTER_H_

#include <string>

#include "absl/status/status.h"
#include "compiler/passes/fusion_plan.h"
#include "llvm/IR/Module.h"

namespace ember::codegen {

// Whether EmitScatterKernel takes `kernel`: ScatterKernelRefusal (scatter_support.h).
absl::Status EmitScatterKernel(const passes::Kernel& kernel, const std::string& name,
                               llvm::Module& module);

}  // namespace ember::codegen

#endif  // EMBER_COMPILER_CODEGEN_SCATTER_EMITTER_H_
