// Truncated and corrupted bytecode must give an error or a module, never a crash, a hang or an
// out-of-bounds read (run this binary under -DEMBER_SANITIZE=ON too).
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "compiler/frontend/bytecode_reader.h"
#include "gtest/gtest.h"
#include "tests/compiler/frontend/bytecode_test_util.h"

namespace ember::frontend {
namespace {

namespace fs = std::filesystem;

// Decodes a copy in an exactly-sized heap buffer so a sanitizer sees any read past the end.
bool DecodeCopy(const std::vector<uint8_t>& bytes, size_t n) {
  std::vector<uint8_t> copy(bytes.begin(), bytes.begin() + n);
  absl::StatusOr<std::unique_ptr<Operation>> m = ReadMlirBytecode(copy);
  if (!m.ok()) {
    EXPECT_FALSE(m.status().message().empty());
  }
  return m.ok();
}

std::vector<uint8_t> Load(const std::string& name) {
  const fs::path path = fs::path(EMBER_STABLEHLO_TESTDATA) / "vhlo" / name;
  if (!fs::exists(path)) return {};
  return testing::ReadFileBytes(path);
}

TEST(BytecodeRobustnessTest, EveryPrefixOfSmallFiles) {
  std::vector<std::vector<uint8_t>> inputs;
  for (uint64_t v = 0; v <= 6; ++v) inputs.push_back(testing::BuildTestModule(v));
  std::vector<uint8_t> worked = Load("vhlo_emit_version_api.1_1_0.mlir.bc");
  if (!worked.empty()) inputs.push_back(worked);
  for (const std::vector<uint8_t>& bytes : inputs) {
    for (size_t n = 0; n < bytes.size(); ++n) {
      // A strict prefix may still parse only if the cut falls after the last needed section;
      // the writer's last section is required, so every strict prefix must fail.
      EXPECT_FALSE(DecodeCopy(bytes, n)) << "prefix of " << n << " bytes decoded";
    }
    EXPECT_TRUE(DecodeCopy(bytes, bytes.size()));
  }
}

TEST(BytecodeRobustnessTest, PrefixesOfLargeArtifacts) {
  for (const char* name : {"stablehlo_legalize_to_vhlo.0_9_0.mlir.bc",
                           "stablehlo_legalize_to_vhlo.1_20_0.mlir.bc"}) {
    std::vector<uint8_t> bytes = Load(name);
    if (bytes.empty()) GTEST_SKIP() << "test data not found";
    // All prefixes near both ends, a stride through the middle (keeps the test fast).
    for (size_t n = 0; n < bytes.size(); n += (n < 512 || n + 512 > bytes.size()) ? 1 : 37) {
      EXPECT_FALSE(DecodeCopy(bytes, n)) << name << " prefix " << n;
    }
  }
}

TEST(BytecodeRobustnessTest, RandomByteFlipsNeverCrash) {
  std::vector<std::vector<uint8_t>> inputs;
  for (uint64_t v : {0, 3, 6}) inputs.push_back(testing::BuildTestModule(v));
  for (const char* name : {"vhlo_emit_version_api.1_1_0.mlir.bc",
                           "stablehlo_legalize_to_vhlo.0_12_0.mlir.bc",
                           "stablehlo_legalize_to_vhlo.1_20_0.mlir.bc"}) {
    std::vector<uint8_t> bytes = Load(name);
    if (!bytes.empty()) inputs.push_back(bytes);
  }
  std::mt19937_64 rng(12345);
  int decoded = 0, rejected = 0;
  for (const std::vector<uint8_t>& original : inputs) {
    for (int trial = 0; trial < 400; ++trial) {
      std::vector<uint8_t> bytes = original;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) {
        const size_t at = rng() % bytes.size();
        bytes[at] = (rng() % 2) ? static_cast<uint8_t>(rng()) : bytes[at] ^ (1u << (rng() % 8));
      }
      if (DecodeCopy(bytes, bytes.size())) {
        ++decoded;
      } else {
        ++rejected;
      }
    }
  }
  std::printf("random flips: %d decoded, %d rejected\n", decoded, rejected);
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace ember::frontend
