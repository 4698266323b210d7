// Shardings as typed IR: Shardy meshes and shardings in their pretty and generic text forms,
// manual computations, GSPMD strings, and the split arithmetic over them (compiler/ir/sharding.h).
#include "compiler/frontend/import/sharding_import.h"

#include <memory>
#include <string>

#include "compiler/frontend/import/import.h"
#include "compiler/frontend/text/mlir_text_parser.h"
#include "compiler/ir/sharding.h"
#include "gtest/gtest.h"

namespace ember::frontend {
namespace {

absl::StatusOr<std::unique_ptr<ir::Module>> ImportText(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Operation>> tree = ParseMlirText(text, "model.mlir");
  if (!tree.ok()) return tree.status();
  return ImportModule(**tree);
}

const ir::TensorSharding& ArgSharding(const ir::Module& m, size_t i) {
  const ir::Attribute* a = m.entry()->arg_attributes()[i].Find("sdy.sharding");
  EXPECT_NE(a, nullptr);
  EXPECT_EQ(a->kind, ir::Attribute::Kind::kSharding);
  return *a->sharding;
}

TEST(ShardingImportTest, MeshesAndShardingsInThePrettyForm) {
  auto m = ImportText(R"(
module @jit_f attributes {mhlo.num_partitions = 6 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=3], device_ids=[5, 4, 3, 2, 1, 0]>
  func.func public @main(%a: tensor<12x5xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x"}, {?}p1], replicated={"z"}>},
                         %b: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}]>}) -> tensor<12x5xf32> {
    return %a : tensor<12x5xf32>
  }
})");
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<ir::Mesh> mesh = ir::ModuleMesh(**m, "mesh");
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  EXPECT_EQ(mesh->axes, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(mesh->sizes, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(mesh->device_ids, (std::vector<int64_t>{5, 4, 3, 2, 1, 0}));
  const ir::TensorSharding& a = ArgSharding(**m, 0);
  EXPECT_EQ(a.mesh_name, "mesh");
  ASSERT_EQ(a.dims.size(), 2u);
  ASSERT_EQ(a.dims[0].axes.size(), 2u);
  EXPECT_EQ(a.dims[0].axes[0].name, "y");
  EXPECT_EQ(a.dims[0].axes[1].name, "x");
  EXPECT_TRUE(a.dims[0].closed);
  EXPECT_TRUE(a.dims[1].axes.empty());
  EXPECT_FALSE(a.dims[1].closed);
  EXPECT_EQ(a.dims[1].priority, 1);
  ASSERT_EQ(a.replicated_axes.size(), 1u);
  EXPECT_EQ(a.replicated_axes[0].name, "z");
  EXPECT_EQ(a.ToString(), R"(#sdy.sharding<@mesh, [{"y", "x"}, {?}p1], replicated={"z"}>)");
  // The split: 12 rows over y and x (6 devices), 5 columns whole.
  EXPECT_EQ(*ir::ShardDims({12, 5}, a, *mesh), (std::vector<int64_t>{2, 5}));
  EXPECT_FALSE(ir::ShardDims({7, 5}, a, *mesh).ok());  // uneven
  // Device 5 is mesh position 0 (x=0, y=0): block 0; device 0 is (x=1, y=2): block 2*2+1 = 5.
  EXPECT_EQ(*ir::ShardIndex(a, *mesh, 5), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(*ir::ShardIndex(a, *mesh, 0), (std::vector<int64_t>{5, 0}));
  const ir::TensorSharding& b = ArgSharding(**m, 1);
  ASSERT_EQ(b.dims[0].axes.size(), 1u);
  EXPECT_EQ(b.dims[0].axes[0].pre_size, 1);
  EXPECT_EQ(b.dims[0].axes[0].size, 2);
  EXPECT_EQ(*ir::ShardDims({4}, b, *mesh), (std::vector<int64_t>{2}));
}

TEST(ShardingImportTest, ManualComputationsAndConstraintsAreTyped) {
  auto m = ImportText(R"(
module @jit_body {
  sdy.mesh @mesh = <["i"=4]>
  func.func public @main(%arg0: tensor<8x2xf32>) -> (tensor<8x2xf32>) {
    %c = sdy.sharding_constraint %arg0 <@mesh, [{"i"}, {}]> : tensor<8x2xf32>
    %0 = sdy.manual_computation(%c) in_shardings=[<@mesh, [{"i"}, {}]>] out_shardings=[<@mesh, [{}, {}]>] manual_axes={"i"} (%arg1: tensor<2x2xf32>) {
      sdy.return %arg1 : tensor<2x2xf32>
    } : (tensor<8x2xf32>) -> tensor<2x2xf32>
    return %c : tensor<8x2xf32>
  }
})");
  ASSERT_TRUE(m.ok()) << m.status();
  const ir::Computation& main = *(*m)->entry();
  const ir::Instruction& constraint = *main.instructions()[0];
  const ir::Attribute* c = constraint.attribute("sdy.sharding");
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->kind, ir::Attribute::Kind::kSharding);
  EXPECT_EQ(c->sharding->ToString(), R"(#sdy.sharding<@mesh, [{"i"}, {}]>)");
  const ir::Instruction& manual = *main.instructions()[1];
  const ir::Attribute* in = manual.attribute("in_shardings");
  ASSERT_NE(in, nullptr);
  ASSERT_EQ(in->kind, ir::Attribute::Kind::kList);
  ASSERT_EQ(in->list.size(), 1u);
  EXPECT_EQ(in->list[0].kind, ir::Attribute::Kind::kSharding);
  const ir::Attribute* axes = manual.attribute("manual_axes");
  ASSERT_NE(axes, nullptr);
  ASSERT_EQ(axes->kind, ir::Attribute::Kind::kList);
  ASSERT_EQ(axes->list.size(), 1u);
  EXPECT_EQ(axes->list[0].s, "i");
}

TEST(ShardingImportTest, MalformedMeshesAreErrors) {
  for (const char* mesh : {R"(<["x"=2, "x"=2]>)", R"(<["x"=0]>)", R"(<["x"=2], device_ids=[0]>)"}) {
    auto m = ImportText(std::string("module {\n  sdy.mesh @mesh = ") + mesh + R"(
  func.func public @main(%a: tensor<2xf32>) -> tensor<2xf32> {
    return %a : tensor<2xf32>
  }
})");
    EXPECT_FALSE(m.ok()) << mesh;
  }
}

