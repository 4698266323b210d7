// Table of array element types and their valid random host values (see the header).
// Sub-byte sizes follow ml_dtypes: int1/int2/int4 and float4/float6 use one byte per element.
#include "tests/capi/element_types.h"

#include <stdexcept>

namespace ember::capi_test {

const std::vector<ElementTypeInfo>& ArrayElementTypes() {
  static const std::vector<ElementTypeInfo> kTypes = {
      {PJRT_Buffer_Type_PRED, "PRED", 1, 1, false},
      {PJRT_Buffer_Type_S1, "S1", 1, 1, true},
      {PJRT_Buffer_Type_S2, "S2", 1, 2, true},
      {PJRT_Buffer_Type_S4, "S4", 1, 4, true},
      {PJRT_Buffer_Type_S8, "S8", 1, 8, true},
      {PJRT_Buffer_Type_S16, "S16", 2, 16, true},
      {PJRT_Buffer_Type_S32, "S32", 4, 32, true},
      {PJRT_Buffer_Type_S64, "S64", 8, 64, true},
      {PJRT_Buffer_Type_U1, "U1", 1, 1, false},
      {PJRT_Buffer_Type_U2, "U2", 1, 2, false},
      {PJRT_Buffer_Type_U4, "U4", 1, 4, false},
      {PJRT_Buffer_Type_U8, "U8", 1, 8, false},
      {PJRT_Buffer_Type_U16, "U16", 2, 16, false},
      {PJRT_Buffer_Type_U32, "U32", 4, 32, false},
      {PJRT_Buffer_Type_U64, "U64", 8, 64, false},
      {PJRT_Buffer_Type_F16, "F16", 2, 16, false},
      {PJRT_Buffer_Type_BF16, "BF16", 2, 16, false},
      {PJRT_Buffer_Type_F32, "F32", 4, 32, false},
      {PJRT_Buffer_Type_F64, "F64", 8, 64, false},
      {PJRT_Buffer_Type_C64, "C64", 8, 64, false},
      {PJRT_Buffer_Type_C128, "C128", 16, 128, false},
      {PJRT_Buffer_Type_F8E5M2, "F8E5M2", 1, 8, false},
      {PJRT_Buffer_Type_F8E4M3FN, "F8E4M3FN", 1, 8, false},
      {PJRT_Buffer_Type_F8E4M3B11FNUZ, "F8E4M3B11FNUZ", 1, 8, false},
      {PJRT_Buffer_Type_F8E5M2FNUZ, "F8E5M2FNUZ", 1, 8, false},
      {PJRT_Buffer_Type_F8E4M3FNUZ, "F8E4M3FNUZ", 1, 8, false},
      {PJRT_Buffer_Type_F8E4M3, "F8E4M3", 1, 8, false},
      {PJRT_Buffer_Type_F8E3M4, "F8E3M4", 1, 8, false},
      {PJRT_Buffer_Type_F8E8M0FNU, "F8E8M0FNU", 1, 8, false},
      {PJRT_Buffer_Type_F4E2M1FN, "F4E2M1FN", 1, 4, false},
      {PJRT_Buffer_Type_F6E2M3FN, "F6E2M3FN", 1, 6, false},
      {PJRT_Buffer_Type_F6E3M2FN, "F6E3M2FN", 1, 6, false},
  };
  return kTypes;
}

const ElementTypeInfo& InfoFor(PJRT_Buffer_Type type) {
  for (const ElementTypeInfo& info : ArrayElementTypes()) {
    if (info.type == type) return info;
  }
  throw std::invalid_argument("not an array element type: " + std::to_string(type));
}

std::vector<uint8_t> RandomElements(const ElementTypeInfo& info, int64_t count, std::mt19937& rng) {
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> out(static_cast<size_t>(count) * info.host_bytes);
  if (info.bits >= 8) {
    for (uint8_t& b : out) b = static_cast<uint8_t>(byte(rng));
    return out;
  }
  const int mask = (1 << info.bits) - 1;
  for (uint8_t& b : out) {
    int value = byte(rng) & mask;
    if (info.is_signed_int && (value & (1 << (info.bits - 1)))) value |= ~mask;  // sign-extend
    b = static_cast<uint8_t>(value & 0xFF);
  }
  return out;
}

}  // namespace ember::capi_test
