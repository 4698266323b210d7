// Multi-output fusion over the kernels of a fusion plan (used by PlanFusion): loop and reduction
// kernels that iterate over the same space merge into one kernel with several outputs, and the
// elementwise epilogue of a reduction joins the reduction's kernel.
#ifndef EMBER_COMPILER_PASSES_KERNEL_MERGE_H_
#define EMBER_COMPILER_PASSES_KERNEL_MERGE_H_

#include <unordered_map>
#include <vector>

#include "compiler/passes/fusion_plan.h"

namespace ember::passes {

// `kernels` (kind and instructions set; in a dependency-respecting order) and `kernel_of` (each
// instruction -> the kernel that computes it) as the first stage of PlanFusion leaves them. Merges,
// until none applies, a kernel `b` into an earlier kernel `a` when
//  - siblings: no path between them, both read a common input, and they iterate over the same
//    space (loop + loop: the same output dims; reduce + reduce: the same input dims, reduced dims
//    and output dims; loop + reduce: the loop's output dims are the reduce's input dims);
//  - producer into consumer: `b` reads `a`'s results only elementwise in the same space (a loop
//    `a` into a loop `b` of its dims or into the input side of a reduction `b`), and through no
//    other kernel;
//  - epilogue: `a` is a reduction and `b` a loop kernel whose instructions all have the reduce's
//    output element count and read `a`'s reduce results (or its epilogue) only at the same linear
//    index, and through no other kernel.
// The kernels are then reordered (dependencies first, otherwise by their last instruction) and
// kernel_of renumbered. Kernel::inputs and the costs are left for the caller to compute.
void MergeKernels(const ir::Computation& entry, std::vector<Kernel>& kernels,
                  std::unordered_map<const ir::Instruction*, int>& kernel_of);

}  // namespace ember::passes

#endif  // EMBER_COMPILER_PASSES_KERNEL_MERGE_H_
