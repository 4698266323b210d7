// TensorFlow's NextPluggableDevice entry point of the built plugin, driven as TensorFlow drives it:
// TFNPD_InitPlugin with TF 2.21's 37-byte parameters, then the TFNPD_Api entries. The test binary
// stands in for TensorFlow's TF_SetStatus (exported from the executable, where the plugin's
// run-time lookup finds it), so every error the plugin reports is checked. Client creation
// through the TensorFlow helper needs a real TensorFlow process: tests/tensorflow covers it.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "pjrt_plugin/include/tf_plugin_c_api.h"
#include "tests/capi/capi_test_util.h"

struct TF_Status {
  int code = 0;
  std::string message;
};

extern "C" __attribute__((visibility("default"))) void TF_SetStatus(TF_Status* status, int code,
                                                                     const char* message) {
  status->code = code;
  status->message = message;
}

namespace ember::capi_test {
namespace {

using InitPluginFn = const TFNPD_Api* (*)(TFNPD_PluginParams*, TF_Status*);

InitPluginFn InitPlugin() {
  if (Api() == nullptr) return nullptr;  // loads the plugin
  void* handle = dlopen(PluginPath().c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return nullptr;
  return reinterpret_cast<InitPluginFn>(dlsym(handle, "TFNPD_InitPlugin"));
}

TFNPD_PluginParams TfParams() {
  TFNPD_PluginParams params{};
  params.struct_size = 37;  // what TensorFlow 2.21 passes
  return params;
}

class TfDevicePluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    init_ = InitPlugin();
    ASSERT_NE(init_, nullptr) << LoadError();
    TFNPD_PluginParams params = TfParams();
    TF_Status status;
    api_ = init_(&params, &status);
    ASSERT_EQ(status.code, 0) << status.message;
    ASSERT_NE(api_, nullptr);
  }
  InitPluginFn init_ = nullptr;
  const TFNPD_Api* api_ = nullptr;
};

TEST_F(TfDevicePluginTest, NamesTheDeviceAndSetsTheXlaFlag) {
  unsetenv("TF_XLA_FLAGS");
  TFNPD_PluginParams params = TfParams();
  params.use_pjrt_on_demand_compile = true;  // beyond struct_size 37: must stay untouched
  TF_Status status;
  const TFNPD_Api* api = init_(&params, &status);
  ASSERT_EQ(status.code, 0) << status.message;
  EXPECT_EQ(api, api_) << "one table for the process";
  EXPECT_STREQ(params.device_type, "EMBER");
  EXPECT_STREQ(params.compilation_device_name, "XLA_CPU_JIT");
  EXPECT_GT(params.priority, 0);
  EXPECT_TRUE(params.is_pluggable_device);
  EXPECT_TRUE(params.use_pjrt_on_demand_compile);
  ASSERT_NE(std::getenv("TF_XLA_FLAGS"), nullptr);
  EXPECT_STREQ(std::getenv("TF_XLA_FLAGS"), "--tf_xla_use_device_api=true");

  // A user's other flags are kept and the device API flag joins them; a user's own choice of
  // the device API flag is left alone.
  setenv("TF_XLA_FLAGS", "--tf_xla_auto_jit=2", 1);
  init_(&params, &status);
  EXPECT_STREQ(std::getenv("TF_XLA_FLAGS"), "--tf_xla_auto_jit=2 --tf_xla_use_device_api=true");
  setenv("TF_XLA_FLAGS", "--tf_xla_use_device_api=false", 1);
  init_(&params, &status);
  EXPECT_STREQ(std::getenv("TF_XLA_FLAGS"), "--tf_xla_use_device_api=false");
  unsetenv("TF_XLA_FLAGS");

  params.struct_size = 36;
  TF_Status small;
  EXPECT_EQ(init_(&params, &small), nullptr);
  EXPECT_EQ(small.code, 3);  // INVALID_ARGUMENT
  EXPECT_NE(small.message.find("37 bytes"), std::string::npos) << small.message;
}

TEST_F(TfDevicePluginTest, TableHasTheEntriesTensorFlowCalls) {
  EXPECT_EQ(api_->struct_size, 176u);
  EXPECT_NE(api_->TFNPD_GetDeviceCount, nullptr);
  EXPECT_NE(api_->TFNPD_InitPluginInternalDeviceStates, nullptr);
  EXPECT_NE(api_->TFNPD_XlaShapeToDeviceShapeRepresentation, nullptr);
  EXPECT_NE(api_->TFNPD_SameDevicePjRtBufferCopy, nullptr);
}

TEST_F(TfDevicePluginTest, DeviceCountFollowsTheOptions) {
  setenv("EMBER_PLATFORM", "host", 1);
  setenv("EMBER_HOST_DEVICE_COUNT", "3", 1);
  TF_Status status;
  EXPECT_EQ(api_->TFNPD_GetDeviceCount(&status), 3);
  EXPECT_EQ(status.code, 0) << status.message;

  setenv("EMBER_HOST_DEVICE_COUNT", "0", 1);
  TF_Status bad;
  EXPECT_EQ(api_->TFNPD_GetDeviceCount(&bad), 0);
  EXPECT_EQ(bad.code, 3);
  EXPECT_NE(bad.message.find("EMBER_HOST_DEVICE_COUNT"), std::string::npos) << bad.message;
  unsetenv("EMBER_HOST_DEVICE_COUNT");
  unsetenv("EMBER_PLATFORM");
}

TEST_F(TfDevicePluginTest, ShapeFunctionCopiesTheShape) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int64_t> dim(1, 1000);
  XLA_Shape host{};
  host.element_type = 11;  // F32
  host.dimensions.size = 3;
  host.dynamic_dimensions.size = 3;
  host.has_layout = true;
  host.layout.minor_to_major.size = 3;
  for (int i = 0; i < 3; ++i) {
    host.dimensions.inlined[i] = dim(rng);
    host.dynamic_dimensions.inlined[i] = i == 1;
    host.layout.minor_to_major.inlined[i] = 2 - i;
  }
  host.layout.element_size_in_bits = 32;
  XLA_Shape device;
  TF_Status status;
  api_->TFNPD_XlaShapeToDeviceShapeRepresentation(&host, /*DT_FLOAT*/ 1, false,
                                                  XLA_LayoutPreference_kNoPreference, &device,
                                                  &status);
  ASSERT_EQ(status.code, 0) << status.message;
  EXPECT_EQ(device.element_type, 11);
  ASSERT_EQ(device.dimensions.size, 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(device.dimensions.inlined[i], host.dimensions.inlined[i]);
    EXPECT_EQ(device.dynamic_dimensions.inlined[i], i == 1);
    EXPECT_EQ(device.layout.minor_to_major.inlined[i], 2 - i);
  }
  EXPECT_TRUE(device.has_layout);
  EXPECT_EQ(device.layout.element_size_in_bits, 32);

