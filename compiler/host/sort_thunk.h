// A sort run natively: each line along the sort dimension (lines in parallel) is ordered by the
// evaluator's stable merge sort (merge_sort.h), asking the compiled comparator (sort_emitter.h)
// for every comparison, and every operand is gathered along the order into its result. The
// permutation is the evaluator's, so the results are its bits. When only the first `prefix`
// positions of each line are read (lax.top_k arrives as a sort followed by slices of its first k)
// and the comparator is a strict weak order, the line's `prefix` first elements are selected
// with a bounded heap instead (ties to the lower index, as the stable sort puts them) and only
// those are written. A comparator that is one LT/GT compare of the first operand's elements
// (integers, floats in total order) is not called at all: lines are ordered on native keys.
#ifndef EMBER_COMPILER_HOST_SORT_THUNK_H_
#define EMBER_COMPILER_HOST_SORT_THUNK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/codegen/host_kernel_compiler.h"
#include "compiler/host/host_thunks.h"

namespace ember::host {

// A comparator that is one LT/GT compare of the first operand's elements, integers or floats in
// total order: lines are then ordered on native keys instead of calling it.
struct SortKeyOrder {
  ir::ElementType type = ir::ElementType::kInvalid;
  bool descending = false;  // a before b when a's key is larger
};

class SortThunk final : public HostThunk {
 public:
  // `operands`/`results`: the sort's, in order, all of `dims`; `dimension`: the sorted one;
  // `prefix`: the positions of each line that are read (the whole line: -1). A prefix needs a
  // comparator that is a strict weak order.
  SortThunk(std::string name, codegen::HostLoopKernel comparator, std::vector<ValueRef> operands,
            std::vector<ValueRef> results, std::vector<int64_t> dims, int64_t dimension,
            int64_t prefix = -1, std::optional<SortKeyOrder> key_order = std::nullopt);
  absl::Status Run(HostRunContext& context) const override;

 private:
  codegen::HostLoopKernel comparator_;
  std::vector<ValueRef> operands_;
  std::vector<ValueRef> results_;
  std::vector<int> widths_;  // bytes per element of each operand
  int64_t length_ = 0;       // elements per line
  int64_t step_ = 1;         // between a line's elements
  int64_t lines_ = 0;
  int64_t prefix_ = 0;       // positions of each line written (length_: all, merge sorted)
  std::optional<SortKeyOrder> key_order_;  // the comparator's order, when it is that simple
};

}  // namespace ember::host

#endif  // EMBER_COMPILER_HOST_SORT_THUNK_H_
