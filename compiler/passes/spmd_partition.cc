// spmd-partition: the per-device program of an SPMD program, with the work split. Calls are
// inlined, sharding propagation (sharding_propagation.h) gives every value a sharding, and this
// pass then rebuilds the entry op by op on local shapes:
//   - each split argument is already this device's shard (its type becomes the local one);
//   - an op with a sharding rule (sharding_rules.h) runs on its operands' blocks: the rule's
//     factors take the splits the op's result was given (reduction factors the split its
//     operands hold), operands are resharded to what that asks (an axis that changes dimension
//     by all-to-all, else all-gathers of the axes they lose and a cut of the ones they gain), and
//     the op runs on local shapes. A result summed over a split factor (a dot's contracting
//     dimension, a reduce's reduced one) stays partial until it is first needed whole, where it
//     is all-reduced (results stated unreduced return it partial); ops linear in partial sums
//     over the same axes (add, subtract, negate, reshape, transpose, broadcast, select by a
//     whole predicate) keep them partial;
//   - a factor whose split a tensor cannot hold as a contiguous block (the minor factor of a
//     merged dimension, a split that does not divide), or that an op cannot run on locally
//     (a scatter's updates into a non-zero operand, grouped convolutions, reductions whose init
//     is not their identity), stays whole: its operands are gathered along it;
//   - a gather or scatter of an operand split along a dimension it indexes (an embedding
//     table's rows) runs on the local block with the indices made local: a gather zeroes the
//     rows other blocks hold (its result partial), a scatter's others fall out of bounds;
//   - while, if and case ops whose regions only they run keep their values split: their regions
//     are partitioned in turn, reading values of enclosing functions as captures;
//   - ops without a rule run on global values (operands, and the values their regions read, are
//     gathered): correct, and listed in the program's SPMD report with the bytes they gather;
//   - a factor whose blocks read their neighbours' elements (a convolution's window along a
//     split spatial dimension) gets halos: each block's tail is sent one device on and its head
//     one device back (collective-permute), and the op runs on the block with both, without the
//     padding they replace (the devices at the ends receive zeros);
//   - a manual computation (shard_map) gets its operands in its in_shardings, which are exactly
//     the blocks its body takes (an operand stated unreduced arrives as each device's part of
//     its sum, which the body reduces itself); with free axes, its body is partitioned over
//     them; its results are held as its out_shardings say;
//   - each result is resharded to the sharding the caller asked for; where the caller left it
//     open (no sharding stated), it keeps its split, written on the entry's result as the
//     sharding the program's signature reports.
// Programs whose shardings propagation cannot handle yet (several meshes) and programs with
// nothing split are given to spmd-replicate. The report (kSpmdReportAttribute on the module)
// counts the collectives inserted and names every gather, reshard, partial sum and fallback.
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "compiler/ir/sharding.h"
#include "compiler/passes/collective_reduction.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/rewrite.h"
#include "compiler/passes/sharding_propagation.h"
#include "compiler/passes/sharding_rules.h"
#include "compiler/passes/spmd_builder.h"
#include "compiler/passes/unify_meshes.h"

namespace ember::passes {
namespace {

// A value of the new entry and how it is split (every dimension whole: replicated).
struct Held {
  Held() = default;
  Held(ir::Value* l, DimSplits d, std::vector<ir::MeshAxisRef> p = {},
       const ir::Instruction* op = nullptr)
      : local(l), dims(std::move(d)), partial(std::move(p)), partial_op(op) {}
  ir::Value* local = nullptr;
  DimSplits dims;
  // Unreduced axes: `local` is this device's part of a sum over the devices that differ only in
  // them (the reduction of `partial_op`'s region, or a sum when it is null).
  std::vector<ir::MeshAxisRef> partial;
  const ir::Instruction* partial_op = nullptr;
};

// How a value is wanted: its splits, and the axes it may stay unreduced over (a sum still to
// take, as JAX's unreduced shardings ask).
struct Want {
  DimSplits dims;
  std::vector<ir::MeshAxisRef> unreduced;
};

bool SameAxisSet(const std::vector<ir::MeshAxisRef>& a, const std::vector<ir::MeshAxisRef>& b) {
  if (a.size() != b.size()) return false;
  return std::all_of(a.begin(), a.end(), [&](const ir::MeshAxisRef& x) {
    return std::any_of(b.begin(), b.end(),
                       [&](const ir::MeshAxisRef& y) { return x.name == y.name; });
  });
}

// Is `v` all zeros (a zero constant, broadcast, reshaped or under a sharding constraint)?
bool IsZeros(const ir::Value* v) {
  for (int depth = 0; depth < 4 && v->producer() != nullptr; ++depth) {
    const ir::Instruction& producer = *v->producer();
    if (producer.opcode() != ir::Opcode::kBroadcastInDim &&
        producer.opcode() != ir::Opcode::kReshape &&
        !(IsShardingConstraint(producer) && producer.operands().size() == 1)) {
      break;
    }
    v = producer.operand(0);
  }
  const ir::Literal* literal = ConstantLiteral(v);
  if (literal == nullptr) return false;
  const auto bytes = literal->bytes();
  return std::all_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b == 0; });
}

bool Replicated(const DimSplits& dims) {
  return std::all_of(dims.begin(), dims.end(), [](const auto& axes) { return axes.empty(); });
}

bool Overlaps(const ir::MeshAxisRef& a, const std::vector<ir::MeshAxisRef>& list) {
  return std::any_of(list.begin(), list.end(),
                     [&](const ir::MeshAxisRef& b) { return a.name == b.name; });
}

int64_t Product(const ir::Mesh& mesh, const std::vector<ir::MeshAxisRef>& axes) {
  int64_t n = 1;
  for (const ir::MeshAxisRef& a : axes) n *= AxisSize(mesh, a);
  return n;
}

// The splits of a sharding written by propagation (or stated), dimension by dimension.
DimSplits SplitsOf(const ir::TensorSharding& s, size_t rank) {
  DimSplits dims(rank);
  if (s.kind != ir::TensorSharding::Kind::kSplit) return dims;
  for (size_t d = 0; d < rank && d < s.dims.size(); ++d) dims[d] = s.dims[d].axes;
  return dims;
}

size_t Rank(const ir::Value* v) { return v->type().is_tensor() ? v->type().dims().size() : 0; }

std::string AxesText(const std::vector<ir::MeshAxisRef>& axes) {
  std::vector<std::string> names;
  for (const ir::MeshAxisRef& a : axes) names.push_back(absl::StrCat("\"", a.name, "\""));
  return absl::StrCat("{", absl::StrJoin(names, ", "), "}");
}

// What the partitioners of one program share.
struct Context {
  Context(ir::Module& m, ir::Mesh mesh_of, const ir::TensorSharding& ref, int64_t devices)
      : module(m), mesh(std::move(mesh_of)), mesh_ref(ref), num_devices(devices) {}
  ir::Module& module;
  ir::Mesh mesh;
  ir::TensorSharding mesh_ref;  // a sharding over the mesh: names it
  int64_t num_devices;
  SpmdCounters counters;
  // Every op's rule, found while every shape is still global.
  std::unordered_map<const ir::Instruction*, std::optional<ShardingRule>> rules;
  // The global types of the parameters that have become local.
  std::unordered_map<const ir::Value*, ir::ValueType> global_types;
  // How many ops run each region (a region shared by two ops cannot take two splits).
  std::unordered_map<const ir::Computation*, int> region_uses;
  std::unordered_map<const ir::Computation*, int> callee_uses;
  std::vector<std::string> report;
  int64_t fallbacks = 0;
};

// Rebuilds one computation (the entry, or a region of a partitioned control-flow op) on local
// shapes. Values of enclosing computations that a region reads are asked of the partitioner of
// the computation they belong to, which emits their reshards there.
class Partitioner {
 public:
  // `consumed`: the manual axes of the manual computations whose body `c` is (values in it are
  // already per-device along them).
  Partitioner(Context& ctx, ir::Computation& c, Partitioner* parent,
              std::vector<std::string> consumed = {})
      : ctx_(ctx),
        c_(c),
        parent_(parent),
        consumed_(std::move(consumed)),
        mesh_(ctx.mesh),
        build_(c, ctx.num_devices, ctx.counters) {}

