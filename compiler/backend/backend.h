// Backend: turns an optimized, verified program entry into an Executable for the devices of one
// stream-executor platform. The driver runs the shared passes, then the backend; a registry,
// filled by explicit calls (no static initializers), says which backends exist.
#ifndef EMBER_COMPILER_BACKEND_BACKEND_H_
#define EMBER_COMPILER_BACKEND_BACKEND_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "base/options.h"
#include "compiler/backend/executable.h"
#include "compiler/ir/module.h"
#include "compiler/passes/buffer_assignment.h"

namespace ember::backend {

class Backend {
 public:
  virtual ~Backend() = default;
  // "host", "evaluator", "cuda".
  virtual std::string_view name() const = 0;
  // The stream-executor platform whose devices run its executables ("host", "cuda").
  virtual std::string_view platform() const = 0;
  // Whether the driver runs the optimization pipeline before Compile (the reference evaluator
  // runs programs as they were sent).
  virtual bool wants_optimized_module() const = 0;
  // `entry` belongs to a module that outlives the executable. `donations`: parameters the caller
  // may donate and the results that could take their memory (the executable keeps the safe ones
  // in BufferLayout::result_aliases). `options`: this compile's (a backend reads what concerns
  // it, such as the code generator's cache directory; nothing is process-wide).
  virtual absl::StatusOr<std::unique_ptr<Executable>> Compile(
      const ir::Computation& entry, absl::Span<const passes::IoAlias> donations,
      const CompilerOptions& options) const = 0;
};

class BackendRegistry {
 public:
  // An error when a backend of that name is registered already.
  absl::Status Register(std::unique_ptr<Backend> backend);
  // Null when there is none.
  const Backend* Find(std::string_view name) const;
  std::vector<std::string> Names() const;

 private:
  std::vector<std::unique_ptr<Backend>> backends_;
};

}  // namespace ember::backend

#endif  // EMBER_COMPILER_BACKEND_BACKEND_H_
