// Program dumps: with EMBER_FLAGS=--dump_to=DIR (or xla_dump_to in the compile options'
// env_option_overrides), every compiled program's input bytes and imported module are written
// to DIR so a failing program can be replayed with tools/ember-opt.
#ifndef EMBER_COMPILER_DRIVER_DUMP_H_
#define EMBER_COMPILER_DRIVER_DUMP_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "compiler/frontend/options/compile_options.h"

namespace ember::compiler {

// The dump directory, if dumping was asked for (compile options win over EMBER_FLAGS).
std::optional<std::string> DumpDirectory(const frontend::CompileOptions& options);
// Writes DIR/<stem>.<suffix> (creating DIR); errors name the file.
absl::Status WriteDumpFile(const std::string& dir, const std::string& file_name,
                           absl::Span<const uint8_t> bytes);

}  // namespace ember::compiler

#endif  // EMBER_COMPILER_DRIVER_DUMP_H_
