#include "compiler/passes/kernel_merge.h"

#include <algorithm>
#include <queue>
#include <unordered_set>

#include "compiler/passes/io_alias.h"
#include "compiler/passes/rewrite.h"

namespace ember::passes {
namespace {

using ir::Opcode;

int64_t Count(const ir::Value* v) {
  return v->type().is_tensor() ? v->type().shape().element_count() : -1;
}

// Does `inst` read operand `i` at its own linear index (element k of the result reads element k
// of the operand)?
bool IdentityRead(const ir::Instruction& inst, size_t i) {
  const ir::Value* in = inst.operand(i);
  const ir::Value* out = inst.result();
  if (!in->type().is_tensor() || !out->type().is_tensor()) return false;
  switch (inst.opcode()) {
    case Opcode::kReshape:
      return Count(in) == Count(out);
    case Opcode::kBroadcastInDim: {
      // Only size-1 dims added, the operand's dims kept in order.
      const std::vector<int64_t>* dims = IntsAttribute(inst, "broadcast_dimensions");
      if (dims == nullptr || Count(in) != Count(out)) return false;
      for (size_t j = 1; j < dims->size(); ++j) {
        if ((*dims)[j] <= (*dims)[j - 1]) return false;
      }
      return true;
    }
    case Opcode::kTranspose:
    case Opcode::kSlice:
    case Opcode::kReverse:
    case Opcode::kReduceWindow:
    case Opcode::kSelectAndScatter:
    case Opcode::kIota:
    case Opcode::kReduce:
    case Opcode::kConstant:
      return false;
    default:
      return in->type().dims() == out->type().dims();
  }
}

struct Info {
  bool mergeable = false;
  std::unordered_set<const ir::Instruction*> inside;
  std::vector<const ir::Value*> inputs;  // read from outside the kernel, first-use order
  std::vector<int> deps;                 // kernels whose results it reads
  std::vector<const ir::Instruction*> reduces;
  std::unordered_set<const ir::Instruction*> epilogue;  // computed from a reduce result
  std::vector<int64_t> space;  // loop: output dims; reduction: the reduce input dims
};

Info Analyze(const Kernel& kernel, int self,
             const std::unordered_map<const ir::Instruction*, int>& kernel_of) {
  Info info;
  info.inside.insert(kernel.instructions.begin(), kernel.instructions.end());
  std::unordered_set<const ir::Value*> seen;
  for (const ir::Instruction* inst : kernel.instructions) {
    if (inst->opcode() == Opcode::kReduce) info.reduces.push_back(inst);
    bool from_reduce = false;
    for (const ir::Value* v : inst->operands()) {
      const ir::Instruction* p = v->producer();
      if (p != nullptr && info.inside.contains(p)) {
        from_reduce = from_reduce || p->opcode() == Opcode::kReduce || info.epilogue.contains(p);
        continue;
      }
      if (seen.insert(v).second) info.inputs.push_back(v);
      if (p == nullptr) continue;
      auto k = kernel_of.find(p);
      if (k != kernel_of.end() && k->second != self &&
          std::find(info.deps.begin(), info.deps.end(), k->second) == info.deps.end()) {
        info.deps.push_back(k->second);
      }
    }
    if (from_reduce) info.epilogue.insert(inst);
  }
  const ir::Instruction* root = kernel.root();
  if (root->num_results() != 1 || !root->result()->type().is_tensor()) return info;
  if (kernel.kind == KernelKind::kLoop) {
    if (!info.reduces.empty()) return info;
    info.space = root->result()->type().dims();
  } else if (kernel.kind == KernelKind::kReduce) {
    if (info.reduces.empty()) return info;
    const ir::Instruction* first = info.reduces.front();
    for (const ir::Instruction* r : info.reduces) {
      if (r->num_results() != 1 || r->operands().size() != 2 ||
          r->operand(0)->type().dims() != first->operand(0)->type().dims() ||
          r->result()->type().dims() != first->result()->type().dims() ||
          IntsAttribute(*r, "dimensions") == nullptr || IntsAttribute(*first, "dimensions") == nullptr ||
          *IntsAttribute(*r, "dimensions") != *IntsAttribute(*first, "dimensions")) {
        return info;
      }
    }
    info.space = first->operand(0)->type().dims();
  } else {
    return info;
  }
  info.mergeable = true;
  return info;
}

class Merger {
 public:
  Merger(const ir::Computation& entry, std::vector<Kernel>& kernels,
         std::unordered_map<const ir::Instruction*, int>& kernel_of)
      : entry_(entry), kernels_(kernels), kernel_of_(kernel_of) {
    for (const auto& inst : entry.instructions()) {
      position_[inst.get()] = static_cast<int>(position_.size());
    }
  }

