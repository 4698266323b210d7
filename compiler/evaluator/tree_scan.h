// The order in which the evaluator folds cumulative windows (cumsum, cumprod, cummax and their
// kin): XLA's, so float results agree with XLA:CPU bit for bit rather than only within rounding.
//
// XLA rewrites a scan longer than kTreeScanBlock into blocks: the sequence is padded with the
// init value to whole blocks, each block is scanned on its own, the blocks' totals are scanned
// (recursively, the same way) and shifted by one block to an exclusive scan, and every element
// becomes body(element's in-block scan, exclusive total of the blocks before it). Blocks of at
// most kTreeScanBlock are folded window by window, each window from the init value in order.
// Prefixes cost O(n) combinations; suffixes (whose windows start at the element) cost
// O(n * kTreeScanBlock / 2), or O(n) with `suffix_from_end`, which folds each block's suffixes
// from its end instead (for interpreted regions, whose bits rarely match XLA's anyway).
#ifndef EMBER_COMPILER_EVALUATOR_TREE_SCAN_H_
#define EMBER_COMPILER_EVALUATOR_TREE_SCAN_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "base/status_macros.h"

namespace ember::eval {

// The block length of XLA:CPU's rewrite (its ReduceWindowRewriter base length; found by comparing
// cumsum bits with XLA:CPU in JAX 0.10.2's jaxlib).
inline constexpr int64_t kTreeScanBlock = 16;

struct TreeScanOrder {
  bool reverse = false;          // suffix windows (from each element to the end)
  bool suffix_from_end = false;  // fold a block's suffixes from its end, in O(block)
};

namespace tree_scan_internal {

// One block: out[i] = fold of the window at i, starting from `init`.
template <typename V, typename Combine>
absl::Status ScanBlock(const std::vector<V>& v, const V& init, const TreeScanOrder& order,
                       Combine& combine, std::vector<V>& out) {
  const int64_t n = static_cast<int64_t>(v.size());
  out.assign(v.size(), init);
  if (!order.reverse) {
    V acc = init;
    for (int64_t i = 0; i < n; ++i) {
      EMBER_RETURN_IF_ERROR(combine(acc, v[i], acc));
      out[i] = acc;
    }
    return absl::OkStatus();
  }
  if (order.suffix_from_end) {
    V acc = init;
    for (int64_t i = n - 1; i >= 0; --i) {
      EMBER_RETURN_IF_ERROR(combine(acc, v[i], acc));
      out[i] = acc;
    }
    return absl::OkStatus();
  }
  for (int64_t i = 0; i < n; ++i) {
    V acc = init;
    for (int64_t k = i; k < n; ++k) EMBER_RETURN_IF_ERROR(combine(acc, v[k], acc));
    out[i] = std::move(acc);
  }
  return absl::OkStatus();
}

}  // namespace tree_scan_internal

// Scans `v` in XLA's order into `out` (same length). `combine(a, b, out)` applies the body with
// a as the accumulator; `init` must satisfy combine(init, init) == init (the caller checks).
template <typename V, typename Combine>
absl::Status TreeScan(std::vector<V> v, const V& init, const TreeScanOrder& order,
                      Combine& combine, std::vector<V>& out) {
  const int64_t n = static_cast<int64_t>(v.size());
  if (n <= kTreeScanBlock) return tree_scan_internal::ScanBlock(v, init, order, combine, out);
  const int64_t blocks = (n + kTreeScanBlock - 1) / kTreeScanBlock;
  v.resize(blocks * kTreeScanBlock, init);  // padded at the end, for both directions
  std::vector<V> scanned(v.size(), init), block, block_out, totals(blocks, init);
  for (int64_t b = 0; b < blocks; ++b) {
    block.assign(v.begin() + b * kTreeScanBlock, v.begin() + (b + 1) * kTreeScanBlock);
    EMBER_RETURN_IF_ERROR(
        tree_scan_internal::ScanBlock(block, init, order, combine, block_out));
    totals[b] = order.reverse ? block_out.front() : block_out.back();
    std::move(block_out.begin(), block_out.end(), scanned.begin() + b * kTreeScanBlock);
  }
  std::vector<V> inclusive;
  EMBER_RETURN_IF_ERROR(TreeScan(std::move(totals), init, order, combine, inclusive));
  out.assign(n, init);
  for (int64_t b = 0; b < blocks; ++b) {
    // The blocks before this one (after it, for suffixes), as an exclusive scan.
    const int64_t from = order.reverse ? b + 1 : b - 1;
    const bool none = from < 0 || from >= blocks;
    for (int64_t k = 0; k < kTreeScanBlock; ++k) {
      const int64_t i = b * kTreeScanBlock + k;
      if (i >= n) break;
      if (none) {
        EMBER_RETURN_IF_ERROR(combine(scanned[i], init, out[i]));
      } else {
        EMBER_RETURN_IF_ERROR(combine(scanned[i], inclusive[from], out[i]));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace ember::eval

#endif  // EMBER_COMPILER_EVALUATOR_TREE_SCAN_H_
