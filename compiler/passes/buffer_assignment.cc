#include "compiler/passes/buffer_assignment.h"

#include <algorithm>
#include <map>
#include <unordered_set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/passes/arena_packing.h"
#include "compiler/passes/io_alias.h"

namespace ember::passes {
namespace {

int64_t Align(int64_t n) {
  return (n + BufferAssignment::kAlignment - 1) / BufferAssignment::kAlignment *
         BufferAssignment::kAlignment;
}

// First-fit allocator over [0, inf) with coalescing free ranges.
class ArenaAllocator {
 public:
  int64_t Allocate(int64_t size) {
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second >= size) {
        const int64_t offset = it->first;
        const int64_t rest = it->second - size;
        free_.erase(it);
        if (rest > 0) free_[offset + size] = rest;
        return offset;
      }
    }
    // Grow: extend a free block at the end if there is one.
    if (!free_.empty()) {
      auto last = std::prev(free_.end());
      if (last->first + last->second == top_) {
        const int64_t offset = last->first;
        free_.erase(last);
        top_ = offset + size;
        return offset;
      }
    }
    const int64_t offset = top_;
    top_ += size;
    return offset;
  }
  void Free(int64_t offset, int64_t size) {
    auto [it, inserted] = free_.emplace(offset, size);
    (void)inserted;
    auto next = std::next(it);
    if (next != free_.end() && it->first + it->second == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        free_.erase(it);
      }
    }
  }
  int64_t top() const { return top_; }

 private:
  std::map<int64_t, int64_t> free_;
  int64_t top_ = 0;
};

}  // namespace

