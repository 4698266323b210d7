// The sort comparator emitter: a sort's comparator region compiled as a function the host's sort
// driver calls for each comparison (as XLA:CPU sorts with a runtime routine and a compiled
// comparator). It has the kernels' signature, read differently:
//   void name(const void* const* operands, void* const* result, int64 i, int64 j)
// compares element i with element j (linear indices) of every operand (the sort's operands in
// order), and writes the comparator's pred (0 or 1) to the byte result[0] points at.
#ifndef EMBER_COMPILER_CODEGEN_SORT_EMITTER_H_
#define EMBER_COMPILER_CODEGEN_SORT_EMITTER_H_

#include <string>

#include "absl/status/status.h"
#include "compiler/passes/fusion_plan.h"
#include "llvm/IR/Module.h"

namespace ember::codegen {

// Whether EmitSortComparator takes `kernel`: SortKernelRefusal (sort_support.h).
absl::Status EmitSortComparator(const passes::Kernel& kernel, const std::string& name,
                                llvm::Module& module);

}  // namespace ember::codegen

#endif  // EMBER_COMPILER_CODEGEN_SORT_EMITTER_H_
