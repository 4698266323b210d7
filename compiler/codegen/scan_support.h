// Which cumulative reduce_windows the code generator compiles a combiner for (asked without
// LLVM, by backends planning kernels, and by the combiner emitter): the host's scan
// (CumulativeScanThunk) folds a body that is more than one op (logaddexp for cumlogsumexp, say)
// by calling the compiled body once per combination.
#ifndef EMBER_COMPILER_CODEGEN_SCAN_SUPPORT_H_
#define EMBER_COMPILER_CODEGEN_SCAN_SUPPORT_H_

#include <string>

#include "compiler/passes/fusion_plan.h"

namespace ember::codegen {

// Empty when EmitScanCombiner (scan_emitter.h) takes `kernel`: a single reduce_window of one
// dense array and a scalar init of its type (of at most 8 bytes), whose body is a scalar region
// the elemental emitter takes, (accumulator, element) -> one value of that type; else why not.
// (Whether the window is cumulative is the scan's question.)
std::string ScanCombinerRefusal(const passes::Kernel& kernel);

}  // namespace ember::codegen

#endif  // EMBER_COMPILER_CODEGEN_SCAN_SUPPORT_H_
