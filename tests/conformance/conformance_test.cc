// StableHLO conformance: every case of the upstream interpret/ and testdata/ folders runs through
// the same path as a JAX program (parse -> import -> verify -> CompiledProgram ->
// runtime::Executable on a host client -> Execute -> await). A case passes iff nothing errors;
// failed check.* custom calls surface as execution errors. expected_failures.txt lists every
// failing case with a reason; the test fails when an unlisted case fails or a listed case passes.
//
// Environment: EMBER_CONFORMANCE_WRITE=<path> writes the observed failures as a new list;
// EMBER_CONFORMANCE_FILTER=<substring> runs only matching case ids (the list check is then
// limited to those cases).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/frontend/text/mlir_text_parser.h"
#include "gtest/gtest.h"
#include "runtime/client.h"
#include "runtime/executable.h"
#include "tests/conformance/conformance_program.h"

namespace ember::conformance {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::string id;      // "interpret/add.mlir#3" or "testdata/foo.mlir"
  std::string folder;  // "interpret" or "testdata"
  std::string text;
  std::string filename;
  std::string entry;  // "main" for testdata, empty (module entry) for interpret
  bool disabled = false;
};

struct Outcome {
  bool passed = false;
  std::string error;
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The file's RUN line is `// RUN-DISABLED...` (disabled upstream as well).
bool IsDisabled(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("// RUN-DISABLED", 0) == 0) return true;
    if (line.rfind("// RUN:", 0) == 0) return false;
  }
  return false;
}

std::vector<fs::path> MlirFiles(const fs::path& dir) {
  std::vector<fs::path> files;
  if (!fs::is_directory(dir)) return files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".mlir") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<Case> CollectCases(const fs::path& root) {
  std::vector<Case> cases;
  for (const fs::path& file : MlirFiles(root / "interpret")) {
    const std::string text = ReadFile(file);
    const std::string rel = fs::relative(file, root).generic_string();
    const bool disabled = IsDisabled(text);
    std::vector<frontend::MlirTextChunk> chunks = frontend::SplitMlirInput(text);
    int index = 0;
    for (auto& chunk : chunks) {
      ++index;
      Case c;
      c.id = absl::StrCat(rel, "#", index);
      c.folder = "interpret";
      c.text = std::move(chunk.text);
      c.filename = rel;
      c.disabled = disabled;
      cases.push_back(std::move(c));
    }
  }
  for (const fs::path& file : MlirFiles(root / "testdata")) {
    Case c;
    c.text = ReadFile(file);
    c.id = fs::relative(file, root).generic_string();
    c.folder = "testdata";
    c.filename = c.id;
    c.entry = "main";
    c.disabled = IsDisabled(c.text);
    cases.push_back(std::move(c));
  }
  return cases;
}

absl::Status RunCase(const std::shared_ptr<runtime::Client>& client, const Case& c) {
  absl::StatusOr<std::unique_ptr<compiler::CompiledProgram>> program =
      ProgramFromText(c.text, c.filename, c.entry);
  if (!program.ok()) return program.status();
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      runtime::Executable::Create(client, *std::move(program));
  if (!executable.ok()) {
    return absl::Status(executable.status().code(),
                        absl::StrCat("compile: ", std::string(executable.status().message())));
  }
  std::vector<std::vector<runtime::Buffer*>> arguments((*executable)->devices().size());
  absl::StatusOr<runtime::Executable::Launch> launch =
      (*executable)->Execute(arguments, {}, nullptr);
  if (!launch.ok()) {
    return absl::Status(launch.status().code(),
                        absl::StrCat("execute: ", std::string(launch.status().message())));
  }
  for (const runtime::AsyncEventRef& done : launch->done) {
    if (absl::Status s = done->Await(); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("execute: ", std::string(s.message())));
    }
  }
  return absl::OkStatus();
}

// Drops a leading "file:line:col: " location.
std::string StripLocation(std::string s) {
  for (int k = 0; k < 3; ++k) {
    const size_t colon = s.find(": ");
    if (colon == std::string::npos) break;
    const std::string head = s.substr(0, colon);
    if (head.find(".mlir") != std::string::npos || head.find("<program>") != std::string::npos) {
      s = s.substr(colon + 2);
    } else {
      break;
    }
  }
  return s;
}

std::string OneLine(std::string s, size_t max) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (s.size() > max) s = s.substr(0, max);
  while (!s.empty() && (s.back() == ' ' || s.back() == ':' || s.back() == ',')) s.pop_back();
  return s;
}

