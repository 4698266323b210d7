#include "compiler/passes/collective_reduction.h"

#include "compiler/passes/rewrite.h"

namespace ember::passes {

using collectives::DataType;
using collectives::ReductionKind;

std::optional<DataType> ReductionDataType(ir::ElementType type) {
  switch (type) {
    case ir::ElementType::kPred: return DataType::kPred;
    case ir::ElementType::kS8: return DataType::kS8;
    case ir::ElementType::kU8: return DataType::kU8;
    case ir::ElementType::kS16: return DataType::kS16;
    case ir::ElementType::kU16: return DataType::kU16;
    case ir::ElementType::kS32: return DataType::kS32;
    case ir::ElementType::kU32: return DataType::kU32;
    case ir::ElementType::kS64: return DataType::kS64;
    case ir::ElementType::kU64: return DataType::kU64;
    case ir::ElementType::kF16: return DataType::kF16;
    case ir::ElementType::kBF16: return DataType::kBF16;
    case ir::ElementType::kF32: return DataType::kF32;
    case ir::ElementType::kF64: return DataType::kF64;
    case ir::ElementType::kC64: return DataType::kC64;
    case ir::ElementType::kC128: return DataType::kC128;
    default: return std::nullopt;
  }
}

std::optional<ReductionKind> RegionReductionKind(const ir::Computation& region,
                                                 ir::ElementType type) {
  const std::optional<DataType> data_type = ReductionDataType(type);
  if (!data_type.has_value()) return std::nullopt;
  auto scalar = [type](const ir::ValueType& t) {
    return t.is_tensor() && t.dims().empty() && t.element_type() == type;
  };
  // One op and the return, perhaps with a sharding annotation of the op's result between them
  // (JAX writes one into the regions of psums inside partially manual shard_maps): an identity.
  const ir::Instruction* ret = region.return_instruction();
  const size_t count = region.instructions().size();
  if (region.parameters().size() != 2 || ret == nullptr || ret->operands().size() != 1 ||
      count < 2 || count > 3) {
    return std::nullopt;
  }
  const ir::Value* returned = ret->operand(0);
  if (count == 3) {
    const ir::Instruction* note = returned->producer();
    if (note == nullptr || !IsShardingConstraint(*note) || note->operands().size() != 1 ||
        note->num_results() != 1) {
      return std::nullopt;
    }
    returned = note->operand(0);
  }
  const ir::Instruction& op = *region.instructions()[0];
  if (op.num_results() != 1 ||
      returned != op.result(0) || op.operands().size() != 2 || !op.regions().empty() ||
      !scalar(region.parameter(0)->type()) || !scalar(region.parameter(1)->type()) ||
      !scalar(op.result(0)->type())) {
    return std::nullopt;
  }
  const bool in_order = op.operand(0) == region.parameter(0) && op.operand(1) == region.parameter(1);
  const bool swapped = op.operand(0) == region.parameter(1) && op.operand(1) == region.parameter(0);
  if (!in_order && !swapped) return std::nullopt;
  std::optional<ReductionKind> kind;
  switch (op.opcode()) {
    case ir::Opcode::kAdd: kind = ReductionKind::kSum; break;
    case ir::Opcode::kMultiply: kind = ReductionKind::kProduct; break;
    case ir::Opcode::kMaximum: kind = ReductionKind::kMax; break;
    case ir::Opcode::kMinimum: kind = ReductionKind::kMin; break;
    case ir::Opcode::kAnd: kind = ReductionKind::kAnd; break;
    case ir::Opcode::kOr: kind = ReductionKind::kOr; break;
    case ir::Opcode::kXor: kind = ReductionKind::kXor; break;
    default: return std::nullopt;
  }
  if (!collectives::IsValidReduction(*kind, *data_type)) return std::nullopt;
  return kind;
}

}  // namespace ember::passes
