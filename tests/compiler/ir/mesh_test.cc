// Meshes and the replica groups that mesh axes name. The expected groups of whole axes are the
// ones upstream's StableHLO tests give for its flattening (mesh_axes_replica_group_compatibility):
// on a 2x2 mesh "x" gives [[0, 2], [1, 3]], "y" gives [[0, 1], [2, 3]], "x" over device ids
// [0, 2, 1, 3] gives [[0, 1], [2, 3]], and an empty list on a one-device mesh [[0]].
#include "compiler/ir/mesh.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ember::ir {
namespace {

using Groups = std::vector<std::vector<int64_t>>;

Mesh Make(std::vector<std::string> axes, std::vector<int64_t> sizes,
          std::vector<int64_t> ids = {}) {
  Mesh m;
  m.axes = std::move(axes);
  m.sizes = std::move(sizes);
  m.device_ids = std::move(ids);
  return m;
}

MeshAxisRef Whole(std::string name) { return MeshAxisRef{std::move(name), 1, 0}; }
MeshAxisRef Sub(std::string name, int64_t pre, int64_t size) {
  return MeshAxisRef{std::move(name), pre, size};
}

Groups GroupsOf(const Mesh& mesh, std::vector<MeshAxisRef> axes) {
  absl::StatusOr<Groups> g = MeshAxesGroups(mesh, axes);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *g : Groups{};
}

std::string ErrorOf(const Mesh& mesh, std::vector<MeshAxisRef> axes) {
  absl::StatusOr<Groups> g = MeshAxesGroups(mesh, axes);
  return g.ok() ? "OK" : std::string(g.status().message());
}

TEST(MeshAxesGroupsTest, WholeAxesMatchUpstream) {
  const Mesh mesh = Make({"x", "y"}, {2, 2});
  EXPECT_EQ(GroupsOf(mesh, {Whole("x")}), (Groups{{0, 2}, {1, 3}}));
  EXPECT_EQ(GroupsOf(mesh, {Whole("y")}), (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(GroupsOf(Make({"x", "y"}, {2, 2}, {0, 2, 1, 3}), {Whole("x")}),
            (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(GroupsOf(Make({}, {}, {0}), {}), (Groups{{0}}));
  // Both axes: one group, ordered by the axes as listed (major first).
  EXPECT_EQ(GroupsOf(mesh, {Whole("x"), Whole("y")}), (Groups{{0, 1, 2, 3}}));
  EXPECT_EQ(GroupsOf(mesh, {Whole("y"), Whole("x")}), (Groups{{0, 2, 1, 3}}));
  // No axes: every device alone.
  EXPECT_EQ(GroupsOf(mesh, {}), (Groups{{0}, {1}, {2}, {3}}));
  // A 2x3x2 mesh, the middle axis: groups over the other two in mesh order.
  EXPECT_EQ(GroupsOf(Make({"a", "b", "c"}, {2, 3, 2}), {Whole("b")}),
            (Groups{{0, 2, 4}, {1, 3, 5}, {6, 8, 10}, {7, 9, 11}}));
}

TEST(MeshAxesGroupsTest, SubAxesSplitTheirAxis) {
  // x = 4 splits into "x":(1)2 (major) and "x":(2)2 (minor); devices are x * 2 + y.
  const Mesh mesh = Make({"x", "y"}, {4, 2});
  EXPECT_EQ(GroupsOf(mesh, {Sub("x", 1, 2)}), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(GroupsOf(mesh, {Sub("x", 2, 2)}), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  // A sub-axis and another axis: the minor half of x with y.
  EXPECT_EQ(GroupsOf(mesh, {Sub("x", 2, 2), Whole("y")}), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  // Both halves of x, in either order, are all of x in that order.
  EXPECT_EQ(GroupsOf(mesh, {Sub("x", 1, 2), Sub("x", 2, 2)}), GroupsOf(mesh, {Whole("x")}));
  EXPECT_EQ(GroupsOf(mesh, {Sub("x", 2, 2), Sub("x", 1, 2)}), (Groups{{0, 4, 2, 6}, {1, 5, 3, 7}}));
  // Device ids map positions to ids.
  EXPECT_EQ(GroupsOf(Make({"x"}, {4}, {7, 6, 5, 4}), {Sub("x", 2, 2)}), (Groups{{7, 6}, {5, 4}}));
}

TEST(MeshAxesGroupsTest, BadReferencesAreErrors) {
  const Mesh mesh = Make({"x", "y"}, {4, 2});
  EXPECT_EQ(ErrorOf(mesh, {Whole("z")}), "axis \"z\" is not in the mesh");
  EXPECT_EQ(ErrorOf(mesh, {Whole("x"), Whole("x")}),
            "axis \"x\" is named twice (its references overlap)");
  EXPECT_EQ(ErrorOf(mesh, {Whole("x"), Sub("x", 2, 2)}),
            "axis \"x\" is named twice (its references overlap)");
  EXPECT_EQ(ErrorOf(mesh, {Sub("x", 3, 2)}),
            "sub-axis \"x\":(3)2 does not divide the axis of size 4");
  EXPECT_EQ(ErrorOf(Make({"x"}, {12}), {Sub("x", 1, 4), Sub("x", 1, 3)}),
            "the sub-axes of \"x\" overlap (boundaries 3 and 4 do not nest)");
  EXPECT_EQ(ErrorOf(Make({"x"}, {4}, {0, 1}), {Whole("x")}),
            "a mesh of 4 devices lists 2 device ids");
  EXPECT_EQ(ErrorOf(Make({"x"}, {0}), {}), "mesh axis \"x\" has size 0");
  // Meshes are bounded, so a malformed program cannot ask for billions of groups.
  EXPECT_EQ(ErrorOf(Make({"x", "y"}, {int64_t{1} << 11, int64_t{1} << 10}), {Whole("x")}),
            "the mesh has more than 1048576 devices");
  EXPECT_EQ(CheckMeshAxes(mesh, {Whole("z")}).message(), "axis \"z\" is not in the mesh");
  EXPECT_TRUE(CheckMeshAxes(mesh, {Sub("x", 2, 2), Whole("y")}).ok());
}

TEST(MeshTest, ReplicaGroupAttributesRoundTrip) {
  const Mesh mesh = Make({"x", "y"}, {2, 2}, {3, 2, 1, 0});
  const Attribute attr =
      Attribute::Dict({{"mesh", MeshAttribute(mesh)},
                       {"axes", MeshAxisRefsAttribute({Whole("y"), Sub("x", 1, 2)})}});
  ASSERT_TRUE(IsMeshAxesReplicaGroups(attr));
  absl::StatusOr<MeshAxesReplicaGroups> read = ReadMeshAxesReplicaGroups(attr);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(read->mesh_symbol.empty());
  EXPECT_EQ(read->mesh.axes, mesh.axes);
  EXPECT_EQ(read->mesh.device_ids, mesh.device_ids);
  ASSERT_EQ(read->axes.size(), 2u);
  EXPECT_TRUE(read->axes[0].whole());
  EXPECT_EQ(read->axes[1].pre_size, 1);
  EXPECT_EQ(read->axes[1].size, 2);
  const Attribute by_symbol = Attribute::Dict(
      {{"mesh", Attribute::String("mesh")}, {"axes", MeshAxisRefsAttribute({Whole("x")})}});
  read = ReadMeshAxesReplicaGroups(by_symbol);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->mesh_symbol, "mesh");
  // A plain dictionary without those keys is not this form; malformed ones are errors.
  EXPECT_FALSE(IsMeshAxesReplicaGroups(Attribute::Dict({{"axes", Attribute::List({})}})));
  EXPECT_FALSE(ReadMeshAxesReplicaGroups(
                   Attribute::Dict({{"mesh", Attribute::Int(3)}, {"axes", Attribute::List({})}}))
                   .ok());
}

}  // namespace
}  // namespace ember::ir
