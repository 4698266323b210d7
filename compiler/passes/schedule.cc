#include "compiler/passes/schedule.h"

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/passes/buffer_assignment.h"
#include "compiler/passes/rewrite.h"

namespace ember::passes {
namespace {

// Bytes a value takes in the arena (buffer assignment aligns every slot).
int64_t ArenaBytes(const ir::Value* v) {
  if (!v->type().is_tensor()) return 0;
  const int64_t a = BufferAssignment::kAlignment;
  return (v->type().shape().ByteSize() + a - 1) / a * a;
}

bool KernelHasSideEffects(const Kernel& kernel) {
  for (const ir::Instruction* inst : kernel.instructions) {
    if (HasSideEffects(*inst)) return true;
  }
  return false;
}

// Values kernel k reads: its inputs and what the regions of its instructions capture.
std::vector<const ir::Value*> KernelReads(const Kernel& kernel) {
  std::vector<const ir::Value*> reads = kernel.inputs;
  for (const ir::Instruction* inst : kernel.instructions) {
    for (const ir::Computation* region : inst->regions()) CollectCapturedValues(*region, reads);
  }
  return reads;
}

// What the schedulers need to know about values: which kernel defines each kernel result, and
// which of them live in the arena (kernel results that are not program results).
struct ValueInfo {
  std::unordered_map<const ir::Value*, int> defined_by;
  std::unordered_set<const ir::Value*> returned;

  ValueInfo(const ir::Computation& entry, const FusionPlan& plan) {
    for (size_t k = 0; k < plan.kernels.size(); ++k) {
      for (const ir::Value* v : plan.kernels[k].outputs) {
        defined_by.emplace(v, static_cast<int>(k));
      }
    }
    if (const ir::Instruction* ret = entry.return_instruction()) {
      returned.insert(ret->operands().begin(), ret->operands().end());
    }
  }
  bool InArena(const ir::Value* v) const {
    return v->type().is_tensor() && defined_by.contains(v) && !returned.contains(v);
  }
};

// Kahn's order over `preds` (program order among ready kernels).
std::vector<int> TopologicalOrder(const std::vector<std::vector<int>>& preds) {
  const int n = static_cast<int>(preds.size());
  std::vector<std::vector<int>> succs(n);
  std::vector<int> waiting(n, 0);
  for (int k = 0; k < n; ++k) {
    waiting[k] = static_cast<int>(preds[k].size());
    for (int p : preds[k]) succs[p].push_back(k);
  }
  std::vector<int> order;
  for (int k = 0; k < n; ++k) {
    if (waiting[k] == 0) order.push_back(k);
  }
  for (size_t i = 0; i < order.size(); ++i) {
    for (int s : succs[order[i]]) {
      if (--waiting[s] == 0) order.push_back(s);
    }
  }
  return order;
}

int64_t SaturatingAdd(int64_t a, int64_t b) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 2;
  return a > kMax - b ? kMax : a + b;
}

}  // namespace

std::vector<std::vector<int>> KernelDependencies(const FusionPlan& plan) {
  std::unordered_map<const ir::Value*, int> defined_by;
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    for (const ir::Value* v : plan.kernels[k].outputs) {
      defined_by.emplace(v, static_cast<int>(k));
    }
  }
  std::vector<std::vector<int>> preds(plan.kernels.size());
  int last_ordered = -1;
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    std::vector<int>& p = preds[k];
    for (const ir::Value* v : KernelReads(plan.kernels[k])) {
      auto it = defined_by.find(v);
      if (it != defined_by.end() && it->second != static_cast<int>(k)) p.push_back(it->second);
    }
    if (KernelHasSideEffects(plan.kernels[k])) {
      if (last_ordered >= 0) p.push_back(last_ordered);
      last_ordered = static_cast<int>(k);
    }
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
  }
  return preds;
}

bool IsValidSchedule(const FusionPlan& plan, absl::Span<const int> order) {
  const size_t n = plan.kernels.size();
  if (order.size() != n) return false;
  std::vector<int> position(n, -1);
  for (size_t i = 0; i < n; ++i) {
    if (order[i] < 0 || static_cast<size_t>(order[i]) >= n || position[order[i]] >= 0) return false;
    position[order[i]] = static_cast<int>(i);
  }
  const std::vector<std::vector<int>> preds = KernelDependencies(plan);
  for (size_t k = 0; k < n; ++k) {
    for (int p : preds[k]) {
      if (position[p] >= position[k]) return false;
    }
  }
  return true;
}

