// stablehlo.async_start / async_done over several host devices: every collective the spec allows
// in an async body, started and finished in interleaved order, a future that crosses a function
// boundary, and slices; each result is checked against values computed here from the inputs,
// on the compiled path and on the reference evaluator.
#include <cstdlib>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/executable.h"
#include "tests/runtime/executable_test_util.h"

namespace ember::runtime {
namespace {

using test_util::Build;
using test_util::MakeClient;
using test_util::Random;
using test_util::RunOnDevices;

// Four replicas. The dones come in another order than the starts, and %f0 stays in flight
// across two other async ops.
constexpr char kAsyncCollectives[] = R"(
module @async_collectives {
  func.func @main(%x: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x16xf32>, tensor<8x4xf32>,
                                          tensor<2x4xf32>, tensor<3x4xf32>) {
    %f0 = "stablehlo.async_start"(%x) ({
      ^bb0(%a: tensor<8x4xf32>):
        %r = "stablehlo.all_reduce"(%a) ({
          ^bb0(%p: tensor<f32>, %q: tensor<f32>):
            %s = stablehlo.add %p, %q : tensor<f32>
            stablehlo.return %s : tensor<f32>
        }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<8x4xf32>) -> tensor<8x4xf32>
        stablehlo.return %r : tensor<8x4xf32>
    }) : (tensor<8x4xf32>) -> !stablehlo.future<tensor<8x4xf32>>
    %f1 = "stablehlo.async_start"(%x) ({
      ^bb0(%a: tensor<8x4xf32>):
        %r = "stablehlo.all_gather"(%a) {all_gather_dim = 1 : i64,
            replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<8x4xf32>) -> tensor<8x16xf32>
        stablehlo.return %r : tensor<8x16xf32>
    }) : (tensor<8x4xf32>) -> !stablehlo.future<tensor<8x16xf32>>
    %g1 = "stablehlo.async_done"(%f1) : (!stablehlo.future<tensor<8x16xf32>>) -> tensor<8x16xf32>
    %f2 = "stablehlo.async_start"(%x) ({
      ^bb0(%a: tensor<8x4xf32>):
        %r = "stablehlo.collective_permute"(%a) {
            source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0]]> : tensor<4x2xi64>} : (tensor<8x4xf32>) -> tensor<8x4xf32>
        stablehlo.return %r : tensor<8x4xf32>
    }) : (tensor<8x4xf32>) -> !stablehlo.future<tensor<8x4xf32>>
    %g0 = "stablehlo.async_done"(%f0) : (!stablehlo.future<tensor<8x4xf32>>) -> tensor<8x4xf32>
    %f3 = "stablehlo.async_start"(%x) ({
      ^bb0(%a: tensor<8x4xf32>):
        %r = "stablehlo.reduce_scatter"(%a) ({
          ^bb0(%p: tensor<f32>, %q: tensor<f32>):
            %s = stablehlo.add %p, %q : tensor<f32>
            stablehlo.return %s : tensor<f32>
        }) {scatter_dimension = 0 : i64,
            replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<8x4xf32>) -> tensor<2x4xf32>
        stablehlo.return %r : tensor<2x4xf32>
    }) : (tensor<8x4xf32>) -> !stablehlo.future<tensor<2x4xf32>>
    %f4 = "stablehlo.async_start"(%x) ({
      ^bb0(%a: tensor<8x4xf32>):
        %r = stablehlo.slice %a [2:5, 0:4] : (tensor<8x4xf32>) -> tensor<3x4xf32>
        stablehlo.return %r : tensor<3x4xf32>
    }) : (tensor<8x4xf32>) -> !stablehlo.future<tensor<3x4xf32>>
    %g4 = "stablehlo.async_done"(%f4) : (!stablehlo.future<tensor<3x4xf32>>) -> tensor<3x4xf32>
    %g3 = "stablehlo.async_done"(%f3) : (!stablehlo.future<tensor<2x4xf32>>) -> tensor<2x4xf32>
    %g2 = "stablehlo.async_done"(%f2) : (!stablehlo.future<tensor<8x4xf32>>) -> tensor<8x4xf32>
    return %g0, %g1, %g2, %g3, %g4 : tensor<8x4xf32>, tensor<8x16xf32>, tensor<8x4xf32>, tensor<2x4xf32>, tensor<3x4xf32>
  }
})";

// Runs the test body once per host backend mode.
class AsyncCollectivesTest : public ::testing::TestWithParam<const char*> {
 protected:
  CompilerOptions Compiler() const {
    CompilerOptions options;
    options.host_backend = GetParam();
    return options;
  }
};

