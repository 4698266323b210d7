// Instruction-level tests of the PTX interpreter, written from the PTX ISA's definitions (and the
// guide's examples): each case wraps a few instructions in a kernel whose threads read 64 input
// bytes and write 64 output bytes, and checks the output bits. Then the load-time errors: an
// unknown instruction or modifier, an operand of the wrong type, an undefined label, recursion.
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/virtual_gpu/vgpu_test_util.h"

namespace ember::vgpu::testing {
namespace {

using ::testing::HasSubstr;

std::string Kernel(const std::string& body, int sm = 90) {
  return absl::StrCat(R"(.version 8.0
.target sm_)", sm, R"(
.address_size 64
.visible .entry t(.param .u64 p_in, .param .u64 p_out)
{
  .reg .pred %p<8>;
  .reg .b16 %h<8>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<16>;
  .reg .f32 %f<16>;
  .reg .f64 %fd<8>;
  .reg .b64 %in, %out, %off;
  .reg .b32 %thread;
  ld.param.u64 %in, [p_in];
  ld.param.u64 %out, [p_out];
  mov.u32 %thread, %tid.x;
  mul.wide.u32 %off, %thread, 64;
  add.s64 %in, %in, %off;
  add.s64 %out, %out, %off;
)", body, R"(
  ret;
}
)");
}

class PtxInstructionsTest : public VirtualGpuTest {
 protected:
  // Runs `body` on `threads` threads; `in` holds 64 bytes per thread. Returns 64 bytes per thread.
  std::vector<uint8_t> Run(const std::string& body, const std::vector<uint8_t>& in, int threads = 1) {
    std::vector<uint8_t> input = in;
    input.resize(64 * threads, 0);
    CUmodule m = Load(Kernel(body));
    if (m == nullptr) return {};
    CUdeviceptr din = Upload(input), dout = Alloc(64 * threads);
    EXPECT_EQ(cuMemsetD8(dout, 0, 64 * threads), CUDA_SUCCESS);
    const CUresult r = VirtualGpuTest::Run(Function(m, "t"), {1}, {static_cast<unsigned>(threads)}, {&din, &dout});
    EXPECT_EQ(r, CUDA_SUCCESS) << CuErrorText(r);
    return Download<uint8_t>(dout, 64 * threads);
  }
  template <class... T>
  static std::vector<uint8_t> Bytes(T... values) {
    std::vector<uint8_t> out;
    (Append(&out, values), ...);
    return out;
  }
  template <class T>
  static void Append(std::vector<uint8_t>* out, T v) {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(&v);
    out->insert(out->end(), p, p + sizeof(T));
  }
  template <class T>
  static T At(const std::vector<uint8_t>& bytes, size_t offset) {
    T v;
    std::memcpy(&v, bytes.data() + offset, sizeof(T));
    return v;
  }
  // Load-time error text for a kernel body.
  std::string LoadError(const std::string& body, int sm = 90) {
    CUmodule m = nullptr;
    char log[1024] = {};
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {log, reinterpret_cast<void*>(sizeof(log))};
    const std::string ptx = Kernel(body, sm);
    EXPECT_EQ(cuModuleLoadDataEx(&m, ptx.c_str(), 2, options, values), CUDA_ERROR_INVALID_PTX);
    return log;
  }
};

TEST_F(PtxInstructionsTest, ExtendedPrecisionAddAndMultiply) {
  // 64-bit add from 32-bit halves with the carry chain (PTX ISA add.cc/addc example).
  auto out = Run(R"(
  ld.global.u32 %r1, [%in]; ld.global.u32 %r2, [%in+4]; ld.global.u32 %r3, [%in+8]; ld.global.u32 %r4, [%in+12];
  add.cc.u32 %r5, %r1, %r3;
  addc.cc.u32 %r6, %r2, %r4;
  addc.u32 %r7, 0, 0;
  sub.cc.u32 %r8, %r1, %r3;
  subc.u32 %r9, %r2, %r4;
  mad.lo.cc.u32 %r10, %r1, %r3, 7;
  madc.hi.u32 %r11, %r1, %r3, 0;
  st.global.v4.u32 [%out], {%r5, %r6, %r7, %r8};
  st.global.v2.u32 [%out+16], {%r9, %r10};
  st.global.u32 [%out+24], %r11;)",
                 Bytes(0xffffffffu, 0x7fffffffu, 0x00000002u, 0x80000001u));
  const uint64_t a = 0x7fffffffffffffffull, b = 0x8000000100000002ull;
  const unsigned __int128 sum = static_cast<unsigned __int128>(a) + b;
  EXPECT_EQ(At<uint32_t>(out, 0), static_cast<uint32_t>(sum));
  EXPECT_EQ(At<uint32_t>(out, 4), static_cast<uint32_t>(sum >> 32));
  EXPECT_EQ(At<uint32_t>(out, 8), static_cast<uint32_t>(sum >> 64));
  EXPECT_EQ(At<uint32_t>(out, 12) | uint64_t{At<uint32_t>(out, 16)} << 32, a - b);
  const uint64_t product = uint64_t{0xffffffffu} * 2 + 7;
  EXPECT_EQ(At<uint32_t>(out, 20), static_cast<uint32_t>(product));
  EXPECT_EQ(At<uint32_t>(out, 24), static_cast<uint32_t>(product >> 32));  // high half plus carry
}

TEST_F(PtxInstructionsTest, BitFieldsPermutesAndShifts) {
  auto out = Run(R"(
  ld.global.u32 %r1, [%in]; ld.global.u32 %r2, [%in+4];
  bfe.u32 %r3, %r1, 4, 8;
  bfe.s32 %r4, %r1, 28, 8;
  bfi.b32 %r5, %r2, %r1, 8, 4;
  prmt.b32 %r6, %r1, %r2, 0x7531;
  prmt.b32.f4e %r7, %r1, %r2, 5;
  prmt.b32 %r8, %r1, 0, 0x8888;
  shf.l.clamp.b32 %r9, %r1, %r2, 40;
  shf.r.wrap.b32 %r10, %r1, %r2, 36;
  lop3.b32 %r11, %r1, %r2, 0xff00ff00, 0xe8;
  bfind.u32 %r12, %r1;
  bfind.shiftamt.s32 %r13, %r2;
  brev.b32 %r14, %r1;
  st.global.v4.u32 [%out], {%r3, %r4, %r5, %r6};
  st.global.v4.u32 [%out+16], {%r7, %r8, %r9, %r10};
  st.global.v4.u32 [%out+32], {%r11, %r12, %r13, %r14};)",
                 Bytes(0x9abcdef0u, 0x12345678u));
  const uint32_t a = 0x9abcdef0u, b = 0x12345678u;
  EXPECT_EQ(At<uint32_t>(out, 0), (a >> 4) & 0xff);
  EXPECT_EQ(At<uint32_t>(out, 4), 0xfffffff9u);  // bits 28..31 = 0x9, sign-extended from bit 31
  EXPECT_EQ(At<uint32_t>(out, 8), (a & ~0xf00u) | ((b & 0xf) << 8));
  const uint64_t both = uint64_t{b} << 32 | a;
  auto byte = [&](int i) { return static_cast<uint32_t>((both >> (8 * i)) & 0xff); };
  EXPECT_EQ(At<uint32_t>(out, 12), byte(1) | byte(3) << 8 | byte(5) << 16 | byte(7) << 24);
  EXPECT_EQ(At<uint32_t>(out, 16), byte(1) | byte(2) << 8 | byte(3) << 16 | byte(4) << 24);
  EXPECT_EQ(At<uint32_t>(out, 20), 0xffffffffu);  // the sign of byte 0 (0xf0) replicated
  EXPECT_EQ(At<uint32_t>(out, 24), a);             // clamped to 32: the low word shifted out
  EXPECT_EQ(At<uint32_t>(out, 28), static_cast<uint32_t>(both >> 4));
  EXPECT_EQ(At<uint32_t>(out, 32), (a & b) | (a & 0xff00ff00u) | (b & 0xff00ff00u));  // majority
  EXPECT_EQ(At<uint32_t>(out, 36), 31u);
  EXPECT_EQ(At<uint32_t>(out, 40), 31u - 28u);  // highest non-sign bit of b is 28
  uint32_t reversed = 0;
  for (int i = 0; i < 32; ++i) reversed |= ((a >> i) & 1u) << (31 - i);
  EXPECT_EQ(At<uint32_t>(out, 44), reversed);
}

