// The order in which an array's dimensions are laid out in memory, as XLA's minor_to_major:
// minor_to_major[0] is the dimension whose index varies fastest. Dense layouts only (no tiling,
// no padding): that is all Ember's buffers use.
#ifndef EMBER_COMPILER_IR_LAYOUT_H_
#define EMBER_COMPILER_IR_LAYOUT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace ember::ir {

class Layout {
 public:
  Layout() = default;  // the layout of a scalar
  explicit Layout(std::vector<int64_t> minor_to_major)
      : minor_to_major_(std::move(minor_to_major)) {}

  // {rank-1, ..., 1, 0}: the last dimension varies fastest (C order, XLA's default).
  static Layout RowMajor(int64_t rank);
  // {0, 1, ..., rank-1}: the first dimension varies fastest (Fortran order).
  static Layout ColumnMajor(int64_t rank);

  const std::vector<int64_t>& minor_to_major() const { return minor_to_major_; }
  int64_t rank() const { return static_cast<int64_t>(minor_to_major_.size()); }
  bool IsRowMajor() const;

  // OK when minor_to_major is a permutation of 0..rank-1 for an array of the given rank.
  absl::Status Validate(int64_t rank) const;

  // "{1,0}", as XLA prints layouts.
  std::string ToString() const;

  friend bool operator==(const Layout& a, const Layout& b) {
    return a.minor_to_major_ == b.minor_to_major_;
  }

 private:
  std::vector<int64_t> minor_to_major_;
};

}  // namespace ember::ir

#endif  // EMBER_COMPILER_IR_LAYOUT_H_
