#include "tests/conformance/conformance_program.h"

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/frontend/import/import.h"
#include "compiler/frontend/text/mlir_text_parser.h"
#include "compiler/ir/verifier.h"
#include "tests/backend_test_util.h"

namespace ember::conformance {
namespace {

absl::Status Stage(std::string_view stage, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(std::string(stage), ": ",
                                                  std::string(status.message())));
}

}  // namespace

absl::StatusOr<std::unique_ptr<compiler::CompiledProgram>> ProgramFromModule(
    std::unique_ptr<ir::Module> module, std::string_view entry_name, std::string_view source,
    const frontend::CompileOptions& options) {
  ir::Computation* entry = nullptr;
  if (!entry_name.empty()) {
    entry = module->FindFunction(entry_name);
  } else if (module->entry() == nullptr) {
    // Interpret cases are no-argument functions without @main.
    for (ir::Computation* f : module->functions()) {
      if (f->parameters().empty()) {
        entry = f;
        break;
      }
    }
  } else {
    entry = module->entry();
  }
  if (entry == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("entry: no function '@", std::string(entry_name), "' to run"));
  }
  absl::StatusOr<std::unique_ptr<compiler::CompiledProgram>> program = compiler::CompileModule(
      std::move(module), entry, options,
      absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(source.data()), source.size()),
      test_util::HostTestBackend());
  if (!program.ok()) return Stage("verify", program.status());
  return program;
}

absl::StatusOr<std::unique_ptr<compiler::CompiledProgram>> ProgramFromText(
    std::string_view text, std::string_view filename, std::string_view entry_name,
    const frontend::CompileOptions& options) {
  absl::StatusOr<std::unique_ptr<frontend::Operation>> op = frontend::ParseMlirText(text, filename);
  if (!op.ok()) return Stage("parse", op.status());
  absl::StatusOr<std::unique_ptr<ir::Module>> module = frontend::ImportModule(**op);
  if (!module.ok()) return Stage("import", module.status());
  return ProgramFromModule(*std::move(module), entry_name, text, options);
}

}  // namespace ember::conformance
