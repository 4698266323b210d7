#include "compiler/passes/arena_packing.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace ember::passes {

int64_t PackBySizeBestFit(std::vector<LiveInterval>& intervals) {
  std::vector<size_t> order(intervals.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (intervals[a].size != intervals[b].size) return intervals[a].size > intervals[b].size;
    return intervals[a].begin < intervals[b].begin;
  });
  std::vector<size_t> placed;
  std::vector<std::pair<int64_t, int64_t>> taken;  // [offset, offset + size) of overlapping ones
  int64_t arena = 0;
  for (size_t i : order) {
    LiveInterval& item = intervals[i];
    taken.clear();
    for (size_t j : placed) {
      const LiveInterval& other = intervals[j];
      if (other.begin <= item.end && item.begin <= other.end) {
        taken.emplace_back(other.offset, other.offset + other.size);
      }
    }
    std::sort(taken.begin(), taken.end());
    // The smallest gap that holds the item; above everything when none does.
    int64_t best = -1;
    int64_t best_gap = std::numeric_limits<int64_t>::max();
    int64_t cursor = 0;
    for (const auto& [lo, hi] : taken) {
      if (lo - cursor >= item.size && lo - cursor < best_gap) {
        best = cursor;
        best_gap = lo - cursor;
      }
      cursor = std::max(cursor, hi);
    }
    item.offset = best >= 0 ? best : cursor;
    arena = std::max(arena, item.offset + item.size);
    placed.push_back(i);
  }
  return arena;
}

}  // namespace ember::passes
