// chlo.top_k on the host backend's native selection (top_k_thunk.h) against the evaluator: every
// element type it takes, NaN/inf/-0/ties among random values, k = 0, 1, n and in between (both
// the heap and the full selection), rows of one element, rank 1 to 3, s32 and s64 indices, an
// unread result; a row too large for the launch's memory account is RESOURCE_EXHAUSTED naming
// the op; types it does not take stay on the evaluator with the reason in the cost report.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/memory_account.h"
#include "tests/compiler/host/native_op_differential.h"

namespace ember::host {
namespace {

using namespace testing;  // NOLINT: the shared differential helpers
namespace ti = codegen::test_inputs;

// `%r:2 = chlo.top_k(%x, k)`, returning the values, the indices, or both.
std::string TopKProgram(const std::vector<int64_t>& dims, int64_t k, const char* type,
                        const char* index_type, const std::string& returned) {
  std::vector<int64_t> out = dims;
  out.back() = k;
  const std::string x = TensorType(dims, type), v = TensorType(out, type),
                    i = TensorType(out, index_type);
  std::string results = returned == "values" ? v : returned == "indices" ? i : v + ", " + i;
  std::string values = returned == "values"    ? "%r#0"
                       : returned == "indices" ? "%r#1"
                                               : "%r#0, %r#1";
  return absl::StrCat("func.func @main(%x: ", x, ") -> (", results, ") {\n",
                      "  %r:2 = chlo.top_k(%x, k = ", k, ") : ", x, " -> (", v, ", ", i, ")\n",
                      "  return ", values, " : ", results, "\n}\n");
}

struct Shape {
  std::vector<int64_t> dims;
  int64_t k;
};

TEST(TopKThunkTest, EveryTypeAndShapeMatchesTheEvaluator) {
  const Shape shapes[] = {{{1}, 1},      {{5, 17}, 1},    {{5, 17}, 17},    {{3, 40}, 5},
                          {{4, 300}, 8}, {{4, 300}, 120}, {{2, 3, 50}, 20}, {{7, 1}, 1},
                          {{6, 64}, 0},  {{3, 33}, 8}};
  uint64_t seed = 1;
  for (const ti::TypeInfo& info : ti::kTypes) {
    if (info.type == ir::ElementType::kPred) continue;  // the evaluator's only, see below
    for (const Shape& s : shapes) {
      SCOPED_TRACE(absl::StrCat(info.mlir, " ", absl::StrJoin(s.dims, "x"), " k ", s.k));
      std::mt19937_64 rng(seed++);
      const std::string text = TopKProgram(s.dims, s.k, info.mlir, "i32", "both");
      NativeRun run = RunBothBackends(text, MixedArray(info.type, s.dims, rng));
      EXPECT_EQ(CompareResults(run), 0) << text;
      EXPECT_EQ(run.cost_report.find("  evaluator "), std::string::npos) << run.cost_report;
    }
  }
}

TEST(TopKThunkTest, WideIndicesAndUnreadResults) {
  uint64_t seed = 100;
  for (const char* returned : {"values", "indices", "both"}) {
    for (const char* index_type : {"i32", "i64", "ui32"}) {
      SCOPED_TRACE(absl::StrCat(returned, " ", index_type));
      std::mt19937_64 rng(seed++);
      const std::string text = TopKProgram({6, 90}, 7, "f32", index_type, returned);
      NativeRun run = RunBothBackends(text, MixedArray(ir::ElementType::kF32, {6, 90}, rng));
      EXPECT_EQ(CompareResults(run), 0) << text;
      EXPECT_EQ(run.cost_report.find("  evaluator "), std::string::npos) << run.cost_report;
    }
  }
}

TEST(TopKThunkTest, LargeRowsInParallel) {
  // More rows than one part takes, on several threads; ties among NaN, +inf, -0 and +0.
  std::mt19937_64 rng(7);
  const std::string text = TopKProgram({300, 1000}, 8, "f32", "i32", "both");
  NativeRun run = RunBothBackends(text, MixedArray(ir::ElementType::kF32, {300, 1000}, rng));
  EXPECT_EQ(CompareResults(run), 0);
}

TEST(TopKThunkTest, TypesItDoesNotTakeStayOnTheEvaluatorWithTheReason) {
  std::mt19937_64 rng(9);
  const std::string text = TopKProgram({4, 20}, 3, "i1", "i32", "both");
  NativeRun run = RunBothBackends(text, MixedArray(ir::ElementType::kPred, {4, 20}, rng));
  EXPECT_EQ(CompareResults(run), 0);
  EXPECT_NE(run.cost_report.find("  evaluator "), std::string::npos) << run.cost_report;
  EXPECT_NE(run.cost_report.find("no native selection for the type"), std::string::npos)
      << run.cost_report;
}

// Refuses charges past `limit` bytes in all.
class LimitedAccount final : public MemoryAccount {
 public:
  explicit LimitedAccount(uint64_t limit) : limit_(limit) {}
  absl::Status Charge(uint64_t bytes) override {
    if (used_.fetch_add(bytes) + bytes > limit_) {
      used_.fetch_sub(bytes);
      return absl::ResourceExhaustedError(absl::StrCat("over the limit of ", limit_, " bytes"));
    }
    return absl::OkStatus();
  }
  void Release(uint64_t bytes) override { used_.fetch_sub(bytes); }

 private:
  uint64_t limit_;
  std::atomic<uint64_t> used_{0};
};

TEST(TopKThunkTest, ScratchPastTheMemoryAccountIsResourceExhaustedNamingTheOp) {
  // k = n / 2 takes the full selection: 16 bytes of working array per element of each row
  // (1.6 MB for a row of 100000), more than the 1 MB left after the 400 KB result.
  const std::vector<int64_t> dims = {1, 100000};
  std::mt19937_64 rng(11);
  std::unique_ptr<ir::Module> module =
      test_util::Parse(TopKProgram(dims, 50000, "f32", "i32", "both"));
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(passes::CreateDefaultPipeline().Run(*module).ok());
  auto exe = testing::Compile(*module->entry());
  ASSERT_TRUE(exe.ok()) << exe.status();
  std::vector<eval::EvalValue> args;
  args.push_back(eval::EvalValue::Array(MixedArray(ir::ElementType::kF32, dims, rng)));
  LimitedAccount account(1 << 20);
  absl::StatusOr<std::vector<eval::EvalValue>> out;
  {
    ScopedMemoryAccount scope(&account);
    out = (*exe)->Run(std::move(args));
  }
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted) << out.status();
  EXPECT_NE(out.status().message().find("top_k"), std::string::npos) << out.status();
}

}  // namespace
}  // namespace ember::host
