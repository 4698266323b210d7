#include "compiler/ir/module.h"

#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ember::ir {

std::string Location::ToString() const {
  if (!file.empty()) {
    return line > 0 ? absl::StrCat(file, ":", line, ":", column) : file;
  }
  return name.empty() ? "unknown location" : name;
}

std::string Instruction::Describe() const {
  std::string text = absl::StrCat(opcode_ == Opcode::kCall ? "func." : "stablehlo.",
                                  std::string(OpcodeName(opcode_)));
  if (location_.known()) absl::StrAppend(&text, " at ", location_.ToString());
  return text;
}

Value* Computation::AddParameter(ValueType type) {
  parameters_.push_back(
      std::make_unique<Value>(std::move(type), nullptr, this, static_cast<int>(parameters_.size())));
  return parameters_.back().get();
}

Instruction* Computation::AddInstruction(Opcode opcode, std::vector<Value*> operands,
                                         std::vector<ValueType> result_types,
                                         AttributeMap attributes,
                                         std::vector<Computation*> regions, Location location) {
  auto instruction = std::unique_ptr<Instruction>(new Instruction());
  instruction->opcode_ = opcode;
  instruction->operands_ = std::move(operands);
  instruction->attributes_ = std::move(attributes);
  instruction->regions_ = std::move(regions);
  instruction->location_ = std::move(location);
  instruction->parent_ = this;
  for (size_t i = 0; i < result_types.size(); ++i) {
    instruction->results_.push_back(std::make_unique<Value>(
        std::move(result_types[i]), instruction.get(), this, static_cast<int>(i)));
  }
  instructions_.push_back(std::move(instruction));
  return instructions_.back().get();
}

const Instruction* Computation::return_instruction() const {
  if (instructions_.empty() || instructions_.back()->opcode() != Opcode::kReturn) return nullptr;
  return instructions_.back().get();
}

std::vector<ValueType> Computation::result_types() const {
  std::vector<ValueType> types;
  if (const Instruction* ret = return_instruction()) {
    for (const Value* v : ret->operands()) types.push_back(v->type());
  }
  return types;
}

absl::StatusOr<Computation*> Module::AddFunction(std::string name) {
  if (FindFunction(name) != nullptr) {
    return absl::AlreadyExistsError(absl::StrCat("function @", name, " is defined twice"));
  }
  computations_.push_back(std::make_unique<Computation>(this, name));
  functions_.push_back(computations_.back().get());
  return computations_.back().get();
}

Computation* Module::AddRegion(std::string hint) {
  computations_.push_back(
      std::make_unique<Computation>(this, absl::StrCat(hint, ".region", next_region_++)));
  return computations_.back().get();
}

void Module::RemoveRegion(const Computation* region) {
  std::erase_if(computations_,
                [region](const std::unique_ptr<Computation>& c) { return c.get() == region; });
}

Computation* Module::FindFunction(std::string_view name) const {
  for (Computation* f : functions_) {
    if (f->name() == name) return f;
  }
  return nullptr;
}

Computation* Module::entry() const {
  if (Computation* main = FindFunction("main")) return main;
  Computation* only_public = nullptr;
  for (Computation* f : functions_) {
    if (f->is_public()) {
      if (only_public != nullptr) return nullptr;
      only_public = f;
    }
  }
  return only_public;
}

namespace {

void PrintAttributes(const AttributeMap& attributes, std::string* out) {
  if (attributes.empty()) return;
  std::vector<std::string> parts;
  for (const auto& [name, a] : attributes.entries()) parts.push_back(absl::StrCat(name, " = ", a.ToString()));
  absl::StrAppend(out, " {", absl::StrJoin(parts, ", "), "}");
}

void PrintComputation(const Computation& c, bool is_function, std::string* out) {
  std::unordered_map<const Value*, int> ids;
  auto name = [&](const Value* v) {
    auto it = ids.find(v);
    return it == ids.end() ? std::string("%<undefined>") : absl::StrCat("%", it->second);
  };
  std::vector<std::string> params;
  for (const auto& p : c.parameters()) {
    const int id = static_cast<int>(ids.size());
    ids[p.get()] = id;
    params.push_back(absl::StrCat("%", id, ": ", p->type().ToString()));
  }
  std::vector<std::string> results;
  for (const ValueType& t : c.result_types()) results.push_back(t.ToString());
  absl::StrAppend(out, is_function ? (c.is_public() ? "func public @" : "func private @") : "region @",
                  c.name(), "(", absl::StrJoin(params, ", "), ") -> (", absl::StrJoin(results, ", "),
                  ") {\n");
  for (const auto& inst : c.instructions()) {
    absl::StrAppend(out, "  ");
    std::vector<std::string> defs;
    for (size_t i = 0; i < inst->num_results(); ++i) {
      const int id = static_cast<int>(ids.size());
      ids[inst->result(i)] = id;
      defs.push_back(absl::StrCat("%", id));
    }
    if (!defs.empty()) absl::StrAppend(out, absl::StrJoin(defs, ", "), " = ");
    std::vector<std::string> operands;
    for (const Value* v : inst->operands()) operands.push_back(name(v));
    absl::StrAppend(out, std::string(OpcodeName(inst->opcode())), "(", absl::StrJoin(operands, ", "), ")");
    if (inst->callee() != nullptr) absl::StrAppend(out, " @", inst->callee()->name());
    if (!inst->regions().empty()) {
      std::vector<std::string> regions;
      for (const Computation* r : inst->regions()) regions.push_back(absl::StrCat("@", r->name()));
      absl::StrAppend(out, " regions [", absl::StrJoin(regions, ", "), "]");
    }
    PrintAttributes(inst->attributes(), out);
    if (inst->num_results() > 0) {
      std::vector<std::string> types;
      for (size_t i = 0; i < inst->num_results(); ++i) types.push_back(inst->result(i)->type().ToString());
      absl::StrAppend(out, " : ", absl::StrJoin(types, ", "));
    }
    absl::StrAppend(out, "\n");
  }
  absl::StrAppend(out, "}\n");
}

}  // namespace

std::string Module::ToString() const {
  std::string out = absl::StrCat("module @", name_);
  PrintAttributes(attributes_, &out);
  absl::StrAppend(&out, "\n");
  for (const auto& c : computations_) {
    bool is_function = false;
    for (const Computation* f : functions_) is_function |= f == c.get();
    PrintComputation(*c, is_function, &out);
  }
  return out;
}

}  // namespace ember::ir
