#include "compiler/driver/compile_program.h"

#include <cstring>
#include <functional>
#include <set>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/driver/dump.h"
#include "compiler/driver/implementation_limits.h"
#include "compiler/export/stablehlo_text.h"
#include "compiler/frontend/bytecode_reader.h"
#include "compiler/frontend/hlo/hlo_import.h"
#include "compiler/frontend/import/import.h"
#include "compiler/frontend/text/mlir_text_parser.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/pass.h"
#include "profiler/trace.h"

namespace ember::compiler {
namespace {

bool IsMlirBytecode(absl::Span<const uint8_t> code) {
  static constexpr uint8_t kMagic[4] = {'M', 'L', 0xEF, 'R'};
  return code.size() >= 4 && std::memcmp(code.data(), kMagic, 4) == 0;
}

// FNV-1a over the program bytes and the options that change results.
std::string Fingerprint(absl::Span<const uint8_t> code, const frontend::CompileOptions& options) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < size; ++i) h = (h ^ p[i]) * 1099511628211ull;
  };
  mix(code.data(), code.size());
  mix(&options.num_replicas, sizeof(options.num_replicas));
  mix(&options.num_partitions, sizeof(options.num_partitions));
  return absl::StrCat("ember-", absl::Hex(h, absl::kZeroPad16));
}

std::optional<std::string> DumpDirectory(const CompilerOptions& options) {
  if (options.dump_to.empty()) return std::nullopt;
  return options.dump_to;
}

bool IsDonor(const ir::AttributeMap& attrs) {
  if (const ir::Attribute* a = attrs.Find("jax.buffer_donor")) {
    if (a->kind == ir::Attribute::Kind::kBool && a->b) return true;
  }
  return attrs.Find("tf.aliasing_output") != nullptr;
}