TEST_F(PtxInstructionsTest, FloatComparisonsAndSelection) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = Run(R"(
  ld.global.f32 %f1, [%in]; ld.global.f32 %f2, [%in+4];
  setp.lt.f32 %p1, %f1, %f2;
  setp.ltu.f32 %p2, %f1, %f2;
  setp.nan.f32 %p3, %f1, %f2;
  setp.ge.and.f32 %p4|%p5, %f2, %f2, %p2;
  selp.u32 %r1, 1, 0, %p1;
  selp.u32 %r2, 1, 0, %p2;
  selp.u32 %r3, 1, 0, %p3;
  selp.u32 %r4, 1, 0, %p4;
  set.gtu.u32.f32 %r5, %f1, %f2;
  set.eq.f32.f32 %f3, %f2, %f2;
  slct.f32.f32 %f4, %f2, %f1, %f2;
  testp.notanumber.f32 %p6, %f1;
  selp.u32 %r6, 1, 0, %p6;
  st.global.v4.u32 [%out], {%r1, %r2, %r3, %r4};
  st.global.v2.u32 [%out+16], {%r5, %r6};
  st.global.v2.f32 [%out+24], {%f3, %f4};)",
                 Bytes(nan, 2.0f));
  EXPECT_EQ(At<uint32_t>(out, 0), 0u);  // ordered compare with NaN: false
  EXPECT_EQ(At<uint32_t>(out, 4), 1u);  // unordered: true
  EXPECT_EQ(At<uint32_t>(out, 8), 1u);
  EXPECT_EQ(At<uint32_t>(out, 12), 1u);  // (2 >= 2) and p2
  EXPECT_EQ(At<uint32_t>(out, 16), 0xffffffffu);
  EXPECT_EQ(At<uint32_t>(out, 20), 1u);
  EXPECT_EQ(At<float>(out, 24), 1.0f);
  EXPECT_EQ(At<float>(out, 28), 2.0f);  // c = 2 >= 0 selects a
}