  // Parameter i arrives split as `params[i]`; result r leaves split as `results[r]` (nullopt:
  // as it is). Returns the results' splits.
  absl::StatusOr<std::vector<DimSplits>> Run(const std::vector<Held>& params,
                                             const std::vector<std::optional<Want>>& results) {
    if (params.size() != c_.parameters().size()) {
      return absl::InternalError(absl::StrCat("spmd-partition: ", params.size(), " splits for ",
                                              c_.parameters().size(), " parameters"));
    }
    for (size_t i = 0; i < c_.parameters().size(); ++i) {
      ir::Value* p = c_.parameter(i);
      Held h = params[i];
      h.local = p;
      h.dims.resize(Rank(p));
      if (!Replicated(h.dims)) {
        EMBER_ASSIGN_OR_RETURN(ir::ValueType local,
                               SpmdBuilder::LocalType(p->type(), mesh_, h.dims));
        ctx_.global_types.emplace(p, p->type());
        p->set_type(local);
      }
      held_[p] = std::move(h);
    }
    std::vector<const ir::Instruction*> old;
    for (const auto& inst : c_.instructions()) old.push_back(inst.get());
    const ir::Instruction* ret = c_.return_instruction();
    if (ret == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("the function ", c_.name(), " has no return"));
    }
    for (const ir::Instruction* inst : old) {
      if (inst == ret) continue;
      EMBER_RETURN_IF_ERROR(Emit(*inst));
    }
    std::vector<ir::Value*> returned;
    std::vector<DimSplits> splits;
    for (size_t r = 0; r < ret->operands().size(); ++r) {
      const ir::Value* v = ret->operand(r);
      EMBER_ASSIGN_OR_RETURN(const Held* h, Get(v));
      Want want{h->dims, {}};
      if (r < results.size() && results[r].has_value()) want = *results[r];
      want.dims.resize(Rank(v));
      EMBER_ASSIGN_OR_RETURN(ir::Value * local, AsUnreduced(v, want, ret->location()));
      returned.push_back(local);
      splits.push_back(std::move(want.dims));
    }
    c_.AddInstruction(ir::Opcode::kReturn, std::move(returned), {}, ret->attributes(), {},
                      ret->location());
    const std::unordered_set<const ir::Instruction*> remove(old.begin(), old.end());
    c_.RemoveInstructionsIf([&](const ir::Instruction& inst) { return remove.contains(&inst); });
    return splits;
  }

 private:
  // The partitioner that holds `v` (this one or an enclosing one), or null.
  Partitioner* Owner(const ir::Value* v) {
    for (Partitioner* p = this; p != nullptr; p = p->parent_) {
      if (p->held_.contains(v)) return p;
    }
    return nullptr;
  }

  absl::StatusOr<const Held*> Get(const ir::Value* v) {
    Partitioner* owner = Owner(v);
    if (owner == nullptr) {
      return absl::InternalError(absl::StrCat("spmd-partition: a value of type ",
                                              v->type().ToString(), " is used before defined"));
    }
    return &owner->held_.at(v);
  }

  // `v` split as `want`, on this device.
  // `user` (the return when null) names what needs it in the report of the gathers it takes.
  absl::StatusOr<ir::Value*> As(const ir::Value* v, const DimSplits& want,
                                const ir::Instruction* user, const ir::Location& loc) {
    if (!held_.contains(v)) {
      // A value of an enclosing computation: resharded there, read here as a capture.
      Partitioner* owner = Owner(v);
      if (owner != nullptr) return owner->As(v, want, user, loc);
    }
    EMBER_ASSIGN_OR_RETURN(const Held* h, Get(v));
    if (!v->type().is_tensor()) return h->local;
    if (Replicated(want)) {
      auto it = global_.find(v);
      if (it != global_.end()) return it->second;
    }
    Held reduced;
    if (!h->partial.empty() && !reduced_.contains(v)) {
      // Wanted split further over exactly its unreduced axes: each device sums only its block.
      std::optional<std::pair<int64_t, std::vector<ir::MeshAxisRef>>> scatter =
          ScatterDimension(*h, want);
      if (scatter.has_value()) {
        EMBER_ASSIGN_OR_RETURN(ir::Computation * region,
                               SumRegion(*h, v->type().element_type(), loc));
        return build_.ReduceScatter(h->local, mesh_, scatter->first, scatter->second, region,
                                    loc);
      }
    }
    if (!h->partial.empty()) {
      // A partial sum is completed once, where it is first needed whole.
      auto it = reduced_.find(v);
      if (it == reduced_.end()) {
        EMBER_ASSIGN_OR_RETURN(ir::Computation * region,
                               SumRegion(*h, v->type().element_type(), loc));
        EMBER_ASSIGN_OR_RETURN(ir::Value * sum,
                               build_.AllReduce(h->local, mesh_, h->partial, region, loc));
        it = reduced_.emplace(v, sum).first;
      }
      reduced = Held{it->second, h->dims};
      h = &reduced;
    }
    for (size_t d = 0; d < h->dims.size(); ++d) {
      const std::vector<ir::MeshAxisRef> none;
      const std::vector<ir::MeshAxisRef>& to = d < want.size() ? want[d] : none;
      bool kept = h->dims[d].size() <= to.size();
      for (size_t k = 0; kept && k < h->dims[d].size(); ++k)
        kept = h->dims[d][k].name == to[k].name;
      if (kept) continue;
      // An axis the value keeps on another dimension moves there (by all-to-all where the
      // builder can), which is no gather.
      bool elsewhere = false;
      for (size_t e = 0; e < want.size(); ++e) {
        elsewhere |= e != d && !h->dims[d].empty() && Overlaps(h->dims[d].back(), want[e]);
      }
      ctx_.report.push_back(absl::StrCat(elsewhere ? "  resharded " : "  gathered ",
                                         GlobalType(v).ToString(), " along dimension ", d,
                                         " (split ", AxesText(h->dims[d]), ") for ",
                                         user == nullptr ? "a result" : user->Describe()));
    }
    EMBER_ASSIGN_OR_RETURN(ir::Value * local, build_.Reshard(h->local, mesh_, h->dims, want, loc));
    if (Replicated(want)) global_[v] = local;
    return local;
  }

  // The dimension a partial sum `h` is wanted split further along, and the axes added there,
  // when they are exactly its unreduced axes and every other dimension stays as it is (a
  // reduce-scatter then gives each device its block of the sum); nullopt otherwise.
  std::optional<std::pair<int64_t, std::vector<ir::MeshAxisRef>>> ScatterDimension(
      const Held& h, const DimSplits& want) const {
    const size_t rank = std::max(h.dims.size(), want.size());
    const std::vector<ir::MeshAxisRef> none;
    auto same = [](const ir::MeshAxisRef& a, const ir::MeshAxisRef& b) {
      return a.name == b.name && a.pre_size == b.pre_size && a.size == b.size;
    };
    std::optional<std::pair<int64_t, std::vector<ir::MeshAxisRef>>> found;
    for (size_t d = 0; d < rank; ++d) {
      const std::vector<ir::MeshAxisRef>& from = d < h.dims.size() ? h.dims[d] : none;
      const std::vector<ir::MeshAxisRef>& to = d < want.size() ? want[d] : none;
      if (from.size() == to.size() && std::equal(from.begin(), from.end(), to.begin(), same)) {
        continue;
      }
      if (found.has_value() || to.size() <= from.size() ||
          !std::equal(from.begin(), from.end(), to.begin(), same)) {
        return std::nullopt;
      }
      found.emplace(static_cast<int64_t>(d),
                    std::vector<ir::MeshAxisRef>(to.begin() + from.size(), to.end()));
    }
    if (!found.has_value() || !SameAxisSet(found->second, h.partial)) return std::nullopt;
    const ir::ValueType& local = h.local->type();
    absl::StatusOr<int64_t> n = SpmdBuilder::Count(mesh_, found->second);
    if (!n.ok() || !local.is_tensor() || found->first >= static_cast<int64_t>(local.dims().size()) ||
        local.dims()[found->first] % *n != 0) {
      return std::nullopt;
    }
    return found;
  }

  // `v` as `want` says, unreduced over `want.unreduced` (a partial sum over the same axes stays
  // one: gathers and cuts commute with the sum; a whole value becomes one by keeping it on the
  // first device of each group and zeros elsewhere).
  absl::StatusOr<ir::Value*> AsUnreduced(const ir::Value* v, const Want& want,
                                         const ir::Location& loc) {
    if (want.unreduced.empty()) return As(v, want.dims, nullptr, loc);
    Partitioner* owner = Owner(v);
    if (owner != this && owner != nullptr) {
      EMBER_ASSIGN_OR_RETURN(const Held* h, Get(v));
      if (!h->partial.empty()) {
        return absl::UnimplementedError(absl::StrCat(
            "an unreduced value of an enclosing function is returned unreduced by ", c_.name()));
      }
    }
    EMBER_ASSIGN_OR_RETURN(const Held* h, Get(v));
    if (SameAxisSet(h->partial, want.unreduced) &&
        (h->partial_op == nullptr ||
         PartialKind(*h->partial_op) == collectives::ReductionKind::kSum)) {
      return build_.Reshard(h->local, mesh_, h->dims, want.dims, loc);
    }
    if (h->partial.empty()) {
      EMBER_ASSIGN_OR_RETURN(std::optional<ir::Value*> padded, PadToSum(*h, want, loc));
      if (padded.has_value()) return *padded;
    }
    EMBER_ASSIGN_OR_RETURN(ir::Value * whole, As(v, want.dims, nullptr, loc));
    const ir::ValueType& type = whole->type();
    // The first device of each group (block 0 along the unreduced axes) keeps the value.
    EMBER_ASSIGN_OR_RETURN(int64_t group, SpmdBuilder::Count(mesh_, want.unreduced));
    EMBER_ASSIGN_OR_RETURN(ir::Value * index,
                           build_.MinorBlockOffset(mesh_, want.unreduced, group, 1, loc));
    EMBER_ASSIGN_OR_RETURN(ir::Value * zero64, build_.Scalar(0, loc));
    ir::AttributeMap eq, b;
    eq.Set("comparison_direction", ir::Attribute::String("EQ"));
    b.Set("broadcast_dimensions", ir::Attribute::Ints({}));
    const ir::ValueType pred_scalar =
        ir::ValueType::Tensor(ir::Shape::Scalar(ir::ElementType::kPred));
    EMBER_ASSIGN_OR_RETURN(ir::Shape pred_shape,
                           ir::Shape::Make(ir::ElementType::kPred, type.dims()));
    ir::Value* keep = c_.AddInstruction(ir::Opcode::kCompare, {index, zero64}, {pred_scalar},
                                        std::move(eq), {}, loc)
                          ->result();
    ir::Value* mask = c_.AddInstruction(ir::Opcode::kBroadcastInDim, {keep},
                                        {ir::ValueType::Tensor(pred_shape)}, std::move(b), {}, loc)
                          ->result();
    EMBER_ASSIGN_OR_RETURN(ir::Value * zeros, build_.Zeros(type, loc));
    return c_.AddInstruction(ir::Opcode::kSelect, {mask, whole, zeros}, {type}, {}, {}, loc)
        ->result();
  }

  // A whole value split along the unreduced axes as well as `want.dims` becomes a sum with no
  // communication: each device places its block in zeros (as XLA does); nullopt when `h` is not
  // split that way.
  absl::StatusOr<std::optional<ir::Value*>> PadToSum(const Held& h, const Want& want,
                                                     const ir::Location& loc) {
    const std::vector<int64_t>& local = h.local->type().dims();
    std::vector<int64_t> out = local;
    std::vector<std::vector<ir::MeshAxisRef>> extra(local.size());
    std::vector<ir::MeshAxisRef> used;
    for (size_t d = 0; d < local.size(); ++d) {
      const std::vector<ir::MeshAxisRef>& have = h.dims[d];
      const std::vector<ir::MeshAxisRef>& keep = d < want.dims.size() ? want.dims[d] : extra[d];
      if (have.size() < keep.size()) return std::nullopt;
      for (size_t k = 0; k < keep.size(); ++k) {
        if (have[k].name != keep[k].name) return std::nullopt;
      }
      extra[d].assign(have.begin() + keep.size(), have.end());
      for (const ir::MeshAxisRef& a : extra[d]) {
        if (!Overlaps(a, want.unreduced)) return std::nullopt;
        used.push_back(a);
      }
      EMBER_ASSIGN_OR_RETURN(int64_t n, SpmdBuilder::Count(mesh_, extra[d]));
      out[d] *= n;
    }
    if (!SameAxisSet(used, want.unreduced)) return std::nullopt;
    const ir::ElementType type = h.local->type().element_type();
    EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ir::Shape::Make(type, out));
    const ir::ValueType out_type = ir::ValueType::Tensor(shape);
    EMBER_ASSIGN_OR_RETURN(ir::Value * zeros, build_.Zeros(out_type, loc));
    std::vector<ir::Value*> operands = {zeros, h.local};
    for (size_t d = 0; d < local.size(); ++d) {
      ir::Value* start = nullptr;
      if (extra[d].empty()) {
        EMBER_ASSIGN_OR_RETURN(start, build_.Scalar(0, loc));
      } else {
        // The block's place among the extra axes' blocks (the minor part of its split).
        EMBER_ASSIGN_OR_RETURN(int64_t n, SpmdBuilder::Count(mesh_, extra[d]));
        EMBER_ASSIGN_OR_RETURN(start, build_.MinorBlockOffset(mesh_, h.dims[d], n, local[d], loc));
      }
      operands.push_back(start);
    }
    return std::optional<ir::Value*>(c_.AddInstruction(ir::Opcode::kDynamicUpdateSlice,
                                                       std::move(operands), {out_type}, {}, {}, loc)
                                         ->result());
  }

  // The region that completes `h`'s partial value: its op's reduction, or a sum.
  absl::StatusOr<ir::Computation*> SumRegion(const Held& h, ir::ElementType type,
                                             const ir::Location& loc) {
    if (h.partial_op != nullptr) {
      std::optional<collectives::ReductionKind> kind = PartialKind(*h.partial_op);
      if (!kind.has_value()) {
        return absl::InternalError(absl::StrCat(h.partial_op->Describe(),
                                                ": a partial result of "
                                                "an op that cannot leave one"));
      }
      return ReductionRegion(*h.partial_op, *kind);
    }
    return AddRegion(type, loc);
  }

  absl::Status Emit(const ir::Instruction& inst) {
    if (IsManualComputation(inst)) return EmitManual(inst);
    if (IsShardingConstraint(inst) && inst.operands().size() == 1 && inst.num_results() == 1) {
      // The value itself, split (and left unreduced) as the constraint says.
      Want want{Assigned(inst, 0), {}};
      if (const ir::Attribute* stated = StatedSharding(inst.attributes());
          stated != nullptr && stated->kind == ir::Attribute::Kind::kSharding &&
          stated->sharding != nullptr) {
        want.unreduced = stated->sharding->unreduced_axes;
      }
      EMBER_ASSIGN_OR_RETURN(ir::Value * local,
                             AsUnreduced(inst.operand(0), want, inst.location()));
      held_[inst.result(0)] = Held{local, want.dims, want.unreduced, nullptr};
      return absl::OkStatus();
    }
    switch (inst.opcode()) {
      case ir::Opcode::kWhile:
      case ir::Opcode::kIf:
      case ir::Opcode::kCase:
        return EmitControlFlow(inst);
      case ir::Opcode::kCall:
        return EmitGlobal(inst, "calls run on global values");
      default:
        break;
    }
    const std::optional<ShardingRule>& rule = ctx_.rules[&inst];
    if (!rule.has_value()) return EmitGlobal(inst, "no sharding rule");
    return EmitLocal(inst, *rule);
  }

  // The type of `v` in the program as written (parameters have become local).
  const ir::ValueType& GlobalType(const ir::Value* v) const {
    auto it = ctx_.global_types.find(v);
    return it == ctx_.global_types.end() ? v->type() : it->second;
  }

  // The sharding propagation gave result `r` of `inst`.
  DimSplits Assigned(const ir::Instruction& inst, size_t r) const {
    const size_t rank = Rank(inst.result(r));
    const ir::Attribute* list = inst.attribute(kShardingsAttribute);
    if (list == nullptr || list->kind != ir::Attribute::Kind::kList || r >= list->list.size() ||
        list->list[r].kind != ir::Attribute::Kind::kSharding || list->list[r].sharding == nullptr) {
      return DimSplits(rank);
    }
    return SplitsOf(*list->list[r].sharding, rank);
  }

  // A while, if or case whose regions only it runs: its operands and results keep the splits
  // propagation gave them (a while's carries, body parameters and body results share one), and
  // its regions are partitioned in turn.
  absl::Status EmitControlFlow(const ir::Instruction& inst) {
    const bool loop = inst.opcode() == ir::Opcode::kWhile;
    bool own = loop ? inst.regions().size() == 2 : !inst.regions().empty();
    for (const ir::Computation* region : inst.regions()) {
      own &= ctx_.region_uses[region] == 1;
      // Branches read what they need as captures; parameters would mean another form.
      own &= loop || region->parameters().empty();
    }
    if (!own) return EmitGlobal(inst, "control flow whose regions other ops share");
    std::vector<DimSplits> results;
    for (size_t r = 0; r < inst.num_results(); ++r) results.push_back(Assigned(inst, r));
    // A loop carry the program states unreduced on the way in (a sharding constraint, as JAX's
    // reshard(..., P(unreduced=...)) of a gradient accumulator) stays a partial sum through
    // the loop: the body adds to it partial, and it is completed once, after the loop, where it
    // is first needed whole (not on every iteration).
    std::vector<std::vector<ir::MeshAxisRef>> unreduced(results.size());
    for (size_t k = 0; loop && k < results.size() && k < inst.operands().size(); ++k) {
      const ir::Value* v = inst.operand(k);
      if (v->producer() == nullptr || !IsShardingConstraint(*v->producer())) continue;
      EMBER_ASSIGN_OR_RETURN(const Held* h, Get(v));
      if (!h->partial.empty() &&
          (h->partial_op == nullptr ||
           PartialKind(*h->partial_op) == collectives::ReductionKind::kSum)) {
        unreduced[k] = h->partial;
      }
    }
    std::vector<ir::Value*> operands;
    for (size_t k = 0; k < inst.operands().size(); ++k) {
      const ir::Value* v = inst.operand(k);
      DimSplits want = loop && k < results.size() ? results[k] : DimSplits(Rank(v));
      want.resize(Rank(v));
      if (k < unreduced.size() && !unreduced[k].empty()) {
        EMBER_ASSIGN_OR_RETURN(ir::Value * local,
                               AsUnreduced(v, Want{want, unreduced[k]}, inst.location()));
        operands.push_back(local);
        continue;
      }
      EMBER_ASSIGN_OR_RETURN(ir::Value * local, As(v, want, &inst, inst.location()));
      operands.push_back(local);
    }
    std::vector<Held> carried;
    std::vector<std::optional<Want>> wants;
    for (size_t r = 0; r < results.size(); ++r) {
      carried.push_back(Held{nullptr, results[r], unreduced[r]});
      wants.push_back(Want{results[r], unreduced[r]});
    }
    if (loop) {
      ir::Computation& cond = *inst.regions()[0];
      ir::Computation& body = *inst.regions()[1];
      if (cond.parameters().size() != results.size() ||
          body.parameters().size() != results.size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            inst.Describe(), ": its regions do not take its ", results.size(), " carried values"));
      }
      EMBER_RETURN_IF_ERROR(Partitioner(ctx_, cond, this, consumed_).Run(carried, {}).status());
      EMBER_RETURN_IF_ERROR(Partitioner(ctx_, body, this, consumed_).Run(carried, wants).status());
    } else {
      for (ir::Computation* branch : inst.regions()) {
        EMBER_RETURN_IF_ERROR(Partitioner(ctx_, *branch, this, consumed_).Run({}, wants).status());
      }
    }
    std::vector<ir::ValueType> types;
    for (size_t r = 0; r < inst.num_results(); ++r) {
      EMBER_ASSIGN_OR_RETURN(ir::ValueType local,
                             SpmdBuilder::LocalType(inst.result(r)->type(), mesh_, results[r]));
      types.push_back(std::move(local));
    }
    ir::Instruction* copy = Add(inst, std::move(operands), std::move(types));
    for (size_t r = 0; r < inst.num_results(); ++r) {
      held_[inst.result(r)] = Held{copy->result(r), results[r], unreduced[r]};
    }
    return absl::OkStatus();
  }

  // The op as written on global operands; its results are held replicated.
  absl::Status EmitGlobal(const ir::Instruction& inst, const std::string& why) {
    for (const ir::Computation* region : inst.regions()) {
      if (const ir::Instruction* manual = FindManualComputation(*region)) {
        return absl::UnimplementedError(
            absl::StrCat(manual->Describe(), ": a manual computation inside ", inst.Describe(),
                         ", which runs "
                         "on global values (",
                         why, "), is not supported yet"));
      }
    }
    std::vector<ir::Value*> operands;
    int64_t bytes = 0;
    for (const ir::Value* v : inst.operands()) {
      EMBER_ASSIGN_OR_RETURN(const Held* h, Get(v));
      if (v->type().is_tensor() && !Replicated(h->dims)) bytes += GlobalType(v).shape().ByteSize();
      EMBER_ASSIGN_OR_RETURN(ir::Value * global, As(v, DimSplits(Rank(v)), &inst, inst.location()));
      operands.push_back(global);
    }
    EMBER_RETURN_IF_ERROR(GlobalCaptures(inst, bytes));
    std::vector<ir::ValueType> types;
    for (size_t r = 0; r < inst.num_results(); ++r) types.push_back(inst.result(r)->type());
    ir::Instruction* copy = Add(inst, std::move(operands), std::move(types));
    for (size_t r = 0; r < inst.num_results(); ++r) {
      held_[inst.result(r)] = Held{copy->result(r), DimSplits(Rank(inst.result(r)))};
      global_[inst.result(r)] = copy->result(r);
    }
    bool split_result = false;
    for (size_t r = 0; r < inst.num_results(); ++r) split_result |= !Replicated(Assigned(inst, r));
    if (bytes > 0 || split_result) {
      ++ctx_.fallbacks;
      ctx_.report.push_back(absl::StrCat("  on global values (", why, "): ", inst.Describe(), ", ",
                                         bytes, " bytes of split operands gathered"));
    }
    return absl::OkStatus();
  }

  // Values the regions of `inst` read from the computations being partitioned are read whole:
  // point those reads at global values.
  absl::Status GlobalCaptures(const ir::Instruction& inst, int64_t& bytes) {
    for (ir::Computation* region : inst.regions()) {
      std::vector<const ir::Value*> captured;
      CollectCapturedValues(*region, captured);
      ValueMap map;
      for (const ir::Value* v : captured) {
        if (Owner(v) == nullptr) continue;
        EMBER_ASSIGN_OR_RETURN(const Held* h, Get(v));
        if (v->type().is_tensor() && !Replicated(h->dims))
          bytes += GlobalType(v).shape().ByteSize();
        EMBER_ASSIGN_OR_RETURN(ir::Value * global,
                               As(v, DimSplits(Rank(v)), &inst, inst.location()));
        map[v] = global;
      }
      if (!map.empty()) ReplaceOperandsInRegion(*region, map);
    }
    return absl::OkStatus();
  }

  ir::Instruction* Add(const ir::Instruction& inst, std::vector<ir::Value*> operands,
                       std::vector<ir::ValueType> types) {
    ir::AttributeMap attrs = inst.attributes();
    attrs.Erase(kShardingsAttribute);
    ir::Instruction* copy = c_.AddInstruction(inst.opcode(), std::move(operands), std::move(types),
                                              std::move(attrs), inst.regions(), inst.location());
    if (inst.callee() != nullptr) copy->set_callee(inst.callee());
    return copy;
  }

  // The reduction a partial result of `inst` is all-reduced with, or nullopt when `inst`
  // cannot leave its results partial (each device would fold the init in once more, or the
  // reduction is not one a collective runs).
  std::optional<collectives::ReductionKind> PartialKind(const ir::Instruction& inst) const {
    if (inst.num_results() != 1 || !inst.result(0)->type().is_tensor()) return std::nullopt;
    const ir::ElementType type = inst.result(0)->type().element_type();
    if (!ReductionDataType(type).has_value()) return std::nullopt;
    switch (inst.opcode()) {
      case ir::Opcode::kDotGeneral:
      case ir::Opcode::kConvolution:
        return collectives::ReductionKind::kSum;
      case ir::Opcode::kGather:
        // Its reduction factors are indexed dimensions: each device gathers the rows it holds
        // and zeros for the others.
        if (type == ir::ElementType::kPred) return std::nullopt;
        return collectives::ReductionKind::kSum;
      case ir::Opcode::kScatter: {
        // Scatter-add into zeros: each device adds its updates, and the sum of the devices'
        // results is the whole scatter.
        if (inst.regions().size() != 1 || inst.operands().size() != 3 ||
            RegionReductionKind(*inst.regions()[0], type) != collectives::ReductionKind::kSum ||
            !IsZeros(inst.operand(0))) {
          return std::nullopt;
        }
        return collectives::ReductionKind::kSum;
      }
      case ir::Opcode::kReduce: {
        if (inst.regions().size() != 1 || inst.operands().size() != 2) return std::nullopt;
        std::optional<collectives::ReductionKind> kind =
            RegionReductionKind(*inst.regions()[0], type);
        if (!kind.has_value()) return std::nullopt;
        if (*kind == collectives::ReductionKind::kMax ||
            *kind == collectives::ReductionKind::kMin) {
          return kind;  // folding the init in again changes nothing
        }
        if (*kind != collectives::ReductionKind::kSum || !IsZeros(inst.operand(1))) {
          return std::nullopt;
        }
        return kind;
      }
      default:
        return std::nullopt;
    }
  }

  // The unreduced axes `inst`'s result keeps when it is linear in its partial operands, which
  // all hold sums over those same axes: a sum or difference of two such values, a negation, a
  // reshape, transpose or broadcast of one, a select between two of them by a whole predicate
  // (each device selects its parts), a dynamic slice of one or a dynamic update of one by
  // another at whole indices (each device moves its parts), or a widening float conversion (JAX
  // types convert_element_type of an unreduced value unreduced: a bf16 gradient made f32 stays a
  // partial sum, summed in f32). nullopt: the operands are summed first.
  absl::StatusOr<std::optional<std::vector<ir::MeshAxisRef>>> LinearInPartials(
      const ir::Instruction& inst) {
    std::vector<size_t> partial_operands;
    size_t arity = 0;
    switch (inst.opcode()) {
      case ir::Opcode::kAdd:
      case ir::Opcode::kSubtract:
        partial_operands = {0, 1};
        break;
      case ir::Opcode::kNegate:
      case ir::Opcode::kReshape:
      case ir::Opcode::kTranspose:
      case ir::Opcode::kBroadcastInDim:
        partial_operands = {0};
        break;
      case ir::Opcode::kConvert: {
        // Widening only: each part is exact in the wider type, whose sum is then at least as
        // precise as the narrow one (a narrowing would round every part).
        if (inst.operands().size() != 1 || !inst.operand(0)->type().is_tensor()) {
          return std::nullopt;
        }
        const ir::ElementType from = inst.operand(0)->type().element_type();
        const ir::ElementType to = inst.result(0)->type().element_type();
        if (!ir::IsFloat(from) || !ir::IsFloat(to) || ir::BitWidth(to) <= ir::BitWidth(from)) {
          return std::nullopt;
        }
        partial_operands = {0};
        break;
      }
      case ir::Opcode::kSelect:
        partial_operands = {1, 2};
        arity = 3;
        break;
      case ir::Opcode::kDynamicSlice:
        partial_operands = {0};
        arity = 1 + Rank(inst.operand(0));
        break;
      case ir::Opcode::kDynamicUpdateSlice:
        partial_operands = {0, 1};
        arity = 2 + Rank(inst.operand(0));
        break;
      default:
        return std::nullopt;
    }
    if (arity == 0) arity = partial_operands.size();
    if (inst.num_results() != 1 || inst.operands().size() != arity ||
        !inst.result(0)->type().is_tensor()) {
      return std::nullopt;
    }
    // Sums of real numbers (pred's add is an or).
    const ir::ElementType type = inst.result(0)->type().element_type();
    if (!ir::IsFloat(type) && !ir::IsInteger(type)) return std::nullopt;
    std::optional<std::vector<ir::MeshAxisRef>> axes;
    for (size_t k = 0; k < inst.operands().size(); ++k) {
      const ir::Value* v = inst.operand(k);
      if (!v->type().is_tensor() || Owner(v) != this) return std::nullopt;
      EMBER_ASSIGN_OR_RETURN(const Held* h, Get(v));
      const bool wanted =
          std::find(partial_operands.begin(), partial_operands.end(), k) != partial_operands.end();
      if (!wanted) {
        if (!h->partial.empty()) return std::nullopt;  // the predicate must be whole
        continue;
      }
      if (h->partial.empty()) return std::nullopt;
      if (h->partial_op != nullptr &&
          PartialKind(*h->partial_op) != collectives::ReductionKind::kSum) {
        return std::nullopt;
      }
      if (axes.has_value() && !SameAxisSet(*axes, h->partial)) return std::nullopt;
      axes = h->partial;
    }
    return axes;
  }

  // Ops whose attributes or semantics tie them to global indices along their factors: every
  // factor stays whole.
  bool RunsOnlyWhole(const ir::Instruction& inst) const {
    switch (inst.opcode()) {
      // (A scatter runs split: along window and indexed dimensions each device updates its
      // block; only a scatter-add into zeros runs on split updates (its reduction factors: each
      // device's updates land anywhere), its result partial.)
      case ir::Opcode::kConvolution: {
        for (const char* name : {"feature_group_count", "batch_group_count"}) {
          const ir::Attribute* a = inst.attribute(name);
          if (a != nullptr && a->kind == ir::Attribute::Kind::kInt && a->i != 1) return true;
        }
        return false;
      }
      default:
        return false;
    }
  }

  absl::Status EmitLocal(const ir::Instruction& inst, const ShardingRule& rule) {
    const size_t nf = rule.factor_sizes.size();
    std::vector<std::vector<ir::MeshAxisRef>> axes(nf);
    std::vector<bool> in_operand(nf, false);
    for (const auto& dims : rule.operands) {
      for (const auto& fs : dims) {
        for (int f : fs) in_operand[f] = true;
      }
    }
    // Non-reduction factors: the splits propagation gave the results.
    for (size_t r = 0; r < rule.results.size(); ++r) {
      const DimSplits assigned = Assigned(inst, r);
      for (size_t d = 0; d < rule.results[r].size() && d < assigned.size(); ++d) {
        for (int f : rule.results[r][d]) {
          if (!axes[f].empty()) continue;
          axes[f] = ProjectOntoFactor(assigned[d], rule.results[r][d], rule, f, mesh_);
        }
      }
    }
    // Reduction factors: the split the operands hold (their common prefix), where the op can
    // leave its result partial.
    const std::optional<collectives::ReductionKind> partial = PartialKind(inst);
    for (size_t f = 0; f < nf; ++f) {
      if (!rule.reduction[f] || !partial.has_value()) continue;
      std::optional<std::vector<ir::MeshAxisRef>> common;
      for (size_t k = 0; k < rule.operands.size(); ++k) {
        for (size_t d = 0; d < rule.operands[k].size(); ++d) {
          const auto& fs = rule.operands[k][d];
          if (std::find(fs.begin(), fs.end(), static_cast<int>(f)) == fs.end()) continue;
          EMBER_ASSIGN_OR_RETURN(const Held* h, Get(inst.operand(k)));
          std::vector<ir::MeshAxisRef> have =
              d < h->dims.size() ? ProjectOntoFactor(h->dims[d], fs, rule, f, mesh_)
                                 : std::vector<ir::MeshAxisRef>{};
          if (!common.has_value()) {
            common = have;
          } else {
            size_t n = 0;
            while (n < common->size() && n < have.size() && (*common)[n].name == have[n].name) ++n;
            common->resize(n);
          }
        }
      }
      if (common.has_value()) axes[f] = *common;
    }
    // Factors the op cannot run split, and factors only its results have (the op makes them:
    // only a broadcast makes each block from the operand alone).
    for (size_t f = 0; f < nf; ++f) {
      if (RunsOnlyWhole(inst) ||
          (!in_operand[f] && inst.opcode() != ir::Opcode::kBroadcastInDim &&
           inst.opcode() != ir::Opcode::kIota && inst.opcode() != ir::Opcode::kConstant)) {
        axes[f].clear();
      }
    }
    // One axis splits one factor.
    std::vector<ir::MeshAxisRef> taken;
    for (size_t f = 0; f < nf; ++f) {
      size_t keep = 0;
      while (keep < axes[f].size() && !Overlaps(axes[f][keep], taken)) ++keep;
      axes[f].resize(keep);
      taken.insert(taken.end(), axes[f].begin(), axes[f].end());
    }
    // A halo factor's blocks lend their neighbours whole halos: each at least as long as both.
    for (size_t f = 0; f < nf; ++f) {
      const auto [lo, hi] = rule.halo[f];
      if ((lo == 0 && hi == 0) || axes[f].empty()) continue;
      const int64_t n = Product(mesh_, axes[f]);
      if (rule.factor_sizes[f] % n != 0 || rule.factor_sizes[f] / n < std::max(lo, hi)) {
        axes[f].clear();
      }
    }
    // Every tensor must hold each factor's split as contiguous blocks; a factor one of them
    // cannot hold stays whole. Repeats until every tensor holds every split.
    std::vector<std::vector<std::vector<int>>> all = rule.operands;
    all.insert(all.end(), rule.results.begin(), rule.results.end());
    std::vector<const ir::Value*> values(inst.operands().begin(), inst.operands().end());
    for (size_t r = 0; r < inst.num_results(); ++r) values.push_back(inst.result(r));
    std::vector<DimSplits> splits(all.size());
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t t = 0; t < all.size(); ++t) {
        splits[t] = DimSplits(all[t].size());
        for (size_t d = 0; d < all[t].size(); ++d) {
          bool whole_so_far = true;
          for (int f : all[t][d]) {
            if (!whole_so_far && !axes[f].empty()) {
              axes[f].clear();
              changed = true;
            }
            splits[t][d].insert(splits[t][d].end(), axes[f].begin(), axes[f].end());
            whole_so_far &= Product(mesh_, axes[f]) == rule.factor_sizes[f];
          }
          const ir::ValueType& type = GlobalType(values[t]);
          const int64_t size = type.is_tensor() ? type.dims()[d] : 1;
          if (size % Product(mesh_, splits[t][d]) != 0) {
            for (int f : all[t][d]) {
              changed |= !axes[f].empty();
              axes[f].clear();
            }
          }
        }
      }
    }
    if (inst.opcode() == ir::Opcode::kIota || inst.opcode() == ir::Opcode::kConstant) {
      return EmitGenerator(inst, splits[inst.operands().size()]);
    }
    std::vector<ir::MeshAxisRef> summed;
    for (size_t f = 0; f < nf; ++f) {
      if (rule.reduction[f]) summed.insert(summed.end(), axes[f].begin(), axes[f].end());
    }
    // An op linear in its partial operands keeps their sum partial (no all-reduce yet).
    std::optional<std::vector<ir::MeshAxisRef>> linear;
    if (summed.empty()) {
      EMBER_ASSIGN_OR_RETURN(linear, LinearInPartials(inst));
      // A value cannot be split along an axis it is a partial sum over.
      for (size_t t = 0; linear.has_value() && t < splits.size(); ++t) {
        for (const auto& dim : splits[t]) {
          for (const ir::MeshAxisRef& a : dim) {
            if (Overlaps(a, *linear)) linear.reset();
          }
        }
      }
    }
    std::vector<ir::Value*> operands;
    for (size_t k = 0; k < inst.operands().size(); ++k) {
      const ir::Value* v = inst.operand(k);
      DimSplits want = v->type().is_tensor() ? splits[k] : DimSplits{};
      want.resize(Rank(v));
      ir::Value* local = nullptr;
      if (linear.has_value() && v->type().is_tensor()) {
        // Gathers, cuts and all-to-alls commute with the sum: the partial value is resharded.
        EMBER_ASSIGN_OR_RETURN(const Held* h, Get(v));
        EMBER_ASSIGN_OR_RETURN(local,
                               build_.Reshard(h->local, mesh_, h->dims, want, inst.location()));
      } else {
        EMBER_ASSIGN_OR_RETURN(local, As(v, want, &inst, inst.location()));
      }
      operands.push_back(local);
    }
    // Split halo factors (a convolution's spatial dimensions): operand 0's block grows by the
    // halos of its neighbours' blocks, and the op runs on it without that padding (the devices
    // at the ends receive zeros: the padding's).
    std::optional<std::vector<int64_t>> padding;
    for (size_t f = 0; f < nf; ++f) {
      const auto [lo, hi] = rule.halo[f];
      if ((lo == 0 && hi == 0) || axes[f].empty()) continue;
      int64_t d = -1;
      for (size_t k = 0; k < rule.operands[0].size(); ++k) {
        const auto& fs = rule.operands[0][k];
        if (std::find(fs.begin(), fs.end(), static_cast<int>(f)) != fs.end()) d = k;
      }
      const std::vector<int64_t>* spatial = IntsAttribute(inst, "input_spatial_dimensions");
      const std::vector<int64_t>* pads = IntsAttribute(inst, "padding");
      if (d < 0 || spatial == nullptr || pads == nullptr) {
        return absl::InternalError(
            absl::StrCat(inst.Describe(), ": a halo factor without its padding"));
      }
      const auto at = std::find(spatial->begin(), spatial->end(), d);
      if (at == spatial->end() || pads->size() != 2 * spatial->size()) {
        return absl::InternalError(absl::StrCat(inst.Describe(), ": a halo factor of dimension ",
                                                d, " that is not spatial"));
      }
      if (!padding.has_value()) padding = *pads;
      const size_t i = at - spatial->begin();
      (*padding)[2 * i] = 0;
      (*padding)[2 * i + 1] = 0;
      EMBER_ASSIGN_OR_RETURN(operands[0],
                             WithHalos(operands[0], d, lo, hi, axes[f], inst.location()));
      ctx_.report.push_back(absl::StrCat("  halos of ", lo, " and ", hi,
                                         " elements exchanged along dimension ", d, " over ",
                                         AxesText(axes[f]), " (collective-permute): ",
                                         inst.Describe()));
    }
    // Split indexed factors (operand dimensions a gather or scatter looks up by index): the
    // indices are made local to this device's block; a gather's rows from other blocks are
    // masked to zeros below.
    ir::Value* in_block = nullptr;
    for (size_t f = 0; f < nf; ++f) {
      if (rule.index_component[f] < 0 || axes[f].empty()) continue;
      const bool gather = inst.opcode() == ir::Opcode::kGather;
      const size_t at = gather ? 1 : inst.num_results();  // the indices
      int64_t d = -1;
      for (size_t k = 0; k < rule.operands[0].size(); ++k) {
        const auto& fs = rule.operands[0][k];
        if (std::find(fs.begin(), fs.end(), static_cast<int>(f)) != fs.end()) d = k;
      }
      if (d < 0 || at >= operands.size()) {
        return absl::InternalError(absl::StrCat(inst.Describe(), ": an indexed factor without its "
                                                "dimension or indices"));
      }
      const int64_t rank = static_cast<int64_t>(operands[at]->type().dims().size());
      const ir::Attribute* ivd = inst.attribute("index_vector_dim");
      const int64_t vector_dim = ivd != nullptr && ivd->kind == ir::Attribute::Kind::kInt ? ivd->i
                                                                                            : rank;
      ir::Value* mask = nullptr;
      EMBER_ASSIGN_OR_RETURN(
          operands[at],
          LocalIndices(operands[at], vector_dim, rule.index_component[f], rule.factor_sizes[f],
                       operands[0]->type().dims()[d], axes[f], gather,
                       gather ? &mask : nullptr, inst.location()));
      if (mask != nullptr) {
        in_block = in_block == nullptr ? mask
                                       : c_.AddInstruction(ir::Opcode::kAnd, {in_block, mask},
                                                           {mask->type()}, {}, {}, inst.location())
                                             ->result();
      }
      ctx_.report.push_back(absl::StrCat("  indices made local to blocks of dimension ", d,
                                         " split over ", AxesText(axes[f]),
                                         gather ? " (other blocks' rows masked: a partial sum): "
                                                : ": ",
                                         inst.Describe()));
    }
    int64_t captured = 0;
    EMBER_RETURN_IF_ERROR(GlobalCaptures(inst, captured));
    std::vector<ir::ValueType> types;
    std::vector<DimSplits> result_splits;
    for (size_t r = 0; r < inst.num_results(); ++r) {
      DimSplits s = splits[inst.operands().size() + r];
      s.resize(Rank(inst.result(r)));
      EMBER_ASSIGN_OR_RETURN(ir::ValueType local,
                             SpmdBuilder::LocalType(inst.result(r)->type(), mesh_, s));
      types.push_back(std::move(local));
      result_splits.push_back(std::move(s));
    }
    ir::Instruction* copy = Add(inst, std::move(operands), types);
    if (padding.has_value()) copy->mutable_attributes().Set("padding", ir::Attribute::Ints(*padding));
    if (inst.opcode() == ir::Opcode::kDynamicSlice && !types.empty()) {
      copy->mutable_attributes().Set("slice_sizes", ir::Attribute::Ints(types[0].dims()));
    }
    if (inst.opcode() == ir::Opcode::kSlice) {
      // Split dimensions are ones the slice keeps whole: they keep the local block whole.
      const std::vector<int64_t>* limits = IntsAttribute(inst, "limit_indices");
      const std::vector<int64_t>& local = copy->operand(0)->type().dims();
      if (limits == nullptr || limits->size() != local.size()) {
        return absl::InvalidArgumentError(absl::StrCat(inst.Describe(), ": no limit_indices"));
      }
      std::vector<int64_t> adjusted = *limits;
      const std::vector<int64_t>& global = GlobalType(inst.operand(0)).dims();
      for (size_t d = 0; d < local.size(); ++d) {
        if (local[d] != global[d]) adjusted[d] = local[d];
      }
      copy->mutable_attributes().Set("limit_indices", ir::Attribute::Ints(adjusted));
    }
    if (inst.opcode() == ir::Opcode::kGather) {
      // A split operand dimension is one the gather takes whole: it takes the local block whole.
      const std::vector<int64_t>* sizes = IntsAttribute(inst, "slice_sizes");
      const std::vector<int64_t>& global = GlobalType(inst.operand(0)).dims();
      const std::vector<int64_t>& local = copy->operand(0)->type().dims();
      if (sizes == nullptr || sizes->size() != local.size()) {
        return absl::InvalidArgumentError(absl::StrCat(inst.Describe(), ": no slice_sizes"));
      }
      std::vector<int64_t> adjusted = *sizes;
      const std::vector<int64_t>* batching = IntsAttribute(inst, "operand_batching_dims");
      for (size_t d = 0; d < local.size(); ++d) {
        if (local[d] == global[d]) continue;
        const bool batch = batching != nullptr &&
                           std::find(batching->begin(), batching->end(), static_cast<int64_t>(d)) !=
                               batching->end();
        if (batch) continue;  // one row per index, found by the batch index: local as it is
        if ((*sizes)[d] == 1) continue;  // looked up by a local index: one row as before
        if ((*sizes)[d] != global[d]) {
          return absl::InternalError(absl::StrCat(inst.Describe(), ": operand dimension ", d,
                                                  " is split but not gathered whole"));
        }
        adjusted[d] = local[d];
      }
      copy->mutable_attributes().Set("slice_sizes", ir::Attribute::Ints(adjusted));
    }
    if (!summed.empty()) {
      ctx_.report.push_back(absl::StrCat("  unreduced over ", AxesText(summed),
                                         " (a sum over split factors, all-reduced where first "
                                         "needed whole): ",
                                         inst.Describe()));
    }
    std::vector<ir::Value*> results;
    for (size_t r = 0; r < inst.num_results(); ++r) results.push_back(copy->result(r));
    if (in_block != nullptr && !results.empty()) {
      EMBER_ASSIGN_OR_RETURN(results[0], MaskRows(inst, results[0], in_block));
    }
    for (size_t r = 0; r < inst.num_results(); ++r) {
      Held h{results[r], std::move(result_splits[r])};
      if (!summed.empty()) {
        h.partial = summed;
        h.partial_op = &inst;
      } else if (linear.has_value()) {
        h.partial = *linear;  // a sum, as its operands were
      }
      held_[inst.result(r)] = std::move(h);
    }
    return absl::OkStatus();
  }

  // `indices` (a gather's or scatter's, vector dimension `vector_dim`) with component `j`, which
  // looks up a dimension of `size` elements split over `axes` in blocks of `block`, made local
  // to this device's block: minus its offset, after clamping into the dimension first where
  // `clamp` (a gather clamps its start indices). `in_block`, when given, gets whether each
  // index falls in the block (the indices' shape without the vector dimension).
  absl::StatusOr<ir::Value*> LocalIndices(ir::Value* indices, int64_t vector_dim, int64_t j,
                                          int64_t size, int64_t block,
                                          const std::vector<ir::MeshAxisRef>& axes, bool clamp,
                                          ir::Value** in_block, const ir::Location& loc) {
    const ir::ElementType et = indices->type().element_type();
    const std::vector<int64_t>& dims = indices->type().dims();
    const int64_t rank = static_cast<int64_t>(dims.size());
    if (!ir::IsInteger(et)) {
      return absl::InvalidArgumentError("spmd-partition: indices that are not integers");
    }
    auto add = [&](ir::Opcode op, std::vector<ir::Value*> in, std::vector<int64_t> shape,
                   ir::ElementType type, ir::AttributeMap attrs = {}) -> absl::StatusOr<ir::Value*> {
      EMBER_ASSIGN_OR_RETURN(ir::Shape out, ir::Shape::Make(type, std::move(shape)));
      return c_
          .AddInstruction(op, std::move(in), {ir::ValueType::Tensor(out)}, std::move(attrs), {},
                          loc)
          ->result();
    };
    auto slice = [&](int64_t begin, int64_t end) {
      return build_.Slice(indices, vector_dim, begin, end, loc);
    };
    std::vector<int64_t> component_dims = dims;
    ir::Value* component = indices;
    if (vector_dim < rank) {
      component_dims[vector_dim] = 1;
      EMBER_ASSIGN_OR_RETURN(component, slice(j, j + 1));
    }
    // A scalar of the index type, broadcast to the component's shape.
    auto splat = [&](ir::Value* s64) -> absl::StatusOr<ir::Value*> {
      EMBER_ASSIGN_OR_RETURN(ir::Value * scalar, add(ir::Opcode::kConvert, {s64}, {}, et));
      ir::AttributeMap attrs;
      attrs.Set("broadcast_dimensions", ir::Attribute::Ints({}));
      return add(ir::Opcode::kBroadcastInDim, {scalar}, component_dims, et, std::move(attrs));
    };
    auto number = [&](int64_t v) -> absl::StatusOr<ir::Value*> {
      EMBER_ASSIGN_OR_RETURN(ir::Value * s64, build_.Scalar(v, loc));
      return splat(s64);
    };
    EMBER_ASSIGN_OR_RETURN(ir::Value * zero, number(0));
    if (clamp) {
      EMBER_ASSIGN_OR_RETURN(ir::Value * last, number(size - 1));
      EMBER_ASSIGN_OR_RETURN(component,
                             add(ir::Opcode::kClamp, {zero, component, last}, component_dims, et));
    }
    EMBER_ASSIGN_OR_RETURN(ir::Value * offset,
                           build_.MinorBlockOffset(mesh_, axes, size / block, block, loc));
    EMBER_ASSIGN_OR_RETURN(ir::Value * start, splat(offset));
    EMBER_ASSIGN_OR_RETURN(ir::Value * local,
                           add(ir::Opcode::kSubtract, {component, start}, component_dims, et));
    if (in_block != nullptr) {
      const char* kind = ir::IsSignedInteger(et) ? "SIGNED" : "UNSIGNED";
      auto compare = [&](ir::Value* a, ir::Value* b, const char* dir) {
        ir::AttributeMap attrs;
        attrs.Set("comparison_direction", ir::Attribute::String(dir));
        attrs.Set("compare_type", ir::Attribute::String(kind));
        return add(ir::Opcode::kCompare, {a, b}, component_dims, ir::ElementType::kPred,
                   std::move(attrs));
      };
      EMBER_ASSIGN_OR_RETURN(ir::Value * count, number(block));
      EMBER_ASSIGN_OR_RETURN(ir::Value * at_least, compare(local, zero, "GE"));
      EMBER_ASSIGN_OR_RETURN(ir::Value * below, compare(local, count, "LT"));
      EMBER_ASSIGN_OR_RETURN(ir::Value * inside, add(ir::Opcode::kAnd, {at_least, below},
                                                     component_dims, ir::ElementType::kPred));
      if (vector_dim < rank) {
        std::vector<int64_t> batch = dims;
        batch.erase(batch.begin() + vector_dim);
        EMBER_ASSIGN_OR_RETURN(inside, add(ir::Opcode::kReshape, {inside}, batch,
                                           ir::ElementType::kPred));
      }
      *in_block = inside;
    }
    if (vector_dim >= rank) return local;
    std::vector<ir::Value*> pieces;
    if (j > 0) {
      EMBER_ASSIGN_OR_RETURN(ir::Value * before, slice(0, j));
      pieces.push_back(before);
    }
    pieces.push_back(local);
    if (j + 1 < dims[vector_dim]) {
      EMBER_ASSIGN_OR_RETURN(ir::Value * after, slice(j + 1, dims[vector_dim]));
      pieces.push_back(after);
    }
    if (pieces.size() == 1) return local;
    return build_.Concatenate(std::move(pieces), vector_dim, loc);
  }

  // A gather's local result with the rows whose index fell outside this device's block
  // (`in_block`, over the index batch dimensions: the result's non-offset dimensions) zeroed.
  absl::StatusOr<ir::Value*> MaskRows(const ir::Instruction& gather, ir::Value* result,
                                      ir::Value* in_block) {
    const ir::Location& loc = gather.location();
    const std::vector<int64_t>* offset = IntsAttribute(gather, "offset_dims");
    std::vector<int64_t> batch_dims;
    for (int64_t r = 0; r < static_cast<int64_t>(result->type().dims().size()); ++r) {
      if (offset == nullptr || std::find(offset->begin(), offset->end(), r) == offset->end()) {
        batch_dims.push_back(r);
      }
    }
    if (batch_dims.size() != in_block->type().dims().size()) {
      return absl::InternalError(absl::StrCat(gather.Describe(), ": ", batch_dims.size(),
                                              " batch dimensions for indices of rank ",
                                              in_block->type().dims().size()));
    }
    EMBER_ASSIGN_OR_RETURN(ir::Shape shape,
                           ir::Shape::Make(ir::ElementType::kPred, result->type().dims()));
    ir::AttributeMap attrs;
    attrs.Set("broadcast_dimensions", ir::Attribute::Ints(batch_dims));
    ir::Value* mask = c_.AddInstruction(ir::Opcode::kBroadcastInDim, {in_block},
                                        {ir::ValueType::Tensor(shape)}, std::move(attrs), {}, loc)
                          ->result();
    EMBER_ASSIGN_OR_RETURN(ir::Value * zeros, build_.Zeros(result->type(), loc));
    return c_
        .AddInstruction(ir::Opcode::kSelect, {mask, result, zeros}, {result->type()}, {}, {}, loc)
        ->result();
  }

  // `local` (a block of a dimension `d` split over `axes`) with `lo` elements of the block
  // before it in front and `hi` of the block after it behind: the tail of each block is
  // shifted one device on, the head one device back.
  absl::StatusOr<ir::Value*> WithHalos(ir::Value* local, int64_t d, int64_t lo, int64_t hi,
                                       const std::vector<ir::MeshAxisRef>& axes,
                                       const ir::Location& loc) {
    const int64_t size = local->type().dims()[d];
    std::vector<ir::Value*> pieces;
    if (lo > 0) {
      EMBER_ASSIGN_OR_RETURN(ir::Value * tail, build_.Slice(local, d, size - lo, size, loc));
      EMBER_ASSIGN_OR_RETURN(ir::Value * before, build_.Shift(tail, mesh_, axes, +1, loc));
      pieces.push_back(before);
    }
    pieces.push_back(local);
    if (hi > 0) {
      EMBER_ASSIGN_OR_RETURN(ir::Value * head, build_.Slice(local, d, 0, hi, loc));
      EMBER_ASSIGN_OR_RETURN(ir::Value * after, build_.Shift(head, mesh_, axes, -1, loc));
      pieces.push_back(after);
    }
    return build_.Concatenate(std::move(pieces), d, loc);
  }

  // An iota or constant split as `want`: made locally where that is exact (an iota's block is a
  // local iota plus the block's offset, a splat constant is a smaller splat), else made whole
  // and cut.
  absl::Status EmitGenerator(const ir::Instruction& inst, const DimSplits& want) {
    const ir::ValueType& global = inst.result(0)->type();
    EMBER_ASSIGN_OR_RETURN(ir::ValueType local_type, SpmdBuilder::LocalType(global, mesh_, want));
    const ir::Location& loc = inst.location();
    if (Replicated(want)) {
      held_[inst.result(0)] = Held{Add(inst, {}, {global})->result(0), want};
      return absl::OkStatus();
    }
    if (inst.opcode() == ir::Opcode::kConstant) {
      EMBER_ASSIGN_OR_RETURN(std::optional<ir::Literal> splat,
                             SplatOf(ConstantLiteral(inst.result(0)), local_type));
      if (splat.has_value()) {
        ir::AttributeMap attrs;
        attrs.Set("value", ir::Attribute::OfLiteral(*std::move(splat)));
        ir::Value* v =
            c_.AddInstruction(ir::Opcode::kConstant, {}, {local_type}, std::move(attrs), {}, loc)
                ->result();
        held_[inst.result(0)] = Held{v, want};
        return absl::OkStatus();
      }
    }
    const ir::Attribute* dim_attr = inst.attribute("iota_dimension");
    const ir::ElementType type = global.element_type();
    if (inst.opcode() == ir::Opcode::kIota && dim_attr != nullptr &&
        dim_attr->kind == ir::Attribute::Kind::kInt && (ir::IsInteger(type) || ir::IsFloat(type))) {
      // Global index = local index + the block's offset along the iota dimension, computed in
      // s64 and converted once, as the whole iota converts its index.
      const int64_t dim = dim_attr->i;
      const std::vector<int64_t>& dims = local_type.dims();
      EMBER_ASSIGN_OR_RETURN(ir::Shape s64_shape, ir::Shape::Make(ir::ElementType::kS64, dims));
      const ir::ValueType s64 = ir::ValueType::Tensor(s64_shape);
      ir::AttributeMap attrs;
      attrs.Set("iota_dimension", ir::Attribute::Int(dim));
      ir::Value* v =
          c_.AddInstruction(ir::Opcode::kIota, {}, {s64}, std::move(attrs), {}, loc)->result();
      if (dim >= 0 && static_cast<size_t>(dim) < want.size() && !want[dim].empty()) {
        EMBER_ASSIGN_OR_RETURN(int64_t blocks, SpmdBuilder::Count(mesh_, want[dim]));
        EMBER_ASSIGN_OR_RETURN(ir::Value * offset,
                               build_.MinorBlockOffset(mesh_, want[dim], blocks, dims[dim], loc));
        ir::AttributeMap b;
        b.Set("broadcast_dimensions", ir::Attribute::Ints({}));
        ir::Value* spread =
            c_.AddInstruction(ir::Opcode::kBroadcastInDim, {offset}, {s64}, std::move(b), {}, loc)
                ->result();
        v = c_.AddInstruction(ir::Opcode::kAdd, {v, spread}, {s64}, {}, {}, loc)->result();
      }
      if (type != ir::ElementType::kS64) {
        v = c_.AddInstruction(ir::Opcode::kConvert, {v}, {local_type}, {}, {}, loc)->result();
      }
      held_[inst.result(0)] = Held{v, want};
      return absl::OkStatus();
    }
    ir::Value* whole = Add(inst, {}, {global})->result(0);
    EMBER_ASSIGN_OR_RETURN(ir::Value * local,
                           build_.Cut(whole, mesh_, DimSplits(want.size()), want, loc));
    held_[inst.result(0)] = Held{local, want};
    global_[inst.result(0)] = whole;
    return absl::OkStatus();
  }

  // A literal of `type` holding `whole`'s one value when every element of `whole` is the same;
  // nullopt otherwise.
  static absl::StatusOr<std::optional<ir::Literal>> SplatOf(const ir::Literal* whole,
                                                            const ir::ValueType& type) {
    if (whole == nullptr) return std::nullopt;
    const absl::Span<const uint8_t> bytes = whole->bytes();
    const int64_t n = whole->shape().element_count();
    if (n <= 0 || bytes.size() % n != 0) return std::nullopt;
    const size_t width = bytes.size() / n;  // 0 for packed sub-byte types: not handled here
    if (width == 0) return std::nullopt;
    for (size_t at = width; at < bytes.size(); at += width) {
      if (std::memcmp(bytes.data(), bytes.data() + at, width) != 0) return std::nullopt;
    }
    EMBER_ASSIGN_OR_RETURN(ir::Literal out, ir::Literal::Create(type.shape()));
    absl::Span<uint8_t> dst = out.mutable_bytes();
    for (size_t at = 0; at + width <= dst.size(); at += width) {
      std::memcpy(dst.data() + at, bytes.data(), width);
    }
    return std::optional<ir::Literal>(std::move(out));
  }

  // The region of the all-reduce that completes a partial result of `inst`.
  absl::StatusOr<ir::Computation*> ReductionRegion(const ir::Instruction& inst,
                                                   collectives::ReductionKind kind) {
    if (inst.opcode() == ir::Opcode::kReduce) {
      ValueMap scratch;
      return CloneRegion(ctx_.module, *inst.regions()[0], scratch);
    }
    if (kind != collectives::ReductionKind::kSum) {
      return absl::InternalError(absl::StrCat(inst.Describe(), ": no partial sum region"));
    }
    return AddRegion(inst.result(0)->type().element_type(), inst.location());
  }

  // A region adding two scalars of `type`.
  absl::StatusOr<ir::Computation*> AddRegion(ir::ElementType type, const ir::Location& loc) {
    const ir::ValueType scalar = ir::ValueType::Tensor(ir::Shape::Scalar(type));
    ir::Computation* region = ctx_.module.AddRegion("spmd_sum");
    ir::Value* a = region->AddParameter(scalar);
    ir::Value* b = region->AddParameter(scalar);
    ir::Value* sum =
        region->AddInstruction(ir::Opcode::kAdd, {a, b}, {scalar}, {}, {}, loc)->result();
    region->AddInstruction(ir::Opcode::kReturn, {sum}, {}, {}, {}, loc);
    return region;
  }

  // A manual computation (shard_map): its operands in its in_shardings are the blocks its body
  // takes along the manual axes; its results are held as its out_shardings say. Where mesh axes
  // are left free (partially manual), the blocks are also split along the free axes the
  // shardings name, and the body is partitioned in turn over them (propagation entered it: its
  // values are split along the free axes where constraints or the blocks say so).
  absl::Status EmitManual(const ir::Instruction& inst) {
    ir::Computation* body = inst.callee();
    if (body == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(inst.Describe(), ": no body"));
    EMBER_ASSIGN_OR_RETURN(std::vector<const ir::TensorSharding*> ins,
                           ShardingList(inst, "in_shardings", inst.operands().size()));
    EMBER_ASSIGN_OR_RETURN(std::vector<const ir::TensorSharding*> outs,
                           ShardingList(inst, "out_shardings", inst.num_results()));
    if (body->parameters().size() != inst.operands().size()) {
      return absl::InvalidArgumentError(absl::StrCat(inst.Describe(), ": the body takes ",
                                                     body->parameters().size(), " values, not ",
                                                     inst.operands().size()));
    }
    std::vector<std::string> manual;
    if (const ir::Attribute* axes = inst.attribute("manual_axes");
        axes != nullptr && axes->kind == ir::Attribute::Kind::kList) {
      for (const ir::Attribute& a : axes->list) {
        if (a.kind == ir::Attribute::Kind::kString) manual.push_back(a.s);
      }
    }
    auto in = [](const std::vector<std::string>& list, const std::string& name) {
      return std::find(list.begin(), list.end(), name) != list.end();
    };
    bool partial = false;
    for (size_t a = 0; a < mesh_.axes.size(); ++a) {
      partial |= mesh_.sizes[a] > 1 && !in(manual, mesh_.axes[a]) && !in(consumed_, mesh_.axes[a]);
    }
    // A sharding of the manual computation as splits, and its free-axis part.
    auto parts = [&](const ir::TensorSharding& sharding, const ir::ValueType& type, DimSplits& all,
                     DimSplits& free) -> absl::Status {
      if (!sharding.unreduced_axes.empty()) {
        for (const ir::MeshAxisRef& a : sharding.unreduced_axes) {
          if (!in(manual, a.name)) {
            return absl::UnimplementedError(
                absl::StrCat(inst.Describe(), ": its sharding ", sharding.ToString(),
                             " is unreduced over the free axis \"", a.name, "\""));
          }
        }
      }
      EMBER_ASSIGN_OR_RETURN(ir::Mesh mesh, ir::MeshOfSharding(ctx_.module, sharding));
      if (mesh != mesh_) {
        return absl::UnimplementedError(absl::StrCat(
            inst.Describe(), ": its sharding ", sharding.ToString(), " is over the mesh ",
            mesh.ToString(), ", not the program's ", mesh_.ToString()));
      }
      if (absl::Status even = ir::ShardDims(type.dims(), sharding, mesh).status(); !even.ok()) {
        return absl::Status(even.code(), absl::StrCat(inst.Describe(), ": ", even.message()));
      }
      all = SplitsOf(sharding, type.dims().size());
      free = DimSplits(all.size());
      for (size_t d = 0; d < all.size(); ++d) {
        for (const ir::MeshAxisRef& a : all[d]) {
          if (in(consumed_, a.name)) {
            return absl::UnimplementedError(absl::StrCat(
                inst.Describe(), ": its sharding ", sharding.ToString(), " names the axis \"",
                a.name, "\", manual in an enclosing manual computation"));
          }
          const bool is_manual = in(manual, a.name);
          if (is_manual && !free[d].empty()) {
            return absl::UnimplementedError(
                absl::StrCat(inst.Describe(), ": dimension ", d, " of ", sharding.ToString(),
                             " splits over a free axis before a manual one"));
          }
          if (!is_manual) free[d].push_back(a);
        }
      }
      return absl::OkStatus();
    };
    std::vector<ir::Value*> locals;
    std::vector<Held> free_params;
    for (size_t k = 0; k < inst.operands().size(); ++k) {
      const ir::Value* v = inst.operand(k);
      DimSplits all, free;
      EMBER_RETURN_IF_ERROR(parts(*ins[k], GlobalType(v), all, free));
      // An operand stated unreduced reaches the body as each device's part of its sum (the
      // body sums it itself, by psum or psum_scatter): a partial value is not summed here.
      ir::Value* local = nullptr;
      if (ins[k]->unreduced_axes.empty()) {
        EMBER_ASSIGN_OR_RETURN(local, As(v, all, &inst, inst.location()));
      } else {
        EMBER_ASSIGN_OR_RETURN(local,
                               AsUnreduced(v, Want{all, ins[k]->unreduced_axes}, inst.location()));
      }
      EMBER_ASSIGN_OR_RETURN(ir::ValueType takes,
                             SpmdBuilder::LocalType(body->parameter(k)->type(), mesh_, free));
      if (takes != local->type()) {
        return absl::InvalidArgumentError(
            absl::StrCat(inst.Describe(), ": operand ", k, "'s block is ", local->type().ToString(),
                         " but the body takes ", body->parameter(k)->type().ToString()));
      }
      locals.push_back(local);
      free_params.push_back(Held{nullptr, std::move(free)});
    }
    std::vector<DimSplits> held_results;
    std::vector<std::optional<Want>> free_results;
    for (size_t r = 0; r < inst.num_results(); ++r) {
      DimSplits all, free;
      EMBER_RETURN_IF_ERROR(parts(*outs[r], inst.result(r)->type(), all, free));
      held_results.push_back(std::move(all));
      free_results.push_back(Want{std::move(free), {}});
    }
    if (partial) {
      if (ctx_.callee_uses[body] != 1) {
        return absl::UnimplementedError(
            absl::StrCat(inst.Describe(),
                         ": a partially manual computation whose body other ops also run is "
                         "not supported yet"));
      }
      std::vector<std::string> consumed = consumed_;
      consumed.insert(consumed.end(), manual.begin(), manual.end());
      EMBER_RETURN_IF_ERROR(Partitioner(ctx_, *body, this, std::move(consumed))
                                .Run(free_params, free_results)
                                .status());
    }
    ir::Instruction* call = c_.AddInstruction(ir::Opcode::kCall, std::move(locals),
                                              body->result_types(), {}, {}, inst.location());
    call->set_callee(body);
    for (size_t r = 0; r < inst.num_results(); ++r) {
      EMBER_ASSIGN_OR_RETURN(ir::ValueType local, SpmdBuilder::LocalType(inst.result(r)->type(),
                                                                         mesh_, held_results[r]));
      if (local != call->result(r)->type()) {
        return absl::InvalidArgumentError(absl::StrCat(
            inst.Describe(), ": result ", r, " is ", call->result(r)->type().ToString(),
            " per device, but its out_sharding makes blocks of ", local.ToString()));
      }
      // A result unreduced over manual axes is each device's part of the sum the body leaves.
      held_[inst.result(r)] =
          Held{call->result(r), std::move(held_results[r]), outs[r]->unreduced_axes, nullptr};
    }
    return absl::OkStatus();
  }

  Context& ctx_;
  ir::Computation& c_;
  Partitioner* const parent_;
  const std::vector<std::string> consumed_;
  const ir::Mesh& mesh_;
  SpmdBuilder build_;
  std::unordered_map<const ir::Value*, Held> held_;
  std::unordered_map<const ir::Value*, ir::Value*> global_;   // global values made so far
  std::unordered_map<const ir::Value*, ir::Value*> reduced_;  // partial sums completed so far
};

