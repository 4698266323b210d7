// The narrow float format (base/float_formats.h) of each IR element type that has one.
#ifndef EMBER_COMPILER_IR_FLOAT_CONVERSIONS_H_
#define EMBER_COMPILER_IR_FLOAT_CONVERSIONS_H_

#include "base/float_formats.h"
#include "compiler/ir/element_type.h"

namespace ember::ir {

// The format of a narrow float type (f16, bf16, f8*, f6*, f4*); nullptr for any other type
// (f32 and f64 are native C++ types and need no format).
constexpr const FloatFormat* NarrowFloatFormat(ElementType type) {
  switch (type) {
    case ElementType::kF16:
      return &kF16Format;
    case ElementType::kBF16:
      return &kBF16Format;
    case ElementType::kF8E5M2:
      return &kF8E5M2Format;
    case ElementType::kF8E4M3:
      return &kF8E4M3Format;
    case ElementType::kF8E3M4:
      return &kF8E3M4Format;
    case ElementType::kF8E4M3FN:
      return &kF8E4M3FNFormat;
    case ElementType::kF8E4M3FNUZ:
      return &kF8E4M3FNUZFormat;
    case ElementType::kF8E5M2FNUZ:
      return &kF8E5M2FNUZFormat;
    case ElementType::kF8E4M3B11FNUZ:
      return &kF8E4M3B11FNUZFormat;
    case ElementType::kF8E8M0FNU:
      return &kF8E8M0FNUFormat;
    case ElementType::kF6E2M3FN:
      return &kF6E2M3FNFormat;
    case ElementType::kF6E3M2FN:
      return &kF6E3M2FNFormat;
    case ElementType::kF4E2M1FN:
      return &kF4E2M1FNFormat;
    default:
      return nullptr;
  }
}

}  // namespace ember::ir

#endif  // EMBER_COMPILER_IR_FLOAT_CONVERSIONS_H_
