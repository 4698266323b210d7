// Which sorts the code generator compiles a comparator for (asked without LLVM, by backends
// planning kernels, and by the comparator emitter).
#ifndef EMBER_COMPILER_CODEGEN_SORT_SUPPORT_H_
#define EMBER_COMPILER_CODEGEN_SORT_SUPPORT_H_

#include <string>

#include "compiler/passes/fusion_plan.h"

namespace ember::codegen {

// Empty when EmitSortComparator (sort_emitter.h) takes `kernel`: a single sort of dense arrays
// of the emitter's types, one shape, whose comparator is a scalar region the elemental emitter
// takes (lhs_0, rhs_0, lhs_1, rhs_1, ... -> pred); else why not.
std::string SortKernelRefusal(const passes::Kernel& kernel);

}  // namespace ember::codegen

#endif  // EMBER_COMPILER_CODEGEN_SORT_SUPPORT_H_
