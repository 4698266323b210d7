// Batch-grouped convolutions -> feature-grouped ones. A convolution with batch_group_count G > 1
// (what JAX's gradient of a grouped or depthwise convolution takes with respect to its kernel)
// splits the input's batch into G consecutive groups and computes output feature group g from
// batch group g. That is the feature-grouped convolution (feature_group_count = G) of the input
// with its batch groups moved into the feature dimension, group major: [B, ..., C] becomes
// [B / G, ..., G * C], input feature g * C + c being batch g * (B / G) + b's feature c. The
// input's dimension numbers stay; only its batch and feature sizes change. Backends then run one
// kind of grouped convolution (the host's im2col + GEMM; batch groups left the op to the
// evaluator).
#include <numeric>
#include <vector>

#include "base/status_macros.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/rewrite.h"

namespace ember::passes {
namespace {

int64_t IntAttr(const ir::Instruction& inst, const char* name, int64_t fallback) {
  const ir::Attribute* a = inst.attribute(name);
  return a != nullptr && a->kind == ir::Attribute::Kind::kInt ? a->i : fallback;
}

// The feature-grouped equivalent of batch-grouped convolution `conv`, appended through `b`;
// null when `conv` is not one this rewrites (left as it is).
absl::StatusOr<ir::Value*> Regroup(const ir::Instruction& conv, Rebuilder& b) {
  const int64_t groups = IntAttr(conv, "batch_group_count", 1);
  if (groups <= 1 || IntAttr(conv, "feature_group_count", 1) != 1 ||
      conv.operands().size() != 2 || conv.num_results() != 1) {
    return nullptr;
  }
  const ir::Value* lhs = conv.operand(0);
  if (!lhs->type().is_tensor() || !conv.result()->type().is_tensor()) return nullptr;
  const ir::Attribute* batch_attr = conv.attribute("input_batch_dimension");
  const ir::Attribute* feature_attr = conv.attribute("input_feature_dimension");
  if (batch_attr == nullptr || feature_attr == nullptr) return nullptr;
  const std::vector<int64_t>& dims = lhs->type().dims();
  const int64_t rank = static_cast<int64_t>(dims.size());
  const int64_t batch = batch_attr->i, feature = feature_attr->i;
  if (batch < 0 || batch >= rank || feature < 0 || feature >= rank || batch == feature ||
      dims[batch] % groups != 0) {
    return nullptr;  // (malformed: the verifier and the evaluator say so)
  }
  // [.., B, ..] -> [.., G, B / G, ..]: G is dim `batch`, the batch `batch + 1`.
  std::vector<int64_t> split = dims;
  split[batch] = dims[batch] / groups;
  split.insert(split.begin() + batch, groups);
  const ir::ElementType type = lhs->type().element_type();
  ir::Computation& c = b.computation();
  auto tensor = [&](const std::vector<int64_t>& d) -> absl::StatusOr<ir::ValueType> {
    EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ir::Shape::Make(type, d));
    return ir::ValueType::Tensor(std::move(shape));
  };
  EMBER_ASSIGN_OR_RETURN(ir::ValueType split_type, tensor(split));
  ir::Value* x = c.AddInstruction(ir::Opcode::kReshape, {b.Map(const_cast<ir::Value*>(lhs))},
                                  {split_type}, {}, {}, conv.location())
                     ->result();
  // G just before the feature dim: the other dims keep their order.
  const int64_t g_at = batch;
  const int64_t f_at = feature + (feature > batch ? 1 : 0);
  std::vector<int64_t> perm;
  for (int64_t d = 0; d <= rank; ++d) {
    if (d == g_at) continue;
    if (d == f_at) perm.push_back(g_at);
    perm.push_back(d);
  }
  std::vector<int64_t> moved;
  for (int64_t d : perm) moved.push_back(split[d]);
  EMBER_ASSIGN_OR_RETURN(ir::ValueType moved_type, tensor(moved));
  ir::AttributeMap permutation;
  permutation.Set("permutation", ir::Attribute::Ints(perm));
  x = c.AddInstruction(ir::Opcode::kTranspose, {x}, {moved_type}, std::move(permutation), {},
                       conv.location())
          ->result();
  // [.., G, C, ..] -> [.., G * C, ..]: the input's own rank and dimension numbers again.
  std::vector<int64_t> merged = dims;
  merged[batch] = dims[batch] / groups;
  merged[feature] = dims[feature] * groups;
  EMBER_ASSIGN_OR_RETURN(ir::ValueType merged_type, tensor(merged));
  x = c.AddInstruction(ir::Opcode::kReshape, {x}, {merged_type}, {}, {}, conv.location())->result();
  ir::AttributeMap attributes = conv.attributes();
  attributes.Set("batch_group_count", ir::Attribute::Int(1));
  attributes.Set("feature_group_count", ir::Attribute::Int(groups));
  return c
      .AddInstruction(ir::Opcode::kConvolution,
                      {x, b.Map(const_cast<ir::Value*>(conv.operand(1)))},
                      {conv.result()->type()}, std::move(attributes), {}, conv.location())
      ->result();
}

class ConvolutionBatchGroupsPass final : public Pass {
 public:
  std::string name() const override { return "convolution-batch-groups"; }

  absl::StatusOr<bool> Run(ir::Module& module) override {
    bool changed = false;
    std::vector<ir::Computation*> computations;
    for (const auto& c : module.computations()) computations.push_back(c.get());
    for (ir::Computation* computation : computations) {
      bool any = false;
      for (const auto& inst : computation->instructions()) {
        any = any || (inst->opcode() == ir::Opcode::kConvolution &&
                      IntAttr(*inst, "batch_group_count", 1) > 1);
      }
      if (!any) continue;
      EMBER_RETURN_IF_ERROR(RebuildComputation(
          *computation, [&](const ir::Instruction& inst, Rebuilder& b) -> absl::StatusOr<bool> {
            if (inst.opcode() != ir::Opcode::kConvolution) return false;
            EMBER_ASSIGN_OR_RETURN(ir::Value * regrouped, Regroup(inst, b));
            if (regrouped == nullptr) return false;
            b.SetMapping(inst.result(), regrouped);
            changed = true;
            return true;
          }));
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateConvolutionBatchGroupsPass() {
  return std::make_unique<ConvolutionBatchGroupsPass>();
}

}  // namespace ember::passes
