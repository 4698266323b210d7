#include "compiler/host/widen_to_f32.h"

#include <cpuid.h>
#include <immintrin.h>

#include <algorithm>

#include "compiler/ir/float_conversions.h"

namespace ember::host::fast {
namespace {

// Below this many elements a conversion runs on the calling thread (it is memory bound; the
// pool's hand-off costs more than it saves).
constexpr int64_t kParallelElements = int64_t{1} << 16;

// fn(begin, end) over [0, n): on the calling thread when small, else split across the pool.
template <typename Fn>
void InRanges(int64_t n, ThreadPool& pool, Fn fn) {
  if (n < kParallelElements || pool.size() == 1) {
    fn(0, n);
    return;
  }
  pool.ParallelFor(n, kParallelElements / 4, fn);
}

// f16 arrays through F16C, 8 lanes at a time: its conversions round to nearest even, keep
// subnormals and overflow to inf exactly as WidenF16/NarrowF16 do; only NaNs differ (F16C keeps
// their payloads), so those are replaced by the quiet NaN, sign kept, that the evaluator makes.
// The scalar conversions took 4 ns per element: narrowing a 128x512 f16 dot's result cost 8x
// the dot.
bool UseF16c() {
  // F16C from CPUID leaf 1 (ECX bit 29): clang's __builtin_cpu_supports does not know "f16c".
  static const bool f16c = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __builtin_cpu_supports("avx2") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 &&
           (ecx & bit_F16C) != 0;
  }();
  return f16c;
}

__attribute__((target("avx2,f16c"))) void WidenF16Lanes(const uint16_t* src, int64_t n,
                                                          float* dst) {
  const __m256i sign = _mm256_set1_epi32(static_cast<int>(0x80000000u));
  const __m256i quiet = _mm256_set1_epi32(0x7FC00000);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 f = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
    const __m256 nan = _mm256_cmp_ps(f, f, _CMP_UNORD_Q);
    const __m256 canonical = _mm256_castsi256_ps(
        _mm256_or_si256(_mm256_and_si256(_mm256_castps_si256(f), sign), quiet));
    _mm256_storeu_ps(dst + i, _mm256_blendv_ps(f, canonical, nan));
  }
  for (; i < n; ++i) dst[i] = WidenF16(src[i]);
}

__attribute__((target("avx2,f16c"))) void NarrowF16Lanes(const float* src, int64_t n,
                                                           uint16_t* dst) {
  const __m128i sign = _mm_set1_epi16(static_cast<int16_t>(0x8000u));
  const __m128i quiet = _mm_set1_epi16(0x7E00);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(src + i);
    const __m128i h = _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256i nan32 = _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    const __m128i nan16 = _mm_packs_epi32(_mm256_castsi256_si128(nan32),
                                          _mm256_extracti128_si256(nan32, 1));
    const __m128i canonical = _mm_or_si128(_mm_and_si128(h, sign), quiet);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm_blendv_epi8(h, canonical, nan16));
  }
  for (; i < n; ++i) dst[i] = NarrowF16(src[i]);
}

// bf16 arrays 8 lanes at a time with AVX2, the same bits as WidenBF16/NarrowBF16 (the scalar
// loops do not vectorize at -O2: narrowing a convolution's bf16 result cost a fifth of it).
bool UseAvx2() {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
}

__attribute__((target("avx2"))) void WidenBF16Lanes(const uint16_t* src, int64_t n, float* dst) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i wide =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_slli_epi32(wide, 16));
  }
  for (; i < n; ++i) dst[i] = WidenBF16(src[i]);
}

__attribute__((target("avx2"))) void NarrowBF16Lanes(const float* src, int64_t n,
                                                     uint16_t* dst) {
  const __m256i magnitude_mask = _mm256_set1_epi32(0x7FFFFFFF);
  const __m256i inf = _mm256_set1_epi32(0x7F800000);
  const __m256i half = _mm256_set1_epi32(0x7FFF);
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i sign = _mm256_set1_epi32(0x8000);
  const __m256i quiet = _mm256_set1_epi32(0x7FC0);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
    const __m256i high = _mm256_srli_epi32(bits, 16);
    // Round to nearest even (a carry into the exponent makes inf of the largest values).
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(bits, _mm256_add_epi32(half, _mm256_and_si256(high, one))), 16);
    // NaN: quiet, sign kept.
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(bits, magnitude_mask), inf);
    const __m256i canonical = _mm256_or_si256(_mm256_and_si256(high, sign), quiet);
    const __m256i r = _mm256_blendv_epi8(rounded, canonical, nan);
    // The eight 16-bit results from the 32-bit lanes, in order.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm256_castsi256_si128(packed));
  }
  for (; i < n; ++i) dst[i] = NarrowBF16(src[i]);
}

}  // namespace

