// Imports (and verifies) every module of ../shared/testdata/stablehlo: interpret/ and testdata/
// through the text parser, vhlo/*.mlir.bc through the bytecode reader, and checks that each
// portable artifact imports to the same Module::ToString() as its .mlir twin. Failures must be
// listed in import_expected_failures.txt (`path: reason`), and listed cases must still fail.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "compiler/frontend/bytecode_reader.h"
#include "compiler/frontend/import/import.h"
#include "compiler/frontend/text/mlir_text_parser.h"
#include "compiler/ir/verifier.h"
#include "pjrt_plugin/version.h"
#include "gtest/gtest.h"

namespace ember::frontend {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// path (relative to the testdata root, "#chunk" appended for split files) -> reason.
std::map<std::string, std::string> ReadExpectedFailures() {
  std::map<std::string, std::string> out;
  std::ifstream in(EMBER_IMPORT_EXPECTED_FAILURES);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t colon = line.find(": ");
    if (colon == std::string::npos) continue;
    out[line.substr(0, colon)] = line.substr(colon + 2);
  }
  return out;
}

struct Outcome {
  bool ok = false;
  std::string module_text;
  std::string error;
};

Outcome ImportAndVerify(absl::StatusOr<std::unique_ptr<Operation>> tree) {
  Outcome o;
  if (!tree.ok()) {
    o.error = absl::StrCat("read: ", tree.status().message());
    return o;
  }
  absl::StatusOr<std::unique_ptr<ir::Module>> module = ImportModule(**tree);
  if (!module.ok()) {
    o.error = absl::StrCat("import: ", module.status().message());
    return o;
  }
  o.module_text = (*module)->ToString();
  absl::Status verified = ir::Verify(**module);
  if (!verified.ok()) {
    o.error = absl::StrCat("verify: ", verified.message());
    return o;
  }
  o.ok = true;
  return o;
}

class ImportSuiteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = EMBER_STABLEHLO_TESTDATA;
    if (!fs::exists(root_)) {
      GTEST_SKIP() << "no StableHLO test data at " << root_;
    }
    expected_ = ReadExpectedFailures();
  }

  // Records one case; returns its outcome.
  void Record(const std::string& key, const Outcome& o, int* passed, int* failed) {
    seen_.insert(key);
    auto it = expected_.find(key);
    if (o.ok) {
      ++*passed;
      if (it != expected_.end()) {
        ADD_FAILURE() << key << " is listed as an expected failure (" << it->second
                      << ") but now passes: remove it from import_expected_failures.txt";
      }
    } else {
      ++*failed;
      if (it == expected_.end()) {
        std::string first_line = o.error.substr(0, o.error.find('\n'));
        ADD_FAILURE() << key << ": " << first_line;
        unexpected_.push_back(absl::StrCat(key, ": ", first_line.substr(0, 160)));
      }
    }
  }

  void RunTextFolder(const std::string& folder) {
    const fs::path dir = root_ / folder;
    if (!fs::exists(dir)) GTEST_SKIP() << "missing " << dir;
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (e.is_regular_file() && e.path().extension() == ".mlir") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    int passed = 0, failed = 0, chunks_total = 0;
    for (const fs::path& f : files) {
      const std::string rel = fs::relative(f, root_).string();
      const std::string text = ReadFile(f);
      std::vector<MlirTextChunk> chunks = SplitMlirInput(text);
      for (size_t i = 0; i < chunks.size(); ++i) {
        ++chunks_total;
        const std::string key = chunks.size() == 1 ? rel : absl::StrCat(rel, "#", i);
        Outcome o = ImportAndVerify(ParseMlirText(chunks[i].text, rel));
        Record(key, o, &passed, &failed);
      }
    }
    std::printf("[import suite] %s: %zu files, %d modules: %d imported and verified, %d failed\n",
                folder.c_str(), files.size(), chunks_total, passed, failed);
  }

  void TearDown() override {
    if (!unexpected_.empty()) {
      std::printf("[import suite] unexpected failures (for import_expected_failures.txt):\n");
      for (const std::string& s : unexpected_) std::printf("%s\n", s.c_str());
    }
  }

  fs::path root_;
  std::map<std::string, std::string> expected_;
  std::set<std::string> seen_;
  std::vector<std::string> unexpected_;
};

TEST_F(ImportSuiteTest, Interpret) { RunTextFolder("interpret"); }

TEST_F(ImportSuiteTest, Testdata) { RunTextFolder("testdata"); }

