// Client-level conformance: XLA's pjrt_c_api_test client cases with their exact messages, plus
// create options (host_device_count, unknown names, garbage KV fields) and device identity
// (reference §7, §12, §13, §19).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "tests/capi/capi_test_util.h"

namespace ember::capi_test {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

TEST_F(PjrtCApiTest, PlatformName) {
  auto args = EMBER_ARGS(PJRT_Client_PlatformName_Args);
  args.client = client_.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Client_PlatformName(&args)));
  ASSERT_NE(args.platform_name, nullptr);
  EXPECT_EQ(std::string(args.platform_name, args.platform_name_size), "ember");
}

TEST_F(PjrtCApiTest, PlatformVersionIsNonEmpty) {
  auto args = EMBER_ARGS(PJRT_Client_PlatformVersion_Args);
  args.client = client_.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Client_PlatformVersion(&args)));
  ASSERT_NE(args.platform_version, nullptr);
  EXPECT_GT(args.platform_version_size, 0u);
}

TEST_F(PjrtCApiTest, ClientProcessIndex) {
  auto args = EMBER_ARGS(PJRT_Client_ProcessIndex_Args);
  args.client = client_.get();
  args.process_index = -1;
  ASSERT_TRUE(IsOk(api_->PJRT_Client_ProcessIndex(&args)));
  EXPECT_EQ(args.process_index, 0);
}

TEST_F(PjrtCApiTest, ClientDevices) {
  ASSERT_FALSE(devices_.empty());
  std::set<int> ids;
  for (PJRT_Device* device : devices_) {
    int id = DeviceId(device);
    EXPECT_GE(id, 0);
    EXPECT_TRUE(ids.insert(id).second) << "duplicate device id " << id;
  }
  // The same array (same pointers) on every call: the framework keys maps on them (§7).
  EXPECT_EQ(Devices(client_.get()), devices_);
}

TEST_F(PjrtCApiTest, ClientAddressableDevices) {
  std::vector<PJRT_Device*> addressable = AddressableDevices(client_.get());
  ASSERT_FALSE(addressable.empty());
  for (PJRT_Device* device : addressable) {
    EXPECT_GE(DeviceId(device), 0);
    EXPECT_THAT(devices_, Contains(device));
  }
}

TEST_F(PjrtCApiTest, LookupDevice) {
  auto args = EMBER_ARGS(PJRT_Client_LookupDevice_Args);
  args.client = client_.get();
  args.id = 0;
  ASSERT_TRUE(IsOk(api_->PJRT_Client_LookupDevice(&args)));
  ASSERT_NE(args.device, nullptr);
  EXPECT_EQ(DeviceId(args.device), 0);
  EXPECT_THAT(devices_, Contains(args.device));
}

TEST_F(PjrtCApiTest, LookupAddressableDevice) {
  auto args = EMBER_ARGS(PJRT_Client_LookupAddressableDevice_Args);
  args.client = client_.get();
  args.local_hardware_id = 0;
  ASSERT_TRUE(IsOk(api_->PJRT_Client_LookupAddressableDevice(&args)));
  ASSERT_NE(args.addressable_device, nullptr);
  auto hw = EMBER_ARGS(PJRT_Device_LocalHardwareId_Args);
  hw.device = args.addressable_device;
  hw.local_hardware_id = -1;
  ASSERT_TRUE(IsOk(api_->PJRT_Device_LocalHardwareId(&hw)));
  EXPECT_EQ(hw.local_hardware_id, 0);
}

TEST_F(PjrtCApiTest, LookupDeviceNegativeId) {
  auto args = EMBER_ARGS(PJRT_Client_LookupDevice_Args);
  args.client = client_.get();
  args.id = -1;
  ErrorInfo error = TakeError(api_->PJRT_Client_LookupDevice(&args));
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(error.message, "No matching device found for device_id -1");
}

TEST_F(PjrtCApiTest, LookupDeviceOutOfRangeId) {
  const int out_of_range = static_cast<int>(devices_.size());
  auto args = EMBER_ARGS(PJRT_Client_LookupDevice_Args);
  args.client = client_.get();
  args.id = out_of_range;
  ErrorInfo error = TakeError(api_->PJRT_Client_LookupDevice(&args));
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(error.message,
            "No matching device found for device_id " + std::to_string(out_of_range));
}

