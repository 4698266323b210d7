// The compiler driver: program bytes (MLIR bytecode or text, or an HloModuleProto) plus compile
// options in; frontend, verifier, the required lowerings, the per-device (SPMD) form, the shared
// optimization passes, then the chosen backend; out comes a CompiledProgram: the module, its
// signature and donation plan, and the backend's Executable.
#ifndef EMBER_COMPILER_DRIVER_COMPILE_PROGRAM_H_
#define EMBER_COMPILER_DRIVER_COMPILE_PROGRAM_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "base/options.h"
#include "compiler/driver/program_signature.h"
#include "compiler/frontend/options/compile_options.h"
#include "compiler/backend/backend.h"
#include "compiler/backend/executable.h"
#include "compiler/ir/module.h"

namespace ember::compiler {

struct CompiledProgram {
  std::unique_ptr<ir::Module> module;
  ir::Computation* entry = nullptr;
  frontend::CompileOptions options;
  std::string name;  // the module's name (JAX: "jit_f")
  // What one device takes and returns (for an SPMD program: its shards).
  std::vector<ir::ValueType> parameter_types;
  std::vector<ir::ValueType> result_types;
  // The program as the framework wrote it: global types and how they are split.
  ProgramSignature signature;
  // An SPMD program (use_spmd_partitioning over several partitions, or manual computations),
  // turned into its per-device form.
  bool spmd = false;
  // What the SPMD partitioner did: collectives inserted, ops left on global values.
  std::string spmd_report;
  // The per-device program as StableHLO text (local shapes, the collectives inserted), what
  // PJRT_Executable_OptimizedProgram returns; empty when the text form cannot say it yet (the
  // dump's <fp>.device.txt says why) or for programs that are not SPMD.
  std::string device_program_text;
  // For each parameter: may its buffer be donated (jax.buffer_donor or tf.aliasing_output)?
  std::vector<bool> donatable;
  // Donated parameters and the results that may take their memory: tf.aliasing_output names
  // the result; a jax.buffer_donor takes the first free result of its type. The host executable
  // keeps the safe ones (BufferLayout::result_aliases).
  std::vector<passes::IoAlias> donations;
  // A stable hash of the program and the options that change its meaning.
  std::string fingerprint;
  // What the devices run per launch (it reads `module`, which outlives it).
  std::unique_ptr<backend::Executable> executable;
};

// `format` is PJRT's program format ("mlir" or "hlo"). Errors name the stage and, for program
// errors, the op and its source location.
absl::StatusOr<std::unique_ptr<CompiledProgram>> CompileProgram(
    std::string_view format, absl::Span<const uint8_t> code, const frontend::CompileOptions& options,
    const backend::Backend& backend, const CompilerOptions& compiler_options = {});

// Verifies an already-imported `module` and builds the program around `entry` (null: the
// module's entry(): @main or its only public function). `source` (the program's bytes or text)
// feeds the fingerprint.
absl::StatusOr<std::unique_ptr<CompiledProgram>> CompileModule(
    std::unique_ptr<ir::Module> module, ir::Computation* entry,
    const frontend::CompileOptions& options, absl::Span<const uint8_t> source,
    const backend::Backend& backend, const CompilerOptions& compiler_options = {});

// The backend that compiles for `platform`'s devices ("host", "cuda") under `options` (the host
// backend "host", or "evaluator" with host_backend = evaluator); a clear error when none of the
// registered ones does.
absl::StatusOr<const backend::Backend*> SelectBackend(const backend::BackendRegistry& registry,
                                                      std::string_view platform,
                                                      const CompilerOptions& options);

// Parses and imports program bytes to a module without verifying it (for tools).
absl::StatusOr<std::unique_ptr<ir::Module>> ReadProgram(std::string_view format,
                                                         absl::Span<const uint8_t> code);

}  // namespace ember::compiler

#endif  // EMBER_COMPILER_DRIVER_COMPILE_PROGRAM_H_
