// Offline placement of buffers with known live ranges in one arena, as XLA's heap simulator
// does with GlobalDecreasingSizeBestFit: the biggest buffers are placed first, each at the best
// fitting gap among the already placed buffers whose live ranges overlap its own. Where buffer
// assignment's first fit in kernel order leaves holes (a small long-lived buffer allocated above
// a big short-lived one), this packs closer to the most bytes live at once.
#ifndef EMBER_COMPILER_PASSES_ARENA_PACKING_H_
#define EMBER_COMPILER_PASSES_ARENA_PACKING_H_

#include <cstdint>
#include <vector>

namespace ember::passes {

struct LiveInterval {
  int64_t size = 0;  // bytes, already aligned
  int begin = 0;     // first kernel index it is live at
  int end = 0;       // last kernel index it is live at (inclusive)
  int64_t offset = 0;  // out
};

// Sets every interval's offset so that intervals live at a common kernel never overlap in
// bytes; returns the arena size (the largest offset + size).
int64_t PackBySizeBestFit(std::vector<LiveInterval>& intervals);

}  // namespace ember::passes

#endif  // EMBER_COMPILER_PASSES_ARENA_PACKING_H_
