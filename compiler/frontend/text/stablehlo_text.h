// Helpers shared by the StableHLO/CHLO attribute and op parsers: enum values, `<key = value>`
// parameter structs, convolution and dot dimension numbers.
#ifndef EMBER_COMPILER_FRONTEND_TEXT_STABLEHLO_TEXT_H_
#define EMBER_COMPILER_FRONTEND_TEXT_STABLEHLO_TEXT_H_

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/frontend/mlir_ast.h"
#include "compiler/frontend/text/text_parser_internal.h"

namespace ember::frontend::text {

enum class FieldKind : uint8_t { kDims, kInt, kBool, kType, kString, kFloat, kAttr, kSubAxis };
struct StructField {
  const char* name;
  FieldKind kind;
};

// A bare enum keyword (`GT`) checked against the enum's values -> `#dialect<mnemonic GT>`.
absl::StatusOr<AttrPtr> ParseEnumValue(Parser& p, std::string_view dialect,
                                       std::string_view mnemonic);
// `<key = value, ...>` in any order; returns every field in `fields` order, defaults filled in.
absl::StatusOr<std::vector<DialectParam>> ParseStructFields(Parser& p,
                                                            const std::vector<StructField>& fields,
                                                            bool open_consumed = false);
// `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]` -> #dialect.conv.
absl::StatusOr<AttrPtr> ParseConvDimensionNumbers(Parser& p, std::string_view dialect);
const std::vector<StructField>& DotDimensionFields();
const std::vector<StructField>& DotAlgorithmFields();

}  // namespace ember::frontend::text

#endif  // EMBER_COMPILER_FRONTEND_TEXT_STABLEHLO_TEXT_H_
