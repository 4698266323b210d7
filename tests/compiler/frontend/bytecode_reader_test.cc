// Tests of ReadMlirBytecode: hand-built modules for every container version, the worked example
// of the reference (vhlo_emit_version_api.1_1_0.mlir.bc), and the whole VHLO corpus of
// shared/testdata/stablehlo/vhlo (every portable artifact decodes; invalid ones are rejected).
#include "compiler/frontend/bytecode_reader.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tests/compiler/frontend/bytecode_test_util.h"

namespace ember::frontend {
namespace {

namespace fs = std::filesystem;
using testing::BuildTestModule;
using testing::ReadFileBytes;

class VersionedModuleTest : public ::testing::TestWithParam<uint64_t> {};

TEST_P(VersionedModuleTest, DecodesValuesForwardRefsAndAttributes) {
  const std::vector<uint8_t> bytes = BuildTestModule(GetParam());
  absl::StatusOr<std::unique_ptr<Operation>> module = ReadMlirBytecode(bytes);
  ASSERT_TRUE(module.ok()) << module.status();
  const Operation& m = **module;
  EXPECT_EQ(m.name, "builtin.module");
  ASSERT_EQ(m.regions.size(), 1u);
  ASSERT_EQ(m.regions[0].blocks.size(), 1u);
  const Block& block = *m.regions[0].blocks[0];
  ASSERT_EQ(block.arguments.size(), 1u);
  EXPECT_EQ(PrintType(*block.arguments[0].type), "i32");
  ASSERT_EQ(block.operations.size(), 2u);
  const Operation& op1 = *block.operations[0];
  const Operation& op2 = *block.operations[1];
  EXPECT_EQ(op1.name, "test.op");
  EXPECT_EQ(op2.name, "test.unreg");
  EXPECT_EQ(op2.registered, GetParam() < 5);
  ASSERT_EQ(op1.operands.size(), 2u);
  EXPECT_EQ(op1.operands[0].block, &block);
  EXPECT_EQ(op1.operands[0].index, 0u);
  EXPECT_EQ(op1.operands[1].op, &op2);  // forward reference resolved
  ASSERT_EQ(op2.operands.size(), 1u);
  EXPECT_EQ(op2.operands[0].op, &op1);
  for (const Operation* op : {&op1, &op2}) {
    const Attribute* k = op->FindAttribute("k");
    ASSERT_NE(k, nullptr) << op->name;
    EXPECT_EQ(k->kind, AttrKind::kInteger);
    EXPECT_EQ(k->IntValue(), -1);
    EXPECT_EQ(PrintAttribute(*k), "-1 : i32");
  }
  EXPECT_EQ(op2.attributes[0].inherent, GetParam() >= 5);
}

INSTANTIATE_TEST_SUITE_P(AllVersions, VersionedModuleTest, ::testing::Values(0, 1, 2, 3, 4, 5, 6));

TEST(BytecodeReaderTest, RejectsNewerContainerVersion) {
  std::vector<uint8_t> bytes = BuildTestModule(6);
  bytes[4] = (7 << 1) | 1;
  absl::StatusOr<std::unique_ptr<Operation>> m = ReadMlirBytecode(bytes);
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(absl::StrContains(m.status().message(), "version 7")) << m.status();
}

TEST(BytecodeReaderTest, RejectsBadMagicAndEmptyInput) {
  std::vector<uint8_t> bytes = BuildTestModule(6);
  bytes[0] = 'X';
  EXPECT_FALSE(ReadMlirBytecode(bytes).ok());
  EXPECT_FALSE(ReadMlirBytecode({}).ok());
  EXPECT_FALSE(IsMlirBytecode(bytes));
}

TEST(BytecodeReaderTest, MissingPropertiesSectionInVersion5) {
  std::vector<uint8_t> bytes = BuildTestModule(6);
  // The properties section is last: id 8, length 1, one byte.
  ASSERT_EQ(bytes[bytes.size() - 3], 8);
  bytes.resize(bytes.size() - 3);
  absl::StatusOr<std::unique_ptr<Operation>> m = ReadMlirBytecode(bytes);
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(absl::StrContains(m.status().message(), "Properties")) << m.status();
}

TEST(BytecodeReaderTest, DuplicateSectionIsRejected) {
  std::vector<uint8_t> bytes = BuildTestModule(6);
  bytes.insert(bytes.end(), {8, 0x03, 0x01});
  absl::StatusOr<std::unique_ptr<Operation>> m = ReadMlirBytecode(bytes);
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(absl::StrContains(m.status().message(), "duplicate")) << m.status();
}

TEST(BytecodeReaderTest, TextualTypesResourcesSdyAndUseLists) {
  const std::vector<uint8_t> bytes = testing::BuildFeatureModule();
  absl::StatusOr<std::unique_ptr<Operation>> m = ReadMlirBytecode(bytes);
  ASSERT_TRUE(m.ok()) << m.status();
  const Operation& op = *(*m)->regions[0].blocks[0]->operations[0];
  ASSERT_EQ(op.result_types.size(), 2u);
  EXPECT_EQ(op.result_types[0]->kind, TypeKind::kRankedTensor);
  EXPECT_EQ(op.result_types[0]->element->kind, TypeKind::kFloat);
  EXPECT_EQ(op.result_types[0]->element->float_kind, FloatKind::kF8E4M3FN);
  const Attribute* r = op.FindAttribute("r");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->kind, AttrKind::kDenseResource);
  EXPECT_EQ(r->str, "blob0");
  EXPECT_EQ(r->data, (std::vector<uint8_t>{0x38, 0x40}));
  const Attribute* mesh = op.FindAttribute("m");
  ASSERT_NE(mesh, nullptr);
  EXPECT_EQ(PrintAttribute(*mesh),
            "#sdy.mesh<axes = [#sdy.mesh_axis<name = \"x\", size = 4>], device_ids = []>");
}

TEST(BytecodeReaderTest, MisalignedResourcePaddingIsAnError) {
  std::vector<uint8_t> bytes = testing::BuildFeatureModule();
  // Corrupt the first 0xCB padding byte inside the resource blob.
  for (size_t i = bytes.size(); i-- > 1;) {
    if (bytes[i] == 0x38 && bytes[i - 1] == 0xCB) {
      bytes[i - 1] = 0x00;
      break;
    }
  }
  absl::StatusOr<std::unique_ptr<Operation>> m = ReadMlirBytecode(bytes);
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(absl::StrContains(m.status().message(), "Resource")) << m.status();
}

TEST(BytecodeReaderTest, LongLocationChainsResolveWithoutDeepRecursion) {
  absl::StatusOr<std::unique_ptr<Operation>> m =
      ReadMlirBytecode(testing::BuildLocChainModule(1500));
  ASSERT_TRUE(m.ok()) << m.status();
  const Attribute* loc = (*m)->loc.get();
  int depth = 0;
  while (loc->kind == AttrKind::kNameLoc) {
    EXPECT_EQ(loc->str, "n");
    loc = loc->elements[0].get();
    ++depth;
  }
  EXPECT_EQ(depth, 1500);
  EXPECT_EQ(loc->kind, AttrKind::kUnknownLoc);

  absl::StatusOr<std::unique_ptr<Operation>> too_deep =
      ReadMlirBytecode(testing::BuildLocChainModule(5000));
  ASSERT_FALSE(too_deep.ok());
  EXPECT_TRUE(absl::StrContains(too_deep.status().message(), "deeper")) << too_deep.status();
}

const char* kTestData = EMBER_STABLEHLO_TESTDATA;

fs::path VhloDir() { return fs::path(kTestData) / "vhlo"; }

TEST(BytecodeReaderTest, WorkedExampleFromTheReference) {
  const fs::path path = VhloDir() / "vhlo_emit_version_api.1_1_0.mlir.bc";
  if (!fs::exists(path)) GTEST_SKIP() << "test data not found at " << path;
  const std::vector<uint8_t> bytes = ReadFileBytes(path);
  absl::StatusOr<BytecodeHeader> header = ReadMlirBytecodeHeader(bytes);
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->version, 6u);
  EXPECT_EQ(header->producer, "StableHLO_v1.1.0");
  absl::StatusOr<std::unique_ptr<Operation>> m = ReadMlirBytecode(bytes);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ((*m)->regions.size(), 1u);
  const Block& body = *(*m)->regions[0].blocks[0];
  ASSERT_EQ(body.operations.size(), 1u);
  const Operation& func = *body.operations[0];
  EXPECT_EQ(func.name, "vhlo.func_v1");
  std::vector<std::string> names;
  for (const NamedAttribute& a : func.attributes) {
    names.push_back(a.name);
    EXPECT_TRUE(a.inherent);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"arg_attrs", "function_type", "res_attrs",
                                             "sym_name", "sym_visibility"}));
  EXPECT_EQ(PrintAttribute(*func.FindAttribute("sym_name")), "#vhlo.string_v1<value = \"main\">");
  const Block& fb = *func.regions[0].blocks[0];
  ASSERT_EQ(fb.arguments.size(), 1u);
  EXPECT_EQ(PrintType(*fb.arguments[0].type),
            "!vhlo.tensor_v1<shape = [], element = !vhlo.f32_v1>");
  ASSERT_EQ(fb.operations.size(), 2u);
  const Operation& add = *fb.operations[0];
  EXPECT_EQ(add.name, "vhlo.add_v1");
  ASSERT_EQ(add.operands.size(), 2u);
  EXPECT_EQ(add.operands[0].block, &fb);
  EXPECT_EQ(add.operands[1].block, &fb);
  EXPECT_EQ(fb.operations[1]->name, "vhlo.return_v1");
  EXPECT_EQ(fb.operations[1]->operands[0].op, &add);
  EXPECT_EQ((*m)->loc->kind, AttrKind::kFileLineColLoc);
}