// The donation candidates of `entry` (see CompiledProgram::donations). Explicit aliases first,
// then buffer donors matched to results of the same type, in parameter order.
std::vector<passes::IoAlias> DonationCandidates(const ir::Computation& entry) {
  const auto& attrs = entry.arg_attributes();
  const std::vector<ir::ValueType> results = entry.result_types();
  std::vector<bool> taken(results.size(), false);
  std::vector<passes::IoAlias> out;
  for (size_t i = 0; i < entry.parameters().size() && i < attrs.size(); ++i) {
    const ir::Attribute* a = attrs[i].Find("tf.aliasing_output");
    if (a == nullptr || a->kind != ir::Attribute::Kind::kInt || a->i < 0 ||
        static_cast<size_t>(a->i) >= results.size() || taken[a->i]) {
      continue;
    }
    taken[a->i] = true;
    out.push_back({static_cast<int>(i), static_cast<int>(a->i)});
  }
  for (size_t i = 0; i < entry.parameters().size() && i < attrs.size(); ++i) {
    if (!IsDonor(attrs[i]) || attrs[i].Find("tf.aliasing_output") != nullptr) continue;
    const ir::ValueType& type = entry.parameter(i)->type();
    for (size_t r = 0; r < results.size(); ++r) {
      if (taken[r] || !type.is_tensor() || !results[r].is_tensor() ||
          !(type.shape() == results[r].shape())) {
        continue;
      }
      taken[r] = true;
      out.push_back({static_cast<int>(i), static_cast<int>(r)});
      break;
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ir::Module>> ReadProgram(std::string_view format,
                                                        absl::Span<const uint8_t> code) {
  if (format == "hlo") return frontend::ImportHloModuleProto(code);
  if (format == "hlo_with_config") return frontend::ImportHloModuleProtoWithConfig(code);
  if (format != "mlir") {
    return absl::InvalidArgumentError(absl::StrCat("Unknown program format '", std::string(format), "'."));
  }
  std::unique_ptr<frontend::Operation> op;
  if (IsMlirBytecode(code)) {
    EMBER_ASSIGN_OR_RETURN(op, frontend::ReadMlirBytecode(code));
  } else {
    std::string_view text(reinterpret_cast<const char*>(code.data()), code.size());
    EMBER_ASSIGN_OR_RETURN(op, frontend::ParseMlirText(text, "<program>"));
  }
  return frontend::ImportModule(*op);
}

namespace {

bool IsBounded(const ir::ValueType& type) {
  return type.is_tensor() && type.shape().bounds() != nullptr;
}

// Bounded dynamic dims (StableHLO's type extensions, XLA's dynamic dimensions) would run padded
// to their bound; no backend does that yet.
absl::Status BoundedError(const std::string& what, const ir::ValueType& type) {
  return absl::UnimplementedError(absl::StrCat(
      what, " (type ", type.ToString(), ") has bounded dynamic dimensions: Ember compiles static shapes; "
      "bounded dimensions (run padded to their bound) are not supported yet"));
}

// Backends need static shapes. Shape-polymorphic programs (`?` dims) are refined by the caller
// (JAX specializes them before it compiles; passes::RefineShapes does it for Ember's tools).
// Checks what the entry runs: its arguments, its instructions, their regions and callees.
absl::Status CheckStaticComputation(const ir::Computation& c, std::set<const ir::Computation*>& seen) {
  if (!seen.insert(&c).second) return absl::OkStatus();
  for (const auto& p : c.parameters()) {
    if (!p->type().is_static()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a parameter of @", c.name(), " has the dynamically shaped type ", p->type().ToString(),
          ": the program must be refined to static shapes before it is compiled"));
    }
  }
  for (const auto& inst : c.instructions()) {
    for (size_t r = 0; r < inst->num_results(); ++r) {
      const ir::ValueType& type = inst->result(r)->type();
      if (IsBounded(type)) return BoundedError(absl::StrCat(inst->Describe(), ": result ", r), type);
      if (!inst->result(r)->type().is_static()) {
        return absl::InvalidArgumentError(absl::StrCat(
            inst->Describe(), ": result type ", inst->result(r)->type().ToString(),
            " is dynamically shaped: the program must be refined to static shapes before it is "
            "compiled"));
      }
    }
    for (const ir::Computation* region : inst->regions()) {
      EMBER_RETURN_IF_ERROR(CheckStaticComputation(*region, seen));
    }
    if (inst->callee() != nullptr) EMBER_RETURN_IF_ERROR(CheckStaticComputation(*inst->callee(), seen));
  }
  return absl::OkStatus();
}

absl::Status CheckStaticShapes(const ir::Computation* entry) {
  if (entry == nullptr) return absl::OkStatus();
  for (size_t i = 0; i < entry->parameters().size(); ++i) {
    const ir::ValueType& type = entry->parameter(i)->type();
    if (IsBounded(type)) {
      return BoundedError(absl::StrCat("argument ", i, " of @", entry->name()), type);
    }
    if (!type.is_static()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument ", i, " of @", entry->name(), " has the dynamically shaped type ",
          type.ToString(), ": the program must be refined to static shapes before it is "
          "compiled (shape-polymorphic programs are specialized by the framework, or by "
          "the refine_shapes pass)"));
    }
  }
  std::set<const ir::Computation*> seen;
  return CheckStaticComputation(*entry, seen);
}