std::string Reason(const Case& c, const std::string& error) {
  if (c.text.find("interpreter.run_parallel") != std::string::npos) {
    return "multi-device programs not supported yet";
  }
  auto between = [&](std::string_view before, std::string_view after) -> std::string {
    const size_t b = error.find(before);
    if (b == std::string::npos) return "";
    const size_t from = b + before.size();
    const size_t e = error.find(after, from);
    return e == std::string::npos ? "" : error.substr(from, e - from);
  };
  if (error.find("has a dynamic dimension") != std::string::npos) return "import: dynamic shapes";
  if (error.find("!quant.") != std::string::npos) return "import: quantized types";
  if (const size_t e = error.find(" is not supported by the importer"); e != std::string::npos) {
    const size_t b = error.rfind("chlo.", e);
    if (b != std::string::npos) {
      return absl::StrCat("import: chlo op ", error.substr(b + 5, e - b - 5));
    }
  }
  if (std::string target = between("custom_call target '", "' is not supported by the evaluator");
      !target.empty()) {
    return absl::StrCat("evaluator: custom_call ", target, " not supported");
  }
  for (const char* check : {"check.expect_close", "check.expect_almost_eq", "check.expect_eq"}) {
    if (error.find(absl::StrCat(check, " failed")) != std::string::npos) {
      return absl::StrCat("evaluator: result mismatch (", check, ")");
    }
  }
  const size_t colon = error.find(": ");
  const std::string stage = colon == std::string::npos ? "error" : error.substr(0, colon);
  std::string rest = colon == std::string::npos ? error : error.substr(colon + 2);
  rest = StripLocation(rest);
  return OneLine(absl::StrCat(stage, ": ", rest), 160);
}

std::map<std::string, std::string> ReadExpectedFailures(const fs::path& path) {
  std::map<std::string, std::string> expected;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t colon = line.find(": ");
    if (colon == std::string::npos) {
      expected[line] = "";
    } else {
      expected[line.substr(0, colon)] = line.substr(colon + 2);
    }
  }
  return expected;
}

TEST(ConformanceTest, StablehloInterpretAndTestdata) {
  const fs::path root = EMBER_CONFORMANCE_DATA_DIR;
  if (!fs::is_directory(root / "interpret") && !fs::is_directory(root / "testdata")) {
    std::cout << "StableHLO test data not found at " << root.string() << "; skipping\n";
    GTEST_SKIP() << "no test data at " << root.string();
  }
  std::vector<Case> cases = CollectCases(root);
  if (const char* filter = std::getenv("EMBER_CONFORMANCE_FILTER")) {
    std::erase_if(cases, [&](const Case& c) { return c.id.find(filter) == std::string::npos; });
  }
  const std::map<std::string, std::string> expected =
      ReadExpectedFailures(fs::path(EMBER_CONFORMANCE_SOURCE_DIR) / "expected_failures.txt");

  const auto start = std::chrono::steady_clock::now();
  std::vector<Outcome> outcomes(cases.size());
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    runtime::ClientOptions options;
    options.platform = "host";
    absl::StatusOr<std::shared_ptr<runtime::Client>> client = runtime::Client::Create(options);
    for (size_t i = next++; i < cases.size(); i = next++) {
      if (cases[i].disabled) continue;
      if (!client.ok()) {
        outcomes[i].error = absl::StrCat("client: ", std::string(client.status().message()));
        continue;
      }
      absl::Status s = RunCase(*client, cases[i]);
      outcomes[i].passed = s.ok();
      if (!s.ok()) outcomes[i].error = std::string(s.message());
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  struct Counts {
    int passed = 0, expected_fail = 0, disabled = 0, total = 0;
  };
  std::map<std::string, Counts> counts;
  std::map<std::string, int> reasons;
  std::vector<std::string> unexpected_failures, unexpected_passes;
  std::ostringstream observed;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    Counts& n = counts[c.folder];
    ++n.total;
    if (c.disabled) {
      ++n.disabled;
      continue;
    }
    const bool listed = expected.count(c.id) > 0;
    if (outcomes[i].passed) {
      ++n.passed;
      if (listed) unexpected_passes.push_back(c.id);
      continue;
    }
    const std::string reason = Reason(c, outcomes[i].error);
    ++reasons[reason];
    observed << c.id << ": " << reason << "\n";
    if (listed) {
      ++n.expected_fail;
    } else {
      unexpected_failures.push_back(absl::StrCat(c.id, ": ", OneLine(outcomes[i].error, 400)));
    }
  }

  std::cout << "StableHLO conformance (" << cases.size() << " cases, " << seconds << " s)\n";
  for (const auto& [folder, n] : counts) {
    const int enabled = n.total - n.disabled;
    std::cout << "  " << folder << ": passed " << n.passed << " / failed-as-expected "
              << n.expected_fail << " / disabled " << n.disabled << " / total " << n.total
              << "  (" << (enabled ? 100.0 * n.passed / enabled : 0.0) << "% of enabled)\n";
  }
  std::vector<std::pair<int, std::string>> by_count;
  for (const auto& [reason, count] : reasons) by_count.emplace_back(count, reason);
  std::sort(by_count.rbegin(), by_count.rend());
  std::cout << "  failure reasons:\n";
  for (size_t i = 0; i < by_count.size() && i < 25; ++i) {
    std::cout << "    " << by_count[i].first << "  " << by_count[i].second << "\n";
  }

  if (const char* out = std::getenv("EMBER_CONFORMANCE_WRITE")) {
    std::ofstream file(out);
    file << "# StableHLO conformance cases that fail today: `case_id: reason`.\n"
         << "# Regenerate with EMBER_CONFORMANCE_WRITE=<path> ember_conformance_test.\n"
         << observed.str();
    std::cout << "  wrote observed failures to " << out << "\n";
  }

  for (const std::string& f : unexpected_failures) ADD_FAILURE() << "unexpected failure: " << f;
  for (const std::string& p : unexpected_passes) {
    ADD_FAILURE() << "listed in expected_failures.txt but passes (remove it): " << p;
  }
}

}  // namespace
}  // namespace ember::conformance
