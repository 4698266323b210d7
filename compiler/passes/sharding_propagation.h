// sharding-propagation: gives every array value of an SPMD program's entry (and of the while,
// if, case and call bodies it runs) a sharding, from the shardings the program states: entry
// arguments and results, sharding constraints (`sdy.sharding_constraint` and GSPMD "Sharding"
// custom calls), `mhlo.sharding` on ops, and manual computations' in/out shardings. Each op's
// sharding rule (sharding_rules.h) says which dimensions of its operands and results are split
// alike; splits flow forward and backward through the rules to a fixed point.
//
// The result, for the partitioner, is written as typed shardings (ir::TensorSharding over the
// program's one mesh, every dimension closed, no priorities):
//   - kShardingsAttribute on each instruction with results: a list with one sharding per result
//     (a non-array result: {replicated});
//   - kShardingAttribute in Computation::arg_attributes() for each parameter of the entry and of
//     the bodies, and in the entry's result_attributes() for each result (what the caller wants,
//     which may differ from the returned value's: the partitioner reshards there).
// A sharding's unreduced axes mark a partial result: the op sums over a factor split along those
// axes (a dot's contracting dimension, a reduce's reduced one), so each device holds a partial
// sum and an all-reduce (or reduce-scatter) over those axes must come before any use. Unreduced
// axes are never propagated: consumers see the value's dimension splits only.
//
// Rules: a conflict between two splits of one factor goes to the dimension with the better
// (lower) priority, then to the larger split, then to the earlier operand (results after
// operands); a split carries its dimension's priority to the dimensions it reaches. Splits are
// only ever extended (a dimension split "x" may become "x","y", never "y"), closed dimensions
// never change, an axis splits at most one dimension of a tensor, and a split always divides
// its dimension. An axis already unreduced in a result is not also used to split it; where a
// result dimension took the axis first, the sum is not marked unreduced and the partitioner,
// which sees the operands split along a summed factor, reduce-scatters into that dimension.
// The body of a manual computation (shard_map) that leaves mesh axes free is entered: its values
// (blocks along the manual axes) are split along the free axes only, tied to the computation's
// operands and results dimension by dimension (a dimension the manual axes split is their factor
// times the block's), its collectives (over manual axes) keep the free splits of the dimensions
// they do not move (sharding_rules.h ManualCollectiveRule), and the free axes its operands and
// results gain are appended to its in_shardings and out_shardings.
// Ops without a rule get replicated results. Errors (a sharding naming an axis not in its
// mesh, splitting a dimension unevenly, of the wrong rank, shardings over two different
// meshes) are Status values naming the op or argument.
#ifndef EMBER_COMPILER_PASSES_SHARDING_PROPAGATION_H_
#define EMBER_COMPILER_PASSES_SHARDING_PROPAGATION_H_

#include <memory>

#include "compiler/passes/pass.h"

namespace ember::passes {

inline constexpr char kShardingsAttribute[] = "ember.shardings";
inline constexpr char kShardingAttribute[] = "ember.sharding";

// Run by spmd-partition (pass.h), which reads its result and then clears it. A program with no
// split sharding anywhere is left unchanged.
std::unique_ptr<Pass> CreateShardingPropagationPass();

}  // namespace ember::passes

#endif  // EMBER_COMPILER_PASSES_SHARDING_PROPAGATION_H_