// The per-device program of an SPMD `program` as StableHLO text. The framework parses it at
// every compile (JAX reads the output shardings from it), and jaxlib's converter may crash on a
// program that does not verify: the text is given only once it reads back into a program that
// verifies.
absl::StatusOr<std::string> DeviceProgramText(const CompiledProgram& program,
                                              const frontend::CompileOptions& options) {
  const StablehloModuleHeader header{program.name, options.num_replicas, options.num_partitions,
                                     program.signature.parameter_shardings,
                                     program.signature.result_shardings};
  EMBER_ASSIGN_OR_RETURN(std::string text,
                         ExportStablehloText(*program.module, *program.entry, header));
  absl::StatusOr<std::unique_ptr<ir::Module>> back = ReadProgram(
      "mlir",
      absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  absl::Status verified = back.ok() ? ir::Verify(**back) : back.status();
  if (!verified.ok()) {
    return absl::InternalError(
        absl::StrCat("the exported text does not read back: ", verified.message()));
  }
  return text;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CompiledProgram>> CompileModule(
    std::unique_ptr<ir::Module> module, ir::Computation* entry,
    const frontend::CompileOptions& options, absl::Span<const uint8_t> source,
    const backend::Backend& backend, const CompilerOptions& compiler_options) {
  EMBER_RETURN_IF_ERROR(ir::Verify(*module));
  EMBER_RETURN_IF_ERROR(CheckImplementationLimits(*module));
  EMBER_RETURN_IF_ERROR(CheckStaticShapes(entry != nullptr ? entry : module->entry()));
  auto program = std::make_unique<CompiledProgram>();
  program->module = std::move(module);
  program->entry = entry != nullptr ? entry : program->module->entry();
  if (program->entry == nullptr) {
    return absl::InvalidArgumentError(
        "the program has no entry function: expected @main or exactly one public function");
  }
  program->options = options;
  program->name = program->module->name();
  program->fingerprint = Fingerprint(source, options);
  const std::optional<std::string> dump_dir = DumpDirectory(compiler_options);
  auto dump = [&](const std::string& suffix, const std::string& text) {
    return WriteDumpFile(*dump_dir, absl::StrCat(program->fingerprint, ".", suffix),
                         absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()),
                                                   text.size()));
  };
  // Required lowerings first, for every backend: buffers of quantized parameters and results
  // hold their storage integers, so the signature below is the lowered one.
  EMBER_RETURN_IF_ERROR(passes::CreateRequiredLoweringPipeline().Run(*program->module).status());
  EMBER_ASSIGN_OR_RETURN(program->signature,
                         ReadProgramSignature(*program->module, *program->entry));
  // An SPMD program becomes the per-device program every device runs.
  bool has_manual = false;
  for (const auto& inst : program->entry->instructions()) {
    const ir::Attribute* target = inst->attribute("call_target_name");
    has_manual |= inst->opcode() == ir::Opcode::kCustomCall && target != nullptr &&
                  target->kind == ir::Attribute::Kind::kString &&
                  target->s == "sdy.manual_computation";
  }
  program->spmd = (options.num_partitions > 1 && options.use_spmd_partitioning) || has_manual;
  if (program->spmd) {
    if (options.num_replicas != 1) {
      return absl::UnimplementedError(absl::StrCat(
          "SPMD programs over several replicas (", options.num_replicas, " replicas x ",
          options.num_partitions, " partitions) are not supported yet"));
    }
    passes::PassPipeline spmd;
    spmd.Add(passes::CreateSpmdPartitionPass(options.num_partitions));
    spmd.Add(passes::CreateCombineAllReducesPass());
    if (dump_dir.has_value()) {
      spmd.set_after_pass([&](int, const std::string& name, bool, const ir::Module& module) {
        return dump(absl::StrCat("00.", name, ".txt"), module.ToString());
      });
    }
    EMBER_RETURN_IF_ERROR(spmd.Run(*program->module).status());
    UpdateResultShardings(*program->module, *program->entry, program->signature);
    if (const ir::Attribute* report =
            program->module->attributes().Find(passes::kSpmdReportAttribute);
        report != nullptr && report->kind == ir::Attribute::Kind::kString) {
      program->spmd_report = absl::StrCat(report->s, "\n");
    }
    absl::StatusOr<std::string> text = DeviceProgramText(*program, options);
    if (text.ok()) program->device_program_text = *std::move(text);
    if (dump_dir.has_value()) {
      EMBER_RETURN_IF_ERROR(dump("device.txt", text.ok() ? program->device_program_text
                                                         : absl::StrCat("// not written: ",
                                                                        text.status().message(),
                                                                        "\n")));
    }
  }
  for (const auto& p : program->entry->parameters()) program->parameter_types.push_back(p->type());
  program->result_types = program->entry->result_types();
  const auto& arg_attrs = program->entry->arg_attributes();
  for (size_t i = 0; i < program->parameter_types.size(); ++i) {
    program->donatable.push_back(i < arg_attrs.size() && IsDonor(arg_attrs[i]));
  }
  program->donations = DonationCandidates(*program->entry);

  // The signature and donation plan above are the program as JAX sent it (in its per-device
  // form); the passes keep the entry's signature and rewrite its body. A backend that runs the
  // reference evaluator takes the program unoptimized (after the required lowerings above).
  if (backend.wants_optimized_module()) {
    passes::PassPipeline pipeline = passes::CreateDefaultPipeline();
    int64_t pass_start = profiler::NowNs();
    pipeline.set_after_pass([&](int index, const std::string& name, bool changed,
                                const ir::Module& module) -> absl::Status {
      // Each pass on the trace (jax.profiler.trace), then its dump.
      if (profiler::Active()) {
        profiler::Record({profiler::CurrentPlane(), "Compile", absl::StrCat("pass ", name),
                          pass_start, profiler::NowNs(), {{"changed", changed ? "yes" : "no"}}});
      }
      if (dump_dir.has_value()) {
        EMBER_RETURN_IF_ERROR(
            dump(absl::StrCat(absl::Dec(index + 1, absl::kZeroPad2), ".", name, ".txt"),
                 module.ToString()));
      }
      pass_start = profiler::NowNs();
      return absl::OkStatus();
    });
    EMBER_RETURN_IF_ERROR(pipeline.Run(*program->module).status());
  }
  {
    profiler::ScopedEvent event("Compile", [&] { return absl::StrCat(std::string(backend.name()), " backend"); });
    EMBER_ASSIGN_OR_RETURN(program->executable, backend.Compile(*program->entry, program->donations, compiler_options));
  }
  if (dump_dir.has_value()) {
    const backend::ExecutableReports& reports = program->executable->reports();
    if (!reports.fusion_plan_dot.empty()) EMBER_RETURN_IF_ERROR(dump("fusion.dot", reports.fusion_plan_dot));
    EMBER_RETURN_IF_ERROR(dump("cost.txt", absl::StrCat(program->spmd_report, reports.cost_report, reports.cost.ToString())));
    if (!reports.buffer_report.empty()) EMBER_RETURN_IF_ERROR(dump("buffers.txt", reports.buffer_report));
  }
  return program;
}

