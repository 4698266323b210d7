// Helpers shared by the instruction families: reading a register slot as a C++ value of the
// instruction's type and writing one back (zero-extended bits), and the lane loops for the common
// one-, two- and three-source shapes.
#ifndef EMBER_TESTS_VIRTUAL_GPU_PTX_ISA_UTIL_H_
#define EMBER_TESTS_VIRTUAL_GPU_PTX_ISA_UTIL_H_

#include <bit>
#include <cstdint>
#include <type_traits>

#include "tests/virtual_gpu/ptx/exec_state.h"

namespace ember::vgpu::ptx {

template <class T>
inline T As(uint64_t bits) {
  if constexpr (std::is_same_v<T, float>) {
    return std::bit_cast<float>(static_cast<uint32_t>(bits));
  } else if constexpr (std::is_same_v<T, double>) {
    return std::bit_cast<double>(bits);
  } else {
    return static_cast<T>(bits);
  }
}

template <class T>
inline uint64_t Bits(T value) {
  if constexpr (std::is_same_v<T, float>) {
    return std::bit_cast<uint32_t>(value);
  } else if constexpr (std::is_same_v<T, double>) {
    return std::bit_cast<uint64_t>(value);
  } else if constexpr (std::is_same_v<T, bool>) {
    return value ? 1 : 0;
  } else {
    return static_cast<uint64_t>(static_cast<std::make_unsigned_t<T>>(value));
  }
}

// d = F::Do(a) / F::Do(a, b) / F::Do(a, b, c) with sources of type S and result type R.
template <class S, class R, class F>
bool Unary(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  ForEachLane(mask, [&](int l) { d[l] = Bits<R>(F::Do(As<S>(a[l]))); });
  return true;
}
template <class S, class R, class F>
bool Binary(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const uint64_t* b = w.Slot(instr.ops[2]);
  ForEachLane(mask, [&](int l) { d[l] = Bits<R>(F::Do(As<S>(a[l]), As<S>(b[l]))); });
  return true;
}
template <class S, class R, class F>
bool Ternary(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const uint64_t* b = w.Slot(instr.ops[2]);
  const uint64_t* c = w.Slot(instr.ops[3]);
  ForEachLane(mask,
              [&](int l) { d[l] = Bits<R>(F::Do(As<S>(a[l]), As<S>(b[l]), As<S>(c[l]))); });
  return true;
}

// Picks the instantiation of H<T> for an integer type (nullptr for others).
#define EMBER_PTX_INT_TYPES(X) \
  X(kU16, uint16_t) X(kU32, uint32_t) X(kU64, uint64_t) X(kS16, int16_t) X(kS32, int32_t) \
  X(kS64, int64_t) X(kB16, uint16_t) X(kB32, uint32_t) X(kB64, uint64_t) X(kU8, uint8_t) \
  X(kS8, int8_t) X(kB8, uint8_t)

}  // namespace ember::vgpu::ptx

#endif  // EMBER_TESTS_VIRTUAL_GPU_PTX_ISA_UTIL_H_
