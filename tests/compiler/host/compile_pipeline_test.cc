// The driver's optimizing pipeline for host programs: CompileProgram runs the passes, builds the
// compiled host executable (the default) or the evaluator (CompilerOptions::host_backend), and with
// CompilerOptions::dump_to writes the IR after each pass, the fusion plan, the cost report
// and the buffer assignment under stable names.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "compiler/driver/compile_program.h"
#include "compiler/codegen/host_kernel_compiler.h"
#include "compiler/host/host_runner.h"
#include "tests/backend_test_util.h"

namespace ember::compiler {
namespace {

constexpr char kProgram[] = R"(
func.func private @f(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.exponential %a : tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = func.call @f(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = stablehlo.negate %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
})";

absl::Span<const uint8_t> Bytes(const std::string& s) {
  return absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class CompilePipelineTest : public ::testing::Test {};

TEST_F(CompilePipelineTest, CompiledByDefaultWithDumps) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ember_pipeline_dump_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  CompilerOptions options;
  options.dump_to = dir.string();
  const std::string text = kProgram;
  auto program = CompileProgram("mlir", Bytes(text), frontend::CompileOptions{}, test_util::HostTestBackend(options), options);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ((*program)->executable->backend(), "host");
  EXPECT_EQ((*program)->executable->reports().kernel_count, 1);  // exp and negate fused after inlining
  const std::string fp = (*program)->fingerprint;
  for (const char* suffix : {".input.mlir", ".imported.txt", ".01.inline.txt", ".02.algsimp.txt",
                             ".03.constant_folding.txt", ".04.cse.txt", ".05.algsimp.txt",
                             ".06.dce.txt", ".fusion.dot", ".cost.txt", ".buffers.txt"}) {
    EXPECT_TRUE(std::filesystem::exists(dir / (fp + suffix))) << fp + suffix;
  }
  EXPECT_FALSE(absl::StrContains(ReadFile(dir / (fp + ".01.inline.txt")), "call("));
  EXPECT_TRUE(absl::StrContains(ReadFile(dir / (fp + ".fusion.dot")), "digraph"));
  EXPECT_TRUE(absl::StrContains(ReadFile(dir / (fp + ".cost.txt")), "total: 1 kernels"));
  EXPECT_TRUE(absl::StrContains(ReadFile(dir / (fp + ".buffers.txt")), "output index=0"));
  // The signature is the program as sent.
  ASSERT_EQ((*program)->parameter_types.size(), 1u);
  EXPECT_EQ((*program)->parameter_types[0].ToString(), "tensor<8xf32>");
  std::filesystem::remove_all(dir);
}

// The kernel modules' IR files in a program dump whose names end in `suffix`.
std::vector<std::string> KernelDumps(const std::filesystem::path& dir, const std::string& suffix) {
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (absl::StartsWith(name, "ember-kernels-") && absl::EndsWith(name, suffix)) {
      paths.push_back(entry.path().string());
    }
  }
  return paths;
}

TEST_F(CompilePipelineTest, DumpsTheLlvmIrOfCompiledKernels) {
  if (!codegen::HostCodegenBuilt()) GTEST_SKIP() << "built without the LLVM code generator";
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ember_llvm_dump_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  CompilerOptions options;
  options.dump_to = dir.string();
  const std::string text = R"(
func.func @main(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = stablehlo.exponential %x : tensor<64x64xf32>
  %1 = stablehlo.negate %0 : tensor<64x64xf32>
  return %1 : tensor<64x64xf32>
}
)";
  auto program = CompileProgram("mlir", Bytes(text), frontend::CompileOptions{},
                                test_util::HostTestBackend(options), options);
  ASSERT_TRUE(program.ok()) << program.status();
  // One module, as emitted and as optimized, named by its cache key.
  const std::vector<std::string> emitted = KernelDumps(dir, ".ir-no-opt.ll");
  const std::vector<std::string> optimized = KernelDumps(dir, ".ir-with-opt.ll");
  ASSERT_EQ(emitted.size(), 1u);
  ASSERT_EQ(optimized.size(), 1u);
  EXPECT_TRUE(absl::StrContains(ReadFile(emitted[0]), "define void @"));
  EXPECT_TRUE(absl::StrContains(ReadFile(optimized[0]), "<16 x float>") ||
              absl::StrContains(ReadFile(optimized[0]), "<8 x float>"))
      << "the optimized kernel is vectorized";
  std::filesystem::remove_all(dir);
}

