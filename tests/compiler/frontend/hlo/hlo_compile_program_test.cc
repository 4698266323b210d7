// The compiler driver's format dispatch for HloModuleProto programs: CompileProgram("hlo", ...)
// imports, verifies and compiles, and input_output_alias reaches the donation plan.
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "compiler/driver/compile_program.h"
#include "gtest/gtest.h"
#include "tests/backend_test_util.h"
#include "hlo_module.pb.h"

namespace ember::compiler {
namespace {

std::string ReadTestdata(const std::string& name) {
  std::ifstream in(std::string(EMBER_HLO_TESTDATA) + "/" + name, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

absl::Span<const uint8_t> Bytes(const std::string& s) {
  return absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

TEST(HloCompileProgramTest, FormatHloCompilesAndDonates) {
  // jax.jit(lambda x, y: (x * 2 + y, y - 1), donate_argnums=(0,)) on f32[3] inputs.
  const std::string hlo = ReadTestdata("donate.hlo.pb");
  ASSERT_FALSE(hlo.empty());
  auto program = CompileProgram("hlo", Bytes(hlo), frontend::CompileOptions(), test_util::HostTestBackend());
  ASSERT_TRUE(program.ok()) << program.status().message();
  EXPECT_EQ((*program)->parameter_types.size(), 2u);
  EXPECT_EQ((*program)->result_types.size(), 2u);
  EXPECT_EQ((*program)->donatable, (std::vector<bool>{true, false}));
  EXPECT_FALSE((*program)->fingerprint.empty());
}

TEST(HloCompileProgramTest, EveryTestdataModuleReads) {
  for (const char* name : {"mlp_grad", "control_flow", "sort", "scan", "conv"}) {
    const std::string hlo = ReadTestdata(std::string(name) + ".hlo.pb");
    auto module = ReadProgram("hlo", Bytes(hlo));
    EXPECT_TRUE(module.ok()) << name << ": " << module.status().message();
  }
}

TEST(HloCompileProgramTest, WithConfigAndBadBytes) {
  hloproto::HloModuleProtoWithConfig wrapper;
  ASSERT_TRUE(wrapper.mutable_hlo_module()->ParseFromString(ReadTestdata("donate.hlo.pb")));
  const std::string wrapped = wrapper.SerializeAsString();
  EXPECT_TRUE(ReadProgram("hlo_with_config", Bytes(wrapped)).ok());
  // The config (field 2 of xla.HloModuleProtoWithConfig) says how many replicas and partitions
  // the module was built for; its other fields (field 14, debug options, here) are skipped.
  wrapper.mutable_config()->set_replica_count(4);
  wrapper.mutable_config()->set_num_partitions(2);
  std::string with_config = wrapper.SerializeAsString();
  with_config += std::string("\x12\x04\x72\x02\x08\x01", 6);  // config { 14: { 1: 1 } }
  auto configured = ReadProgram("hlo_with_config", Bytes(with_config));
  ASSERT_TRUE(configured.ok()) << configured.status();
  const ir::Attribute* replicas = (*configured)->attributes().Find("mhlo.num_replicas");
  const ir::Attribute* partitions = (*configured)->attributes().Find("mhlo.num_partitions");
  ASSERT_NE(replicas, nullptr);
  ASSERT_NE(partitions, nullptr);
  EXPECT_EQ(replicas->i, 4);
  EXPECT_EQ(partitions->i, 2);

  const std::string garbage = "\x0a\xff\xff\xff\xff\x0f";
  auto bad = ReadProgram("hlo", Bytes(garbage));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "HloModuleProto"))
      << bad.status().message();
}

// XLA's bounded dynamic dimensions import (as `?` dims with their bound), but Ember compiles static
// shapes: a clear UNIMPLEMENTED naming the argument, not a crash.
TEST(HloCompileProgramTest, BoundedDynamicDimensionsAreAClearError) {
  hloproto::HloModuleProto m;
  ASSERT_TRUE(m.ParseFromString(ReadTestdata("donate.hlo.pb")));
  for (auto& c : *m.mutable_computations()) {
    for (auto& inst : *c.mutable_instructions()) {
      if (inst.opcode() != "parameter" || inst.parameter_number() != 0) continue;
      if (inst.shape().dimensions_size() == 0) continue;
      inst.mutable_shape()->clear_is_dynamic_dimension();
      for (int i = 0; i < inst.shape().dimensions_size(); ++i) {
        inst.mutable_shape()->add_is_dynamic_dimension(i == 0);
      }
    }
  }
  for (auto& p : *m.mutable_host_program_shape()->mutable_parameters()) {
    if (p.dimensions_size() == 0) continue;
    p.clear_is_dynamic_dimension();
    for (int i = 0; i < p.dimensions_size(); ++i) p.add_is_dynamic_dimension(i == 0);
    break;
  }
  const std::string bytes = m.SerializeAsString();
  auto program = CompileProgram("hlo", Bytes(bytes), frontend::CompileOptions(), test_util::HostTestBackend());
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(program.status().message(),
                                "argument 0 of @main (type tensor<?xf32, #stablehlo.bounds<3>>) "
                                "has bounded dynamic dimensions"))
      << program.status().message();
}

}  // namespace
}  // namespace ember::compiler
