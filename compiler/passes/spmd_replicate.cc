// spmd-replicate: the per-device program of an SPMD program, by replication. JAX sends one
// global program whose entry arguments and results carry shardings (typed IR: Shardy's or
// GSPMD's) and hands each device its shards; this pass rewrites the entry so that every device
// runs the same program on its shards:
//   - each split argument becomes its shard, all-gathered back into the global value (one
//     all_gather per split dimension, over the devices that differ only in that dimension's
//     mesh axes);
//   - the global computation runs as written, on every device;
//   - each split result is cut to the device's shard (dynamic_slice at offsets looked up by
//     partition_id);
//   - a manual computation (shard_map) runs its body per device: its operands are cut to the
//     device's slices, the body is called, and its results are all-gathered back.
// spmd-partition (spmd_partition.cc) splits the work instead and gives this pass only the
// programs it cannot handle yet (shardings over several meshes, a mesh of another size) and the
// ones with nothing split.
#include <algorithm>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/ir/sharding.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/rewrite.h"
#include "compiler/passes/spmd_builder.h"

namespace ember::passes {
namespace {

class SpmdReplicatePass : public Pass {
 public:
  explicit SpmdReplicatePass(int64_t num_partitions) : num_devices_(num_partitions) {}
  std::string name() const override { return "spmd-replicate"; }

  absl::StatusOr<bool> Run(ir::Module& module) override {
    ir::Computation* entry = module.entry();
    if (entry == nullptr) return false;
    for (const auto& inst : entry->instructions()) {
      std::vector<const ir::Computation*> inner(inst->regions().begin(), inst->regions().end());
      if (inst->callee() != nullptr) inner.push_back(inst->callee());
      for (const ir::Computation* c : inner) {
        if (const ir::Instruction* m = FindManualComputation(*c)) {
          return absl::UnimplementedError(absl::StrCat(
              m->Describe(), ": manual computations outside the entry function (nested, or in "
                             "a called function) are not supported yet"));
        }
      }
    }
    // What is split where.
    const size_t num_params = entry->parameters().size();
    std::vector<std::optional<Split>> params(num_params), results;
    const std::vector<ir::ValueType> result_types = entry->result_types();
    results.resize(result_types.size());
    bool any = false;
    for (size_t i = 0; i < num_params; ++i) {
      const ir::Attribute* attr =
          i < entry->arg_attributes().size() ? StatedSharding(entry->arg_attributes()[i]) : nullptr;
      EMBER_ASSIGN_OR_RETURN(params[i], ReadSplit(module, attr, entry->parameter(i)->type(),
                                                  num_devices_, absl::StrCat("argument ", i)));
      any |= params[i].has_value();
    }
    for (size_t r = 0; r < results.size(); ++r) {
      const ir::Attribute* attr =
          r < entry->result_attributes().size() ? StatedSharding(entry->result_attributes()[r]) : nullptr;
      EMBER_ASSIGN_OR_RETURN(results[r], ReadSplit(module, attr, result_types[r], num_devices_,
                                                   absl::StrCat("result ", r)));
      any |= results[r].has_value();
    }
    for (const auto& inst : entry->instructions()) any |= IsManualComputation(*inst);
    if (!any) return false;

    // Rebuild the entry: gathers of the split arguments, the computation (manual computations
    // expanded), cuts of the split results.
    std::vector<const ir::Instruction*> old;
    for (const auto& inst : entry->instructions()) old.push_back(inst.get());
    const ir::Instruction* ret = entry->return_instruction();
    if (ret == nullptr) return absl::InvalidArgumentError("the entry has no return");
    SpmdCounters counters;
    SpmdBuilder build(*entry, num_devices_, counters);
    Rebuilder b(*entry);
    ValueMap param_globals;
    std::unordered_set<const ir::Instruction*> keep_param_uses;
    for (size_t i = 0; i < num_params; ++i) {
      if (!params[i].has_value()) continue;
      ir::Value* p = entry->parameter(i);
      const ir::ValueType global = p->type();
      EMBER_ASSIGN_OR_RETURN(ir::ValueType shard, build.ShardType(global, *params[i]));
      p->set_type(shard);
      const size_t before = entry->instructions().size();
      EMBER_ASSIGN_OR_RETURN(ir::Value * g, build.Gather(p, *params[i], {}));
      for (size_t k = before; k < entry->instructions().size(); ++k) {
        keep_param_uses.insert(entry->instructions()[k].get());
      }
      b.SetMapping(p, g);
      param_globals[p] = g;
    }
    for (const ir::Instruction* inst : old) {
      if (inst == ret) continue;
      if (IsManualComputation(*inst)) {
        EMBER_RETURN_IF_ERROR(ExpandManual(module, *inst, build, b));
        continue;
      }
      b.Clone(*inst);
    }
    std::vector<ir::Value*> returned;
    for (size_t r = 0; r < ret->operands().size(); ++r) {
      ir::Value* v = b.Map(ret->operand(r));
      if (r < results.size() && results[r].has_value()) {
        EMBER_ASSIGN_OR_RETURN(v, build.Cut(v, *results[r], ret->location()));
      }
      returned.push_back(v);
    }
    entry->AddInstruction(ir::Opcode::kReturn, std::move(returned), {}, ret->attributes(), {},
                          ret->location());
    // Regions read entry values directly (implicit captures): point them at the new values.
    ValueMap moved = b.map();
    for (const auto& [p, g] : param_globals) moved.erase(p);
    ReplaceUses(module, moved);
    for (const auto& c : module.computations()) {
      for (const auto& inst : c->instructions()) {
        if (c.get() == entry && keep_param_uses.contains(inst.get())) continue;
        for (size_t k = 0; k < inst->operands().size(); ++k) {
          auto it = param_globals.find(inst->operand(k));
          if (it != param_globals.end()) inst->set_operand(k, it->second);
        }
      }
    }
    const std::unordered_set<const ir::Instruction*> remove(old.begin(), old.end());
    entry->RemoveInstructionsIf(
        [&](const ir::Instruction& inst) { return remove.contains(&inst); });
    return true;
  }

