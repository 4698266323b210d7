// CompileOptionsProto reading: defaults, what JAX sends, malformed and inconsistent bytes.
#include "compiler/frontend/options/compile_options.h"

#include <string>

#include "compile_options.pb.h"  // the test serializes with the same message definitions
#include "gtest/gtest.h"

namespace ember::frontend {
namespace {

absl::StatusOr<CompileOptions> Read(const std::string& bytes) {
  return ReadCompileOptions(
      absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
}

TEST(CompileOptionsTest, EmptyGivesDefaults) {
  auto options = Read("");
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->num_replicas, 1);
  EXPECT_EQ(options->num_partitions, 1);
  EXPECT_TRUE(options->device_assignment.empty());
}

TEST(CompileOptionsTest, ReadsWhatJaxSends) {
  xla::CompileOptionsProto proto;
  auto* build = proto.mutable_executable_build_options();
  build->set_device_ordinal(-1);
  build->set_num_replicas(1);
  build->set_num_partitions(2);
  build->set_use_spmd_partitioning(true);
  build->set_use_shardy_partitioner(true);
  auto* da = build->mutable_device_assignment();
  da->set_replica_count(1);
  da->set_computation_count(2);
  da->add_computation_devices()->add_replica_device_ids(3);
  da->add_computation_devices()->add_replica_device_ids(1);
  (*proto.mutable_env_option_overrides())["xla_dump_to"].set_string_field("/tmp/dump");
  (*proto.mutable_env_option_overrides())["xla_flag"].set_bool_field(true);
  proto.set_allow_in_place_mlir_modification(true);
  auto options = Read(proto.SerializeAsString());
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->num_partitions, 2);
  EXPECT_TRUE(options->use_spmd_partitioning);
  EXPECT_TRUE(options->use_shardy_partitioner);
  ASSERT_EQ(options->device_assignment.size(), 1u);
  EXPECT_EQ(options->device_assignment[0], (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(std::get<std::string>(options->env_option_overrides.at("xla_dump_to")), "/tmp/dump");
  EXPECT_TRUE(std::get<bool>(options->env_option_overrides.at("xla_flag")));
}

TEST(CompileOptionsTest, RejectsMalformedAndInconsistent) {
  auto garbage = Read(std::string("\xff\xff\xff\xff\x0f", 5));
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.status().message(), "failed to deserialize CompileOptionsProto");

  xla::CompileOptionsProto proto;
  proto.mutable_executable_build_options()->set_num_partitions(-2);
  EXPECT_FALSE(Read(proto.SerializeAsString()).ok());

  xla::CompileOptionsProto mismatch;
  auto* build = mismatch.mutable_executable_build_options();
  build->set_num_partitions(2);
  auto* da = build->mutable_device_assignment();
  da->set_replica_count(1);
  da->set_computation_count(1);
  da->add_computation_devices()->add_replica_device_ids(0);
  auto status = Read(mismatch.SerializeAsString());
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.status().message().find("device_assignment is 1x1"), std::string::npos);
}

}  // namespace
}  // namespace ember::frontend
