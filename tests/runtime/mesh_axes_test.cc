// Collectives whose replica groups are named by mesh axes (#stablehlo.replica_group_mesh_axes)
// over several host devices: an sdy.mesh symbol, an inline mesh with a sub-axis, an inline mesh
// with device ids, and a shard_map body; results are checked against values computed here, and
// the shard_map against the same program with the groups written out.
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

// On 4 replicas: %a sums over "x" of the 2x2 sdy mesh (groups [[0, 2], [1, 3]]); %b takes the
// max over the minor half of a 4-device axis (groups [[0, 1], [2, 3]]); %c gathers over "y" of
// a 2x2 mesh whose device ids run backwards (groups [[3, 2], [1, 0]]).
constexpr char kMeshAxes[] = R"(
module @mesh_axes {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func @main(%v: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<6xf32>) {
    %a = "stablehlo.all_reduce"(%v) ({
      ^bb0(%p: tensor<f32>, %q: tensor<f32>):
        %s = stablehlo.add %p, %q : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh,
          axes = [#stablehlo.axis_ref<name = "x">]>} : (tensor<3xf32>) -> tensor<3xf32>
    %b = "stablehlo.all_reduce"(%v) ({
      ^bb0(%p: tensor<f32>, %q: tensor<f32>):
        %s = stablehlo.maximum %p, %q : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {replica_groups = #stablehlo.replica_group_mesh_axes<
          mesh = #stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "a", size = 4>]>,
          axes = [#stablehlo.axis_ref<name = "a", sub_axis_info = (2)2>]>} : (tensor<3xf32>) -> tensor<3xf32>
    %c = "stablehlo.all_gather"(%v) {all_gather_dim = 0 : i64,
        replica_groups = #stablehlo.replica_group_mesh_axes<
          mesh = #stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "x", size = 2>,
                                         #stablehlo.mesh_axis<name = "y", size = 2>],
                                 device_ids = dense<[3, 2, 1, 0]> : tensor<4xi64>>,
          axes = [#stablehlo.axis_ref<name = "y">]>} : (tensor<3xf32>) -> tensor<6xf32>
    return %a, %b, %c : tensor<3xf32>, tensor<3xf32>, tensor<6xf32>
  }
})";

TEST(MeshAxesTest, GroupsFollowTheNamedAxes) {
  constexpr int kDevices = 4;
  auto client = MakeClient(kDevices);
  auto executable = Build(client, kMeshAxes, kDevices, 1);
  ASSERT_TRUE(executable.ok()) << executable.status();
  std::vector<std::vector<float>> in(kDevices);
  for (int d = 0; d < kDevices; ++d) in[d] = Random(3, 110 + d);
  const auto out = RunOnDevices(*client, **executable, in, {3});
  ASSERT_EQ(out.size(), static_cast<size_t>(kDevices));
  for (int d = 0; d < kDevices; ++d) {
    ASSERT_EQ(out[d].size(), 3u);
    const std::vector<float>& sum = out[d][0];
    const std::vector<float>& max = out[d][1];
    const std::vector<float>& gathered = out[d][2];
    const int first = d < 2 ? 1 : 3;  // the group of d in [[3, 2], [1, 0]], in group order
    for (int k = 0; k < 3; ++k) {
      const int lo = std::min(d, d ^ 2), hi = std::max(d, d ^ 2);
      EXPECT_FLOAT_EQ(sum[k], in[lo][k] + in[hi][k]) << d << " " << k;
      EXPECT_EQ(max[k], std::max(in[d][k], in[d ^ 1][k])) << d << " " << k;
      EXPECT_EQ(gathered[k], in[first][k]) << d << " " << k;
      EXPECT_EQ(gathered[3 + k], in[first - 1][k]) << d << " " << k;
    }
  }
}

// A shard_map body's psum as a newer JAX may write it, with the groups named by the mesh axis,
// and the same body with the groups written out: the results must be identical.
std::string ManualProgram(const std::string& groups) {
  return R"(
module @jit_body attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["i"=2, "j"=2]>
  func.func public @main(%arg0: tensor<8x2xf32>) -> (tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"i", "j"}, {}]>] out_shardings=[<@mesh, [{"i", "j"}, {}]>] manual_axes={"i", "j"} (%arg1: tensor<2x2xf32>) {
      %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = )" +
         groups + R"(, use_global_device_ids}> ({
      ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
        %9 = stablehlo.add %arg2, %arg3 : tensor<f32>
        stablehlo.return %9 : tensor<f32>
      }) : (tensor<2x2xf32>) -> tensor<2x2xf32>
      sdy.return %1 : tensor<2x2xf32>
    } : (tensor<8x2xf32>) -> tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
})";
}

TEST(MeshAxesTest, ShardMapBodyMatchesExplicitGroups) {
  constexpr int kDevices = 4;
  auto client = MakeClient(kDevices);
  const std::vector<float> global = Random(16, 130);
  std::vector<std::vector<float>> results;
  for (const std::string& groups :
       {std::string("#stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = "
                    "[#stablehlo.axis_ref<name = \"i\">]>"),
        std::string("dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>")}) {
    auto executable = Build(client, ManualProgram(groups), 1, kDevices, /*spmd=*/true);
    ASSERT_TRUE(executable.ok()) << executable.status();
    // Unannotated argument: every device holds all of it; the result is stated replicated.
    const auto out = RunOnDevices(*client, **executable,
                                  std::vector<std::vector<float>>(kDevices, global), {8, 2});
    ASSERT_EQ(out.size(), static_cast<size_t>(kDevices));
    results.push_back(out[0][0]);
  }
  EXPECT_EQ(results[0], results[1]);
  // The body on device d holds rows [2d, 2d + 2) (rows split over ("i", "j")), and its sum
  // pairs it with device d ^ 2 (same "j", other "i").
  ASSERT_EQ(results[0].size(), 16u);
  for (int d = 0; d < kDevices; ++d) {
    for (int k = 0; k < 4; ++k) {
      const int lo = std::min(d, d ^ 2), hi = std::max(d, d ^ 2);
      EXPECT_FLOAT_EQ(results[0][4 * d + k], global[4 * lo + k] + global[4 * hi + k]) << d;
    }
  }
}

TEST(MeshAxesTest, UnresolvableMeshesAreClearErrors) {
  auto client = MakeClient(2);
  const std::string missing = R"(
func.func @main(%v: tensor<3xf32>) -> tensor<3xf32> {
  %a = "stablehlo.all_reduce"(%v) ({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      %s = stablehlo.add %p, %q : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @nowhere,
        axes = [#stablehlo.axis_ref<name = "x">]>} : (tensor<3xf32>) -> tensor<3xf32>
  return %a : tensor<3xf32>
})";
  auto executable = Build(client, missing, 2, 1);
  ASSERT_FALSE(executable.ok());
  EXPECT_NE(executable.status().message().find(
                "replica_groups name mesh @nowhere, which is not an sdy.mesh of the module"),
            std::string::npos)
      << executable.status();
  // An axis the symbol's mesh lacks is found when the symbol is resolved.
  std::string wrong_axis = missing;
  wrong_axis.replace(wrong_axis.find("@nowhere"), 8, "@m");
  wrong_axis = "module {\n  sdy.mesh @m = <[\"y\"=2]>\n" + wrong_axis + "\n}";
  executable = Build(client, wrong_axis, 2, 1);
  ASSERT_FALSE(executable.ok());
  EXPECT_NE(executable.status().message().find("axis \"x\" is not in the mesh"), std::string::npos)
      << executable.status();
}

}  // namespace
}  // namespace ember::runtime
