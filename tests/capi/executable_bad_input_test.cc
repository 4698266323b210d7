// Hostile input to compile and execute that the entry-level checks do not see: structs nested in
// the args (PJRT_Program, PJRT_ExecuteOptions) with a struct_size too small or absurd, and a
// buffer of another client, a buffer or executable of a client that was destroyed. Each is a
// clean error naming what is wrong, and the executable and buffers stay usable.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/capi/capi_test_util.h"

namespace ember::capi_test {
namespace {

using ::testing::HasSubstr;

constexpr char kProgram[] = R"(
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
})";

class CapiExecutableBadInputTest : public CapiTest {
 protected:
  void TearDown() override {
    if (loaded_ != nullptr) {
      auto args = EMBER_ARGS(PJRT_LoadedExecutable_Destroy_Args);
      args.executable = loaded_;
      TakeError(api_->PJRT_LoadedExecutable_Destroy(&args));
    }
    CapiTest::TearDown();
  }

  // Compiles kProgram on `client` (null: this test's client) into loaded_.
  ErrorInfo Compile(size_t program_struct_size, PJRT_Client* client = nullptr) {
    PJRT_Program program;
    std::memset(static_cast<void*>(&program), 0, sizeof(program));
    program.struct_size = program_struct_size;
    program.code = const_cast<char*>(kProgram);
    program.code_size = sizeof(kProgram) - 1;
    program.format = "mlir";
    program.format_size = 4;
    auto args = EMBER_ARGS(PJRT_Client_Compile_Args);
    args.client = client != nullptr ? client : client_.get();
    args.program = &program;
    ErrorInfo error = TakeError(api_->PJRT_Client_Compile(&args));
    if (error.ok()) loaded_ = args.executable;
    return error;
  }

  // Runs the loaded program on `x`; on success the result goes to `*out`.
  ErrorInfo Execute(PJRT_Buffer* x, size_t options_struct_size, BufferPtr* out) {
    PJRT_Buffer* inputs[] = {x};
    PJRT_Buffer* const* lists[] = {inputs};
    PJRT_Buffer* outputs[1] = {nullptr};
    PJRT_Buffer** output_lists[] = {outputs};
    auto options = EMBER_ARGS(PJRT_ExecuteOptions);
    options.struct_size = options_struct_size;
    auto args = EMBER_ARGS(PJRT_LoadedExecutable_Execute_Args);
    args.executable = loaded_;
    args.options = &options;
    args.argument_lists = lists;
    args.num_devices = 1;
    args.num_args = 1;
    args.output_lists = output_lists;
    ErrorInfo error = TakeError(api_->PJRT_LoadedExecutable_Execute(&args));
    if (error.ok()) out->reset(outputs[0]);
    return error;
  }

  // A second client and a buffer of `data` on its first device.
  BufferPtr UploadToAnotherClient(ClientPtr* other, const std::vector<float>& data) {
    ErrorInfo created;
    *other = CreateClient({}, &created);
    EXPECT_TRUE(created.ok()) << created;
    if (!created.ok()) return nullptr;
    auto devices = EMBER_ARGS(PJRT_Client_AddressableDevices_Args);
    devices.client = other->get();
    EXPECT_TRUE(IsOk(api_->PJRT_Client_AddressableDevices(&devices)));
    return UploadF32(other->get(), devices.addressable_devices[0], data, {4});
  }

  PJRT_LoadedExecutable* loaded_ = nullptr;
};

TEST_F(CapiExecutableBadInputTest, NestedStructSizesAreChecked) {
  for (size_t size : {size_t{0}, size_t{3}, PJRT_Program_STRUCT_SIZE - 1, SIZE_MAX}) {
    ErrorInfo error = Compile(size);
    EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT) << size << ": " << error;
    EXPECT_THAT(error.message, HasSubstr("`program->struct_size` is " + std::to_string(size)));
  }
  ASSERT_TRUE(Compile(PJRT_Program_STRUCT_SIZE).ok());

  const std::vector<float> data = {1, 2, 3, 4};
  BufferPtr x = UploadF32(client_.get(), FirstDevice(), data, {4});
  ASSERT_NE(x, nullptr);
  for (size_t size : {size_t{0}, size_t{8}, SIZE_MAX}) {
    BufferPtr out;
    ErrorInfo error = Execute(x.get(), size, &out);
    EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT) << size << ": " << error;
    EXPECT_THAT(error.message, HasSubstr("`options->struct_size` is " + std::to_string(size)));
    EXPECT_EQ(out, nullptr);
  }
  // Nothing was lost: the executable and the argument still work.
  BufferPtr out;
  ASSERT_TRUE(Execute(x.get(), PJRT_ExecuteOptions_STRUCT_SIZE, &out).ok());
  EXPECT_EQ(ToHostF32(out.get()), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_EQ(ToHostF32(x.get()), data);
}

