// Ember's program IR: a Module of Computations (functions and op regions) made of Instructions
// in SSA form, with StableHLO semantics and static shapes. Frontends build it, passes rewrite it,
// the evaluator and backends run it. Values are owned by what defines them (an instruction's
// results, a computation's parameters); operands point at them.
#ifndef EMBER_COMPILER_IR_MODULE_H_
#define EMBER_COMPILER_IR_MODULE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/attribute.h"
#include "compiler/ir/opcode.h"
#include "compiler/ir/value_type.h"

namespace ember::ir {

class Computation;
class Instruction;

// Where an op came from: for JAX programs, the user's Python file and line.
struct Location {
  std::string file;
  int64_t line = 0;
  int64_t column = 0;
  std::string name;  // NameLoc text (e.g. "jit(f)/add"), may be empty
  bool known() const { return !file.empty() || !name.empty(); }
  std::string ToString() const;  // "model.py:41:7", the name, or "unknown location"
};

class Value {
 public:
  Value(ValueType type, Instruction* producer, Computation* owner, int index)
      : type_(std::move(type)), producer_(producer), owner_(owner), index_(index) {}
  const ValueType& type() const { return type_; }
  // The defining instruction; null for a computation parameter.
  Instruction* producer() const { return producer_; }
  // The computation the value belongs to (the parameter's, or the producer's).
  Computation* owner() const { return owner_; }
  // Result index within the producer, or parameter number.
  int index() const { return index_; }
  bool is_parameter() const { return producer_ == nullptr; }
  // Retypes the value in place. Only for passes that lower or refine types (legalize-quantized
  // turns quantized values into their storage integers, refine_shapes a dynamic type into a
  // static one it is compatible with); the caller keeps every use consistent.
  void set_type(ValueType type) { type_ = std::move(type); }

 private:
  ValueType type_;
  Instruction* producer_;
  Computation* owner_;
  int index_;
};

class Instruction {
 public:
  Opcode opcode() const { return opcode_; }
  const std::vector<Value*>& operands() const { return operands_; }
  Value* operand(size_t i) const { return operands_[i]; }
  size_t num_results() const { return results_.size(); }
  Value* result(size_t i = 0) const { return results_[i].get(); }
  const AttributeMap& attributes() const { return attributes_; }
  AttributeMap& mutable_attributes() { return attributes_; }
  const Attribute* attribute(std::string_view name) const { return attributes_.Find(name); }
  // Nested computations in op order: reduce/sort/map bodies, while {cond, body}, if {true,
  // false}, case branches, scatter/select_and_scatter update/select bodies.
  const std::vector<Computation*>& regions() const { return regions_; }
  // kCall: the callee; kCustomCall/kComposite: may name a decomposition function.
  Computation* callee() const { return callee_; }
  const Location& location() const { return location_; }
  Computation* parent() const { return parent_; }
  // "stablehlo.add at model.py:41:7" for error messages.
  std::string Describe() const;

  void set_operand(size_t i, Value* value) { operands_[i] = value; }
  void set_callee(Computation* callee) { callee_ = callee; }
  void set_location(Location location) { location_ = std::move(location); }

 private:
  friend class Computation;
  Instruction() = default;
  Opcode opcode_ = Opcode::kReturn;
  std::vector<Value*> operands_;
  std::vector<std::unique_ptr<Value>> results_;
  AttributeMap attributes_;
  std::vector<Computation*> regions_;
  Computation* callee_ = nullptr;
  Location location_;
  Computation* parent_ = nullptr;
};

class Module;

class Computation {
 public:
  Computation(Module* module, std::string name) : module_(module), name_(std::move(name)) {}
  const std::string& name() const { return name_; }
  Module* module() const { return module_; }

  Value* AddParameter(ValueType type);
  // Appends an instruction. Regions must be computations of the same module.
  Instruction* AddInstruction(Opcode opcode, std::vector<Value*> operands,
                              std::vector<ValueType> result_types, AttributeMap attributes = {},
                              std::vector<Computation*> regions = {}, Location location = {});
  // Removes instructions that `keep` rejects (used by DCE); callers guarantee no remaining uses.
  template <typename Pred>
  void RemoveInstructionsIf(Pred pred);

  const std::vector<std::unique_ptr<Value>>& parameters() const { return parameters_; }
  Value* parameter(size_t i) const { return parameters_[i].get(); }
  const std::vector<std::unique_ptr<Instruction>>& instructions() const { return instructions_; }
  // The computation's results: the operands of its final kReturn instruction.
  const Instruction* return_instruction() const;
  std::vector<ValueType> result_types() const;

  // Function-level data (for module functions; empty for op regions).
  std::vector<AttributeMap>& arg_attributes() { return arg_attributes_; }
  std::vector<AttributeMap>& result_attributes() { return result_attributes_; }
  const std::vector<AttributeMap>& arg_attributes() const { return arg_attributes_; }
  const std::vector<AttributeMap>& result_attributes() const { return result_attributes_; }
  bool is_public() const { return is_public_; }
  void set_public(bool v) { is_public_ = v; }

 private:
  Module* module_;
  std::string name_;
  std::vector<std::unique_ptr<Value>> parameters_;
  std::vector<std::unique_ptr<Instruction>> instructions_;
  std::vector<AttributeMap> arg_attributes_;
  std::vector<AttributeMap> result_attributes_;
  bool is_public_ = false;
};

template <typename Pred>
void Computation::RemoveInstructionsIf(Pred pred) {
  std::vector<std::unique_ptr<Instruction>> kept;
  for (auto& instruction : instructions_) {
    if (!pred(*instruction)) kept.push_back(std::move(instruction));
  }
  instructions_ = std::move(kept);
}

class Module {
 public:
  explicit Module(std::string name = "module") : name_(std::move(name)) {}
  const std::string& name() const { return name_; }

  // A named function (func.func); names are unique.
  absl::StatusOr<Computation*> AddFunction(std::string name);
  // An anonymous op region (reduce body, while cond, ...).
  Computation* AddRegion(std::string hint);
  Computation* FindFunction(std::string_view name) const;
  // Drops an op region that no instruction uses any more (a pass replaced its op); functions
  // and regions still in use must not be removed.
  void RemoveRegion(const Computation* region);
  // "main", or the only public function.
  Computation* entry() const;
  const std::vector<std::unique_ptr<Computation>>& computations() const { return computations_; }
  const std::vector<Computation*>& functions() const { return functions_; }

  // Module-level attributes (mhlo.num_replicas, mhlo.num_partitions, sdy meshes, ...).
  AttributeMap& attributes() { return attributes_; }
  const AttributeMap& attributes() const { return attributes_; }

  // Readable text of the whole module (stable; used by ember-opt and tests).
  std::string ToString() const;

 private:
  std::string name_;
  std::vector<std::unique_ptr<Computation>> computations_;
  std::vector<Computation*> functions_;
  AttributeMap attributes_;
  int next_region_ = 0;
};

}  // namespace ember::ir

#endif  // EMBER_COMPILER_IR_MODULE_H_