// "file: reason" lines; '#' starts a comment.
std::map<std::string, std::string> ReadExpectedFailures() {
  std::map<std::string, std::string> out;
  std::ifstream f(EMBER_EXPECTED_FAILURES);
  std::string line;
  while (std::getline(f, line)) {
    absl::string_view l = absl::StripAsciiWhitespace(line);
    if (l.empty() || l[0] == '#') continue;
    std::vector<std::string> parts = absl::StrSplit(l, absl::MaxSplits(':', 1));
    out[std::string(absl::StripAsciiWhitespace(parts[0]))] =
        parts.size() > 1 ? std::string(absl::StripAsciiWhitespace(parts[1])) : "";
  }
  return out;
}

TEST(BytecodeCorpusTest, EveryVhloArtifactDecodes) {
  if (!fs::exists(VhloDir())) {
    std::printf("StableHLO test data not found at %s; skipping the corpus test\n",
                VhloDir().c_str());
    GTEST_SKIP();
  }
  const std::map<std::string, std::string> expected_failures = ReadExpectedFailures();
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(VhloDir())) {
    if (absl::EndsWith(entry.path().filename().string(), ".mlir.bc")) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  int decoded = 0, rejected_invalid = 0, expected_fail = 0, total = 0;
  for (const fs::path& path : files) {
    const std::string name = path.filename().string();
    ++total;
    const std::vector<uint8_t> bytes = ReadFileBytes(path);
    absl::StatusOr<std::unique_ptr<Operation>> m = ReadMlirBytecode(bytes);
    if (absl::StartsWith(name, "invalid_")) {
      EXPECT_FALSE(m.ok()) << name << " must be rejected";
      if (!m.ok()) {
        ++rejected_invalid;
        std::printf("  rejected %s: %s\n", name.c_str(), std::string(m.status().message()).c_str());
        EXPECT_TRUE(absl::StrContains(m.status().message(), "version")) << m.status();
      }
      continue;
    }
    auto expected = expected_failures.find(name);
    if (expected != expected_failures.end()) {
      ++expected_fail;
      if (m.ok()) {
        ADD_FAILURE() << name << " now decodes: remove it from bytecode_expected_failures.txt";
      }
      continue;
    }
    ASSERT_TRUE(m.ok()) << name << ": " << m.status();
    ++decoded;
    const Operation& module = **m;
    EXPECT_EQ(module.name, "builtin.module") << name;
    // Printing is deterministic and decoding twice gives structurally equal trees.
    absl::StatusOr<std::unique_ptr<Operation>> again = ReadMlirBytecode(bytes);
    ASSERT_TRUE(again.ok());
    std::string why;
    EXPECT_TRUE(StructurallyEqual(module, **again, &why)) << name << ": " << why;
    EXPECT_EQ(PrintOperation(module), PrintOperation(**again)) << name;
    // Every VHLO op of a real artifact is a vhlo.* op inside a vhlo.func_v1.
    for (const auto& func : module.regions[0].blocks[0]->operations) {
      EXPECT_EQ(func->name, "vhlo.func_v1") << name;
    }
  }
  std::printf("VHLO corpus: decoded %d / %d total (%d invalid files rejected, %d expected "
              "failures)\n",
              decoded, total, rejected_invalid, expected_fail);
  EXPECT_EQ(decoded + rejected_invalid + expected_fail, total);
}

