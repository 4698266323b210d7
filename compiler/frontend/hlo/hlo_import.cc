// The walk from an HloModuleProto to an ir::Module. HLO values are tuples of arrays; the IR's
// are arrays, so every HLO instruction maps to the flat list of its leaves: `tuple` and
// `get-tuple-element` only regroup leaves, while loops carry their state leaf by leaf, and a
// parameter of a called computation is bound to the leaves of its argument. Computations are
// emitted where they are used: a fusion is inlined into its caller, a call targets a private
// function (one per computation), and reduce bodies, comparators, loop conditions and bodies and
// conditional branches become op regions (branches read their operand from the enclosing
// computation, as StableHLO's implicitly capturing if/case regions do).
#include "compiler/frontend/hlo/hlo_import.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/frontend/hlo/hlo_import_internal.h"
#include "compiler/frontend/import/sharding_import.h"
#include "compiler/frontend/text/mlir_text_parser.h"
#include "google/protobuf/arena.h"

namespace ember::frontend {
namespace {

namespace proto = ::ember::hloproto;
using hlo::FlattenShape;
using hlo::LeafCount;
using ir::Attribute;
using ir::Opcode;

using Leaves = std::vector<ir::Value*>;

// Calls nested deeper than this (computation calling computation ...) are rejected.
constexpr int kMaxCallDepth = 200;

// Newer XLA (TensorFlow 2.21's) writes an instruction's id as its computation's id in the high 32
// bits over the instruction's own id in the low 32, and its operand_ids as own ids only. Inside
// one computation the low 32 bits identify an instruction in both forms.
int64_t LocalId(int64_t id) { return id & 0xFFFFFFFF; }

// Ops whose HLO and StableHLO forms agree operand for operand with no attributes.
const absl::flat_hash_map<std::string, Opcode>& PlainOps() {
  static const auto* ops = new absl::flat_hash_map<std::string, Opcode>({
      {"abs", Opcode::kAbs},
      {"add", Opcode::kAdd},
      {"after-all", Opcode::kAfterAll},
      {"and", Opcode::kAnd},
      {"atan2", Opcode::kAtan2},
      {"bitcast-convert", Opcode::kBitcastConvert},
      {"cbrt", Opcode::kCbrt},
      {"ceil", Opcode::kCeil},
      {"clamp", Opcode::kClamp},
      {"complex", Opcode::kComplex},
      {"convert", Opcode::kConvert},
      {"cosine", Opcode::kCosine},
      {"count-leading-zeros", Opcode::kCountLeadingZeros},
      {"divide", Opcode::kDivide},
      {"dynamic-update-slice", Opcode::kDynamicUpdateSlice},
      {"exponential", Opcode::kExponential},
      {"exponential-minus-one", Opcode::kExponentialMinusOne},
      {"floor", Opcode::kFloor},
      {"imag", Opcode::kImag},
      {"is-finite", Opcode::kIsFinite},
      {"log", Opcode::kLog},
      {"log-plus-one", Opcode::kLogPlusOne},
      {"logistic", Opcode::kLogistic},
      {"maximum", Opcode::kMaximum},
      {"minimum", Opcode::kMinimum},
      {"multiply", Opcode::kMultiply},
      {"negate", Opcode::kNegate},
      {"not", Opcode::kNot},
      {"or", Opcode::kOr},
      {"partition-id", Opcode::kPartitionId},
      {"popcnt", Opcode::kPopcnt},
      {"power", Opcode::kPower},
      {"real", Opcode::kReal},
      {"remainder", Opcode::kRemainder},
      {"replica-id", Opcode::kReplicaId},
      {"reshape", Opcode::kReshape},
      {"round-nearest-afz", Opcode::kRoundNearestAfz},
      {"round-nearest-even", Opcode::kRoundNearestEven},
      {"rsqrt", Opcode::kRsqrt},
      {"select", Opcode::kSelect},
      {"shift-left", Opcode::kShiftLeft},
      {"shift-right-arithmetic", Opcode::kShiftRightArithmetic},
      {"shift-right-logical", Opcode::kShiftRightLogical},
      {"sign", Opcode::kSign},
      {"sine", Opcode::kSine},
      {"sqrt", Opcode::kSqrt},
      {"subtract", Opcode::kSubtract},
      {"tan", Opcode::kTan},
      {"tanh", Opcode::kTanh},
      {"xor", Opcode::kXor},
  });
  return *ops;
}

bool TakesResultAccuracy(Opcode op) {
  switch (op) {
    case Opcode::kCbrt:
    case Opcode::kCosine:
    case Opcode::kExponential:
    case Opcode::kExponentialMinusOne:
    case Opcode::kLog:
    case Opcode::kLogPlusOne:
    case Opcode::kLogistic:
    case Opcode::kRsqrt:
    case Opcode::kSine:
    case Opcode::kSqrt:
    case Opcode::kTan:
    case Opcode::kTanh:
      return true;
    default:
      return false;
  }
}

template <typename Repeated>
Attribute IntsOf(const Repeated& field) {
  return Attribute::Ints(std::vector<int64_t>(field.begin(), field.end()));
}

Attribute PrecisionConfig(const proto::HloInstructionProto& inst) {
  static const char* kNames[] = {"DEFAULT", "HIGH", "HIGHEST"};
  std::vector<Attribute> list;
  for (int p : inst.precision_config().operand_precision()) {
    list.push_back(Attribute::String(p >= 0 && p < 3 ? kNames[p] : "DEFAULT"));
  }
  while (list.size() < 2) list.push_back(Attribute::String("DEFAULT"));
  return Attribute::List(std::move(list));
}

// xla.PrecisionConfig.Algorithm -> StableHLO's dot algorithm dictionary.
absl::StatusOr<std::optional<Attribute>> DotAlgorithm(int algorithm) {
  struct Alg {
    const char* lhs;
    const char* rhs;
    const char* acc;
    int64_t components;
    int64_t ops;
  };
  std::optional<Alg> a;
  switch (algorithm) {
    case 0:
      return std::optional<Attribute>();
    case 3:
      a = Alg{"f16", "f16", "f16", 1, 1};
      break;
    case 4:
      a = Alg{"f16", "f16", "f32", 1, 1};
      break;
    case 5:
      a = Alg{"bf16", "bf16", "bf16", 1, 1};
      break;
    case 6:
      a = Alg{"bf16", "bf16", "f32", 1, 1};
      break;
    case 7:
      a = Alg{"bf16", "bf16", "f32", 1, 3};
      break;
    case 8:
      a = Alg{"bf16", "bf16", "f32", 1, 6};
      break;
    case 9:
      a = Alg{"tf32", "tf32", "f32", 1, 1};
      break;
    case 10:
      a = Alg{"tf32", "tf32", "f32", 1, 3};
      break;
    case 11:
      a = Alg{"f32", "f32", "f32", 1, 1};
      break;
    case 12:
      a = Alg{"f64", "f64", "f64", 1, 1};
      break;
    case 13:
      a = Alg{"bf16", "bf16", "f32", 1, 9};
      break;
    default:
      return absl::UnimplementedError(
          absl::StrCat("dot algorithm ", algorithm, " is not supported"));
  }
  return std::optional<Attribute>(
      Attribute::Dict({{"lhs_precision_type", Attribute::String(a->lhs)},
                       {"rhs_precision_type", Attribute::String(a->rhs)},
                       {"accumulation_type", Attribute::String(a->acc)},
                       {"lhs_component_count", Attribute::Int(a->components)},
                       {"rhs_component_count", Attribute::Int(a->components)},
                       {"num_primitive_operations", Attribute::Int(a->ops)},
                       {"allow_imprecise_accumulation", Attribute::Bool(false)}}));
}

class HloImporter {
 public:
  explicit HloImporter(const proto::HloModuleProto& module) : proto_(module) {}
  absl::StatusOr<std::unique_ptr<ir::Module>> Run();

 private:
  // One HLO value: its leaves and its (possibly tuple) shape.
  struct Node {
    Leaves leaves;
    const proto::ShapeProto* shape = nullptr;
  };
  // The state of emitting one HLO computation into an IR computation.
  struct Scope {
    const proto::HloComputationProto* computation = nullptr;
    ir::Computation* target = nullptr;
    absl::flat_hash_map<int64_t, Node> nodes;
  };