namespace {

std::vector<int> ListScheduleOver(const ir::Computation& entry, const FusionPlan& plan,
                                  const std::vector<std::vector<int>>& preds) {
  const int n = static_cast<int>(plan.kernels.size());
  const ValueInfo info(entry, plan);
  std::vector<std::vector<int>> succs(n);
  std::vector<int> waiting(n, 0);
  for (int k = 0; k < n; ++k) {
    waiting[k] = static_cast<int>(preds[k].size());
    for (int p : preds[k]) succs[p].push_back(k);
  }
  // How many unscheduled kernels still read each arena value.
  std::unordered_map<const ir::Value*, int> readers;
  std::vector<std::vector<const ir::Value*>> arena_reads(n);
  for (int k = 0; k < n; ++k) {
    std::vector<const ir::Value*> reads = KernelReads(plan.kernels[k]);
    std::sort(reads.begin(), reads.end());
    reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
    for (const ir::Value* v : reads) {
      if (!info.InArena(v)) continue;
      arena_reads[k].push_back(v);
      ++readers[v];
    }
  }
  std::vector<int64_t> allocates(n, 0);
  for (int k = 0; k < n; ++k) {
    for (const ir::Value* v : plan.kernels[k].outputs) {
      if (info.InArena(v)) allocates[k] += ArenaBytes(v);
    }
  }
  std::vector<int> position(n, -1);
  std::vector<int> ready;
  for (int k = 0; k < n; ++k) {
    if (waiting[k] == 0) ready.push_back(k);
  }
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    // Net bytes the kernel releases; on a tie, the kernel whose latest input came last (finish
    // the chain at hand), then program order.
    size_t best = 0;
    int64_t best_gain = 0;
    int best_recent = 0;
    for (size_t i = 0; i < ready.size(); ++i) {
      const int k = ready[i];
      int64_t gain = -allocates[k];
      for (const ir::Value* v : arena_reads[k]) {
        if (readers[v] == 1) gain += ArenaBytes(v);
      }
      int recent = -1;
      for (int p : preds[k]) recent = std::max(recent, position[p]);
      const bool better = i == 0 || gain > best_gain ||
                          (gain == best_gain && (recent > best_recent ||
                                                 (recent == best_recent && k < ready[best])));
      if (better) {
        best = i;
        best_gain = gain;
        best_recent = recent;
      }
    }
    const int k = ready[best];
    ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(best));
    position[k] = static_cast<int>(order.size());
    order.push_back(k);
    for (const ir::Value* v : arena_reads[k]) --readers[v];
    for (int s : succs[k]) {
      if (--waiting[s] == 0) ready.push_back(s);
    }
  }
  return order;
}

std::vector<int> DfsScheduleOver(const ir::Computation& entry, const FusionPlan& plan,
                                 const std::vector<std::vector<int>>& preds) {
  const int n = static_cast<int>(plan.kernels.size());
  const ValueInfo info(entry, plan);
  // The memory a kernel's operand subtree needs, roughly: its results plus its operands'
  // subtrees (shared subtrees count more than once; only the ranking matters).
  std::vector<int64_t> subtree(n, 0);
  for (int k : TopologicalOrder(preds)) {
    for (const ir::Value* v : plan.kernels[k].outputs) {
      subtree[k] = SaturatingAdd(subtree[k], ArenaBytes(v));
    }
    for (int p : preds[k]) subtree[k] = SaturatingAdd(subtree[k], subtree[p]);
  }
  std::vector<std::vector<int>> visit_order = preds;
  for (auto& ps : visit_order) {
    std::stable_sort(ps.begin(), ps.end(), [&](int a, int b) { return subtree[a] > subtree[b]; });
  }
  std::vector<int> roots;
  if (const ir::Instruction* ret = entry.return_instruction()) {
    for (const ir::Value* v : ret->operands()) {
      auto it = info.defined_by.find(v);
      if (it != info.defined_by.end()) roots.push_back(it->second);
    }
  }
  for (int k = 0; k < n; ++k) roots.push_back(k);  // kernels no result needs, in program order
  std::vector<bool> visited(n, false);
  std::vector<int> order;
  order.reserve(n);
  std::vector<std::pair<int, size_t>> stack;  // kernel, next operand to visit
  for (int root : roots) {
    if (visited[root]) continue;
    visited[root] = true;
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      auto& [k, next] = stack.back();
      if (next < visit_order[k].size()) {
        const int p = visit_order[k][next++];
        if (!visited[p]) {
          visited[p] = true;
          stack.emplace_back(p, 0);
        }
        continue;
      }
      order.push_back(k);
      stack.pop_back();
    }
  }
  return order;
}

// Is `to` reachable from `from` along successor edges?
bool Reaches(const std::vector<std::vector<int>>& succs, int from, int to) {
  std::vector<bool> seen(succs.size(), false);
  std::vector<int> stack = {from};
  seen[from] = true;
  while (!stack.empty()) {
    const int k = stack.back();
    stack.pop_back();
    if (k == to) return true;
    for (int s : succs[k]) {
      if (!seen[s]) {
        seen[s] = true;
        stack.push_back(s);
      }
    }
  }
  return false;
}

}  // namespace

std::vector<int> ListSchedule(const ir::Computation& entry, const FusionPlan& plan) {
  return ListScheduleOver(entry, plan, KernelDependencies(plan));
}

