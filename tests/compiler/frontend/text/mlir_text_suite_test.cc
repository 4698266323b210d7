// Parses every .mlir file of the StableHLO suites (interpret/, testdata/ and the .mlir twins of
// the vhlo/ bytecode files), chunk by chunk at `// -----`, and checks the outcome against
// text_expected_failures.txt: an unlisted failure or a listed success fails the test.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/frontend/text/mlir_text_parser.h"
#include "gtest/gtest.h"

namespace ember::frontend {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `relative/path: reason` lines; '#' starts a comment.
std::map<std::string, std::string> ReadExpectedFailures() {
  std::map<std::string, std::string> out;
  std::ifstream in(EMBER_TEXT_EXPECTED_FAILURES);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t colon = line.find(": ");
    if (colon == std::string::npos) continue;
    out[line.substr(0, colon)] = line.substr(colon + 2);
  }
  return out;
}

TEST(MlirTextSuiteTest, ParsesEveryStablehloTestFile) {
  const fs::path root = EMBER_STABLEHLO_TESTDATA;
  if (!fs::exists(root)) {
    std::cout << "StableHLO test data not found at " << root << "; skipping\n";
    GTEST_SKIP();
  }
  const std::map<std::string, std::string> expected = ReadExpectedFailures();
  std::set<std::string> seen_expected;
  std::vector<std::string> problems;
  for (const char* folder : {"interpret", "testdata", "vhlo"}) {
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(root / folder)) {
      if (!e.is_regular_file() || e.path().extension() != ".mlir") continue;
      if (std::string(folder) == "vhlo" && !fs::exists(e.path().string() + ".bc")) continue;
      files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    int parsed = 0, listed = 0;
    for (const fs::path& f : files) {
      const std::string rel = fs::relative(f, root).string();
      const std::string text = ReadFile(f);
      std::string error;
      for (const MlirTextChunk& chunk : SplitMlirInput(text)) {
        auto module = ParseMlirText(chunk.text, rel);
        if (!module.ok()) {
          error = std::string(module.status().message());
          break;
        }
        if ((*module)->name != "builtin.module") error = "top-level op is not a module";
      }
      const bool is_expected = expected.count(rel) > 0;
      if (is_expected) {
        seen_expected.insert(rel);
        ++listed;
      }
      if (error.empty()) {
        ++parsed;
        if (is_expected) problems.push_back(rel + ": listed as expected failure but parses");
      } else if (!is_expected) {
        problems.push_back(rel + ": " + error);
      }
    }
    std::cout << folder << ": parsed " << parsed << " / " << files.size()
              << " (expected failures: " << listed << ")\n";
  }
  for (const auto& [path, reason] : expected) {
    if (!seen_expected.count(path)) problems.push_back(path + ": listed but not found");
  }
  for (size_t i = 0; i < problems.size() && i < 50; ++i) ADD_FAILURE() << problems[i];
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems";
}

}  // namespace
}  // namespace ember::frontend