  absl::StatusOr<const proto::HloComputationProto*> Computation(int64_t id) const;
  // Emits `comp` into `target` with parameter i bound to params[i]; returns the root's leaves.
  absl::StatusOr<Leaves> Emit(const proto::HloComputationProto& comp, ir::Computation* target,
                              const std::vector<Leaves>& params);
  // A region for computation `id` whose parameters are the flattened HLO parameters.
  absl::StatusOr<ir::Computation*> Region(int64_t id, const std::string& hint);
  // A region with no parameters whose HLO parameter 0 reads `operand` (conditional branches).
  absl::StatusOr<ir::Computation*> BranchRegion(int64_t id, const Leaves& operand,
                                                const std::vector<ir::ValueType>& results);
  // The private function for computation `id` (calls, custom-call called_computations).
  absl::StatusOr<ir::Computation*> Function(int64_t id);
  // Parameter instructions of `comp` by number, checked to be 0..n-1.
  absl::StatusOr<std::vector<const proto::HloInstructionProto*>> Parameters(
      const proto::HloComputationProto& comp) const;

  absl::Status EmitInstruction(const proto::HloInstructionProto& inst, Scope& scope);
  absl::Status EmitOp(const proto::HloInstructionProto& inst, Scope& scope,
                      const std::vector<const Node*>& operands);

  // Adds `opcode` to the scope's computation with the instruction's location and discardable
  // attributes; its results become the instruction's leaves.
  ir::Instruction* Add(Scope& scope, const proto::HloInstructionProto& inst, Opcode opcode,
                       Leaves operands, std::vector<ir::ValueType> results, ir::AttributeMap attrs,
                       std::vector<ir::Computation*> regions = {});
  absl::StatusOr<int64_t> CalledId(const proto::HloInstructionProto& inst, int index) const;

  const proto::HloModuleProto& proto_;
  std::unique_ptr<ir::Module> module_;
  absl::flat_hash_map<int64_t, const proto::HloComputationProto*> computations_;
  // Instruction shardings as typed IR, converted (and checked) before anything is emitted.
  absl::flat_hash_map<const proto::HloInstructionProto*, Attribute> shardings_;
  absl::flat_hash_map<int64_t, ir::Computation*> functions_;
  absl::flat_hash_set<int64_t> active_;  // computations being emitted (cycle check)
  int depth_ = 0;
  // Computations are copied at each use (regions, inlined fusions); a budget on the instructions
  // emitted keeps a hostile module (fusions nesting fusions twice at every level) from exploding.
  int64_t emitted_ = 0;
  int64_t budget_ = 0;
};

std::string Where(const proto::HloInstructionProto& inst, const proto::HloComputationProto& comp) {
  return absl::StrCat("HLO instruction %", inst.name(), " (", inst.opcode(), ") in computation %",
                      comp.name());
}

absl::Status Prefix(const absl::Status& s, const std::string& where) {
  if (s.ok() || absl::StrContains(s.message(), "HLO instruction %")) return s;
  return absl::Status(s.code(), absl::StrCat(where, ": ", s.message()));
}

absl::StatusOr<const proto::HloComputationProto*> HloImporter::Computation(int64_t id) const {
  auto it = computations_.find(id);
  if (it == computations_.end()) {
    return absl::InvalidArgumentError(absl::StrCat("no computation with id ", id));
  }
  return it->second;
}

absl::StatusOr<int64_t> HloImporter::CalledId(const proto::HloInstructionProto& inst,
                                              int index) const {
  if (index >= inst.called_computation_ids_size()) {
    return absl::InvalidArgumentError(absl::StrCat("expects at least ", index + 1,
                                                   " called computations, has ",
                                                   inst.called_computation_ids_size()));
  }
  return inst.called_computation_ids(index);
}

absl::StatusOr<std::vector<const proto::HloInstructionProto*>> HloImporter::Parameters(
    const proto::HloComputationProto& comp) const {
  std::vector<const proto::HloInstructionProto*> params;
  for (const proto::HloInstructionProto& inst : comp.instructions()) {
    if (inst.opcode() != "parameter") continue;
    const int64_t n = inst.parameter_number();
    if (n < 0 || n >= comp.instructions_size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("computation %", comp.name(), ": parameter number ", n, " out of range"));
    }
    if (static_cast<int64_t>(params.size()) <= n) params.resize(n + 1, nullptr);
    if (params[n] != nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("computation %", comp.name(), ": parameter ", n, " is defined twice"));
    }
    params[n] = &inst;
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i] == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("computation %", comp.name(), ": parameter ", i, " is missing"));
    }
  }
  return params;
}

absl::StatusOr<std::unique_ptr<ir::Module>> HloImporter::Run() {
  module_ = std::make_unique<ir::Module>(proto_.name().empty() ? "module" : proto_.name());
  budget_ = int64_t{1} << 18;
  for (const proto::HloComputationProto& c : proto_.computations()) {
    budget_ += 16 * static_cast<int64_t>(c.instructions_size());
  }
  for (const proto::HloComputationProto& c : proto_.computations()) {
    if (!computations_.emplace(c.id(), &c).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("two computations have id ", c.id(), " (%", c.name(), ")"));
    }
    for (const proto::HloInstructionProto& inst : c.instructions()) {
      if (!inst.has_sharding()) continue;
      absl::StatusOr<Attribute> sharding = hlo::ShardingAttribute(inst.sharding());
      if (!sharding.ok()) {
        return absl::Status(sharding.status().code(),
                            absl::StrCat(inst.opcode(), " %", inst.name(), " in %", c.name(),
                                         ": sharding: ", sharding.status().message()));
      }
      shardings_.emplace(&inst, *std::move(sharding));
    }
  }
  // The entry: by id, else by name, else the last computation (callees come first).
  const proto::HloComputationProto* entry = nullptr;
  if (auto it = computations_.find(proto_.entry_computation_id()); it != computations_.end()) {
    entry = it->second;
  }
  if (entry == nullptr || (!proto_.entry_computation_name().empty() &&
                           entry->name() != proto_.entry_computation_name())) {
    for (const proto::HloComputationProto& c : proto_.computations()) {
      if (c.name() == proto_.entry_computation_name()) entry = &c;
    }
  }
  if (entry == nullptr && proto_.computations_size() > 0) {
    entry = &proto_.computations(proto_.computations_size() - 1);
  }
  if (entry == nullptr) return absl::InvalidArgumentError("the HLO module has no computations");

  EMBER_ASSIGN_OR_RETURN(ir::Computation * main, module_->AddFunction("main"));
  main->set_public(true);
  EMBER_ASSIGN_OR_RETURN(auto params, Parameters(*entry));
  std::vector<Leaves> bound;
  std::vector<int64_t> first_leaf;  // flat argument index of each parameter's first leaf
  for (const proto::HloInstructionProto* p : params) {
    absl::StatusOr<std::vector<ir::ValueType>> types = FlattenShape(p->shape());
    if (!types.ok()) return Prefix(types.status(), Where(*p, *entry));
    first_leaf.push_back(static_cast<int64_t>(main->parameters().size()));
    Leaves leaves;
    for (ir::ValueType& t : *types) leaves.push_back(main->AddParameter(std::move(t)));
    bound.push_back(std::move(leaves));
  }
  main->arg_attributes().assign(main->parameters().size(), ir::AttributeMap());
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i]->has_sharding() && params[i]->sharding().type() != 2 && bound[i].size() == 1) {
      EMBER_ASSIGN_OR_RETURN(Attribute sharding, hlo::ShardingAttribute(params[i]->sharding()));
      main->arg_attributes()[first_leaf[i]].Set("mhlo.sharding", std::move(sharding));
    }
  }
  EMBER_ASSIGN_OR_RETURN(Leaves results, Emit(*entry, main, bound));
  main->AddInstruction(Opcode::kReturn, results, {});
  main->result_attributes().assign(results.size(), ir::AttributeMap());

  // Donation: an aliased (or donor) parameter leaf may give its buffer to the program.
  const proto::ShapeProto* root_shape = nullptr;
  for (const proto::HloInstructionProto& inst : entry->instructions()) {
    if (LocalId(inst.id()) == LocalId(entry->root_id())) root_shape = &inst.shape();
  }
  // Flat leaf index of a shape index within `shape`.
  auto flat_index =
      [](const proto::ShapeProto* shape,
         const google::protobuf::RepeatedField<int64_t>& index) -> absl::StatusOr<int64_t> {
    int64_t offset = 0;
    for (int64_t i : index) {
      if (shape == nullptr || shape->element_type() != hlo::kPrimitiveTuple || i < 0 ||
          i >= shape->tuple_shapes_size()) {
        return absl::InvalidArgumentError("shape index out of range");
      }
      for (int64_t k = 0; k < i; ++k) offset += LeafCount(shape->tuple_shapes(k));
      shape = &shape->tuple_shapes(i);
    }
    if (shape->element_type() == hlo::kPrimitiveTuple) {
      return absl::InvalidArgumentError("shape index names a tuple, not an array");
    }
    return offset;
  };
  auto param_leaf =
      [&](int64_t number,
          const google::protobuf::RepeatedField<int64_t>& index) -> absl::StatusOr<int64_t> {
    if (number < 0 || number >= static_cast<int64_t>(params.size())) {
      return absl::InvalidArgumentError(absl::StrCat("parameter ", number, " does not exist"));
    }
    EMBER_ASSIGN_OR_RETURN(int64_t k, flat_index(&params[number]->shape(), index));
    return first_leaf[number] + k;
  };
  for (const auto& e : proto_.input_output_alias().entries()) {
    absl::StatusOr<int64_t> arg = param_leaf(e.parameter_number(), e.parameter_shape_index());
    absl::StatusOr<int64_t> out = flat_index(root_shape, e.output_shape_index());
    if (!arg.ok() || !out.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input_output_alias entry for parameter ", e.parameter_number(), ": ",
                       (!arg.ok() ? arg.status() : out.status()).message()));
    }
    main->arg_attributes()[*arg].Set("tf.aliasing_output", Attribute::Int(*out));
  }
  for (const auto& e : proto_.buffer_donor().entries()) {
    absl::StatusOr<int64_t> arg = param_leaf(e.parameter_number(), e.parameter_shape_index());
    if (!arg.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "buffer_donor entry for parameter ", e.parameter_number(), ": ", arg.status().message()));
    }
    main->arg_attributes()[*arg].Set("jax.buffer_donor", Attribute::Bool(true));
  }
  if (proto_.has_spmd_output_sharding() && results.size() == 1 &&
      proto_.spmd_output_sharding().type() != 2) {
    EMBER_ASSIGN_OR_RETURN(Attribute sharding, hlo::ShardingAttribute(proto_.spmd_output_sharding()));
    main->result_attributes()[0].Set("mhlo.sharding", std::move(sharding));
  }
  if (proto_.has_device_assignment()) {
    module_->attributes().Set("mhlo.num_replicas",
                              Attribute::Int(proto_.device_assignment().replica_count()));
    module_->attributes().Set("mhlo.num_partitions",
                              Attribute::Int(proto_.device_assignment().computation_count()));
  }
  return std::move(module_);
}

