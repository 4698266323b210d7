// How Ember's collective element types and reduction kinds travel through NCCL. Data that is only
// moved goes as NCCL's own type where it has one and as bytes otherwise (pred, s16/u16, the f8
// types, complex). Reductions need an NCCL type and op: complex sums are sums of the (real,
// imaginary) pairs, pred or/and are max/min on bytes; what NCCL cannot reduce is an error.
#ifndef EMBER_COLLECTIVES_NCCL_NCCL_TYPES_H_
#define EMBER_COLLECTIVES_NCCL_NCCL_TYPES_H_

#include <nccl.h>

#include <cstddef>

#include "absl/status/statusor.h"
#include "collectives/types.h"

namespace ember::collectives::nccl {

// `count` elements of some type as NCCL is told about them.
struct NcclElements {
  ncclDataType_t type;
  size_t count;
};
NcclElements NcclMoveElements(DataType type, size_t count);

struct NcclReduction {
  NcclElements elements;
  ncclRedOp_t op;
};
// InvalidArgument when `kind` is not defined on `type` (IsValidReduction); Unimplemented when
// NCCL has no way to do it (16-bit integers, bitwise kinds on integers, complex products).
absl::StatusOr<NcclReduction> NcclReductionFor(DataType type, ReductionKind kind, size_t count);

}  // namespace ember::collectives::nccl

#endif  // EMBER_COLLECTIVES_NCCL_NCCL_TYPES_H_
