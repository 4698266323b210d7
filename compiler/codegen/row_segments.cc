#include "compiler/codegen/row_segments.h"

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_set>
#include <utility>

#include "compiler/passes/rewrite.h"

namespace ember::codegen {
namespace {

using ir::Opcode;

// An index component as a function of the root's innermost position j: coef * j + offset.
// Components that do not follow j that way (outer dims, computed starts) are nullopt.
struct Affine {
  int64_t coef = 0;
  int64_t offset = 0;
};
using IndexMap = std::vector<std::optional<Affine>>;

// Walks the kernel's values from the root's index down, through the index ops the element
// generator maps with known offsets, collecting the positions j where a concatenate or pad
// reached at an affine component changes its pick.
class SegmentFinder {
 public:
  SegmentFinder(const passes::Kernel& kernel, int64_t row) : row_(row) {
    for (const ir::Instruction* inst : kernel.instructions) in_kernel_.insert(inst);
  }

  // False when the walk grew too large to be worth finishing.
  bool Walk(const ir::Value* value, const IndexMap& map) {
    const ir::Instruction* inst = value->producer();
    if (inst == nullptr || !in_kernel_.contains(inst)) return true;
    if (!seen_.insert({value, Key(map)}).second) return true;
    if (seen_.size() > kMaxVisits) return false;
    const ir::Value* operand = inst->operands().empty() ? nullptr : inst->operand(0);
    switch (inst->opcode()) {
      case Opcode::kReshape: {
        // Row-major reshapes keep the innermost position when they keep the innermost dim.
        const std::vector<int64_t>& in_dims = operand->type().dims();
        const std::vector<int64_t>& out_dims = value->type().dims();
        IndexMap in(in_dims.size());
        if (!in_dims.empty() && !out_dims.empty() && in_dims.back() == out_dims.back()) {
          in.back() = map.back();
        }
        return Walk(operand, in);
      }
      case Opcode::kBroadcastInDim: {
        const std::vector<int64_t>& in_dims = operand->type().dims();
        const std::vector<int64_t>& bd = *passes::IntsAttribute(*inst, "broadcast_dimensions");
        IndexMap in(in_dims.size());
        for (size_t k = 0; k < in_dims.size(); ++k) {
          in[k] = in_dims[k] == 1 ? std::optional<Affine>(Affine{}) : map[bd[k]];
        }
        return Walk(operand, in);
      }
      case Opcode::kTranspose: {
        const std::vector<int64_t>& perm = *passes::IntsAttribute(*inst, "permutation");
        IndexMap in(perm.size());
        for (size_t d = 0; d < perm.size(); ++d) in[perm[d]] = map[d];
        return Walk(operand, in);
      }
      case Opcode::kSlice: {
        const std::vector<int64_t>& start = *passes::IntsAttribute(*inst, "start_indices");
        const std::vector<int64_t>* strides = passes::IntsAttribute(*inst, "strides");
        IndexMap in = map;
        for (size_t k = 0; k < in.size(); ++k) {
          if (!in[k].has_value()) continue;
          const int64_t s = strides != nullptr ? (*strides)[k] : 1;
          in[k] = Affine{in[k]->coef * s, in[k]->offset * s + start[k]};
        }
        return Walk(operand, in);
      }
      case Opcode::kReverse: {
        const std::vector<int64_t>& in_dims = operand->type().dims();
        IndexMap in = map;
        for (int64_t d : *passes::IntsAttribute(*inst, "dimensions")) {
          if (in[d].has_value()) in[d] = Affine{-in[d]->coef, in_dims[d] - 1 - in[d]->offset};
        }
        return Walk(operand, in);
      }
      case Opcode::kPad: {
        const std::vector<int64_t>& in_dims = operand->type().dims();
        const std::vector<int64_t>& low = *passes::IntsAttribute(*inst, "edge_padding_low");
        const std::vector<int64_t>* interior = passes::IntsAttribute(*inst, "interior_padding");
        IndexMap in(in_dims.size());
        for (size_t d = 0; d < in_dims.size(); ++d) {
          const bool dense = interior == nullptr || (*interior)[d] == 0;
          if (!dense || !map[d].has_value()) continue;
          AddBreak(*map[d], low[d]);
          AddBreak(*map[d], low[d] + in_dims[d]);
          in[d] = Affine{map[d]->coef, map[d]->offset - low[d]};
        }
        return Walk(operand, in);
      }
      case Opcode::kConcatenate: {
        const int64_t dim = inst->attribute("dimension")->i;
        int64_t offset = 0;
        for (const ir::Value* part : inst->operands()) {
          IndexMap in = map;
          if (map[dim].has_value()) {
            if (offset > 0) AddBreak(*map[dim], offset);
            in[dim] = Affine{map[dim]->coef, map[dim]->offset - offset};
          }
          if (!Walk(part, in)) return false;
          offset += part->type().dims()[dim];
        }
        return true;
      }
      case Opcode::kDynamicSlice:
      case Opcode::kGather:
      case Opcode::kReduceWindow:
      case Opcode::kSelectAndScatter:
      case Opcode::kIota:
        return true;  // positions computed at run time, or no operand read per element
      default:
        break;
    }
    // Elementwise: operands at the same index (rank-0 ones once, at no index).
    for (const ir::Value* part : inst->operands()) {
      if (part->type().dims().size() != map.size() || map.empty()) continue;
      if (!Walk(part, map)) return false;
    }
    return true;
  }