TEST_F(CompilePipelineTest, RowReductionsWithSideOutputsVectorizeWithoutOverlapChecks) {
  // softmax's middle kernel: exp(x - max) stored and summed along the row. The row loop is
  // marked parallel (outputs never overlap inputs), so the optimized kernel has no run-time
  // overlap checks and no scalar copy of the body behind them.
  if (!codegen::HostCodegenBuilt()) GTEST_SKIP() << "built without the LLVM code generator";
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ember_llvm_rows_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  CompilerOptions options;
  options.dump_to = dir.string();
  const std::string text = R"(
func.func @main(%x: tensor<4096x1024xf32>) -> tensor<4096x1024xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m0 = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<4096x1024xf32>, tensor<f32>) -> tensor<4096xf32>
  %nb = stablehlo.broadcast_in_dim %ninf, dims = [] : (tensor<f32>) -> tensor<4096xf32>
  %m = stablehlo.maximum %nb, %m0 : tensor<4096xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<4096xf32>) -> tensor<4096x1024xf32>
  %d = stablehlo.subtract %x, %mb : tensor<4096x1024xf32>
  %e = stablehlo.exponential %d : tensor<4096x1024xf32>
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4096x1024xf32>, tensor<f32>) -> tensor<4096xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<4096xf32>) -> tensor<4096x1024xf32>
  %r = stablehlo.divide %e, %sb : tensor<4096x1024xf32>
  return %r : tensor<4096x1024xf32>
}
)";
  auto program = CompileProgram("mlir", Bytes(text), frontend::CompileOptions{},
                                test_util::HostTestBackend(options), options);
  ASSERT_TRUE(program.ok()) << program.status();
  const std::vector<std::string> optimized = KernelDumps(dir, ".ir-with-opt.ll");
  EXPECT_FALSE(optimized.empty());
  for (const std::string& path : optimized) {
    const std::string ir = ReadFile(path);
    EXPECT_FALSE(absl::StrContains(ir, "found.conflict")) << ir;  // LLVM's overlap check
  }
  std::filesystem::remove_all(dir);
}

TEST_F(CompilePipelineTest, EvaluatorBackendFlag) {
  CompilerOptions options;
  options.host_backend = "evaluator";
  const std::string text = kProgram;
  auto program = CompileProgram("mlir", Bytes(text), frontend::CompileOptions{}, test_util::HostTestBackend(options), options);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ((*program)->executable->backend(), "evaluator");
  // The evaluator runs the program as imported: the call is still there.
  EXPECT_TRUE(absl::StrContains((*program)->module->ToString(), "call("));
  std::vector<eval::EvalValue> args;
  args.push_back(eval::EvalValue::Array(
      ir::Literal::FromValues<float>({8}, std::vector<float>{0, 1, 2, 3, -1, -2, 0.5f, 4}).value()));
  auto out = host::RunOnHost(*(*program)->executable, std::move(args));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].array.data<float>().value()[1], -static_cast<float>(std::exp(1.0)));
}

// Loop kernels are compiled by LLVM (the cost report names them), with the evaluator's bits.
TEST_F(CompilePipelineTest, LlvmLoopKernels) {
  const std::string text = R"(
func.func @main(%x: tensor<3000xf32>, %y: tensor<3000xf32>) -> tensor<3000xf32> {
  %0 = stablehlo.multiply %x, %y : tensor<3000xf32>
  %1 = stablehlo.maximum %0, %x : tensor<3000xf32>
  %2 = stablehlo.divide %1, %y : tensor<3000xf32>
  return %2 : tensor<3000xf32>
})";
  std::vector<float> x(3000), y(3000);
  for (int i = 0; i < 3000; ++i) {
    x[i] = std::sin(i * 1.7f) * 3;
    y[i] = std::cos(i * 0.3f) * 2;
  }
  CompilerOptions options;
  auto program = CompileProgram("mlir", Bytes(text), frontend::CompileOptions{},
                                test_util::HostTestBackend(options), options);
  ASSERT_TRUE(program.ok()) << program.status();
  const std::string& report = (*program)->executable->reports().cost_report;
  if (!codegen::HostCodegenBuilt()) {
    EXPECT_TRUE(absl::StrContains(report, "llvm kernels: 0 of 1")) << report;
  } else {
    EXPECT_TRUE(absl::StrContains(report, "llvm kernels: 1 of 1")) << report;
    EXPECT_TRUE(absl::StrContains(report, "llvm_loop.0")) << report;
  }
  std::vector<eval::EvalValue> args;
  args.push_back(eval::EvalValue::Array(ir::Literal::FromValues<float>({3000}, x).value()));
  args.push_back(eval::EvalValue::Array(ir::Literal::FromValues<float>({3000}, y).value()));
  auto out = host::RunOnHost(*(*program)->executable, std::move(args));
  ASSERT_TRUE(out.ok()) << out.status();
  auto values = (*out)[0].array.data<float>().value();
  for (int i = 0; i < 3000; ++i) {
    const float want = std::max(x[i] * y[i], x[i]) / y[i];
    EXPECT_EQ(std::memcmp(&values[i], &want, 4), 0) << i;
  }
}

