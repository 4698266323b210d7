// refine_shapes: specializes a shape-polymorphic program (`?` dims, the dynamic_* ops) to static
// shapes, like upstream's stablehlo-refine-shapes. Given static types for the entry's arguments
// and values for its dimension-variable arguments (the leading scalar integer arguments of a
// JAX shape-polymorphic export), it inlines calls, propagates static types forward, folds the
// shape computations with the evaluator's op table, rewrites dynamic_* ops whose shape operands
// became constants into their static counterparts, checks shape_assertion custom calls, and
// fails naming the op and its location where a dim stays dynamic.
#ifndef EMBER_COMPILER_PASSES_REFINE_SHAPES_H_
#define EMBER_COMPILER_PASSES_REFINE_SHAPES_H_

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "compiler/ir/module.h"
#include "compiler/passes/pass.h"

namespace ember::passes {

struct ShapeRefinement {
  // One static type per entry argument, each compatible with the argument's declared type.
  std::vector<ir::ValueType> arg_types;
  // Argument index -> value, for scalar integer arguments whose value the program's shapes
  // depend on (dimension variables). Their uses become constants; the arguments stay.
  std::map<int64_t, int64_t> dim_values;
};

// Refines `module` in place; `entry` is the function whose arguments `refinement` describes.
absl::Status RefineShapes(ir::Module& module, ir::Computation& entry,
                          const ShapeRefinement& refinement);

// The same as a Pass over module.entry() (for pipelines and ember-opt).
std::unique_ptr<Pass> CreateRefineShapesPass(ShapeRefinement refinement);

}  // namespace ember::passes

#endif  // EMBER_COMPILER_PASSES_REFINE_SHAPES_H_
