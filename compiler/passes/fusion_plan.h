// The fusion plan: which instructions of an entry computation run together as one kernel. It is a
// side structure over the IR (the IR itself is unchanged, so the evaluator still runs it) shared by
// the backends: loop kernels (elementwise, broadcast_in_dim, reshape, transpose, slice, convert,
// select, iota, compare chains computed per output element), reduction kernels (reduces with
// a single-op body over one input space, their input producers fused, and their elementwise
// epilogue over the output space), dot kernels, and single-instruction kernels for everything
// else (control flow, sort, scatter, gather, collectives, custom calls, ...). Loop and reduction
// kernels over the same space may have several outputs (multi-output fusion, kernel_merge.h).
// Constants are not kernels: they are placed once and read by the kernels that use them.
#ifndef EMBER_COMPILER_PASSES_FUSION_PLAN_H_
#define EMBER_COMPILER_PASSES_FUSION_PLAN_H_

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/ir/module.h"

namespace ember::passes {

enum class KernelKind { kLoop, kReduce, kDot, kSingle };
std::string_view KernelKindName(KernelKind kind);

struct Kernel {
  KernelKind kind = KernelKind::kSingle;
  // The kernel's instructions in program order; the last one is the root.
  std::vector<const ir::Instruction*> instructions;
  const ir::Instruction* root() const { return instructions.back(); }
  // What the kernel writes, in program order: the root's results and the results of its other
  // instructions that other kernels read or the program returns. A reduction kernel's reduce
  // results read only by its own epilogue are not outputs.
  std::vector<const ir::Value*> outputs;
  // Values read from outside the kernel (parameters, constants, other kernels' results), in
  // first-use order.
  std::vector<const ir::Value*> inputs;
  // Cost model (bytes): what the kernel reads and writes, and the least any implementation must
  // (each input and output once). An input counts once however many instructions read it; one
  // read through a broadcast counts once per broadcast element in `moved`, once in `minimum`.
  int64_t bytes_moved = 0;
  int64_t bytes_minimum = 0;
};

// What a backend can fuse: the plan only puts an instruction in a loop or reduction kernel when
// `fusible(instruction)` says the backend's fused kernels compute it.
using FusiblePredicate = std::function<bool(const ir::Instruction&)>;

// A row group: consecutive loop and reduction kernels [first, last] that all iterate over the same
// `rows` leading rows and read the results of the group's earlier kernels only within the row they
// compute (softmax: row max, exp(x - max), row sum, divide; layernorm likewise). A backend runs a
// group tile by tile: every kernel of the group on a block of rows before the next block, so the
// values passed inside the group are read back from cache, not memory. On a GPU a group is one
// kernel with a block per row tile. Formed by PlanRowGroups (row_groups.h).
struct RowGroup {
  int first = 0;
  int last = 0;
  int64_t rows = 0;
  int64_t row_bytes = 0;  // bytes one row of all the group's kernels reads and writes
};

struct FusionPlan {
  std::vector<Kernel> kernels;  // in an order that respects dependencies
  std::vector<RowGroup> row_groups;  // disjoint, in kernel order
  // Instruction -> index of the kernel that computes it. A cheap instruction (broadcast_in_dim,
  // iota) may be recomputed inside several kernels; it maps to one of them here.
  std::unordered_map<const ir::Instruction*, int> kernel_of;
  int64_t unfused_kernel_count = 0;  // one kernel per non-constant instruction, for reference

  // Graphviz: one cluster per kernel, edges between kernels labelled with the bytes passed.
  std::string ToDot(const std::string& name) const;
  // Per kernel: kind, root, instruction count, bytes moved vs. minimum; totals at the end.
  std::string CostReport() const;
};

struct FusionOptions {
  // Sibling, producer-consumer and epilogue merges of loop and reduction kernels (kernel_merge.h).
  bool multi_output = true;
};

FusionPlan PlanFusion(const ir::Computation& entry, const FusiblePredicate& loop_fusible,
                      const FusiblePredicate& reduce_fusible, const FusiblePredicate& dot_kernel,
                      const FusionOptions& options = {});

}  // namespace ember::passes

#endif  // EMBER_COMPILER_PASSES_FUSION_PLAN_H_
