// Program dumps: with CompilerOptions::dump_to set (EMBER_FLAGS=--dump_to=DIR, or xla_dump_to in
// the compile options), every compiled program's input bytes and imported module are written to
// DIR so a failing program can be replayed with tools/ember-opt, followed by the module after each
// pass (<fingerprint>.<NN>.<pass>.txt), the host fusion plan (.fusion.dot), its cost report
// (.cost.txt) and the buffer assignment (.buffers.txt).
#ifndef EMBER_COMPILER_DRIVER_DUMP_H_
#define EMBER_COMPILER_DRIVER_DUMP_H_

#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace ember::compiler {

// Writes DIR/<stem>.<suffix> (creating DIR); errors name the file.
absl::Status WriteDumpFile(const std::string& dir, const std::string& file_name,
                           absl::Span<const uint8_t> bytes);

}  // namespace ember::compiler

#endif  // EMBER_COMPILER_DRIVER_DUMP_H_
