// Writes a module of Ember's IR back as StableHLO text (MLIR's generic op form), so a framework
// can read the program Ember runs: JAX's `compiled.as_text()` converts it to HLO text, where an
// SPMD program shows its local shapes and the collectives the partitioner inserted.
#ifndef EMBER_COMPILER_EXPORT_STABLEHLO_TEXT_H_
#define EMBER_COMPILER_EXPORT_STABLEHLO_TEXT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/module.h"

namespace ember::compiler {

// What the text says about the program beyond its ops: the module attributes XLA's HloModule
// config reads (replica and partition counts, the SPMD shardings of the entry's parameters and
// results, as HLO sharding strings). Empty sharding lists write none.
struct StablehloModuleHeader {
  std::string name;
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
  std::vector<std::string> parameter_shardings;
  std::vector<std::string> result_shardings;
};

// The opening of the module and of its public @main up to the body's "{": the header's module
// attributes and the entry's signature with each parameter's and result's sharding.
std::string StablehloModuleOpening(const StablehloModuleHeader& header,
                                   const std::vector<ir::ValueType>& parameter_types,
                                   const std::vector<ir::ValueType>& result_types);

// `entry` and every function it calls (directly, or through regions and custom-call
// decompositions) in the generic op form. Fails, naming the op, for what the text form cannot
// say yet (asynchronous ops, composite attributes, sub-byte constants that are not splats, ...):
// callers then show less, never a wrong program.
absl::StatusOr<std::string> ExportStablehloText(const ir::Module& module,
                                                const ir::Computation& entry,
                                                const StablehloModuleHeader& header);

}  // namespace ember::compiler

#endif  // EMBER_COMPILER_EXPORT_STABLEHLO_TEXT_H_
