// PJRT_Buffer_Type <-> ir::ElementType. The C enum's numbers are not the xla.PrimitiveType ones.
#ifndef EMBER_PJRT_PLUGIN_ELEMENT_TYPES_H_
#define EMBER_PJRT_PLUGIN_ELEMENT_TYPES_H_

#include "absl/status/statusor.h"
#include "compiler/ir/element_type.h"
#include "pjrt_plugin/include/pjrt_c_api.h"

namespace ember::pjrt {

// Array element types only: INVALID, TOKEN and unknown numbers are errors naming the value.
// Takes the raw integer (see RawEnumValue): callers may pass any value.
absl::StatusOr<ir::ElementType> FromPjrtBufferType(int32_t type);
PJRT_Buffer_Type ToPjrtBufferType(ir::ElementType type);

}  // namespace ember::pjrt

#endif  // EMBER_PJRT_PLUGIN_ELEMENT_TYPES_H_