// Called at every client start; an error is tolerated, but if it succeeds the three follow-up
// calls are fatal on error (§13 step 1a). The topology is owned by the client.
TEST_F(PjrtCApiTest, ClientTopologyIsUsableIfProvided) {
  auto args = EMBER_ARGS(PJRT_Client_TopologyDescription_Args);
  args.client = client_.get();
  ErrorInfo error = TakeError(api_->PJRT_Client_TopologyDescription(&args));
  if (!error.ok()) {
    EXPECT_THAT(error.message, HasSubstr("PJRT_Client_TopologyDescription"));
    return;
  }
  ASSERT_NE(args.topology, nullptr);
  auto name = EMBER_ARGS(PJRT_TopologyDescription_PlatformName_Args);
  name.topology = args.topology;
  ASSERT_TRUE(IsOk(api_->PJRT_TopologyDescription_PlatformName(&name)));
  EXPECT_EQ(std::string(name.platform_name, name.platform_name_size), "ember");
  auto version = EMBER_ARGS(PJRT_TopologyDescription_PlatformVersion_Args);
  version.topology = args.topology;
  ASSERT_TRUE(IsOk(api_->PJRT_TopologyDescription_PlatformVersion(&version)));
  EXPECT_GT(version.platform_version_size, 0u);
  auto attributes = EMBER_ARGS(PJRT_TopologyDescription_Attributes_Args);
  attributes.topology = args.topology;
  ASSERT_TRUE(IsOk(api_->PJRT_TopologyDescription_Attributes(&attributes)));
  auto descriptions = EMBER_ARGS(PJRT_TopologyDescription_GetDeviceDescriptions_Args);
  descriptions.topology = args.topology;
  ErrorInfo described =
      TakeError(api_->PJRT_TopologyDescription_GetDeviceDescriptions(&descriptions));
  if (described.ok()) {
    EXPECT_EQ(descriptions.num_descriptions, devices_.size());
  }
}

// ---------------------------------------------------------------- default device assignment

PJRT_Client_DefaultDeviceAssignment_Args AssignmentArgs(PJRT_Client* client, int replicas,
                                                        int partitions, std::vector<int>& out) {
  auto args = EMBER_ARGS(PJRT_Client_DefaultDeviceAssignment_Args);
  args.client = client;
  args.num_replicas = replicas;
  args.num_partitions = partitions;
  args.default_assignment_size = out.size();
  args.default_assignment = out.data();
  return args;
}

TEST_F(PjrtCApiTest, GetDefaultDeviceAssignmentNominal) {
  std::vector<int> assignment(2, -1);
  auto args = AssignmentArgs(client_.get(), 2, 1, assignment);
  ASSERT_TRUE(IsOk(api_->PJRT_Client_DefaultDeviceAssignment(&args)));
  EXPECT_GE(assignment[0], 0);
  EXPECT_GE(assignment[1], 0);
  EXPECT_NE(assignment[0], assignment[1]);
}