// The code generator's persistent cache is the compile's own option, not a process-wide setting:
// each compile writes its object code under the directory its options name, and none without.
TEST_F(CompilePipelineTest, KernelCacheDirectoryComesWithEachCompile) {
  if (!codegen::HostCodegenBuilt()) GTEST_SKIP() << "this build has no LLVM code generator";
  const std::string text = R"(
func.func @main(%x: tensor<3000xf32>) -> tensor<3000xf32> {
  %0 = stablehlo.multiply %x, %x : tensor<3000xf32>
  %1 = stablehlo.add %0, %x : tensor<3000xf32>
  return %1 : tensor<3000xf32>
})";
  const std::filesystem::path root = std::filesystem::temp_directory_path() /
                                     ("ember_pipeline_cache_" + std::to_string(getpid()));
  std::filesystem::remove_all(root);
  auto entries = [](const std::filesystem::path& dir) {
    if (!std::filesystem::exists(dir)) return 0;
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) n += e.is_regular_file();
    return n;
  };
  for (const char* name : {"a", "b", ""}) {
    CompilerOptions options;
    if (*name != '\0') options.kernel_cache_dir = (root / name).string();
    auto program = CompileProgram("mlir", Bytes(text), frontend::CompileOptions{},
                                  test_util::HostTestBackend(options), options);
    ASSERT_TRUE(program.ok()) << program.status();
  }
  EXPECT_EQ(entries(root / "a"), 1);
  EXPECT_EQ(entries(root / "b"), 1);
  EXPECT_EQ(entries(root), 0);  // only the two directories: the third compile wrote nothing
  std::filesystem::remove_all(root);
}

// Kernels over a few elements are compiled too (there is no other fast path for them).
TEST_F(CompilePipelineTest, SmallKernelsAreCompiled) {
  if (!codegen::HostCodegenBuilt()) GTEST_SKIP() << "this build has no LLVM code generator";
  const std::string text = R"(
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.multiply %x, %x : tensor<8xf32>
  %1 = stablehlo.add %0, %x : tensor<8xf32>
  return %1 : tensor<8xf32>
})";
  CompilerOptions options;
  auto program = CompileProgram("mlir", Bytes(text), frontend::CompileOptions{},
                                test_util::HostTestBackend(options), options);
  ASSERT_TRUE(program.ok()) << program.status();
  const std::string& report = (*program)->executable->reports().cost_report;
  EXPECT_TRUE(absl::StrContains(report, "llvm kernels: 1 of 1")) << report;
  std::vector<eval::EvalValue> args;
  args.push_back(eval::EvalValue::Array(
      ir::Literal::FromValues<float>({8}, {1, -2, 3, 0.5f, -0.25f, 8, 1e20f, -3}).value()));
  auto out = host::RunOnHost(*(*program)->executable, std::move(args));
  ASSERT_TRUE(out.ok()) << out.status();
  auto values = (*out)[0].array.data<float>().value();
  const float x[] = {1, -2, 3, 0.5f, -0.25f, 8, 1e20f, -3};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(values[i], x[i] * x[i] + x[i]) << i;
}

TEST_F(CompilePipelineTest, UnknownBackendIsAnError) {
  CompilerOptions options;
  options.host_backend = "fast";
  auto backend = SelectBackend(test_util::TestBackends(), "host", options);
  ASSERT_FALSE(backend.ok());
  EXPECT_TRUE(absl::StrContains(backend.status().message(), "host_backend")) << backend.status();
  // No backend compiles for a platform without one.
  auto cuda = SelectBackend(test_util::TestBackends(), "cuda", CompilerOptions{});
  ASSERT_FALSE(cuda.ok());
  EXPECT_EQ(cuda.status().code(), absl::StatusCode::kUnimplemented);
}

// A shape-polymorphic program that was not refined: a clear error naming the argument, never a
// crash (JAX refines such programs before it compiles them).
TEST_F(CompilePipelineTest, DynamicShapesMustBeRefinedFirst) {
  const std::string text = R"(
func.func public @main(%arg0: tensor<i64>, %arg1: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = stablehlo.negate %arg1 : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
})";
  auto program = CompileProgram("mlir", Bytes(text), frontend::CompileOptions{}, test_util::HostTestBackend());
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(program.status().message(), "argument 1 of @main")) << program.status();
  EXPECT_TRUE(absl::StrContains(program.status().message(), "tensor<?x4xf32>")) << program.status();
  EXPECT_TRUE(absl::StrContains(program.status().message(), "refined to static shapes"))
      << program.status();
}

// Bounded dynamic dims import and verify, but Ember compiles static shapes: a clear error.
TEST_F(CompilePipelineTest, BoundedDynamicShapesAreAClearError) {
  const std::string text = R"(
func.func public @main(%arg0: tensor<?xf32, #stablehlo.bounds<8>>) -> tensor<?xf32, #stablehlo.bounds<8>> {
  %0 = stablehlo.negate %arg0 : tensor<?xf32, #stablehlo.bounds<8>>
  return %0 : tensor<?xf32, #stablehlo.bounds<8>>
})";
  auto program = CompileProgram("mlir", Bytes(text), frontend::CompileOptions{}, test_util::HostTestBackend());
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(program.status().message(),
                                "argument 0 of @main (type tensor<?xf32, #stablehlo.bounds<8>>) "
                                "has bounded dynamic dimensions"))
      << program.status();
}

}  // namespace
}  // namespace ember::compiler
