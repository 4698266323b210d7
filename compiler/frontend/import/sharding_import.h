// Shardings as typed IR (compiler/ir/sharding.h), read once by the importers: Shardy's dialect
// attributes (#sdy.sharding, #sdy.mesh, #sdy.sharding_per_value, #sdy.manual_axes, in the pretty
// text, generic text and bytecode forms, which the readers build into one tree) and GSPMD
// sharding strings (`mhlo.sharding = "{devices=[2,1]<=[2]}"`, as JAX's older lowering and the HLO
// text form of XLA's OpSharding spell them).
#ifndef EMBER_COMPILER_FRONTEND_IMPORT_SHARDING_IMPORT_H_
#define EMBER_COMPILER_FRONTEND_IMPORT_SHARDING_IMPORT_H_

#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "compiler/frontend/mlir_ast.h"
#include "compiler/ir/attribute.h"
#include "compiler/ir/sharding.h"

namespace ember::frontend {

// The IR form of an sdy dialect attribute this importer models (kSharding, kMesh, a list of
// kSharding for sharding_per_value, a list of strings for manual_axes); nullopt for other
// attributes. Malformed ones are errors.
absl::StatusOr<std::optional<ir::Attribute>> ImportShardyAttribute(const Attribute& attr);

// A GSPMD sharding string: one kSharding, or a list of them for a tuple sharding
// ("{{replicated}, {devices=[2]0,1}}").
absl::StatusOr<ir::Attribute> ImportGspmdSharding(std::string_view text);

}  // namespace ember::frontend

#endif  // EMBER_COMPILER_FRONTEND_IMPORT_SHARDING_IMPORT_H_
