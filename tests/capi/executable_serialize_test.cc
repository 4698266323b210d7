// PJRT_Executable_Serialize / GetCompileOptions / DeserializeAndLoad through the C ABI: the
// round trip gives an executable with the same fingerprint and the same results, and corrupt
// bytes are clean errors that leave the client and the original executable working.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/capi/capi_test_util.h"

namespace ember::capi_test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kProgram[] = R"(
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.multiply %a, %b : tensor<4xf32>
  %1 = stablehlo.add %0, %a : tensor<4xf32>
  return %1 : tensor<4xf32>
}
)";

class CapiSerializeTest : public CapiTest {
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

  // Runs `loaded` on one device and returns its only output.
  std::vector<float> Run(PJRT_LoadedExecutable* loaded, const std::vector<float>& a,
                         const std::vector<float>& b) {
    BufferPtr x = UploadF32(client_.get(), FirstDevice(), a, {4});
    BufferPtr y = UploadF32(client_.get(), FirstDevice(), b, {4});
    PJRT_Buffer* inputs[] = {x.get(), y.get()};
    PJRT_Buffer* const* lists[] = {inputs};
    PJRT_Buffer* outputs[1] = {nullptr};
    PJRT_Buffer** output_lists[] = {outputs};
    PJRT_Event* done[1] = {nullptr};
    auto options = EMBER_ARGS(PJRT_ExecuteOptions);
    auto args = EMBER_ARGS(PJRT_LoadedExecutable_Execute_Args);
    args.executable = loaded;
    args.options = &options;
    args.argument_lists = lists;
    args.num_devices = 1;
    args.num_args = 2;
    args.output_lists = output_lists;
    args.device_complete_events = done;
    EXPECT_TRUE(IsOk(api_->PJRT_LoadedExecutable_Execute(&args)));
    if (done[0] != nullptr) {
      EXPECT_TRUE(Await(done[0]).ok());
    }
    EventPtr owned_done(done[0]);
    BufferPtr out(outputs[0]);
    return out ? ToHostF32(out.get()) : std::vector<float>{};
  }

  PJRT_Executable* GetExecutable(PJRT_LoadedExecutable* loaded) {
    auto args = EMBER_ARGS(PJRT_LoadedExecutable_GetExecutable_Args);
    args.loaded_executable = loaded;
    EXPECT_TRUE(IsOk(api_->PJRT_LoadedExecutable_GetExecutable(&args)));
    return args.executable;
  }

  void DestroyExecutable(PJRT_Executable* e) {
    auto args = EMBER_ARGS(PJRT_Executable_Destroy_Args);
    args.executable = e;
    EXPECT_TRUE(IsOk(api_->PJRT_Executable_Destroy(&args)));
  }

  std::string Fingerprint(PJRT_Executable* e) {
    auto args = EMBER_ARGS(PJRT_Executable_Fingerprint_Args);
    args.executable = e;
    EXPECT_TRUE(IsOk(api_->PJRT_Executable_Fingerprint(&args)));
    return std::string(args.executable_fingerprint, args.executable_fingerprint_size);
  }

  std::string Serialize(PJRT_Executable* e) {
    auto args = EMBER_ARGS(PJRT_Executable_Serialize_Args);
    args.executable = e;
    EXPECT_TRUE(IsOk(api_->PJRT_Executable_Serialize(&args)));
    std::string bytes(args.serialized_bytes, args.serialized_bytes_size);
    args.serialized_executable_deleter(args.serialized_executable);
    return bytes;
  }

  PJRT_Error* Load(const std::string& bytes, PJRT_LoadedExecutable** out) {
    auto args = EMBER_ARGS(PJRT_Executable_DeserializeAndLoad_Args);
    args.client = client_.get();
    args.serialized_executable = bytes.data();
    args.serialized_executable_size = bytes.size();
    PJRT_Error* error = api_->PJRT_Executable_DeserializeAndLoad(&args);
    *out = args.loaded_executable;
    return error;
  }
};

