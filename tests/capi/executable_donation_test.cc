// Donation through the C ABI: a donated argument's memory becomes the aliased result's memory
// (same device pointer, no new device allocation, right values), and it does not when the
// caller keeps the argument (non_donatable_input_indices), passes the same buffer twice, or
// holds an external reference to it. PJRT_Executable_GetCompiledMemoryStats reports the aliased
// bytes and the arena of temporaries.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tests/capi/capi_test_util.h"

namespace ember::capi_test {
namespace {

constexpr int64_t kN = 4096;

// An SGD step: w - 0.25 * g, with w donated (jax.buffer_donor, or tf.aliasing_output naming the
// result as JAX writes it for platforms that alias).
std::string SgdProgram(const std::string& donor_attr) {
  return R"(
func.func @main(%w: tensor<4096xf32> {)" + donor_attr + R"(}, %g: tensor<4096xf32>) -> tensor<4096xf32> {
  %lr = stablehlo.constant dense<0.25> : tensor<f32>
  %b = stablehlo.broadcast_in_dim %lr, dims = [] : (tensor<f32>) -> tensor<4096xf32>
  %0 = stablehlo.multiply %b, %g : tensor<4096xf32>
  %1 = stablehlo.subtract %w, %0 : tensor<4096xf32>
  return %1 : tensor<4096xf32>
}
)";
}

class CapiDonationTest : public CapiTest {
 protected:
  struct LoadedDeleter {
    const PJRT_Api* api;
    void operator()(PJRT_LoadedExecutable* e) const {
      auto args = EMBER_ARGS(PJRT_LoadedExecutable_Destroy_Args);
      args.executable = e;
      TakeError(api->PJRT_LoadedExecutable_Destroy(&args));
    }
  };
  using LoadedPtr = std::unique_ptr<PJRT_LoadedExecutable, LoadedDeleter>;

  void SetUp() override {
    CapiTest::SetUp();
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
    w_.resize(kN);
    g_.resize(kN);
    for (float& x : w_) x = dist(rng);
    for (float& x : g_) x = dist(rng);
  }

  LoadedPtr Compile(const std::string& code) {
    PJRT_Program program;
    std::memset(static_cast<void*>(&program), 0, sizeof(program));
    program.struct_size = PJRT_Program_STRUCT_SIZE;
    program.code = const_cast<char*>(code.data());
    program.code_size = code.size();
    program.format = "mlir";
    program.format_size = 4;
    auto args = EMBER_ARGS(PJRT_Client_Compile_Args);
    args.client = client_.get();
    args.program = &program;
    EXPECT_TRUE(IsOk(api_->PJRT_Client_Compile(&args)));
    return LoadedPtr(args.executable, LoadedDeleter{api_});
  }

  uintptr_t Pointer(PJRT_Buffer* buffer) {
    auto args = EMBER_ARGS(PJRT_Buffer_UnsafePointer_Args);
    args.buffer = buffer;
    EXPECT_TRUE(IsOk(api_->PJRT_Buffer_UnsafePointer(&args)));
    return args.buffer_pointer;
  }

  int64_t NumAllocs() {
    auto args = EMBER_ARGS(PJRT_Device_MemoryStats_Args);
    args.device = FirstDevice();
    EXPECT_TRUE(IsOk(api_->PJRT_Device_MemoryStats(&args)));
    return args.num_allocs_is_set ? args.num_allocs : -1;
  }

  // Runs `loaded` on (a, b) and returns its output; `keep` lists non-donatable inputs.
  // With `refused` set, expects Execute to fail with INVALID_ARGUMENT naming donation instead.
  BufferPtr Run(PJRT_LoadedExecutable* loaded, PJRT_Buffer* a, PJRT_Buffer* b,
                const std::vector<int64_t>& keep = {}, bool refused = false) {
    PJRT_Buffer* inputs[] = {a, b};
    PJRT_Buffer* const* lists[] = {inputs};
    PJRT_Buffer* outputs[1] = {nullptr};
    PJRT_Buffer** output_lists[] = {outputs};
    PJRT_Event* done[1] = {nullptr};
    auto options = EMBER_ARGS(PJRT_ExecuteOptions);
    if (!keep.empty()) {
      options.non_donatable_input_indices = keep.data();
      options.num_non_donatable_input_indices = keep.size();
    }
    auto args = EMBER_ARGS(PJRT_LoadedExecutable_Execute_Args);
    args.executable = loaded;
    args.options = &options;
    args.argument_lists = lists;
    args.num_devices = 1;
    args.num_args = 2;
    args.output_lists = output_lists;
    args.device_complete_events = done;
    if (refused) {
      EXPECT_TRUE(IsError(api_->PJRT_LoadedExecutable_Execute(&args),
                          PJRT_Error_Code_INVALID_ARGUMENT, "donated"));
      EXPECT_EQ(outputs[0], nullptr);
      EXPECT_EQ(done[0], nullptr);
      return nullptr;
    }
    EXPECT_TRUE(IsOk(api_->PJRT_LoadedExecutable_Execute(&args)));
    EventPtr owned_done(done[0]);
    if (done[0] != nullptr) {
      EXPECT_TRUE(Await(done[0]).ok());
    }
    return BufferPtr(outputs[0]);
  }

