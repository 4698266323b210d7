// legalize-collectives: every reduction a collective performs becomes one a transport can run
// (collective_reduction.h: a reduction kind on a transport type). An all_reduce whose region is
// anything else (a subtraction, a compound expression, a min/max of complex numbers, a type no
// transport reduces) is rewritten to what it means: the group's operands gathered with
// all_gather, then folded in rank order with the region applied elementwise (stablehlo.map),
// which is exactly the reference evaluator's order. reduce_scatter and collective_reduce with
// such regions are a clear error.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/evaluator/eval_family_support.h"
#include "compiler/passes/collective_reduction.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/rewrite.h"

namespace ember::passes {
namespace {

bool IsReducingCollective(ir::Opcode op) {
  return op == ir::Opcode::kAllReduce || op == ir::Opcode::kReduceScatter ||
         op == ir::Opcode::kCollectiveReduce;
}

// The operands a collective reduces (collective_reduce's dynamic root is not one of them).
std::vector<const ir::Value*> ReducedOperands(const ir::Instruction& inst) {
  std::vector<const ir::Value*> out(inst.operands().begin(), inst.operands().end());
  const ir::Attribute* dynamic_root = inst.attribute("has_dynamic_root");
  if (inst.opcode() == ir::Opcode::kCollectiveReduce && dynamic_root != nullptr &&
      dynamic_root->kind == ir::Attribute::Kind::kBool && dynamic_root->b && !out.empty()) {
    out.pop_back();
  }
  return out;
}

// Whether every operand's reduction maps onto a transport.
bool Expressible(const ir::Instruction& inst) {
  if (inst.regions().size() != 1) return false;
  for (const ir::Value* v : ReducedOperands(inst)) {
    if (!v->type().is_tensor()) return false;
    if (!RegionReductionKind(*inst.regions()[0], v->type().element_type()).has_value()) {
      return false;
    }
  }
  return true;
}

// The size of the replica groups (all rows of the same length), or an error.
absl::StatusOr<int64_t> GroupSize(const ir::Instruction& inst) {
  EMBER_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> rows,
                         eval::family_support::IntRowsAttr(inst, "replica_groups", 0));
  if (rows.empty() || rows[0].empty()) {
    return absl::UnimplementedError(absl::StrCat(
        inst.Describe(), ": a reduction region no transport runs needs explicit replica_groups "
                         "to be lowered to all_gather and a fold"));
  }
  for (const std::vector<int64_t>& row : rows) {
    for (int64_t id : row) {
      if (id < 0) {  // ragged groups are padded with -1
        return absl::UnimplementedError(absl::StrCat(
            inst.Describe(), ": a reduction region no transport runs cannot be lowered for "
                             "replica groups of different sizes"));
      }
    }
  }
  return static_cast<int64_t>(rows[0].size());
}

absl::StatusOr<ir::ValueType> TensorType(ir::ElementType type, std::vector<int64_t> dims) {
  EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ir::Shape::Make(type, dims));
  return ir::ValueType::Tensor(shape);
}

