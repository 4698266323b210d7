// Shared by the code generator's differential tests: the element types the emitters take, their
// special values, random inputs mixing both, and NaN recognition.
#ifndef EMBER_TESTS_COMPILER_CODEGEN_DIFFERENTIAL_INPUTS_H_
#define EMBER_TESTS_COMPILER_CODEGEN_DIFFERENTIAL_INPUTS_H_

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "compiler/ir/float_conversions.h"
#include "compiler/ir/literal.h"
#include "compiler/ir/native_types.h"

namespace ember::codegen::test_inputs {

using ir::ElementType;

struct TypeInfo {
  ElementType type;
  const char* mlir;
};
constexpr TypeInfo kTypes[] = {
    {ElementType::kPred, "i1"},  {ElementType::kS8, "i8"},    {ElementType::kS16, "i16"},
    {ElementType::kS32, "i32"},  {ElementType::kS64, "i64"},  {ElementType::kU8, "ui8"},
    {ElementType::kU16, "ui16"}, {ElementType::kU32, "ui32"}, {ElementType::kU64, "ui64"},
    {ElementType::kBF16, "bf16"}, {ElementType::kF16, "f16"}, {ElementType::kF32, "f32"},
    {ElementType::kF64, "f64"}};

inline const char* Mlir(ElementType t) {
  for (const TypeInfo& info : kTypes) {
    if (info.type == t) return info.mlir;
  }
  return "?";
}

inline bool IsF(ElementType t) { return ir::IsFloat(t); }
inline int Width(ElementType t) { return t == ElementType::kPred ? 8 : 8 * ir::StorageBytes(t); }

// Bit patterns worth testing for each type.
inline std::vector<uint64_t> Specials(ElementType t) {
  switch (t) {
    case ElementType::kPred:
      return {0, 1};
    case ElementType::kBF16:
      return {0x7FC0, 0xFFC0, 0x7F81, 0x0000, 0x8000, 0x7F80, 0xFF80, 0x0001, 0x8001,
              0x3F80, 0xBF80, 0x7F7F, 0xFF7F, 0x4020, 0xC020, 0x3F00, 0x4120};
    case ElementType::kF16:
      return {0x7E00, 0xFE00, 0x7C01, 0x0000, 0x8000, 0x7C00, 0xFC00, 0x0001, 0x8001,
              0x3C00, 0xBC00, 0x7BFF, 0xFBFF, 0x4100, 0xC100, 0x3800, 0x4900,
              0xFD00, 0x7E01};  // a signalling NaN with its high payload bit, a quiet one's low
    case ElementType::kF32:
      return {0x7FC00000, 0xFFC00000, 0x7F800001, 0x00000000, 0x80000000, 0x7F800000,
              0xFF800000, 0x00000001, 0x80000001, 0x3F800000, 0xBF800000, 0x7F7FFFFF,
              0xFF7FFFFF, 0x40200000, 0xC0200000, 0x3F000000, 0x4F000000, 0xCF000000,
              0x5F800000, 0x4B800001};
    case ElementType::kF64:
      return {0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, 0,
              0x8000000000000000, 0x7FF0000000000000, 0xFFF0000000000000, 1,
              0x8000000000000001, 0x3FF0000000000000, 0xBFF0000000000000, 0x7FEFFFFFFFFFFFFF,
              0x4004000000000000, 0xC004000000000000, 0x3FE0000000000000, 0x43E0000000000000,
              0xC3E0000000000000, 0x41E0000000000000, 0x36A0000000000000};
    default: {
      const int w = Width(t);
      const uint64_t mask = w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
      const uint64_t min = uint64_t{1} << (w - 1);
      std::vector<uint64_t> v = {0, 1, mask /* -1 */, min /* INT_MIN */, min - 1, 2, 3,
                                 static_cast<uint64_t>(w - 1), static_cast<uint64_t>(w),
                                 static_cast<uint64_t>(w + 1), static_cast<uint64_t>(2 * w),
                                 mask - 1 /* -2 */, 7};
      for (uint64_t& x : v) x &= mask;
      return v;
    }
  }
}

// Random elements: a third random bit patterns, the rest moderate values of the type.
inline uint64_t RandomBits(ElementType t, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> value(-40, 40);
  const bool raw = rng() % 3 == 0;
  const int w = Width(t);
  const uint64_t mask = w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
  if (t == ElementType::kPred) return rng() & 1;
  if (raw) return rng() & mask;
  const double v = value(rng);
  switch (t) {
    case ElementType::kF64: {
      uint64_t b;
      std::memcpy(&b, &v, 8);
      return b;
    }
    case ElementType::kF32:
    case ElementType::kBF16: {
      const float f = static_cast<float>(v);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return t == ElementType::kF32 ? b : b >> 16;
    }
    case ElementType::kF16:
      return ir::F16::FromDouble(v).bits;
    default:
      return static_cast<uint64_t>(static_cast<int64_t>(v)) & mask;
  }
}

// `operands` arrays of n elements of `types`: the first specials^2 rows pair every special of
// operand 0 with every special of operand 1 (unary ops: each special), the rest random.
inline std::vector<ir::Literal> MakeInputs(const std::vector<ElementType>& types, int64_t n,
                                    uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<ir::Literal> out;
  for (size_t k = 0; k < types.size(); ++k) {
    const ElementType t = types[k];
    ir::Literal lit = ir::Literal::Create(ir::Shape::Make(t, {n}).value()).value();
    const std::vector<uint64_t> s0 = Specials(types[0]);
    const std::vector<uint64_t> s = Specials(t);
    const int bytes = ir::StorageBytes(t);
    for (int64_t i = 0; i < n; ++i) {
      uint64_t bits;
      const int64_t pairs = static_cast<int64_t>(s0.size() * s.size());
      if (i < pairs) {
        bits = k == 0 ? s0[i / s.size()] : s[i % s.size()];
      } else {
        bits = RandomBits(t, rng);
      }
      std::memcpy(lit.mutable_bytes().data() + i * bytes, &bits, bytes);
    }
    out.push_back(std::move(lit));
  }
  return out;
}

inline bool IsNan(ElementType t, uint64_t b) {
  switch (t) {
    case ElementType::kBF16: return (b & 0x7FFF) > 0x7F80;
    case ElementType::kF16: return (b & 0x7FFF) > 0x7C00;
    case ElementType::kF32: return (b & 0x7FFFFFFF) > 0x7F800000;
    case ElementType::kF64: return (b & 0x7FFFFFFFFFFFFFFF) > 0x7FF0000000000000;
    default: {
      // The f8/f6/f4 formats: whatever their encoding calls NaN.
      const FloatFormat* format = ir::NarrowFloatFormat(t);
      return format != nullptr && std::isnan(DecodeFloat(*format, static_cast<uint32_t>(b)));
    }
  }
}

}  // namespace ember::codegen::test_inputs

#endif  // EMBER_TESTS_COMPILER_CODEGEN_DIFFERENTIAL_INPUTS_H_
