// The XLA_Shape deep copy behind TensorFlow's device shape function: inline and heap lists,
// layouts with tiles, nested tuples, and malformed shapes refused without leaking (the ASan run
// checks that every copy is freed the way TensorFlow frees it).
#include "pjrt_plugin/tf_xla_shape.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <vector>

namespace ember::pjrt {
namespace {

// Owns the heap parts of a hand-built input shape.
struct ShapeBuilder {
  std::vector<std::unique_ptr<int64_t[]>> int_lists;
  std::vector<std::unique_ptr<bool[]>> bool_lists;
  std::vector<std::unique_ptr<XLA_Tile[]>> tile_lists;
  std::vector<std::unique_ptr<XLA_Shape[]>> tuples;
  std::mt19937 rng{1234};

  void Ints(Int64List& list, int64_t n) {
    std::uniform_int_distribution<int64_t> value(1, 1 << 20);
    list.size = n;
    int64_t* items = list.inlined;
    if (n > EMBER_XLA_SHAPE_MAX_INLINED) {
      int_lists.push_back(std::make_unique<int64_t[]>(n));
      items = list.heap = int_lists.back().get();
    }
    for (int64_t i = 0; i < n; ++i) items[i] = value(rng);
  }
  void Bools(BoolList& list, int64_t n) {
    list.size = n;
    bool* items = list.inlined;
    if (n > EMBER_XLA_SHAPE_MAX_INLINED) {
      bool_lists.push_back(std::make_unique<bool[]>(n));
      items = list.heap = bool_lists.back().get();
    }
    for (int64_t i = 0; i < n; ++i) items[i] = rng() % 2 == 1;
  }
  XLA_Shape Array(int64_t rank, int64_t tiles) {
    XLA_Shape shape{};
    shape.element_type = 11;
    Ints(shape.dimensions, rank);
    Bools(shape.dynamic_dimensions, rank);
    shape.has_layout = true;
    Ints(shape.layout.minor_to_major, rank);
    shape.layout.tiles.size = tiles;
    XLA_Tile* items = shape.layout.tiles.inlined;
    if (tiles > EMBER_XLA_SHAPE_MAX_INLINED) {
      tile_lists.push_back(std::make_unique<XLA_Tile[]>(tiles));
      items = shape.layout.tiles.heap = tile_lists.back().get();
    }
    for (int64_t t = 0; t < tiles; ++t) Ints(items[t].dimensions, 1 + t % 9);
    shape.layout.element_size_in_bits = 32;
    shape.layout.memory_space = 1;
    shape.layout.tail_padding_alignment_in_elements = 4;
    return shape;
  }
  XLA_Shape Tuple(std::vector<XLA_Shape> elements) {
    XLA_Shape shape{};
    shape.element_type = 13;  // TUPLE
    tuples.push_back(std::make_unique<XLA_Shape[]>(elements.size()));
    for (size_t i = 0; i < elements.size(); ++i) tuples.back()[i] = elements[i];
    shape.tuple_shapes = tuples.back().get();
    shape.ntuple_shapes = static_cast<int>(elements.size());
    return shape;
  }
};

const int64_t* Items(const Int64List& list) {
  return list.size > EMBER_XLA_SHAPE_MAX_INLINED ? list.heap : list.inlined;
}
const bool* Items(const BoolList& list) {
  return list.size > EMBER_XLA_SHAPE_MAX_INLINED ? list.heap : list.inlined;
}
const XLA_Tile* Items(const TileList& list) {
  return list.size > EMBER_XLA_SHAPE_MAX_INLINED ? list.heap : list.inlined;
}

template <typename List>
void ExpectSameList(const List& a, const List& b) {
  ASSERT_EQ(a.size, b.size);
  for (int64_t i = 0; i < a.size; ++i) EXPECT_EQ(Items(a)[i], Items(b)[i]) << "element " << i;
  if (a.size > EMBER_XLA_SHAPE_MAX_INLINED) {
    EXPECT_NE(a.heap, b.heap) << "must be a deep copy";
  }
}

void ExpectSameShape(const XLA_Shape& a, const XLA_Shape& b) {
  EXPECT_EQ(a.element_type, b.element_type);
  ExpectSameList(a.dimensions, b.dimensions);
  ExpectSameList(a.dynamic_dimensions, b.dynamic_dimensions);
  ASSERT_EQ(a.has_layout, b.has_layout);
  ExpectSameList(a.layout.minor_to_major, b.layout.minor_to_major);
  ASSERT_EQ(a.layout.tiles.size, b.layout.tiles.size);
  for (int64_t t = 0; t < a.layout.tiles.size; ++t) {
    ExpectSameList(Items(a.layout.tiles)[t].dimensions, Items(b.layout.tiles)[t].dimensions);
  }
  EXPECT_EQ(a.layout.element_size_in_bits, b.layout.element_size_in_bits);
  EXPECT_EQ(a.layout.memory_space, b.layout.memory_space);
  EXPECT_EQ(a.layout.tail_padding_alignment_in_elements,
            b.layout.tail_padding_alignment_in_elements);
  ASSERT_EQ(a.ntuple_shapes, b.ntuple_shapes);
  if (a.ntuple_shapes > 0) {
    EXPECT_NE(a.tuple_shapes, b.tuple_shapes);
  }
  for (int i = 0; i < a.ntuple_shapes; ++i) ExpectSameShape(a.tuple_shapes[i], b.tuple_shapes[i]);
}

TEST(TfXlaShapeTest, CopiesInlineAndHeapLists) {
  ShapeBuilder b;
  for (int64_t rank : {0, 1, 6, 7, 12}) {
    XLA_Shape host = b.Array(rank, rank % 3);
    XLA_Shape device;
    ASSERT_TRUE(CopyXlaShape(host, device).ok()) << "rank " << rank;
    ExpectSameShape(host, device);
    DestroyXlaShape(device);
    EXPECT_EQ(device.dimensions.size, 0);
  }
}

TEST(TfXlaShapeTest, CopiesManyTilesAndNestedTuples) {
  ShapeBuilder b;
  XLA_Shape inner = b.Tuple({b.Array(2, 9), b.Array(8, 1)});
  XLA_Shape host = b.Tuple({b.Array(3, 0), inner, b.Tuple({})});
  XLA_Shape device;
  ASSERT_TRUE(CopyXlaShape(host, device).ok());
  ExpectSameShape(host, device);
  DestroyXlaShape(device);
}

TEST(TfXlaShapeTest, RefusesMalformedShapesAndLeavesNothingOwned) {
  ShapeBuilder b;
  {
    XLA_Shape host = b.Array(8, 0);
    host.dimensions.heap = nullptr;
    XLA_Shape device;
    absl::Status status = CopyXlaShape(host, device);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find("null heap pointer"), std::string::npos) << status;
    EXPECT_EQ(device.dimensions.size, 0);
  }
  {
    // The failure comes after the first element's lists were copied: they must be freed.
    XLA_Shape bad = b.Array(7, 8);
    bad.layout.tiles.heap[5].dimensions.size = -3;
    XLA_Shape host = b.Tuple({b.Array(9, 7), bad});
    XLA_Shape device;
    absl::Status status = CopyXlaShape(host, device);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find("tuple_shapes[1]"), std::string::npos) << status;
    EXPECT_EQ(device.ntuple_shapes, 0);
    EXPECT_EQ(device.tuple_shapes, nullptr);
  }
  {
    XLA_Shape host = b.Tuple({});
    host.ntuple_shapes = 2;
    host.tuple_shapes = nullptr;
    XLA_Shape device;
    EXPECT_EQ(CopyXlaShape(host, device).code(), absl::StatusCode::kInvalidArgument);
  }
  {
    XLA_Shape host = b.Array(1, 0);
    for (int depth = 0; depth < 70; ++depth) host = b.Tuple({host});
    XLA_Shape device;
    absl::Status status = CopyXlaShape(host, device);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find("nested deeper"), std::string::npos) << status;
  }
}

}  // namespace
}  // namespace ember::pjrt
