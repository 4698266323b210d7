// Shape arithmetic shared by transfers: validated dimensions, dense byte sizes and byte strides.
#ifndef EMBER_RUNTIME_HOST_LAYOUT_H_
#define EMBER_RUNTIME_HOST_LAYOUT_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/ir/element_type.h"

namespace ember::runtime {

// Bytes of a dense array of `dims` elements of `type`; rejects negative dims and int64 overflow.
absl::StatusOr<uint64_t> DenseByteSize(ir::ElementType type, absl::Span<const int64_t> dims);
// Row-major byte strides of a dense array.
std::vector<int64_t> RowMajorByteStrides(ir::ElementType type, absl::Span<const int64_t> dims);
// Byte strides of a dense array whose layout is `minor_to_major` (a permutation of the dims).
absl::StatusOr<std::vector<int64_t>> ByteStridesForMinorToMajor(
    ir::ElementType type, absl::Span<const int64_t> dims, absl::Span<const int64_t> minor_to_major);
// Whether byte strides may step backwards through memory. A source array may (numpy's
// `a[::-1]` is described by its first element's address and a negative stride, and XLA:CPU takes
// it); a destination given by its start and size may not.
enum class StrideSigns { kNonNegative, kAny };
// Checks caller-given byte strides: one per dim, of the allowed signs, the addressed bytes
// within 2^63 of the first element.
absl::Status ValidateByteStrides(ir::ElementType type, absl::Span<const int64_t> dims,
                                 absl::Span<const int64_t> byte_strides,
                                 StrideSigns signs = StrideSigns::kNonNegative);

}  // namespace ember::runtime

#endif  // EMBER_RUNTIME_HOST_LAYOUT_H_
