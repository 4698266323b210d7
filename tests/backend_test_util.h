// The built-in backends, registered once for tests that compile programs through the driver (the
// plugin registers them per client; tests share one registry).
#ifndef EMBER_TESTS_BACKEND_TEST_UTIL_H_
#define EMBER_TESTS_BACKEND_TEST_UTIL_H_

#include "base/options.h"
#include "compiler/backend/backend.h"
#include "compiler/driver/compile_program.h"
#include "compiler/registry/builtin_backends.h"

namespace ember::test_util {

inline const backend::BackendRegistry& TestBackends() {
  static const backend::BackendRegistry* registry = [] {
    auto* r = new backend::BackendRegistry();
    const absl::Status registered = compiler::RegisterBuiltinBackends(*r);
    if (!registered.ok()) std::abort();
    return r;
  }();
  return *registry;
}

// The backend host devices use under `options` ("host", or "evaluator").
inline const backend::Backend& HostTestBackend(const CompilerOptions& options = {}) {
  return *compiler::SelectBackend(TestBackends(), "host", options).value();
}

}  // namespace ember::test_util

#endif  // EMBER_TESTS_BACKEND_TEST_UTIL_H_
