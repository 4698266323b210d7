// Known kernels run on the virtual GPU and match host references on random inputs. The common
// set (grid-stride loop, shared-memory tree reduction, warp-shuffle reduction, tiled transpose,
// atomics histogram, f16/bf16 math, divergent branches) comes both from the real NVRTC (CUDA 13,
// kernels/known_kernels.cu) and from LLVM 19's NVPTX backend (kernels/known_kernels.ll, built by
// llc-19), each for sm_80 and sm_90; integer and float instructions, calls with local memory and
// warp primitives come from NVRTC.
#include <algorithm>
#include <cstdio>
#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/virtual_gpu/driver/virtual_gpu_hooks.h"
#include "tests/virtual_gpu/nvrtc_compiler.h"
#include "tests/virtual_gpu/reference_math.h"
#include "tests/virtual_gpu/vgpu_test_util.h"

namespace ember::vgpu::testing {
namespace {

struct KernelSource {
  const char* compiler;  // "nvrtc" or "llvm"
  int sm;
};

std::string SourceName(const ::testing::TestParamInfo<KernelSource>& info) {
  return absl::StrCat(info.param.compiler, "_sm", info.param.sm);
}

class KnownKernelsTest : public VirtualGpuTest, public ::testing::WithParamInterface<KernelSource> {
 protected:
  void SetUp() override {
    VirtualGpuTest::SetUp();
    const KernelSource& source = GetParam();
    std::string ptx;
    if (std::string(source.compiler) == "llvm") {
      if (!LlvmMissingReason().empty()) GTEST_SKIP() << LlvmMissingReason();
      ptx = ReadLlvmPtx("known_kernels", source.sm);
    } else {
      absl::StatusOr<std::string> compiled = CompileToPtx(
          ReadSourceFile("kernels/known_kernels.cu"), absl::StrCat("compute_", source.sm));
      ASSERT_TRUE(compiled.ok()) << compiled.status();
      ptx = *std::move(compiled);
    }
    ASSERT_FALSE(ptx.empty());
    module_ = Load(ptx);
    ASSERT_NE(module_, nullptr);
  }
  CUmodule module_ = nullptr;
  std::mt19937 rng_{1234};
};

// Kernels only the CUDA C++ file has.
using NvrtcKernelsTest = KnownKernelsTest;

std::vector<float> RandomFloats(std::mt19937& rng, size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

TEST_P(KnownKernelsTest, GridStrideLoop) {
  const int n = 3000;
  std::vector<float> x = RandomFloats(rng_, n, -4, 4), y = RandomFloats(rng_, n, -4, 4);
  float a = 1.75f;
  CUdeviceptr dx = Upload(x), dy = Upload(y);
  EMBER_ASSERT_CU(Run(Function(module_, "grid_stride_saxpy"), {5}, {128}, {&a, &dx, &dy, (void*)&n}));
  std::vector<float> out = Download<float>(dy, n);
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], std::fma(a, x[i], y[i])) << i;
}

TEST_P(KnownKernelsTest, SharedMemoryTreeReduction) {
  const int n = 1000, block = 256, blocks = (n + block - 1) / block;
  std::vector<float> in = RandomFloats(rng_, n, -1, 1);
  CUdeviceptr din = Upload(in), dout = Alloc(blocks * sizeof(float));
  EMBER_ASSERT_CU(Run(Function(module_, "tree_reduce"), {static_cast<unsigned>(blocks)}, {block},
                      {&din, &dout, (void*)&n}, block * sizeof(float)));
  std::vector<float> out = Download<float>(dout, blocks);
  for (int b = 0; b < blocks; ++b) {
    std::vector<float> partial(block);
    for (int t = 0; t < block; ++t) partial[t] = b * block + t < n ? in[b * block + t] : 0.0f;
    for (int stride = block / 2; stride > 0; stride /= 2) {
      for (int t = 0; t < stride; ++t) partial[t] += partial[t + stride];
    }
    EXPECT_EQ(out[b], partial[0]) << "block " << b;
  }
}

TEST_P(KnownKernelsTest, WarpShuffleReduction) {
  const int n = 5000;
  std::vector<float> in = RandomFloats(rng_, n, 0, 1);
  CUdeviceptr din = Upload(in), dout = Upload(std::vector<float>{0.0f});
  EMBER_ASSERT_CU(Run(Function(module_, "warp_shuffle_reduce"), {4}, {96}, {&din, &dout, (void*)&n}));
  double reference = 0;
  for (float v : in) reference += v;
  // The warps' atomic additions land in an unspecified order: compare with a tolerance.
  EXPECT_NEAR(Download<float>(dout, 1)[0], reference, 1e-5 * reference);
}

TEST_P(KnownKernelsTest, TiledTranspose) {
  const int rows = 70, cols = 45;
  std::vector<float> in = RandomFloats(rng_, rows * cols, -10, 10);
  CUdeviceptr din = Upload(in), dout = Alloc(in.size() * sizeof(float));
  EMBER_ASSERT_CU(Run(Function(module_, "tiled_transpose"), {(cols + 31) / 32, (rows + 31) / 32}, {32, 8},
                      {&din, &dout, (void*)&rows, (void*)&cols}));
  std::vector<float> out = Download<float>(dout, in.size());
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) ASSERT_EQ(out[c * rows + r], in[r * cols + c]) << r << "," << c;
  }
}

