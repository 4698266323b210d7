// Dead code elimination: pure instructions whose results nobody reads are removed, in every
// computation of the module (uses are counted module-wide because regions capture values).
// Instructions with regions stay: the module cannot drop their region computations.
#include <unordered_set>

#include "compiler/passes/pass.h"
#include "compiler/passes/rewrite.h"

namespace ember::passes {
namespace {

class DcePass : public Pass {
 public:
  std::string name() const override { return "dce"; }

  absl::StatusOr<bool> Run(ir::Module& module) override {
    std::unordered_map<const ir::Value*, int64_t> uses = CountUses(module);
    bool changed = false;
    for (const auto& computation : module.computations()) {
      std::unordered_set<const ir::Instruction*> dead;
      const auto& instructions = computation->instructions();
      // Backwards, so a chain of dead instructions goes in one sweep.
      for (auto it = instructions.rbegin(); it != instructions.rend(); ++it) {
        const ir::Instruction& inst = **it;
        // Ops with regions stay (their regions cannot be removed from the module).
        if (HasSideEffects(inst) || !inst.regions().empty()) continue;
        bool used = false;
        for (size_t i = 0; i < inst.num_results(); ++i) {
          auto u = uses.find(inst.result(i));
          if (u != uses.end() && u->second > 0) used = true;
        }
        if (used) continue;
        dead.insert(&inst);
        for (const ir::Value* v : inst.operands()) --uses[v];
      }
      if (dead.empty()) continue;
      changed = true;
      computation->RemoveInstructionsIf(
          [&](const ir::Instruction& inst) { return dead.contains(&inst); });
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateDcePass() { return std::make_unique<DcePass>(); }

}  // namespace ember::passes
