// Inlining: func.call (kCall) and composite (kComposite, through its decomposition function) are
// replaced by a copy of the callee's body. Later passes and fusion then see one flat graph.
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/rewrite.h"

namespace ember::passes {
namespace {

constexpr int kMaxRounds = 32;

// A callee can be copied into a caller when the types line up (values its regions read from the
// callee are mapped to their copies, like operands).
bool Inlinable(const ir::Instruction& call, const ir::Computation& caller) {
  const ir::Computation* callee = call.callee();
  if (callee == nullptr || callee == &caller) return false;
  if (call.opcode() != ir::Opcode::kCall && call.opcode() != ir::Opcode::kComposite) return false;
  // A composite's regions belong to it and cannot be dropped from the module; such a composite
  // stays a call of its decomposition (which is its whole meaning: the spec ignores the regions
  // once the decomposition runs).
  if (!call.regions().empty()) return false;
  if (callee->parameters().size() != call.operands().size()) return false;
  const ir::Instruction* ret = callee->return_instruction();
  if (ret == nullptr || ret->operands().size() != call.num_results()) return false;
  for (size_t i = 0; i < call.operands().size(); ++i) {
    if (callee->parameter(i)->type() != call.operand(i)->type()) return false;
  }
  return true;
}

class InlinePass : public Pass {
 public:
  std::string name() const override { return "inline"; }

  absl::StatusOr<bool> Run(ir::Module& module) override {
    bool changed = false;
    for (int round = 0; round < kMaxRounds; ++round) {
      // Listed again every round: inlining a callee with control flow copies its regions into
      // new computations, whose calls the next round inlines.
      std::vector<ir::Computation*> computations;
      for (const auto& c : module.computations()) computations.push_back(c.get());
      bool round_changed = false;
      for (ir::Computation* computation : computations) {
        bool any = false;
        for (const auto& instruction : computation->instructions()) {
          if (Inlinable(*instruction, *computation)) any = true;
        }
        if (!any) continue;
        round_changed = true;
        EMBER_RETURN_IF_ERROR(RebuildComputation(
            *computation,
            [computation](const ir::Instruction& inst, Rebuilder& b) -> absl::StatusOr<bool> {
              if (!Inlinable(inst, *computation)) return false;
              const ir::Computation& callee = *inst.callee();
              ValueMap local;
              for (size_t i = 0; i < inst.operands().size(); ++i) {
                local[callee.parameter(i)] = b.Map(inst.operand(i));
              }
              for (const auto& body : callee.instructions()) {
                if (body.get() == callee.return_instruction()) continue;
                b.Clone(*body, &local, /*clone_regions=*/true);
              }
              const ir::Instruction* ret = callee.return_instruction();
              for (size_t i = 0; i < inst.num_results(); ++i) {
                ir::Value* v = ret->operand(i);
                auto it = local.find(v);
                b.SetMapping(inst.result(i), it != local.end() ? it->second : b.Map(v));
              }
              return true;
            }));
      }
      changed = changed || round_changed;
      if (!round_changed) break;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateInlinePass() { return std::make_unique<InlinePass>(); }

}  // namespace ember::passes
