// How the compiler's collectives map onto a transport's vocabulary (collectives/types.h): the
// element type a Communicator moves or reduces, and the reduction kind a reduction region
// computes. Used by legalize-collectives (which rewrites what no transport can express) and by
// backends building collective operations.
#ifndef EMBER_COMPILER_PASSES_COLLECTIVE_REDUCTION_H_
#define EMBER_COMPILER_PASSES_COLLECTIVE_REDUCTION_H_

#include <optional>

#include "collectives/types.h"
#include "compiler/ir/element_type.h"
#include "compiler/ir/module.h"

namespace ember::passes {

// The transport type of `type` for reductions; nullopt for types no transport reduces
// (sub-byte integers, narrow floats other than f16/bf16).
std::optional<collectives::DataType> ReductionDataType(ir::ElementType type);

// The kind a reduction region computes: a region (a, b) -> op(a, b) (or op(b, a)) whose op is
// add, multiply, maximum, minimum, and, or or xor on scalars of `type`, and that kind is
// defined on the type's transport type. nullopt otherwise.
std::optional<collectives::ReductionKind> RegionReductionKind(const ir::Computation& region,
                                                              ir::ElementType type);

}  // namespace ember::passes

#endif  // EMBER_COMPILER_PASSES_COLLECTIVE_REDUCTION_H_