TEST_F(PjrtCApiTest, GetDefaultDeviceAssignmentBufferTooSmall) {
  std::vector<int> assignment(7, -1);
  auto args = AssignmentArgs(client_.get(), 4, 2, assignment);
  ErrorInfo error = TakeError(api_->PJRT_Client_DefaultDeviceAssignment(&args));
  EXPECT_EQ(error.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(error.message,
            "PJRT_Client_DefaultDeviceAssignment: `default_assignment_size` 7 < "
            "`num_replicas * num_partitions`, 4 * 2 = 8");
  EXPECT_EQ(assignment, std::vector<int>(7, -1)) << "wrote into a too-small buffer";
}

TEST_F(PjrtCApiTest, GetDefaultDeviceAssignmentOverflow) {
  std::vector<int> assignment(65536, -1);
  auto args = AssignmentArgs(client_.get(), 65536, 65537, assignment);
  ErrorInfo error = TakeError(api_->PJRT_Client_DefaultDeviceAssignment(&args));
  EXPECT_EQ(error.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(error.message,
            "PJRT_Client_DefaultDeviceAssignment: `default_assignment_size` 65536 < "
            "`num_replicas * num_partitions`, 65536 * 65537 = 4295032832");
}

TEST_F(PjrtCApiTest, GetDefaultDeviceAssignmentNegative) {
  std::vector<int> assignment(8, -1);
  auto args = AssignmentArgs(client_.get(), -1, 2, assignment);
  ErrorInfo error = TakeError(api_->PJRT_Client_DefaultDeviceAssignment(&args));
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(error.message,
            "PJRT_Client_DefaultDeviceAssignment: `num_replicas` and `num_partitions` must be "
            "positive, got -1 and 2");
}

TEST_F(PjrtCApiTest, GetDefaultDeviceAssignmentZero) {
  std::vector<int> assignment(8, -1);
  auto args = AssignmentArgs(client_.get(), 2, 0, assignment);
  ErrorInfo error = TakeError(api_->PJRT_Client_DefaultDeviceAssignment(&args));
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(error.message,
            "PJRT_Client_DefaultDeviceAssignment: `num_replicas` and `num_partitions` must be "
            "positive, got 2 and 0");
}

// ---------------------------------------------------------------- compile

// A single-device xla.CompileOptionsProto, hand-encoded: executable_build_options (#3) with
// device_ordinal 0, num_replicas 1, num_partitions 1 and a 1x1 device assignment {0}.
std::string SingleDeviceCompileOptions() {
  const unsigned char kBytes[] = {0x1a, 0x11, 0x08, 0x00, 0x20, 0x01, 0x28, 0x01, 0x4a, 0x09,
                                  0x08, 0x01, 0x10, 0x01, 0x1a, 0x03, 0x0a, 0x01, 0x00};
  return std::string(reinterpret_cast<const char*>(kBytes), sizeof(kBytes));
}

TEST_F(PjrtCApiTest, CompileInvalidProgramFormat) {
  std::string options = SingleDeviceCompileOptions();
  std::string format = "invalid";
  auto program = EMBER_ARGS(PJRT_Program);
  program.code = nullptr;
  program.code_size = 0;
  program.format = format.c_str();
  program.format_size = format.size();
  auto args = EMBER_ARGS(PJRT_Client_Compile_Args);
  args.client = client_.get();
  args.program = &program;
  args.compile_options = options.data();
  args.compile_options_size = options.size();
  ErrorInfo error = TakeError(api_->PJRT_Client_Compile(&args));
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(error.message, "Unknown program format 'invalid'.");
  EXPECT_EQ(args.executable, nullptr);
}

// A shape-polymorphic program that was not refined to static shapes: INVALID_ARGUMENT naming
// the argument, never a crash (JAX refines such programs before it compiles them).
TEST_F(PjrtCApiTest, CompileUnrefinedDynamicShapesIsAnError) {
  std::string options = SingleDeviceCompileOptions();
  std::string format = "mlir";
  std::string code = R"(
func.func public @main(%arg0: tensor<i64>, %arg1: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = stablehlo.negate %arg1 : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
})";
  auto program = EMBER_ARGS(PJRT_Program);
  program.code = code.data();
  program.code_size = code.size();
  program.format = format.c_str();
  program.format_size = format.size();
  auto args = EMBER_ARGS(PJRT_Client_Compile_Args);
  args.client = client_.get();
  args.program = &program;
  args.compile_options = options.data();
  args.compile_options_size = options.size();
  ErrorInfo error = TakeError(api_->PJRT_Client_Compile(&args));
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("argument 1 of @main has the dynamically shaped type "
                               "tensor<?x4xf32>"),
            std::string::npos)
      << error.message;
  EXPECT_NE(error.message.find("must be refined to static shapes"), std::string::npos)
      << error.message;
  EXPECT_EQ(args.executable, nullptr);
}

// ---------------------------------------------------------------- create options

TEST(CapiClientCreateTest, HostDeviceCountOptionGivesThatManyDevices) {
  ASSERT_NE(Api(), nullptr) << LoadError();
  ErrorInfo error;
  ClientPtr client = CreateClient(HostOptions(4), &error);
  ASSERT_TRUE(error.ok()) << error;
  std::vector<PJRT_Device*> devices = Devices(client.get());
  ASSERT_EQ(devices.size(), 4u);
  std::set<int> ids;
  std::set<int> hardware_ids;
  for (PJRT_Device* device : devices) {
    int id = DeviceId(device);
    ids.insert(id);
    auto lookup = EMBER_ARGS(PJRT_Client_LookupDevice_Args);
    lookup.client = client.get();
    lookup.id = id;
    ASSERT_TRUE(IsOk(Api()->PJRT_Client_LookupDevice(&lookup)));
    EXPECT_EQ(lookup.device, device) << "LookupDevice(" << id << ") returned another pointer";

    auto hw = EMBER_ARGS(PJRT_Device_LocalHardwareId_Args);
    hw.device = device;
    ASSERT_TRUE(IsOk(Api()->PJRT_Device_LocalHardwareId(&hw)));
    hardware_ids.insert(hw.local_hardware_id);
    auto by_hw = EMBER_ARGS(PJRT_Client_LookupAddressableDevice_Args);
    by_hw.client = client.get();
    by_hw.local_hardware_id = hw.local_hardware_id;
    ASSERT_TRUE(IsOk(Api()->PJRT_Client_LookupAddressableDevice(&by_hw)));
    EXPECT_EQ(by_hw.addressable_device, device);
  }
  EXPECT_EQ(ids, (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(hardware_ids.size(), 4u) << "local hardware ids are not distinct";
  EXPECT_EQ(AddressableDevices(client.get()).size(), 4u);
}

TEST(CapiClientCreateTest, UnknownOptionIsRejectedByName) {
  ASSERT_NE(Api(), nullptr) << LoadError();
  ErrorInfo error;
  ClientPtr client = CreateClient({Int64Option("no_such_option_xyz", 1)}, &error);
  EXPECT_EQ(client, nullptr);
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT) << error;
  EXPECT_THAT(error.message, HasSubstr("no_such_option_xyz"));
}

// JAX_PJRT_CLIENT_CREATE_OPTIONS turns every value into a string (§12.2), so a numeric string is
// a valid spelling of an integer option; anything else out of range or of the wrong kind is not.
TEST(CapiClientCreateTest, NumericStringOptionIsAcceptedAsItsValue) {
  ASSERT_NE(Api(), nullptr) << LoadError();
  ErrorInfo error;
  ClientPtr client = CreateClient(
      {StringOption("platform", "host"), StringOption("host_device_count", "3")}, &error);
  ASSERT_TRUE(error.ok()) << error;
  EXPECT_EQ(Devices(client.get()).size(), 3u);
}

TEST(CapiClientCreateTest, WrongOptionTypeOrValueIsRejected) {
  ASSERT_NE(Api(), nullptr) << LoadError();
  for (const PJRT_NamedValue& option :
       {StringOption("host_device_count", "four"), Int64Option("host_device_count", 0),
        Int64Option("host_device_count", -3), Int64Option("host_device_count", 1 << 20)}) {
    ErrorInfo error;
    ClientPtr client = CreateClient({option}, &error);
    EXPECT_EQ(client, nullptr);
    EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT) << error;
    EXPECT_THAT(error.message, HasSubstr("host_device_count"));
  }
}

