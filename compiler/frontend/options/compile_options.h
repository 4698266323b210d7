// Reads the serialized xla.CompileOptionsProto that PJRT_Client_Compile receives into plain
// C++ options: replica/partition counts, the device assignment, partitioning flags, argument
// layouts and env_option_overrides (e.g. xla_dump_to).
#ifndef EMBER_COMPILER_FRONTEND_OPTIONS_COMPILE_OPTIONS_H_
#define EMBER_COMPILER_FRONTEND_OPTIONS_COMPILE_OPTIONS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace ember::frontend {

struct ArgumentLayout {
  int32_t element_type = 0;  // xla.PrimitiveType number
  std::vector<int64_t> dimensions;
  std::vector<int64_t> minor_to_major;  // empty: default
};

struct CompileOptions {
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
  // device_assignment[replica][partition] = global device id; empty when the caller sent none.
  std::vector<std::vector<int64_t>> device_assignment;
  int64_t device_ordinal = -1;
  bool use_spmd_partitioning = false;
  bool use_shardy_partitioner = false;
  bool parameter_is_tupled_arguments = false;
  bool compile_portable_executable = false;
  std::optional<int64_t> device_memory_size;
  std::vector<ArgumentLayout> argument_layouts;
  std::map<std::string, std::variant<std::string, bool, int64_t, double>> env_option_overrides;
};

// Empty bytes give the defaults. Malformed bytes: InvalidArgument "failed to deserialize
// CompileOptionsProto"; inconsistent values (non-positive counts, an assignment whose shape does
// not match the counts): InvalidArgument saying which.
absl::StatusOr<CompileOptions> ReadCompileOptions(absl::Span<const uint8_t> bytes);

// Serializes assignment[replica][partition] as an xla.DeviceAssignmentProto (what
// PJRT_LoadedExecutable_GetDeviceAssignment returns).
std::string SerializeDeviceAssignment(const std::vector<std::vector<int64_t>>& assignment);

}  // namespace ember::frontend

#endif  // EMBER_COMPILER_FRONTEND_OPTIONS_COMPILE_OPTIONS_H_