TEST_F(PtxInstructionsTest, FloatRoundingFlushAndSpecialValues) {
  const float tiny = std::numeric_limits<float>::denorm_min() * 3;
  auto out = Run(R"(
  ld.global.f32 %f1, [%in]; ld.global.f32 %f2, [%in+4]; ld.global.f32 %f3, [%in+8];
  add.rz.f32 %f4, %f1, %f2;
  add.rp.f32 %f5, %f1, %f2;
  mul.ftz.f32 %f6, %f3, 1.0;
  mul.f32 %f7, %f3, 1.0;
  add.sat.f32 %f8, %f1, %f1;
  min.f32 %f9, %f3, 0fFFC00000;
  max.NaN.f32 %f10, %f1, 0fFFC00000;
  min.f32 %f11, 0f80000000, 0f00000000;
  div.rn.f32 %f12, %f1, 0f00000000;
  sqrt.rn.f32 %f13, 0fBF800000;
  st.global.v4.f32 [%out], {%f4, %f5, %f6, %f7};
  st.global.v4.f32 [%out+16], {%f8, %f9, %f10, %f11};
  st.global.v2.f32 [%out+32], {%f12, %f13};)",
                 Bytes(1.0f, 1e-8f, tiny));
  EXPECT_EQ(At<float>(out, 0), 1.0f);
  EXPECT_EQ(At<float>(out, 4), std::nextafter(1.0f, 2.0f));
  EXPECT_EQ(At<uint32_t>(out, 8), 0u);  // flushed
  EXPECT_EQ(At<float>(out, 12), tiny);  // subnormals are kept without .ftz
  EXPECT_EQ(At<float>(out, 16), 1.0f);  // saturated
  EXPECT_EQ(At<float>(out, 20), tiny);  // min with a NaN returns the number
  EXPECT_EQ(At<uint32_t>(out, 24), 0x7fffffffu);  // .NaN propagates the canonical NaN
  EXPECT_EQ(At<uint32_t>(out, 28), 0x80000000u);  // -0 orders below +0
  EXPECT_EQ(At<float>(out, 32), std::numeric_limits<float>::infinity());
  EXPECT_EQ(At<uint32_t>(out, 36), 0x7fffffffu);  // NaN results are canonical
}

