// When a result may be written straight into a donated parameter's memory. The caller hands the
// parameter's buffer over as the result's buffer, so the kernel that writes the result writes
// over the parameter. That is safe when nothing reads the parameter afterwards: every kernel
// reading it runs before the writer (a row group's kernels count as one writer: they run tile by
// tile), except the writer itself when it reads the parameter only at the element it is writing
// (a chain of elementwise ops of the parameter's shape in a loop kernel, or in a reduction
// kernel's epilogue: an optimizer's update fused with the reduction giving its gradient) and only
// to compute this result (fused kernels store outputs one by one, reading parameters straight
// from their buffers). The result must be written by a kernel (not a parameter or constant
// returned as is), the parameter must not be returned, and both must take the same number of
// bytes.
#ifndef EMBER_COMPILER_PASSES_IO_ALIAS_H_
#define EMBER_COMPILER_PASSES_IO_ALIAS_H_

#include <string>

#include "compiler/passes/buffer_assignment.h"
#include "compiler/passes/fusion_plan.h"

namespace ember::passes {

// Empty when `alias` is safe with `buffers` (slots and live ranges over the plan's kernel
// order); otherwise why not, for reports and tests.
std::string WhyNotAliased(const ir::Computation& entry, const FusionPlan& plan,
                          const BufferAssignment& buffers, const IoAlias& alias);

// Does `kernel` read `parameter` only at the index of the element it writes?
bool ReadsOnlySameElement(const Kernel& kernel, const ir::Value* parameter);

// Empty when `kernel` (number `index`, for the message) may write its output `out` over the
// memory of `in`, a value it reads and that no later kernel reads: both of one shape, and the
// kernel reads `in` only at the element it writes and only to compute `out` (as above), or it is
// an all-reduce whose operand `in` is summed into its result `out` (every transport reads a
// rank's send before it writes its recv: collectives.h). Otherwise why not. Donated parameters
// (WhyNotAliased) and temporaries that die in their reader (buffer_assignment.h) use it.
std::string WhyNotWrittenOver(const Kernel& kernel, int index, const ir::Value* in,
                              const ir::Value* out);

}  // namespace ember::passes

#endif  // EMBER_COMPILER_PASSES_IO_ALIAS_H_
