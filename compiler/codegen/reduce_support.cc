#include "compiler/codegen/reduce_support.h"

#include <algorithm>
#include <optional>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/elemental_support.h"
#include "compiler/codegen/loop_support.h"
#include "compiler/evaluator/eval_elementwise.h"
#include "compiler/ir/float_conversions.h"
#include "compiler/passes/rewrite.h"

namespace ember::codegen {
namespace {

using ir::ElementType;
using ir::Opcode;

absl::Status Refuse(const std::string& why) {
  return absl::UnimplementedError(absl::StrCat("reduction kernel: ", why));
}

// An index op that maps every element to the operand's element of the same linear index
// (reshapes, and broadcasts that only add dims of size 1).
bool KeepsLinearIndex(const ir::Instruction& inst) {
  if (!IndexOpSupported(inst) || inst.operands().size() != 1) return false;
  const ir::Value* in = inst.operand(0);
  if (in->type().shape().element_count() != inst.result()->type().shape().element_count()) {
    return false;
  }
  if (inst.opcode() == Opcode::kReshape) return true;
  if (inst.opcode() != Opcode::kBroadcastInDim) return false;
  const std::vector<int64_t>* dims = passes::IntsAttribute(inst, "broadcast_dimensions");
  for (size_t k = 1; dims != nullptr && k < dims->size(); ++k) {
    if ((*dims)[k] <= (*dims)[k - 1]) return false;
  }
  return dims != nullptr;
}

}  // namespace

std::optional<Opcode> FoldOp(const ir::Computation& region, ElementType type) {
  std::optional<eval::SimpleBinaryRegion> body = eval::MatchSimpleBinaryRegion(region, type);
  if (!body.has_value()) return std::nullopt;
  const bool bitwise = body->opcode == Opcode::kAnd || body->opcode == Opcode::kOr ||
                       body->opcode == Opcode::kXor;
  if (bitwise && ir::IsFloat(type)) return std::nullopt;
  return body->opcode;
}

std::optional<Opcode> BodyOp(const ir::Instruction& reduce, ElementType type) {
  if (reduce.regions().size() != 1) return std::nullopt;
  return FoldOp(*reduce.regions()[0], type);
}

bool ReduceFusibleByCodegen(const ir::Instruction& inst) {
  if (inst.opcode() != Opcode::kReduce || inst.operands().size() != 2 ||
      inst.num_results() != 1) {
    return false;
  }
  const ElementType t = inst.result()->type().element_type();
  const ir::Value* in = inst.operand(0);
  const ir::Value* init = inst.operand(1);
  if (!ElementalArraySupported(in) || !ElementalArraySupported(init) || !ElementalArraySupported(inst.result()) || in->type().element_type() != t ||
      init->type().element_type() != t || !init->type().dims().empty()) {
    return false;
  }
  return BodyOp(inst, t).has_value() && passes::IntsAttribute(inst, "dimensions") != nullptr;
}

absl::StatusOr<ReduceKernelLayout> LayOutReduceKernel(const passes::Kernel& kernel) {
  if (kernel.kind != passes::KernelKind::kReduce) return Refuse("not a reduction kernel");
  if (kernel.instructions.empty() || kernel.outputs.empty()) return Refuse("an empty kernel");
  for (const ir::Value* v : kernel.inputs) {
    if (!ElementalArraySupported(v)) return Refuse(absl::StrCat("an input is ", v->type().ToString()));
  }
  std::unordered_set<const ir::Value*> inputs(kernel.inputs.begin(), kernel.inputs.end());
  ReduceKernelLayout layout;
  const std::vector<int64_t>* dims = nullptr;
  for (const ir::Instruction* inst : kernel.instructions) {
    if (inst->opcode() != Opcode::kReduce) continue;
    if (!ReduceFusibleByCodegen(*inst)) {
      return Refuse(absl::StrCat(inst->Describe(), " is a reduce the emitter lacks"));
    }
    const ir::Value* in = inst->operand(0);
    // The init value is read once from a kernel input (a scalar).
    if (!inputs.contains(inst->operand(1))) {
      return Refuse(absl::StrCat(inst->Describe(), " computes its init"));
    }
    const std::optional<Opcode> op = BodyOp(*inst, inst->result()->type().element_type());
    const std::vector<int64_t>* rd = passes::IntsAttribute(*inst, "dimensions");
    if (layout.reduces.empty()) {
      dims = rd;
      layout.input_dims = &in->type().dims();
      layout.output_dims = &inst->result()->type().dims();
    } else if (*rd != *dims || in->type().dims() != *layout.input_dims) {
      return Refuse("reduces over different spaces");
    }
    layout.reduces.push_back(inst);
    layout.ops.push_back(*op);
  }
  if (layout.reduces.empty()) return Refuse("no reduce");
  // The folded dims must be consecutive: each output element folds one strided line.
  const int64_t rank = static_cast<int64_t>(layout.input_dims->size());
  std::vector<bool> folded(rank, false);
  for (int64_t d : *dims) {
    if (d < 0 || d >= rank || folded[d]) return Refuse("bad reduce dimensions");
    folded[d] = true;
  }
  const int64_t first = dims->empty() ? rank : *std::min_element(dims->begin(), dims->end());
  for (int64_t d = 0; d < rank; ++d) {
    const bool in_block = d >= first && d < first + static_cast<int64_t>(dims->size());
    if (folded[d] != in_block) return Refuse("the folded dims are not consecutive");
  }
  layout.first_folded = static_cast<int>(first);
  layout.row_length = 1;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t n = (*layout.input_dims)[d];
    if (folded[d]) {
      layout.row_length *= n;
    } else if (d < first) {
      layout.outer *= n;
    } else {
      layout.inner *= n;
    }
  }
  layout.rows = layout.outer * layout.inner;
  // Instructions over the output space: those reading a reduce result. They must be elementwise
  // (they see the accumulators at the output index itself).
  std::unordered_set<const ir::Value*> over_output;
  for (const ir::Instruction* inst : kernel.instructions) {
    if (inst->num_results() != 1 || !ElementalArraySupported(inst->result())) {
      return Refuse(absl::StrCat(inst->Describe(), " has a result type the emitter lacks"));
    }
    if (inst->opcode() == Opcode::kReduce) {
      over_output.insert(inst->result());
      continue;
    }
    bool reads_output = false;
    for (const ir::Value* v : inst->operands())
      reads_output = reads_output || over_output.contains(v);
    if (reads_output) {
      if (!(ElementalOpSupported(*inst) || KeepsLinearIndex(*inst)) ||
          inst->result()->type().shape().element_count() != layout.rows) {
        return Refuse(absl::StrCat(inst->Describe(), " is not an elementwise epilogue"));
      }
      over_output.insert(inst->result());
      continue;
    }
    if (!LoopOpSupported(*inst)) {
      return Refuse(absl::StrCat(inst->Describe(), " is not emitted yet"));
    }
  }
  for (const ir::Instruction* reduce : layout.reduces) {
    if (over_output.contains(reduce->operand(0))) return Refuse("a reduce reads another's result");
  }
  for (const ir::Value* v : kernel.outputs) {
    const bool out = over_output.contains(v);
    const bool fits = out ? v->type().shape().element_count() == layout.rows
                          : v->type().dims() == *layout.input_dims;
    if (!ElementalArraySupported(v) || !fits || inputs.contains(v)) {
      return Refuse(absl::StrCat("an output is ", v->type().ToString()));
    }
    layout.over_output.push_back(out);
  }
  return layout;
}