// The artifacts exercise every op, attribute and type StableHLO has, at every version: both forms
// are imported function by function (so one failure names its function), and every function
// must import, verify, and print the same from the artifact as from its text twin.
struct Lenient {
  std::string text;   // Module::ToString() of the importable functions
  std::string error;  // empty when imported and verified
  std::vector<std::string> skipped;
};

Lenient ImportLenient(absl::StatusOr<std::unique_ptr<Operation>> tree) {
  Lenient out;
  if (!tree.ok()) {
    out.error = absl::StrCat("read: ", tree.status().message());
    return out;
  }
  ImportOptions options;
  options.skip_failing_functions = true;
  absl::StatusOr<ImportResult> result = ImportModule(**tree, options);
  if (!result.ok()) {
    out.error = absl::StrCat("import: ", result.status().message());
    return out;
  }
  out.text = result->module->ToString();
  out.skipped = result->skipped;
  if (absl::Status s = ir::Verify(*result->module); !s.ok()) {
    out.error = absl::StrCat("verify: ", s.message());
  }
  return out;
}

// The skipped functions' errors without locations (text ops carry file:line, artifacts none).
std::vector<std::string> SkippedNames(const std::vector<std::string>& skipped) {
  std::vector<std::string> names;
  for (const std::string& s : skipped) names.push_back(s.substr(0, s.find(':')));
  return names;
}

