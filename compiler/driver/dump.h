// Program dumps: with EMBER_FLAGS=--dump_to=DIR (or xla_dump_to in the compile options'
// env_option_overrides), every compiled program's input bytes and imported module are written
// to DIR so a failing program can be replayed with tools/ember-opt, followed by the module after
// each pass (<fingerprint>.<NN>.<pass>.txt), the host fusion plan (.fusion.dot), its cost report
// (.cost.txt) and the buffer assignment (.buffers.txt). EMBER_FLAGS is parsed here too for
// --host_backend=compiled|evaluator.
#ifndef EMBER_COMPILER_DRIVER_DUMP_H_
#define EMBER_COMPILER_DRIVER_DUMP_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "compiler/frontend/options/compile_options.h"

namespace ember::compiler {

// The value of `--name=value` in EMBER_FLAGS (space-separated), if given.
std::optional<std::string> EmberFlag(std::string_view name);

// The dump directory, if dumping was asked for (compile options win over EMBER_FLAGS).
std::optional<std::string> DumpDirectory(const frontend::CompileOptions& options);
// Writes DIR/<stem>.<suffix> (creating DIR); errors name the file.
absl::Status WriteDumpFile(const std::string& dir, const std::string& file_name,
                           absl::Span<const uint8_t> bytes);

}  // namespace ember::compiler

#endif  // EMBER_COMPILER_DRIVER_DUMP_H_
