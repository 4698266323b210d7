// sharding-propagation (see sharding_propagation.h): the tensors are the program's array values
// plus the shardings the caller states at the edges (entry results, manual computations'
// operands); the edges between them are the ops' sharding rules and the ties of control flow
// (a while's operand, result, body parameter and body result k share one sharding). Each round
// applies every edge, forward then backward; a split is only ever extended, so the rounds stop.
#include "compiler/passes/sharding_propagation.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/ir/sharding.h"
#include "compiler/passes/sharding_rules.h"

namespace ember::passes {
namespace {

constexpr int64_t kNoPriority = std::numeric_limits<int64_t>::max();
// Every round that changes something extends a split, so a program converges in far fewer
// rounds than this; reaching it means a bug, reported rather than looped on.
constexpr int kMaxRounds = 10000;
constexpr char kManualTarget[] = "sdy.manual_computation";

struct DimState {
  std::vector<ir::MeshAxisRef> axes;  // major first
  bool closed = false;
  int64_t priority = kNoPriority;
};

struct TensorState {
  std::vector<int64_t> shape;
  std::vector<DimState> dims;
  std::vector<ir::MeshAxisRef> replicated;  // given: may split nothing
  std::vector<ir::MeshAxisRef> unreduced;   // partial over these
  std::vector<std::string> manual;          // axes manual where the value lives: none split it
};

// One rule applied to tensors (indices into the propagator's list; -1: not an array).
struct Edge {
  ShardingRule rule;
  std::vector<int> operands;
  std::vector<int> results;
};

bool SameAxis(const ir::MeshAxisRef& a, const ir::MeshAxisRef& b) {
  return a.name == b.name && a.pre_size == b.pre_size && a.size == b.size;
}

// Two references to one mesh axis overlap when they name it (sub-axes are compared whole:
// conservative, they never both split one tensor).
bool Overlaps(const ir::MeshAxisRef& a, const std::vector<ir::MeshAxisRef>& list) {
  return std::any_of(list.begin(), list.end(),
                     [&](const ir::MeshAxisRef& b) { return a.name == b.name; });
}

bool IsPrefix(const std::vector<ir::MeshAxisRef>& prefix, const std::vector<ir::MeshAxisRef>& of) {
  return prefix.size() <= of.size() &&
         std::equal(prefix.begin(), prefix.end(), of.begin(), SameAxis);
}

bool IsCustomCall(const ir::Instruction& inst, const char* target) {
  if (inst.opcode() != ir::Opcode::kCustomCall) return false;
  const ir::Attribute* t = inst.attribute("call_target_name");
  return t != nullptr && t->kind == ir::Attribute::Kind::kString && t->s == target;
}

const ir::Attribute* GivenSharding(const ir::AttributeMap& attrs) {
  const ir::Attribute* a = attrs.Find("sdy.sharding");
  if (a == nullptr) a = attrs.Find("mhlo.sharding");
  // An empty mhlo.sharding (older JAX exports) says nothing.
  if (a != nullptr && a->kind == ir::Attribute::Kind::kString && a->s.empty()) return nullptr;
  return a;
}

// A rule that makes all of `shapes` (one shape) split alike.
ShardingRule TieRule(const std::vector<std::vector<int64_t>>& shapes) {
  ShardingRule rule;
  const std::vector<int64_t>* first = nullptr;
  for (const auto& s : shapes) {
    if (first == nullptr && !s.empty()) first = &s;
  }
  for (const auto& s : shapes) rule.operands.emplace_back(s.size());
  if (first == nullptr) return rule;
  for (size_t d = 0; d < first->size(); ++d) {
    if ((*first)[d] <= 1) continue;
    const int f = rule.AddFactor((*first)[d]);
    for (size_t k = 0; k < shapes.size(); ++k) {
      if (shapes[k] == *first) rule.operands[k][d].push_back(f);
    }
  }
  return rule;
}

class Propagator {
 public:
  explicit Propagator(ir::Module& module) : module_(module) {}

  absl::StatusOr<bool> Run() {
    ir::Computation* entry = module_.entry();
    if (entry == nullptr) return false;
    Collect(entry);
    for (ir::Computation* c : computations_) {
      const std::vector<std::string>& manual = manual_in_[c];
      auto add = [&](const ir::Value* v) {
        if (int t = AddTensor(v); t >= 0) tensors_[t].manual = manual;
      };
      for (const auto& p : c->parameters()) add(p.get());
      for (const auto& inst : c->instructions()) {
        for (size_t r = 0; r < inst->num_results(); ++r) add(inst->result(r));
      }
    }
    EMBER_RETURN_IF_ERROR(Seed(*entry));
    for (ir::Computation* c : computations_) {
      const bool manual = !manual_in_[c].empty();
      for (const auto& inst : c->instructions()) EMBER_RETURN_IF_ERROR(AddEdges(*inst, manual));
    }
    if (!mesh_.has_value()) return false;  // nothing is split: nothing to propagate
    EMBER_RETURN_IF_ERROR(Propagate());
    Write(*entry);
    return true;
  }