// jaxlib does not zero PJRT_Client_Create_Args: without jax.distributed the six KV fields are
// garbage (§12.1). The plugin must not decide "distributed" from them, let alone call them.
TEST(CapiClientCreateTest, GarbageKvFieldsAreIgnoredWithoutDistributedOptions) {
  ASSERT_NE(Api(), nullptr) << LoadError();
  PJRT_Client_Create_Args args;
  std::memset(static_cast<void*>(&args), 0xAB, sizeof(args));
  args.struct_size = PJRT_Client_Create_Args_STRUCT_SIZE;
  args.extension_start = nullptr;
  args.create_options = nullptr;
  args.num_options = 0;
  ASSERT_TRUE(IsOk(Api()->PJRT_Client_Create(&args)));
  ClientPtr client(args.client);
  EXPECT_FALSE(Devices(client.get()).empty());
}

TEST(CapiClientCreateTest, TwoClientsLiveSideBySide) {
  ASSERT_NE(Api(), nullptr) << LoadError();
  ErrorInfo error;
  ClientPtr first = CreateClient({}, &error);
  ASSERT_TRUE(error.ok()) << error;
  ClientPtr second = CreateClient({}, &error);
  ASSERT_TRUE(error.ok()) << error;
  std::vector<float> a = {1.5f, -2.0f, 3.25f};
  std::vector<float> b = {7.0f, 8.5f};
  BufferPtr on_first = UploadF32(first.get(), Devices(first.get())[0], a, {3});
  BufferPtr on_second = UploadF32(second.get(), Devices(second.get())[0], b, {2});
  on_second.reset();
  second.reset();
  EXPECT_EQ(ToHostF32(on_first.get()), a);
}

// EMBER_CUDA_LIBRARY_PATH / cuda_library_path: with the virtual GPU's libraries, platform "cuda"
// gives virtual GPUs, and transfers round-trip through the virtual driver. Run in its own process
// (ember_capi_virtual_gpu_test): once loaded, the virtual libcuda.so.1 is what any later
// dlopen("libcuda.so.1") in the process finds, so "auto" clients would pick it up.
TEST(CapiVirtualGpuTest, CudaLibraryPathOptionGivesVirtualGpus) {
#ifndef EMBER_VIRTUAL_GPU_LIB_DIR
  GTEST_SKIP() << "built without the CUDA toolkit: there is no virtual GPU";
#else
  ASSERT_NE(Api(), nullptr) << LoadError();
  ErrorInfo error;
  ClientPtr client = CreateClient(
      {StringOption("platform", "cuda"), StringOption("cuda_library_path", EMBER_VIRTUAL_GPU_LIB_DIR)},
      &error);
  ASSERT_TRUE(error.ok()) << error;
  std::vector<PJRT_Device*> devices = Devices(client.get());
  ASSERT_EQ(devices.size(), 2u);  // the virtual machine's default
  auto kind = EMBER_ARGS(PJRT_DeviceDescription_Kind_Args);
  kind.device_description = Description(devices[1]);
  ASSERT_TRUE(IsOk(Api()->PJRT_DeviceDescription_Kind(&kind)));
  EXPECT_THAT(std::string(kind.device_kind, kind.device_kind_size), HasSubstr("(Ember virtual GPU)"));
  const std::vector<float> data = {1.5f, -2.0f, 3.25f, 1e-3f, 7.0f, 8.0f};
  BufferPtr buffer = UploadF32(client.get(), devices[1], data, {2, 3});
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(ToHostF32(buffer.get()), data);
#endif
}

}  // namespace
}  // namespace ember::capi_test
