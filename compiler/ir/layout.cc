#include "compiler/ir/layout.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ember::ir {

Layout Layout::RowMajor(int64_t rank) {
  std::vector<int64_t> minor_to_major;
  minor_to_major.reserve(rank > 0 ? rank : 0);
  for (int64_t d = rank - 1; d >= 0; --d) minor_to_major.push_back(d);
  return Layout(std::move(minor_to_major));
}

Layout Layout::ColumnMajor(int64_t rank) {
  std::vector<int64_t> minor_to_major;
  minor_to_major.reserve(rank > 0 ? rank : 0);
  for (int64_t d = 0; d < rank; ++d) minor_to_major.push_back(d);
  return Layout(std::move(minor_to_major));
}

bool Layout::IsRowMajor() const {
  const int64_t n = rank();
  for (int64_t i = 0; i < n; ++i) {
    if (minor_to_major_[i] != n - 1 - i) return false;
  }
  return true;
}

absl::Status Layout::Validate(int64_t rank) const {
  if (this->rank() != rank) {
    return absl::InvalidArgumentError(absl::StrCat("layout ", ToString(), " has ", this->rank(),
                                                   " entries but the array has rank ", rank));
  }
  std::vector<bool> seen(rank, false);
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t d = minor_to_major_[i];
    if (d < 0 || d >= rank) {
      return absl::InvalidArgumentError(absl::StrCat("layout ", ToString(), ": entry ", i, " is ",
                                                     d, ", outside [0, ", rank, ")"));
    }
    if (seen[d]) {
      return absl::InvalidArgumentError(absl::StrCat("layout ", ToString(), ": dimension ", d,
                                                     " appears twice (not a permutation)"));
    }
    seen[d] = true;
  }
  return absl::OkStatus();
}

std::string Layout::ToString() const {
  return absl::StrCat("{", absl::StrJoin(minor_to_major_, ","), "}");
}

}  // namespace ember::ir