  const std::set<int64_t>& breaks() const { return breaks_; }

 private:
  static constexpr size_t kMaxVisits = 4096;

  // The position j where `a` crosses `bound` (a ≥ bound on one side, below on the other), kept
  // when it falls inside the row.
  void AddBreak(const Affine& a, int64_t bound) {
    if (a.coef == 0) return;
    int64_t j = 0;
    if (a.coef > 0) {
      const int64_t num = bound - a.offset;  // first j with coef * j + offset >= bound
      j = num >= 0 ? (num + a.coef - 1) / a.coef : -((-num) / a.coef);
    } else {
      const int64_t c = -a.coef;
      const int64_t num = a.offset - bound;  // last j with offset - c * j >= bound, plus one
      j = (num >= 0 ? num / c : -((-num + c - 1) / c)) + 1;
    }
    if (j > 0 && j < row_) breaks_.insert(j);
  }

  static std::vector<std::tuple<bool, int64_t, int64_t>> Key(const IndexMap& map) {
    std::vector<std::tuple<bool, int64_t, int64_t>> key;
    for (const std::optional<Affine>& a : map) {
      key.emplace_back(a.has_value(), a ? a->coef : 0, a ? a->offset : 0);
    }
    return key;
  }

  const int64_t row_;
  std::unordered_set<const ir::Instruction*> in_kernel_;
  std::set<std::pair<const ir::Value*, std::vector<std::tuple<bool, int64_t, int64_t>>>> seen_;
  std::set<int64_t> breaks_;
};

}  // namespace

std::vector<int64_t> RowSegmentStarts(const passes::Kernel& kernel, int max_segments) {
  const std::vector<int64_t>& dims = kernel.root()->result()->type().dims();
  if (dims.empty() || dims.back() < 2) return {0};
  SegmentFinder finder(kernel, dims.back());
  IndexMap root(dims.size());
  root.back() = Affine{1, 0};
  for (const ir::Value* output : kernel.outputs) {
    if (output->type().dims() != dims || !finder.Walk(output, root)) return {0};
  }
  if (static_cast<int64_t>(finder.breaks().size()) + 1 > max_segments) return {0};
  std::vector<int64_t> starts = {0};
  starts.insert(starts.end(), finder.breaks().begin(), finder.breaks().end());
  return starts;
}

}  // namespace ember::codegen
