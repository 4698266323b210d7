// Test helpers of the fast dot tests (narrow_dot_test, integer_complex_dot_test): one
// dot_general per program, compiled through the default pipeline on the host backend and as is
// on the evaluator, with the compiled one checked to run every kernel fast, the dot as a dot
// kernel (the cost report says which).
#ifndef EMBER_TESTS_COMPILER_HOST_DOT_CASES_H_
#define EMBER_TESTS_COMPILER_HOST_DOT_CASES_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/passes/pass.h"
#include "tests/compiler/host/host_test_util.h"
#include "tests/compiler/parse_module.h"

namespace ember::host::testing {

struct DotCase {
  std::string name;
  std::string lhs, rhs, out;  // tensor types
  std::string dims;           // batching_dims / contracting_dims text
  int64_t depth;              // products summed per result element
};

inline std::string DotProgram(const DotCase& c) {
  return absl::StrCat("func.func @main(%a: ", c.lhs, ", %b: ", c.rhs, ") -> ", c.out, " {\n",
                      "  %0 = stablehlo.dot_general %a, %b, ", c.dims, " : (", c.lhs, ", ", c.rhs,
                      ") -> ", c.out, "\n  return %0 : ", c.out, "\n}\n");
}

struct CompiledDot {
  std::unique_ptr<CompiledEntry> compiled, evaluator;
  std::unique_ptr<ir::Module> module;  // as parsed: its entry gives the parameters' types
};

// Compiles `text` both ways; on a failure (reported) `compiled` is null.
inline CompiledDot CompileDotBothWays(const std::string& text) {
  CompiledDot out;
  out.module = test_util::Parse(text);
  if (out.module == nullptr) {
    ADD_FAILURE() << "does not parse:\n" << text;
    return out;
  }
  auto evaluator = Compile(*out.module->entry(), HostBackend::kEvaluator);
  EXPECT_TRUE(evaluator.ok()) << evaluator.status();
  std::unique_ptr<ir::Module> optimized = test_util::Parse(text);
  passes::PassPipeline pipeline = passes::CreateDefaultPipeline();
  auto changed = pipeline.Run(*optimized);
  EXPECT_TRUE(changed.ok()) << changed.status();
  auto compiled = Compile(*optimized->entry(), HostBackend::kCompiled);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  if (!evaluator.ok() || !compiled.ok()) return out;
  out.evaluator = *std::move(evaluator);
  out.compiled = *std::move(compiled);
  EXPECT_EQ(out.compiled->backend(), HostBackend::kCompiled);
  const std::string& report = out.compiled->cost_report();
  EXPECT_TRUE(absl::StrContains(
      report, absl::StrCat("fast kernels: ", out.compiled->kernel_count(), " of ",
                           out.compiled->kernel_count())))
      << report;
  EXPECT_TRUE(absl::StrContains(report, " dot ")) << report;
  return out;
}

// Copies of `args`, for one run (a run consumes its arguments).
inline std::vector<eval::EvalValue> CloneArgs(const std::vector<eval::EvalValue>& args) {
  std::vector<eval::EvalValue> copy;
  for (const eval::EvalValue& a : args) copy.push_back(a.Clone());
  return copy;
}

}  // namespace ember::host::testing

#endif  // EMBER_TESTS_COMPILER_HOST_DOT_CASES_H_