 private:
  // The computations whose values get shardings: the entry and the bodies of its control flow
  // and calls, where only one op runs them (a body shared by two ops could need two shardings),
  // and the bodies of manual computations that leave mesh axes free (their values split along
  // those only: the body is partitioned over them).
  void Collect(ir::Computation* entry) {
    for (const auto& c : module_.computations()) {
      for (const auto& inst : c->instructions()) {
        for (const ir::Computation* r : inst->regions()) ++uses_[r];
        if (inst->callee() != nullptr) ++uses_[inst->callee()];
      }
    }
    computations_.push_back(entry);
    for (size_t i = 0; i < computations_.size(); ++i) {
      ir::Computation* c = computations_[i];
      const std::vector<std::string> manual = manual_in_[c];
      for (const auto& inst : c->instructions()) {
        for (ir::Computation* body : Bodies(*inst)) {
          if (uses_[body] == 1 && processed_.insert(body).second) {
            computations_.push_back(body);
            manual_in_[body] = manual;
          }
        }
        ir::Computation* body = inst->callee();
        if (!IsCustomCall(*inst, kManualTarget) || body == nullptr || uses_[body] != 1) continue;
        std::vector<std::string> inside = manual;
        if (const ir::Attribute* axes = inst->attribute("manual_axes");
            axes != nullptr && axes->kind == ir::Attribute::Kind::kList) {
          for (const ir::Attribute& a : axes->list) {
            if (a.kind == ir::Attribute::Kind::kString) inside.push_back(a.s);
          }
        }
        const std::optional<ir::Mesh> mesh = MeshOfManual(*inst);
        bool free = false;
        for (size_t a = 0; mesh.has_value() && a < mesh->axes.size(); ++a) {
          free |= mesh->sizes[a] > 1 &&
                  std::find(inside.begin(), inside.end(), mesh->axes[a]) == inside.end();
        }
        if (free && processed_.insert(body).second) {
          computations_.push_back(body);
          manual_in_[body] = std::move(inside);
          entered_manual_.insert(inst.get());
          entered_list_.push_back(inst.get());
        }
      }
    }
  }

  // The mesh a manual computation's shardings are over.
  std::optional<ir::Mesh> MeshOfManual(const ir::Instruction& inst) const {
    for (const char* name : {"in_shardings", "out_shardings"}) {
      const ir::Attribute* list = inst.attribute(name);
      if (list == nullptr || list->kind != ir::Attribute::Kind::kList) continue;
      for (const ir::Attribute& a : list->list) {
        if (a.kind != ir::Attribute::Kind::kSharding || a.sharding == nullptr ||
            a.sharding->kind != ir::TensorSharding::Kind::kSplit) {
          continue;
        }
        absl::StatusOr<ir::Mesh> mesh = ir::MeshOfSharding(module_, *a.sharding);
        if (mesh.ok() && !mesh->axes.empty()) return *mesh;
      }
    }
    return std::nullopt;
  }

  // The bodies propagation enters for `inst` (empty: the op is not control flow or a call).
  static std::vector<ir::Computation*> Bodies(const ir::Instruction& inst) {
    switch (inst.opcode()) {
      case ir::Opcode::kWhile:
      case ir::Opcode::kIf:
      case ir::Opcode::kCase:
        return inst.regions();
      case ir::Opcode::kCall:
        if (inst.callee() != nullptr) return {inst.callee()};
        return {};
      default:
        return {};
    }
  }

  bool Entered(const ir::Instruction& inst) const {
    const std::vector<ir::Computation*> bodies = Bodies(inst);
    return !bodies.empty() && std::all_of(bodies.begin(), bodies.end(), [&](ir::Computation* b) {
      return processed_.contains(b);
    });
  }

  int AddTensor(const ir::Value* v) {
    if (!v->type().is_tensor()) return -1;
    auto [it, inserted] = index_.emplace(v, static_cast<int>(tensors_.size()));
    if (inserted) tensors_.push_back(Fresh(v->type().dims()));
    return it->second;
  }