std::vector<int> DfsSchedule(const ir::Computation& entry, const FusionPlan& plan) {
  return DfsScheduleOver(entry, plan, KernelDependencies(plan));
}

std::vector<std::vector<int>> AliasFriendlyDependencies(const ir::Computation& entry,
                                                        const FusionPlan& plan,
                                                        absl::Span<const IoAlias> donations) {
  std::vector<std::vector<int>> preds = KernelDependencies(plan);
  const ir::Instruction* ret = entry.return_instruction();
  if (ret == nullptr) return preds;
  const ValueInfo info(entry, plan);
  const int n = static_cast<int>(plan.kernels.size());
  std::vector<std::vector<int>> succs(n);
  for (int k = 0; k < n; ++k) {
    for (int p : preds[k]) succs[p].push_back(k);
  }
  for (const IoAlias& alias : donations) {
    if (alias.parameter < 0 || static_cast<size_t>(alias.parameter) >= entry.parameters().size() ||
        alias.result < 0 || static_cast<size_t>(alias.result) >= ret->operands().size()) {
      continue;
    }
    auto writer = info.defined_by.find(ret->operand(alias.result));
    if (writer == info.defined_by.end()) continue;
    const int w = writer->second;
    const ir::Value* param = entry.parameter(alias.parameter);
    for (int k = 0; k < n; ++k) {
      if (k == w) continue;
      const std::vector<const ir::Value*> reads = KernelReads(plan.kernels[k]);
      if (std::find(reads.begin(), reads.end(), param) == reads.end()) continue;
      // The reader must run before the writer, unless it needs the writer's work (then no
      // order makes the alias safe).
      if (Reaches(succs, w, k)) continue;
      preds[w].push_back(k);
      succs[k].push_back(w);
    }
    std::sort(preds[w].begin(), preds[w].end());
    preds[w].erase(std::unique(preds[w].begin(), preds[w].end()), preds[w].end());
  }
  return preds;
}

void ReorderKernels(FusionPlan& plan, absl::Span<const int> order) {
  std::vector<int> renumber(order.size());
  std::vector<Kernel> kernels;
  kernels.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    renumber[order[i]] = static_cast<int>(i);
    kernels.push_back(std::move(plan.kernels[order[i]]));
  }
  plan.kernels = std::move(kernels);
  for (auto& [inst, k] : plan.kernel_of) k = renumber[k];
}

std::string ScheduleReport::ToString() const {
  return absl::StrCat("schedule: ", chosen, " (arena peak ", peak, " bytes; program order ",
                      program_order_peak, ")");
}

ScheduleReport ScheduleForMemory(const ir::Computation& entry, FusionPlan& plan,
                                 absl::Span<const IoAlias> donations) {
  // Memory an order needs: the arena, plus results that cannot take a donated parameter's place.
  auto cost = [&](const FusionPlan& p, int64_t* arena) {
    const BufferAssignment buffers = AssignBuffers(entry, p, donations);
    *arena = buffers.arena_bytes;
    int64_t saved = 0;
    const ir::Instruction* ret = entry.return_instruction();
    for (size_t r = 0; r < buffers.result_aliases.size(); ++r) {
      if (buffers.result_aliases[r] >= 0) saved += ret->operand(r)->type().shape().ByteSize();
    }
    return buffers.arena_bytes - saved;
  };
  ScheduleReport report;
  report.chosen = "program";
  int64_t best_cost = cost(plan, &report.program_order_peak);
  report.peak = report.program_order_peak;
  std::vector<std::pair<std::string, std::vector<int>>> candidates;
  const std::vector<std::vector<int>> preds = KernelDependencies(plan);
  candidates.emplace_back("list", ListScheduleOver(entry, plan, preds));
  candidates.emplace_back("dfs", DfsScheduleOver(entry, plan, preds));
  if (!donations.empty()) {
    const std::vector<std::vector<int>> friendly =
        AliasFriendlyDependencies(entry, plan, donations);
    if (friendly != preds) {
      candidates.emplace_back("program+alias", TopologicalOrder(friendly));
      candidates.emplace_back("list+alias", ListScheduleOver(entry, plan, friendly));
      candidates.emplace_back("dfs+alias", DfsScheduleOver(entry, plan, friendly));
    }
  }
  std::vector<int> best;
  for (const auto& [name, order] : candidates) {
    if (!IsValidSchedule(plan, order)) continue;  // a scheduler bug: never use its order
    FusionPlan trial = plan;
    ReorderKernels(trial, order);
    int64_t arena = 0;
    const int64_t c = cost(trial, &arena);
    if (c < best_cost) {
      best_cost = c;
      report.peak = arena;
      report.chosen = name;
      best = order;
    }
  }
  if (!best.empty()) ReorderKernels(plan, best);
  return report;
}

}  // namespace ember::passes