TEST_P(AsyncCollectivesTest, EveryAsyncCollectiveMatchesItsDefinition) {
  constexpr int kDevices = 4;
  auto client = MakeClient(kDevices);
  auto executable = Build(client, kAsyncCollectives, kDevices, 1, false, Compiler());
  ASSERT_TRUE(executable.ok()) << executable.status();
  std::vector<std::vector<float>> in(kDevices);
  for (int d = 0; d < kDevices; ++d) in[d] = Random(32, 70 + d);
  const auto out = RunOnDevices(*client, **executable, in, {8, 4});
  ASSERT_EQ(out.size(), static_cast<size_t>(kDevices));
  std::vector<float> sum(32);
  for (int k = 0; k < 32; ++k) sum[k] = ((in[0][k] + in[1][k]) + in[2][k]) + in[3][k];
  for (int d = 0; d < kDevices; ++d) {
    ASSERT_EQ(out[d].size(), 5u);
    const std::vector<float>& reduced = out[d][0];
    const std::vector<float>& gathered = out[d][1];
    const std::vector<float>& permuted = out[d][2];
    const std::vector<float>& scattered = out[d][3];
    const std::vector<float>& sliced = out[d][4];
    for (int k = 0; k < 32; ++k) EXPECT_NEAR(reduced[k], sum[k], 1e-5f) << d << " " << k;
    for (int i = 0; i < 8; ++i) {
      for (int r = 0; r < kDevices; ++r) {
        for (int j = 0; j < 4; ++j) {
          EXPECT_EQ(gathered[i * 16 + r * 4 + j], in[r][i * 4 + j]) << d << " " << i << " " << r;
        }
      }
    }
    // Device d receives from d - 1 (pairs 0->1, 1->2, 2->3, 3->0).
    EXPECT_EQ(permuted, in[(d + kDevices - 1) % kDevices]) << d;
    for (int k = 0; k < 8; ++k) EXPECT_NEAR(scattered[k], sum[d * 8 + k], 1e-5f) << d << " " << k;
    EXPECT_EQ(sliced, std::vector<float>(in[d].begin() + 8, in[d].begin() + 20)) << d;
  }
}

// The future is made in a private function and awaited by its caller; the caller starts its own
// all_reduce while the callee's is in flight.
constexpr char kFutureAcrossCall[] = R"(
module @future_across_call {
  func.func private @start(%a: tensor<4xf32>) -> !stablehlo.future<tensor<4xf32>> {
    %f = "stablehlo.async_start"(%a) ({
      ^bb0(%b: tensor<4xf32>):
        %r = "stablehlo.all_reduce"(%b) ({
          ^bb0(%p: tensor<f32>, %q: tensor<f32>):
            %s = stablehlo.maximum %p, %q : tensor<f32>
            stablehlo.return %s : tensor<f32>
        }) {replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>
        stablehlo.return %r : tensor<4xf32>
    }) : (tensor<4xf32>) -> !stablehlo.future<tensor<4xf32>>
    return %f : !stablehlo.future<tensor<4xf32>>
  }
  func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    %f = func.call @start(%x) : (tensor<4xf32>) -> !stablehlo.future<tensor<4xf32>>
    %y = "stablehlo.all_reduce"(%x) ({
      ^bb0(%p: tensor<f32>, %q: tensor<f32>):
        %s = stablehlo.minimum %p, %q : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>
    %m = "stablehlo.async_done"(%f) : (!stablehlo.future<tensor<4xf32>>) -> tensor<4xf32>
    return %m, %y : tensor<4xf32>, tensor<4xf32>
  }
})";

TEST_P(AsyncCollectivesTest, FutureCrossesAFunctionBoundary) {
  constexpr int kDevices = 4;
  auto client = MakeClient(kDevices);
  auto executable = Build(client, kFutureAcrossCall, kDevices, 1, false, Compiler());
  ASSERT_TRUE(executable.ok()) << executable.status();
  std::vector<std::vector<float>> in(kDevices);
  for (int d = 0; d < kDevices; ++d) in[d] = Random(4, 90 + d);
  const auto out = RunOnDevices(*client, **executable, in, {4});
  ASSERT_EQ(out.size(), static_cast<size_t>(kDevices));
  for (int d = 0; d < kDevices; ++d) {
    ASSERT_EQ(out[d].size(), 2u);
    const std::vector<float>& max = out[d][0];
    const std::vector<float>& min = out[d][1];
    const int pair_max = d ^ 1;        // groups [[0, 1], [2, 3]]
    const int pair_min = (d + 2) % 4;  // groups [[0, 2], [1, 3]]
    for (int k = 0; k < 4; ++k) {
      EXPECT_EQ(max[k], std::max(in[d][k], in[pair_max][k])) << d << " " << k;
      EXPECT_EQ(min[k], std::min(in[d][k], in[pair_min][k])) << d << " " << k;
    }
  }
}

// A future may not cross the program boundary: PJRT buffers hold arrays.
TEST_P(AsyncCollectivesTest, AnEntryReturningAFutureIsAClearError) {
  constexpr char kReturnsFuture[] = R"(
func.func @main(%x: tensor<4xf32>) -> !stablehlo.future<tensor<2xf32>> {
  %f = "stablehlo.async_start"(%x) ({
    ^bb0(%a: tensor<4xf32>):
      %r = stablehlo.slice %a [0:2] : (tensor<4xf32>) -> tensor<2xf32>
      stablehlo.return %r : tensor<2xf32>
  }) : (tensor<4xf32>) -> !stablehlo.future<tensor<2xf32>>
  return %f : !stablehlo.future<tensor<2xf32>>
})";
  auto client = MakeClient(1);
  auto executable = Build(client, kReturnsFuture, 1, 1, false, Compiler());
  ASSERT_FALSE(executable.ok());
  EXPECT_NE(executable.status().message().find("!stablehlo.future<tensor<2xf32>>"),
            std::string::npos)
      << executable.status();
}

INSTANTIATE_TEST_SUITE_P(HostBackends, AsyncCollectivesTest,
                         ::testing::Values("compiled", "evaluator"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.index == 0 ? "Compiled" : "Evaluator");
                         });

}  // namespace
}  // namespace ember::runtime