absl::StatusOr<Leaves> HloImporter::Emit(const proto::HloComputationProto& comp,
                                         ir::Computation* target,
                                         const std::vector<Leaves>& params) {
  if (active_.contains(comp.id())) {
    return absl::InvalidArgumentError(absl::StrCat("computation %", comp.name(), " calls itself"));
  }
  if (depth_ >= kMaxCallDepth) {
    return absl::InvalidArgumentError("computations are nested too deeply");
  }
  active_.insert(comp.id());
  ++depth_;
  Scope scope;
  scope.computation = &comp;
  scope.target = target;
  absl::Status status = absl::OkStatus();
  for (const proto::HloInstructionProto& inst : comp.instructions()) {
    if (inst.opcode() == "parameter") {
      const int64_t n = inst.parameter_number();
      if (n < 0 || n >= static_cast<int64_t>(params.size())) {
        status =
            absl::InvalidArgumentError(absl::StrCat(Where(inst, comp), ": parameter number ", n,
                                                    " but the computation is "
                                                    "given ",
                                                    params.size(), " arguments"));
        break;
      }
      const int64_t want = LeafCount(inst.shape());
      if (want != static_cast<int64_t>(params[n].size())) {
        status = absl::InvalidArgumentError(
            absl::StrCat(Where(inst, comp), ": parameter shape ", hlo::ShapeToString(inst.shape()),
                         " has ", want, " leaves but the argument has ", params[n].size()));
        break;
      }
      scope.nodes[LocalId(inst.id())] = Node{params[n], &inst.shape()};
      continue;
    }
    if (++emitted_ > budget_) {
      status = absl::InvalidArgumentError(absl::StrCat("the module expands to more than ", budget_,
                                                       " instructions (computations are copied "
                                                       "at each use)"));
      break;
    }
    status = EmitInstruction(inst, scope);
    if (!status.ok()) {
      status = Prefix(status, Where(inst, comp));
      break;
    }
  }
  --depth_;
  active_.erase(comp.id());
  EMBER_RETURN_IF_ERROR(status);
  auto root = scope.nodes.find(LocalId(comp.root_id()));
  if (root == scope.nodes.end()) {
    return absl::InvalidArgumentError(absl::StrCat("computation %", comp.name(), ": root id ",
                                                   comp.root_id(),
                                                   " is not one of its instructions"));
  }
  return root->second.leaves;
}

absl::StatusOr<ir::Computation*> HloImporter::Region(int64_t id, const std::string& hint) {
  EMBER_ASSIGN_OR_RETURN(const proto::HloComputationProto* comp, Computation(id));
  EMBER_ASSIGN_OR_RETURN(auto params, Parameters(*comp));
  ir::Computation* region = module_->AddRegion(hint);
  std::vector<Leaves> bound;
  for (const proto::HloInstructionProto* p : params) {
    absl::StatusOr<std::vector<ir::ValueType>> types = FlattenShape(p->shape());
    if (!types.ok()) return Prefix(types.status(), Where(*p, *comp));
    Leaves leaves;
    for (ir::ValueType& t : *types) leaves.push_back(region->AddParameter(std::move(t)));
    bound.push_back(std::move(leaves));
  }
  EMBER_ASSIGN_OR_RETURN(Leaves results, Emit(*comp, region, bound));
  region->AddInstruction(Opcode::kReturn, std::move(results), {});
  return region;
}

absl::StatusOr<ir::Computation*> HloImporter::BranchRegion(
    int64_t id, const Leaves& operand, const std::vector<ir::ValueType>& results) {
  EMBER_ASSIGN_OR_RETURN(const proto::HloComputationProto* comp, Computation(id));
  ir::Computation* region = module_->AddRegion("branch");
  EMBER_ASSIGN_OR_RETURN(Leaves out, Emit(*comp, region, {operand}));
  if (out.size() != results.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "branch %", comp->name(), " returns ", out.size(), " values, expected ", results.size()));
  }
  region->AddInstruction(Opcode::kReturn, std::move(out), {});
  return region;
}

absl::StatusOr<ir::Computation*> HloImporter::Function(int64_t id) {
  if (auto it = functions_.find(id); it != functions_.end()) return it->second;
  EMBER_ASSIGN_OR_RETURN(const proto::HloComputationProto* comp, Computation(id));
  std::string name = comp->name();
  if (module_->FindFunction(name) != nullptr) name = absl::StrCat(name, ".", id);
  EMBER_ASSIGN_OR_RETURN(ir::Computation * f, module_->AddFunction(name));
  f->set_public(false);
  functions_[id] = f;
  EMBER_ASSIGN_OR_RETURN(auto params, Parameters(*comp));
  std::vector<Leaves> bound;
  for (const proto::HloInstructionProto* p : params) {
    absl::StatusOr<std::vector<ir::ValueType>> types = FlattenShape(p->shape());
    if (!types.ok()) return Prefix(types.status(), Where(*p, *comp));
    Leaves leaves;
    for (ir::ValueType& t : *types) leaves.push_back(f->AddParameter(std::move(t)));
    bound.push_back(std::move(leaves));
  }
  f->arg_attributes().assign(f->parameters().size(), ir::AttributeMap());
  EMBER_ASSIGN_OR_RETURN(Leaves results, Emit(*comp, f, bound));
  f->result_attributes().assign(results.size(), ir::AttributeMap());
  f->AddInstruction(Opcode::kReturn, std::move(results), {});
  return f;
}

