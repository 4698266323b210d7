// Internal to compiler/host: narrow float arrays (bf16, f16, the f8/f6/f4 storage types) widened
// to f32 and f32 results narrowed back, so the f32 dot and convolution kernels compute them the
// way XLA:CPU does: operands upconverted exactly, f32 accumulation, one round-to-nearest-even at
// the end (NaN stays NaN, overflow gives the format's inf/NaN/saturation, as base/float_formats.h
// and so the evaluator). Also the per-thread f32 scratch those widened copies live in.
#ifndef EMBER_COMPILER_HOST_WIDEN_TO_F32_H_
#define EMBER_COMPILER_HOST_WIDEN_TO_F32_H_

#include <array>
#include <bit>
#include <cstdint>
#include <type_traits>

#include "base/float_formats.h"
#include "compiler/host/thread_pool.h"
#include "compiler/host/thread_scratch.h"
#include "compiler/ir/element_type.h"
#include "compiler/ir/native_types.h"

namespace ember::host::fast {

// f32 itself, and every narrow float stored in one or two bytes.
bool WidensToF32(ir::ElementType type);

// The narrow float storage types (ir::NarrowFloat: bf16, f16, the f8/f6/f4 types), which the
// library thunks read through their f32 value and write with one rounding from double, as the
// evaluator does.
template <typename T>
struct IsNarrowFloatType : std::false_type {};
template <ir::ElementType K>
struct IsNarrowFloatType<ir::NarrowFloat<K>> : std::true_type {};
template <typename T>
constexpr bool kIsNarrowFloat = IsNarrowFloatType<T>::value;

// bf16 <-> f32: exactly FloatToBF16 / BF16ToFloat of base/float_formats.h, inline for the loops.
inline float WidenBF16(uint16_t bits) { return std::bit_cast<float>(uint32_t{bits} << 16); }
inline uint16_t NarrowBF16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) {  // NaN: quiet, sign kept
    return static_cast<uint16_t>(((bits >> 16) & 0x8000u) | 0x7FC0u);
  }
  bits += 0x7FFFu + ((bits >> 16) & 1u);  // round to nearest even; overflow carries into inf
  return static_cast<uint16_t>(bits >> 16);
}

// f16 <-> f32 by bit manipulation, equal to F16ToFloat / FloatToF16 (the generic
// EncodeFloat path) for every input; widen_to_f32_test checks all f16 values and the f32
// rounding boundaries.
inline float WidenF16(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t magnitude = h & 0x7FFFu;
  if (magnitude >= 0x7C00u) {  // inf; NaN becomes the quiet NaN, sign kept (as DecodeFloat)
    return std::bit_cast<float>(sign | (magnitude == 0x7C00u ? 0x7F800000u : 0x7FC00000u));
  }
  if (magnitude >= 0x0400u) {  // normal: rebias the exponent by 127 - 15
    return std::bit_cast<float>(sign | ((magnitude << 13) + 0x38000000u));
  }
  // Zero and subnormals: magnitude * 2^-24, exact in f32.
  return std::bit_cast<float>(sign |
                              std::bit_cast<uint32_t>(static_cast<float>(magnitude) * 0x1p-24f));
}
uint16_t NarrowF16(float value);

// Converts arrays of one element type from and to f32.
class F32Converter {
 public:
  // `type` must satisfy WidensToF32.
  explicit F32Converter(ir::ElementType type);
  ir::ElementType type() const { return type_; }
  bool is_f32() const { return type_ == ir::ElementType::kF32; }
  // Element `i` of `src` (an array of type()).
  float Widen(const void* src, int64_t i) const;
  // dst[0, n) = src[0, n) widened; split across `pool` when large.
  void WidenAll(const void* src, int64_t n, float* dst, ThreadPool& pool) const;
  // dst[0, n) = src[0, n) rounded to type(); split across `pool` when large.
  void NarrowAll(const float* src, int64_t n, void* dst, ThreadPool& pool) const;

 private:
  void WidenRange(const void* src, int64_t begin, int64_t end, float* dst) const;
  void NarrowRange(const float* src, int64_t begin, int64_t end, void* dst) const;
  ir::ElementType type_;
  const FloatFormat* format_ = nullptr;  // the one-byte formats
  std::array<float, 256> byte_values_{};  // one-byte formats: the value of every byte
};

// Per-thread f32 scratch for the widened copies of one dot or convolution call, slots 0..2
// (thread_scratch.h: kept between calls, given back after a call that needed more than 64 MiB).
struct WidenedOperands;
using F32Scratch = ThreadScratch<float, WidenedOperands>;

}  // namespace ember::host::fast

#endif  // EMBER_COMPILER_HOST_WIDEN_TO_F32_H_
