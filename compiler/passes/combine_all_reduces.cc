// All-reduces that could run together become one variadic all_reduce (XLA's AllReduceCombiner):
// a partitioned training step all-reduces every weight gradient, each a rendezvous of every
// device; combined, the devices meet once. A group is a run of all-reduces in one computation
// with the same participants, reduction and element type, none reading another's result. The
// combined op takes the last one's place; pure instructions in between that read a member's
// result move to just after it, and one that must keep its place (side effects, collectives,
// control flow) ends the group before it. Groups stop at kMaxCombinedBytes.
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/status_macros.h"
#include "compiler/passes/collective_reduction.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/rewrite.h"

namespace ember::passes {
namespace {

constexpr int64_t kMaxCombinedBytes = int64_t{64} << 20;

// A single-operand all_reduce of an array, and what another must share to join it.
bool Combinable(const ir::Instruction& inst) {
  if (inst.opcode() != ir::Opcode::kAllReduce || inst.operands().size() != 1 ||
      inst.num_results() != 1 || inst.regions().size() != 1) {
    return false;
  }
  const ir::ValueType& type = inst.result(0)->type();
  return type.is_tensor() && type.is_static() &&
         RegionReductionKind(*inst.regions()[0], type.element_type()).has_value();
}

bool SameAttribute(const ir::Instruction& a, const ir::Instruction& b, const char* name) {
  const ir::Attribute* x = a.attribute(name);
  const ir::Attribute* y = b.attribute(name);
  if (x == nullptr || y == nullptr) return x == y;
  return *x == *y;
}

bool Compatible(const ir::Instruction& a, const ir::Instruction& b) {
  const ir::ElementType type = a.result(0)->type().element_type();
  if (b.result(0)->type().element_type() != type) return false;
  if (RegionReductionKind(*a.regions()[0], type) != RegionReductionKind(*b.regions()[0], type)) {
    return false;
  }
  const ir::Attribute* ca = a.attribute("channel_id");
  const ir::Attribute* cb = b.attribute("channel_id");
  const bool channel_a = ca != nullptr && ca->kind == ir::Attribute::Kind::kInt && ca->i > 0;
  const bool channel_b = cb != nullptr && cb->kind == ir::Attribute::Kind::kInt && cb->i > 0;
  return channel_a == channel_b && SameAttribute(a, b, "replica_groups") &&
         SameAttribute(a, b, "use_global_device_ids");
}

// The values `inst` reads, its regions' captures included.
std::vector<const ir::Value*> Reads(const ir::Instruction& inst) {
  std::vector<const ir::Value*> reads(inst.operands().begin(), inst.operands().end());
  for (const ir::Computation* region : inst.regions()) CollectCapturedValues(*region, reads);
  return reads;
}

// A group of all-reduces to combine, and the instructions between its first and last member
// that read (transitively) a member's result: they move to just after the combined op.
struct Group {
  std::vector<const ir::Instruction*> members;
  std::vector<const ir::Instruction*> deferred;
};

// Groups of two or more all-reduces of `c` to combine, in instruction order.
std::vector<Group> FindGroups(const ir::Computation& c) {
  std::unordered_map<const ir::Instruction*, size_t> position;
  for (const auto& inst : c.instructions()) position.emplace(inst.get(), position.size());
  std::vector<Group> groups;
  Group open;
  std::unordered_set<const ir::Value*> tainted;  // members' results and what reads them
  int64_t open_bytes = 0;
  auto close = [&] {
    if (open.members.size() > 1) {
      // Only what precedes the last member moves.
      const size_t last = position.at(open.members.back());
      std::erase_if(open.deferred, [&](const ir::Instruction* d) { return position.at(d) > last; });
      groups.push_back(open);
    }
    open = Group{};
    tainted.clear();
    open_bytes = 0;
  };
  for (const auto& inst : c.instructions()) {
    bool reads_open = false;
    for (const ir::Value* v : Reads(*inst)) reads_open |= tainted.contains(v);
    if (reads_open) {
      // It waits for the combined op, unless it must keep its place (side effects, collectives,
      // control flow): then the group ends before it.
      if (HasSideEffects(*inst) || !inst->regions().empty()) {
        close();
      } else {
        open.deferred.push_back(inst.get());
        for (size_t i = 0; i < inst->num_results(); ++i) tainted.insert(inst->result(i));
        continue;
      }
    }
    if (!Combinable(*inst)) continue;
    const int64_t bytes = inst->result(0)->type().shape().ByteSize();
    if (!open.members.empty() &&
        (!Compatible(*open.members.front(), *inst) || open_bytes + bytes > kMaxCombinedBytes)) {
      close();
    }
    open.members.push_back(inst.get());
    tainted.insert(inst->result(0));
    open_bytes += bytes;
  }
  close();
  return groups;
}

class CombineAllReducesPass : public Pass {
 public:
  std::string name() const override { return "combine-all-reduces"; }

  absl::StatusOr<bool> Run(ir::Module& module) override {
    bool changed = false;
    std::vector<const ir::Computation*> dropped_regions;
    std::vector<ir::Computation*> computations;
    for (const auto& c : module.computations()) computations.push_back(c.get());
    for (ir::Computation* c : computations) {
      std::vector<Group> groups = FindGroups(*c);
      if (groups.empty()) continue;
      changed = true;
      // Each member's and each deferred instruction's group; the last member emits the combined
      // op, then the deferred instructions.
      std::unordered_map<const ir::Instruction*, const Group*> member_of, deferred_in;
      for (const Group& g : groups) {
        for (const ir::Instruction* inst : g.members) member_of[inst] = &g;
        for (const ir::Instruction* inst : g.deferred) deferred_in[inst] = &g;
      }
      EMBER_RETURN_IF_ERROR(RebuildComputation(
          *c, [&](const ir::Instruction& inst, Rebuilder& rb) -> absl::StatusOr<bool> {
            if (deferred_in.contains(&inst)) return true;  // emitted after the combined op
            auto it = member_of.find(&inst);
            if (it == member_of.end()) return false;
            const Group& group = *it->second;
            if (&inst != group.members.back()) return true;  // emitted with the last member
            std::vector<ir::Value*> operands;
            std::vector<ir::ValueType> types;
            for (const ir::Instruction* member : group.members) {
              operands.push_back(rb.Map(member->operand(0)));
              types.push_back(member->result(0)->type());
              if (member != group.members.front()) {
                dropped_regions.push_back(member->regions()[0]);
              }
            }
            const ir::Instruction& first = *group.members.front();
            ir::Instruction* combined = rb.computation().AddInstruction(
                ir::Opcode::kAllReduce, std::move(operands), std::move(types), first.attributes(),
                first.regions(), inst.location());
            for (size_t i = 0; i < group.members.size(); ++i) {
              rb.SetMapping(group.members[i]->result(0), combined->result(i));
            }
            for (const ir::Instruction* d : group.deferred) rb.Clone(*d);
            return true;
          }));
    }
    // Only now: `computations` may hold them.
    for (const ir::Computation* region : dropped_regions) module.RemoveRegion(region);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateCombineAllReducesPass() {
  return std::make_unique<CombineAllReducesPass>();
}

}  // namespace ember::passes
