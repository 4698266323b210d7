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
// The runtime then only ever runs per-device programs. Real partitioning (propagation and
// splitting the work) replaces the gathers later; this is today's behaviour as a program.
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

namespace ember::passes {
namespace {

constexpr char kManualTarget[] = "sdy.manual_computation";
// Channel ids of the collectives this pass adds (any positive id selects the flattened-ids
// grouping; a range of their own keeps them apart from the program's).
constexpr int64_t kFirstChannel = int64_t{1} << 40;

bool IsManual(const ir::Instruction& inst) {
  if (inst.opcode() != ir::Opcode::kCustomCall) return false;
  const ir::Attribute* target = inst.attribute("call_target_name");
  return target != nullptr && target->kind == ir::Attribute::Kind::kString &&
         target->s == kManualTarget;
}

// A value's split over the program's devices: the sharding and its mesh, or nothing when every
// device holds all of it.
struct Split {
  ir::TensorSharding sharding;
  ir::Mesh mesh;
};

// The split a sharding attribute describes for a value of `type`, checked against the program's
// `num_devices` devices; nullopt when the value is replicated.
absl::StatusOr<std::optional<Split>> ReadSplit(const ir::Module& module, const ir::Attribute* attr,
                                               const ir::ValueType& type, int64_t num_devices,
                                               const std::string& what) {
  if (attr == nullptr || (attr->kind == ir::Attribute::Kind::kString && attr->s.empty())) {
    return std::nullopt;  // no sharding given (an empty mhlo.sharding says nothing)
  }
  auto fail = [&](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat(what, " (", type.ToString(), "): ", s.message()));
  };
  if (attr->kind != ir::Attribute::Kind::kSharding || attr->sharding == nullptr) {
    return fail(absl::UnimplementedError(
        absl::StrCat("the sharding ", attr->ToString(), " is not one tensor sharding")));
  }
  const ir::TensorSharding& sharding = *attr->sharding;
  switch (sharding.kind) {
    case ir::TensorSharding::Kind::kReplicated:
      return std::nullopt;
    case ir::TensorSharding::Kind::kMaximal:
    case ir::TensorSharding::Kind::kManual:
      return fail(absl::UnimplementedError(
          absl::StrCat("the sharding ", sharding.ToString(), " is not supported yet")));
    case ir::TensorSharding::Kind::kSplit:
      break;
  }
  absl::StatusOr<ir::Mesh> mesh = ir::MeshOfSharding(module, sharding);
  if (!mesh.ok()) return fail(mesh.status());
  if (!sharding.unreduced_axes.empty()) {
    return fail(absl::UnimplementedError(absl::StrCat(
        "the sharding ", sharding.ToString(), " has unreduced axes, which are not supported yet")));
  }
  if (!type.is_tensor()) return fail(absl::UnimplementedError("only arrays can be sharded"));
  if (ir::IsFullyReplicated(sharding, &*mesh)) {
    // Still check the rank: a sharding of the wrong rank is a malformed program.
    if (sharding.dims.size() != type.dims().size()) {
      return fail(absl::InvalidArgumentError(absl::StrCat(
          "a sharding of rank ", sharding.dims.size(), " for an array of rank ", type.dims().size())));
    }
    return std::nullopt;
  }
  if (mesh->size() != num_devices) {
    return fail(absl::UnimplementedError(absl::StrCat("it is sharded over a mesh of ", mesh->size(),
                                                      " devices; the program runs on ", num_devices)));
  }
  absl::Status dims = ir::ShardDims(type.dims(), sharding, *mesh).status();
  if (!dims.ok()) return fail(dims);
  return Split{sharding, *std::move(mesh)};
}

class SpmdBuilder {
 public:
  SpmdBuilder(ir::Computation& c, int64_t num_devices) : c_(c), num_devices_(num_devices) {}

