#include "compiler/passes/fusion_plan.h"

#include <algorithm>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/passes/kernel_merge.h"
#include "compiler/passes/rewrite.h"

namespace ember::passes {
namespace {

using ir::Opcode;

int64_t Bytes(const ir::Value* v) {
  return v->type().is_tensor() ? v->type().shape().ByteSize() : 0;
}

bool Duplicable(const ir::Instruction& inst) {
  return inst.opcode() == Opcode::kBroadcastInDim || inst.opcode() == Opcode::kIota;
}

bool Windowed(const ir::Instruction& inst) {
  return inst.opcode() == Opcode::kReduceWindow || inst.opcode() == Opcode::kSelectAndScatter;
}

}  // namespace

std::string_view KernelKindName(KernelKind kind) {
  switch (kind) {
    case KernelKind::kLoop: return "loop";
    case KernelKind::kReduce: return "reduce";
    case KernelKind::kDot: return "dot";
    case KernelKind::kSingle: return "single";
  }
  return "?";
}

FusionPlan PlanFusion(const ir::Computation& entry, const FusiblePredicate& loop_fusible,
                      const FusiblePredicate& reduce_fusible, const FusiblePredicate& dot_kernel,
                      const FusionOptions& options) {
  FusionPlan plan;
  std::unordered_map<const ir::Instruction*, int> position;
  std::unordered_map<const ir::Value*, std::vector<const ir::Instruction*>> users;
  std::unordered_set<const ir::Value*> must_materialize;
  const ir::Instruction* ret = entry.return_instruction();
  for (const auto& inst : entry.instructions()) {
    position[inst.get()] = static_cast<int>(position.size());
    for (const ir::Value* v : inst->operands()) users[v].push_back(inst.get());
    for (const ir::Computation* region : inst->regions()) {
      std::vector<const ir::Value*> captured;
      CollectCapturedValues(*region, captured);
      must_materialize.insert(captured.begin(), captured.end());
    }
    if (inst->opcode() != Opcode::kConstant && inst->opcode() != Opcode::kReturn) {
      ++plan.unfused_kernel_count;
    }
  }
  if (ret != nullptr) {
    for (const ir::Value* v : ret->operands()) must_materialize.insert(v);
  }

  // A narrowing producer (a compare, a convert to a smaller type: an operand of its shape in
  // more bytes) whose wider operand is also read outside this kernel, by ops that do not feed
  // it, stays out: in a kernel of its own it can join the kernel that computes the operand
  // (kernel_merge.h), and the narrow value is materialized instead of the wide one. (A ReLU's
  // gradient mask: its pre-activation would otherwise be kept as f32 until the backward pass,
  // four times the bytes of the mask.)
  auto KeepsWiderOperandAlive = [&](const ir::Instruction& p,
                                    const std::unordered_set<const ir::Instruction*>& inside) {
    if (p.num_results() != 1 || !p.result()->type().is_tensor()) return false;
    for (const ir::Value* o : p.operands()) {
      const ir::Instruction* q = o->producer();
      if (q == nullptr || q->opcode() == Opcode::kConstant || Duplicable(*q) ||
          o->owner() != &entry || must_materialize.contains(o) || !loop_fusible(*q) ||
          !o->type().is_tensor() || o->type().dims() != p.result()->type().dims() ||
          Bytes(o) <= Bytes(p.result())) {
        continue;
      }
      for (const ir::Instruction* u : users[o]) {
        if (u == &p || inside.contains(u)) continue;
        // A reader of o that some member reads may still join this kernel.
        bool pending = false;
        for (size_t r = 0; r < u->num_results() && !pending; ++r) {
          for (const ir::Instruction* w : users[u->result(r)]) {
            pending = pending || inside.contains(w);
          }
        }
        if (!pending) return true;
      }
    }
    return false;
  };
  // Walk backwards: each unassigned instruction roots a kernel that absorbs its producers.
  std::unordered_map<const ir::Instruction*, std::unordered_set<int>> copies;  // duplicated
  std::vector<std::vector<const ir::Instruction*>> members_of;
  std::vector<KernelKind> kinds;
  const auto& instructions = entry.instructions();
  for (auto it = instructions.rbegin(); it != instructions.rend(); ++it) {
    const ir::Instruction* inst = it->get();
    if (inst == ret || inst->opcode() == Opcode::kConstant || plan.kernel_of.contains(inst)) continue;
    auto copied = copies.find(inst);
    if (copied != copies.end()) {
      // Recomputed inside its users' kernels; it needs its own kernel only if some reader does
      // not recompute it.
      bool needed = must_materialize.contains(inst->result());
      for (const ir::Instruction* u : users[inst->result()]) {
        auto k = plan.kernel_of.find(u);
        if (k == plan.kernel_of.end() || !copied->second.contains(k->second)) needed = true;
      }
      if (!needed) {
        plan.kernel_of[inst] = *copied->second.begin();
        continue;
      }
    }
    const int id = static_cast<int>(members_of.size());
    KernelKind kind = KernelKind::kSingle;
    if (reduce_fusible(*inst)) {
      kind = KernelKind::kReduce;
    } else if (loop_fusible(*inst)) {
      kind = KernelKind::kLoop;
    } else if (dot_kernel(*inst)) {
      kind = KernelKind::kDot;
    }
    std::unordered_set<const ir::Instruction*> members = {inst};
    plan.kernel_of[inst] = id;
    // An instruction recomputed inside other kernels keeps its operands materialized (those
    // kernels read them), so its own kernel absorbs nothing.
    const bool recomputed_elsewhere = copied != copies.end();
    if ((kind == KernelKind::kLoop || kind == KernelKind::kReduce) && !recomputed_elsewhere) {
      // Work items: a value to absorb, and whether it is read by a recomputed (duplicated)
      // instruction. Below a copy only duplicable producers may join: the copy's original may
      // still get a kernel of its own, which must find its operands materialized.
      // Below an expanding broadcast only index ops join: an elementwise producer there would be
      // recomputed once per output element instead of once per operand element (rsqrt of a
      // row statistic, recomputed for every element of the row), so it keeps a small kernel.
      // Below a windowed op (reduce_window, select_and_scatter: each operand element read once
      // per window holding it) another does not join: its windows would be folded again for
      // every outer one.
      struct Item {
        const ir::Value* value;
        bool under_copy;
        bool under_expand;
        bool under_window;
      };
      auto expanding = [](const ir::Instruction& i) {
        return i.opcode() == Opcode::kBroadcastInDim && i.operand(0)->type().is_tensor() &&
               i.operand(0)->type().shape().element_count() * 2 <=
                   i.result()->type().shape().element_count();
      };
      std::vector<Item> work;
      if (kind == KernelKind::kReduce) {
        work.push_back({inst->operand(0), false, false, false});
      } else {
        const bool window = Windowed(*inst);
        for (const ir::Value* o : inst->operands()) {
          work.push_back({o, false, expanding(*inst), window});
        }
      }
      while (!work.empty()) {
        const Item item = work.back();
        const ir::Value* v = item.value;
        const bool under_copy = item.under_copy;
        work.pop_back();
        const ir::Instruction* p = v->producer();
        if (p == nullptr || p->opcode() == Opcode::kConstant || members.contains(p)) continue;
        if (v->owner() != &entry || p->num_results() != 1 || !loop_fusible(*p)) continue;
        if (must_materialize.contains(v)) continue;
        if (plan.kernel_of.contains(p)) continue;
        if (item.under_expand && !Duplicable(*p) && p->opcode() != Opcode::kReshape) continue;
        if (item.under_window && Windowed(*p)) continue;
        if (KeepsWiderOperandAlive(*p, members)) continue;
        bool all_inside = !under_copy;
        for (const ir::Instruction* u : users[v]) {
          // A recomputed reader does not count: its original may be materialized elsewhere.
          auto uc = copies.find(u);
          const bool u_is_copy = uc != copies.end() && uc->second.contains(id);
          all_inside = all_inside && members.contains(u) && !u_is_copy;
        }
        bool copy = false;
        if (all_inside) {
          plan.kernel_of[p] = id;
        } else if (Duplicable(*p)) {
          copies[p].insert(id);
          copy = true;
        } else {
          continue;
        }
        members.insert(p);
        const bool expands = expanding(*p);
        const bool window = item.under_window || Windowed(*p);
        for (const ir::Value* o : p->operands()) {
          work.push_back({o, under_copy || copy, item.under_expand || expands, window});
        }
      }
    }
    std::vector<const ir::Instruction*> ordered(members.begin(), members.end());
    std::sort(ordered.begin(), ordered.end(),
              [&](const ir::Instruction* a, const ir::Instruction* b) {
                return position[a] < position[b];
              });
    members_of.push_back(std::move(ordered));
    kinds.push_back(kind);
  }

  // Kernels in root order (a valid schedule: inputs come from roots earlier in the program).
  std::vector<int> order(members_of.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return position[members_of[a].back()] < position[members_of[b].back()];
  });
  std::vector<int> renumber(order.size());
  for (size_t i = 0; i < order.size(); ++i) renumber[order[i]] = static_cast<int>(i);
  for (auto& [inst, k] : plan.kernel_of) k = renumber[k];
  for (int old : order) {
    Kernel kernel;
    kernel.kind = kinds[old];
    kernel.instructions = std::move(members_of[old]);
    plan.kernels.push_back(std::move(kernel));
  }
  if (options.multi_output) MergeKernels(entry, plan.kernels, plan.kernel_of);

