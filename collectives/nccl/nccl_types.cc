#include "collectives/nccl/nccl_types.h"

#include <optional>

#include "absl/strings/str_cat.h"

namespace ember::collectives::nccl {
namespace {

std::optional<ncclDataType_t> NativeType(DataType type) {
  switch (type) {
    case DataType::kS8: return ncclInt8;
    case DataType::kU8: return ncclUint8;
    case DataType::kS32: return ncclInt32;
    case DataType::kU32: return ncclUint32;
    case DataType::kS64: return ncclInt64;
    case DataType::kU64: return ncclUint64;
    case DataType::kF16: return ncclFloat16;
    case DataType::kBF16: return ncclBfloat16;
    case DataType::kF32: return ncclFloat32;
    case DataType::kF64: return ncclFloat64;
    default: return std::nullopt;
  }
}

std::optional<ncclRedOp_t> ArithmeticOp(ReductionKind kind) {
  switch (kind) {
    case ReductionKind::kSum: return ncclSum;
    case ReductionKind::kProduct: return ncclProd;
    case ReductionKind::kMin: return ncclMin;
    case ReductionKind::kMax: return ncclMax;
    default: return std::nullopt;
  }
}

absl::Status CannotReduce(DataType type, ReductionKind kind, const char* why) {
  return absl::UnimplementedError(absl::StrCat("NCCL cannot reduce ", DataTypeName(type), " with '",
                                               ReductionKindName(kind), "': ", why));
}

}  // namespace

NcclElements NcclMoveElements(DataType type, size_t count) {
  if (std::optional<ncclDataType_t> native = NativeType(type)) return {*native, count};
  return {ncclUint8, count * DataTypeBytes(type)};
}

absl::StatusOr<NcclReduction> NcclReductionFor(DataType type, ReductionKind kind, size_t count) {
  if (!IsValidReduction(kind, type)) {
    return absl::InvalidArgumentError(absl::StrCat("reduction '", ReductionKindName(kind),
                                                   "' is not defined on ", DataTypeName(type)));
  }
  if (type == DataType::kPred) {
    // Pred bytes are 0 or 1: or (and sum, which ors) is max, and (and product) is min.
    switch (kind) {
      case ReductionKind::kSum: case ReductionKind::kOr: case ReductionKind::kMax:
        return NcclReduction{{ncclUint8, count}, ncclMax};
      case ReductionKind::kProduct: case ReductionKind::kAnd: case ReductionKind::kMin:
        return NcclReduction{{ncclUint8, count}, ncclMin};
      default:
        return CannotReduce(type, kind, "NCCL has no exclusive or");
    }
  }
  if (type == DataType::kC64 || type == DataType::kC128) {
    if (kind != ReductionKind::kSum) return CannotReduce(type, kind, "only complex sums are pairs of real sums");
    return NcclReduction{{type == DataType::kC64 ? ncclFloat32 : ncclFloat64, 2 * count}, ncclSum};
  }
  std::optional<ncclDataType_t> native = NativeType(type);
  if (!native.has_value()) return CannotReduce(type, kind, "NCCL has no such element type");
  std::optional<ncclRedOp_t> op = ArithmeticOp(kind);
  if (!op.has_value()) return CannotReduce(type, kind, "NCCL has no bitwise reductions");
  return NcclReduction{{*native, count}, *op};
}

}  // namespace ember::collectives::nccl