  int Tensor(const ir::Value* v) const {
    auto it = index_.find(v);
    return it == index_.end() ? -1 : it->second;
  }

  static TensorState Fresh(const std::vector<int64_t>& shape) {
    TensorState t;
    t.shape = shape;
    t.dims.resize(shape.size());
    return t;
  }

  static void CloseAll(TensorState& t) {
    for (DimState& d : t.dims) d.closed = true;
  }

  int64_t AxisSize(const ir::MeshAxisRef& a) const { return passes::AxisSize(*mesh_, a); }

  // The state a stated sharding gives a value of `shape`, after checking it against its mesh
  // and the program's mesh. `what` names the op or argument for errors.
  absl::StatusOr<TensorState> FromGiven(const ir::Attribute& attr,
                                        const std::vector<int64_t>& shape,
                                        const std::string& what) {
    auto fail = [&](const absl::Status& s) {
      return absl::Status(
          s.code(), absl::StrCat(what, ": the sharding ", attr.ToString(), ": ", s.message()));
    };
    if (attr.kind != ir::Attribute::Kind::kSharding || attr.sharding == nullptr) {
      return fail(absl::UnimplementedError("is not one tensor sharding"));
    }
    const ir::TensorSharding& s = *attr.sharding;
    TensorState t = Fresh(shape);
    if (s.kind != ir::TensorSharding::Kind::kSplit) {
      CloseAll(t);  // replicated, maximal or manual: nothing passes through
      return t;
    }
    absl::StatusOr<ir::Mesh> mesh = ir::MeshOfSharding(module_, s);
    if (!mesh.ok()) return fail(mesh.status());
    if (s.dims.size() != shape.size()) {
      return fail(absl::InvalidArgumentError(
          absl::StrCat("has rank ", s.dims.size(), " for an array of rank ", shape.size())));
    }
    std::vector<ir::MeshAxisRef> all = s.replicated_axes;
    all.insert(all.end(), s.unreduced_axes.begin(), s.unreduced_axes.end());
    for (const ir::DimensionSharding& d : s.dims)
      all.insert(all.end(), d.axes.begin(), d.axes.end());
    if (absl::Status axes = ir::CheckMeshAxes(*mesh, all); !axes.ok()) return fail(axes);
    if (absl::Status even = ir::ShardDims(shape, s, *mesh).status(); !even.ok()) return fail(even);
    if (mesh->axes.empty()) {
      // A mesh with no axes (JAX's empty_mesh, on scalars and replicated values) names no axis:
      // the sharding fits the program's mesh, whichever it is, and says only which dimensions
      // are closed.
      for (size_t d = 0; d < shape.size(); ++d) t.dims[d].closed = s.dims[d].closed;
      return t;
    }
    if (!mesh_.has_value()) {
      mesh_ = *mesh;
      mesh_name_ = s.mesh_name;
      inline_mesh_ = s.inline_mesh;
    } else if (*mesh_ != *mesh) {
      if (!ir::IsFullyReplicated(s, &*mesh)) {
        return fail(absl::UnimplementedError(absl::StrCat(
            "is over the mesh ", mesh->ToString(), " but the program's other shardings are over ",
            mesh_->ToString(), "; propagation over several meshes is not supported yet")));
      }
      CloseAll(t);
      return t;
    }
    for (size_t d = 0; d < shape.size(); ++d) {
      t.dims[d].axes = s.dims[d].axes;
      t.dims[d].closed = s.dims[d].closed;
      t.dims[d].priority = s.dims[d].priority.value_or(kNoPriority);
    }
    t.replicated = s.replicated_axes;
    t.unreduced = s.unreduced_axes;
    return t;
  }

  absl::Status SeedValue(const ir::Value* v, const ir::Attribute& attr, const std::string& what) {
    const int t = Tensor(v);
    if (t < 0) {
      if (attr.kind == ir::Attribute::Kind::kSharding && attr.sharding != nullptr &&
          attr.sharding->kind != ir::TensorSharding::Kind::kSplit) {
        return absl::OkStatus();  // a token or tuple stated replicated
      }
      return absl::UnimplementedError(absl::StrCat(what, ": a sharding ", attr.ToString(),
                                                   " for a value that is not an array"));
    }
    std::vector<std::string> manual = std::move(tensors_[t].manual);
    EMBER_ASSIGN_OR_RETURN(tensors_[t], FromGiven(attr, tensors_[t].shape, what));
    tensors_[t].manual = std::move(manual);  // a stated sharding inside a body stays in it
    return absl::OkStatus();
  }

