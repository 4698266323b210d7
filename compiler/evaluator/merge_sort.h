// The stable merge sort sort ops use (the evaluator's and the host backend's, so both give the
// same permutation): top-down, taking from the right half only when it is strictly less, so
// equal elements keep their order. It never reads out of bounds, whatever the comparator
// answers (a comparator that is no strict weak order gives some permutation, never a crash).
#ifndef EMBER_COMPILER_EVALUATOR_MERGE_SORT_H_
#define EMBER_COMPILER_EVALUATOR_MERGE_SORT_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ember::eval {

// Sorts items[lo, hi) with `less`; `scratch` has at least `hi` entries. `Items`: a vector or a
// span of int64.
template <typename Items, typename Less>
void MergeSort(Items& items, Items& scratch, size_t lo, size_t hi, Less& less) {
  if (hi - lo < 2) return;
  const size_t mid = lo + (hi - lo) / 2;
  MergeSort(items, scratch, lo, mid, less);
  MergeSort(items, scratch, mid, hi, less);
  size_t a = lo, b = mid, out = lo;
  while (a < mid && b < hi) {
    if (less(items[b], items[a])) {
      scratch[out++] = items[b++];
    } else {
      scratch[out++] = items[a++];
    }
  }
  while (a < mid) scratch[out++] = items[a++];
  while (b < hi) scratch[out++] = items[b++];
  for (size_t i = lo; i < hi; ++i) items[i] = scratch[i];
}

}  // namespace ember::eval

#endif  // EMBER_COMPILER_EVALUATOR_MERGE_SORT_H_
