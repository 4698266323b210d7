// Control-flow captures made explicit. A while loop whose condition or body reads values of the
// computations around it (JAX's scan and fori_loop lowerings capture their trip count and other
// constants) gets those values as extra loop-carried operands, passed through the body
// unchanged. An if or case whose branches read such values (every lax.cond and lax.switch does:
// StableHLO branches take no arguments) gets them as operands after its selector, and every
// branch a parameter per value. The regions then read their own parameters and are programs of
// their own that a backend compiles like an entry (captured values are what kept whole programs
// on the evaluator). Ops are visited outermost first, so an inner op's captures of an outer
// region become that region's parameters before the inner op takes them as operands.
#include <deque>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/status_macros.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/rewrite.h"

namespace ember::passes {
namespace {

// The distinct values `op`'s regions capture from outside it, in first-use order.
std::vector<ir::Value*> Captures(const ir::Instruction& op) {
  std::vector<ir::Value*> out;
  std::unordered_set<const ir::Value*> seen;
  for (const ir::Computation* region : op.regions()) {
    std::vector<const ir::Value*> captured;
    CollectCapturedValues(*region, captured);
    for (const ir::Value* v : captured) {
      if (seen.insert(v).second) out.push_back(const_cast<ir::Value*>(v));
    }
  }
  return out;
}

// Small constants a region captures are copied into it instead (a sort comparator's NaN, a loop's
// trip count): a region of its own again, with nothing to pass in.
constexpr int64_t kMaxCopiedConstantElements = 16;

absl::StatusOr<bool> CopyCapturedConstants(ir::Computation& region) {
  std::vector<const ir::Value*> captured;
  CollectCapturedValues(region, captured);
  std::vector<const ir::Value*> constants;
  std::unordered_set<const ir::Value*> seen;
  for (const ir::Value* v : captured) {
    const ir::Instruction* producer = v->producer();
    if (producer == nullptr || producer->opcode() != ir::Opcode::kConstant ||
        !v->type().is_tensor() ||
        v->type().shape().element_count() > kMaxCopiedConstantElements || !seen.insert(v).second) {
      continue;
    }
    constants.push_back(v);
  }
  if (constants.empty() || region.instructions().empty()) return false;
  // The copies go first (rebuilding the region in order after them), then the region's reads
  // (nested regions' too) point at them; the originals keep their other users.
  const ir::Instruction* first = region.instructions().front().get();
  ValueMap copies;
  EMBER_RETURN_IF_ERROR(RebuildComputation(
      region, [&](const ir::Instruction& inst, Rebuilder& b) -> absl::StatusOr<bool> {
        if (&inst != first) return false;
        for (const ir::Value* v : constants) {
          const ir::Instruction& c = *v->producer();
          copies[v] = b.computation()
                          .AddInstruction(ir::Opcode::kConstant, {}, {v->type()}, c.attributes(),
                                          {}, c.location())
                          ->result();
        }
        return false;
      }));
  ReplaceOperandsInRegion(region, copies);
  return true;
}

// Whether `op` is control flow whose regions this pass parameterizes: a while loop of carried
// values, or an if/case whose branches take no parameters yet.
bool Parameterizable(const ir::Instruction& op) {
  switch (op.opcode()) {
    case ir::Opcode::kWhile:
      return op.regions().size() == 2 && op.operands().size() == op.num_results();
    case ir::Opcode::kIf:
    case ir::Opcode::kCase:
      if (op.regions().empty() || op.operands().size() != 1) return false;
      for (const ir::Computation* branch : op.regions()) {
        if (!branch->parameters().empty()) return false;
      }
      return true;
    default:
      return false;
  }
}

// Gives `op`'s regions a parameter per captured value; a loop body returns it unchanged.
absl::Status ParameterizeRegions(const ir::Instruction& op,
                                 const std::vector<ir::Value*>& captures) {
  const bool loop = op.opcode() == ir::Opcode::kWhile;
  for (size_t r = 0; r < op.regions().size(); ++r) {
    ir::Computation& region = *op.regions()[r];
    ValueMap map;
    std::vector<ir::Value*> added;
    for (ir::Value* v : captures) {
      ir::Value* p = region.AddParameter(v->type());
      map[v] = p;
      added.push_back(p);
    }
    ReplaceOperandsInRegion(region, map);
    if (!loop || r == 0) continue;
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

class ExplicitCapturesPass final : public Pass {
 public:
  std::string name() const override { return "explicit_captures"; }

  absl::StatusOr<bool> Run(ir::Module& module) override {
    bool changed = false;
    std::deque<ir::Computation*> work(module.functions().begin(), module.functions().end());
    while (!work.empty()) {
      ir::Computation& computation = *work.front();
      work.pop_front();
      for (const auto& inst : computation.instructions()) {
        for (ir::Computation* region : inst->regions()) {
          EMBER_ASSIGN_OR_RETURN(bool copied, CopyCapturedConstants(*region));
          changed = changed || copied;
        }
      }
      std::unordered_map<const ir::Instruction*, std::vector<ir::Value*>> ops;
      for (const auto& inst : computation.instructions()) {
        if (!Parameterizable(*inst)) continue;
        std::vector<ir::Value*> captures = Captures(*inst);
        if (!captures.empty()) ops.emplace(inst.get(), std::move(captures));
      }
      if (!ops.empty()) {
        changed = true;
        for (const auto& [op, captures] : ops) {
          EMBER_RETURN_IF_ERROR(ParameterizeRegions(*op, captures));
        }
        EMBER_RETURN_IF_ERROR(RebuildComputation(
            computation, [&](const ir::Instruction& inst, Rebuilder& b) -> absl::StatusOr<bool> {
              auto it = ops.find(&inst);
              if (it == ops.end()) return false;
              const bool loop = inst.opcode() == ir::Opcode::kWhile;
              std::vector<ir::Value*> operands;
              std::vector<ir::ValueType> types;
              for (ir::Value* v : inst.operands()) operands.push_back(b.Map(v));
              for (size_t i = 0; i < inst.num_results(); ++i) {
                types.push_back(inst.result(i)->type());
              }
              for (ir::Value* v : it->second) {
                operands.push_back(b.Map(v));
                if (loop) types.push_back(v->type());  // carried through the loop
              }
              ir::Instruction* copy = b.computation().AddInstruction(
                  inst.opcode(), std::move(operands), std::move(types), inst.attributes(),
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

std::unique_ptr<Pass> CreateExplicitCapturesPass() {
  return std::make_unique<ExplicitCapturesPass>();
}

}  // namespace ember::passes