  // Outputs: results of a kernel's own instructions that another kernel reads, that the program
  // returns (or a region captures), or that nothing reads (a kernel's root always has a result).
  std::vector<std::unordered_set<const ir::Value*>> read_outside(plan.kernels.size());
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    std::unordered_set<const ir::Instruction*> inside(plan.kernels[k].instructions.begin(),
                                                      plan.kernels[k].instructions.end());
    for (const ir::Instruction* inst : plan.kernels[k].instructions) {
      for (const ir::Value* v : inst->operands()) {
        const ir::Instruction* p = v->producer();
        if (p == nullptr || inside.contains(p)) continue;
        auto owner = plan.kernel_of.find(p);
        if (owner != plan.kernel_of.end()) read_outside[owner->second].insert(v);
      }
    }
  }
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    Kernel& kernel = plan.kernels[k];
    std::unordered_set<const ir::Instruction*> inside(kernel.instructions.begin(),
                                                      kernel.instructions.end());
    for (const ir::Instruction* inst : kernel.instructions) {
      auto owner = plan.kernel_of.find(inst);
      if (owner == plan.kernel_of.end() || owner->second != static_cast<int>(k)) continue;
      for (size_t i = 0; i < inst->num_results(); ++i) {
        const ir::Value* v = inst->result(i);
        if (read_outside[k].contains(v) || must_materialize.contains(v) || users[v].empty() ||
            inst == kernel.root()) {
          kernel.outputs.push_back(v);
        }
      }
    }
    // Each input is read once, except that a broadcast in a loop or reduction kernel reads its
    // operand once per element of its result.
    std::unordered_map<const ir::Value*, int64_t> read;
    for (const ir::Instruction* inst : kernel.instructions) {
      for (const ir::Value* v : inst->operands()) {
        if (v->producer() != nullptr && inside.contains(v->producer())) continue;
        int64_t bytes = Bytes(v);
        if ((kernel.kind == KernelKind::kLoop || kernel.kind == KernelKind::kReduce) &&
            inst->opcode() == Opcode::kBroadcastInDim && v->type().is_tensor()) {
          bytes = inst->result()->type().shape().element_count() *
                  ir::StorageBytes(v->type().element_type());
        }
        auto [it, inserted] = read.emplace(v, bytes);
        if (inserted) {
          kernel.inputs.push_back(v);
          kernel.bytes_minimum += Bytes(v);
        } else {
          it->second = std::max(it->second, bytes);
        }
      }
    }
    for (const auto& [v, bytes] : read) kernel.bytes_moved += bytes;
    for (const ir::Value* v : kernel.outputs) {
      kernel.bytes_moved += Bytes(v);
      kernel.bytes_minimum += Bytes(v);
    }
  }
  return plan;
}

