// The scan combiner emitter: a cumulative reduce_window's body compiled as a function the host's
// scan (CumulativeScanThunk) calls for each combination, as the sort driver calls a compiled
// comparator (sort_emitter.h). It has the kernels' signature, read differently:
//   void name(const void* const* values, void* const* result, int64 i, int64 j)
// writes body(element i of values[0], element j of values[1]) (the accumulator first, in the
// operand's storage) to element 0 of result[0].
#ifndef EMBER_COMPILER_CODEGEN_SCAN_EMITTER_H_
#define EMBER_COMPILER_CODEGEN_SCAN_EMITTER_H_

#include <string>

#include "absl/status/status.h"
#include "compiler/passes/fusion_plan.h"
#include "llvm/IR/Module.h"

namespace ember::codegen {

// Whether EmitScanCombiner takes `kernel`: ScanCombinerRefusal (scan_support.h).
absl::Status EmitScanCombiner(const passes::Kernel& kernel, const std::string& name,
                              llvm::Module& module);

}  // namespace ember::codegen

#endif  // EMBER_COMPILER_CODEGEN_SCAN_EMITTER_H_
