// Reads MLIR bytecode (container versions 0-6) into the generic operation tree: StableHLO
// portable artifacts (VHLO, possibly mixed with sdy/func/builtin) as JAX/XLA send them to a PJRT
// plugin. Malformed input of any kind is an error naming the section and byte offset.
#ifndef EMBER_COMPILER_FRONTEND_BYTECODE_READER_H_
#define EMBER_COMPILER_FRONTEND_BYTECODE_READER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/frontend/mlir_ast.h"

namespace ember::frontend {

// The newest StableHLO portable-artifact version whose encodings this reader knows; artifacts
// from newer producers are rejected (the plugin advertises this as stablehlo_current_version).
inline constexpr int kMaxStableHloVersion[3] = {1, 20, 0};
inline constexpr int kMinStableHloVersion[3] = {0, 9, 0};

struct BytecodeHeader {
  uint64_t version = 0;     // container version, 0..6
  std::string producer;     // e.g. "StableHLO_v1.20.0" or "MLIR22.0.0git"
};

// True when `data` starts with the MLIR bytecode magic "ML\xEFR".
bool IsMlirBytecode(absl::Span<const uint8_t> data);

// Magic, version and producer only.
absl::StatusOr<BytecodeHeader> ReadMlirBytecodeHeader(absl::Span<const uint8_t> data);

// The whole file; returns the single top-level operation (builtin.module for real programs).
absl::StatusOr<std::unique_ptr<Operation>> ReadMlirBytecode(absl::Span<const uint8_t> data);

}  // namespace ember::frontend

#endif  // EMBER_COMPILER_FRONTEND_BYTECODE_READER_H_