TEST_P(KnownKernelsTest, AtomicsHistogram) {
  const int n = 4000, nbins = 37;
  std::uniform_int_distribution<unsigned> dist(0, 1000);
  std::vector<unsigned> in(n);
  for (unsigned& v : in) v = dist(rng_);
  std::vector<unsigned> expected(nbins, 0);
  for (unsigned v : in) ++expected[v % nbins];
  CUdeviceptr din = Upload(in), dbins = Upload(std::vector<unsigned>(nbins, 0));
  EMBER_ASSERT_CU(Run(Function(module_, "atomic_histogram"), {6}, {128},
                      {&din, &dbins, (void*)&n, (void*)&nbins}, nbins * sizeof(unsigned)));
  EXPECT_EQ(Download<unsigned>(dbins, nbins), expected);
}

TEST_P(KnownKernelsTest, HalfAndBfloat16Math) {
  const int n = 200;
  std::vector<float> af = RandomFloats(rng_, n, -3, 3), bf = RandomFloats(rng_, n, -3, 3);
  std::vector<uint16_t> a(n), b(n), c(n), d(n);
  for (int i = 0; i < n; ++i) {
    a[i] = RefToF16(af[i]);
    b[i] = RefToF16(bf[i]);
    c[i] = RefToBF16(bf[i] * 7.0);
    d[i] = RefToBF16(af[i] * 5.0);
  }
  CUdeviceptr da = Upload(a), db = Upload(b), dc = Upload(c), dd = Upload(d);
  CUdeviceptr dh = Alloc(4 * n * 2), dbo = Alloc(3 * n * 2), df = Alloc(2 * n * 4);
  EMBER_ASSERT_CU(Run(Function(module_, "half_math"), {2}, {128},
                      {&da, &db, &dc, &dd, &dh, &dbo, &df, (void*)&n}));
  std::vector<uint16_t> h = Download<uint16_t>(dh, 4 * n), bo = Download<uint16_t>(dbo, 3 * n);
  std::vector<float> f = Download<float>(df, 2 * n);
  for (int i = 0; i < n; ++i) {
    const double x = RefFromF16(a[i]), y = RefFromF16(b[i]);
    const double u = RefFromBF16(c[i]), v = RefFromBF16(d[i]);
    EXPECT_EQ(h[4 * i + 0], RefToF16(x + y)) << i;
    EXPECT_EQ(h[4 * i + 1], RefToF16(x * y)) << i;
    EXPECT_EQ(h[4 * i + 2], RefToF16(x * y + x)) << i;
    EXPECT_EQ(h[4 * i + 3], RefToF16(std::max(RefFromF16(RefToF16(x * y)), 0.5))) << i;
    EXPECT_EQ(bo[3 * i + 0], RefToBF16(u + v)) << i;
    EXPECT_EQ(bo[3 * i + 1], RefToBF16(u * v)) << i;
    EXPECT_EQ(bo[3 * i + 2], RefToBF16(static_cast<float>(u) * 3.0f)) << i;
    EXPECT_EQ(f[2 * i + 0], static_cast<float>(x) + static_cast<float>(v)) << i;
    EXPECT_EQ(f[2 * i + 1], static_cast<float>(RefFromF16(RefToF16(x - y)))) << i;
  }
}