// all_reduce(x) over groups of n -> fold_k map(region)(acc, gathered[k]). Each map gets its own
// copy of the region; the all_reduce's own is added to `unused` (removed once the pass is done
// walking the module).
absl::Status LowerAllReduce(const ir::Instruction& inst, Rebuilder& b,
                            std::vector<const ir::Computation*>& unused) {
  EMBER_ASSIGN_OR_RETURN(const int64_t n, GroupSize(inst));
  ir::Computation& c = b.computation();
  ir::Module& module = *c.module();
  for (size_t i = 0; i < inst.operands().size(); ++i) {
    ir::Value* x = b.Map(inst.operand(i));
    const ir::Shape& shape = x->type().shape();
    const ir::ElementType type = shape.element_type();
    std::vector<int64_t> one = {1};
    one.insert(one.end(), shape.dims().begin(), shape.dims().end());
    EMBER_ASSIGN_OR_RETURN(ir::ValueType one_type, TensorType(type, one));
    ir::Value* lifted =
        c.AddInstruction(ir::Opcode::kReshape, {x}, {one_type}, {}, {}, inst.location())->result();
    std::vector<int64_t> all = one;
    all[0] = n;
    EMBER_ASSIGN_OR_RETURN(ir::ValueType all_type, TensorType(type, all));
    ir::AttributeMap gather_attrs;
    for (const auto& [name, value] : inst.attributes().entries()) gather_attrs.Set(name, value);
    gather_attrs.Set("all_gather_dim", ir::Attribute::Int(0));
    ir::Value* gathered = c.AddInstruction(ir::Opcode::kAllGather, {lifted}, {all_type},
                                           std::move(gather_attrs), {}, inst.location())
                              ->result();
    std::vector<int64_t> map_dims;
    for (int64_t d = 0; d < shape.rank(); ++d) map_dims.push_back(d);
    ir::Value* acc = nullptr;
    for (int64_t k = 0; k < n; ++k) {
      std::vector<int64_t> start(all.size(), 0), limit = all, strides(all.size(), 1);
      start[0] = k;
      limit[0] = k + 1;
      ir::AttributeMap slice_attrs;
      slice_attrs.Set("start_indices", ir::Attribute::Ints(start));
      slice_attrs.Set("limit_indices", ir::Attribute::Ints(limit));
      slice_attrs.Set("strides", ir::Attribute::Ints(strides));
      ir::Value* piece = c.AddInstruction(ir::Opcode::kSlice, {gathered}, {one_type},
                                          std::move(slice_attrs), {}, inst.location())
                             ->result();
      piece = c.AddInstruction(ir::Opcode::kReshape, {piece}, {x->type()}, {}, {}, inst.location())
                  ->result();
      if (acc == nullptr) {
        acc = piece;
        continue;
      }
      ValueMap scratch;
      ir::Computation* region = CloneRegion(module, *inst.regions()[0], scratch);
      ir::AttributeMap map_attrs;
      map_attrs.Set("dimensions", ir::Attribute::Ints(map_dims));
      acc = c.AddInstruction(ir::Opcode::kMap, {acc, piece}, {x->type()}, std::move(map_attrs),
                             {region}, inst.location())
                ->result();
    }
    b.SetMapping(inst.result(i), acc);
  }
  unused.push_back(inst.regions()[0]);
  return absl::OkStatus();
}

class LegalizeCollectivesPass : public Pass {
 public:
  std::string name() const override { return "legalize-collectives"; }

  absl::StatusOr<bool> Run(ir::Module& module) override {
    bool changed = false;
    std::vector<const ir::Computation*> unused;
    std::vector<ir::Computation*> computations;
    for (const auto& c : module.computations()) computations.push_back(c.get());
    for (ir::Computation* computation : computations) {
      bool any = false;
      for (const auto& inst : computation->instructions()) {
        if (!IsReducingCollective(inst->opcode()) || Expressible(*inst)) continue;
        if (inst->opcode() != ir::Opcode::kAllReduce) {
          return absl::UnimplementedError(absl::StrCat(
              inst->Describe(), ": its reduction region is not a sum, product, min, max, and, or "
                                "or xor that a collective transport can run on ",
              inst->operands().empty() ? std::string("its operands")
                                       : inst->operand(0)->type().ToString()));
        }
        any = true;
      }
      if (!any) continue;
      changed = true;
      EMBER_RETURN_IF_ERROR(RebuildComputation(
          *computation,
          [&unused](const ir::Instruction& inst, Rebuilder& b) -> absl::StatusOr<bool> {
            if (inst.opcode() != ir::Opcode::kAllReduce || Expressible(inst)) return false;
            EMBER_RETURN_IF_ERROR(LowerAllReduce(inst, b, unused));
            return true;
          }));
    }
    for (const ir::Computation* region : unused) module.RemoveRegion(region);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateLegalizeCollectivesPass() {
  return std::make_unique<LegalizeCollectivesPass>();
}

}  // namespace ember::passes
