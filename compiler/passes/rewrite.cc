#include "compiler/passes/rewrite.h"

#include <unordered_set>

#include "base/status_macros.h"

namespace ember::passes {

int64_t ReplaceUses(ir::Module& module, const ValueMap& replacements) {
  if (replacements.empty()) return 0;
  auto resolve = [&](ir::Value* v) {
    for (int guard = 0; guard < 1000; ++guard) {
      auto it = replacements.find(v);
      if (it == replacements.end() || it->second == v) break;
      v = it->second;
    }
    return v;
  };
  int64_t changed = 0;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      for (size_t i = 0; i < instruction->operands().size(); ++i) {
        ir::Value* v = instruction->operand(i);
        ir::Value* r = resolve(v);
        if (r != v) {
          instruction->set_operand(i, r);
          ++changed;
        }
      }
    }
  }
  return changed;
}

std::unordered_map<const ir::Value*, int64_t> CountUses(const ir::Module& module) {
  std::unordered_map<const ir::Value*, int64_t> uses;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      for (const ir::Value* v : instruction->operands()) ++uses[v];
    }
  }
  return uses;
}

const ir::Literal* ConstantLiteral(const ir::Value* v) {
  const ir::Instruction* p = v->producer();
  if (p == nullptr || p->opcode() != ir::Opcode::kConstant) return nullptr;
  const ir::Attribute* a = p->attribute("value");
  if (a == nullptr || a->kind != ir::Attribute::Kind::kLiteral || a->literal == nullptr) {
    return nullptr;
  }
  return a->literal.get();
}

bool IsShardingConstraint(const ir::Instruction& instruction) {
  if (instruction.opcode() != ir::Opcode::kCustomCall) return false;
  const ir::Attribute* target = instruction.attribute("call_target_name");
  return target != nullptr && target->kind == ir::Attribute::Kind::kString &&
         target->s == "Sharding";
}

bool HasSideEffects(const ir::Instruction& instruction) {
  using ir::Opcode;
  switch (instruction.opcode()) {
    case Opcode::kReturn:
    case Opcode::kCustomCall:
    case Opcode::kAllGather:
    case Opcode::kAllReduce:
    case Opcode::kAllToAll:
    case Opcode::kReduceScatter:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kCollectiveReduce:
    case Opcode::kCollectivePermute:
    case Opcode::kReplicaId:
    case Opcode::kPartitionId:
    case Opcode::kRng:
    case Opcode::kRngBitGenerator:
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kSend:
    case Opcode::kRecv:
    case Opcode::kAfterAll:
    case Opcode::kOptimizationBarrier:
    case Opcode::kWhile:
    case Opcode::kIf:
    case Opcode::kCase:
    case Opcode::kCall:
    case Opcode::kComposite:
    case Opcode::kMap:
    case Opcode::kAsyncStart:  // its body may be a collective
      return true;
    default:
      break;
  }
  // Anything producing or consuming tokens orders effects.
  for (size_t i = 0; i < instruction.num_results(); ++i) {
    if (!instruction.result(i)->type().is_tensor()) return true;
  }
  for (const ir::Value* v : instruction.operands()) {
    if (!v->type().is_tensor()) return true;
  }
  return false;
}

void CollectCapturedValues(const ir::Computation& region, std::vector<const ir::Value*>& out) {
  for (const auto& instruction : region.instructions()) {
    for (const ir::Value* v : instruction->operands()) {
      if (v->owner() != &region) out.push_back(v);
    }
    for (const ir::Computation* nested : instruction->regions()) {
      std::vector<const ir::Value*> inner;
      CollectCapturedValues(*nested, inner);
      for (const ir::Value* v : inner) {
        if (v->owner() != &region) out.push_back(v);
      }
    }
  }
}

ir::Value* Rebuilder::Map(ir::Value* old) const {
  auto it = map_.find(old);
  return it == map_.end() ? old : it->second;
}

void ReplaceOperandsInRegion(ir::Computation& region, const ValueMap& map) {
  for (const auto& inst : region.instructions()) {
    for (size_t i = 0; i < inst->operands().size(); ++i) {
      auto it = map.find(inst->operand(i));
      if (it != map.end()) inst->set_operand(i, it->second);
    }
    for (ir::Computation* nested : inst->regions()) ReplaceOperandsInRegion(*nested, map);
  }
}