int DivergentReference(int v) {
  int r = 0;
  if (v % 3 == 0) {
    for (int k = 0; k < (v & 7); ++k) r += k * v;
  } else if (v % 3 == 1) {
    int k = v;
    while (k > 1) {
      if (k & 1) {
        k = 3 * k + 1;
        continue;
      }
      k >>= 1;
      ++r;
    }
  } else {
    r = v < 0 ? -v : v * 2;
  }
  return r;
}

TEST_P(KnownKernelsTest, DivergentBranchesReconverge) {
  const int n = 160;  // five warps, all full
  std::uniform_int_distribution<int> dist(-50, 200);
  std::vector<int> in(n);
  for (int& v : in) v = dist(rng_);
  CUdeviceptr din = Upload(in), dout = Alloc(n * 4), dballots = Alloc(n / 32 * 4);
  EMBER_ASSERT_CU(Run(Function(module_, "divergent_branches"), {2}, {96}, {&din, &dout, &dballots, (void*)&n}));
  std::vector<int> out = Download<int>(dout, n);
  std::vector<unsigned> ballots = Download<unsigned>(dballots, n / 32);
  for (int i = 0; i < n; ++i) {
    const int lane = i % 96 % 32;
    const int r = DivergentReference(in[i]);
    const int left = lane == 0 ? 0 : DivergentReference(in[i - 1]);
    EXPECT_EQ(out[i], r + left) << i;
  }
  for (int w = 0; w < n / 32; ++w) {
    unsigned expected = 0;
    for (int lane = 0; lane < 32; ++lane) {
      if (DivergentReference(in[w * 32 + lane]) > 10) expected |= 1u << lane;
    }
    EXPECT_EQ(ballots[w], expected) << "warp " << w;
  }
}

TEST_P(NvrtcKernelsTest, IntegerInstructions) {
  const int n = 100;
  std::uniform_int_distribution<int> dist(-100000000, 100000000);
  std::vector<int> a(n), b(n);
  for (int i = 0; i < n; ++i) {
    a[i] = dist(rng_);
    b[i] = i % 9 == 0 ? 0 : dist(rng_) % 50000;
  }
  CUdeviceptr da = Upload(a), db = Upload(b), dout = Alloc(12 * n * 8);
  EMBER_ASSERT_CU(Run(Function(module_, "integer_ops"), {1}, {128}, {&da, &db, &dout, (void*)&n}));
  std::vector<long long> out = Download<long long>(dout, 12 * n);
  for (int i = 0; i < n; ++i) {
    const int x = a[i], y = b[i] == 0 ? 7 : b[i];
    const unsigned ux = static_cast<unsigned>(x), uy = static_cast<unsigned>(y);
    const long long* o = &out[12 * i];
    EXPECT_EQ(o[0], x / y) << i;
    EXPECT_EQ(o[1], x % y) << i;
    EXPECT_EQ(o[2], static_cast<int>((static_cast<long long>(x) * y) >> 32)) << i;
    EXPECT_EQ(o[3], static_cast<long long>((static_cast<unsigned long long>(ux) * uy) >> 32)) << i;
    EXPECT_EQ(o[4], std::popcount(ux)) << i;
    EXPECT_EQ(o[5], std::countl_zero(ux)) << i;
    unsigned reversed = 0;
    for (int k = 0; k < 32; ++k) reversed |= ((ux >> k) & 1u) << (31 - k);
    EXPECT_EQ(o[6], static_cast<long long>(reversed)) << i;
    const unsigned long long both = (static_cast<unsigned long long>(uy) << 32) | ux;
    EXPECT_EQ(o[7], static_cast<long long>(static_cast<unsigned>((both << (y & 31)) >> 32))) << i;
    const unsigned long long bytes = both;
    unsigned perm = 0;
    for (int k = 0; k < 4; ++k) perm |= static_cast<unsigned>((bytes >> (8 * ((0x5140 >> (4 * k)) & 7))) & 0xff) << (8 * k);
    EXPECT_EQ(o[8], static_cast<long long>(perm)) << i;
    EXPECT_EQ(o[9], std::max(x, y) - std::min(x, y)) << i;
    EXPECT_EQ(o[10], static_cast<long long>(x) * y + (static_cast<long long>(y) << 33)) << i;
    EXPECT_EQ(o[11], static_cast<long long>(static_cast<unsigned long long>(ux) * 0x9e3779b97f4a7c15ull >> 7)) << i;
  }
}