  // The stated shardings: entry arguments and results, ops' sdy/mhlo shardings (sharding
  // constraints among them), manual computations' results.
  absl::Status Seed(ir::Computation& entry) {
    const auto& arg_attrs = entry.arg_attributes();
    for (size_t i = 0; i < entry.parameters().size() && i < arg_attrs.size(); ++i) {
      if (const ir::Attribute* a = GivenSharding(arg_attrs[i])) {
        EMBER_RETURN_IF_ERROR(SeedValue(entry.parameter(i), *a, absl::StrCat("argument ", i)));
      }
    }
    const ir::Instruction* ret = entry.return_instruction();
    const auto& result_attrs = entry.result_attributes();
    if (ret != nullptr) {
      for (size_t r = 0; r < ret->operands().size(); ++r) {
        const ir::Value* v = ret->operand(r);
        int pseudo = -1;
        if (v->type().is_tensor()) {
          pseudo = static_cast<int>(tensors_.size());
          tensors_.push_back(Fresh(v->type().dims()));
          const ir::Attribute* a =
              r < result_attrs.size() ? GivenSharding(result_attrs[r]) : nullptr;
          if (a != nullptr) {
            EMBER_ASSIGN_OR_RETURN(tensors_[pseudo],
                                   FromGiven(*a, v->type().dims(), absl::StrCat("result ", r)));
          }
          AddTie({Tensor(v), pseudo}, {v->type().dims(), v->type().dims()});
        }
        entry_results_.push_back(pseudo);
      }
    }
    for (ir::Computation* c : computations_) {
      for (const auto& inst : c->instructions()) {
        if (IsCustomCall(*inst, kManualTarget)) {
          EMBER_RETURN_IF_ERROR(SeedManual(*inst));
          continue;
        }
        const ir::Attribute* a = GivenSharding(inst->attributes());
        if (a == nullptr) continue;
        if (a->kind == ir::Attribute::Kind::kList && a->list.size() == inst->num_results()) {
          for (size_t r = 0; r < inst->num_results(); ++r) {
            EMBER_RETURN_IF_ERROR(SeedValue(inst->result(r), a->list[r],
                                            absl::StrCat(inst->Describe(), " result ", r)));
          }
          seeded_.insert(inst.get());
        } else if (inst->num_results() == 1) {
          EMBER_RETURN_IF_ERROR(SeedValue(inst->result(0), *a, inst->Describe()));
          seeded_.insert(inst.get());
        } else {
          return absl::UnimplementedError(absl::StrCat(inst->Describe(), ": the sharding ",
                                                       a->ToString(), " for ", inst->num_results(),
                                                       " results"));
        }
      }
    }
    return absl::OkStatus();
  }

  // A manual computation's results are as its out_shardings say; its operands are asked for its
  // in_shardings (a tensor of their own, tied to the operand). Its body is per-device and gets
  // no shardings here.
  absl::Status SeedManual(const ir::Instruction& inst) {
    for (const char* name : {"in_shardings", "out_shardings"}) {
      const bool in = name[0] == 'i';
      const size_t count = in ? inst.operands().size() : inst.num_results();
      const ir::Attribute* list = inst.attribute(name);
      if (list == nullptr || list->kind != ir::Attribute::Kind::kList ||
          list->list.size() != count) {
        return absl::InvalidArgumentError(
            absl::StrCat(inst.Describe(), ": needs ", count, " ", name));
      }
      const bool entered = entered_manual_.contains(&inst);
      const ir::Instruction* ret = entered ? inst.callee()->return_instruction() : nullptr;
      for (size_t k = 0; k < count; ++k) {
        const ir::Value* v = in ? inst.operand(k) : inst.result(k);
        const std::string what = absl::StrCat(inst.Describe(), " ", name, "[", k, "]");
        // The value inside the body: the parameter an operand becomes, or the value returned.
        const ir::Value* inner = nullptr;
        if (entered && in && k < inst.callee()->parameters().size()) {
          inner = inst.callee()->parameter(k);
        } else if (entered && !in && ret != nullptr && k < ret->operands().size()) {
          inner = ret->operand(k);
        }
        if (!in) {
          EMBER_RETURN_IF_ERROR(SeedValue(v, list->list[k], what));
          if (inner != nullptr) AddManualTie(Tensor(v), inner);
          continue;
        }
        if (!v->type().is_tensor()) {
          manual_operands_[&inst].push_back(-1);
          continue;
        }
        const int pseudo = static_cast<int>(tensors_.size());
        tensors_.push_back(Fresh(v->type().dims()));
        EMBER_ASSIGN_OR_RETURN(tensors_[pseudo], FromGiven(list->list[k], v->type().dims(), what));
        AddTie({Tensor(v), pseudo}, {v->type().dims(), v->type().dims()});
        manual_operands_[&inst].push_back(pseudo);
        if (inner != nullptr) AddManualTie(pseudo, inner);
      }
    }
    seeded_.insert(&inst);
    return absl::OkStatus();
  }

