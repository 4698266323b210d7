#include "compiler/codegen/loop_support.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/elemental_support.h"
#include "compiler/codegen/reduce_window_support.h"
#include "compiler/codegen/select_and_scatter_support.h"
#include "compiler/passes/rewrite.h"

namespace ember::codegen {
namespace {

using ir::Opcode;

}  // namespace

std::optional<GatherDims> ReadGatherDims(const ir::Instruction& inst) {
  if (inst.opcode() != Opcode::kGather || inst.operands().size() != 2 ||
      inst.num_results() != 1) {
    return std::nullopt;
  }
  const ir::Value* operand = inst.operand(0);
  const ir::Value* indices = inst.operand(1);
  const ir::Value* result = inst.result();
  if (!operand->type().is_tensor() || !indices->type().is_tensor() ||
      !ir::IsInteger(indices->type().element_type()) ||
      result->type().element_type() != operand->type().element_type()) {
    return std::nullopt;
  }
  static const std::vector<int64_t> kNone;
  auto ints = [&](const char* name, bool required) -> const std::vector<int64_t>* {
    const std::vector<int64_t>* v = passes::IntsAttribute(inst, name);
    return v != nullptr ? v : required ? nullptr : &kNone;
  };
  const std::vector<int64_t>* offset = ints("offset_dims", false);
  const std::vector<int64_t>* collapsed = ints("collapsed_slice_dims", false);
  const std::vector<int64_t>* operand_batching = ints("operand_batching_dims", false);
  const std::vector<int64_t>* indices_batching = ints("start_indices_batching_dims", false);
  const std::vector<int64_t>* start_index_map = ints("start_index_map", true);
  const std::vector<int64_t>* slice_sizes = ints("slice_sizes", true);
  const ir::Attribute* ivd = inst.attribute("index_vector_dim");
  if (start_index_map == nullptr || slice_sizes == nullptr || ivd == nullptr ||
      ivd->kind != ir::Attribute::Kind::kInt) {
    return std::nullopt;
  }
  GatherDims g;
  g.offset_dims = *offset;
  g.start_index_map = *start_index_map;
  g.operand_batching_dims = *operand_batching;
  g.indices_batching_dims = *indices_batching;
  g.slice_sizes = *slice_sizes;
  g.index_vector_dim = ivd->i;
  const std::vector<int64_t>& os = operand->type().dims();
  const std::vector<int64_t>& is = indices->type().dims();
  const std::vector<int64_t>& rs = result->type().dims();
  const int64_t rank = static_cast<int64_t>(os.size());
  const int64_t index_rank = static_cast<int64_t>(is.size());
  const int64_t result_rank = static_cast<int64_t>(rs.size());
  std::vector<int64_t> not_offset = *collapsed;
  not_offset.insert(not_offset.end(), operand_batching->begin(), operand_batching->end());
  if (static_cast<int64_t>(g.slice_sizes.size()) != rank || !DistinctDims(not_offset, rank) ||
      !DistinctDims(g.start_index_map, rank) || !DistinctDims(g.offset_dims, result_rank) ||
      g.index_vector_dim < 0 || g.index_vector_dim > index_rank ||
      g.operand_batching_dims.size() != g.indices_batching_dims.size()) {
    return std::nullopt;
  }
  const int64_t components = g.index_vector_dim < index_rank ? is[g.index_vector_dim] : 1;
  if (components != static_cast<int64_t>(g.start_index_map.size())) return std::nullopt;
  for (int64_t d = 0; d < rank; ++d) {
    if (g.slice_sizes[d] < 0 || g.slice_sizes[d] > os[d]) return std::nullopt;
    if (!DimsContain(not_offset, d)) g.offset_operand_dims.push_back(d);
  }
  for (int64_t d : *collapsed) {
    if (g.slice_sizes[d] > 1) return std::nullopt;
  }
  if (g.offset_operand_dims.size() != g.offset_dims.size()) return std::nullopt;
  std::vector<int64_t> batch_sizes;
  for (int64_t d = 0; d < index_rank; ++d) {
    if (d != g.index_vector_dim) batch_sizes.push_back(is[d]);
  }
  for (int64_t d = 0; d < result_rank; ++d) {
    if (!DimsContain(g.offset_dims, d)) g.batch_dims.push_back(d);
  }
  if (g.batch_dims.size() != batch_sizes.size()) return std::nullopt;
  for (size_t i = 0; i < g.batch_dims.size(); ++i) {
    if (rs[g.batch_dims[i]] != batch_sizes[i]) return std::nullopt;
  }
  for (size_t i = 0; i < g.offset_dims.size(); ++i) {
    if (rs[g.offset_dims[i]] != g.slice_sizes[g.offset_operand_dims[i]]) return std::nullopt;
  }
  for (size_t i = 0; i < g.indices_batching_dims.size(); ++i) {
    const int64_t d = g.indices_batching_dims[i];
    if (d < 0 || d >= index_rank || d == g.index_vector_dim ||
        is[d] != os[g.operand_batching_dims[i]]) {
      return std::nullopt;
    }
  }
  return g;
}

bool IndexOpSupported(const ir::Instruction& inst) {
  if (inst.num_results() != 1 || !inst.regions().empty()) return false;
  const ir::Value* out = inst.result();
  const int64_t rank = static_cast<int64_t>(out->type().dims().size());
  if (inst.opcode() == Opcode::kIota) {
    // (Indices convert as s64 values would: ElementalEmitter::Convert.)
    const ir::Attribute* d = inst.attribute("iota_dimension");
    return inst.operands().empty() && d != nullptr && d->kind == ir::Attribute::Kind::kInt &&
           d->i >= 0 && d->i < rank;
  }
  if (inst.operands().empty()) return false;
  for (const ir::Value* v : inst.operands()) {
    if (!v->type().is_tensor()) return false;
  }
  const ir::ElementType t = out->type().element_type();
  const std::vector<int64_t>& out_dims = out->type().dims();
  switch (inst.opcode()) {
    case Opcode::kConcatenate: {
      const ir::Attribute* d = inst.attribute("dimension");
      if (d == nullptr || d->kind != ir::Attribute::Kind::kInt || d->i < 0 || d->i >= rank) {
        return false;
      }
      int64_t total = 0;
      for (const ir::Value* v : inst.operands()) {
        const std::vector<int64_t>& dims = v->type().dims();
        if (v->type().element_type() != t || static_cast<int64_t>(dims.size()) != rank) {
          return false;
        }
        for (int64_t k = 0; k < rank; ++k) {
          if (k != d->i && dims[k] != out_dims[k]) return false;
        }
        total += dims[d->i];
      }
      return total == out_dims[d->i];
    }
    case Opcode::kPad: {
      if (inst.operands().size() != 2) return false;
      const ir::Value* in = inst.operand(0);
      const ir::Value* padding = inst.operand(1);
      const std::vector<int64_t>* low = passes::IntsAttribute(inst, "edge_padding_low");
      const std::vector<int64_t>* high = passes::IntsAttribute(inst, "edge_padding_high");
      const std::vector<int64_t>* interior = passes::IntsAttribute(inst, "interior_padding");
      const std::vector<int64_t>& in_dims = in->type().dims();
      if (in->type().element_type() != t || padding->type().element_type() != t ||
          !padding->type().dims().empty() || static_cast<int64_t>(in_dims.size()) != rank ||
          low == nullptr || high == nullptr || static_cast<int64_t>(low->size()) != rank ||
          static_cast<int64_t>(high->size()) != rank ||
          (interior != nullptr && static_cast<int64_t>(interior->size()) != rank) ||
          in->type().shape().element_count() == 0) {
        return false;
      }
      for (int64_t k = 0; k < rank; ++k) {
        const int64_t gap = interior != nullptr ? (*interior)[k] : 0;
        if (gap < 0 ||
            (*low)[k] + (*high)[k] + in_dims[k] + (in_dims[k] - 1) * gap != out_dims[k]) {
          return false;
        }
      }
      return true;
    }
    case Opcode::kDynamicSlice: {
      const ir::Value* in = inst.operand(0);
      const std::vector<int64_t>& in_dims = in->type().dims();
      if (in->type().element_type() != t || static_cast<int64_t>(in_dims.size()) != rank ||
          static_cast<int64_t>(inst.operands().size()) != rank + 1) {
        return false;
      }
      const std::vector<int64_t>* sizes = passes::IntsAttribute(inst, "slice_sizes");
      if (sizes != nullptr && *sizes != out_dims) return false;
      for (int64_t k = 0; k < rank; ++k) {
        const ir::Value* start = inst.operand(1 + k);
        if (!start->type().dims().empty() || !ir::IsInteger(start->type().element_type()) ||
            !ElementalTypeSupported(start->type().element_type()) || out_dims[k] > in_dims[k]) {
          return false;
        }
      }
      return true;
    }
    case Opcode::kGather:
      return ElementalTypeSupported(inst.operand(1)->type().element_type()) &&
             ReadGatherDims(inst).has_value();
    case Opcode::kReverse: {
      const std::vector<int64_t>* dims = passes::IntsAttribute(inst, "dimensions");
      if (inst.operands().size() != 1 || dims == nullptr ||
          inst.operand(0)->type().dims() != out_dims || inst.operand(0)->type().element_type() != t) {
        return false;
      }
      std::vector<bool> seen(rank, false);
      for (int64_t d : *dims) {
        if (d < 0 || d >= rank || seen[d]) return false;
        seen[d] = true;
      }
      return true;
    }
    default:
      break;
  }
  if (inst.operands().size() != 1) return false;
  const ir::Value* in = inst.operand(0);
  if (in->type().element_type() != out->type().element_type()) return false;
  const std::vector<int64_t>& in_dims = in->type().dims();
  const int64_t in_rank = static_cast<int64_t>(in_dims.size());
  switch (inst.opcode()) {
    case Opcode::kReshape:
      return in->type().shape().element_count() == out->type().shape().element_count();
    case Opcode::kBroadcastInDim: {
      const std::vector<int64_t>* dims = passes::IntsAttribute(inst, "broadcast_dimensions");
      if (dims == nullptr || static_cast<int64_t>(dims->size()) != in_rank) return false;
      for (int64_t k = 0; k < in_rank; ++k) {
        const int64_t d = (*dims)[k];
        if (d < 0 || d >= rank) return false;
        if (in_dims[k] != 1 && in_dims[k] != out->type().dims()[d]) return false;
      }
      return true;
    }
    case Opcode::kTranspose: {
      const std::vector<int64_t>* perm = passes::IntsAttribute(inst, "permutation");
      if (perm == nullptr || static_cast<int64_t>(perm->size()) != rank || in_rank != rank) {
        return false;
      }
      std::vector<bool> seen(rank, false);
      for (int64_t i = 0; i < rank; ++i) {
        const int64_t p = (*perm)[i];
        if (p < 0 || p >= rank || seen[p] || in_dims[p] != out->type().dims()[i]) return false;
        seen[p] = true;
      }
      return true;
    }
    case Opcode::kSlice: {
      const std::vector<int64_t>* start = passes::IntsAttribute(inst, "start_indices");
      const std::vector<int64_t>* strides = passes::IntsAttribute(inst, "strides");
      if (start == nullptr || static_cast<int64_t>(start->size()) != rank || in_rank != rank ||
          (strides != nullptr && static_cast<int64_t>(strides->size()) != rank)) {
        return false;
      }
      for (int64_t k = 0; k < rank; ++k) {
        const int64_t s = strides != nullptr ? (*strides)[k] : 1;
        const int64_t n = out->type().dims()[k];
        if (s < 1 || (*start)[k] < 0 || (n > 0 && (*start)[k] + (n - 1) * s >= in_dims[k])) {
          return false;
        }
      }
      return true;
    }
    default:
      return false;
  }
}

bool LoopFusibleByCodegen(const ir::Instruction& inst) {
  if (inst.num_results() != 1 || !ElementalArraySupported(inst.result())) return false;
  for (const ir::Value* v : inst.operands()) {
    if (!ElementalArraySupported(v)) return false;
  }
  return LoopOpSupported(inst);
}

bool LoopOpSupported(const ir::Instruction& inst) {
  return ElementalOpSupported(inst) || IndexOpSupported(inst) || ReduceWindowFold(inst).ok() ||
         SelectAndScatterFold(inst).ok();
}

std::string WindowOpRefusal(const ir::Instruction& inst) {
  absl::Status why;
  if (inst.opcode() == Opcode::kReduceWindow) why = ReduceWindowFold(inst).status();
  if (inst.opcode() == Opcode::kSelectAndScatter) why = SelectAndScatterFold(inst).status();
  return std::string(why.message());
}

std::string LoopKernelRefusal(const passes::Kernel& kernel) {
  if (kernel.kind != passes::KernelKind::kLoop) return "not a loop kernel";
  if (kernel.instructions.empty() || kernel.outputs.empty()) return "an empty kernel";
  const ir::Value* root = kernel.root()->result();
  for (const ir::Value* v : kernel.inputs) {
    if (!ElementalArraySupported(v)) return absl::StrCat("an input is ", v->type().ToString());
  }
  for (const ir::Value* v : kernel.outputs) {
    if (!ElementalArraySupported(v) || v->type().dims() != root->type().dims()) {
      return absl::StrCat("an output is ", v->type().ToString());
    }
  }
  for (const ir::Instruction* inst : kernel.instructions) {
    if (inst->num_results() != 1 || !ElementalArraySupported(inst->result())) {
      return absl::StrCat(inst->Describe(), " has a result type the emitter lacks");
    }
    if (!LoopOpSupported(*inst)) {
      const std::string why = WindowOpRefusal(*inst);
      return absl::StrCat(inst->Describe(), " is not emitted yet", why.empty() ? "" : ": ", why);
    }
  }
  return "";
}

}  // namespace ember::codegen