TEST_P(NvrtcKernelsTest, FloatRoundingConversionsAndMath) {
  const int n = 128;
  std::vector<float> a = RandomFloats(rng_, n, -10, 10), b = RandomFloats(rng_, n, -10, 10);
  for (float& v : b) {
    if (std::fabs(v) < 0.01f) v = 0.5f;
  }
  CUdeviceptr da = Upload(a), db = Upload(b), de = Alloc(8 * n * 4), dap = Alloc(4 * n * 4),
              di = Alloc(2 * n * 4), dd = Alloc(2 * n * 8);
  EMBER_ASSERT_CU(Run(Function(module_, "float_ops"), {1}, {128}, {&da, &db, &de, &dap, &di, &dd, (void*)&n}));
  std::vector<float> e = Download<float>(de, 8 * n), ap = Download<float>(dap, 4 * n);
  std::vector<int> ints = Download<int>(di, 2 * n);
  std::vector<double> dbl = Download<double>(dd, 2 * n);
  for (int i = 0; i < n; ++i) {
    const float x = a[i], y = b[i];
    const long double lx = x, ly = y;
    EXPECT_EQ(e[8 * i + 0], RefRoundFloat(lx + ly, RefRounding::kZero)) << i;
    EXPECT_EQ(e[8 * i + 1], RefRoundFloat(lx * ly, RefRounding::kDown)) << i;
    EXPECT_EQ(e[8 * i + 2], RefRoundFloat(lx / ly, RefRounding::kUp)) << i;
    EXPECT_EQ(e[8 * i + 3], std::sqrt(std::fabs(x))) << i;
    EXPECT_EQ(e[8 * i + 4], std::fma(x, y, -x)) << i;
    EXPECT_EQ(e[8 * i + 5], std::fmin(x, y)) << i;
    const int iv = static_cast<int>(x * 1000.0f) * 16777 + 1;
    EXPECT_EQ(e[8 * i + 6], RefRoundFloat(iv, RefRounding::kZero)) << i;
    EXPECT_EQ(e[8 * i + 7], std::trunc(x * 10.0f) + std::nearbyint(y * 10.0f)) << i;
    // The fast intrinsics: within their documented error.
    EXPECT_NEAR(ap[4 * i + 0], std::exp(x * 0.1f), 4e-6 * std::exp(x * 0.1f)) << i;
    EXPECT_NEAR(ap[4 * i + 1], std::log(std::fabs(y) + 1.0f), 2e-6 + 2e-6 * std::log(std::fabs(y) + 1.0f)) << i;
    EXPECT_NEAR(ap[4 * i + 2], std::sin(x * 0.3f), 7e-7) << i;  // 2^-20.5 absolute in [-pi, pi]
    EXPECT_NEAR(ap[4 * i + 3], 1.0f / std::sqrt(std::fabs(y) + 0.5f), 3e-7 / std::sqrt(std::fabs(y) + 0.5f)) << i;
    EXPECT_EQ(ints[2 * i + 0], static_cast<int>(std::nearbyint(x * 1000.0f))) << i;
    // Float-to-integer conversions saturate on the GPU.
    const float scaled = std::fabs(y) * 1e9f;
    const unsigned saturated = scaled >= 4294967296.0f ? 0xffffffffu : static_cast<unsigned>(scaled);
    EXPECT_EQ(ints[2 * i + 1], static_cast<int>(saturated)) << i;
    EXPECT_EQ(dbl[2 * i + 0], std::fma(static_cast<double>(x), static_cast<double>(y), 1.0 / 3.0)) << i;
    EXPECT_EQ(dbl[2 * i + 1], std::sqrt(static_cast<double>(std::fabs(x)))) << i;
  }
}

TEST_P(NvrtcKernelsTest, CallsAndLocalMemory) {
  const int n = 150;
  std::vector<float> in = RandomFloats(rng_, n + 8, -2, 2);
  CUdeviceptr din = Upload(in), dout = Alloc(n * 4);
  EMBER_ASSERT_CU(Run(Function(module_, "calls_and_local_memory"), {2}, {96}, {&din, &dout, (void*)&n}));
  std::vector<float> out = Download<float>(dout, n);
  for (int i = 0; i < n; ++i) {
    const int count = 1 + i % 7;
    float local[16];
    for (int k = 0; k < 16; ++k) local[k] = in[i + k % count] * (k + 1);
    float s = 0.0f;
    for (int k = 0; k < count; ++k) s += local[(k * 5) % 16];
    EXPECT_EQ(out[i], s * 0.5f) << i;
  }
}

