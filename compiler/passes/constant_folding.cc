// Constant folding: an instruction whose operands are all constants is evaluated at compile time
// with the reference evaluator's op table (so folding has the evaluator's exact semantics) and
// replaced by a constant, when its result is small. Broadcasts and iotas stay as they are
// (fused kernels read them for free; a folded copy would only cost memory).
#include <vector>

#include "base/status_macros.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/rewrite.h"

namespace ember::passes {
namespace {

using ir::Opcode;

constexpr int64_t kMaxFoldedElements = 1024;

bool Candidate(const ir::Instruction& inst) {
  // Ops with regions stay: their regions would be left without an op (the module cannot drop
  // computations, and the verifier rejects orphan regions).
  if (inst.opcode() == Opcode::kConstant || HasSideEffects(inst) || inst.num_results() != 1 ||
      inst.operands().empty() || !inst.regions().empty()) {
    return false;
  }
  const ir::ValueType& type = inst.result()->type();
  if (!type.is_tensor() || type.shape().element_count() > kMaxFoldedElements) return false;
  if ((inst.opcode() == Opcode::kBroadcastInDim || inst.opcode() == Opcode::kBroadcast ||
       inst.opcode() == Opcode::kIota) &&
      type.shape().element_count() > 1) {
    return false;
  }
  return eval::OpTable::Get().Find(inst.opcode()) != nullptr;
}

class ConstantFoldingPass : public Pass {
 public:
  std::string name() const override { return "constant_folding"; }

  absl::StatusOr<bool> Run(ir::Module& module) override {
    bool changed = false;
    std::vector<ir::Computation*> computations;
    for (const auto& c : module.computations()) computations.push_back(c.get());
    for (ir::Computation* computation : computations) {
      bool any = false;
      for (const auto& inst : computation->instructions()) {
        if (!Candidate(*inst)) continue;
        bool all_constant = true;
        for (const ir::Value* v : inst->operands()) all_constant = all_constant && ConstantLiteral(v);
        // Chains fold too (a folded operand becomes a constant during the rebuild), but one
        // directly foldable instruction is needed to start.
        if (all_constant) any = true;
      }
      if (!any) continue;
      bool folded_here = false;
      EMBER_RETURN_IF_ERROR(RebuildComputation(
          *computation, [&](const ir::Instruction& inst, Rebuilder& b) -> absl::StatusOr<bool> {
            if (!Candidate(inst)) return false;
            std::vector<eval::EvalValue> operands;
            for (ir::Value* v : inst.operands()) {
              const ir::Literal* lit = ConstantLiteral(b.Map(v));
              if (lit == nullptr) return false;
              absl::StatusOr<ir::Literal> copy = lit->Clone();
              if (!copy.ok()) return false;
              operands.push_back(eval::EvalValue::Array(*std::move(copy)));
            }
            eval::OpEvaluator fn = eval::OpTable::Get().Find(inst.opcode());
            eval::Evaluator evaluator;
            absl::StatusOr<std::vector<eval::EvalValue>> out = fn(inst, operands, evaluator);
            // A failure is left for run time, where it is reported with the launch.
            if (!out.ok() || out->size() != 1 || (*out)[0].kind != eval::EvalValue::Kind::kArray ||
                !((*out)[0].array.shape() == inst.result()->type().shape())) {
              return false;
            }
            ir::AttributeMap attrs;
            attrs.Set("value", ir::Attribute::OfLiteral(std::move((*out)[0].array)));
            ir::Instruction* constant = b.computation().AddInstruction(
                Opcode::kConstant, {}, {inst.result()->type()}, std::move(attrs), {},
                inst.location());
            b.SetMapping(inst.result(), constant->result());
            folded_here = true;
            return true;
          }));
      changed = changed || folded_here;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateConstantFoldingPass() { return std::make_unique<ConstantFoldingPass>(); }

}  // namespace ember::passes
