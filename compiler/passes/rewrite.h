// Rewriting helpers shared by the passes. Ember's IR appends instructions and removes them, but
// never inserts in the middle, so a pass that adds instructions rebuilds the computation in order
// (RebuildComputation); a pass that only redirects uses calls ReplaceUses. Regions may read
// values of the computations around them (implicit captures), so use maps always cover the
// whole module.
#ifndef EMBER_COMPILER_PASSES_REWRITE_H_
#define EMBER_COMPILER_PASSES_REWRITE_H_

#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/module.h"

namespace ember::passes {

using ValueMap = std::unordered_map<const ir::Value*, ir::Value*>;

// Points every operand in the module that is a key of `replacements` at its value (following
// chains a -> b -> c). Returns how many operands changed.
int64_t ReplaceUses(ir::Module& module, const ValueMap& replacements);

// Uses of every value across the module (operands of all computations, regions included).
std::unordered_map<const ir::Value*, int64_t> CountUses(const ir::Module& module);

// A GSPMD sharding constraint: custom_call @Sharding (the value itself, annotated).
bool IsShardingConstraint(const ir::Instruction& instruction);

// True for instructions that must not be removed, merged or evaluated at compile time:
// side effects, collectives, randomness, host callbacks, tokens.
bool HasSideEffects(const ir::Instruction& instruction);

// The integer-list attribute `name` of `instruction` (kind kInts), else null.
const std::vector<int64_t>* IntsAttribute(const ir::Instruction& instruction,
                                          std::string_view name);

// The value of `v` when a constant instruction produces it, else null.
const ir::Literal* ConstantLiteral(const ir::Value* v);

// The values `instruction` reads, including captures of the regions it runs (operands of
// instructions in its regions, transitively, that belong to another computation).
void CollectCapturedValues(const ir::Computation& region, std::vector<const ir::Value*>& out);

// Builder state while a computation is rebuilt.
class Rebuilder {
 public:
  explicit Rebuilder(ir::Computation& computation) : computation_(computation) {}
  ir::Computation& computation() { return computation_; }
  // The value that replaces `old` (itself when it is not remapped).
  ir::Value* Map(ir::Value* old) const;
  void SetMapping(const ir::Value* old, ir::Value* replacement) { map_[old] = replacement; }
  // Appends a copy of `instruction` (same opcode, attributes, regions, callee, location) with
  // mapped operands, and maps its results.
  // With `local`, operands are looked up there first and the results are mapped there (inlining
  // a callee body must not remap the callee's own values module-wide).
  // With `clone_regions`, the copy gets its own copies of the regions (an op region belongs to
  // one op; inlining copies a callee body that stays in use).
  ir::Instruction* Clone(const ir::Instruction& instruction, ValueMap* local = nullptr,
                         bool clone_regions = false);
  const ValueMap& map() const { return map_; }

 private:
  ir::Computation& computation_;
  ValueMap map_;
};

// A deep copy of op region `region` in `module` (nested regions included). Values of enclosing
// computations that the region reads are mapped through `map` (kept as they are when absent).
ir::Computation* CloneRegion(ir::Module& module, const ir::Computation& region, ValueMap& map);
// Points the operands of `region`'s instructions (nested regions included) that are keys of
// `map` at their values.
void ReplaceOperandsInRegion(ir::Computation& region, const ValueMap& map);

// Rebuilds `computation` in order: for each instruction, `emit` either appends replacements
// through the rebuilder (mapping the old results with SetMapping) and returns true, or returns
// false and the instruction is cloned. Old instructions are then removed and every use in the
// module (captures included) is redirected.
using EmitFn = std::function<absl::StatusOr<bool>(const ir::Instruction&, Rebuilder&)>;
absl::Status RebuildComputation(ir::Computation& computation, const EmitFn& emit);

}  // namespace ember::passes

#endif  // EMBER_COMPILER_PASSES_REWRITE_H_
