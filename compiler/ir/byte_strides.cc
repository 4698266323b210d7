#include "compiler/ir/byte_strides.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ember::ir {
namespace {

std::string Join(absl::Span<const int64_t> v) {
  return absl::StrCat("[", absl::StrJoin(v, ","), "]");
}

// Fixed-size memcpy lets the compiler emit one load and one store for the common sizes.
inline void CopyElement(const uint8_t* src, uint8_t* dst, int64_t element_bytes) {
  switch (element_bytes) {
    case 1:
      *dst = *src;
      return;
    case 2:
      std::memcpy(dst, src, 2);
      return;
    case 4:
      std::memcpy(dst, src, 4);
      return;
    case 8:
      std::memcpy(dst, src, 8);
      return;
    case 16:
      std::memcpy(dst, src, 16);
      return;
    default:
      std::memcpy(dst, src, static_cast<size_t>(element_bytes));
  }
}

struct StridedDim {
  int64_t size;
  int64_t src;
  int64_t dst;
};

}  // namespace

std::vector<int64_t> ByteStridesForLayout(const Shape& shape) {
  std::vector<int64_t> strides(shape.rank(), 0);
  int64_t stride = StorageBytes(shape.element_type());
  for (int64_t d : shape.layout().minor_to_major()) {
    strides[d] = stride;
    // Shape::Make checked that the whole byte size fits, so partial products fit too; a zero dim
    // keeps later strides at their dense value rather than 0.
    stride *= std::max<int64_t>(shape.dim(d), 1);
  }
  return strides;
}

absl::Status CheckByteStridesFit(const Shape& shape, absl::Span<const int64_t> byte_strides,
                                 uint64_t buffer_size) {
  if (static_cast<int64_t>(byte_strides.size()) != shape.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("byte_strides ", Join(byte_strides), " have ",
                                                   byte_strides.size(), " entries but shape ",
                                                   shape.ToString(), " has rank ", shape.rank()));
  }
  if (shape.element_count() == 0 || StorageBytes(shape.element_type()) == 0) {
    return absl::OkStatus();
  }
  __int128 lowest = 0;
  __int128 highest = 0;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    __int128 span = static_cast<__int128>(shape.dim(d) - 1) * byte_strides[d];
    if (span < 0) lowest += span;
    if (span > 0) highest += span;
  }
  if (lowest < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("byte_strides ", Join(byte_strides), " for ", shape.ToString(),
                     " address bytes before the start of the buffer (negative stride)"));
  }
  const __int128 end = highest + StorageBytes(shape.element_type());
  if (end > static_cast<__int128>(buffer_size)) {
    return absl::InvalidArgumentError(
        absl::StrCat("byte_strides ", Join(byte_strides), " for ", shape.ToString(), " address ",
                     static_cast<int64_t>(std::min<__int128>(end, INT64_MAX)),
                     " bytes but the buffer has ", buffer_size));
  }
  return absl::OkStatus();
}

bool ByteStridesAreDense(const Shape& shape, absl::Span<const int64_t> byte_strides) {
  if (static_cast<int64_t>(byte_strides.size()) != shape.rank()) return false;
  if (shape.element_count() == 0) return true;
  std::vector<int64_t> dense = ByteStridesForLayout(shape);
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (shape.dim(d) != 1 && byte_strides[d] != dense[d]) return false;
  }
  return true;
}

std::optional<Layout> DenseLayoutForByteStrides(absl::Span<const int64_t> dims,
                                                absl::Span<const int64_t> byte_strides,
                                                int64_t element_bytes) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (static_cast<int64_t>(byte_strides.size()) != rank || element_bytes < 0) return std::nullopt;
  bool empty = false;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    if (d == 0) empty = true;
  }
  if (empty || element_bytes == 0) return Layout::RowMajor(rank);

  // Prefer row-major when it fits: dims of size 1 make several layouts equally dense.
  std::vector<int64_t> non_unit;  // candidate minor-to-major order of dims with size > 1
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (dims[d] != 1) non_unit.push_back(d);
  }
  std::stable_sort(non_unit.begin(), non_unit.end(),
                   [&](int64_t a, int64_t b) { return byte_strides[a] < byte_strides[b]; });
  int64_t expected = element_bytes;
  for (int64_t d : non_unit) {
    if (byte_strides[d] != expected) return std::nullopt;
    if (__builtin_mul_overflow(expected, dims[d], &expected)) return std::nullopt;
  }
  // Unit dims go where row-major would put them relative to their neighbours: walk dims from
  // last to first and emit each non-unit dim in stride order, unit dims as they come.
  std::vector<int64_t> minor_to_major;
  minor_to_major.reserve(rank);
  size_t next_non_unit = 0;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (dims[d] == 1) {
      minor_to_major.push_back(d);
    } else {
      minor_to_major.push_back(non_unit[next_non_unit++]);
    }
  }
  return Layout(std::move(minor_to_major));
}

