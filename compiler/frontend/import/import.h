// Turns the generic MLIR tree (mlir_ast.h, from the bytecode reader or the text parser) into
// Ember's IR: stablehlo/func ops (pretty or generic text), VHLO portable artifacts, sdy meshes
// and shardings, and the few chlo/check/interpreter ops test programs use.
#ifndef EMBER_COMPILER_FRONTEND_IMPORT_IMPORT_H_
#define EMBER_COMPILER_FRONTEND_IMPORT_IMPORT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/frontend/mlir_ast.h"
#include "compiler/ir/module.h"

namespace ember::frontend {

// Converts a `builtin.module`. The same program imports to the same ir::Module (same
// Module::ToString()) whichever reader produced the tree: VHLO attributes are mapped back to
// StableHLO names, structured attributes are flattened one attribute per spec field, and
// defaults are materialized the way VHLO spells them out (see stablehlo_op_specs.cc). Anything
// the importer does not know (op, inherent attribute, type) is an error naming the op and its
// location; nothing is dropped silently.
absl::StatusOr<std::unique_ptr<ir::Module>> ImportModule(const Operation& module_op);

struct ImportOptions {
  // A test and diagnostics aid: a function that fails to import is left out of the module
  // (its name and error are reported) instead of failing the whole import; functions calling
  // it then fail as well. Used to compare the importable parts of two forms of one program.
  bool skip_failing_functions = false;
};
struct ImportResult {
  std::unique_ptr<ir::Module> module;
  std::vector<std::string> skipped;  // "@name: error", sorted by name
};
absl::StatusOr<ImportResult> ImportModule(const Operation& module_op,
                                          const ImportOptions& options);

}  // namespace ember::frontend

#endif  // EMBER_COMPILER_FRONTEND_IMPORT_IMPORT_H_