std::string FusionPlan::ToDot(const std::string& name) const {
  std::string out = absl::StrCat("digraph \"", name, "\" {\n  rankdir=TB;\n  node [shape=box];\n");
  for (size_t k = 0; k < kernels.size(); ++k) {
    const Kernel& kernel = kernels[k];
    absl::StrAppend(&out, "  subgraph cluster_", k, " {\n    label=\"kernel ", k, " (",
                    std::string(KernelKindName(kernel.kind)), ")\";\n");
    for (const ir::Instruction* inst : kernel.instructions) {
      absl::StrAppend(&out, "    i", absl::Hex(reinterpret_cast<uintptr_t>(inst)), " [label=\"",
                      std::string(ir::OpcodeName(inst->opcode())), "\\n",
                      inst->num_results() > 0 ? inst->result(0)->type().ToString() : "", "\"];\n");
    }
    absl::StrAppend(&out, "  }\n");
    for (const ir::Instruction* inst : kernel.instructions) {
      for (const ir::Value* v : inst->operands()) {
        const ir::Instruction* p = v->producer();
        if (p == nullptr || p->opcode() == Opcode::kConstant) continue;
        absl::StrAppend(&out, "  i", absl::Hex(reinterpret_cast<uintptr_t>(p)), " -> i",
                        absl::Hex(reinterpret_cast<uintptr_t>(inst)));
        auto pk = kernel_of.find(p);
        if (pk != kernel_of.end() && pk->second != static_cast<int>(k)) {
          absl::StrAppend(&out, " [label=\"", Bytes(v), " B\", color=red]");
        }
        absl::StrAppend(&out, ";\n");
      }
    }
  }
  absl::StrAppend(&out, "}\n");
  return out;
}