TEST_P(NvrtcKernelsTest, WarpPrimitives) {
  std::uniform_int_distribution<int> dist(0, 120);
  std::vector<int> in(64);
  for (int& v : in) v = dist(rng_);
  CUdeviceptr din = Upload(in), dout = Alloc(6 * 64 * 4);
  EMBER_ASSERT_CU(Run(Function(module_, "warp_primitives"), {1}, {64}, {&din, &dout}));
  std::vector<unsigned> out = Download<unsigned>(dout, 6 * 64);
  for (int w = 0; w < 2; ++w) {
    unsigned sum = 0, mx = 0;
    bool any = false;
    for (int l = 0; l < 32; ++l) {
      sum += in[w * 32 + l];
      mx = std::max<unsigned>(mx, in[w * 32 + l]);
      any = any || in[w * 32 + l] > 100;
    }
    for (int l = 0; l < 32; ++l) {
      const int t = w * 32 + l;
      unsigned same = 0;
      for (int k = 0; k < 32; ++k) {
        if (in[w * 32 + k] % 4 == in[t] % 4) same |= 1u << k;
      }
      EXPECT_EQ(out[6 * t + 0], 1u);
      EXPECT_EQ(out[6 * t + 1], any ? 1u : 0u);
      EXPECT_EQ(out[6 * t + 2], same) << t;
      EXPECT_EQ(out[6 * t + 3], sum);
      EXPECT_EQ(out[6 * t + 4], mx);
      EXPECT_EQ(out[6 * t + 5], l % 3 == 0 ? 0x49249249u : 0u) << t;
    }
  }
}

// The interpreter's speed on a reduction (printed, never asserted: tests do not gate on time).
TEST_P(KnownKernelsTest, ReductionThroughput) {
  const int n = 1 << 16, block = 256, blocks = n / block;
  std::vector<float> in = RandomFloats(rng_, n, -1, 1);
  CUdeviceptr din = Upload(in), dout = Alloc(blocks * sizeof(float));
  uint64_t warp0 = 0, thread0 = 0, launches0 = 0, ns0 = 0, warp1 = 0, thread1 = 0, launches1 = 0, ns1 = 0;
  ember_vgpu_statistics(&warp0, &thread0, &launches0, &ns0);
  EMBER_ASSERT_CU(Run(Function(module_, "tree_reduce"), {static_cast<unsigned>(blocks)}, {block},
                      {&din, &dout, (void*)&n}, block * sizeof(float)));
  ember_vgpu_statistics(&warp1, &thread1, &launches1, &ns1);
  std::vector<float> out = Download<float>(dout, blocks);
  double sum = 0, reference = 0;
  for (float v : out) sum += v;
  for (float v : in) reference += v;
  EXPECT_NEAR(sum, reference, 1e-3);
  const double seconds = (ns1 - ns0) * 1e-9;
  std::printf("[ virtual GPU ] tree_reduce over %d floats (%s sm_%d): %.3g thread instructions "
              "(%.3g warp instructions) in %.3f s: %.3g thread instr/s, %.3g warp instr/s\n",
              n, GetParam().compiler, GetParam().sm, static_cast<double>(thread1 - thread0),
              static_cast<double>(warp1 - warp0), seconds, (thread1 - thread0) / seconds,
              (warp1 - warp0) / seconds);
}

INSTANTIATE_TEST_SUITE_P(Sources, KnownKernelsTest,
                         ::testing::Values(KernelSource{"nvrtc", 80}, KernelSource{"nvrtc", 90},
                                           KernelSource{"llvm", 80}, KernelSource{"llvm", 90}),
                         SourceName);
INSTANTIATE_TEST_SUITE_P(Sources, NvrtcKernelsTest,
                         ::testing::Values(KernelSource{"nvrtc", 80}, KernelSource{"nvrtc", 90}),
                         SourceName);

}  // namespace
}  // namespace ember::vgpu::testing
