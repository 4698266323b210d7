#include "compiler/codegen/scatter_support.h"

#include <algorithm>

#include "compiler/codegen/elemental_support.h"
#include "compiler/evaluator/eval_elementwise.h"
#include "compiler/passes/rewrite.h"

namespace ember::codegen {
namespace {

using ir::ElementType;
using ir::Opcode;

// The update region `(current, update) { return update }`.
bool Replaces(const ir::Computation& region) {
  const ir::Instruction* ret = region.return_instruction();
  return region.parameters().size() == 2 && region.instructions().size() == 1 && ret != nullptr &&
         ret->operands().size() == 1 && ret->operand(0) == region.parameter(1);
}

}  // namespace

std::optional<ScatterDims> ReadScatterDims(const ir::Instruction& inst) {
  if (inst.opcode() != Opcode::kScatter || inst.operands().size() != 3 ||
      inst.num_results() != 1 || inst.regions().size() != 1) {
    return std::nullopt;
  }
  const ir::Value* input = inst.operand(0);
  const ir::Value* indices = inst.operand(1);
  const ir::Value* updates = inst.operand(2);
  const ir::Value* result = inst.result();
  for (const ir::Value* v : {input, indices, updates, result}) {
    if (!ElementalArraySupported(v)) return std::nullopt;
  }
  const ElementType t = input->type().element_type();
  if (!ir::IsInteger(indices->type().element_type()) || updates->type().element_type() != t ||
      result->type() != input->type()) {
    return std::nullopt;
  }
  ScatterDims s;
  const ir::Computation& region = *inst.regions()[0];
  if (Replaces(region)) {
    s.replace = true;
  } else {
    std::optional<eval::SimpleBinaryRegion> body = eval::MatchSimpleBinaryRegion(region, t);
    if (!body.has_value()) return std::nullopt;
    const bool bitwise = body->opcode == Opcode::kAnd || body->opcode == Opcode::kOr ||
                         body->opcode == Opcode::kXor;
    if ((bitwise && ir::IsFloat(t)) || (!bitwise && t == ElementType::kPred)) return std::nullopt;
    s.opcode = body->opcode;
    s.current_first = body->accumulator_first;
  }
  static const std::vector<int64_t> kNone;
  auto ints = [&](const char* name) -> const std::vector<int64_t>& {
    const std::vector<int64_t>* v = passes::IntsAttribute(inst, name);
    return v != nullptr ? *v : kNone;
  };
  s.update_window_dims = ints("update_window_dims");
  const std::vector<int64_t>& inserted = ints("inserted_window_dims");
  s.input_batching_dims = ints("input_batching_dims");
  s.indices_batching_dims = ints("scatter_indices_batching_dims");
  s.scatter_dims_to_operand_dims = ints("scatter_dims_to_operand_dims");
  const ir::Attribute* ivd = inst.attribute("index_vector_dim");
  if (ivd == nullptr || ivd->kind != ir::Attribute::Kind::kInt) return std::nullopt;
  s.index_vector_dim = ivd->i;
  const std::vector<int64_t>& is = input->type().dims();
  const std::vector<int64_t>& xs = indices->type().dims();
  const std::vector<int64_t>& us = updates->type().dims();
  const int64_t rank = static_cast<int64_t>(is.size());
  const int64_t index_rank = static_cast<int64_t>(xs.size());
  const int64_t update_rank = static_cast<int64_t>(us.size());
  std::vector<int64_t> not_window = inserted;
  not_window.insert(not_window.end(), s.input_batching_dims.begin(), s.input_batching_dims.end());
  if (!DistinctDims(not_window, rank) || !DistinctDims(s.scatter_dims_to_operand_dims, rank) ||
      !DistinctDims(s.update_window_dims, update_rank) || s.index_vector_dim < 0 ||
      s.index_vector_dim > index_rank ||
      s.input_batching_dims.size() != s.indices_batching_dims.size()) {
    return std::nullopt;
  }
  const int64_t components = s.index_vector_dim < index_rank ? xs[s.index_vector_dim] : 1;
  if (components != static_cast<int64_t>(s.scatter_dims_to_operand_dims.size())) {
    return std::nullopt;
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (!DimsContain(not_window, d)) s.window_input_dims.push_back(d);
  }
  if (s.window_input_dims.size() != s.update_window_dims.size()) return std::nullopt;
  for (size_t i = 0; i < s.update_window_dims.size(); ++i) {
    if (us[s.update_window_dims[i]] > is[s.window_input_dims[i]]) return std::nullopt;
  }
  std::vector<int64_t> batch_sizes;
  for (int64_t d = 0; d < index_rank; ++d) {
    if (d != s.index_vector_dim) batch_sizes.push_back(xs[d]);
  }
  for (int64_t d = 0; d < update_rank; ++d) {
    if (!DimsContain(s.update_window_dims, d)) s.update_scatter_dims.push_back(d);
  }
  if (s.update_scatter_dims.size() != batch_sizes.size()) return std::nullopt;
  for (size_t i = 0; i < batch_sizes.size(); ++i) {
    if (us[s.update_scatter_dims[i]] != batch_sizes[i]) return std::nullopt;
  }
  for (size_t i = 0; i < s.indices_batching_dims.size(); ++i) {
    const int64_t d = s.indices_batching_dims[i];
    if (d < 0 || d >= index_rank || d == s.index_vector_dim ||
        xs[d] != is[s.input_batching_dims[i]]) {
      return std::nullopt;
    }
  }
  return s;
}

std::string ScatterKernelRefusal(const passes::Kernel& kernel) {
  if (kernel.instructions.size() != 1 || kernel.outputs.size() != 1 ||
      kernel.root()->opcode() != Opcode::kScatter) {
    return "not a single scatter";
  }
  if (!ReadScatterDims(*kernel.root()).has_value()) {
    return kernel.root()->Describe() +
           ": a scatter the emitter lacks (several inputs, an update region of more than one op, "
           "or types it does not emit)";
  }
  return "";
}

}  // namespace ember::codegen