BufferAssignment AssignBuffers(const ir::Computation& entry, const FusionPlan& plan,
                               absl::Span<const IoAlias> donations) {
  BufferAssignment result;
  const int end = static_cast<int>(plan.kernels.size());
  for (size_t i = 0; i < entry.parameters().size(); ++i) {
    BufferSlot slot;
    slot.kind = BufferSlot::Kind::kParameter;
    slot.index = static_cast<int>(i);
    slot.size = entry.parameter(i)->type().is_tensor() ? entry.parameter(i)->type().shape().ByteSize() : 0;
    result.slots[entry.parameter(i)] = slot;
  }
  for (const auto& inst : entry.instructions()) {
    if (inst->opcode() != ir::Opcode::kConstant) continue;
    BufferSlot slot;
    slot.kind = BufferSlot::Kind::kConstant;
    slot.size = inst->result()->type().shape().ByteSize();
    result.slots[inst->result()] = slot;
  }
  // Kernel results and their live ranges.
  std::vector<const ir::Value*> defined;
  for (int k = 0; k < end; ++k) {
    for (const ir::Value* v : plan.kernels[k].outputs) {
      BufferSlot slot;
      slot.kind = v->type().is_tensor() ? BufferSlot::Kind::kArena : BufferSlot::Kind::kOther;
      slot.size = v->type().is_tensor() ? v->type().shape().ByteSize() : 0;
      slot.defined_at = k;
      slot.last_use = k;
      result.slots[v] = slot;
      defined.push_back(v);
    }
  }
  for (int k = 0; k < end; ++k) {
    for (const ir::Value* v : plan.kernels[k].inputs) {
      auto it = result.slots.find(v);
      if (it != result.slots.end()) it->second.last_use = std::max(it->second.last_use, k);
    }
  }
  if (const ir::Instruction* ret = entry.return_instruction()) {
    for (size_t i = 0; i < ret->operands().size(); ++i) {
      auto it = result.slots.find(ret->operand(i));
      if (it == result.slots.end()) continue;
      it->second.last_use = end;
      if (it->second.kind == BufferSlot::Kind::kArena) {
        it->second.kind = BufferSlot::Kind::kOutput;
        it->second.index = static_cast<int>(i);
      }
    }
  }
  // A value a row group writes and only the group reads (a softmax's exponentials, a layer
  // norm's centred rows) is made and used up tile by tile: a tile's scratch holds it.
  for (size_t g = 0; g < plan.row_groups.size(); ++g) {
    const RowGroup& group = plan.row_groups[g];
    for (const ir::Value* v : defined) {
      BufferSlot& slot = result.slots[v];
      if (slot.kind != BufferSlot::Kind::kArena || slot.defined_at < group.first ||
          slot.defined_at > group.last || slot.last_use > group.last || group.rows <= 0 ||
          slot.size % group.rows != 0) {
        continue;
      }
      // Rows lead: the value's first dimensions multiply to the group's rows.
      int64_t lead = 1;
      for (int64_t d : v->type().dims()) {
        if (lead >= group.rows) break;
        lead *= d;
      }
      if (lead != group.rows) continue;
      slot.kind = BufferSlot::Kind::kTile;
      slot.index = static_cast<int>(g);
    }
  }
  // A row group runs its kernels interleaved, a tile of rows at a time: every value it writes or
  // reads is live from the group's first kernel to its last.
  for (const RowGroup& group : plan.row_groups) {
    for (const ir::Value* v : defined) {
      BufferSlot& slot = result.slots[v];
      if (slot.defined_at >= group.first && slot.defined_at <= group.last) {
        slot.defined_at = group.first;
      }
      if (slot.defined_at <= group.last && slot.last_use >= group.first) {
        slot.last_use = std::max(slot.last_use, group.last);
      }
    }
  }
  // In place: an arena output of a kernel may take the memory of an arena temporary the kernel
  // reads for the last time (io_alias.h says when that is safe). Kernels of a row group run
  // interleaved, tile by tile, so they write nothing over their inputs.
  std::vector<bool> grouped(end, false);
  for (const RowGroup& group : plan.row_groups) {
    for (int k = group.first; k <= group.last && k < end; ++k) grouped[k] = true;
  }
  std::unordered_set<const ir::Value*> taken;
  for (int k = 0; k < end; ++k) {
    if (grouped[k]) continue;
    const Kernel& kernel = plan.kernels[k];
    for (const ir::Value* out : kernel.outputs) {
      const BufferSlot& o = result.slots[out];
      if (o.kind != BufferSlot::Kind::kArena) continue;
      for (const ir::Value* in : kernel.inputs) {
        auto it = result.slots.find(in);
        if (it == result.slots.end() || it->second.kind != BufferSlot::Kind::kArena ||
            it->second.last_use != k || it->second.defined_at >= k ||
            Align(it->second.size) != Align(o.size) || taken.contains(in) ||
            !WhyNotWrittenOver(kernel, k, in, out).empty()) {
          continue;
        }
        taken.insert(in);
        result.written_over[out] = in;
        break;
      }
    }
  }
  // One buffer per chain of values written over each other, named by its first value and live
  // until the last one's last use.
  auto first_of = [&](const ir::Value* v) {
    for (auto it = result.written_over.find(v); it != result.written_over.end();
         it = result.written_over.find(v)) {
      v = it->second;
    }
    return v;
  };
  std::unordered_map<const ir::Value*, int> buffer_end;
  for (const ir::Value* v : defined) {
    const BufferSlot& slot = result.slots[v];
    if (slot.kind != BufferSlot::Kind::kArena) continue;
    result.arena_bytes_no_reuse += Align(slot.size);
    int& last = buffer_end[first_of(v)];
    last = std::max(last, slot.last_use);
  }
  // Allocate in kernel order; a buffer is freed after its last reader (never during it: a
  // kernel's output overlaps an input only where it is written over it, above).
  ArenaAllocator arena;
  std::vector<std::vector<const ir::Value*>> allocations(end + 1);
  std::vector<std::vector<const ir::Value*>> frees(end + 1);
  for (const ir::Value* v : defined) {
    const BufferSlot& slot = result.slots[v];
    if (slot.kind != BufferSlot::Kind::kArena || result.written_over.contains(v)) continue;
    allocations[slot.defined_at].push_back(v);
    frees[buffer_end.at(v)].push_back(v);
  }
  for (int k = 0; k < end; ++k) {
    for (const ir::Value* v : allocations[k]) {
      BufferSlot& slot = result.slots[v];
      slot.offset = arena.Allocate(Align(slot.size));
    }
    for (const ir::Value* v : frees[k]) {
      const BufferSlot& slot = result.slots[v];
      arena.Free(slot.offset, Align(slot.size));
    }
  }
  result.arena_bytes = arena.top();
  // Placing by size over the whole live ranges may leave fewer holes: keep the smaller arena.
  // (Quadratic in the number of temporaries, so only for programs of reasonable size.)
  std::vector<LiveInterval> intervals;
  std::vector<const ir::Value*> owners;
  for (const ir::Value* v : defined) {
    const BufferSlot& slot = result.slots[v];
    if (slot.kind != BufferSlot::Kind::kArena || result.written_over.contains(v)) continue;
    intervals.push_back({Align(slot.size), slot.defined_at, buffer_end.at(v), 0});
    owners.push_back(v);
  }
  if (intervals.size() <= 8192) {
    const int64_t packed = PackBySizeBestFit(intervals);
    if (packed < result.arena_bytes) {
      result.arena_bytes = packed;
      for (size_t i = 0; i < owners.size(); ++i) result.slots[owners[i]].offset = intervals[i].offset;
    }
  }
  for (const auto& [v, over] : result.written_over) {
    result.slots[v].offset = result.slots[first_of(v)].offset;
  }
  const int num_results =
      entry.return_instruction() != nullptr
          ? static_cast<int>(entry.return_instruction()->operands().size())
          : 0;
  result.result_aliases.assign(num_results, -1);
  std::vector<bool> donated(entry.parameters().size(), false);
  for (const IoAlias& alias : donations) {
    if (alias.result < 0 || alias.result >= num_results || alias.parameter < 0 ||
        static_cast<size_t>(alias.parameter) >= donated.size()) {
      continue;
    }
    if (result.result_aliases[alias.result] >= 0 || donated[alias.parameter]) continue;
    std::string why_not = WhyNotAliased(entry, plan, result, alias);
    if (!why_not.empty()) {
      result.refused_aliases.emplace_back(alias, std::move(why_not));
      continue;
    }
    result.result_aliases[alias.result] = alias.parameter;
    donated[alias.parameter] = true;
  }
  return result;
}