TEST(ShardingImportTest, GspmdStringsBecomeShardingsOverInlineMeshes) {
  auto iota = ImportGspmdSharding("{devices=[2,2]<=[2,2]T(1,0)}");
  ASSERT_TRUE(iota.ok()) << iota.status();
  ASSERT_EQ(iota->kind, ir::Attribute::Kind::kSharding);
  const ir::TensorSharding& t = *iota->sharding;
  ASSERT_TRUE(t.inline_mesh.has_value());
  EXPECT_EQ(t.inline_mesh->sizes, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(t.inline_mesh->device_ids, (std::vector<int64_t>{0, 2, 1, 3}));
  EXPECT_EQ(ir::GspmdString(t, &*t.inline_mesh, 2), "{devices=[2,2]0,2,1,3}");
  // Device 2 holds block (0, 1).
  EXPECT_EQ(*ir::ShardIndex(t, *t.inline_mesh, 2), (std::vector<int64_t>{0, 1}));

  auto replicate = ImportGspmdSharding("{devices=[2,1,2]<=[4] last_tile_dim_replicate}");
  ASSERT_TRUE(replicate.ok()) << replicate.status();
  const ir::TensorSharding& r = *replicate->sharding;
  ASSERT_EQ(r.dims.size(), 2u);
  EXPECT_EQ(r.dims[0].axes.size(), 1u);
  EXPECT_TRUE(r.dims[1].axes.empty());
  EXPECT_EQ(ir::GspmdString(r, &*r.inline_mesh, 2), "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}");

  auto listed = ImportGspmdSharding("{devices=[4]3,2,1,0}");
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(listed->sharding->inline_mesh->device_ids, (std::vector<int64_t>{3, 2, 1, 0}));

  auto replicated = ImportGspmdSharding("{replicated}");
  ASSERT_TRUE(replicated.ok());
  EXPECT_EQ(replicated->sharding->kind, ir::TensorSharding::Kind::kReplicated);
  auto maximal = ImportGspmdSharding("{maximal device=1}");
  ASSERT_TRUE(maximal.ok());
  EXPECT_EQ(maximal->sharding->kind, ir::TensorSharding::Kind::kMaximal);
  EXPECT_EQ(maximal->sharding->maximal_device, 1);
  auto tuple = ImportGspmdSharding("{{replicated}, {devices=[2]0,1}}");
  ASSERT_TRUE(tuple.ok()) << tuple.status();
  ASSERT_EQ(tuple->kind, ir::Attribute::Kind::kList);
  EXPECT_EQ(tuple->list.size(), 2u);

  for (const char* bad : {"{devices=[2,2]0,1,2}", "{devices=[2]}", "{replicated", "{frobnicated}",
                          "{devices=[2]0,1} trailing", "{devices=[2,2]<=[4]T(1)}"}) {
    EXPECT_FALSE(ImportGspmdSharding(bad).ok()) << bad;
  }
  auto subgroups = ImportGspmdSharding("{devices=[2,2]<=[4] last_tile_dims={manual}}");
  EXPECT_EQ(subgroups.status().code(), absl::StatusCode::kUnimplemented);
}

TEST(ShardingImportTest, MhloShardingAttributesAreTyped) {
  auto m = ImportText(R"(
func.func public @main(%a: tensor<4x2xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}) -> (tensor<4x2xf32> {mhlo.sharding = "{replicated}"}) {
  return %a : tensor<4x2xf32>
})");
  ASSERT_TRUE(m.ok()) << m.status();
  const ir::Attribute* a = (*m)->entry()->arg_attributes()[0].Find("mhlo.sharding");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->kind, ir::Attribute::Kind::kSharding);
  EXPECT_EQ(*ir::ShardDims({4, 2}, *a->sharding, *a->sharding->inline_mesh),
            (std::vector<int64_t>{2, 2}));
  auto bad = ImportText(R"(
func.func public @main(%a: tensor<4xf32> {mhlo.sharding = "{devices=[2]0,"}) -> tensor<4xf32> {
  return %a : tensor<4xf32>
})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("GSPMD sharding"), std::string::npos) << bad.status();
}

}  // namespace
}  // namespace ember::frontend
