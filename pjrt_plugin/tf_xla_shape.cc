#include "pjrt_plugin/tf_xla_shape.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace ember::pjrt {
namespace {

constexpr int64_t kInline = EMBER_XLA_SHAPE_MAX_INLINED;
// Far above any real rank, tile count or tuple width; a larger size is a corrupt shape.
constexpr int64_t kMaxListSize = 1 << 16;
constexpr int kMaxTupleDepth = 64;

// Copies a list whose elements are plain values. `to` must be empty; it stays consistent (size
// set only once its storage is) so that DestroyXlaShape can clean up after a later failure.
template <typename List>
absl::Status CopyPlainList(const List& from, List& to, const char* field) {
  using T = std::remove_pointer_t<decltype(from.heap)>;
  if (from.size < 0 || from.size > kMaxListSize) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".size is ", from.size));
  }
  if (from.size <= kInline) {
    std::copy_n(from.inlined, from.size, to.inlined);
  } else {
    if (from.heap == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " has ", from.size, " elements but a null heap pointer"));
    }
    auto heap = std::make_unique<T[]>(from.size);
    std::copy_n(from.heap, from.size, heap.get());
    to.heap = heap.release();  // TF frees it with delete[]
  }
  to.size = from.size;
  return absl::OkStatus();
}

template <typename List>
void DestroyPlainList(List& list) {
  using T = std::remove_pointer_t<decltype(list.heap)>;
  if (list.size > kInline) std::unique_ptr<T[]> owned(list.heap);
  std::memset(&list, 0, sizeof(list));
}

void DestroyTiles(TileList& tiles) {
  const bool on_heap = tiles.size > kInline;
  XLA_Tile* items = on_heap ? tiles.heap : tiles.inlined;
  for (int64_t i = 0; i < tiles.size; ++i) DestroyPlainList(items[i].dimensions);
  if (on_heap) std::unique_ptr<XLA_Tile[]> owned(tiles.heap);
  std::memset(&tiles, 0, sizeof(tiles));
}

absl::Status CopyTiles(const TileList& from, TileList& to) {
  if (from.size < 0 || from.size > kMaxListSize) {
    return absl::InvalidArgumentError(absl::StrCat("layout.tiles.size is ", from.size));
  }
  const XLA_Tile* source = from.size > kInline ? from.heap : from.inlined;
  if (source == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("layout.tiles has ", from.size, " tiles but a null heap pointer"));
  }
  std::unique_ptr<XLA_Tile[]> heap;
  XLA_Tile* target = to.inlined;
  if (from.size > kInline) {
    heap = std::make_unique<XLA_Tile[]>(from.size);  // value-initialized: empty tiles
    target = heap.get();
  }
  absl::Status status;
  int64_t copied = 0;
  for (; copied < from.size && status.ok(); ++copied) {
    status = CopyPlainList(source[copied].dimensions, target[copied].dimensions,
                           "layout.tiles[].dimensions");
  }
  if (heap != nullptr) to.heap = heap.release();
  to.size = from.size;  // every tile is consistent (copied or still empty), so destroy works
  if (!status.ok()) DestroyTiles(to);
  return status;
}

absl::Status CopyShapeInto(const XLA_Shape& from, XLA_Shape& to, int depth) {
  if (depth > kMaxTupleDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("tuple shapes nested deeper than ", kMaxTupleDepth, " levels"));
  }
  to.element_type = from.element_type;
  EMBER_RETURN_IF_ERROR(CopyPlainList(from.dimensions, to.dimensions, "dimensions"));
  EMBER_RETURN_IF_ERROR(
      CopyPlainList(from.dynamic_dimensions, to.dynamic_dimensions, "dynamic_dimensions"));
  to.has_layout = from.has_layout;
  if (from.has_layout) {
    const XLA_Layout& layout = from.layout;
    EMBER_RETURN_IF_ERROR(
        CopyPlainList(layout.minor_to_major, to.layout.minor_to_major, "layout.minor_to_major"));
    EMBER_RETURN_IF_ERROR(CopyTiles(layout.tiles, to.layout.tiles));
    to.layout.index_primitive_type = layout.index_primitive_type;
    to.layout.pointer_primitive_type = layout.pointer_primitive_type;
    to.layout.element_size_in_bits = layout.element_size_in_bits;
    to.layout.memory_space = layout.memory_space;
    to.layout.dynamic_shape_metadata_prefix_bytes = layout.dynamic_shape_metadata_prefix_bytes;
    to.layout.tail_padding_alignment_in_elements = layout.tail_padding_alignment_in_elements;
  }
  if (from.ntuple_shapes < 0 || from.ntuple_shapes > kMaxListSize) {
    return absl::InvalidArgumentError(absl::StrCat("ntuple_shapes is ", from.ntuple_shapes));
  }
  if (from.ntuple_shapes == 0) return absl::OkStatus();
  if (from.tuple_shapes == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("ntuple_shapes is ", from.ntuple_shapes,
                                                   " but tuple_shapes is null"));
  }
  // Value-initialized elements are empty shapes, so a failure half way destroys cleanly.
  auto elements = std::make_unique<XLA_Shape[]>(from.ntuple_shapes);
  to.tuple_shapes = elements.release();  // TF frees it with delete[]
  to.ntuple_shapes = from.ntuple_shapes;
  for (int i = 0; i < from.ntuple_shapes; ++i) {
    absl::Status status = CopyShapeInto(from.tuple_shapes[i], to.tuple_shapes[i], depth + 1);
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat("tuple_shapes[", i, "]: ", status.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CopyXlaShape(const XLA_Shape& from, XLA_Shape& to) {
  std::memset(&to, 0, sizeof(to));
  absl::Status status = CopyShapeInto(from, to, 0);
  if (!status.ok()) DestroyXlaShape(to);
  return status;
}

void DestroyXlaShape(XLA_Shape& shape) {
  DestroyPlainList(shape.dimensions);
  DestroyPlainList(shape.dynamic_dimensions);
  DestroyPlainList(shape.layout.minor_to_major);
  DestroyTiles(shape.layout.tiles);
  if (shape.tuple_shapes != nullptr) {
    for (int i = 0; i < shape.ntuple_shapes; ++i) DestroyXlaShape(shape.tuple_shapes[i]);
    std::unique_ptr<XLA_Shape[]> owned(shape.tuple_shapes);
  }
  std::memset(&shape, 0, sizeof(shape));
}

}  // namespace ember::pjrt
