// PJRT_Client_Compile and executables. The compiler is not built yet: Compile checks its inputs
// (so bad input still gets a precise error) and then says what is missing.
#include <string_view>

#include "absl/strings/str_cat.h"
#include "pjrt_plugin/bindings.h"
#include "pjrt_plugin/entry.h"
#include "pjrt_plugin/handles.h"

namespace ember::pjrt {
namespace {

EMBER_PJRT_ENTRY(PJRT_Client_Compile) {
  EMBER_PJRT_REQUIRE(args->client);
  EMBER_PJRT_REQUIRE(args->program);
  const PJRT_Program& program = *args->program;
  if (program.format == nullptr) return absl::InvalidArgumentError("`program->format` is null");
  if (program.code == nullptr && program.code_size != 0) {
    return absl::InvalidArgumentError("`program->code` is null");
  }
  absl::string_view format(program.format, program.format_size);
  if (format != "mlir" && format != "hlo") {
    return absl::InvalidArgumentError(absl::StrCat("Unknown program format '", format, "'."));
  }
  if (args->compile_options == nullptr && args->compile_options_size != 0) {
    return absl::InvalidArgumentError("`compile_options` is null");
  }
  return absl::UnimplementedError(absl::StrCat(
      "the Ember compiler is not built yet: cannot compile the ", program.code_size,
      "-byte '", format, "' program (device_put and transfers work; jit does not yet)"));
}

}  // namespace

void BindExecutableEntries(PJRT_Api& api) {
  api.PJRT_Client_Compile = &PJRT_Client_Compile_Entry;
}

}  // namespace ember::pjrt
