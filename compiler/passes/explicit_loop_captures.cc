// Loop captures made explicit: a while loop whose condition or body reads values of the
// computations around it (JAX's scan and fori_loop lowerings capture their trip count and other
// constants) gets those values as extra loop-carried operands, passed through the body
// unchanged, and its regions read their own parameters instead. Its regions are then programs
// of their own that a backend compiles like an entry (the host backend runs such loops
// natively; captured values are what kept whole programs on the evaluator). Loops are visited
// outermost first, so an inner loop's captures of the outer body become the outer body's
// parameters before the inner loop takes them as operands.
#include <deque>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/status_macros.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/rewrite.h"

namespace ember::passes {
namespace {

// The distinct values `loop`'s regions capture from outside the loop, in first-use order.
std::vector<ir::Value*> Captures(const ir::Instruction& loop) {
  std::vector<ir::Value*> out;
  std::unordered_set<const ir::Value*> seen;
  for (const ir::Computation* region : loop.regions()) {
    std::vector<const ir::Value*> captured;
    CollectCapturedValues(*region, captured);
    for (const ir::Value* v : captured) {
      if (seen.insert(v).second) out.push_back(const_cast<ir::Value*>(v));
    }
  }
  return out;
}

// Points the operands of `region`'s instructions (nested regions included) that are keys of
// `map` at their values.
void ReplaceInRegion(ir::Computation& region, const ValueMap& map) {
  for (const auto& inst : region.instructions()) {
    for (size_t i = 0; i < inst->operands().size(); ++i) {
      auto it = map.find(inst->operand(i));
      if (it != map.end()) inst->set_operand(i, it->second);
    }
    for (ir::Computation* nested : inst->regions()) ReplaceInRegion(*nested, map);
  }
}

// Gives `loop`'s regions a parameter per captured value; the body returns it unchanged.
absl::Status ParameterizeRegions(const ir::Instruction& loop,
                                 const std::vector<ir::Value*>& captures) {
  for (size_t r = 0; r < 2; ++r) {
    ir::Computation& region = *loop.regions()[r];
    ValueMap map;
    std::vector<ir::Value*> added;
    for (ir::Value* v : captures) {
      ir::Value* p = region.AddParameter(v->type());
      map[v] = p;
      added.push_back(p);
    }
    ReplaceInRegion(region, map);
    if (r == 0) continue;
    EMBER_RETURN_IF_ERROR(RebuildComputation(
        region, [&](const ir::Instruction& inst, Rebuilder& b) -> absl::StatusOr<bool> {
          if (inst.opcode() != ir::Opcode::kReturn) return false;
          std::vector<ir::Value*> operands;
          for (ir::Value* v : inst.operands()) operands.push_back(b.Map(v));
          operands.insert(operands.end(), added.begin(), added.end());
          b.computation().AddInstruction(ir::Opcode::kReturn, std::move(operands), {}, {}, {},
                                         inst.location());
          return true;
        }));
  }
  return absl::OkStatus();
}

class ExplicitLoopCapturesPass final : public Pass {
 public:
  std::string name() const override { return "loop_captures"; }

  absl::StatusOr<bool> Run(ir::Module& module) override {
    bool changed = false;
    std::deque<ir::Computation*> work(module.functions().begin(), module.functions().end());
    while (!work.empty()) {
      ir::Computation& computation = *work.front();
      work.pop_front();
      std::unordered_map<const ir::Instruction*, std::vector<ir::Value*>> loops;
      for (const auto& inst : computation.instructions()) {
        if (inst->opcode() != ir::Opcode::kWhile || inst->regions().size() != 2 ||
            inst->operands().size() != inst->num_results()) {
          continue;
        }
        std::vector<ir::Value*> captures = Captures(*inst);
        if (!captures.empty()) loops.emplace(inst.get(), std::move(captures));
      }
      if (!loops.empty()) {
        changed = true;
        for (const auto& [loop, captures] : loops) {
          EMBER_RETURN_IF_ERROR(ParameterizeRegions(*loop, captures));
        }
        EMBER_RETURN_IF_ERROR(RebuildComputation(
            computation, [&](const ir::Instruction& inst, Rebuilder& b) -> absl::StatusOr<bool> {
              auto it = loops.find(&inst);
              if (it == loops.end()) return false;
              std::vector<ir::Value*> operands;
              std::vector<ir::ValueType> types;
              for (ir::Value* v : inst.operands()) operands.push_back(b.Map(v));
              for (size_t i = 0; i < inst.num_results(); ++i) {
                types.push_back(inst.result(i)->type());
              }
              for (ir::Value* v : it->second) {
                operands.push_back(b.Map(v));
                types.push_back(v->type());
              }
              ir::Instruction* copy = b.computation().AddInstruction(
                  ir::Opcode::kWhile, std::move(operands), std::move(types), inst.attributes(),
                  inst.regions(), inst.location());
              for (size_t i = 0; i < inst.num_results(); ++i) {
                b.SetMapping(inst.result(i), copy->result(i));
              }
              return true;
            }));
      }
      for (const auto& inst : computation.instructions()) {
        for (ir::Computation* region : inst->regions()) work.push_back(region);
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateExplicitLoopCapturesPass() {
  return std::make_unique<ExplicitLoopCapturesPass>();
}

}  // namespace ember::passes