absl::Status CopyStrided(const void* src, absl::Span<const int64_t> src_byte_strides, void* dst,
                         absl::Span<const int64_t> dst_byte_strides, absl::Span<const int64_t> dims,
                         int64_t element_bytes) {
  if (src_byte_strides.size() != dims.size() || dst_byte_strides.size() != dims.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CopyStrided: dims ", Join(dims), " with source strides ", Join(src_byte_strides),
        " and destination strides ", Join(dst_byte_strides), ": ranks differ"));
  }
  if (element_bytes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("CopyStrided: element_bytes is negative (", element_bytes, ")"));
  }
  bool empty = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("CopyStrided: dimension ", i, " of ",
                                                     Join(dims), " is negative (", dims[i], ")"));
    }
    if (dims[i] == 0) empty = true;
  }
  if (empty || element_bytes == 0) return absl::OkStatus();
  if (src == nullptr || dst == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("CopyStrided: null ", src == nullptr ? "source" : "destination",
                     " pointer for a non-empty array of dims ", Join(dims)));
  }

  // Outermost first, by destination stride, so writes go forward through memory.
  std::vector<StridedDim> order;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] != 1) order.push_back({dims[i], src_byte_strides[i], dst_byte_strides[i]});
  }
  std::stable_sort(order.begin(), order.end(), [](const StridedDim& a, const StridedDim& b) {
    return std::llabs(a.dst) > std::llabs(b.dst);
  });
  // Fold a dim into the next-inner one when both sides are contiguous across them.
  std::vector<StridedDim> merged;
  for (const StridedDim& dim : order) {
    if (!merged.empty()) {
      StridedDim& outer = merged.back();
      if (outer.src == dim.src * dim.size && outer.dst == dim.dst * dim.size) {
        outer = {outer.size * dim.size, dim.src, dim.dst};
        continue;
      }
    }
    merged.push_back(dim);
  }

  // The innermost dim is either one memcpy (contiguous on both sides) or an element loop.
  bool has_inner = !merged.empty();
  StridedDim inner = has_inner ? merged.back() : StridedDim{1, 0, 0};
  if (has_inner) merged.pop_back();
  const bool contiguous = inner.src == element_bytes && inner.dst == element_bytes;
  const size_t run_bytes = static_cast<size_t>(inner.size * element_bytes);

  const auto* src_bytes = static_cast<const uint8_t*>(src);
  auto* dst_bytes = static_cast<uint8_t*>(dst);
  std::vector<int64_t> index(merged.size(), 0);
  int64_t src_offset = 0;
  int64_t dst_offset = 0;
  while (true) {
    const uint8_t* s = src_bytes + src_offset;
    uint8_t* d = dst_bytes + dst_offset;
    if (contiguous) {
      std::memcpy(d, s, run_bytes);
    } else {
      for (int64_t i = 0; i < inner.size; ++i) {
        CopyElement(s + i * inner.src, d + i * inner.dst, element_bytes);
      }
    }
    int64_t k = static_cast<int64_t>(merged.size()) - 1;
    for (; k >= 0; --k) {
      if (++index[k] < merged[k].size) {
        src_offset += merged[k].src;
        dst_offset += merged[k].dst;
        break;
      }
      src_offset -= (merged[k].size - 1) * merged[k].src;
      dst_offset -= (merged[k].size - 1) * merged[k].dst;
      index[k] = 0;
    }
    if (k < 0) break;
  }
  return absl::OkStatus();
}

}  // namespace ember::ir