  std::vector<float> Want(const std::vector<float>& w, const std::vector<float>& g) const {
    std::vector<float> want(kN);
    for (int64_t i = 0; i < kN; ++i) want[i] = w[i] - 0.25f * g[i];
    return want;
  }

  // GetCompiledMemoryStats of `loaded`: (alias bytes, temp bytes, peak bytes).
  std::vector<int64_t> CompiledStats(PJRT_LoadedExecutable* loaded) {
    auto get = EMBER_ARGS(PJRT_LoadedExecutable_GetExecutable_Args);
    get.loaded_executable = loaded;
    EXPECT_TRUE(IsOk(api_->PJRT_LoadedExecutable_GetExecutable(&get)));
    auto stats = EMBER_ARGS(PJRT_Executable_GetCompiledMemoryStats_Args);
    stats.executable = get.executable;
    EXPECT_TRUE(IsOk(api_->PJRT_Executable_GetCompiledMemoryStats(&stats)));
    auto destroy = EMBER_ARGS(PJRT_Executable_Destroy_Args);
    destroy.executable = get.executable;
    EXPECT_TRUE(IsOk(api_->PJRT_Executable_Destroy(&destroy)));
    return {stats.alias_size_in_bytes, stats.temp_size_in_bytes, stats.peak_memory_in_bytes};
  }

  std::vector<float> w_, g_;
};

TEST_F(CapiDonationTest, CompiledMemoryStatsCountAliasesAndTemporaries) {
  constexpr int64_t kBytes = kN * 4;
  LoadedPtr donated = Compile(SgdProgram("jax.buffer_donor = true"));
  LoadedPtr plain = Compile(SgdProgram(""));
  ASSERT_NE(donated, nullptr);
  ASSERT_NE(plain, nullptr);
  // One fused kernel, no temporaries; arguments w, g and the result, less the aliased result.
  EXPECT_EQ(CompiledStats(donated.get()), (std::vector<int64_t>{kBytes, 0, 2 * kBytes}));
  EXPECT_EQ(CompiledStats(plain.get()), (std::vector<int64_t>{0, 0, 3 * kBytes}));
  // exp(w) feeds a sort (its own kernel), so it is a temporary of the arena.
  LoadedPtr with_temp = Compile(R"(
func.func @main(%w: tensor<4096xf32>) -> tensor<4096xf32> {
  %0 = stablehlo.exponential %w : tensor<4096xf32>
  %1 = "stablehlo.sort"(%0) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<4096xf32>) -> tensor<4096xf32>
  return %1 : tensor<4096xf32>
}
)");
  ASSERT_NE(with_temp, nullptr);
  EXPECT_EQ(CompiledStats(with_temp.get()), (std::vector<int64_t>{0, kBytes, 3 * kBytes}));
}