ir::Computation* CloneRegion(ir::Module& module, const ir::Computation& region, ValueMap& map) {
  ir::Computation* copy = module.AddRegion(region.name());
  for (const auto& p : region.parameters()) map[p.get()] = copy->AddParameter(p->type());
  for (const auto& inst : region.instructions()) {
    std::vector<ir::Computation*> regions;
    for (const ir::Computation* r : inst->regions()) regions.push_back(CloneRegion(module, *r, map));
    std::vector<ir::Value*> operands;
    for (ir::Value* v : inst->operands()) {
      auto it = map.find(v);
      operands.push_back(it != map.end() ? it->second : v);
    }
    std::vector<ir::ValueType> types;
    for (size_t i = 0; i < inst->num_results(); ++i) types.push_back(inst->result(i)->type());
    ir::Instruction* c = copy->AddInstruction(inst->opcode(), std::move(operands), std::move(types),
                                              inst->attributes(), std::move(regions),
                                              inst->location());
    if (inst->callee() != nullptr) c->set_callee(inst->callee());
    for (size_t i = 0; i < inst->num_results(); ++i) map[inst->result(i)] = c->result(i);
  }
  return copy;
}

ir::Instruction* Rebuilder::Clone(const ir::Instruction& instruction, ValueMap* local,
                                  bool clone_regions) {
  std::vector<ir::Value*> operands;
  operands.reserve(instruction.operands().size());
  for (ir::Value* v : instruction.operands()) {
    if (local != nullptr) {
      auto it = local->find(v);
      if (it != local->end()) {
        operands.push_back(it->second);
        continue;
      }
    }
    operands.push_back(Map(v));
  }
  std::vector<ir::ValueType> types;
  for (size_t i = 0; i < instruction.num_results(); ++i) types.push_back(instruction.result(i)->type());
  std::vector<ir::Computation*> regions = instruction.regions();
  if (clone_regions) {
    for (ir::Computation*& r : regions) {
      ValueMap scratch;
      r = CloneRegion(*computation_.module(), *r, scratch);
      // Values the region captures from around the instruction are mapped like its operands
      // (an inlined callee's region reading the callee's values reads their copies).
      std::vector<const ir::Value*> captured;
      CollectCapturedValues(*r, captured);
      ValueMap outer;
      for (const ir::Value* v : captured) {
        ir::Value* old = const_cast<ir::Value*>(v);
        ir::Value* now = old;
        if (local != nullptr) {
          auto it = local->find(old);
          if (it != local->end()) now = it->second;
        }
        if (now == old) now = Map(old);
        if (now != old) outer[old] = now;
      }
      if (!outer.empty()) ReplaceOperandsInRegion(*r, outer);
    }
  }
  ir::Instruction* copy = computation_.AddInstruction(
      instruction.opcode(), std::move(operands), std::move(types), instruction.attributes(),
      std::move(regions), instruction.location());
  if (instruction.callee() != nullptr) copy->set_callee(instruction.callee());
  for (size_t i = 0; i < instruction.num_results(); ++i) {
    (local != nullptr ? *local : map_)[instruction.result(i)] = copy->result(i);
  }
  return copy;
}

absl::Status RebuildComputation(ir::Computation& computation, const EmitFn& emit) {
  std::vector<ir::Instruction*> old;
  for (const auto& instruction : computation.instructions()) old.push_back(instruction.get());
  Rebuilder rebuilder(computation);
  for (ir::Instruction* instruction : old) {
    EMBER_ASSIGN_OR_RETURN(bool replaced, emit(*instruction, rebuilder));
    if (!replaced) rebuilder.Clone(*instruction);
  }
  std::unordered_set<const ir::Instruction*> remove(old.begin(), old.end());
  // Redirect uses in the whole module (regions capture values) before the old values die.
  ReplaceUses(*computation.module(), rebuilder.map());
  computation.RemoveInstructionsIf(
      [&](const ir::Instruction& instruction) { return remove.contains(&instruction); });
  return absl::OkStatus();
}

const std::vector<int64_t>* IntsAttribute(const ir::Instruction& instruction,
                                          std::string_view name) {
  const ir::Attribute* a = instruction.attribute(name);
  return a != nullptr && a->kind == ir::Attribute::Kind::kInts ? &a->ints : nullptr;
}

}  // namespace ember::passes