TEST_F(PtxInstructionsTest, Conversions) {
  auto out = Run(R"(
  ld.global.f32 %f1, [%in]; ld.global.f64 %fd1, [%in+8]; ld.global.s32 %r1, [%in+16];
  cvt.rni.s32.f32 %r2, %f1;
  cvt.rmi.s32.f32 %r3, %f1;
  cvt.rzi.u8.f32 %r4, %f1;
  cvt.sat.s8.s32 %r5, %r1;
  cvt.rn.f32.f64 %f2, %fd1;
  cvt.rz.f32.f64 %f3, %fd1;
  cvt.rn.f16x2.f32 %r6, %f1, %f2;
  cvt.rn.bf16.f32 %h1, %f2;
  cvt.rna.tf32.f32 %r7, %f2;
  cvt.rzi.s32.f64 %r8, 0d41F0000000000000;
  cvt.s64.s8 %rd1, %r1;
  st.global.v4.u32 [%out], {%r2, %r3, %r4, %r5};
  st.global.v2.f32 [%out+16], {%f2, %f3};
  st.global.v2.u32 [%out+24], {%r6, %r7};
  st.global.u16 [%out+32], %h1;
  st.global.u32 [%out+36], %r8;
  st.global.u64 [%out+40], %rd1;)",
                 Bytes(-2.5f, 0.0f, 1.0000001192092896, int32_t{-300}));
  EXPECT_EQ(At<int32_t>(out, 0), -2);   // nearest even
  EXPECT_EQ(At<int32_t>(out, 4), -3);   // toward -inf
  EXPECT_EQ(At<uint32_t>(out, 8), 0u);  // negative to unsigned saturates at 0
  EXPECT_EQ(At<int32_t>(out, 12), static_cast<int32_t>(static_cast<uint8_t>(-128)));  // .sat to s8
  EXPECT_EQ(At<float>(out, 16), std::nextafter(1.0f, 2.0f));
  EXPECT_EQ(At<float>(out, 20), std::nextafter(1.0f, 2.0f));  // exact in f32
  EXPECT_EQ(At<uint32_t>(out, 24), 0xc1003c00u);  // {hi: -2.5, lo: 1.0} as f16
  EXPECT_EQ(At<uint32_t>(out, 28), 0x3f800000u);  // tf32 keeps 10 fraction bits
  EXPECT_EQ(At<uint16_t>(out, 32), 0x3f80);
  EXPECT_EQ(At<int32_t>(out, 36), 2147483647);  // 2^32 saturates
  EXPECT_EQ(At<int64_t>(out, 40), int64_t{-300 & 0xff} - 256);  // the low byte, sign-extended
}

TEST_F(PtxInstructionsTest, WarpShufflesVotesAndMatches) {
  std::vector<uint8_t> in(64 * 32, 0);
  for (int t = 0; t < 32; ++t) in[64 * t] = static_cast<uint8_t>(t % 5);
  auto out = Run(R"(
  ld.global.u8 %r1, [%in];
  mov.u32 %r2, %laneid;
  shfl.sync.idx.b32 %r3|%p1, %r2, 3, 0x181f, 0xffffffff;
  shfl.sync.up.b32 %r4|%p2, %r2, 2, 0, 0xffffffff;
  shfl.sync.bfly.b32 %r5, %r2, 5, 0x1f, 0xffffffff;
  setp.eq.u32 %p3, %r1, 0;
  vote.sync.uni.pred %p4, %p3, 0xffffffff;
  vote.sync.ballot.b32 %r6, %p3, 0xffffffff;
  match.all.sync.b32 %r7|%p5, 1, 0xffffffff;
  match.any.sync.b32 %r8, %r1, 0xffffffff;
  redux.sync.min.s32 %r9, %r2, 0xffffffff;
  selp.u32 %r10, 1, 0, %p1;
  selp.u32 %r11, 1, 0, %p2;
  selp.u32 %r12, 1, 0, %p4;
  st.global.v4.u32 [%out], {%r3, %r4, %r5, %r6};
  st.global.v4.u32 [%out+16], {%r7, %r8, %r9, %r10};
  st.global.v2.u32 [%out+32], {%r11, %r12};)",
                 in, 32);
  for (int lane = 0; lane < 32; ++lane) {
    const size_t o = 64 * lane;
    // idx with width 8 (segmask 0x18): lane 3 of each group of 8.
    EXPECT_EQ(At<uint32_t>(out, o + 0), static_cast<uint32_t>((lane & ~7) | 3)) << lane;
    EXPECT_EQ(At<uint32_t>(out, o + 4), static_cast<uint32_t>(lane >= 2 ? lane - 2 : lane)) << lane;
    EXPECT_EQ(At<uint32_t>(out, o + 8), static_cast<uint32_t>(lane ^ 5)) << lane;
    uint32_t ballot = 0, same = 0;
    for (int k = 0; k < 32; ++k) {
      if (k % 5 == 0) ballot |= 1u << k;
      if (k % 5 == lane % 5) same |= 1u << k;
    }
    EXPECT_EQ(At<uint32_t>(out, o + 12), ballot);
    EXPECT_EQ(At<uint32_t>(out, o + 16), 0xffffffffu);
    EXPECT_EQ(At<uint32_t>(out, o + 20), same);
    EXPECT_EQ(At<uint32_t>(out, o + 24), 0u);
    EXPECT_EQ(At<uint32_t>(out, o + 28), 1u);
    EXPECT_EQ(At<uint32_t>(out, o + 32), lane >= 2 ? 1u : 0u);
    EXPECT_EQ(At<uint32_t>(out, o + 36), 0u);  // not uniform
  }
}

