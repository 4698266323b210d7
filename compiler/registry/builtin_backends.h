// The backends Ember ships, registered by one explicit call (no static initializers): the one
// place that knows every backend, so the plugin, the tools and the tests depend on none of them.
#ifndef EMBER_COMPILER_REGISTRY_BUILTIN_BACKENDS_H_
#define EMBER_COMPILER_REGISTRY_BUILTIN_BACKENDS_H_

#include "absl/status/status.h"
#include "compiler/backend/backend.h"

namespace ember::compiler {

// "host" (compiled host kernels) and "evaluator" (the reference evaluator on host devices).
absl::Status RegisterBuiltinBackends(backend::BackendRegistry& registry);

}  // namespace ember::compiler

#endif  // EMBER_COMPILER_REGISTRY_BUILTIN_BACKENDS_H_
