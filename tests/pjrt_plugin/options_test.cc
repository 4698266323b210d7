// Ember's options from client create options, environment variables, EMBER_FLAGS and the
// compile options' overrides.
#include "pjrt_plugin/options.h"

#include <cstdlib>

#include "gtest/gtest.h"

namespace ember::pjrt {
namespace {

TEST(OptionsTest, DefaultsAndOverrides) {
  unsetenv("EMBER_HOST_DEVICE_COUNT");
  unsetenv("EMBER_PLATFORM");
  unsetenv("EMBER_COLLECTIVE_TIMEOUT_SECONDS");
  auto defaults = ReadOptions({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->devices.host_device_count, 1);
  EXPECT_EQ(defaults->devices.platform, "auto");
  EXPECT_EQ(defaults->devices.collective_timeout, absl::Minutes(5));

  auto parsed = ReadOptions({{"host_device_count", int64_t{8}},
                             {"platform", std::string("host")},
                             {"memory_limit_bytes", std::string("1048576")},
                             {"collective_timeout_seconds", std::string("2.5")}});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->devices.host_device_count, 8);
  EXPECT_EQ(parsed->devices.platform, "host");
  EXPECT_EQ(parsed->devices.memory_limit_bytes, 1048576);
  EXPECT_EQ(parsed->devices.collective_timeout, absl::Milliseconds(2500));
}

TEST(OptionsTest, EnvironmentIsReadAndOptionsWin) {
  setenv("EMBER_HOST_DEVICE_COUNT", "3", 1);
  EXPECT_EQ(ReadOptions({})->devices.host_device_count, 3);
  EXPECT_EQ(ReadOptions({{"host_device_count", int64_t{2}}})->devices.host_device_count, 2);
  setenv("EMBER_HOST_DEVICE_COUNT", "many", 1);
  auto bad = ReadOptions({});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("EMBER_HOST_DEVICE_COUNT"), std::string::npos);
  unsetenv("EMBER_HOST_DEVICE_COUNT");
  setenv("EMBER_COLLECTIVE_TIMEOUT_SECONDS", "7", 1);
  EXPECT_EQ(ReadOptions({})->devices.collective_timeout, absl::Seconds(7));
  setenv("EMBER_COLLECTIVE_TIMEOUT_SECONDS", "-1", 1);
  EXPECT_FALSE(ReadOptions({}).ok());
  unsetenv("EMBER_COLLECTIVE_TIMEOUT_SECONDS");
}

TEST(OptionsTest, CudaLibraryPathFromOptionOrEnvironment) {
  unsetenv("EMBER_CUDA_LIBRARY_PATH");
  EXPECT_EQ(ReadOptions({})->devices.cuda_library_path, "");
  setenv("EMBER_CUDA_LIBRARY_PATH", "/opt/virtual_gpu/lib", 1);
  EXPECT_EQ(ReadOptions({})->devices.cuda_library_path, "/opt/virtual_gpu/lib");
  EXPECT_EQ(ReadOptions({{"cuda_library_path", std::string("/elsewhere")}})->devices.cuda_library_path,
            "/elsewhere");
  unsetenv("EMBER_CUDA_LIBRARY_PATH");
  auto bad = ReadOptions({{"cuda_library_path", int64_t{3}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cuda_library_path"), std::string::npos);
}

TEST(OptionsTest, RejectsUnknownAndBadValues) {
  auto unknown = ReadOptions({{"cpu_device_count", int64_t{4}}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("'cpu_device_count'"), std::string::npos);
  EXPECT_FALSE(ReadOptions({{"host_device_count", int64_t{0}}}).ok());
  EXPECT_FALSE(ReadOptions({{"host_device_count", 1.5f}}).ok());
  EXPECT_FALSE(ReadOptions({{"platform", std::string("tpu")}}).ok());
  EXPECT_TRUE(ReadOptions({{"num_nodes", int64_t{1}}, {"node_id", int64_t{0}}}).ok());
  auto two = ReadOptions({{"num_nodes", int64_t{2}}, {"node_id", int64_t{1}}});
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->devices.process_count, 2);
  EXPECT_EQ(two->devices.process_index, 1);
  auto outside = ReadOptions({{"num_nodes", int64_t{2}}, {"node_id", int64_t{2}}});
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().message().find("node_id"), std::string::npos);
  EXPECT_FALSE(ReadOptions({{"num_nodes", int64_t{0}}}).ok());
}

TEST(OptionsTest, EmberFlagsAndCompileOptionOverrides) {
  unsetenv("EMBER_FLAGS");
  auto none = ReadCompilerOptions({});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->dump_to, "");
  EXPECT_EQ(none->host_backend, "compiled");

  setenv("EMBER_FLAGS", "--dump_to=/tmp/a  --host_backend=evaluator --dump_to=/tmp/b", 1);
  auto flags = ReadCompilerOptions({});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->dump_to, "/tmp/b");  // the last one wins
  EXPECT_EQ(flags->host_backend, "evaluator");

  frontend::CompileOptions compile_options;
  compile_options.env_option_overrides["xla_dump_to"] = std::string("/tmp/xla");
  EXPECT_EQ(ReadCompilerOptions(compile_options)->dump_to, "/tmp/xla");
  // XLA's own options pass (Ember ignores those it does not read); other names and strings
  // that do not spell a bool for a bool option are errors, worded as XLA words them.
  compile_options.env_option_overrides["xla_cpu_enable_fast_math"] = true;
  EXPECT_TRUE(ReadCompilerOptions(compile_options).ok());
  compile_options.env_option_overrides["xla_embed_ir_in_executable"] = std::string("nope");
  EXPECT_NE(ReadCompilerOptions(compile_options).status().message().find(
                "'nope' is not a valid bool value."),
            std::string::npos);
  compile_options.env_option_overrides["xla_embed_ir_in_executable"] = std::string("true");
  EXPECT_TRUE(ReadCompilerOptions(compile_options).ok());
  compile_options.env_option_overrides["invalid_key"] = std::string("x");
  EXPECT_EQ(ReadCompilerOptions(compile_options).status().message(),
            "No such compile option: 'invalid_key'");

  // The chunked kernels are gone, and with them --host_llvm: an unknown flag, named.
  setenv("EMBER_FLAGS", "--host_llvm=off", 1);
  auto gone = ReadCompilerOptions({});
  ASSERT_FALSE(gone.ok());
  EXPECT_NE(gone.status().message().find("unknown flag '--host_llvm=off'"), std::string::npos)
      << gone.status();

  // The kernel cache: EMBER_KERNEL_CACHE_DIR, overridden by --kernel_cache_dir.
  unsetenv("EMBER_FLAGS");
  EXPECT_EQ(ReadCompilerOptions({})->kernel_cache_dir, "");
  setenv("EMBER_KERNEL_CACHE_DIR", "/tmp/env_cache", 1);
  EXPECT_EQ(ReadCompilerOptions({})->kernel_cache_dir, "/tmp/env_cache");
  setenv("EMBER_FLAGS", "--kernel_cache_dir=/tmp/flag_cache", 1);
  EXPECT_EQ(ReadCompilerOptions({})->kernel_cache_dir, "/tmp/flag_cache");
  setenv("EMBER_FLAGS", "--kernel_cache_dir=", 1);
  EXPECT_EQ(ReadCompilerOptions({})->kernel_cache_dir, "");  // turned off again
  unsetenv("EMBER_KERNEL_CACHE_DIR");

  // Tiered compilation: on unless --tiered_compile=off; another value is named.
  unsetenv("EMBER_FLAGS");
  EXPECT_TRUE(ReadCompilerOptions({})->tiered_compile);
  setenv("EMBER_FLAGS", "--tiered_compile=off", 1);
  EXPECT_FALSE(ReadCompilerOptions({})->tiered_compile);
  setenv("EMBER_FLAGS", "--tiered_compile=off --tiered_compile=on", 1);
  EXPECT_TRUE(ReadCompilerOptions({})->tiered_compile);
  setenv("EMBER_FLAGS", "--tiered_compile=yes", 1);
  auto not_on_off = ReadCompilerOptions({});
  ASSERT_FALSE(not_on_off.ok());
  EXPECT_NE(not_on_off.status().message().find("--tiered_compile=yes is not one of on, off"),
            std::string::npos)
      << not_on_off.status();

  setenv("EMBER_FLAGS", "--host_backend=fast", 1);
  auto bad = ReadCompilerOptions({});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--host_backend=fast"), std::string::npos);
  setenv("EMBER_FLAGS", "--dumpto=/tmp", 1);
  auto unknown = ReadCompilerOptions({});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("--dumpto=/tmp"), std::string::npos);
  unsetenv("EMBER_FLAGS");
}

}  // namespace
}  // namespace ember::pjrt