  // Ties a manual computation's operand or result (`outer`, split along the manual axes and
  // perhaps free ones) to the value its body sees (`inner`, a block along the manual axes): a
  // dimension the manual axes split m ways is a factor of m (outside only) times one of the
  // block, which the free axes split in both.
  void AddManualTie(int outer, const ir::Value* inner_value) {
    const int inner = Tensor(inner_value);
    if (outer < 0 || inner < 0) return;
    const std::vector<int64_t>& big = tensors_[outer].shape;
    const std::vector<int64_t>& block = tensors_[inner].shape;
    if (big.size() != block.size()) return;
    Edge e;
    e.rule.operands.resize(2);
    e.rule.operands[0].resize(big.size());
    e.rule.operands[1].resize(block.size());
    for (size_t d = 0; d < big.size(); ++d) {
      if (block[d] <= 0 || big[d] % block[d] != 0) return;
      if (big[d] / block[d] > 1) e.rule.operands[0][d].push_back(e.rule.AddFactor(big[d] / block[d]));
      if (block[d] > 1) {
        const int f = e.rule.AddFactor(block[d]);
        e.rule.operands[0][d].push_back(f);
        e.rule.operands[1][d].push_back(f);
      }
    }
    e.operands = {outer, inner};
    edges_.push_back(std::move(e));
  }

  static std::vector<int64_t> Shape(const ir::Value* v) {
    return v->type().is_tensor() ? v->type().dims() : std::vector<int64_t>{};
  }

  void AddTie(std::vector<int> tensors, const std::vector<std::vector<int64_t>>& shapes) {
    Edge e;
    e.rule = TieRule(shapes);
    e.operands = std::move(tensors);
    edges_.push_back(std::move(e));
  }

  // Ties value k of every list in `lists` together (a while's carries, an if's results, ...).
  void AddTies(const std::vector<std::vector<const ir::Value*>>& lists) {
    size_t n = std::numeric_limits<size_t>::max();
    for (const auto& l : lists) n = std::min(n, l.size());
    for (size_t k = 0; k < n; ++k) {
      std::vector<int> tensors;
      std::vector<std::vector<int64_t>> shapes;
      for (const auto& l : lists) {
        tensors.push_back(Tensor(l[k]));
        shapes.push_back(Shape(l[k]));
      }
      AddTie(std::move(tensors), shapes);
    }
  }

  static std::vector<const ir::Value*> Params(const ir::Computation& c) {
    std::vector<const ir::Value*> out;
    for (const auto& p : c.parameters()) out.push_back(p.get());
    return out;
  }
  static std::vector<const ir::Value*> Returned(const ir::Computation& c) {
    const ir::Instruction* ret = c.return_instruction();
    if (ret == nullptr) return {};
    return {ret->operands().begin(), ret->operands().end()};
  }
  static std::vector<const ir::Value*> Results(const ir::Instruction& inst) {
    std::vector<const ir::Value*> out;
    for (size_t r = 0; r < inst.num_results(); ++r) out.push_back(inst.result(r));
    return out;
  }
  static std::vector<const ir::Value*> Operands(const ir::Instruction& inst) {
    return {inst.operands().begin(), inst.operands().end()};
  }

