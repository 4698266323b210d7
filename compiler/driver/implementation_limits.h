// What the program may say (ir::Verify: the spec as upstream's verifier reads it) but Ember's
// backends cannot run, refused when the program is compiled rather than when it runs: errors
// name the op and its location like the verifier's.
#ifndef EMBER_COMPILER_DRIVER_IMPLEMENTATION_LIMITS_H_
#define EMBER_COMPILER_DRIVER_IMPLEMENTATION_LIMITS_H_

#include "absl/status/status.h"
#include "compiler/ir/module.h"

namespace ember::compiler {

// Every computation of `module` (regions included).
absl::Status CheckImplementationLimits(const ir::Module& module);

}  // namespace ember::compiler

#endif  // EMBER_COMPILER_DRIVER_IMPLEMENTATION_LIMITS_H_
