// Buffer assignment: where each value of an entry computation lives during a run, given a fusion
// plan (only kernel results are materialized). Temporaries share one arena per run: a value's
// slot is reused after its last reader ran (liveness over the kernel order). Parameters stay in
// the caller's buffers, constants in the IR (placed once), program results get buffers of their
// own (handed to the caller), and non-array values (tokens, tuples) are kept aside.
#ifndef EMBER_COMPILER_PASSES_BUFFER_ASSIGNMENT_H_
#define EMBER_COMPILER_PASSES_BUFFER_ASSIGNMENT_H_

#include <string>
#include <unordered_map>

#include "compiler/passes/fusion_plan.h"

namespace ember::passes {

struct BufferSlot {
  enum class Kind { kParameter, kConstant, kArena, kOutput, kOther };
  Kind kind = Kind::kOther;
  int64_t offset = 0;  // kArena: byte offset in the arena
  int64_t size = 0;    // bytes
  int index = 0;       // kParameter: parameter number; kOutput: first result position
  int defined_at = -1;  // kernel index
  int last_use = -1;    // kernel index (the end for results)
};

struct BufferAssignment {
  static constexpr int64_t kAlignment = 64;
  std::unordered_map<const ir::Value*, BufferSlot> slots;
  int64_t arena_bytes = 0;       // peak with reuse
  int64_t arena_bytes_no_reuse = 0;

  // One line per value: kind, offset, size, live range; the totals.
  std::string ToString(const ir::Computation& entry) const;
};

BufferAssignment AssignBuffers(const ir::Computation& entry, const FusionPlan& plan);

}  // namespace ember::passes

#endif  // EMBER_COMPILER_PASSES_BUFFER_ASSIGNMENT_H_
