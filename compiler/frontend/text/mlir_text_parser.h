// Parser for MLIR's textual form (generic syntax plus the pretty forms of the func, stablehlo,
// chlo, sdy, check and interpreter ops) into the generic operation tree of mlir_ast.h, the same
// tree the bytecode reader produces. No MLIR libraries: grammar after mlir/lib/AsmParser.
#ifndef EMBER_COMPILER_FRONTEND_TEXT_MLIR_TEXT_PARSER_H_
#define EMBER_COMPILER_FRONTEND_TEXT_MLIR_TEXT_PARSER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/frontend/mlir_ast.h"

namespace ember::frontend {

// Parses a whole file and returns its top-level `builtin.module`. When the text holds anything
// other than exactly one module (e.g. bare func.func ops), they are wrapped in an implicit module.
// Every op carries a location: its `loc(...)` (with #loc aliases resolved) or, when none is
// written, `filename:line:col` of the op in this text. Errors read
// "filename:line:col: what was expected".
//
// Representation choices beyond mlir_ast.h:
//  - op attributes: inherent ones (properties) first, then discardable ones, each sorted by name,
//    as MLIR's generic printer and bytecode writer order them;
//  - dense elements: little-endian raw data, one element when all elements are equal (splat),
//    i1 one byte (0/1) per element;
//  - stablehlo/chlo dialect attributes: kDialect with the parameters named as in ODS
//    (enums: one string param "value"); sdy attributes as the bytecode reader builds them;
//    attributes and types of other dialects (quant, mhlo, vhlo, ...): kOpaque, whitespace-normalized.
absl::StatusOr<std::unique_ptr<Operation>> ParseMlirText(std::string_view text,
                                                         std::string_view filename);

// One attribute in MLIR's textual form (e.g. `#sdy.sharding<@mesh, [{"x"}, {}]>`, as XLA keeps
// Shardy's annotations in an HloModuleProto's frontend attributes), built as ParseMlirText would.
absl::StatusOr<AttrPtr> ParseMlirAttribute(std::string_view text);

// One chunk of a file split at `// -----` lines (mlir-opt's -split-input-file): the text keeps
// its original line numbers by leading with the newlines that preceded it.
struct MlirTextChunk {
  std::string text;
  int first_line = 1;
};
std::vector<MlirTextChunk> SplitMlirInput(std::string_view text);

}  // namespace ember::frontend

#endif  // EMBER_COMPILER_FRONTEND_TEXT_MLIR_TEXT_PARSER_H_