// A sharding over the mesh propagation wrote its shardings over, one that splits something
// where there is one.
std::optional<ir::TensorSharding> AnySplit(const ir::Computation& entry) {
  auto split = [](const ir::Attribute* a) -> const ir::TensorSharding* {
    if (a == nullptr || a->kind != ir::Attribute::Kind::kSharding || a->sharding == nullptr ||
        a->sharding->kind != ir::TensorSharding::Kind::kSplit) {
      return nullptr;
    }
    const auto& dims = a->sharding->dims;
    const bool splits = !a->sharding->unreduced_axes.empty() ||
                        std::any_of(dims.begin(), dims.end(),
                                    [](const ir::DimensionSharding& d) { return !d.axes.empty(); });
    return splits ? a->sharding.get() : nullptr;
  };
  for (const auto& attrs : entry.arg_attributes()) {
    if (const ir::TensorSharding* s = split(attrs.Find(kShardingAttribute))) return *s;
  }
  for (const auto& attrs : entry.result_attributes()) {
    if (const ir::TensorSharding* s = split(attrs.Find(kShardingAttribute))) return *s;
  }
  for (const auto& inst : entry.instructions()) {
    const ir::Attribute* list = inst->attribute(kShardingsAttribute);
    if (list == nullptr || list->kind != ir::Attribute::Kind::kList) continue;
    for (const ir::Attribute& a : list->list) {
      if (const ir::TensorSharding* s = split(&a)) return *s;
    }
  }
  // Nothing split outside, but a manual computation splits its operands.
  if (const ir::Instruction* manual = FindManualComputation(entry)) {
    for (const char* name : {"in_shardings", "out_shardings"}) {
      const ir::Attribute* list = manual->attribute(name);
      if (list == nullptr || list->kind != ir::Attribute::Kind::kList) continue;
      for (const ir::Attribute& a : list->list) {
        if (a.kind == ir::Attribute::Kind::kSharding && a.sharding != nullptr &&
            a.sharding->kind == ir::TensorSharding::Kind::kSplit) {
          return *a.sharding;
        }
      }
    }
  }
  return std::nullopt;
}

