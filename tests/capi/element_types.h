// The array element types of PJRT_Buffer_Type with their host layout (one element per byte for
// sub-byte types, as numpy / ml_dtypes hold them) and valid random values for each, so a host ->
// device -> host round trip can be checked byte for byte.
#ifndef EMBER_TESTS_CAPI_ELEMENT_TYPES_H_
#define EMBER_TESTS_CAPI_ELEMENT_TYPES_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "pjrt_plugin/include/pjrt_c_api.h"

namespace ember::capi_test {

struct ElementTypeInfo {
  PJRT_Buffer_Type type;
  const char* name;
  int host_bytes;  // bytes per element in the host buffer
  int bits;        // significant bits per element (8 * host_bytes unless sub-byte or pred)
  bool is_signed_int;
};

// Every PJRT_Buffer_Type that describes an array element (all but INVALID and TOKEN).
const std::vector<ElementTypeInfo>& ArrayElementTypes();
const ElementTypeInfo& InfoFor(PJRT_Buffer_Type type);

// `count` valid elements in host layout: any bit pattern for >= 8-bit types, 0/1 for PRED, and
// for sub-byte types the value range of the type, sign-extended into the byte for signed ints
// (s4 in [-8, 7]) and zero-extended for unsigned ints and sub-byte floats (f4, f6).
std::vector<uint8_t> RandomElements(const ElementTypeInfo& info, int64_t count, std::mt19937& rng);

}  // namespace ember::capi_test

#endif  // EMBER_TESTS_CAPI_ELEMENT_TYPES_H_