ir::Instruction* HloImporter::Add(Scope& scope, const proto::HloInstructionProto& inst,
                                  Opcode opcode, Leaves operands,
                                  std::vector<ir::ValueType> results, ir::AttributeMap attrs,
                                  std::vector<ir::Computation*> regions) {
  if (inst.has_frontend_attributes() && !inst.frontend_attributes().map().empty()) {
    std::vector<std::pair<std::string, Attribute>> entries;
    for (const auto& [k, v] : inst.frontend_attributes().map()) {
      entries.emplace_back(k, Attribute::String(v));
    }
    std::sort(entries.begin(), entries.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    attrs.Set("mhlo.frontend_attributes", Attribute::Dict(std::move(entries)));
  }
  if (auto sharding = shardings_.find(&inst); sharding != shardings_.end()) {
    attrs.Set("mhlo.sharding", sharding->second);
  }
  ir::Location loc = hlo::MetadataLocation(inst.metadata(), proto_.stack_frame_index());
  if (loc.name.empty()) loc.name = inst.name();
  ir::Instruction* out =
      scope.target->AddInstruction(opcode, std::move(operands), std::move(results),
                                   std::move(attrs), std::move(regions), std::move(loc));
  Node node;
  node.shape = &inst.shape();
  for (size_t i = 0; i < out->num_results(); ++i) node.leaves.push_back(out->result(i));
  scope.nodes[LocalId(inst.id())] = std::move(node);
  return out;
}

absl::Status HloImporter::EmitInstruction(const proto::HloInstructionProto& inst, Scope& scope) {
  if (scope.nodes.contains(LocalId(inst.id()))) {
    return absl::InvalidArgumentError(absl::StrCat("instruction id ", inst.id(), " is reused"));
  }
  std::vector<const Node*> operands;
  for (int i = 0; i < inst.operand_ids_size(); ++i) {
    auto it = scope.nodes.find(LocalId(inst.operand_ids(i)));
    if (it == scope.nodes.end()) {
      return absl::InvalidArgumentError(absl::StrCat("operand ", i, " (id ", inst.operand_ids(i),
                                                     ") is not defined before its use"));
    }
    operands.push_back(&it->second);
  }
  return EmitOp(inst, scope, operands);
}

absl::Status HloImporter::EmitOp(const proto::HloInstructionProto& inst, Scope& scope,
                                 const std::vector<const Node*>& operands) {
  const std::string& op = inst.opcode();
  EMBER_ASSIGN_OR_RETURN(std::vector<ir::ValueType> results, FlattenShape(inst.shape()));
  auto need_operands = [&](size_t n) -> absl::Status {
    if (operands.size() != n) {
      return absl::InvalidArgumentError(
          absl::StrCat("expects ", n, " operands, has ", operands.size()));
    }
    return absl::OkStatus();
  };
  // All operand leaves in order (tuple operands contribute each of their leaves).
  auto flat = [&](size_t from = 0, size_t to = SIZE_MAX) {
    Leaves out;
    for (size_t i = from; i < operands.size() && i < to; ++i) {
      out.insert(out.end(), operands[i]->leaves.begin(), operands[i]->leaves.end());
    }
    return out;
  };
  auto array_operand = [&](size_t i) -> absl::StatusOr<ir::Value*> {
    if (i >= operands.size() || operands[i]->leaves.size() != 1 ||
        operands[i]->shape->element_type() == hlo::kPrimitiveTuple) {
      return absl::InvalidArgumentError(absl::StrCat("operand ", i, " must be an array"));
    }
    return operands[i]->leaves[0];
  };
  auto alias = [&](size_t i) -> absl::Status {
    if (operands.empty()) return absl::InvalidArgumentError("expects an operand");
    if (operands[i]->leaves.size() != results.size()) {
      return absl::InvalidArgumentError("operand and result shapes differ");
    }
    for (size_t k = 0; k < results.size(); ++k) {
      if (operands[i]->leaves[k]->type() != results[k]) {
        return absl::InvalidArgumentError(
            absl::StrCat("operand type ", operands[i]->leaves[k]->type().ToString(),
                         " differs from result ", results[k].ToString()));
      }
    }
    scope.nodes[LocalId(inst.id())] = Node{operands[i]->leaves, &inst.shape()};
    return absl::OkStatus();
  };
  auto dim0 = [&](const char* what) -> absl::StatusOr<int64_t> {
    if (inst.dimensions_size() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("expects one dimension (", what, "), has ", inst.dimensions_size()));
    }
    return inst.dimensions(0);
  };
  ir::AttributeMap attrs;

  if (auto it = PlainOps().find(op); it != PlainOps().end()) {
    for (size_t i = 0; i < operands.size(); ++i) EMBER_RETURN_IF_ERROR(array_operand(i).status());
    if (TakesResultAccuracy(it->second) && inst.has_result_accuracy()) {
      const proto::ResultAccuracy& ra = inst.result_accuracy();
      const bool highest = ra.specs_case() == proto::ResultAccuracy::kMode && ra.mode() == 1;
      if (highest || ra.specs_case() == proto::ResultAccuracy::kTolerance) {
        attrs.Set(
            "result_accuracy",
            Attribute::Dict({{"atol", Attribute::Float(ra.tolerance().atol())},
                             {"rtol", Attribute::Float(ra.tolerance().rtol())},
                             {"ulps", Attribute::Int(ra.tolerance().ulps())},
                             {"mode", Attribute::String(highest ? "HIGHEST" : "TOLERANCE")}}));
      }
    }
    Add(scope, inst, it->second, flat(), std::move(results), std::move(attrs));
    return absl::OkStatus();
  }
  if (op == "tuple") {
    scope.nodes[LocalId(inst.id())] = Node{flat(), &inst.shape()};
    if (scope.nodes[LocalId(inst.id())].leaves.size() != results.size()) {
      return absl::InvalidArgumentError("tuple operands do not match its shape");
    }
    return absl::OkStatus();
  }
  if (op == "get-tuple-element") {
    EMBER_RETURN_IF_ERROR(need_operands(1));
    const proto::ShapeProto& shape = *operands[0]->shape;
    const int64_t index = inst.tuple_index();
    if (shape.element_type() != hlo::kPrimitiveTuple || index < 0 ||
        index >= shape.tuple_shapes_size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tuple_index ", index, " is out of range for ", hlo::ShapeToString(shape)));
    }
    int64_t offset = 0;
    for (int64_t k = 0; k < index; ++k) offset += LeafCount(shape.tuple_shapes(k));
    const int64_t n = LeafCount(shape.tuple_shapes(index));
    if (offset + n > static_cast<int64_t>(operands[0]->leaves.size())) {
      return absl::InvalidArgumentError("tuple operand has fewer leaves than its shape");
    }
    Leaves leaves(operands[0]->leaves.begin() + offset, operands[0]->leaves.begin() + offset + n);
    scope.nodes[LocalId(inst.id())] = Node{std::move(leaves), &shape.tuple_shapes(index)};
    return absl::OkStatus();
  }
  if (op == "copy" || op == "domain" || op == "add-dependency") return alias(0);
  if (op == "bitcast") {
    // Only the layout-free form (a reshape of a row-major array) has StableHLO meaning.
    EMBER_RETURN_IF_ERROR(need_operands(1));
    EMBER_ASSIGN_OR_RETURN(ir::Value * x, array_operand(0));
    auto row_major = [](const proto::ShapeProto& s) {
      if (!s.has_layout() || s.layout().minor_to_major_size() == 0) return true;
      for (int i = 0; i < s.layout().minor_to_major_size(); ++i) {
        if (s.layout().minor_to_major(i) != s.layout().minor_to_major_size() - 1 - i) return false;
      }
      return true;
    };
    if (results.size() != 1 || !results[0].is_tensor() || !x->type().is_tensor() ||
        results[0].element_type() != x->type().element_type() || !row_major(inst.shape()) ||
        !row_major(*operands[0]->shape)) {
      return absl::UnimplementedError("a bitcast that changes layout or type is not supported");
    }
    Add(scope, inst, Opcode::kReshape, {x}, std::move(results), {});
    return absl::OkStatus();
  }
  if (op == "constant") {
    absl::StatusOr<std::vector<ir::Literal>> values = hlo::ConvertLiteral(inst.literal());
    if (!values.ok()) return values.status();
    if (values->size() != results.size()) {
      return absl::InvalidArgumentError("literal does not match the instruction's shape");
    }
    Leaves leaves;
    for (size_t i = 0; i < values->size(); ++i) {
      if ((*values)[i].shape().dims() != results[i].dims() ||
          (*values)[i].element_type() != results[i].element_type()) {
        return absl::InvalidArgumentError(
            absl::StrCat("literal shape ", (*values)[i].shape().ToString(),
                         " differs from the instruction's ", results[i].ToString()));
      }
      ir::AttributeMap a;
      a.Set("value", Attribute::OfLiteral(std::move((*values)[i])));
      leaves.push_back(
          Add(scope, inst, Opcode::kConstant, {}, {results[i]}, std::move(a))->result());
    }
    scope.nodes[LocalId(inst.id())] = Node{std::move(leaves), &inst.shape()};
    return absl::OkStatus();
  }
  if (op == "compare") {
    attrs.Set("comparison_direction", Attribute::String(inst.comparison_direction()));
    if (!inst.comparison_type().empty() && inst.comparison_type() != "NOTYPE") {
      attrs.Set("compare_type", Attribute::String(inst.comparison_type()));
    }
    Add(scope, inst, Opcode::kCompare, flat(), std::move(results), std::move(attrs));
    return absl::OkStatus();
  }
  if (op == "broadcast") {
    attrs.Set("broadcast_dimensions", IntsOf(inst.dimensions()));
    Add(scope, inst, Opcode::kBroadcastInDim, flat(), std::move(results), std::move(attrs));
    return absl::OkStatus();
  }
  if (op == "transpose") {
    attrs.Set("permutation", IntsOf(inst.dimensions()));
    Add(scope, inst, Opcode::kTranspose, flat(), std::move(results), std::move(attrs));
    return absl::OkStatus();
  }
  if (op == "reverse") {
    attrs.Set("dimensions", IntsOf(inst.dimensions()));
    Add(scope, inst, Opcode::kReverse, flat(), std::move(results), std::move(attrs));
    return absl::OkStatus();
  }
  if (op == "slice") {
    std::vector<int64_t> start, limit, stride;
    for (const auto& d : inst.slice_dimensions()) {
      start.push_back(d.start());
      limit.push_back(d.limit());
      stride.push_back(d.stride());
    }
    attrs.Set("start_indices", Attribute::Ints(start));
    attrs.Set("limit_indices", Attribute::Ints(limit));
    attrs.Set("strides", Attribute::Ints(stride));
    Add(scope, inst, Opcode::kSlice, flat(), std::move(results), std::move(attrs));
    return absl::OkStatus();
  }
  if (op == "dynamic-slice") {
    for (size_t i = 1; i < operands.size(); ++i) {
      EMBER_ASSIGN_OR_RETURN(ir::Value * idx, array_operand(i));
      if (!idx->type().is_tensor() || !idx->type().dims().empty()) {
        return absl::UnimplementedError(
            "start indices must be scalars (the old vector form is "
            "not supported)");
      }
    }
    attrs.Set("slice_sizes", IntsOf(inst.dynamic_slice_sizes()));
    Add(scope, inst, Opcode::kDynamicSlice, flat(), std::move(results), std::move(attrs));
    return absl::OkStatus();
  }
  if (op == "concatenate") {
    EMBER_ASSIGN_OR_RETURN(int64_t d, dim0("the concatenation dimension"));
    attrs.Set("dimension", Attribute::Int(d));
    Add(scope, inst, Opcode::kConcatenate, flat(), std::move(results), std::move(attrs));
    return absl::OkStatus();
  }
  if (op == "iota") {
    EMBER_ASSIGN_OR_RETURN(int64_t d, dim0("the iota dimension"));
    attrs.Set("iota_dimension", Attribute::Int(d));
    Add(scope, inst, Opcode::kIota, {}, std::move(results), std::move(attrs));
    return absl::OkStatus();
  }
  if (op == "pad") {
    std::vector<int64_t> lo, hi, interior;
    for (const auto& d : inst.padding_config().dimensions()) {
      lo.push_back(d.edge_padding_low());
      hi.push_back(d.edge_padding_high());
      interior.push_back(d.interior_padding());
    }
    attrs.Set("edge_padding_low", Attribute::Ints(lo));
    attrs.Set("edge_padding_high", Attribute::Ints(hi));
    attrs.Set("interior_padding", Attribute::Ints(interior));
    Add(scope, inst, Opcode::kPad, flat(), std::move(results), std::move(attrs));
    return absl::OkStatus();
  }
  if (op == "reduce-precision") {
    attrs.Set("exponent_bits", Attribute::Int(inst.exponent_bits()));
    attrs.Set("mantissa_bits", Attribute::Int(inst.mantissa_bits()));
    Add(scope, inst, Opcode::kReducePrecision, flat(), std::move(results), std::move(attrs));
    return absl::OkStatus();
  }
  if (op == "set-dimension-size") {
    EMBER_ASSIGN_OR_RETURN(int64_t d, dim0("the dimension"));
    attrs.Set("dimension", Attribute::Int(d));
    Add(scope, inst, Opcode::kSetDimensionSize, flat(), std::move(results), std::move(attrs));
    return absl::OkStatus();
  }
  if (op == "get-dimension-size") {
    EMBER_ASSIGN_OR_RETURN(int64_t d, dim0("the dimension"));
    attrs.Set("dimension", Attribute::Int(d));
    Add(scope, inst, Opcode::kGetDimensionSize, flat(), std::move(results), std::move(attrs));
    return absl::OkStatus();
  }
  if (op == "reduce" || op == "map" || op == "all-reduce" || op == "reduce-scatter") {
    EMBER_ASSIGN_OR_RETURN(int64_t id, CalledId(inst, 0));
    EMBER_ASSIGN_OR_RETURN(ir::Computation * body, Region(id, op == "map" ? "map" : "reduce"));
    Opcode opcode = Opcode::kReduce;
    if (op == "reduce" || op == "map") {
      attrs.Set("dimensions", IntsOf(inst.dimensions()));
      if (op == "map") opcode = Opcode::kMap;
    } else {
      if (op == "reduce-scatter") {
        EMBER_ASSIGN_OR_RETURN(int64_t d, dim0("the scatter dimension"));
        attrs.Set("scatter_dimension", Attribute::Int(d));
      }
      EMBER_ASSIGN_OR_RETURN(ir::Literal groups, hlo::ReplicaGroups(inst));
      attrs.Set("replica_groups", Attribute::OfLiteral(std::move(groups)));
      attrs.Set("channel_id", Attribute::Int(std::max<int64_t>(inst.channel_id(), 0)));
      attrs.Set("use_global_device_ids", Attribute::Bool(inst.use_global_device_ids()));
      opcode = op == "all-reduce" ? Opcode::kAllReduce : Opcode::kReduceScatter;
    }
    Add(scope, inst, opcode, flat(), std::move(results), std::move(attrs), {body});
    return absl::OkStatus();
  }
  if (op == "reduce-window" || op == "select-and-scatter") {
    std::vector<int64_t> size, stride, base, wdil, pad;
    for (const auto& d : inst.window().dimensions()) {
      if (d.window_reversal()) return absl::UnimplementedError("window reversal is not supported");
      size.push_back(d.size());
      stride.push_back(d.stride());
      base.push_back(d.base_dilation() == 0 ? 1 : d.base_dilation());
      wdil.push_back(d.window_dilation() == 0 ? 1 : d.window_dilation());
      pad.push_back(d.padding_low());
      pad.push_back(d.padding_high());
    }
    attrs.Set("window_dimensions", Attribute::Ints(size));
    attrs.Set("window_strides", Attribute::Ints(stride));
    if (op == "reduce-window") {
      attrs.Set("base_dilations", Attribute::Ints(base));
      attrs.Set("window_dilations", Attribute::Ints(wdil));
      attrs.Set("padding", Attribute::Ints(pad));
      EMBER_ASSIGN_OR_RETURN(int64_t id, CalledId(inst, 0));
      EMBER_ASSIGN_OR_RETURN(ir::Computation * body, Region(id, "reduce_window"));
      Add(scope, inst, Opcode::kReduceWindow, flat(), std::move(results), std::move(attrs), {body});
      return absl::OkStatus();
    }
    for (size_t i = 0; i < base.size(); ++i) {
      if (base[i] != 1 || wdil[i] != 1) {
        return absl::UnimplementedError("select-and-scatter with dilation is not supported");
      }
    }
    attrs.Set("padding", Attribute::Ints(pad));
    EMBER_ASSIGN_OR_RETURN(int64_t select_id, CalledId(inst, 0));
    EMBER_ASSIGN_OR_RETURN(int64_t scatter_id, CalledId(inst, 1));
    EMBER_ASSIGN_OR_RETURN(ir::Computation * select, Region(select_id, "select"));
    EMBER_ASSIGN_OR_RETURN(ir::Computation * scatter, Region(scatter_id, "scatter"));
    Add(scope, inst, Opcode::kSelectAndScatter, flat(), std::move(results), std::move(attrs),
        {select, scatter});
    return absl::OkStatus();
  }
  if (op == "dot") {
    const proto::DotDimensionNumbers& dn = inst.dot_dimension_numbers();
    attrs.Set("lhs_batching_dimensions", IntsOf(dn.lhs_batch_dimensions()));
    attrs.Set("rhs_batching_dimensions", IntsOf(dn.rhs_batch_dimensions()));
    attrs.Set("lhs_contracting_dimensions", IntsOf(dn.lhs_contracting_dimensions()));
    attrs.Set("rhs_contracting_dimensions", IntsOf(dn.rhs_contracting_dimensions()));
    attrs.Set("precision_config", PrecisionConfig(inst));
    EMBER_ASSIGN_OR_RETURN(std::optional<Attribute> alg,
                           DotAlgorithm(inst.precision_config().algorithm()));
    if (alg.has_value()) attrs.Set("algorithm", *std::move(alg));
    if (operands.size() != 2) {
      return absl::UnimplementedError("dot with sparsity metadata operands is not supported");
    }
    Add(scope, inst, Opcode::kDotGeneral, flat(), std::move(results), std::move(attrs));
    return absl::OkStatus();
  }
  if (op == "convolution") {
    std::vector<int64_t> stride, pad, lhs_dil, rhs_dil;
    std::vector<bool> reversal;
    for (const auto& d : inst.window().dimensions()) {
      stride.push_back(d.stride() == 0 ? 1 : d.stride());
      pad.push_back(d.padding_low());
      pad.push_back(d.padding_high());
      lhs_dil.push_back(d.base_dilation() == 0 ? 1 : d.base_dilation());
      rhs_dil.push_back(d.window_dilation() == 0 ? 1 : d.window_dilation());
      reversal.push_back(d.window_reversal());
    }
    const proto::ConvolutionDimensionNumbers& dn = inst.convolution_dimension_numbers();
    attrs.Set("window_strides", Attribute::Ints(stride));
    attrs.Set("padding", Attribute::Ints(pad));
    attrs.Set("lhs_dilation", Attribute::Ints(lhs_dil));
    attrs.Set("rhs_dilation", Attribute::Ints(rhs_dil));
    attrs.Set("window_reversal", Attribute::Bools(reversal));
    attrs.Set("input_batch_dimension", Attribute::Int(dn.input_batch_dimension()));
    attrs.Set("input_feature_dimension", Attribute::Int(dn.input_feature_dimension()));
    attrs.Set("input_spatial_dimensions", IntsOf(dn.input_spatial_dimensions()));
    attrs.Set("kernel_input_feature_dimension",
              Attribute::Int(dn.kernel_input_feature_dimension()));
    attrs.Set("kernel_output_feature_dimension",
              Attribute::Int(dn.kernel_output_feature_dimension()));
    attrs.Set("kernel_spatial_dimensions", IntsOf(dn.kernel_spatial_dimensions()));
    attrs.Set("output_batch_dimension", Attribute::Int(dn.output_batch_dimension()));
    attrs.Set("output_feature_dimension", Attribute::Int(dn.output_feature_dimension()));
    attrs.Set("output_spatial_dimensions", IntsOf(dn.output_spatial_dimensions()));
    attrs.Set("feature_group_count",
              Attribute::Int(inst.feature_group_count() == 0 ? 1 : inst.feature_group_count()));
    attrs.Set("batch_group_count",
              Attribute::Int(inst.batch_group_count() == 0 ? 1 : inst.batch_group_count()));
    attrs.Set("precision_config", PrecisionConfig(inst));
    Add(scope, inst, Opcode::kConvolution, flat(), std::move(results), std::move(attrs));
    return absl::OkStatus();
  }
  if (op == "gather") {
    const proto::GatherDimensionNumbers& dn = inst.gather_dimension_numbers();
    attrs.Set("offset_dims", IntsOf(dn.offset_dims()));
    attrs.Set("collapsed_slice_dims", IntsOf(dn.collapsed_slice_dims()));
    attrs.Set("operand_batching_dims", IntsOf(dn.operand_batching_dims()));
    attrs.Set("start_indices_batching_dims", IntsOf(dn.start_indices_batching_dims()));
    attrs.Set("start_index_map", IntsOf(dn.start_index_map()));
    attrs.Set("index_vector_dim", Attribute::Int(dn.index_vector_dim()));
    attrs.Set("slice_sizes", IntsOf(inst.gather_slice_sizes()));
    attrs.Set("indices_are_sorted", Attribute::Bool(inst.indices_are_sorted()));
    Add(scope, inst, Opcode::kGather, flat(), std::move(results), std::move(attrs));
    return absl::OkStatus();
  }
  if (op == "scatter") {
    const proto::ScatterDimensionNumbers& dn = inst.scatter_dimension_numbers();
    attrs.Set("update_window_dims", IntsOf(dn.update_window_dims()));
    attrs.Set("inserted_window_dims", IntsOf(dn.inserted_window_dims()));
    attrs.Set("input_batching_dims", IntsOf(dn.input_batching_dims()));
    attrs.Set("scatter_indices_batching_dims", IntsOf(dn.scatter_indices_batching_dims()));
    attrs.Set("scatter_dims_to_operand_dims", IntsOf(dn.scatter_dims_to_operand_dims()));
    attrs.Set("index_vector_dim", Attribute::Int(dn.index_vector_dim()));
    attrs.Set("indices_are_sorted", Attribute::Bool(inst.indices_are_sorted()));
    attrs.Set("unique_indices", Attribute::Bool(inst.unique_indices()));
    EMBER_ASSIGN_OR_RETURN(int64_t id, CalledId(inst, 0));
    EMBER_ASSIGN_OR_RETURN(ir::Computation * body, Region(id, "scatter"));
    Add(scope, inst, Opcode::kScatter, flat(), std::move(results), std::move(attrs), {body});
    return absl::OkStatus();
  }
  if (op == "sort") {
    EMBER_ASSIGN_OR_RETURN(int64_t d, dim0("the sort dimension"));
    attrs.Set("dimension", Attribute::Int(d));
    attrs.Set("is_stable", Attribute::Bool(inst.is_stable()));
    EMBER_ASSIGN_OR_RETURN(int64_t id, CalledId(inst, 0));
    EMBER_ASSIGN_OR_RETURN(ir::Computation * cmp, Region(id, "sort"));
    Add(scope, inst, Opcode::kSort, flat(), std::move(results), std::move(attrs), {cmp});
    return absl::OkStatus();
  }
  if (op == "while") {
    EMBER_RETURN_IF_ERROR(need_operands(1));
    EMBER_ASSIGN_OR_RETURN(int64_t body_id, CalledId(inst, 0));
    EMBER_ASSIGN_OR_RETURN(int64_t cond_id, CalledId(inst, 1));
    EMBER_ASSIGN_OR_RETURN(ir::Computation * cond, Region(cond_id, "while_cond"));
    EMBER_ASSIGN_OR_RETURN(ir::Computation * body, Region(body_id, "while_body"));
    Add(scope, inst, Opcode::kWhile, flat(), std::move(results), {}, {cond, body});
    return absl::OkStatus();
  }
  if (op == "conditional") {
    if (operands.empty()) return absl::InvalidArgumentError("expects a branch selector");
    EMBER_ASSIGN_OR_RETURN(ir::Value * selector, array_operand(0));
    const int branches = inst.called_computation_ids_size();
    if (branches == 0 || static_cast<size_t>(branches) + 1 != operands.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("has ", branches, " branches and ", operands.size(), " operands"));
    }
    std::vector<ir::Computation*> regions;
    for (int b = 0; b < branches; ++b) {
      EMBER_ASSIGN_OR_RETURN(ir::Computation * r, BranchRegion(inst.called_computation_ids(b),
                                                               operands[b + 1]->leaves, results));
      regions.push_back(r);
    }
    const bool is_pred =
        selector->type().is_tensor() && selector->type().element_type() == ir::ElementType::kPred;
    if (is_pred && branches != 2) {
      return absl::InvalidArgumentError("a predicated conditional needs two branches");
    }
    Add(scope, inst, is_pred ? Opcode::kIf : Opcode::kCase, {selector}, std::move(results), {},
        std::move(regions));
    return absl::OkStatus();
  }
  if (op == "fusion") {
    EMBER_ASSIGN_OR_RETURN(int64_t id, CalledId(inst, 0));
    EMBER_ASSIGN_OR_RETURN(const proto::HloComputationProto* comp, Computation(id));
    std::vector<Leaves> args;
    for (const Node* n : operands) args.push_back(n->leaves);
    EMBER_ASSIGN_OR_RETURN(Leaves out, Emit(*comp, scope.target, args));
    if (out.size() != results.size()) {
      return absl::InvalidArgumentError("the fused computation's root does not match the shape");
    }
    scope.nodes[LocalId(inst.id())] = Node{std::move(out), &inst.shape()};
    return absl::OkStatus();
  }
  if (op == "call") {
    EMBER_ASSIGN_OR_RETURN(int64_t id, CalledId(inst, 0));
    EMBER_ASSIGN_OR_RETURN(ir::Computation * callee, Function(id));
    ir::Instruction* call = Add(scope, inst, Opcode::kCall, flat(), std::move(results), {});
    call->set_callee(callee);
    return absl::OkStatus();
  }
  if (op == "opt-barrier") {
    Add(scope, inst, Opcode::kOptimizationBarrier, flat(), std::move(results), {});
    return absl::OkStatus();
  }
  if (op == "custom-call") {
    // XLA exports Shardy's sharding annotations as these identity custom calls; they are the
    // same "Sharding" custom call the MLIR importer makes of sdy.sharding_constraint.
    std::string target = inst.custom_call_target();
    if (target == "xla.sdy.FuncResultSharding" || target == "xla.sdy.Sharding") {
      const auto& fa = inst.frontend_attributes().map();
      if (auto s = fa.find("xla.sdy.sharding"); s != fa.end()) {
        // Shardy's annotation as MLIR text; XLA writes one sharding, or a per-value list.
        absl::StatusOr<frontend::AttrPtr> parsed = frontend::ParseMlirAttribute(s->second);
        absl::StatusOr<std::optional<Attribute>> typed =
            parsed.ok() ? frontend::ImportShardyAttribute(**parsed)
                        : absl::StatusOr<std::optional<Attribute>>(parsed.status());
        if (!typed.ok() || !typed->has_value()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "custom-call ", inst.name(), ": xla.sdy.sharding \"", s->second, "\" is not a sharding",
              typed.ok() ? "" : absl::StrCat(": ", typed.status().message())));
        }
        attrs.Set("sdy.sharding", **std::move(typed));
      }
      attrs.Set("xla.sdy.target", Attribute::String(target));
      target = "Sharding";
    }
    attrs.Set("call_target_name", Attribute::String(target));
    attrs.Set("has_side_effect", Attribute::Bool(inst.custom_call_has_side_effect()));
    if (!inst.backend_config().empty()) {
      attrs.Set("backend_config", Attribute::String(inst.backend_config()));
    }
    attrs.Set(
        "api_version",
        Attribute::Int(inst.custom_call_api_version() == 0 ? 1 : inst.custom_call_api_version()));
    if (inst.called_computation_ids_size() > 0) {
      std::vector<Attribute> names;
      for (int64_t id : inst.called_computation_ids()) {
        EMBER_ASSIGN_OR_RETURN(ir::Computation * f, Function(id));
        names.push_back(Attribute::String(f->name()));
      }
      attrs.Set("called_computations", Attribute::List(std::move(names)));
    }
    if (inst.constrain_layout()) {
      std::vector<Attribute> operand_layouts, result_layouts;
      for (const proto::ShapeProto& s : inst.operand_shapes_with_layout()) {
        operand_layouts.push_back(IntsOf(s.layout().minor_to_major()));
      }
      auto add_result = [&](const proto::ShapeProto& s) {
        result_layouts.push_back(IntsOf(s.layout().minor_to_major()));
      };
      if (inst.shape().element_type() == hlo::kPrimitiveTuple) {
        for (const proto::ShapeProto& s : inst.shape().tuple_shapes()) add_result(s);
      } else {
        add_result(inst.shape());
      }
      attrs.Set("operand_layouts", Attribute::List(std::move(operand_layouts)));
      attrs.Set("result_layouts", Attribute::List(std::move(result_layouts)));
    }
    if (inst.output_operand_aliasing_size() > 0) {
      std::vector<Attribute> aliases;
      for (const proto::OutputOperandAliasing& a : inst.output_operand_aliasing()) {
        aliases.push_back(
            Attribute::Dict({{"output_tuple_indices", IntsOf(a.output_shape_index())},
                             {"operand_index", Attribute::Int(a.operand_index())},
                             {"operand_tuple_indices", IntsOf(a.operand_shape_index())}}));
      }
      attrs.Set("output_operand_aliases", Attribute::List(std::move(aliases)));
    }
    Add(scope, inst, Opcode::kCustomCall, flat(), std::move(results), std::move(attrs));
    return absl::OkStatus();
  }
  if (op == "topk") {
    // StableHLO has no top-k op: a stable sort of (values, iota) along the last dimension with a
    // descending (ascending for largest=false) total-order comparator, then the first k.
    EMBER_RETURN_IF_ERROR(need_operands(1));
    EMBER_ASSIGN_OR_RETURN(ir::Value * x, array_operand(0));
    if (results.size() != 2 || !x->type().is_tensor() || x->type().dims().empty()) {
      return absl::InvalidArgumentError("topk expects an array of rank >= 1 and two results");
    }
    const ir::ValueType& xt = x->type();
    const int64_t last = static_cast<int64_t>(xt.dims().size()) - 1;
    const ir::ElementType index_type = results[1].element_type();
    EMBER_ASSIGN_OR_RETURN(ir::Shape index_shape, ir::Shape::Make(index_type, xt.dims()));
    const ir::ValueType it = ir::ValueType::Tensor(index_shape);
    ir::AttributeMap iota_attrs;
    iota_attrs.Set("iota_dimension", Attribute::Int(last));
    const ir::Location loc = hlo::MetadataLocation(inst.metadata(), proto_.stack_frame_index());
    ir::Value* iota =
        scope.target->AddInstruction(Opcode::kIota, {}, {it}, std::move(iota_attrs), {}, loc)
            ->result();
    ir::Computation* cmp = module_->AddRegion("topk");
    const ir::ValueType vs = ir::ValueType::Tensor(ir::Shape::Scalar(xt.element_type()));
    const ir::ValueType is = ir::ValueType::Tensor(ir::Shape::Scalar(index_type));
    ir::Value* a = cmp->AddParameter(vs);
    ir::Value* b = cmp->AddParameter(vs);
    cmp->AddParameter(is);
    cmp->AddParameter(is);
    ir::AttributeMap cattrs;
    cattrs.Set("comparison_direction", Attribute::String(inst.largest() ? "GT" : "LT"));
    const ir::ElementType et = xt.element_type();
    if (ir::IsFloat(et)) cattrs.Set("compare_type", Attribute::String("TOTALORDER"));
    ir::Value* pred =
        cmp->AddInstruction(Opcode::kCompare, {a, b},
                            {ir::ValueType::Tensor(ir::Shape::Scalar(ir::ElementType::kPred))},
                            std::move(cattrs))
            ->result();
    cmp->AddInstruction(Opcode::kReturn, {pred}, {});
    ir::AttributeMap sattrs;
    sattrs.Set("dimension", Attribute::Int(last));
    sattrs.Set("is_stable", Attribute::Bool(true));
    ir::Instruction* sorted = scope.target->AddInstruction(Opcode::kSort, {x, iota}, {xt, it},
                                                           std::move(sattrs), {cmp}, loc);
    const int64_t k = inst.k();
    if (k < 0 || k > xt.dims()[last]) {
      return absl::InvalidArgumentError(absl::StrCat("k = ", k, " is out of range"));
    }
    std::vector<int64_t> start(xt.dims().size(), 0), limit = xt.dims(), stride(xt.dims().size(), 1);
    limit[last] = k;
    Leaves out;
    for (int r = 0; r < 2; ++r) {
      ir::AttributeMap slice;
      slice.Set("start_indices", Attribute::Ints(start));
      slice.Set("limit_indices", Attribute::Ints(limit));
      slice.Set("strides", Attribute::Ints(stride));
      out.push_back(scope.target
                        ->AddInstruction(Opcode::kSlice, {sorted->result(r)}, {results[r]},
                                         std::move(slice), {}, loc)
                        ->result());
    }
    scope.nodes[LocalId(inst.id())] = Node{std::move(out), &inst.shape()};
    return absl::OkStatus();
  }
  if (op == "rng-bit-generator") {
    static const char* kAlgs[] = {"DEFAULT", "THREE_FRY", "PHILOX"};
    const int alg = inst.rng_algorithm();
    if (alg < 0 || alg > 2) {
      return absl::InvalidArgumentError(absl::StrCat("unknown rng_algorithm ", alg));
    }
    attrs.Set("rng_algorithm", Attribute::String(kAlgs[alg]));
    Add(scope, inst, Opcode::kRngBitGenerator, flat(), std::move(results), std::move(attrs));
    return absl::OkStatus();
  }
  if (op == "rng") {
    const int dist = inst.distribution();
    if (dist != 1 && dist != 2) {
      return absl::InvalidArgumentError(absl::StrCat("unknown rng distribution ", dist));
    }
    attrs.Set("rng_distribution", Attribute::String(dist == 1 ? "UNIFORM" : "NORMAL"));
    if (results.size() != 1 || !results[0].is_tensor()) {
      return absl::InvalidArgumentError("rng must produce an array");
    }
    // StableHLO's rng takes the result shape as a third operand.
    const std::vector<int64_t>& dims = results[0].dims();
    EMBER_ASSIGN_OR_RETURN(ir::Literal shape_value, ir::Literal::FromValues<int64_t>(
                                                        {static_cast<int64_t>(dims.size())}, dims));
    const ir::ValueType shape_type = ir::ValueType::Tensor(shape_value.shape());
    ir::AttributeMap shape_attrs;
    shape_attrs.Set("value", Attribute::OfLiteral(std::move(shape_value)));
    ir::Value* shape =
        scope.target->AddInstruction(Opcode::kConstant, {}, {shape_type}, std::move(shape_attrs))
            ->result();
    Leaves args = flat();
    args.push_back(shape);
    Add(scope, inst, Opcode::kRng, std::move(args), std::move(results), std::move(attrs));
    return absl::OkStatus();
  }
  if (op == "all-gather" || op == "all-to-all" || op == "collective-broadcast" ||
      op == "collective-permute") {
    Opcode opcode = Opcode::kAllGather;
    if (op == "collective-permute") {
      if (operands.size() != 1) {
        return absl::UnimplementedError("collective-permute with several operands");
      }
      EMBER_ASSIGN_OR_RETURN(ir::Literal pairs, hlo::SourceTargetPairs(inst));
      attrs.Set("source_target_pairs", Attribute::OfLiteral(std::move(pairs)));
      attrs.Set("channel_id", Attribute::Int(std::max<int64_t>(inst.channel_id(), 0)));
      Add(scope, inst, Opcode::kCollectivePermute, flat(), std::move(results), std::move(attrs));
      return absl::OkStatus();
    }
    EMBER_ASSIGN_OR_RETURN(ir::Literal groups, hlo::ReplicaGroups(inst));
    const int64_t group_size = groups.shape().rank() == 2 ? groups.shape().dim(1) : 0;
    if (op == "all-gather") {
      EMBER_ASSIGN_OR_RETURN(int64_t d, dim0("the gather dimension"));
      attrs.Set("all_gather_dim", Attribute::Int(d));
    } else if (op == "all-to-all") {
      if (inst.dimensions_size() != 1 || operands.size() != 1) {
        return absl::UnimplementedError("only the array form of all-to-all is supported");
      }
      if (group_size == 0) {
        return absl::UnimplementedError("all-to-all without replica groups is not supported");
      }
      attrs.Set("split_dimension", Attribute::Int(inst.dimensions(0)));
      attrs.Set("concat_dimension", Attribute::Int(inst.dimensions(0)));
      attrs.Set("split_count", Attribute::Int(group_size));
      opcode = Opcode::kAllToAll;
    } else {
      opcode = Opcode::kCollectiveBroadcast;
    }
    attrs.Set("replica_groups", Attribute::OfLiteral(std::move(groups)));
    attrs.Set("channel_id", Attribute::Int(std::max<int64_t>(inst.channel_id(), 0)));
    if (op == "all-gather") {
      attrs.Set("use_global_device_ids", Attribute::Bool(inst.use_global_device_ids()));
    }
    Add(scope, inst, opcode, flat(), std::move(results), std::move(attrs));
    return absl::OkStatus();
  }
  if (op == "batch-norm-training" || op == "batch-norm-inference" || op == "batch-norm-grad") {
    attrs.Set("epsilon", Attribute::Float(inst.epsilon()));
    attrs.Set("feature_index", Attribute::Int(inst.feature_index()));
    const Opcode opcode = op == "batch-norm-training"    ? Opcode::kBatchNormTraining
                          : op == "batch-norm-inference" ? Opcode::kBatchNormInference
                                                         : Opcode::kBatchNormGrad;
    Add(scope, inst, opcode, flat(), std::move(results), std::move(attrs));
    return absl::OkStatus();
  }
  if (op == "cholesky") {
    attrs.Set("lower", Attribute::Bool(inst.cholesky_options().lower()));
    Add(scope, inst, Opcode::kCholesky, flat(), std::move(results), std::move(attrs));
    return absl::OkStatus();
  }
  if (op == "triangular-solve") {
    const proto::TriangularSolveOptions& o = inst.triangular_solve_options();
    static const char* kTranspose[] = {"NO_TRANSPOSE", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
    if (o.transpose_a() < 0 || o.transpose_a() > 3) {
      return absl::InvalidArgumentError(absl::StrCat("unknown transpose_a ", o.transpose_a()));
    }
    attrs.Set("left_side", Attribute::Bool(o.left_side()));
    attrs.Set("lower", Attribute::Bool(o.lower()));
    attrs.Set("unit_diagonal", Attribute::Bool(o.unit_diagonal()));
    attrs.Set("transpose_a", Attribute::String(kTranspose[o.transpose_a()]));
    Add(scope, inst, Opcode::kTriangularSolve, flat(), std::move(results), std::move(attrs));
    return absl::OkStatus();
  }
  if (op == "fft") {
    static const char* kTypes[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
    if (inst.fft_type() < 0 || inst.fft_type() > 3) {
      return absl::InvalidArgumentError(absl::StrCat("unknown fft_type ", inst.fft_type()));
    }
    attrs.Set("fft_type", Attribute::String(kTypes[inst.fft_type()]));
    attrs.Set("fft_length", IntsOf(inst.fft_length()));
    Add(scope, inst, Opcode::kFft, flat(), std::move(results), std::move(attrs));
    return absl::OkStatus();
  }
  return absl::UnimplementedError(absl::StrCat("HLO opcode '", op, "' is not supported by Ember"));
}

absl::StatusOr<std::unique_ptr<ir::Module>> ImportParsed(const proto::HloModuleProto& module) {
  HloImporter importer(module);
  absl::StatusOr<std::unique_ptr<ir::Module>> out = importer.Run();
  if (!out.ok()) {
    return absl::Status(out.status().code(),
                        absl::StrCat("HLO module '", module.name(), "': ", out.status().message()));
  }
  return out;
}

absl::Status CheckSize(absl::Span<const uint8_t> bytes) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the HloModuleProto is ", bytes.size(), " bytes; at most 2 GiB is supported"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ir::Module>> ImportHloModuleProto(absl::Span<const uint8_t> bytes) {
  EMBER_RETURN_IF_ERROR(CheckSize(bytes));
  // An arena: a module is thousands of small messages, allocated and freed together.
  google::protobuf::Arena arena;
  auto* module = google::protobuf::Arena::CreateMessage<proto::HloModuleProto>(&arena);
  if (!module->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(
        absl::StrCat("program format 'hlo': the ", bytes.size(),
                     " bytes are not a valid serialized "
                     "xla.HloModuleProto (truncated or malformed protobuf)"));
  }
  return ImportParsed(*module);
}

absl::StatusOr<std::unique_ptr<ir::Module>> ImportHloModuleProtoWithConfig(
    absl::Span<const uint8_t> bytes) {
  EMBER_RETURN_IF_ERROR(CheckSize(bytes));
  google::protobuf::Arena arena;
  auto* wrapper = google::protobuf::Arena::CreateMessage<proto::HloModuleProtoWithConfig>(&arena);
  if (!wrapper->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(
        absl::StrCat("program format 'hlo_with_config': the ", bytes.size(),
                     " bytes are not a valid "
                     "serialized xla.HloModuleProtoWithConfig (truncated or malformed protobuf)"));
  }
  EMBER_ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> module, ImportParsed(wrapper->hlo_module()));
  if (wrapper->has_config()) {
    const proto::HloModuleConfigProto& config = wrapper->config();
    if (config.replica_count() > 0) {
      module->attributes().Set("mhlo.num_replicas", ir::Attribute::Int(config.replica_count()));
    }
    if (config.num_partitions() > 0) {
      module->attributes().Set("mhlo.num_partitions", ir::Attribute::Int(config.num_partitions()));
    }
  }
  return module;
}

}  // namespace ember::frontend