 private:
  // A manual computation: operands cut to this device's slices, the body called, the results
  // gathered back.
  absl::Status ExpandManual(const ir::Module& module, const ir::Instruction& inst,
                            SpmdBuilder& build, Rebuilder& b) {
    const ir::Computation* body = inst.callee();
    if (body == nullptr) return absl::InvalidArgumentError(absl::StrCat(inst.Describe(), ": no body"));
    EMBER_ASSIGN_OR_RETURN(std::vector<const ir::TensorSharding*> ins,
                           ShardingList(inst, "in_shardings", inst.operands().size()));
    EMBER_ASSIGN_OR_RETURN(std::vector<const ir::TensorSharding*> outs,
                           ShardingList(inst, "out_shardings", inst.num_results()));
    auto split_of = [&](const ir::TensorSharding& sharding,
                        const ir::ValueType& type) -> absl::StatusOr<Split> {
      return ManualSplit(module, inst, sharding, type, num_devices_);
    };
    std::vector<ir::Value*> locals;
    for (size_t k = 0; k < inst.operands().size(); ++k) {
      ir::Value* global = b.Map(inst.operand(k));
      EMBER_ASSIGN_OR_RETURN(Split split, split_of(*ins[k], global->type()));
      EMBER_ASSIGN_OR_RETURN(ir::Value * local, build.Cut(global, split, inst.location()));
      locals.push_back(local);
    }
    if (body->parameters().size() != locals.size()) {
      return absl::InvalidArgumentError(absl::StrCat(inst.Describe(), ": the body takes ",
                                                     body->parameters().size(), " values, not ",
                                                     locals.size()));
    }
    for (size_t k = 0; k < locals.size(); ++k) {
      if (body->parameter(k)->type() != locals[k]->type()) {
        return absl::InvalidArgumentError(absl::StrCat(
            inst.Describe(), ": operand ", k, "'s slice is ", locals[k]->type().ToString(),
            " but the body takes ", body->parameter(k)->type().ToString()));
      }
    }
    ir::Instruction* call = b.computation().AddInstruction(
        ir::Opcode::kCall, std::move(locals), body->result_types(), {}, {}, inst.location());
    call->set_callee(const_cast<ir::Computation*>(body));
    for (size_t r = 0; r < inst.num_results(); ++r) {
      EMBER_ASSIGN_OR_RETURN(Split split, split_of(*outs[r], inst.result(r)->type()));
      EMBER_ASSIGN_OR_RETURN(ir::Value * global, build.Gather(call->result(r), split, inst.location()));
      if (global->type() != inst.result(r)->type()) {
        return absl::InvalidArgumentError(absl::StrCat(
            inst.Describe(), ": result ", r, " gathers to ", global->type().ToString(), ", not ",
            inst.result(r)->type().ToString()));
      }
      b.SetMapping(inst.result(r), global);
    }
    return absl::OkStatus();
  }

  const int64_t num_devices_;
};

}  // namespace

std::unique_ptr<Pass> CreateSpmdReplicatePass(int64_t num_partitions) {
  return std::make_unique<SpmdReplicatePass>(num_partitions);
}

}  // namespace ember::passes