// Propagation's attributes are the partitioner's input only.
void ClearPropagation(ir::Module& module) {
  for (const auto& c : module.computations()) {
    for (auto& attrs : c->arg_attributes()) attrs.Erase(kShardingAttribute);
    for (auto& attrs : c->result_attributes()) attrs.Erase(kShardingAttribute);
    for (const auto& inst : c->instructions())
      inst->mutable_attributes().Erase(kShardingsAttribute);
  }
}

// The entry: arguments arrive as their stated shardings say, results leave as stated or, where
// the caller left them open, as they are (written on the entry's result: the sharding the
// program's signature reports, as XLA reports the one it chose).
absl::Status PartitionEntry(ir::Module& module, ir::Computation& entry, ir::Mesh mesh,
                            const ir::TensorSharding& mesh_ref, int64_t num_devices) {
  Context ctx(module, std::move(mesh), mesh_ref, num_devices);
  // What the entry runs (functions the inliner left behind are not).
  std::vector<const ir::Computation*> reached = {&entry};
  std::unordered_set<const ir::Computation*> seen = {&entry};
  std::unordered_set<const ir::Computation*> manual;  // in the bodies of manual computations
  for (size_t i = 0; i < reached.size(); ++i) {
    for (const auto& inst : reached[i]->instructions()) {
      std::vector<const ir::Computation*> inner(inst->regions().begin(), inst->regions().end());
      if (inst->callee() != nullptr) inner.push_back(inst->callee());
      for (const ir::Computation* c : inner) {
        if (manual.contains(reached[i]) || IsManualComputation(*inst)) manual.insert(c);
        if (seen.insert(c).second) reached.push_back(c);
      }
    }
  }
  for (const ir::Computation* c : reached) {
    for (const auto& inst : c->instructions()) {
      for (const ir::Computation* r : inst->regions()) ++ctx.region_uses[r];
      if (inst->callee() != nullptr) ++ctx.callee_uses[inst->callee()];
      if (IsManualComputation(*inst) || IsShardingConstraint(*inst)) continue;
      std::optional<ShardingRule>& rule = ctx.rules[inst.get()];
      EMBER_ASSIGN_OR_RETURN(rule, RuleOf(*inst));
      if (!rule.has_value() && manual.contains(c)) {
        EMBER_ASSIGN_OR_RETURN(rule, ManualCollectiveRule(*inst));
      }
    }
  }
  std::vector<Held> params;
  for (size_t i = 0; i < entry.parameters().size(); ++i) {
    const ir::Value* p = entry.parameter(i);
    const ir::Attribute* attr =
        i < entry.arg_attributes().size() ? StatedSharding(entry.arg_attributes()[i]) : nullptr;
    EMBER_ASSIGN_OR_RETURN(std::optional<Split> split,
                           ReadSplit(module, attr, p->type(), num_devices,
                                     absl::StrCat("argument ", i), /*allow_unreduced=*/true));
    Held h{nullptr, DimSplits(Rank(p))};
    if (split.has_value()) {
      h.dims = SplitsOf(split->sharding, Rank(p));
      h.partial = split->sharding.unreduced_axes;  // each device holds its part of a sum
    }
    params.push_back(std::move(h));
  }
  const ir::Instruction* ret = entry.return_instruction();
  if (ret == nullptr) return absl::InvalidArgumentError("the entry has no return");
  std::vector<std::optional<Want>> results;
  for (size_t r = 0; r < ret->operands().size(); ++r) {
    const ir::Value* v = ret->operand(r);
    const ir::Attribute* attr = r < entry.result_attributes().size()
                                    ? StatedSharding(entry.result_attributes()[r])
                                    : nullptr;
    EMBER_ASSIGN_OR_RETURN(std::optional<Split> split,
                           ReadSplit(module, attr, v->type(), num_devices,
                                     absl::StrCat("result ", r), /*allow_unreduced=*/true));
    if (attr == nullptr && v->type().is_tensor()) {
      results.push_back(std::nullopt);
    } else if (split.has_value()) {
      results.push_back(Want{SplitsOf(split->sharding, Rank(v)), split->sharding.unreduced_axes});
    } else {
      results.push_back(Want{DimSplits(Rank(v)), {}});
    }
  }
  Partitioner partitioner(ctx, entry, nullptr);
  EMBER_ASSIGN_OR_RETURN(std::vector<DimSplits> splits, partitioner.Run(params, results));
  for (size_t r = 0; r < splits.size(); ++r) {
    if (results[r].has_value() || Replicated(splits[r])) continue;
    if (entry.result_attributes().size() <= r) entry.result_attributes().resize(r + 1);
    entry.result_attributes()[r].Set("sdy.sharding",
                                     ir::Attribute::OfSharding(ShardingOf(mesh_ref, splits[r])));
  }
  ctx.report.insert(
      ctx.report.begin(),
      absl::StrCat("spmd-partition over ", ctx.mesh.ToString(), ": ", ctx.counters.collectives,
                   " collectives inserted, ", ctx.fallbacks, " ops on global values"));
  module.attributes().Set(kSpmdReportAttribute,
                          ir::Attribute::String(absl::StrJoin(ctx.report, "\n")));
  return absl::OkStatus();
}

