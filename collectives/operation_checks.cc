#include "collectives/operation_checks.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace ember::collectives {
namespace {

absl::Status Invalid(std::string_view where, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(where), ": ", what));
}

}  // namespace

absl::Status CheckReductionArgument(std::string_view where, DataType type, ReductionKind kind) {
  if (IsValidReduction(kind, type)) return absl::OkStatus();
  return Invalid(where, absl::StrCat("reduction '", ReductionKindName(kind), "' is not defined on ",
                                     DataTypeName(type)));
}

absl::Status CheckBufferArgument(std::string_view where, const char* which, se::DeviceMemory mem,
                                 size_t bytes) {
  if (bytes > 0 && mem.opaque == nullptr) return Invalid(where, absl::StrCat(which, " is null"));
  if (mem.size < bytes) {
    return Invalid(where,
                   absl::StrCat(which, " holds ", mem.size, " bytes, the operation needs ", bytes));
  }
  return absl::OkStatus();
}

absl::Status CheckRankArgument(std::string_view where, const char* which, RankId rank, int size) {
  if (rank.value >= 0 && rank.value < size) return absl::OkStatus();
  return Invalid(where,
                 absl::StrCat(which, " rank ", rank.value, " out of range for ", size, " ranks"));
}

}  // namespace ember::collectives
