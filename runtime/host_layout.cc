#include "runtime/host_layout.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ember::runtime {

absl::StatusOr<uint64_t> DenseByteSize(ir::ElementType type, absl::Span<const int64_t> dims) {
  int64_t count = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("dimension ", i, " is negative (", dims[i],
                                                     ") in shape [", absl::StrJoin(dims, ","), "]"));
    }
  }
  for (int64_t d : dims) {
    if (d != 0 && count > INT64_MAX / d) {
      return absl::InvalidArgumentError(absl::StrCat("element count of shape [",
                                                     absl::StrJoin(dims, ","), "] overflows int64"));
    }
    count *= d;
  }
  const int64_t element_bytes = ir::StorageBytes(type);
  if (element_bytes != 0 && count > INT64_MAX / element_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("byte size of shape [", absl::StrJoin(dims, ","), "] overflows int64"));
  }
  return static_cast<uint64_t>(count * element_bytes);
}

std::vector<int64_t> RowMajorByteStrides(ir::ElementType type, absl::Span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size());
  int64_t stride = ir::StorageBytes(type);
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= std::max<int64_t>(dims[i], 1);
  }
  return strides;
}

absl::StatusOr<std::vector<int64_t>> ByteStridesForMinorToMajor(
    ir::ElementType type, absl::Span<const int64_t> dims, absl::Span<const int64_t> minor_to_major) {
  if (minor_to_major.size() != dims.size()) {
    return absl::InvalidArgumentError(absl::StrCat("layout minor_to_major has ", minor_to_major.size(),
                                                   " entries for a rank-", dims.size(), " array"));
  }
  std::vector<bool> seen(dims.size(), false);
  std::vector<int64_t> strides(dims.size());
  int64_t stride = ir::StorageBytes(type);
  for (int64_t d : minor_to_major) {
    if (d < 0 || d >= static_cast<int64_t>(dims.size()) || seen[d]) {
      return absl::InvalidArgumentError(absl::StrCat("layout minor_to_major {",
                                                     absl::StrJoin(minor_to_major, ","),
                                                     "} is not a permutation of the dimensions"));
    }
    seen[d] = true;
    strides[d] = stride;
    stride *= std::max<int64_t>(dims[d], 1);
  }
  return strides;
}

absl::Status ValidateByteStrides(ir::ElementType type, absl::Span<const int64_t> dims,
                                 absl::Span<const int64_t> byte_strides, StrideSigns signs) {
  if (byte_strides.size() != dims.size()) {
    return absl::InvalidArgumentError(absl::StrCat("got ", byte_strides.size(),
                                                   " byte_strides for a rank-", dims.size(), " array"));
  }
  // The bytes touched lie in [lowest, highest + element size) around the first element's
  // address; both ends must fit in int64.
  __int128 lowest = 0;
  __int128 highest = ir::StorageBytes(type);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (byte_strides[i] < 0 && signs == StrideSigns::kNonNegative) {
      return absl::InvalidArgumentError(
          absl::StrCat("byte_strides[", i, "] is negative (", byte_strides[i], ")"));
    }
    if (dims[i] <= 0) continue;
    const __int128 span = static_cast<__int128>(dims[i] - 1) * byte_strides[i];
    (span < 0 ? lowest : highest) += span;
    if (highest > INT64_MAX || lowest < -static_cast<__int128>(INT64_MAX)) {
      return absl::InvalidArgumentError(absl::StrCat("byte_strides [", absl::StrJoin(byte_strides, ","),
                                                     "] address more than 2^63 bytes for shape [",
                                                     absl::StrJoin(dims, ","), "]"));
    }
  }
  return absl::OkStatus();
}

}  // namespace ember::runtime
