// The bytes PJRT_Executable_Serialize returns and PJRT_Executable_DeserializeAndLoad reads.
//
// Ember compiles in milliseconds, so a serialized executable holds what is needed to build it
// again -- the program as the framework sent it, its format and the serialized
// CompileOptionsProto -- rather than a backend artifact; loading recompiles it (the same
// fingerprint, the same executable). Versioned container, little-endian:
//
//   "EMBEREXE"  u32 version (1)  u32 record count  { u8 tag  u64 length  bytes }*
//   tags: 1 program format ("mlir" | "hlo"), 2 program bytes, 3 CompileOptionsProto bytes,
//         4 fingerprint of the executable that was serialized
//
// Unknown tags are skipped (a later version may add records); a newer container version, a
// wrong magic, a truncated record or a missing required record is an INVALID_ARGUMENT error.
#ifndef EMBER_PJRT_PLUGIN_SERIALIZED_EXECUTABLE_H_
#define EMBER_PJRT_PLUGIN_SERIALIZED_EXECUTABLE_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace ember::pjrt {

// What an executable was compiled from.
struct ProgramSource {
  std::string format;           // PJRT_Program format
  std::string code;             // PJRT_Program code
  std::string compile_options;  // serialized xla.CompileOptionsProto (may be empty)
  std::string fingerprint;      // the compiled executable's fingerprint
};

inline constexpr uint32_t kSerializedExecutableVersion = 1;

std::string SerializeExecutable(const ProgramSource& source);
absl::StatusOr<ProgramSource> DeserializeExecutable(std::string_view bytes);

}  // namespace ember::pjrt

#endif  // EMBER_PJRT_PLUGIN_SERIALIZED_EXECUTABLE_H_