TEST_F(CapiSerializeTest, RoundTripKeepsFingerprintAndResults) {
  LoadedPtr original = Compile(kProgram);
  ASSERT_NE(original, nullptr);
  PJRT_Executable* exe = GetExecutable(original.get());
  const std::string bytes = Serialize(exe);
  EXPECT_THAT(bytes, StartsWith("EMBEREXE"));

  PJRT_LoadedExecutable* raw = nullptr;
  ASSERT_TRUE(IsOk(Load(bytes, &raw)));
  LoadedPtr loaded(raw, LoadedDeleter{api_});
  PJRT_Executable* loaded_exe = GetExecutable(loaded.get());
  EXPECT_EQ(Fingerprint(loaded_exe), Fingerprint(exe));
  // Serializing the loaded executable gives the same bytes again.
  EXPECT_EQ(Serialize(loaded_exe), bytes);

  const std::vector<float> a = {1, 2, 3, 4}, b = {0.5f, -1, 2, 0};
  const std::vector<float> want = {1.5f, 0, 9, 4};
  EXPECT_EQ(Run(original.get(), a, b), want);
  EXPECT_EQ(Run(loaded.get(), a, b), want);
  DestroyExecutable(loaded_exe);
  DestroyExecutable(exe);
}

TEST_F(CapiSerializeTest, GetCompileOptionsReturnsWhatCompileReceived) {
  LoadedPtr original = Compile(kProgram);
  ASSERT_NE(original, nullptr);
  PJRT_Executable* exe = GetExecutable(original.get());
  auto args = EMBER_ARGS(PJRT_Executable_GetCompileOptions_Args);
  args.executable = exe;
  ASSERT_TRUE(IsOk(api_->PJRT_Executable_GetCompileOptions(&args)));
  EXPECT_EQ(args.serialized_bytes_size, 0u);  // Compile got no options
  args.serialized_compile_options_deleter(args.serialized_compile_options);
  DestroyExecutable(exe);
}

TEST_F(CapiSerializeTest, CorruptBytesAreCleanErrorsAndNothingIsLost) {
  LoadedPtr original = Compile(kProgram);
  ASSERT_NE(original, nullptr);
  PJRT_Executable* exe = GetExecutable(original.get());
  const std::string bytes = Serialize(exe);

  PJRT_LoadedExecutable* raw = nullptr;
  EXPECT_TRUE(IsError(Load("not an executable", &raw), PJRT_Error_Code_INVALID_ARGUMENT,
                      "not a serialized Ember executable"));
  EXPECT_EQ(raw, nullptr);
  for (size_t cut : {size_t{8}, size_t{12}, size_t{20}, bytes.size() - 1}) {
    EXPECT_TRUE(IsError(Load(bytes.substr(0, cut), &raw), PJRT_Error_Code_INVALID_ARGUMENT,
                        "truncated"))
        << "cut at " << cut;
    EXPECT_EQ(raw, nullptr);
  }
  std::string newer = bytes;
  newer[8] = 7;  // format version 7
  EXPECT_TRUE(IsError(Load(newer, &raw), PJRT_Error_Code_INVALID_ARGUMENT, "format version 7"));
  // A program that no longer compiles is the compiler's error, not a crash.
  std::string broken = bytes;
  const size_t at = broken.find("stablehlo.multiply");
  ASSERT_NE(at, std::string::npos);
  broken.replace(at, 18, "stablehlo.mulXiply");
  ErrorInfo error = TakeError(Load(broken, &raw));
  EXPECT_FALSE(error.ok());
  EXPECT_THAT(error.message, HasSubstr("mulXiply"));
  EXPECT_EQ(raw, nullptr);

  EXPECT_EQ(Run(original.get(), {1, 1, 1, 1}, {2, 2, 2, 2}), (std::vector<float>{3, 3, 3, 3}));
  DestroyExecutable(exe);
}

}  // namespace
}  // namespace ember::capi_test
