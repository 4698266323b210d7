// Byte strides: how PJRT host buffers describe arbitrary dense-or-not layouts, and the copy that
// moves an array between two stride sets (host buffer <-> dense literal, one layout to another).
// Strides are given per dimension in dimension order (not layout order), in bytes.
#ifndef EMBER_COMPILER_IR_BYTE_STRIDES_H_
#define EMBER_COMPILER_IR_BYTE_STRIDES_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "compiler/ir/layout.h"
#include "compiler/ir/shape.h"

namespace ember::ir {

// Strides of a dense buffer of `shape` in its layout: {16, 4} for f32[3,4]{1,0}.
std::vector<int64_t> ByteStridesForLayout(const Shape& shape);

// OK when byte_strides has one entry per dimension and every element it addresses lies inside
// a buffer of buffer_size bytes starting at offset 0 (so strides must not be negative, except on
// dims of size 1). Arrays with no elements always fit.
absl::Status CheckByteStridesFit(const Shape& shape, absl::Span<const int64_t> byte_strides,
                                 uint64_t buffer_size);

// True when byte_strides address exactly the dense buffer of `shape` in its own layout. Dims of
// size 1 may have any stride; arrays with no elements match anything.
bool ByteStridesAreDense(const Shape& shape, absl::Span<const int64_t> byte_strides);

// The dense layout that byte_strides describe, if any (e.g. {0,1} for a column-major f32[3,4]
// with strides {4, 12}); lets a host buffer be used in place instead of copied.
std::optional<Layout> DenseLayoutForByteStrides(absl::Span<const int64_t> dims,
                                                absl::Span<const int64_t> byte_strides,
                                                int64_t element_bytes);

// Copies an array of `dims` whose element (i0, i1, ...) is at src + sum(i_k * src_byte_strides[k])
// to dst + sum(i_k * dst_byte_strides[k]). Rejects mismatched ranks, negative dims and negative
// element_bytes; does not check bounds (use CheckByteStridesFit first). Source and destination
// must not overlap. Walks the destination in memory order and copies contiguous runs with one
// memcpy each.
absl::Status CopyStrided(const void* src, absl::Span<const int64_t> src_byte_strides, void* dst,
                         absl::Span<const int64_t> dst_byte_strides, absl::Span<const int64_t> dims,
                         int64_t element_bytes);

}  // namespace ember::ir

#endif  // EMBER_COMPILER_IR_BYTE_STRIDES_H_
