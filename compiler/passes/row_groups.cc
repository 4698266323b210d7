#include "compiler/passes/row_groups.h"

#include <unordered_map>
#include <unordered_set>

#include "compiler/passes/rewrite.h"

namespace ember::passes {
namespace {

using ir::Opcode;

// The smallest p >= 1 with dims[0] * ... * dims[p-1] == rows, or -1.
int RowPrefix(const std::vector<int64_t>& dims, int64_t rows) {
  int64_t product = 1;
  for (size_t p = 0; p < dims.size(); ++p) {
    product *= dims[p];
    if (product == rows) return static_cast<int>(p) + 1;
    if (product > rows || product == 0) return -1;
  }
  return -1;
}

// Does row r of `inst`'s result read operand `i` only within the operand's row r?
bool PreservesRows(const ir::Instruction& inst, size_t i, int64_t rows) {
  const ir::Value* out = inst.result();
  const ir::Value* in = inst.operand(i);
  if (!out->type().is_tensor() || !in->type().is_tensor()) return false;
  const std::vector<int64_t>& od = out->type().dims();
  const std::vector<int64_t>& id = in->type().dims();
  const int p = RowPrefix(od, rows);
  if (p < 0) return false;
  switch (inst.opcode()) {
    case Opcode::kReshape:
      return in->type().shape().element_count() == out->type().shape().element_count();
    case Opcode::kBroadcastInDim: {
      const std::vector<int64_t>* bd = IntsAttribute(inst, "broadcast_dimensions");
      if (bd == nullptr || static_cast<int>(bd->size()) < p) return false;
      for (int j = 0; j < p; ++j) {
        if ((*bd)[j] != j || id[j] != od[j]) return false;
      }
      return true;
    }
    case Opcode::kTranspose: {
      const std::vector<int64_t>* perm = IntsAttribute(inst, "permutation");
      if (perm == nullptr || static_cast<int>(perm->size()) < p) return false;
      for (int j = 0; j < p; ++j) {
        if ((*perm)[j] != j) return false;
      }
      return true;
    }
    case Opcode::kSlice: {
      const std::vector<int64_t>* start = IntsAttribute(inst, "start_indices");
      const std::vector<int64_t>* strides = IntsAttribute(inst, "strides");
      if (start == nullptr || static_cast<int>(id.size()) < p) return false;
      for (int j = 0; j < p; ++j) {
        if ((*start)[j] != 0 || id[j] != od[j]) return false;
        if (strides != nullptr && (*strides)[j] != 1) return false;
      }
      return true;
    }
    case Opcode::kReduce:
      // Trailing reductions only (the backend's row kernels): the kept dims lead.
      if (i != 0) return false;
      if (const std::vector<int64_t>* dims = IntsAttribute(inst, "dimensions")) {
        for (int64_t d : *dims) {
          if (d < p) return false;
        }
        for (int j = 0; j < p; ++j) {
          if (id[j] != od[j]) return false;
        }
        return true;
      }
      return false;
    case Opcode::kReduceWindow:
    case Opcode::kSelectAndScatter:
    case Opcode::kIota:
    case Opcode::kConstant:
      return false;
    default:
      // Elementwise: an operand of the result's shape is read at the same index; a rank-0 operand
      // (read as a scalar) is not per row.
      return id == od;
  }
}

// For each value kernel `k` reads from outside itself: is every read row-preserving?
std::unordered_map<const ir::Value*, bool> InputRowAccess(const Kernel& kernel, int64_t rows) {
  std::unordered_set<const ir::Instruction*> inside(kernel.instructions.begin(),
                                                    kernel.instructions.end());
  std::unordered_map<const ir::Value*, bool> aligned;  // value -> every read so far aligned
  auto mark = [&](const ir::Value* v, bool ok) {
    auto [it, inserted] = aligned.emplace(v, ok);
    if (!inserted) it->second = it->second && ok;
  };
  for (const ir::Value* v : kernel.outputs) mark(v, true);
  for (auto it = kernel.instructions.rbegin(); it != kernel.instructions.rend(); ++it) {
    const ir::Instruction* inst = *it;
    if (inst->num_results() != 1) {
      for (size_t i = 0; i < inst->operands().size(); ++i) mark(inst->operand(i), false);
      continue;
    }
    auto state = aligned.find(inst->result());
    const bool row_read = state != aligned.end() && state->second;
    for (size_t i = 0; i < inst->operands().size(); ++i) {
      mark(inst->operand(i), row_read && PreservesRows(*inst, i, rows));
    }
  }
  std::unordered_map<const ir::Value*, bool> inputs;
  for (const ir::Value* v : kernel.inputs) {
    auto a = aligned.find(v);
    inputs[v] = a != aligned.end() && a->second;
  }
  return inputs;
}

bool SplitsKernel(const Kernel& kernel, int64_t rows) {
  if (kernel.outputs.empty()) return false;
  for (const ir::Value* v : kernel.outputs) {
    if (!SplitsIntoRows(*v, rows)) return false;
  }
  return true;
}

// Every reduce of the kernel keeps the row dims in front (so it reads row r's inputs for row r's
// outputs); false when the kernel has none.
bool ReducesPreserveRows(const Kernel& kernel, int64_t rows) {
  bool any = false;
  for (const ir::Instruction* inst : kernel.instructions) {
    if (inst->opcode() != Opcode::kReduce) continue;
    if (inst->num_results() != 1 || !PreservesRows(*inst, 0, rows)) return false;
    any = true;
  }
  return any;
}

// The output element count of the kernel's reduces (the first one's), or -1.
int64_t ReduceRows(const Kernel& kernel) {
  for (const ir::Instruction* inst : kernel.instructions) {
    if (inst->opcode() == Opcode::kReduce) {
      if (inst->num_results() != 1 || !inst->result()->type().is_tensor()) return -1;
      return inst->result()->type().shape().element_count();
    }
  }
  return -1;
}

}  // namespace

bool SplitsIntoRows(const ir::Value& value, int64_t rows) {
  return value.type().is_tensor() && RowPrefix(value.type().dims(), rows) > 0;
}

void PlanRowGroups(FusionPlan& plan, const std::vector<bool>& runs_by_rows, int64_t min_rows) {
  plan.row_groups.clear();
  const int n = static_cast<int>(plan.kernels.size());
  auto eligible = [&](int k) {
    return k < static_cast<int>(runs_by_rows.size()) && runs_by_rows[k] &&
           (plan.kernels[k].kind == KernelKind::kLoop || plan.kernels[k].kind == KernelKind::kReduce);
  };
  int k = 0;
  while (k < n) {
    const Kernel& start = plan.kernels[k];
    const int64_t rows = start.kind == KernelKind::kReduce ? ReduceRows(start) : -1;
    // The reduces' kept dims lead their input: they read row r's inputs for row r's outputs.
    if (!eligible(k) || rows < min_rows || !ReducesPreserveRows(start, rows) ||
        !SplitsKernel(start, rows)) {
      ++k;
      continue;
    }
    std::unordered_set<const ir::Value*> produced(start.outputs.begin(), start.outputs.end());
    int last = k;
    for (int j = k + 1; j < n; ++j) {
      const Kernel& next = plan.kernels[j];
      if (!eligible(j) || !SplitsKernel(next, rows)) break;
      if (next.kind == KernelKind::kReduce && !ReducesPreserveRows(next, rows)) break;
      bool ok = true;
      for (const auto& [v, row_read] : InputRowAccess(next, rows)) {
        if (produced.contains(v) && !row_read) ok = false;
      }
      if (!ok) break;
      produced.insert(next.outputs.begin(), next.outputs.end());
      last = j;
    }
    if (last > k) {
      RowGroup group;
      group.first = k;
      group.last = last;
      group.rows = rows;
      for (int j = k; j <= last; ++j) group.row_bytes += plan.kernels[j].bytes_moved / rows;
      plan.row_groups.push_back(group);
    }
    k = last + 1;
  }
}

}  // namespace ember::passes