std::string BufferAssignment::ToString(const ir::Computation& entry) const {
  std::string out = absl::StrCat("arena: ", arena_bytes, " bytes (", arena_bytes_no_reuse,
                                 " without reuse)\n");
  int number = 0;
  std::unordered_map<const ir::Value*, int> names;
  for (const auto& p : entry.parameters()) names[p.get()] = number++;
  for (const auto& inst : entry.instructions()) {
    for (size_t i = 0; i < inst->num_results(); ++i) names[inst->result(i)] = number++;
  }
  std::vector<std::pair<int, const ir::Value*>> sorted;
  for (const auto& [v, slot] : slots) sorted.emplace_back(names[v], v);
  std::sort(sorted.begin(), sorted.end());
  static constexpr const char* kKinds[] = {"parameter", "constant", "arena",
                                           "output",    "other",    "tile"};
  for (const auto& [n, v] : sorted) {
    const BufferSlot& s = slots.at(v);
    absl::StrAppend(&out, "%", n, " ", v->type().ToString(), " ", kKinds[static_cast<int>(s.kind)]);
    if (s.kind == BufferSlot::Kind::kArena) absl::StrAppend(&out, " offset=", s.offset);
    if (auto over = written_over.find(v); over != written_over.end()) {
      absl::StrAppend(&out, " over=%", names[over->second]);
    }
    if (s.kind == BufferSlot::Kind::kParameter || s.kind == BufferSlot::Kind::kOutput) {
      absl::StrAppend(&out, " index=", s.index);
    }
    absl::StrAppend(&out, " size=", s.size);
    if (s.defined_at >= 0) absl::StrAppend(&out, " live=[", s.defined_at, ",", s.last_use, "]");
    absl::StrAppend(&out, "\n");
  }
  for (size_t r = 0; r < result_aliases.size(); ++r) {
    if (result_aliases[r] >= 0) {
      absl::StrAppend(&out, "result ", r, " is written into parameter ", result_aliases[r],
                      " when it is donated\n");
    }
  }
  for (const auto& [alias, why_not] : refused_aliases) {
    absl::StrAppend(&out, "result ", alias.result, " gets its own buffer, not parameter ",
                    alias.parameter, "'s: ", why_not, "\n");
  }
  return out;
}

}  // namespace ember::passes
