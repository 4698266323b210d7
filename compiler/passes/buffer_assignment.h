// Buffer assignment: where each value of an entry computation lives during a run, given a fusion
// plan (only kernel results are materialized). Temporaries share one arena per run: a value's
// slot is reused after its last reader ran (liveness over the kernel order), placed first fit in
// kernel order, or by decreasing size (arena_packing.h) when that packs tighter. Parameters stay
// in the caller's buffers, constants in the IR (placed once), program results get buffers of
// their own (handed to the caller), and non-array values (tokens, tuples) are kept aside. A
// result may be written straight into a donated parameter's memory when io_alias.h finds that
// safe, and a temporary into the memory of a temporary its kernel reads for the last time (an
// elementwise kernel over a dead input, an all-reduce over its operand), as XLA shares an
// operand's buffer with its user: the two are then one buffer, live from the first's definition
// to the second's last use. Values a row group makes and uses up itself need only a tile of
// rows at a time (kTile): they take no arena memory.
#ifndef EMBER_COMPILER_PASSES_BUFFER_ASSIGNMENT_H_
#define EMBER_COMPILER_PASSES_BUFFER_ASSIGNMENT_H_

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/types/span.h"

#include "compiler/passes/fusion_plan.h"

namespace ember::passes {

struct BufferSlot {
  // kTile: a value a row group writes and reads tile by tile and nothing outside the group
  // reads: each tile's rows live in a scratch of the group's thread, never in the arena.
  enum class Kind { kParameter, kConstant, kArena, kOutput, kOther, kTile };
  Kind kind = Kind::kOther;
  int64_t offset = 0;  // kArena: byte offset in the arena
  int64_t size = 0;    // bytes
  int index = 0;  // kParameter: parameter number; kOutput: first result position; kTile: group
  int defined_at = -1;  // kernel index
  int last_use = -1;    // kernel index (the end for results)
};

// A donated parameter whose memory result `result` may take (tf.aliasing_output, or a
// jax.buffer_donor matched to a result of its type).
struct IoAlias {
  int parameter = -1;
  int result = -1;
};

struct BufferAssignment {
  static constexpr int64_t kAlignment = 64;
  std::unordered_map<const ir::Value*, BufferSlot> slots;
  int64_t arena_bytes = 0;       // peak with reuse
  int64_t arena_bytes_no_reuse = 0;
  // Per entry result: the parameter whose memory the result is written into when the caller
  // donates it (the kernel writing the result then writes there), or -1.
  std::vector<int> result_aliases;
  // The candidates that were not kept, each with why (for the report).
  std::vector<std::pair<IoAlias, std::string>> refused_aliases;
  // Temporary -> the temporary whose memory it is written over (same offset).
  std::unordered_map<const ir::Value*, const ir::Value*> written_over;

  // One line per value: kind, offset, size, live range; the totals.
  std::string ToString(const ir::Computation& entry) const;
};

// `donations` are candidates; the result keeps those that are safe in the plan's kernel order
// (first come first served: a parameter and a result alias at most once).
BufferAssignment AssignBuffers(const ir::Computation& entry, const FusionPlan& plan,
                               absl::Span<const IoAlias> donations = {});

}  // namespace ember::passes

#endif  // EMBER_COMPILER_PASSES_BUFFER_ASSIGNMENT_H_