TEST_F(PtxInstructionsTest, AtomicsAndBarrierReductions) {
  auto out = Run(R"(
  .shared .align 4 .b8 counters[16];
  mov.u32 %r1, %tid.x;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 st.shared.u32 [counters], 10;
  @%p1 st.shared.u32 [counters+4], 0;
  @%p1 st.shared.u32 [counters+8], 5;
  @%p1 st.shared.u32 [counters+12], 0;
  bar.sync 0;
  atom.shared.inc.u32 %r2, [counters], 40;
  atom.shared.dec.u32 %r3, [counters+8], 100;
  atom.shared.cas.b32 %r4, [counters+12], 0, 77;
  red.shared.add.u32 [counters+4], %r1;
  and.b32 %r5, %r1, 1;
  setp.eq.u32 %p2, %r5, 1;
  bar.red.popc.u32 %r6, 0, %p2;
  bar.red.or.pred %p3, 0, %p1;
  selp.u32 %r7, 1, 0, %p3;
  ld.shared.v4.u32 {%r8, %r9, %r10, %r11}, [counters];
  st.global.v4.u32 [%out], {%r8, %r9, %r10, %r11};
  st.global.v2.u32 [%out+16], {%r6, %r7};)",
                 {}, 64);
  for (int t = 0; t < 64; ++t) {
    const size_t o = 64 * t;
    // inc: 30 steps from 10 to 40, one wrap to 0, 33 more steps.
    EXPECT_EQ(At<uint32_t>(out, o + 0), 33u);
    EXPECT_EQ(At<uint32_t>(out, o + 4), 64u * 63u / 2u);
    // dec: 5 steps from 5 to 0, one wrap to 100, 58 more steps down.
    EXPECT_EQ(At<uint32_t>(out, o + 8), 42u);
    EXPECT_EQ(At<uint32_t>(out, o + 12), 77u);
    EXPECT_EQ(At<uint32_t>(out, o + 16), 32u);
    EXPECT_EQ(At<uint32_t>(out, o + 20), 1u);
  }
}

TEST_F(PtxInstructionsTest, LoadTimeErrorsNameTheLine) {
  // Line numbers count from the module text Kernel() builds: the body starts on line 20.
  EXPECT_THAT(LoadError("  frobnicate.u32 %r1, %r2;"),
              HasSubstr("kernel 't': line 20: unknown instruction 'frobnicate.u32'"));
  EXPECT_THAT(LoadError("  add.u32.sticky %r1, %r2, %r3;"), HasSubstr("unsupported modifier .sticky for add"));
  EXPECT_THAT(LoadError("  add.f32 %fd1, %f2, %f3;"), HasSubstr("register %fd1 of type .f64 cannot hold a .f32 result"));
  EXPECT_THAT(LoadError("  add.u32 %rd1, %r2, %r3;"), HasSubstr("register %rd1 of type .b64 cannot hold a .u32"));
  EXPECT_THAT(LoadError("  bra NOWHERE;"), HasSubstr("branch to undefined label NOWHERE"));
  EXPECT_THAT(LoadError("  add.u32 %r1, %r2, %undeclared;"), HasSubstr("undeclared register %undeclared"));
  EXPECT_THAT(LoadError("  add.bf16 %h1, %h2, %h3;", 80), HasSubstr("add.bf16 requires sm_90"));
  EXPECT_THAT(LoadError("  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%f5,%f6,%f7,%f8};"),
              HasSubstr("unknown instruction 'mma.sync.aligned.m16n8k16"));
  const std::string recursive = R"(.version 8.0
.target sm_90
.address_size 64
.func f()
{
  call.uni f, ();
  ret;
}
.visible .entry t()
{
  call.uni f, ();
  ret;
}
)";
  CUmodule m = nullptr;
  const CUresult r = cuModuleLoadData(&m, recursive.c_str());
  EXPECT_EQ(r, CUDA_ERROR_INVALID_PTX);
  EXPECT_THAT(CuErrorText(r), HasSubstr("recursive call to 'f'"));
}

}  // namespace
}  // namespace ember::vgpu::testing