  // `manual`: `inst` is in the body of a manual computation (its collectives run over manual
  // axes).
  absl::Status AddEdges(const ir::Instruction& inst, bool manual) {
    if (inst.opcode() == ir::Opcode::kReturn || IsCustomCall(inst, kManualTarget)) {
      return absl::OkStatus();
    }
    if (Entered(inst)) {
      const std::vector<ir::Computation*>& regions = inst.regions();
      switch (inst.opcode()) {
        case ir::Opcode::kWhile:
          if (regions.size() == 2) {
            AddTies({Operands(inst), Results(inst), Params(*regions[0]), Params(*regions[1]),
                     Returned(*regions[1])});
          }
          return absl::OkStatus();
        case ir::Opcode::kIf:
        case ir::Opcode::kCase:
          for (const ir::Computation* branch : regions) AddTies({Results(inst), Returned(*branch)});
          return absl::OkStatus();
        case ir::Opcode::kCall:
          AddTies({Operands(inst), Params(*inst.callee())});
          AddTies({Results(inst), Returned(*inst.callee())});
          return absl::OkStatus();
        default:
          break;
      }
    }
    std::optional<ShardingRule> rule;
    if (Bodies(inst).empty()) {
      EMBER_ASSIGN_OR_RETURN(rule, RuleOf(inst));
      if (!rule.has_value() && manual) {
        EMBER_ASSIGN_OR_RETURN(rule, ManualCollectiveRule(inst));
      }
    }
    if (!rule.has_value()) {
      // No rule: the results are replicated (unless stated) and the operands get nothing.
      if (!seeded_.contains(&inst)) {
        for (size_t r = 0; r < inst.num_results(); ++r) {
          if (int t = Tensor(inst.result(r)); t >= 0) CloseAll(tensors_[t]);
        }
      }
      return absl::OkStatus();
    }
    Edge e;
    e.rule = *std::move(rule);
    for (const ir::Value* v : inst.operands()) e.operands.push_back(Tensor(v));
    for (size_t r = 0; r < inst.num_results(); ++r) e.results.push_back(Tensor(inst.result(r)));
    edges_.push_back(std::move(e));
    return absl::OkStatus();
  }

  std::vector<ir::MeshAxisRef> Project(const std::vector<ir::MeshAxisRef>& axes,
                                       const std::vector<int>& factors, const ShardingRule& rule,
                                       int f) const {
    return ProjectOntoFactor(axes, factors, rule, f, *mesh_);
  }

  int64_t Product(const std::vector<ir::MeshAxisRef>& axes) const {
    int64_t n = 1;
    for (const ir::MeshAxisRef& a : axes) n *= AxisSize(a);
    return n;
  }

  const std::vector<std::vector<int>>& DimsOf(const Edge& e, size_t pos) const {
    return pos < e.operands.size() ? e.rule.operands[pos] : e.rule.results[pos - e.operands.size()];
  }

  // Applies one edge; returns whether a tensor changed.
  bool Apply(const Edge& e) {
    std::vector<int> all = e.operands;
    all.insert(all.end(), e.results.begin(), e.results.end());
    const size_t nf = e.rule.factor_sizes.size();
    std::vector<std::vector<ir::MeshAxisRef>> chosen(nf);
    std::vector<int64_t> chosen_priority(nf, kNoPriority);
    std::vector<ir::MeshAxisRef> taken;  // by earlier factors: one axis splits one factor
    for (size_t f = 0; f < nf; ++f) {
      int64_t best_priority = kNoPriority, best_product = 1;
      for (size_t pos = 0; pos < all.size(); ++pos) {
        if (all[pos] < 0) continue;
        const TensorState& t = tensors_[all[pos]];
        const std::vector<std::vector<int>>& dims = DimsOf(e, pos);
        for (size_t d = 0; d < dims.size() && d < t.dims.size(); ++d) {
          if (std::find(dims[d].begin(), dims[d].end(), static_cast<int>(f)) == dims[d].end()) {
            continue;
          }
          std::vector<ir::MeshAxisRef> axes =
              Project(t.dims[d].axes, dims[d], e.rule, static_cast<int>(f));
          size_t keep = 0;
          while (keep < axes.size() && !Overlaps(axes[keep], taken)) ++keep;
          axes.resize(keep);
          if (axes.empty()) continue;
          const int64_t product = Product(axes);
          const int64_t priority = t.dims[d].priority;
          // Better priority first, then the larger split; ties keep the earlier tensor.
          if (chosen[f].empty() || priority < best_priority ||
              (priority == best_priority && product > best_product)) {
            chosen[f] = std::move(axes);
            best_priority = priority;
            best_product = product;
          }
        }
      }
      chosen_priority[f] = best_priority;
      taken.insert(taken.end(), chosen[f].begin(), chosen[f].end());
    }
    bool changed = false;
    for (size_t pos = 0; pos < all.size(); ++pos) {
      if (all[pos] >= 0)
        changed |= Update(tensors_[all[pos]], DimsOf(e, pos), e.rule, chosen, chosen_priority);
    }
    // Results of a sum over split factors are partial over those axes: the split every operand
    // that has the factor carries (the common prefix of theirs).
    for (size_t f = 0; f < nf; ++f) {
      if (!e.rule.reduction[f] || chosen[f].empty()) continue;
      std::optional<std::vector<ir::MeshAxisRef>> common;
      for (size_t pos = 0; pos < e.operands.size(); ++pos) {
        const std::vector<std::vector<int>>& dims = e.rule.operands[pos];
        for (size_t d = 0; d < dims.size(); ++d) {
          if (std::find(dims[d].begin(), dims[d].end(), static_cast<int>(f)) == dims[d].end()) {
            continue;
          }
          std::vector<ir::MeshAxisRef> axes = e.operands[pos] < 0
                                                  ? std::vector<ir::MeshAxisRef>{}
                                                  : Project(tensors_[e.operands[pos]].dims[d].axes,
                                                            dims[d], e.rule, static_cast<int>(f));
          if (!common.has_value()) {
            common = axes;
          } else {
            size_t n = 0;
            while (n < common->size() && n < axes.size() && SameAxis((*common)[n], axes[n])) ++n;
            common->resize(n);
          }
        }
      }
      if (!common.has_value()) continue;
      for (int r : e.results) {
        if (r < 0) continue;
        TensorState& t = tensors_[r];
        for (const ir::MeshAxisRef& a : *common) {
          if (UsedIn(t, -1, a)) continue;
          t.unreduced.push_back(a);
          changed = true;
        }
      }
    }
    return changed;
  }