TEST(BytecodeCorpusTest, OldAndNewArtifactsAgreeOnASharedFunction) {
  // The 0.9.0 artifact (bytecode v0, attributes in dictionaries) and the 0.15.0 one (v6,
  // properties) both hold the comparison-direction test function; their trees must agree.
  const fs::path old_path = VhloDir() / "stablehlo_legalize_to_vhlo.0_9_0.mlir.bc";
  const fs::path new_path = VhloDir() / "stablehlo_legalize_to_vhlo.0_15_0.mlir.bc";
  if (!fs::exists(old_path) || !fs::exists(new_path)) GTEST_SKIP() << "test data not found";
  absl::StatusOr<std::unique_ptr<Operation>> a = ReadMlirBytecode(ReadFileBytes(old_path));
  absl::StatusOr<std::unique_ptr<Operation>> b = ReadMlirBytecode(ReadFileBytes(new_path));
  ASSERT_TRUE(a.ok() && b.ok());
  auto find = [](const Operation& m, const std::string& sym) -> const Operation* {
    for (const auto& op : m.regions[0].blocks[0]->operations) {
      const Attribute* name = op->FindAttribute("sym_name");
      if (name != nullptr && !name->params.empty() && name->params[0].s == sym) return op.get();
    }
    return nullptr;
  };
  const Operation* fa = find(**a, "attr_comparison_direction_eq");
  const Operation* fb = find(**b, "attr_comparison_direction_eq");
  ASSERT_NE(fa, nullptr);
  ASSERT_NE(fb, nullptr);
  std::string why;
  EXPECT_TRUE(StructurallyEqual(*fa, *fb, &why)) << why;
}

}  // namespace
}  // namespace ember::frontend