  absl::StatusOr<ir::ValueType> ShardType(const ir::ValueType& global, const Split& split) {
    EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                           ir::ShardDims(global.dims(), split.sharding, split.mesh));
    EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ir::Shape::Make(global.element_type(), dims));
    return ir::ValueType::Tensor(shape);
  }

  // The global value of `shard`: one all_gather per split dimension.
  absl::StatusOr<ir::Value*> Gather(ir::Value* shard, const Split& split, const ir::Location& loc) {
    ir::Value* v = shard;
    std::vector<int64_t> dims = shard->type().dims();
    for (size_t d = 0; d < split.sharding.dims.size(); ++d) {
      const std::vector<ir::MeshAxisRef>& axes = split.sharding.dims[d].axes;
      if (axes.empty()) continue;
      EMBER_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> groups,
                             ir::MeshAxesGroups(split.mesh, axes));
      const int64_t n = static_cast<int64_t>(groups[0].size());
      if (n == 1) continue;
      std::vector<int64_t> ids;
      for (const auto& g : groups) ids.insert(ids.end(), g.begin(), g.end());
      EMBER_ASSIGN_OR_RETURN(ir::Literal rows, ir::Literal::FromValues<int64_t>(
                                                   {static_cast<int64_t>(groups.size()), n}, ids));
      dims[d] *= n;
      EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ir::Shape::Make(v->type().element_type(), dims));
      ir::AttributeMap attrs;
      attrs.Set("all_gather_dim", ir::Attribute::Int(static_cast<int64_t>(d)));
      attrs.Set("replica_groups", ir::Attribute::OfLiteral(std::move(rows)));
      attrs.Set("channel_id", ir::Attribute::Int(next_channel_++));
      attrs.Set("use_global_device_ids", ir::Attribute::Bool(true));
      v = c_.AddInstruction(ir::Opcode::kAllGather, {v}, {ir::ValueType::Tensor(shape)},
                            std::move(attrs), {}, loc)
              ->result();
    }
    return v;
  }

  // This device's shard of `global`: a dynamic_slice at offsets looked up by partition_id.
  absl::StatusOr<ir::Value*> Cut(ir::Value* global, const Split& split, const ir::Location& loc) {
    EMBER_ASSIGN_OR_RETURN(ir::ValueType shard_type, ShardType(global->type(), split));
    const std::vector<int64_t>& shard_dims = shard_type.dims();
    std::vector<std::vector<int64_t>> offsets(shard_dims.size(), std::vector<int64_t>(num_devices_));
    for (int64_t p = 0; p < num_devices_; ++p) {
      EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> index, ir::ShardIndex(split.sharding, split.mesh, p));
      for (size_t d = 0; d < shard_dims.size(); ++d) offsets[d][p] = index[d] * shard_dims[d];
    }
    std::vector<ir::Value*> starts;
    for (size_t d = 0; d < shard_dims.size(); ++d) {
      const bool constant = std::all_of(offsets[d].begin(), offsets[d].end(),
                                        [&](int64_t o) { return o == offsets[d][0]; });
      if (constant) {
        EMBER_ASSIGN_OR_RETURN(ir::Value * start, Scalar(offsets[d][0], loc));
        starts.push_back(start);
        continue;
      }
      EMBER_ASSIGN_OR_RETURN(ir::Value * start, Lookup(offsets[d], loc));
      starts.push_back(start);
    }
    std::vector<ir::Value*> operands = {global};
    operands.insert(operands.end(), starts.begin(), starts.end());
    ir::AttributeMap attrs;
    attrs.Set("slice_sizes", ir::Attribute::Ints(shard_dims));
    return c_.AddInstruction(ir::Opcode::kDynamicSlice, std::move(operands), {shard_type},
                             std::move(attrs), {}, loc)
        ->result();
  }

 private:
  static ir::ValueType S64(std::vector<int64_t> dims) {
    return ir::ValueType::Tensor(ir::Shape::Make(ir::ElementType::kS64, dims).value());
  }

  absl::StatusOr<ir::Value*> Constant(ir::Literal literal, const ir::Location& loc) {
    ir::ValueType type = ir::ValueType::Tensor(literal.shape());
    ir::AttributeMap attrs;
    attrs.Set("value", ir::Attribute::OfLiteral(std::move(literal)));
    return c_.AddInstruction(ir::Opcode::kConstant, {}, {std::move(type)}, std::move(attrs), {}, loc)
        ->result();
  }

  absl::StatusOr<ir::Value*> Scalar(int64_t v, const ir::Location& loc) {
    EMBER_ASSIGN_OR_RETURN(ir::Literal literal, ir::Literal::FromValues<int64_t>({}, {v}));
    return Constant(std::move(literal), loc);
  }

  // table[partition_id] as an s64 scalar.
  absl::StatusOr<ir::Value*> Lookup(const std::vector<int64_t>& table, const ir::Location& loc) {
    if (partition_ == nullptr) {
      ir::Value* id = c_.AddInstruction(ir::Opcode::kPartitionId, {},
                                        {ir::ValueType::Tensor(ir::Shape::Scalar(ir::ElementType::kU32))},
                                        {}, {}, loc)
                          ->result();
      partition_ = c_.AddInstruction(ir::Opcode::kConvert, {id}, {S64({})}, {}, {}, loc)->result();
    }
    EMBER_ASSIGN_OR_RETURN(ir::Literal literal,
                           ir::Literal::FromValues<int64_t>({num_devices_}, table));
    EMBER_ASSIGN_OR_RETURN(ir::Value * values, Constant(std::move(literal), loc));
    ir::AttributeMap attrs;
    attrs.Set("slice_sizes", ir::Attribute::Ints({1}));
    ir::Value* one = c_.AddInstruction(ir::Opcode::kDynamicSlice, {values, partition_}, {S64({1})},
                                       std::move(attrs), {}, loc)
                         ->result();
    return c_.AddInstruction(ir::Opcode::kReshape, {one}, {S64({})}, {}, {}, loc)->result();
  }

  ir::Computation& c_;
  const int64_t num_devices_;
  int64_t next_channel_ = kFirstChannel;
  ir::Value* partition_ = nullptr;
};