  // Whether `a` splits a dimension of `t` other than `dim`, or is replicated or unreduced there,
  // or manual where `t` lives.
  static bool UsedIn(const TensorState& t, int dim, const ir::MeshAxisRef& a) {
    if (Overlaps(a, t.replicated) || Overlaps(a, t.unreduced)) return true;
    if (std::find(t.manual.begin(), t.manual.end(), a.name) != t.manual.end()) return true;
    for (size_t d = 0; d < t.dims.size(); ++d) {
      if (static_cast<int>(d) != dim && Overlaps(a, t.dims[d].axes)) return true;
    }
    return false;
  }

  // Extends `t`'s open dimensions to the factors' chosen splits where that is a valid split of
  // the tensor (each axis once, dividing the dimension) and extends what it has.
  bool Update(TensorState& t, const std::vector<std::vector<int>>& dims, const ShardingRule& rule,
              const std::vector<std::vector<ir::MeshAxisRef>>& chosen,
              const std::vector<int64_t>& chosen_priority) {
    bool changed = false;
    for (size_t d = 0; d < dims.size() && d < t.dims.size(); ++d) {
      DimState& dim = t.dims[d];
      if (dim.closed || dims[d].empty()) continue;
      // The dimension's split: its factors' splits, major first, as long as each factor before
      // the next is split whole (otherwise the next one's axes would not be contiguous blocks).
      std::vector<ir::MeshAxisRef> desired;
      int64_t priority = kNoPriority;
      for (int f : dims[d]) {
        desired.insert(desired.end(), chosen[f].begin(), chosen[f].end());
        priority = std::min(priority, chosen_priority[f]);
        if (Product(chosen[f]) != rule.factor_sizes[f]) break;
      }
      std::vector<ir::MeshAxisRef> valid;
      int64_t product = 1;
      for (const ir::MeshAxisRef& a : desired) {
        const int64_t n = AxisSize(a);
        if (UsedIn(t, static_cast<int>(d), a) || Overlaps(a, valid) ||
            t.shape[d] % (product * n) != 0) {
          break;
        }
        valid.push_back(a);
        product *= n;
      }
      if (valid.size() > dim.axes.size() && IsPrefix(dim.axes, valid)) {
        dim.axes = std::move(valid);
        dim.priority = std::min(dim.priority, priority);
        changed = true;
      }
    }
    return changed;
  }

  absl::Status Propagate() {
    for (int round = 0; round < kMaxRounds; ++round) {
      bool changed = false;
      if (round % 2 == 0) {
        for (const Edge& e : edges_) changed |= Apply(e);
      } else {
        for (auto it = edges_.rbegin(); it != edges_.rend(); ++it) changed |= Apply(*it);
      }
      if (!changed) return absl::OkStatus();  // no edge changes anything: a fixed point
    }
    return absl::InternalError("sharding propagation did not reach a fixed point");
  }

  ir::TensorSharding ToSharding(int t) const {
    if (t < 0) return ir::TensorSharding::Replicated();
    const TensorState& state = tensors_[t];
    ir::TensorSharding s;
    s.mesh_name = mesh_name_;
    s.inline_mesh = inline_mesh_;
    for (const DimState& d : state.dims) {
      ir::DimensionSharding dim;
      dim.axes = d.axes;
      s.dims.push_back(std::move(dim));
    }
    s.replicated_axes = state.replicated;
    s.unreduced_axes = state.unreduced;
    return s;
  }

