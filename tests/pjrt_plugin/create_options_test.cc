// Client create options and their environment variables.
#include "pjrt_plugin/create_options.h"

#include <cstdlib>

#include "gtest/gtest.h"

namespace ember::pjrt {
namespace {

TEST(CreateOptionsTest, DefaultsAndOverrides) {
  unsetenv("EMBER_HOST_DEVICE_COUNT");
  unsetenv("EMBER_PLATFORM");
  auto defaults = ParseClientOptions({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->host_device_count, 1);
  EXPECT_EQ(defaults->platform, "auto");

  auto parsed = ParseClientOptions({{"host_device_count", int64_t{8}},
                                    {"platform", std::string("host")},
                                    {"memory_limit_bytes", std::string("1048576")}});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->host_device_count, 8);
  EXPECT_EQ(parsed->platform, "host");
  EXPECT_EQ(parsed->memory_limit_bytes, 1048576);
}

TEST(CreateOptionsTest, EnvironmentIsReadAndOptionsWin) {
  setenv("EMBER_HOST_DEVICE_COUNT", "3", 1);
  EXPECT_EQ(ParseClientOptions({})->host_device_count, 3);
  EXPECT_EQ(ParseClientOptions({{"host_device_count", int64_t{2}}})->host_device_count, 2);
  setenv("EMBER_HOST_DEVICE_COUNT", "many", 1);
  auto bad = ParseClientOptions({});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("EMBER_HOST_DEVICE_COUNT"), std::string::npos);
  unsetenv("EMBER_HOST_DEVICE_COUNT");
}

TEST(CreateOptionsTest, CudaLibraryPathFromOptionOrEnvironment) {
  unsetenv("EMBER_CUDA_LIBRARY_PATH");
  EXPECT_EQ(ParseClientOptions({})->cuda_library_path, "");
  setenv("EMBER_CUDA_LIBRARY_PATH", "/opt/virtual_gpu/lib", 1);
  EXPECT_EQ(ParseClientOptions({})->cuda_library_path, "/opt/virtual_gpu/lib");
  EXPECT_EQ(ParseClientOptions({{"cuda_library_path", std::string("/elsewhere")}})->cuda_library_path,
            "/elsewhere");
  unsetenv("EMBER_CUDA_LIBRARY_PATH");
  auto bad = ParseClientOptions({{"cuda_library_path", int64_t{3}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cuda_library_path"), std::string::npos);
}

TEST(CreateOptionsTest, RejectsUnknownAndBadValues) {
  auto unknown = ParseClientOptions({{"cpu_device_count", int64_t{4}}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("'cpu_device_count'"), std::string::npos);
  EXPECT_FALSE(ParseClientOptions({{"host_device_count", int64_t{0}}}).ok());
  EXPECT_FALSE(ParseClientOptions({{"host_device_count", 1.5f}}).ok());
  EXPECT_FALSE(ParseClientOptions({{"platform", std::string("tpu")}}).ok());
  EXPECT_EQ(ParseClientOptions({{"num_nodes", int64_t{2}}}).status().code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(ParseClientOptions({{"num_nodes", int64_t{1}}, {"node_id", int64_t{0}}}).ok());
}

}  // namespace
}  // namespace ember::pjrt