TEST_F(ImportSuiteTest, VhloArtifactsMatchTheirText) {
  const fs::path dir = root_ / "vhlo";
  if (!fs::exists(dir)) GTEST_SKIP() << "missing " << dir;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (absl::EndsWith(name, ".mlir.bc") && !absl::StartsWith(name, "invalid_")) {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  int passed = 0, failed = 0, twins = 0;
  size_t functions = 0, declarations = 0, skipped = 0;
  for (const fs::path& f : files) {
    const std::string rel = fs::relative(f, root_).string();
    const std::string bytes = ReadFile(f);
    Lenient bc = ImportLenient(ReadMlirBytecode(absl::Span<const uint8_t>(
        reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size())));
    Outcome o;
    o.ok = bc.error.empty();
    o.error = bc.error;
    fs::path twin = f;
    twin.replace_extension();  // drop ".bc"
    if (o.ok && fs::exists(twin)) {
      ++twins;
      Lenient text = ImportLenient(ParseMlirText(ReadFile(twin), twin.filename().string()));
      if (!text.error.empty()) {
        o.ok = false;
        o.error = absl::StrCat("twin ", text.error);
      } else if (!bc.skipped.empty()) {
        // Every function of every version's artifact imports: a skipped one is a regression.
        o.ok = false;
        o.error = absl::StrCat("functions skipped: ", absl::StrJoin(bc.skipped, "; "));
      } else if (SkippedNames(text.skipped) != SkippedNames(bc.skipped)) {
        o.ok = false;
        o.error = absl::StrCat("text and bytecode skip different functions: text [",
                               absl::StrJoin(SkippedNames(text.skipped), ", "), "] bc [",
                               absl::StrJoin(SkippedNames(bc.skipped), ", "), "]");
      } else if (text.text != bc.text) {
        std::istringstream a(text.text), b(bc.text);
        std::string la, lb;
        int line = 0;
        while (std::getline(a, la) && std::getline(b, lb) && la == lb) ++line;
        o.ok = false;
        o.error = absl::StrCat("text and bytecode differ at line ", line + 1, ": text `",
                               la.substr(0, 300), "` bc `", lb.substr(0, 300), "`");
      }
    }
    for (absl::string_view line : absl::StrSplit(bc.text, '\n')) {
      if (absl::StartsWith(line, "func ")) ++functions;
      // Declarations without a body: `func.declarations = {name = "(...) -> (...)", ...}`.
      if (absl::StartsWith(line, "module ")) {
        const size_t at = line.find("func.declarations = {");
        if (at != absl::string_view::npos) {
          size_t depth = 0;
          for (size_t i = at + 20; i < line.size(); ++i) {
            if (line[i] == '{') ++depth;
            if (line[i] == '}' && --depth == 0) break;
            if (line[i] == '"') {
              ++declarations;
              i = line.find('"', i + 1);
              if (i == absl::string_view::npos) break;
            }
          }
        }
      }
    }
    skipped += bc.skipped.size();
    if (std::getenv("EMBER_IMPORT_SUITE_VERBOSE") != nullptr) {
      for (const std::string& s : bc.skipped) std::printf("  %s skipped %s\n", rel.c_str(), s.c_str());
    }
    Record(rel, o, &passed, &failed);
  }
  std::printf("[import suite] vhlo: %zu artifacts: %d imported, verified and equal to their "
              ".mlir twin (%d twins), %d failed; %zu functions and %zu declarations imported, "
              "%zu skipped\n",
              files.size(), passed, twins, failed, functions, declarations, skipped);
}

// The ops StableHLO 1.17 ... 1.20 added or re-versioned, from the upstream portable artifacts:
// custom_call_v2 (1.18, result_tilings) and collective_broadcast_v2 (1.20, variadic,
// has_dynamic_root) import; collective_reduce_v1 (1.19) has no Ember opcode yet.
std::string FunctionText(const std::string& module, const std::string& name) {
  const std::string header = absl::StrCat("func private @", name, "(");
  size_t begin = module.find(header);
  if (begin == std::string::npos) begin = module.find(absl::StrCat("func public @", name, "("));
  if (begin == std::string::npos) return "";
  return module.substr(begin, module.find("\n}\n", begin) - begin);
}

TEST_F(ImportSuiteTest, NewerVhloOpVersions) {
  auto import = [&](const char* file) {
    const fs::path path = root_ / "vhlo" / file;
    if (!fs::exists(path)) return Lenient{"", "missing", {}};
    const std::string bytes = ReadFile(path);
    return ImportLenient(ReadMlirBytecode(absl::Span<const uint8_t>(
        reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size())));
  };
  const Lenient v18 = import("stablehlo_legalize_to_vhlo.1_18_0.mlir.bc");
  ASSERT_EQ(v18.error, "");
  const std::string tilings = FunctionText(v18.text, "op_custom_call_with_result_tilings");
  EXPECT_NE(tilings.find("custom_call(%0) {call_target_name = \"foo\", has_side_effect = false, "
                         "api_version = 2, operand_layouts = [[1, 0]], result_layouts = [[1, 0]], "
                         "result_tilings = [[[8, 128]]]}"),
            std::string::npos)
      << tilings;
  // The default (empty) result_tilings of a custom_call_v2 is dropped.
  const std::string plain = FunctionText(v18.text, "op_custom_call");
  EXPECT_NE(plain.find("custom_call(%0)"), std::string::npos) << v18.text.substr(0, 200);
  EXPECT_EQ(plain.find("result_tilings"), std::string::npos) << plain;

  const Lenient v20 = import("stablehlo_legalize_to_vhlo.1_20_0.mlir.bc");
  ASSERT_EQ(v20.error, "");
  for (const char* name : {"default_collective_broadcast", "op_collective_broadcast"}) {
    const std::string text = FunctionText(v20.text, name);
    EXPECT_NE(text.find("collective_broadcast("), std::string::npos) << name << ": " << text;
  }
  // 1.19's collective_reduce, with the root operand of has_dynamic_root.
  const std::string reduce = FunctionText(v20.text, "op_collective_reduce");
  EXPECT_NE(reduce.find("collective_reduce(%0, %1)"), std::string::npos) << reduce;
  EXPECT_NE(reduce.find("has_dynamic_root = true"), std::string::npos) << reduce;
  EXPECT_NE(FunctionText(v20.text, "default_collective_reduce").find("collective_reduce(%0)"),
            std::string::npos);
}

// The StableHLO version the plugin advertises (the framework serializes at min(its own, this))
// must be one whose ops the importer knows: in the upstream artifact of that minor version, no
// function may fail on an op Ember does not take or on VHLO attributes it does not expect.
// (The whole suite, above, also requires every function of every version to import.)
TEST_F(ImportSuiteTest, AdvertisedStableHloVersionImports) {
  const int64_t* v = pjrt::kStableHloCurrent;
  const fs::path path =
      root_ / "vhlo" / absl::StrCat("stablehlo_legalize_to_vhlo.", v[0], "_", v[1], "_0.mlir.bc");
  ASSERT_TRUE(fs::exists(path)) << "no upstream artifact for the advertised version: " << path;
  const std::string bytes = ReadFile(path);
  const Lenient result = ImportLenient(ReadMlirBytecode(absl::Span<const uint8_t>(
      reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size())));
  ASSERT_EQ(result.error, "");
  for (const std::string& s : result.skipped) {
    for (const char* gap : {"is not supported by Ember", "unknown VHLO op", "unknown attribute",
                            "missing attribute"}) {
      EXPECT_EQ(s.find(gap), std::string::npos) << path.filename() << ": " << s;
    }
  }
}

}  // namespace
}  // namespace ember::frontend
