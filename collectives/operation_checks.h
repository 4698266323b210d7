// The argument checks every transport makes on an operation before it touches its peers, so
// that all word them alike. `where` names the operation and the rank (each transport's own
// prefix, e.g. "all_reduce (devices [0,1], rank 1)"); a failure is InvalidArgument
// "<where>: <what was wrong>".
#ifndef EMBER_COLLECTIVES_OPERATION_CHECKS_H_
#define EMBER_COLLECTIVES_OPERATION_CHECKS_H_

#include <cstddef>
#include <string_view>

#include "absl/status/status.h"
#include "collectives/types.h"
#include "stream_executor/device_memory.h"

namespace ember::collectives {

// `kind` is defined on `type` (IsValidReduction).
absl::Status CheckReductionArgument(std::string_view where, DataType type, ReductionKind kind);
// `mem` (the operation's `which` buffer, "send" or "recv") holds `bytes` and is not null.
absl::Status CheckBufferArgument(std::string_view where, const char* which, se::DeviceMemory mem,
                                 size_t bytes);
// `rank` (the operation's `which` rank, "root", "source", ...) is one of `size` ranks.
absl::Status CheckRankArgument(std::string_view where, const char* which, RankId rank, int size);

}  // namespace ember::collectives

#endif  // EMBER_COLLECTIVES_OPERATION_CHECKS_H_