const ir::Attribute* ShardingAttr(const ir::AttributeMap& attrs) {
  if (const ir::Attribute* a = attrs.Find("sdy.sharding")) return a;
  return attrs.Find("mhlo.sharding");
}

// The manual axes of a manual computation (names), and its in/out shardings.
absl::StatusOr<std::vector<const ir::TensorSharding*>> ShardingList(const ir::Instruction& inst,
                                                                   const char* name, size_t count) {
  const ir::Attribute* list = inst.attribute(name);
  std::vector<const ir::TensorSharding*> out;
  if (list == nullptr || list->kind != ir::Attribute::Kind::kList) {
    return absl::InvalidArgumentError(absl::StrCat(inst.Describe(), ": no ", name));
  }
  for (const ir::Attribute& a : list->list) {
    if (a.kind != ir::Attribute::Kind::kSharding || a.sharding == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(inst.Describe(), ": ", name, " holds ", a.ToString()));
    }
    out.push_back(a.sharding.get());
  }
  if (out.size() != count) {
    return absl::InvalidArgumentError(absl::StrCat(inst.Describe(), ": ", out.size(), " ", name,
                                                   " for ", count, " values"));
  }
  return out;
}

class SpmdReplicatePass : public Pass {
 public:
  explicit SpmdReplicatePass(int64_t num_partitions) : num_devices_(num_partitions) {}
  std::string name() const override { return "spmd-replicate"; }

  absl::StatusOr<bool> Run(ir::Module& module) override {
    ir::Computation* entry = module.entry();
    if (entry == nullptr) return false;
    for (const auto& c : module.computations()) {
      if (c.get() == entry) continue;
      for (const auto& inst : c->instructions()) {
        if (IsManual(*inst)) {
          return absl::UnimplementedError(absl::StrCat(
              inst->Describe(), ": manual computations outside the entry function (nested, or in "
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
          i < entry->arg_attributes().size() ? ShardingAttr(entry->arg_attributes()[i]) : nullptr;
      EMBER_ASSIGN_OR_RETURN(params[i], ReadSplit(module, attr, entry->parameter(i)->type(),
                                                  num_devices_, absl::StrCat("argument ", i)));
      any |= params[i].has_value();
    }
    for (size_t r = 0; r < results.size(); ++r) {
      const ir::Attribute* attr =
          r < entry->result_attributes().size() ? ShardingAttr(entry->result_attributes()[r]) : nullptr;
      EMBER_ASSIGN_OR_RETURN(results[r], ReadSplit(module, attr, result_types[r], num_devices_,
                                                   absl::StrCat("result ", r)));
      any |= results[r].has_value();
    }
    for (const auto& inst : entry->instructions()) any |= IsManual(*inst);
    if (!any) return false;

    // Rebuild the entry: gathers of the split arguments, the computation (manual computations
    // expanded), cuts of the split results.
    std::vector<const ir::Instruction*> old;
    for (const auto& inst : entry->instructions()) old.push_back(inst.get());
    const ir::Instruction* ret = entry->return_instruction();
    if (ret == nullptr) return absl::InvalidArgumentError("the entry has no return");
    SpmdBuilder build(*entry, num_devices_);
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
      if (IsManual(*inst)) {
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
    std::vector<std::string> manual_axes;
    if (const ir::Attribute* axes = inst.attribute("manual_axes");
        axes != nullptr && axes->kind == ir::Attribute::Kind::kList) {
      for (const ir::Attribute& a : axes->list) {
        if (a.kind == ir::Attribute::Kind::kString) manual_axes.push_back(a.s);
      }
    }
    auto split_of = [&](const ir::TensorSharding& sharding,
                        const ir::ValueType& type) -> absl::StatusOr<Split> {
      EMBER_ASSIGN_OR_RETURN(ir::Mesh mesh, ir::MeshOfSharding(module, sharding));
      if (mesh.size() != num_devices_) {
        return absl::UnimplementedError(absl::StrCat(inst.Describe(), ": a mesh of ", mesh.size(),
                                                     " devices; the program runs on ", num_devices_));
      }
      for (size_t a = 0; a < mesh.axes.size(); ++a) {
        if (mesh.sizes[a] > 1 && std::find(manual_axes.begin(), manual_axes.end(), mesh.axes[a]) ==
                                     manual_axes.end()) {
          return absl::UnimplementedError(absl::StrCat(
              inst.Describe(), ": mesh axis \"", mesh.axes[a],
              "\" is not manual; partially manual computations are not supported yet"));
        }
      }
      absl::Status dims = ir::ShardDims(type.dims(), sharding, mesh).status();
      if (!dims.ok()) return absl::Status(dims.code(), absl::StrCat(inst.Describe(), ": ", dims.message()));
      return Split{sharding, std::move(mesh)};
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