std::string FusionPlan::CostReport() const {
  std::string out =
      "kernel  kind    instrs  outs  root                  bytes_moved  bytes_min  ratio\n";
  int64_t moved = 0, minimum = 0;
  for (size_t k = 0; k < kernels.size(); ++k) {
    const Kernel& kernel = kernels[k];
    moved += kernel.bytes_moved;
    minimum += kernel.bytes_minimum;
    absl::StrAppend(&out, absl::StrFormat("%6d  %-6s  %6d  %4d  %-20s  %11d  %9d  %5.2f\n", k,
                                          std::string(KernelKindName(kernel.kind)),
                                          kernel.instructions.size(), kernel.outputs.size(),
                                          std::string(ir::OpcodeName(kernel.root()->opcode())),
                                          kernel.bytes_moved, kernel.bytes_minimum,
                                          kernel.bytes_minimum > 0
                                              ? static_cast<double>(kernel.bytes_moved) /
                                                    static_cast<double>(kernel.bytes_minimum)
                                              : 1.0));
  }
  for (const RowGroup& group : row_groups) {
    // Inside a group, values written by one kernel and read by a later one pass through the cache:
    // each is written once and read back from cache, never from memory.
    int64_t cached = 0;
    std::unordered_set<const ir::Value*> produced;
    for (int k = group.first; k <= group.last; ++k) {
      for (const ir::Value* v : kernels[k].inputs) {
        if (produced.contains(v)) cached += Bytes(v);
      }
      produced.insert(kernels[k].outputs.begin(), kernels[k].outputs.end());
    }
    absl::StrAppend(&out, absl::StrFormat(
                              "row group: kernels %d-%d over %d rows (%d bytes per row), %d bytes "
                              "read back from cache\n",
                              group.first, group.last, group.rows, group.row_bytes, cached));
  }
  absl::StrAppend(&out, absl::StrFormat(
                            "total: %d kernels (%d unfused instructions), %d bytes moved, %d "
                            "minimum (ratio %.2f)\n",
                            kernels.size(), unfused_kernel_count, moved, minimum,
                            minimum > 0 ? static_cast<double>(moved) / minimum : 1.0));
  return out;
}

}  // namespace ember::passes
