// The backend seat: the runtime runs any backend's Executable without knowing the backend. A
// backend written here (its own thunk, which doubles an f32 array through a host callback) and
// the built-in evaluator backend, registered next to the host backend, compile programs that the
// runtime runs on host devices through the same code path as the host backend's.
#include <memory>
#include <string>
#include <vector>

#include "compiler/backend/backend.h"
#include "compiler/driver/compile_program.h"
#include "compiler/host/host_backend.h"
#include "gtest/gtest.h"
#include "runtime/executable.h"
#include "tests/runtime/executable_test_util.h"

namespace ember::runtime {
namespace {

using test_util::Download;
using test_util::MakeClient;
using test_util::Random;
using test_util::Upload;

// Doubles its one f32 argument into its one result, on the host, when the stream reaches it.
class DoublingThunk final : public backend::Thunk {
 public:
  explicit DoublingThunk(int64_t elements) : Thunk(Kind::kHostCallback, "double"), n_(elements) {}
  absl::Status ExecuteOnStream(const backend::ExecuteParams& params) const override {
    const int64_t n = n_;
    return params.stream->EnqueueHostCallback([params, n]() -> absl::Status {
      const auto* in = static_cast<const float*>(params.buffers->allocation(0).opaque);
      auto* out = static_cast<float*>(params.buffers->allocation(1).opaque);
      for (int64_t i = 0; i < n; ++i) out[i] = 2 * in[i];
      return absl::OkStatus();
    });
  }

 private:
  int64_t n_;
};

class DoublingBackend final : public backend::Backend {
 public:
  std::string_view name() const override { return "doubling"; }
  std::string_view platform() const override { return "host"; }
  bool wants_optimized_module() const override { return false; }
  absl::StatusOr<std::unique_ptr<backend::Executable>> Compile(
      const ir::Computation& entry, absl::Span<const passes::IoAlias>,
      const CompilerOptions&) const override {
    if (entry.parameters().size() != 1 || entry.result_types().size() != 1) {
      return absl::UnimplementedError("the doubling backend takes one array to one array");
    }
    backend::BufferLayout layout;
    layout.parameter_types = {entry.parameter(0)->type()};
    layout.result_types = entry.result_types();
    layout.result_aliases = {-1};
    const int64_t n = layout.parameter_types[0].shape().element_count();
    return std::make_unique<backend::Executable>("doubling", "host",
                                                 std::make_unique<DoublingThunk>(n),
                                                 std::move(layout), backend::ExecutableReports{},
                                                 /*dispatch_inline=*/false);
  }
};

constexpr char kDouble[] = R"(
func.func @main(%x: tensor<5xf32>) -> tensor<5xf32> {
  %y = stablehlo.add %x, %x : tensor<5xf32>
  return %y : tensor<5xf32>
})";

std::vector<float> RunThrough(const backend::Backend& b, const std::shared_ptr<Client>& client,
                              const std::vector<float>& x) {
  auto program = compiler::CompileProgram(
      "mlir", absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(kDouble), sizeof(kDouble) - 1),
      frontend::CompileOptions{}, b);
  EXPECT_TRUE(program.ok()) << program.status();
  if (!program.ok()) return {};
  EXPECT_EQ((*program)->executable->backend(), std::string(b.name()));
  auto executable = Executable::Create(client, *std::move(program));
  EXPECT_TRUE(executable.ok()) << executable.status();
  if (!executable.ok()) return {};
  auto input = Upload(*client, client->devices()[0], x, {5});
  auto launch = (*executable)->Execute(std::vector<std::vector<Buffer*>>{{input.get()}}, {}, nullptr);
  EXPECT_TRUE(launch.ok()) << launch.status();
  if (!launch.ok()) return {};
  EXPECT_TRUE(launch->done[0]->Await().ok());
  return Download(*launch->outputs[0][0]);
}

TEST(BackendSeatTest, SecondBackendsRunThroughTheRuntime) {
  backend::BackendRegistry registry;
  ASSERT_TRUE(registry.Register(host::CreateHostBackend()).ok());
  ASSERT_TRUE(registry.Register(host::CreateEvaluatorBackend()).ok());
  ASSERT_TRUE(registry.Register(std::make_unique<DoublingBackend>()).ok());
  EXPECT_EQ(registry.Register(std::make_unique<DoublingBackend>()).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(registry.Names(), (std::vector<std::string>{"host", "evaluator", "doubling"}));
  auto client = MakeClient(1);
  const std::vector<float> x = Random(5, 17);
  std::vector<float> want(5);
  for (int i = 0; i < 5; ++i) want[i] = x[i] + x[i];
  for (const char* name : {"host", "evaluator", "doubling"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(RunThrough(*registry.Find(name), client, x), want);
  }
}

TEST(BackendSeatTest, AnExecutableRunsOnlyOnItsPlatformsDevices) {
  class OtherPlatform final : public backend::Backend {
   public:
    std::string_view name() const override { return "other"; }
    std::string_view platform() const override { return "other"; }
    bool wants_optimized_module() const override { return false; }
    absl::StatusOr<std::unique_ptr<backend::Executable>> Compile(
        const ir::Computation& entry, absl::Span<const passes::IoAlias>,
      const CompilerOptions&) const override {
      backend::BufferLayout layout;
      layout.parameter_types = {entry.parameter(0)->type()};
      layout.result_types = entry.result_types();
      return std::make_unique<backend::Executable>(
          "other", "other", std::make_unique<backend::ThunkSequence>(std::vector<std::unique_ptr<backend::Thunk>>{}),
          std::move(layout), backend::ExecutableReports{}, false);
    }
  } other;
  auto program = compiler::CompileProgram(
      "mlir", absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(kDouble), sizeof(kDouble) - 1),
      frontend::CompileOptions{}, other);
  ASSERT_TRUE(program.ok()) << program.status();
  auto executable = Executable::Create(MakeClient(1), *std::move(program));
  ASSERT_FALSE(executable.ok());
  EXPECT_NE(executable.status().message().find("compiled by the other backend for other devices"),
            std::string::npos)
      << executable.status();
}

}  // namespace
}  // namespace ember::runtime
