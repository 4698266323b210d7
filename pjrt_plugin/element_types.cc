#include "pjrt_plugin/element_types.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace ember::pjrt {
namespace {

using ir::ElementType;

constexpr std::pair<PJRT_Buffer_Type, ElementType> kTypes[] = {
    {PJRT_Buffer_Type_PRED, ElementType::kPred},
    {PJRT_Buffer_Type_S1, ElementType::kS1},
    {PJRT_Buffer_Type_S2, ElementType::kS2},
    {PJRT_Buffer_Type_S4, ElementType::kS4},
    {PJRT_Buffer_Type_S8, ElementType::kS8},
    {PJRT_Buffer_Type_S16, ElementType::kS16},
    {PJRT_Buffer_Type_S32, ElementType::kS32},
    {PJRT_Buffer_Type_S64, ElementType::kS64},
    {PJRT_Buffer_Type_U1, ElementType::kU1},
    {PJRT_Buffer_Type_U2, ElementType::kU2},
    {PJRT_Buffer_Type_U4, ElementType::kU4},
    {PJRT_Buffer_Type_U8, ElementType::kU8},
    {PJRT_Buffer_Type_U16, ElementType::kU16},
    {PJRT_Buffer_Type_U32, ElementType::kU32},
    {PJRT_Buffer_Type_U64, ElementType::kU64},
    {PJRT_Buffer_Type_F16, ElementType::kF16},
    {PJRT_Buffer_Type_BF16, ElementType::kBF16},
    {PJRT_Buffer_Type_F32, ElementType::kF32},
    {PJRT_Buffer_Type_F64, ElementType::kF64},
    {PJRT_Buffer_Type_C64, ElementType::kC64},
    {PJRT_Buffer_Type_C128, ElementType::kC128},
    {PJRT_Buffer_Type_F4E2M1FN, ElementType::kF4E2M1FN},
    {PJRT_Buffer_Type_F6E2M3FN, ElementType::kF6E2M3FN},
    {PJRT_Buffer_Type_F6E3M2FN, ElementType::kF6E3M2FN},
    {PJRT_Buffer_Type_F8E3M4, ElementType::kF8E3M4},
    {PJRT_Buffer_Type_F8E4M3, ElementType::kF8E4M3},
    {PJRT_Buffer_Type_F8E4M3FN, ElementType::kF8E4M3FN},
    {PJRT_Buffer_Type_F8E4M3FNUZ, ElementType::kF8E4M3FNUZ},
    {PJRT_Buffer_Type_F8E4M3B11FNUZ, ElementType::kF8E4M3B11FNUZ},
    {PJRT_Buffer_Type_F8E5M2, ElementType::kF8E5M2},
    {PJRT_Buffer_Type_F8E5M2FNUZ, ElementType::kF8E5M2FNUZ},
    {PJRT_Buffer_Type_F8E8M0FNU, ElementType::kF8E8M0FNU},
};

}  // namespace

absl::StatusOr<ir::ElementType> FromPjrtBufferType(int32_t type) {
  for (const auto& [pjrt, ir] : kTypes) {
    if (static_cast<int32_t>(pjrt) == type) return ir;
  }
  if (type == PJRT_Buffer_Type_TOKEN) {
    return absl::InvalidArgumentError("element type TOKEN cannot be held in an array buffer");
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown or unsupported element type ", type,
                   type == PJRT_Buffer_Type_INVALID ? " (INVALID)" : ""));
}

PJRT_Buffer_Type ToPjrtBufferType(ir::ElementType type) {
  for (const auto& [pjrt, ir] : kTypes) {
    if (ir == type) return pjrt;
  }
  // Token results of a program (ordered effects) are zero-byte buffers of type TOKEN.
  if (type == ElementType::kToken) return PJRT_Buffer_Type_TOKEN;
  return PJRT_Buffer_Type_INVALID;
}

}  // namespace ember::pjrt