int64_t ReducePartsPerRow(const ReduceKernelLayout& layout) {
  if (layout.rows >= kSplitMaxRows || layout.row_length < 2 * kSplitPartElements) return 1;
  for (const ir::Instruction* reduce : layout.reduces) {
    const ElementType t = reduce->result()->type().element_type();
    // (Complex folds are not split either: they start from no identity.)
    if (ir::NarrowFloatFormat(t) != nullptr || ir::IsComplex(t)) return 1;
  }
  // Parts of equal length but the last (none empty).
  const int64_t wanted = std::min(kSplitMaxParts, layout.row_length / kSplitPartElements);
  const int64_t part = (layout.row_length + wanted - 1) / wanted;
  return (layout.row_length + part - 1) / part;
}

std::string RegionReduceKernelRefusal(const passes::Kernel& kernel) {
  const ir::Instruction* found = nullptr;
  for (const ir::Instruction* inst : kernel.instructions) {
    if (inst->opcode() != Opcode::kReduce) continue;
    if (found != nullptr) return "several reduces";
    found = inst;
  }
  if (found == nullptr) return "not a reduce kernel";
  const ir::Instruction& reduce = *found;
  // Fused producers (elementwise and index ops) of the reduce's operands; an epilogue of
  // elementwise ops and reshapes over the reduce's output space. The outputs are over it.
  std::unordered_set<const ir::Value*> over_output;
  for (size_t r = 0; r < reduce.num_results(); ++r) over_output.insert(reduce.result(r));
  const int64_t out_elements =
      reduce.num_results() > 0 && reduce.result(0)->type().is_tensor()
          ? reduce.result(0)->type().shape().element_count()
          : -1;
  for (const ir::Instruction* inst : kernel.instructions) {
    if (inst == &reduce) continue;
    bool reads_output = false;
    for (const ir::Value* v : inst->operands()) reads_output = reads_output || over_output.contains(v);
    if (!reads_output) {
      if (!LoopFusibleByCodegen(*inst)) return inst->Describe() + " is not emitted yet";
      continue;
    }
    if (inst->num_results() != 1 || !ElementalArraySupported(inst->result()) ||
        !(ElementalOpSupported(*inst) || inst->opcode() == Opcode::kReshape) ||
        inst->result()->type().shape().element_count() != out_elements) {
      return inst->Describe() + " is not an elementwise epilogue";
    }
    // Its other operands are generated at its own index (a broadcast of the count, say); the
    // reduce's results are read at the output element itself (elementwise ops and reshapes
    // keep it), where the emitter binds them to the accumulators.
    over_output.insert(inst->result());
  }
  for (const ir::Value* v : kernel.outputs) {
    if (!over_output.contains(v)) return "an output is not over the reduce's output space";
  }
  const size_t n = reduce.num_results();
  if (n == 0 || reduce.operands().size() != 2 * n || reduce.regions().size() != 1) {
    return reduce.Describe() + " is malformed";
  }
  const ir::Computation& body = *reduce.regions()[0];
  if (!ScalarRegionSupported(body) || body.parameters().size() != 2 * n) {
    return reduce.Describe() + ": its body is not a scalar region the emitter takes";
  }
  const std::vector<int64_t>* dims = passes::IntsAttribute(reduce, "dimensions");
  const std::vector<int64_t>& in_dims = reduce.operand(0)->type().dims();
  const int64_t rank = static_cast<int64_t>(in_dims.size());
  if (dims == nullptr) return reduce.Describe() + " has no dimensions";
  std::vector<bool> folded(rank, false);
  for (int64_t d : *dims) {
    if (d < 0 || d >= rank || folded[d]) return reduce.Describe() + ": bad dimensions";
    folded[d] = true;
  }
  std::vector<int64_t> out_dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!folded[d]) out_dims.push_back(in_dims[d]);
  }
  for (size_t i = 0; i < n; ++i) {
    const ir::Value* in = reduce.operand(i);
    const ir::Value* init = reduce.operand(n + i);
    const ir::Value* result = reduce.result(i);
    if (!ElementalArraySupported(in) || !ElementalArraySupported(init) ||
        !ElementalArraySupported(result) || in->type().dims() != in_dims ||
        !init->type().dims().empty() || result->type().dims() != out_dims) {
      return reduce.Describe() + ": operand or result types the emitter lacks";
    }
    const ElementType t = result->type().element_type();
    if (init->type().element_type() != t || in->type().element_type() != t ||
        body.parameter(i)->type().element_type() != t ||
        body.parameter(n + i)->type().element_type() != t ||
        body.return_instruction()->operands().size() != n ||
        body.return_instruction()->operand(i)->type().element_type() != t) {
      return reduce.Describe() + ": its body's types do not match its operands'";
    }
  }
  return "";
}

const ir::Instruction& RegionReduceOf(const passes::Kernel& kernel) {
  for (const ir::Instruction* inst : kernel.instructions) {
    if (inst->opcode() == Opcode::kReduce) return *inst;
  }
  return *kernel.root();  // RegionReduceKernelRefusal guarantees one
}

}  // namespace ember::codegen
