// The region reduce emitter: one LLVM function for a reduce the reduction emitter does not fold
// (several inputs, a body of several ops, folded dims anywhere): argmax and argmin, whose body
// picks a (value, index) pair. For each output element, the input elements it folds are visited
// in row-major order and the body (emitted from its region by the elemental emitter) folds each
// into the accumulators, starting from the init values: the evaluator's order, so the results
// are its bits. The function is
//   void name(const void* const* inputs, void* const* outputs, int64 begin, int64 end)
// over output elements [begin, end); the kernel's outputs are the reduce's results it keeps.
#ifndef EMBER_COMPILER_CODEGEN_REGION_REDUCE_EMITTER_H_
#define EMBER_COMPILER_CODEGEN_REGION_REDUCE_EMITTER_H_

#include <string>

#include "absl/status/status.h"
#include "compiler/passes/fusion_plan.h"
#include "llvm/IR/Module.h"

namespace ember::codegen {

// Whether EmitRegionReduceKernel takes `kernel`: RegionReduceKernelRefusal (reduce_support.h).
absl::Status EmitRegionReduceKernel(const passes::Kernel& kernel, const std::string& name,
                                    llvm::Module& module);

}  // namespace ember::codegen

#endif  // EMBER_COMPILER_CODEGEN_REGION_REDUCE_EMITTER_H_
