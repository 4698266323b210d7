#include "tests/conformance/conformance_program.h"

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/frontend/import/import.h"
#include "compiler/frontend/text/mlir_text_parser.h"
#include "compiler/ir/verifier.h"

namespace ember::conformance {
namespace {

std::string Fingerprint(std::string_view source, const frontend::CompileOptions& options) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < size; ++i) h = (h ^ p[i]) * 1099511628211ull;
  };
  mix(source.data(), source.size());
  mix(&options.num_replicas, sizeof(options.num_replicas));
  mix(&options.num_partitions, sizeof(options.num_partitions));
  return absl::StrCat("ember-", absl::Hex(h, absl::kZeroPad16));
}

bool IsDonor(const ir::AttributeMap& attrs) {
  if (const ir::Attribute* a = attrs.Find("jax.buffer_donor")) {
    if (a->kind == ir::Attribute::Kind::kBool && a->b) return true;
  }
  return attrs.Find("tf.aliasing_output") != nullptr;
}

absl::Status Stage(std::string_view stage, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(std::string(stage), ": ",
                                                  std::string(status.message())));
}

}  // namespace

absl::StatusOr<std::unique_ptr<compiler::CompiledProgram>> ProgramFromModule(
    std::unique_ptr<ir::Module> module, std::string_view entry_name, std::string_view source,
    const frontend::CompileOptions& options) {
  if (absl::Status s = ir::Verify(*module); !s.ok()) return Stage("verify", s);
  auto program = std::make_unique<compiler::CompiledProgram>();
  program->module = std::move(module);
  if (!entry_name.empty()) {
    program->entry = program->module->FindFunction(entry_name);
  } else {
    program->entry = program->module->entry();
    if (program->entry == nullptr) {
      for (ir::Computation* f : program->module->functions()) {
        if (f->parameters().empty()) {
          program->entry = f;
          break;
        }
      }
    }
  }
  if (program->entry == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("entry: no function '@", std::string(entry_name), "' to run"));
  }
  program->options = options;
  program->name = program->module->name();
  for (const auto& p : program->entry->parameters()) program->parameter_types.push_back(p->type());
  program->result_types = program->entry->result_types();
  const auto& arg_attrs = program->entry->arg_attributes();
  for (size_t i = 0; i < program->parameter_types.size(); ++i) {
    program->donatable.push_back(i < arg_attrs.size() && IsDonor(arg_attrs[i]));
  }
  program->fingerprint = Fingerprint(source, options);
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
