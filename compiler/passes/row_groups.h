// Row groups (see RowGroup in fusion_plan.h): which consecutive kernels of a fusion plan a backend
// may run together, a block of rows at a time.
#ifndef EMBER_COMPILER_PASSES_ROW_GROUPS_H_
#define EMBER_COMPILER_PASSES_ROW_GROUPS_H_

#include <cstdint>
#include <vector>

#include "compiler/passes/fusion_plan.h"

namespace ember::passes {

// The number of leading rows `value`'s dims split into at a dimension boundary: true when some
// prefix of its dims has `rows` elements (rank 0 never splits).
bool SplitsIntoRows(const ir::Value& value, int64_t rows);

// Sets plan.row_groups. `runs_by_rows[k]` says whether the backend can run kernel k restricted to a
// range of rows (loop and trailing-dim reduction kernels of the fast backend). A group starts at a
// reduction whose kept dims give `rows` (at least `min_rows`), and takes the following kernels while
// each one splits into the same rows and reads every value the group produced only through
// row-preserving index maps (elementwise ops, reshapes, and broadcasts, transposes and slices that
// keep the leading row dims in place). Groups have at least two kernels.
void PlanRowGroups(FusionPlan& plan, const std::vector<bool>& runs_by_rows, int64_t min_rows);

}  // namespace ember::passes

#endif  // EMBER_COMPILER_PASSES_ROW_GROUPS_H_