absl::StatusOr<std::unique_ptr<CompiledProgram>> CompileProgram(
    std::string_view format, absl::Span<const uint8_t> code, const frontend::CompileOptions& options,
    const backend::Backend& backend, const CompilerOptions& compiler_options) {
  profiler::ScopedEvent event("Compile", [&] {
    return absl::StrCat("compile ", Fingerprint(code, options));
  });
  const std::optional<std::string> dump_dir = DumpDirectory(compiler_options);
  if (dump_dir.has_value()) {
    // Dump the input first, so a program that fails to compile can be replayed.
    const char* suffix = format != "mlir" ? ".hlo.pb" : IsMlirBytecode(code) ? ".mlirbc" : ".mlir";
    EMBER_RETURN_IF_ERROR(WriteDumpFile(
        *dump_dir, absl::StrCat(Fingerprint(code, options), ".input", suffix), code));
  }
  std::unique_ptr<ir::Module> module;
  {
    profiler::ScopedEvent read("Compile", [] { return std::string("read and import"); });
    EMBER_ASSIGN_OR_RETURN(module, ReadProgram(format, code));
  }
  event.AddStat("module", module->name());
  if (dump_dir.has_value()) {
    const std::string text = module->ToString();
    EMBER_RETURN_IF_ERROR(WriteDumpFile(
        *dump_dir, absl::StrCat(Fingerprint(code, options), ".imported.txt"),
        absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size())));
  }
  return CompileModule(std::move(module), nullptr, options, code, backend, compiler_options);
}

absl::StatusOr<const backend::Backend*> SelectBackend(const backend::BackendRegistry& registry,
                                                      std::string_view platform,
                                                      const CompilerOptions& options) {
  std::string name(platform);
  if (platform == "host") {
    if (options.host_backend == "evaluator") {
      name = "evaluator";
    } else if (options.host_backend != "compiled") {
      return absl::InvalidArgumentError(absl::StrCat("host_backend '", options.host_backend,
                                                     "' is not one of compiled, evaluator"));
    }
  }
  const backend::Backend* backend = registry.Find(name);
  if (backend == nullptr || backend->platform() != platform) {
    return absl::UnimplementedError(absl::StrCat(
        "executing programs on ", std::string(platform),
        " devices is not supported yet (Ember runs programs on host devices; use "
        "EMBER_PLATFORM=host)"));
  }
  return backend;
}

}  // namespace ember::compiler
