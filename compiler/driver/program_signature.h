// What the framework sees of a compiled program beyond its per-device buffers: the global
// (unsharded) types of the entry's parameters and results and how each is split over the
// devices, as GSPMD sharding strings (what PJRT reports and JAX reads back).
#ifndef EMBER_COMPILER_DRIVER_PROGRAM_SIGNATURE_H_
#define EMBER_COMPILER_DRIVER_PROGRAM_SIGNATURE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/module.h"

namespace ember::compiler {

struct ProgramSignature {
  std::vector<ir::ValueType> parameter_types;  // global
  std::vector<ir::ValueType> result_types;     // global
  // "{replicated}", "{devices=[2,1]0,1}", ... over the program's partitions; one per value.
  std::vector<std::string> parameter_shardings;
  std::vector<std::string> result_shardings;
};

// Reads the entry's signature and its typed sharding attributes (sdy.sharding, mhlo.sharding)
// before the program is turned into its per-device form.
absl::StatusOr<ProgramSignature> ReadProgramSignature(const ir::Module& module,
                                                      const ir::Computation& entry);

// Re-reads the result shardings after the SPMD passes, which state the shardings they chose
// for results the framework left open.
void UpdateResultShardings(const ir::Module& module, const ir::Computation& entry,
                           ProgramSignature& signature);

// An MLIR module with the entry's global signature and the shardings as `mhlo.sharding`
// attributes (its body returns zeros): what PJRT_Executable_OptimizedProgram gives the framework
// to learn the shardings of a multi-device program's parameters and results.
std::string SignatureModuleText(const ProgramSignature& signature, const std::string& name,
                                int64_t num_replicas, int64_t num_partitions);

}  // namespace ember::compiler

#endif  // EMBER_COMPILER_DRIVER_PROGRAM_SIGNATURE_H_
