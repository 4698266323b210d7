// Element-wise reduction of host buffers for the host-memory transports (in-process, Gloo):
// acc = acc (op) in, with the same per-type semantics as the evaluator's binary ops (integers
// wrap, f16/bf16 round to their type after each step, NaN propagates through min/max, max(-0,
// +0) = +0, pred sums are ors), so collectives agree bit for bit with the reference.
#ifndef EMBER_COLLECTIVES_REDUCTION_H_
#define EMBER_COLLECTIVES_REDUCTION_H_

#include <cstddef>

#include "absl/status/status.h"
#include "collectives/types.h"

namespace ember::collectives {

// acc[i] = acc[i] (kind) in[i] for i < count. InvalidArgument when `kind` is not defined on
// `type` (IsValidReduction).
absl::Status Accumulate(DataType type, ReductionKind kind, const void* in, void* acc, size_t count);

}  // namespace ember::collectives

#endif  // EMBER_COLLECTIVES_REDUCTION_H_