  void Write(ir::Computation& entry) {
    for (ir::Computation* c : computations_) {
      auto& arg_attrs = c->arg_attributes();
      if (arg_attrs.size() < c->parameters().size()) arg_attrs.resize(c->parameters().size());
      for (size_t i = 0; i < c->parameters().size(); ++i) {
        arg_attrs[i].Set(kShardingAttribute,
                         ir::Attribute::OfSharding(ToSharding(Tensor(c->parameter(i)))));
      }
      for (const auto& inst : c->instructions()) {
        if (inst->num_results() == 0) continue;
        std::vector<ir::Attribute> list;
        for (size_t r = 0; r < inst->num_results(); ++r) {
          list.push_back(ir::Attribute::OfSharding(ToSharding(Tensor(inst->result(r)))));
        }
        inst->mutable_attributes().Set(kShardingsAttribute, ir::Attribute::List(std::move(list)));
      }
    }
    // Manual computations whose bodies were entered: the free axes propagation added to their
    // operands' and results' blocks join their in_shardings and out_shardings.
    for (ir::Instruction* inst : entered_list_) {
      auto& attrs = inst->mutable_attributes();
      for (const char* name : {"in_shardings", "out_shardings"}) {
        const bool in = name[0] == 'i';
        const ir::Attribute* list = inst->attribute(name);
        if (list == nullptr || list->kind != ir::Attribute::Kind::kList) continue;
        std::vector<ir::Attribute> updated = list->list;
        bool changed = false;
        for (size_t k = 0; k < updated.size(); ++k) {
          int t = -1;
          if (in) {
            const std::vector<int>& pseudo = manual_operands_[inst];
            t = k < pseudo.size() ? pseudo[k] : -1;
          } else if (k < inst->num_results()) {
            t = Tensor(inst->result(k));
          }
          ir::Attribute& a = updated[k];
          if (t < 0 || a.kind != ir::Attribute::Kind::kSharding || a.sharding == nullptr ||
              a.sharding->kind != ir::TensorSharding::Kind::kSplit ||
              a.sharding->dims.size() != tensors_[t].dims.size()) {
            continue;
          }
          ir::TensorSharding s = *a.sharding;
          bool more = false;
          for (size_t d = 0; d < s.dims.size(); ++d) {
            const std::vector<ir::MeshAxisRef>& axes = tensors_[t].dims[d].axes;
            if (axes.size() > s.dims[d].axes.size() && IsPrefix(s.dims[d].axes, axes)) {
              s.dims[d].axes = axes;
              more = true;
            }
          }
          if (more) {
            a = ir::Attribute::OfSharding(std::move(s));
            changed = true;
          }
        }
        if (changed) attrs.Set(name, ir::Attribute::List(std::move(updated)));
      }
    }
    auto& result_attrs = entry.result_attributes();
    if (result_attrs.size() < entry_results_.size()) result_attrs.resize(entry_results_.size());
    for (size_t r = 0; r < entry_results_.size(); ++r) {
      result_attrs[r].Set(kShardingAttribute,
                          ir::Attribute::OfSharding(ToSharding(entry_results_[r])));
    }
  }

  ir::Module& module_;
  std::unordered_map<const ir::Computation*, int> uses_;
  std::vector<ir::Computation*> computations_;
  std::unordered_set<const ir::Computation*> processed_;
  // Per computation: the axes manual in it (in the bodies of manual computations).
  std::unordered_map<const ir::Computation*, std::vector<std::string>> manual_in_;
  // Manual computations whose bodies propagation entered, and their operands' tensors (the
  // in_shardings they are asked for).
  std::unordered_set<const ir::Instruction*> entered_manual_;
  std::vector<ir::Instruction*> entered_list_;
  std::unordered_map<const ir::Instruction*, std::vector<int>> manual_operands_;
  std::unordered_set<const ir::Instruction*> seeded_;
  std::unordered_map<const ir::Value*, int> index_;
  std::vector<TensorState> tensors_;
  std::vector<int> entry_results_;
  std::vector<Edge> edges_;
  std::optional<ir::Mesh> mesh_;
  std::string mesh_name_;
  std::optional<ir::Mesh> inline_mesh_;
};

class ShardingPropagationPass : public Pass {
 public:
  std::string name() const override { return "sharding-propagation"; }
  absl::StatusOr<bool> Run(ir::Module& module) override { return Propagator(module).Run(); }
};

}  // namespace

std::unique_ptr<Pass> CreateShardingPropagationPass() {
  return std::make_unique<ShardingPropagationPass>();
}

}  // namespace ember::passes
