// Turns a serialized xla.HloModuleProto (PJRT program format "hlo", what TensorFlow and
// jax's XlaComputation paths send) into Ember's IR with StableHLO semantics. The entry
// computation becomes @main; tuples are flattened (parameters, results, while state,
// get-tuple-element), fusions are inlined, calls become private functions and the other called
// computations become op regions. Anything the importer does not know is an error naming the HLO
// opcode and the instruction.
#ifndef EMBER_COMPILER_FRONTEND_HLO_HLO_IMPORT_H_
#define EMBER_COMPILER_FRONTEND_HLO_HLO_IMPORT_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/ir/module.h"

namespace ember::frontend {

// `bytes` is a binary HloModuleProto. The entry function's argument attributes carry donation
// the way the MLIR path does: `tf.aliasing_output` (the flat result index) for parameters in
// input_output_alias, `jax.buffer_donor` for buffer_donor entries.
absl::StatusOr<std::unique_ptr<ir::Module>> ImportHloModuleProto(absl::Span<const uint8_t> bytes);

// `bytes` is a binary HloModuleProtoWithConfig (format "hlo_with_config"); the config's replica
// and partition counts become the module's mhlo.num_replicas / mhlo.num_partitions.
absl::StatusOr<std::unique_ptr<ir::Module>> ImportHloModuleProtoWithConfig(
    absl::Span<const uint8_t> bytes);

}  // namespace ember::frontend

#endif  // EMBER_COMPILER_FRONTEND_HLO_HLO_IMPORT_H_