TEST_F(CapiDonationTest, DonatedArgumentMemoryBecomesTheResult) {
  for (const std::string attr : {"jax.buffer_donor = true", "tf.aliasing_output = 0 : i32"}) {
    SCOPED_TRACE(attr);
    LoadedPtr loaded = Compile(SgdProgram(attr));
    ASSERT_NE(loaded, nullptr);
    BufferPtr w = UploadF32(client_.get(), FirstDevice(), w_, {kN});
    BufferPtr g = UploadF32(client_.get(), FirstDevice(), g_, {kN});
    const uintptr_t w_memory = Pointer(w.get());
    const int64_t allocs_before = NumAllocs();
    BufferPtr out = Run(loaded.get(), w.get(), g.get());
    ASSERT_NE(out, nullptr);
    EXPECT_TRUE(IsDeleted(w.get()));
    EXPECT_FALSE(IsDeleted(g.get()));
    EXPECT_EQ(Pointer(out.get()), w_memory);
    if (allocs_before >= 0) {
      EXPECT_EQ(NumAllocs(), allocs_before);  // no memory for the result
    }
    EXPECT_EQ(ToHostF32(out.get()), Want(w_, g_));
    EXPECT_EQ(ToHostF32(g.get()), g_);
    // The result can be donated again: a training loop keeps one buffer.
    std::vector<float> expect = Want(w_, g_);
    BufferPtr next = Run(loaded.get(), out.get(), g.get());
    ASSERT_NE(next, nullptr);
    EXPECT_EQ(Pointer(next.get()), w_memory);
    EXPECT_EQ(ToHostF32(next.get()), Want(expect, g_));
  }
}

TEST_F(CapiDonationTest, KeptArgumentIsNotOverwritten) {
  LoadedPtr loaded = Compile(SgdProgram("jax.buffer_donor = true"));
  ASSERT_NE(loaded, nullptr);
  BufferPtr w = UploadF32(client_.get(), FirstDevice(), w_, {kN});
  BufferPtr g = UploadF32(client_.get(), FirstDevice(), g_, {kN});
  BufferPtr out = Run(loaded.get(), w.get(), g.get(), /*keep=*/{0});
  ASSERT_NE(out, nullptr);
  EXPECT_FALSE(IsDeleted(w.get()));
  EXPECT_NE(Pointer(out.get()), Pointer(w.get()));
  EXPECT_EQ(ToHostF32(out.get()), Want(w_, g_));
  EXPECT_EQ(ToHostF32(w.get()), w_);
}

// A donated buffer passed again in the same call: refused, as XLA does ("Attempt to use a buffer
// that was ... donated"), and the buffer stays as it was. Kept (non-donatable) it is fine.
TEST_F(CapiDonationTest, SameBufferDonatedAndPassedAgainIsRefused) {
  LoadedPtr loaded = Compile(SgdProgram("jax.buffer_donor = true"));
  ASSERT_NE(loaded, nullptr);
  BufferPtr w = UploadF32(client_.get(), FirstDevice(), w_, {kN});
  const uintptr_t w_memory = Pointer(w.get());
  EXPECT_EQ(Run(loaded.get(), w.get(), w.get(), {}, /*refused=*/true), nullptr);
  EXPECT_FALSE(IsDeleted(w.get()));
  EXPECT_EQ(ToHostF32(w.get()), w_);
  BufferPtr out = Run(loaded.get(), w.get(), w.get(), {0});
  ASSERT_NE(out, nullptr);
  EXPECT_NE(Pointer(out.get()), w_memory);
  EXPECT_EQ(ToHostF32(out.get()), Want(w_, w_));
}

TEST_F(CapiDonationTest, ExternallyReferencedArgumentIsNotOverwritten) {
  LoadedPtr loaded = Compile(SgdProgram("jax.buffer_donor = true"));
  ASSERT_NE(loaded, nullptr);
  BufferPtr w = UploadF32(client_.get(), FirstDevice(), w_, {kN});
  BufferPtr g = UploadF32(client_.get(), FirstDevice(), g_, {kN});
  auto increase = EMBER_ARGS(PJRT_Buffer_IncreaseExternalReferenceCount_Args);
  increase.buffer = w.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_IncreaseExternalReferenceCount(&increase)));
  const uintptr_t w_memory = Pointer(w.get());
  BufferPtr out = Run(loaded.get(), w.get(), g.get());
  ASSERT_NE(out, nullptr);
  EXPECT_NE(Pointer(out.get()), w_memory);
  EXPECT_EQ(ToHostF32(out.get()), Want(w_, g_));
  // The external view still sees the argument.
  std::vector<float> seen(kN);
  std::memcpy(seen.data(), reinterpret_cast<const void*>(w_memory), kN * sizeof(float));
  EXPECT_EQ(seen, w_);
  auto decrease = EMBER_ARGS(PJRT_Buffer_DecreaseExternalReferenceCount_Args);
  decrease.buffer = w.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_DecreaseExternalReferenceCount(&decrease)));
}

}  // namespace
}  // namespace ember::capi_test
