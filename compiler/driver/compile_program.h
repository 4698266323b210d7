// The compiler driver: program bytes (MLIR bytecode or text; HLO proto later) plus compile
// options in, a verified ir::Module with its signature and donation plan out. Backends take it
// from here.
#ifndef EMBER_COMPILER_DRIVER_COMPILE_PROGRAM_H_
#define EMBER_COMPILER_DRIVER_COMPILE_PROGRAM_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/frontend/options/compile_options.h"
#include "compiler/host/host_executable.h"
#include "compiler/ir/module.h"
#include "compiler/passes/cost_analysis.h"

namespace ember::compiler {

struct CompiledProgram {
  std::unique_ptr<ir::Module> module;
  ir::Computation* entry = nullptr;
  frontend::CompileOptions options;
  std::string name;  // the module's name (JAX: "jit_f")
  std::vector<ir::ValueType> parameter_types;
  std::vector<ir::ValueType> result_types;
  // For each parameter: may its buffer be donated (jax.buffer_donor or tf.aliasing_output)?
  std::vector<bool> donatable;
  // Donated parameters and the results that may take their memory: tf.aliasing_output names
  // the result; a jax.buffer_donor takes the first free result of its type. The host executable
  // keeps the safe ones (HostExecutable::result_aliases).
  std::vector<passes::IoAlias> donations;
  // A stable hash of the program and the options that change its meaning.
  std::string fingerprint;
  // What host devices run per launch.
  std::unique_ptr<host::HostExecutable> host;
  // What one launch costs (PJRT_Executable_GetCostAnalysis).
  passes::ProgramCost cost;
  // A launch so small (a few kernels over at most kInlineBytes per value, no loops, calls,
  // collectives or host transfers) that handing it to the device's stream thread would cost more
  // than running it: a single-device launch runs it on the calling thread when the stream is idle,
  // as XLA:CPU runs cheap computations inline.
  bool run_inline = false;
  static constexpr int64_t kInlineBytes = 64 * 1024;
  static constexpr size_t kInlineInstructions = 64;
};

// `format` is PJRT's program format ("mlir" or "hlo"). Errors name the stage and, for program
// errors, the op and its source location.
absl::StatusOr<std::unique_ptr<CompiledProgram>> CompileProgram(
    std::string_view format, absl::Span<const uint8_t> code, const frontend::CompileOptions& options);

// Verifies an already-imported `module` and builds the program around `entry` (null: the
// module's entry(): @main or its only public function). `source` (the program's bytes or text)
// feeds the fingerprint.
absl::StatusOr<std::unique_ptr<CompiledProgram>> CompileModule(
    std::unique_ptr<ir::Module> module, ir::Computation* entry,
    const frontend::CompileOptions& options, absl::Span<const uint8_t> source);

// Parses and imports program bytes to a module without verifying it (for tools).
absl::StatusOr<std::unique_ptr<ir::Module>> ReadProgram(std::string_view format,
                                                         absl::Span<const uint8_t> code);

}  // namespace ember::compiler

#endif  // EMBER_COMPILER_DRIVER_COMPILE_PROGRAM_H_