  host.dimensions.size = -1;
  TF_Status bad;
  api_->TFNPD_XlaShapeToDeviceShapeRepresentation(&host, 1, false,
                                                  XLA_LayoutPreference_kNoPreference, &device, &bad);
  EXPECT_EQ(bad.code, 3);
  EXPECT_NE(bad.message.find("dimensions.size is -1"), std::string::npos) << bad.message;
  TF_Status null_shape;
  api_->TFNPD_XlaShapeToDeviceShapeRepresentation(nullptr, 1, false,
                                                  XLA_LayoutPreference_kNoPreference, &device,
                                                  &null_shape);
  EXPECT_EQ(null_shape.code, 3);
}

class TfSameDeviceCopyTest : public CapiTest {};

TEST_F(TfSameDeviceCopyTest, CopiesOnTheSameDevice) {
  InitPluginFn init = InitPlugin();
  ASSERT_NE(init, nullptr);
  TFNPD_PluginParams params = TfParams();
  TF_Status status;
  const TFNPD_Api* tf_api = init(&params, &status);
  ASSERT_NE(tf_api, nullptr);

  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-10, 10);
  std::vector<float> data(24);
  for (float& v : data) v = value(rng);
  BufferPtr source = UploadF32(client_.get(), FirstDevice(), data, {4, 6});
  ASSERT_NE(source, nullptr);
  BufferPtr copy(tf_api->TFNPD_SameDevicePjRtBufferCopy(source.get(), client_.get(), &status));
  ASSERT_EQ(status.code, 0) << status.message;
  ASSERT_NE(copy, nullptr);
  EXPECT_NE(copy.get(), source.get());
  EXPECT_EQ(Dimensions(copy.get()), (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(ToHostF32(copy.get()), data);
  source.reset();  // the copy owns its own memory
  EXPECT_EQ(ToHostF32(copy.get()), data);

  TF_Status bad;
  EXPECT_EQ(tf_api->TFNPD_SameDevicePjRtBufferCopy(nullptr, client_.get(), &bad), nullptr);
  EXPECT_EQ(bad.code, 3);
  EXPECT_NE(bad.message.find("TFNPD_SameDevicePjRtBufferCopy"), std::string::npos) << bad.message;
}

}  // namespace
}  // namespace ember::capi_test