bool WidensToF32(ir::ElementType type) {
  if (type == ir::ElementType::kF32) return true;
  const int bytes = ir::StorageBytes(type);
  return ir::NarrowFloatFormat(type) != nullptr && (bytes == 1 || bytes == 2);
}

uint16_t NarrowF16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u);  // quiet NaN
  // 65520 (halfway between the largest f16, 65504, and 2^16) and above round to inf (ties go to
  // the even 2^16); inf itself too.
  if (magnitude >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);
  if (magnitude < 0x38800000u) {
    // Below 2^-14: an f16 subnormal (or zero, or 2^-14 after rounding up). Adding 0.5 puts the
    // value where an f32 ulp is 2^-24, the f16 subnormal step, so the FPU's round-to-nearest-even
    // addition does the rounding; the mantissa bits are then the f16 bits.
    const float shifted = std::bit_cast<float>(magnitude) + 0.5f;
    return static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(shifted) - 0x3F000000u));
  }
  // Normal: rebias the exponent (-(127 - 15) << 23) and round the 13 dropped bits to nearest
  // even; a carry out of the mantissa correctly bumps the exponent.
  const uint32_t odd = (magnitude >> 13) & 1u;
  return static_cast<uint16_t>(sign | ((magnitude + 0xC8000FFFu + odd) >> 13));
}

F32Converter::F32Converter(ir::ElementType type) : type_(type) {
  if (ir::StorageBytes(type) == 1) {
    format_ = ir::NarrowFloatFormat(type);
    if (format_ != nullptr) {
      for (uint32_t b = 0; b < 256; ++b) byte_values_[b] = DecodeFloat(*format_, b);
    }
  }
}

float F32Converter::Widen(const void* src, int64_t i) const {
  switch (type_) {
    case ir::ElementType::kF32:
      return static_cast<const float*>(src)[i];
    case ir::ElementType::kBF16:
      return WidenBF16(static_cast<const uint16_t*>(src)[i]);
    case ir::ElementType::kF16:
      return WidenF16(static_cast<const uint16_t*>(src)[i]);
    default:
      return byte_values_[static_cast<const uint8_t*>(src)[i]];
  }
}

void F32Converter::WidenRange(const void* src, int64_t begin, int64_t end, float* dst) const {
  switch (type_) {
    case ir::ElementType::kF32:
      std::copy(static_cast<const float*>(src) + begin, static_cast<const float*>(src) + end,
                dst + begin);
      return;
    case ir::ElementType::kBF16: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      if (UseAvx2()) {
        WidenBF16Lanes(s + begin, end - begin, dst + begin);
        return;
      }
      for (int64_t i = begin; i < end; ++i) dst[i] = WidenBF16(s[i]);
      return;
    }
    case ir::ElementType::kF16: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      if (UseF16c()) {
        WidenF16Lanes(s + begin, end - begin, dst + begin);
        return;
      }
      for (int64_t i = begin; i < end; ++i) dst[i] = WidenF16(s[i]);
      return;
    }
    default: {
      const uint8_t* s = static_cast<const uint8_t*>(src);
      for (int64_t i = begin; i < end; ++i) dst[i] = byte_values_[s[i]];
      return;
    }
  }
}

void F32Converter::NarrowRange(const float* src, int64_t begin, int64_t end, void* dst) const {
  switch (type_) {
    case ir::ElementType::kF32:
      std::copy(src + begin, src + end, static_cast<float*>(dst) + begin);
      return;
    case ir::ElementType::kBF16: {
      uint16_t* d = static_cast<uint16_t*>(dst);
      if (UseAvx2()) {
        NarrowBF16Lanes(src + begin, end - begin, d + begin);
        return;
      }
      for (int64_t i = begin; i < end; ++i) d[i] = NarrowBF16(src[i]);
      return;
    }
    case ir::ElementType::kF16: {
      uint16_t* d = static_cast<uint16_t*>(dst);
      if (UseF16c()) {
        NarrowF16Lanes(src + begin, end - begin, d + begin);
        return;
      }
      for (int64_t i = begin; i < end; ++i) d[i] = NarrowF16(src[i]);
      return;
    }
    default: {
      // The one-byte formats: the exact generic rounding (results are few next to the work of
      // the dot or convolution that made them).
      uint8_t* d = static_cast<uint8_t*>(dst);
      for (int64_t i = begin; i < end; ++i) {
        d[i] = static_cast<uint8_t>(EncodeFloat(*format_, static_cast<double>(src[i])));
      }
      return;
    }
  }
}

void F32Converter::WidenAll(const void* src, int64_t n, float* dst, ThreadPool& pool) const {
  InRanges(n, pool, [&](int64_t b, int64_t e) { WidenRange(src, b, e, dst); });
}

void F32Converter::NarrowAll(const float* src, int64_t n, void* dst, ThreadPool& pool) const {
  InRanges(n, pool, [&](int64_t b, int64_t e) { NarrowRange(src, b, e, dst); });
}

}  // namespace ember::host::fast
