#include "collectives/types.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ember::collectives {

const char* DataTypeName(DataType type) {
  switch (type) {
    case DataType::kPred: return "pred";
    case DataType::kS8: return "s8";
    case DataType::kU8: return "u8";
    case DataType::kS16: return "s16";
    case DataType::kU16: return "u16";
    case DataType::kS32: return "s32";
    case DataType::kU32: return "u32";
    case DataType::kS64: return "s64";
    case DataType::kU64: return "u64";
    case DataType::kF16: return "f16";
    case DataType::kBF16: return "bf16";
    case DataType::kF32: return "f32";
    case DataType::kF64: return "f64";
    case DataType::kC64: return "c64";
    case DataType::kC128: return "c128";
    case DataType::kF8E4M3FN: return "f8e4m3fn";
    case DataType::kF8E5M2: return "f8e5m2";
  }
  return "unknown";
}

size_t DataTypeBytes(DataType type) {
  switch (type) {
    case DataType::kPred:
    case DataType::kS8:
    case DataType::kU8:
    case DataType::kF8E4M3FN:
    case DataType::kF8E5M2:
      return 1;
    case DataType::kS16:
    case DataType::kU16:
    case DataType::kF16:
    case DataType::kBF16:
      return 2;
    case DataType::kS32:
    case DataType::kU32:
    case DataType::kF32:
      return 4;
    case DataType::kS64:
    case DataType::kU64:
    case DataType::kF64:
    case DataType::kC64:
      return 8;
    case DataType::kC128:
      return 16;
  }
  return 1;
}

const char* ReductionKindName(ReductionKind kind) {
  switch (kind) {
    case ReductionKind::kSum: return "sum";
    case ReductionKind::kProduct: return "product";
    case ReductionKind::kMin: return "min";
    case ReductionKind::kMax: return "max";
    case ReductionKind::kAnd: return "and";
    case ReductionKind::kOr: return "or";
    case ReductionKind::kXor: return "xor";
  }
  return "unknown";
}

bool IsValidReduction(ReductionKind kind, DataType type) {
  const bool f8 = type == DataType::kF8E4M3FN || type == DataType::kF8E5M2;
  const bool complex = type == DataType::kC64 || type == DataType::kC128;
  const bool floating = type == DataType::kF16 || type == DataType::kBF16 ||
                        type == DataType::kF32 || type == DataType::kF64;
  if (f8) return false;
  switch (kind) {
    case ReductionKind::kSum:
    case ReductionKind::kProduct:
      return true;
    case ReductionKind::kMin:
    case ReductionKind::kMax:
      return !complex;
    case ReductionKind::kAnd:
    case ReductionKind::kOr:
    case ReductionKind::kXor:
      return !complex && !floating;
  }
  return false;
}

std::string CliqueKey::ToString() const {
  return absl::StrCat("devices [", absl::StrJoin(devices, ","), "]");
}

}  // namespace ember::collectives