  void Run() {
    // Whether a pair merges does not depend on the order, and a merge only adds paths: after one,
    // only pairs with the merged kernel can newly merge, so the scan goes on from it (or from the
    // earlier of the two, where the new order put the merged kernel later).
    Refresh();
    int b = 0;
    while (b < static_cast<int>(kernels_.size())) {
      int merged = -1;
      if (info_[b].mergeable) {
        for (int a : Candidates(b)) {
          if (CanMerge(a, b)) {
            merged = std::min(a, Merge(a, b));
            Refresh();
            break;
          }
        }
      }
      b = merged >= 0 ? merged : b + 1;
    }
  }

 private:
  // Kernels before b that b reads, or that read one of b's inputs.
  std::vector<int> Candidates(int b) const {
    std::vector<int> out;
    for (int d : info_[b].deps) {
      if (d < b) out.push_back(d);
    }
    for (const ir::Value* v : info_[b].inputs) {
      auto r = readers_.find(v);
      if (r == readers_.end()) continue;
      for (int a : r->second) {
        if (a < b && std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // Is there a path a -> ... -> b through some other kernel (the order is topological)?
  bool IndirectPath(int a, int b) const {
    std::vector<int> stack;
    std::vector<char> seen(kernels_.size(), 0);
    for (int d : info_[b].deps) {
      if (d != a && d > a) stack.push_back(d);
    }
    while (!stack.empty()) {
      const int k = stack.back();
      stack.pop_back();
      if (seen[k]) continue;
      seen[k] = 1;
      for (int d : info_[k].deps) {
        if (d == a) return true;
        if (d > a && !seen[d]) stack.push_back(d);
      }
    }
    return false;
  }

  bool SharesInput(const Info& a, const Info& b) const {
    int64_t space = 1;
    for (int64_t d : a.space) space *= d;
    for (const ir::Value* v : a.inputs) {
      if (v->producer() != nullptr && v->producer()->opcode() == Opcode::kConstant) continue;
      if (Count(v) <= 1 || Count(v) * 2 < space) continue;
      if (std::find(b.inputs.begin(), b.inputs.end(), v) != b.inputs.end()) return true;
    }
    return false;
  }

  // Loop siblings over a parameter that one reads only element by element (an update that may
  // be written over the donated parameter, io_alias.h) and the other at other elements (a
  // reverse or transpose of it): merged, the update could no longer take the parameter's memory.
  bool SplitsParameterReads(int a, int b) const {
    if (kernels_[a].kind != KernelKind::kLoop || kernels_[b].kind != KernelKind::kLoop) {
      return false;
    }
    for (const ir::Value* v : info_[a].inputs) {
      if (v->producer() != nullptr || v->owner() != &entry_) continue;
      if (std::find(info_[b].inputs.begin(), info_[b].inputs.end(), v) == info_[b].inputs.end()) {
        continue;
      }
      if (ReadsOnlySameElement(kernels_[a], v) != ReadsOnlySameElement(kernels_[b], v)) {
        return true;
      }
    }
    return false;
  }

  bool CanMerge(int a, int b) const {
    const Info& A = info_[a];
    const Info& B = info_[b];
    if (!A.mergeable || !B.mergeable) return false;
    const bool a_reduce = kernels_[a].kind == KernelKind::kReduce;
    const bool b_reduce = kernels_[b].kind == KernelKind::kReduce;
    const bool direct = std::find(B.deps.begin(), B.deps.end(), a) != B.deps.end();
    // The cheap checks first; the path search last.
    if (!direct) {
      if (A.space != B.space || !SharesInput(A, B)) return false;
      if (SplitsParameterReads(a, b)) return false;
      if (a_reduce && b_reduce) {
        const ir::Instruction* ra = A.reduces.front();
        const ir::Instruction* rb = B.reduces.front();
        if (*IntsAttribute(*ra, "dimensions") != *IntsAttribute(*rb, "dimensions") ||
            ra->result()->type().dims() != rb->result()->type().dims()) {
          return false;
        }
      }
      return !IndirectPath(a, b);
    }
    if (!ConsumerFits(a, b)) return false;
    return !IndirectPath(a, b);
  }

  // b reads a's results directly: an epilogue of a reduction, or a consumer of a loop's values.
  bool ConsumerFits(int a, int b) const {
    const Info& A = info_[a];
    const Info& B = info_[b];
    const bool a_reduce = kernels_[a].kind == KernelKind::kReduce;
    const bool b_reduce = kernels_[b].kind == KernelKind::kReduce;
    if (a_reduce && b_reduce) return false;
    if (a_reduce) {
      // An epilogue: every value of b in the reduce's output space, read at the same index.
      const int64_t e = Count(A.reduces.front()->result());
      for (const ir::Instruction* inst : kernels_[b].instructions) {
        if (Count(inst->result()) != e) return false;
        for (size_t i = 0; i < inst->operands().size(); ++i) {
          const ir::Instruction* p = inst->operand(i)->producer();
          if (p == nullptr) continue;
          const bool in_b = B.inside.contains(p);
          const bool in_a = !in_b && A.inside.contains(p);
          if (in_a && p->opcode() != Opcode::kReduce && !A.epilogue.contains(p)) return false;
          if ((in_a || in_b) && !IdentityRead(*inst, i)) return false;
        }
      }
      return true;
    }
    // A loop kernel into a consumer of its space: read elementwise, on the input side of a
    // reduction.
    if (A.space != B.space) return false;
    for (const ir::Instruction* inst : kernels_[b].instructions) {
      for (size_t i = 0; i < inst->operands().size(); ++i) {
        const ir::Instruction* p = inst->operand(i)->producer();
        if (p == nullptr || B.inside.contains(p) || !A.inside.contains(p)) continue;
        if (B.epilogue.contains(inst)) return false;
        if (inst->opcode() == Opcode::kReduce) {
          if (i != 0) return false;
          continue;
        }
        if (!IdentityRead(*inst, i)) return false;
      }
    }
    return true;
  }

  // Returns the merged kernel's index after reordering.
  int Merge(int a, int b) {
    Kernel& into = kernels_[a];
    Kernel& from = kernels_[b];
    if (from.kind == KernelKind::kReduce) into.kind = KernelKind::kReduce;
    std::unordered_set<const ir::Instruction*> have(into.instructions.begin(),
                                                    into.instructions.end());
    for (const ir::Instruction* inst : from.instructions) {
      if (have.insert(inst).second) into.instructions.push_back(inst);
    }
    std::sort(into.instructions.begin(), into.instructions.end(),
              [&](const ir::Instruction* x, const ir::Instruction* y) {
                return position_.at(x) < position_.at(y);
              });
    for (auto& [inst, k] : kernel_of_) {
      if (k == b) k = a;
    }
    kernels_.erase(kernels_.begin() + b);
    for (auto& [inst, k] : kernel_of_) {
      if (k > b) --k;
    }
    const ir::Instruction* root = kernels_[a].root();
    Reorder();
    return kernel_of_.at(root);
  }

  // Dependencies first; among ready kernels the one whose last instruction comes first.
  void Reorder() {
    const int n = static_cast<int>(kernels_.size());
    std::vector<Info> info(n);
    for (int k = 0; k < n; ++k) info[k] = Analyze(kernels_[k], k, kernel_of_);
    std::vector<int> pending(n, 0);
    std::vector<std::vector<int>> users(n);
    for (int k = 0; k < n; ++k) {
      for (int d : info[k].deps) {
        ++pending[k];
        users[d].push_back(k);
      }
    }
    auto later = [&](int x, int y) {
      return position_.at(kernels_[x].root()) > position_.at(kernels_[y].root());
    };
    std::priority_queue<int, std::vector<int>, decltype(later)> ready(later);
    for (int k = 0; k < n; ++k) {
      if (pending[k] == 0) ready.push(k);
    }
    std::vector<int> order;
    while (!ready.empty()) {
      const int k = ready.top();
      ready.pop();
      order.push_back(k);
      for (int u : users[k]) {
        if (--pending[u] == 0) ready.push(u);
      }
    }
    if (static_cast<int>(order.size()) != n) return;  // a cycle: cannot happen; keep the order
    std::vector<int> renumber(n);
    std::vector<Kernel> sorted;
    sorted.reserve(n);
    for (int i = 0; i < n; ++i) {
      renumber[order[i]] = i;
      sorted.push_back(std::move(kernels_[order[i]]));
    }
    kernels_ = std::move(sorted);
    for (auto& [inst, k] : kernel_of_) k = renumber[k];
  }

  void Refresh() {
    const int n = static_cast<int>(kernels_.size());
    info_.assign(n, Info());
    readers_.clear();
    for (int k = 0; k < n; ++k) {
      info_[k] = Analyze(kernels_[k], k, kernel_of_);
      for (const ir::Value* v : info_[k].inputs) {
        // Constants and scalars never make siblings (SharesInput).
        if (Count(v) <= 1 || (v->producer() != nullptr &&
                              v->producer()->opcode() == Opcode::kConstant)) {
          continue;
        }
        readers_[v].push_back(k);
      }
    }
  }

  const ir::Computation& entry_;
  std::vector<Kernel>& kernels_;
  std::unordered_map<const ir::Instruction*, int>& kernel_of_;
  std::unordered_map<const ir::Instruction*, int> position_;
  std::vector<Info> info_;
  std::unordered_map<const ir::Value*, std::vector<int>> readers_;
};

}  // namespace

void MergeKernels(const ir::Computation& entry, std::vector<Kernel>& kernels,
                  std::unordered_map<const ir::Instruction*, int>& kernel_of) {
  Merger(entry, kernels, kernel_of).Run();
}

}  // namespace ember::passes
