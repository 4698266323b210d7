// Kernel scheduling for a low arena peak. The fusion plan lists kernels in program order; any
// topological order of the kernel dependency graph computes the same results, but the order
// decides which temporaries are live together, so it decides the arena's size (buffer
// assignment reuses a slot once its last reader ran).
//
// Like XLA's default memory scheduler, this tries several orders and keeps the one with the
// lowest simulated peak (buffer assignment itself is the simulation): program order; a list
// scheduler that runs the ready kernel freeing the most bytes net of what it allocates,
// finishing the chain it works on when that is a tie; and a post-order DFS from the results that
// computes the heaviest operand subtree first. Kernels with side effects (collectives, custom
// calls, rng, control flow, ...) keep their program order among themselves, so every device of
// a launch issues its collectives in the same order. With donated parameters, the candidates also
// include orders that run a parameter's readers before the kernel that overwrites it.
#ifndef EMBER_COMPILER_PASSES_SCHEDULE_H_
#define EMBER_COMPILER_PASSES_SCHEDULE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "compiler/passes/buffer_assignment.h"
#include "compiler/passes/fusion_plan.h"

namespace ember::passes {

// Which kernels must run before which: `preds[k]` are kernels whose results kernel k reads,
// plus the previous side-effecting kernel when k has side effects. Sorted, no duplicates.
std::vector<std::vector<int>> KernelDependencies(const FusionPlan& plan);

// True when `order` is a permutation of the plan's kernels that respects KernelDependencies.
bool IsValidSchedule(const FusionPlan& plan, absl::Span<const int> order);

// The candidate orders (each a permutation of kernel indices).
std::vector<int> ListSchedule(const ir::Computation& entry, const FusionPlan& plan);
std::vector<int> DfsSchedule(const ir::Computation& entry, const FusionPlan& plan);

// Renumbers the plan's kernels: new kernel i is old kernel order[i] (kernel_of follows).
void ReorderKernels(FusionPlan& plan, absl::Span<const int> order);

struct ScheduleReport {
  std::string chosen;              // "program", "list", "dfs" (+"+alias": AliasFriendlyDependencies)
  int64_t program_order_peak = 0;  // arena bytes in program order
  int64_t peak = 0;                // arena bytes in the chosen order
  std::string ToString() const;
};

// KernelDependencies plus, for each donation, edges that run the parameter's other readers
// before the kernel writing the result (where no dependency forces a reader after it), so the
// result can take the parameter's memory.
std::vector<std::vector<int>> AliasFriendlyDependencies(const ir::Computation& entry,
                                                        const FusionPlan& plan,
                                                        absl::Span<const IoAlias> donations);

// Reorders `plan` in place to the candidate needing the least memory: the arena peak, less the
// results that take a donated parameter's memory (buffer assignment decides which can, given
// `donations`). Program order wins ties.
ScheduleReport ScheduleForMemory(const ir::Computation& entry, FusionPlan& plan,
                                 absl::Span<const IoAlias> donations = {});

}  // namespace ember::passes

#endif  // EMBER_COMPILER_PASSES_SCHEDULE_H_
