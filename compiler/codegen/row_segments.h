// Where a loop kernel's rows change source: the positions along the innermost dim at which a
// fused concatenate or pad switches from one operand (or the padding) to the next. The loop
// emitter emits its element loop once per segment between them; inside a segment those choices
// are fixed, so the element generator reads each row at unit stride (plain vector loads) instead
// of loading every operand at a clamped index and selecting (gathers that kept
// concat/pad/reverse chains at 2-3x XLA's time). LLVM-free: the positions follow from the
// kernel's index ops alone.
#ifndef EMBER_COMPILER_CODEGEN_ROW_SEGMENTS_H_
#define EMBER_COMPILER_CODEGEN_ROW_SEGMENTS_H_

#include <cstdint>
#include <vector>

#include "compiler/passes/fusion_plan.h"

namespace ember::codegen {

// The segment starts along the innermost dim of `kernel`'s root, in increasing order, first 0:
// {0} when nothing in the kernel switches source along a row (or the kernel would need more than
// `max_segments` segments, whose copies of the element loop would cost more compile time than
// they save).
std::vector<int64_t> RowSegmentStarts(const passes::Kernel& kernel, int max_segments = 8);

}  // namespace ember::codegen

#endif  // EMBER_COMPILER_CODEGEN_ROW_SEGMENTS_H_
