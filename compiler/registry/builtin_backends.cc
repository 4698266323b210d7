#include "compiler/registry/builtin_backends.h"

#include "compiler/host/host_backend.h"

namespace ember::compiler {

absl::Status RegisterBuiltinBackends(backend::BackendRegistry& registry) {
  return host::RegisterHostBackends(registry);
}

}  // namespace ember::compiler