TEST_F(CapiExecutableBadInputTest, ABufferOfAnotherClientIsNamedAsSuch) {
  ASSERT_TRUE(Compile(PJRT_Program_STRUCT_SIZE).ok());
  ClientPtr other;
  const std::vector<float> data = {1, 2, 3, 4};
  BufferPtr foreign = UploadToAnotherClient(&other, data);
  ASSERT_NE(foreign, nullptr);
  BufferPtr out;
  ErrorInfo error = Execute(foreign.get(), PJRT_ExecuteOptions_STRUCT_SIZE, &out);
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT) << error;
  EXPECT_THAT(error.message, HasSubstr("argument 0 is a buffer of another PJRT client"));
  EXPECT_EQ(ToHostF32(foreign.get()), data);
}

// PJRT lets a framework destroy a client before its buffers. Their data stays readable, but the
// client's device handles went with it: using one where a device is needed is an error that
// says so (before, PJRT_Buffer_Device read the freed client, and a copy or execute compared
// against a dangling pointer that a new client could reuse).
TEST_F(CapiExecutableBadInputTest, ABufferOfADestroyedClientIsNamedAsSuch) {
  ASSERT_TRUE(Compile(PJRT_Program_STRUCT_SIZE).ok());
  ClientPtr other;
  const std::vector<float> data = {1, 2, 3, 4};
  BufferPtr orphan = UploadToAnotherClient(&other, data);
  ASSERT_NE(orphan, nullptr);
  other.reset();  // PJRT_Client_Destroy
  // A new client may take the old one's address; the orphan still must not pass for its buffer.
  ErrorInfo created;
  ClientPtr newer = CreateClient({}, &created);
  ASSERT_TRUE(created.ok()) << created;

  BufferPtr out;
  ErrorInfo error = Execute(orphan.get(), PJRT_ExecuteOptions_STRUCT_SIZE, &out);
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT) << error;
  EXPECT_THAT(error.message, HasSubstr("argument 0 for device 0 belongs to a client that was "
                                       "destroyed"));
  EXPECT_EQ(out, nullptr);

  auto device = EMBER_ARGS(PJRT_Buffer_Device_Args);
  device.buffer = orphan.get();
  error = TakeError(api_->PJRT_Buffer_Device(&device));
  EXPECT_EQ(error.code, PJRT_Error_Code_FAILED_PRECONDITION) << error;
  EXPECT_THAT(error.message, HasSubstr("PJRT_Buffer_Device: the buffer belongs to a client that "
                                       "was destroyed"));
  auto memory = EMBER_ARGS(PJRT_Buffer_Memory_Args);
  memory.buffer = orphan.get();
  error = TakeError(api_->PJRT_Buffer_Memory(&memory));
  EXPECT_EQ(error.code, PJRT_Error_Code_FAILED_PRECONDITION) << error;

  auto copy = EMBER_ARGS(PJRT_Buffer_CopyToDevice_Args);
  copy.buffer = orphan.get();
  copy.dst_device = FirstDevice();
  error = TakeError(api_->PJRT_Buffer_CopyToDevice(&copy));
  EXPECT_EQ(error.code, PJRT_Error_Code_FAILED_PRECONDITION) << error;
  EXPECT_THAT(error.message, HasSubstr("PJRT_Buffer_CopyToDevice: the buffer belongs to a client "
                                       "that was destroyed"));
  EXPECT_EQ(copy.dst_buffer, nullptr);

  // The data is still there, and the executable still works on this client's buffers.
  EXPECT_EQ(ToHostF32(orphan.get()), data);
  BufferPtr x = UploadF32(client_.get(), FirstDevice(), data, {4});
  ASSERT_TRUE(Execute(x.get(), PJRT_ExecuteOptions_STRUCT_SIZE, &out).ok());
  EXPECT_EQ(ToHostF32(out.get()), (std::vector<float>{2, 4, 6, 8}));
}

TEST_F(CapiExecutableBadInputTest, AnExecutableOfADestroyedClientIsNamedAsSuch) {
  ErrorInfo created;
  ClientPtr other = CreateClient({}, &created);
  ASSERT_TRUE(created.ok()) << created;
  ASSERT_TRUE(Compile(PJRT_Program_STRUCT_SIZE, other.get()).ok());  // TearDown destroys it
  other.reset();

  const std::vector<float> data = {1, 2, 3, 4};
  BufferPtr x = UploadF32(client_.get(), FirstDevice(), data, {4});
  BufferPtr out;
  ErrorInfo error = Execute(x.get(), PJRT_ExecuteOptions_STRUCT_SIZE, &out);
  EXPECT_EQ(error.code, PJRT_Error_Code_FAILED_PRECONDITION) << error;
  EXPECT_THAT(error.message, HasSubstr("loaded by a client that was destroyed"));
  auto devices = EMBER_ARGS(PJRT_LoadedExecutable_AddressableDevices_Args);
  devices.executable = loaded_;
  error = TakeError(api_->PJRT_LoadedExecutable_AddressableDevices(&devices));
  EXPECT_EQ(error.code, PJRT_Error_Code_FAILED_PRECONDITION) << error;
  EXPECT_EQ(ToHostF32(x.get()), data);
}

}  // namespace
}  // namespace ember::capi_test