class SpmdPartitionPass : public Pass {
 public:
  explicit SpmdPartitionPass(int64_t num_partitions) : num_devices_(num_partitions) {}
  std::string name() const override { return "spmd-partition"; }

  absl::StatusOr<bool> Run(ir::Module& module) override {
    ir::Computation* entry = module.entry();
    if (entry == nullptr) return false;
    // Calls are inlined first: their bodies (shard_maps in them too) are then split like the
    // rest of the entry.
    EMBER_RETURN_IF_ERROR(CreateInlinePass()->Run(module).status());
    // Shardings over other meshes of the same devices are written over the program's mesh.
    EMBER_RETURN_IF_ERROR(CreateUnifyMeshesPass()->Run(module).status());
    absl::StatusOr<bool> propagated = CreateShardingPropagationPass()->Run(module);
    std::string why;
    if (!propagated.ok()) {
      if (propagated.status().code() != absl::StatusCode::kUnimplemented) {
        return propagated.status();
      }
      why = std::string(propagated.status().message());
    } else if (*propagated) {
      std::optional<ir::TensorSharding> any = AnySplit(*entry);
      if (any.has_value()) {
        EMBER_ASSIGN_OR_RETURN(ir::Mesh mesh, ir::MeshOfSharding(module, *any));
        if (mesh.size() == num_devices_) {
          absl::Status done = PartitionEntry(module, *entry, std::move(mesh), *any, num_devices_);
          ClearPropagation(module);
          EMBER_RETURN_IF_ERROR(done);
          return true;
        }
        why = absl::StrCat("its mesh ", mesh.ToString(), " has ", mesh.size(),
                           " devices; the program runs on ", num_devices_);
      }
    }
    ClearPropagation(module);
    EMBER_ASSIGN_OR_RETURN(bool changed, CreateSpmdReplicatePass(num_devices_)->Run(module));
    if (changed && !why.empty()) {
      module.attributes().Set(
          kSpmdReportAttribute,
          ir::Attribute::String(absl::StrCat("spmd-replicate (every device runs the whole "
                                             "program): ",
                                             why)));
    }
    return changed;
  }

 private:
  const int64_t num_devices_;
};

}  // namespace

std::unique_ptr<Pass> CreateSpmdPartitionPass(int64_t num_partitions) {
  return std::make_unique<SpmdPartitionPass>(num_partitions);
}

}  // namespace ember::passes
