// Test helper: builds a compiler::CompiledProgram from an already-imported module, filling its
// fields the way compiler::CompileProgram does, for an entry function chosen by the caller.
#ifndef EMBER_TESTS_CONFORMANCE_CONFORMANCE_PROGRAM_H_
#define EMBER_TESTS_CONFORMANCE_CONFORMANCE_PROGRAM_H_

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "compiler/driver/compile_program.h"
#include "compiler/frontend/options/compile_options.h"
#include "compiler/ir/module.h"

namespace ember::conformance {

// Verifies `module` and binds it to `entry_name` (empty: Module::entry()). `source` feeds the
// fingerprint, as the program bytes do in CompileProgram.
absl::StatusOr<std::unique_ptr<compiler::CompiledProgram>> ProgramFromModule(
    std::unique_ptr<ir::Module> module, std::string_view entry_name, std::string_view source,
    const frontend::CompileOptions& options = {});

// Parses MLIR text, imports and verifies it, and binds it to `entry_name` (empty: the module's
// entry, else the first function without parameters). Errors start with the stage:
// "parse: ", "import: ", "verify: ", "entry: ".
absl::StatusOr<std::unique_ptr<compiler::CompiledProgram>> ProgramFromText(
    std::string_view text, std::string_view filename, std::string_view entry_name = {},
    const frontend::CompileOptions& options = {});

}  // namespace ember::conformance

#endif  // EMBER_TESTS_CONFORMANCE_CONFORMANCE_PROGRAM_H_
