#include "pjrt_plugin/options.h"

#include <cstdlib>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"

namespace ember::pjrt {
namespace {

absl::StatusOr<int64_t> AsInt(const std::string& name, const OptionValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return *i;
  if (const auto* s = std::get_if<std::string>(&value)) {
    int64_t parsed;
    if (absl::SimpleAtoi(*s, &parsed)) return parsed;
    return absl::InvalidArgumentError(
        absl::StrCat("option '", name, "' must be an integer, got \"", *s, "\""));
  }
  return absl::InvalidArgumentError(absl::StrCat("option '", name, "' must be an integer"));
}

absl::StatusOr<double> AsNumber(const std::string& name, const OptionValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return static_cast<double>(*i);
  if (const auto* f = std::get_if<float>(&value)) return static_cast<double>(*f);
  if (const auto* s = std::get_if<std::string>(&value)) {
    double parsed;
    if (absl::SimpleAtod(*s, &parsed)) return parsed;
    return absl::InvalidArgumentError(
        absl::StrCat("option '", name, "' must be a number, got \"", *s, "\""));
  }
  return absl::InvalidArgumentError(absl::StrCat("option '", name, "' must be a number"));
}

absl::StatusOr<std::string> AsString(const std::string& name, const OptionValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  return absl::InvalidArgumentError(absl::StrCat("option '", name, "' must be a string"));
}

absl::Status ApplyOption(const std::string& name, const OptionValue& value,
                         DeviceOptions& options) {
  if (name == "platform") {
    EMBER_ASSIGN_OR_RETURN(options.platform, AsString(name, value));
    if (options.platform != "host" && options.platform != "cuda" && options.platform != "auto") {
      return absl::InvalidArgumentError(absl::StrCat(
          "option 'platform' must be \"host\", \"cuda\" or \"auto\", got \"", options.platform, "\""));
    }
  } else if (name == "host_device_count") {
    EMBER_ASSIGN_OR_RETURN(int64_t count, AsInt(name, value));
    if (count < 1 || count > 1024) {
      return absl::InvalidArgumentError(
          absl::StrCat("option 'host_device_count' must be between 1 and 1024, got ", count));
    }
    options.host_device_count = static_cast<int>(count);
  } else if (name == "memory_limit_bytes") {
    EMBER_ASSIGN_OR_RETURN(int64_t limit, AsInt(name, value));
    if (limit <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("option 'memory_limit_bytes' must be positive, got ", limit));
    }
    options.memory_limit_bytes = limit;
  } else if (name == "collective_timeout_seconds") {
    EMBER_ASSIGN_OR_RETURN(double seconds, AsNumber(name, value));
    if (!(seconds > 0) || seconds > 1e9) {
      return absl::InvalidArgumentError(absl::StrCat(
          "option 'collective_timeout_seconds' must be a positive number of seconds, got ", seconds));
    }
    options.collective_timeout = absl::Seconds(seconds);
  } else if (name == "cuda_library_path") {
    EMBER_ASSIGN_OR_RETURN(options.cuda_library_path, AsString(name, value));
  } else if (name == "node_id") {
    EMBER_ASSIGN_OR_RETURN(int64_t node, AsInt(name, value));
    if (node < 0) return absl::InvalidArgumentError("option 'node_id' must be >= 0");
    options.process_index = static_cast<int>(node);
  } else if (name == "num_nodes") {
    EMBER_ASSIGN_OR_RETURN(int64_t nodes, AsInt(name, value));
    if (nodes < 1 || nodes > 65536) {
      return absl::InvalidArgumentError(
          absl::StrCat("option 'num_nodes' must be between 1 and 65536, got ", nodes));
    }
    options.process_count = static_cast<int>(nodes);
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown create option '", name,
        "' (Ember accepts platform, host_device_count, memory_limit_bytes, "
        "collective_timeout_seconds, cuda_library_path, node_id, num_nodes)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Options> ReadOptions(const std::map<std::string, OptionValue>& create_options) {
  Options result;
  const std::pair<const char*, const char*> env_options[] = {
      {"EMBER_PLATFORM", "platform"},
      {"EMBER_HOST_DEVICE_COUNT", "host_device_count"},
      {"EMBER_MEMORY_LIMIT_BYTES", "memory_limit_bytes"},
      {"EMBER_COLLECTIVE_TIMEOUT_SECONDS", "collective_timeout_seconds"},
      {"EMBER_CUDA_LIBRARY_PATH", "cuda_library_path"}};
  for (const auto& [env, name] : env_options) {
    const char* text = std::getenv(env);
    if (text == nullptr || create_options.count(name)) continue;
    absl::Status status = ApplyOption(name, std::string(text), result.devices);
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("environment variable ", env, ": ", status.message()));
    }
  }
  for (const auto& [name, value] : create_options) {
    EMBER_RETURN_IF_ERROR(ApplyOption(name, value, result.devices));
  }
  if (result.devices.process_index >= result.devices.process_count) {
    return absl::InvalidArgumentError(absl::StrCat("option 'node_id' = ", result.devices.process_index,
                                                   " must be less than num_nodes = ",
                                                   result.devices.process_count));
  }
  EMBER_ASSIGN_OR_RETURN(result.compiler, ReadCompilerOptions(frontend::CompileOptions()));
  return result;
}

absl::StatusOr<CompilerOptions> ReadCompilerOptions(
    const frontend::CompileOptions& compile_options) {
  CompilerOptions result;
  if (const char* dir = std::getenv("EMBER_KERNEL_CACHE_DIR")) result.kernel_cache_dir = dir;
  if (const char* flags = std::getenv("EMBER_FLAGS")) {
    // The last occurrence of a flag wins.
    for (absl::string_view flag : absl::StrSplit(flags, ' ', absl::SkipEmpty())) {
      if (absl::ConsumePrefix(&flag, "--dump_to=")) {
        result.dump_to = std::string(flag);
      } else if (absl::ConsumePrefix(&flag, "--host_backend=")) {
        if (flag != "compiled" && flag != "evaluator") {
          return absl::InvalidArgumentError(absl::StrCat(
              "EMBER_FLAGS: --host_backend=", std::string(flag), " is not one of compiled, evaluator"));
        }
        result.host_backend = std::string(flag);
      } else if (absl::ConsumePrefix(&flag, "--kernel_cache_dir=")) {
        result.kernel_cache_dir = std::string(flag);
      } else if (absl::ConsumePrefix(&flag, "--tiered_compile=")) {
        if (flag != "on" && flag != "off") {
          return absl::InvalidArgumentError(absl::StrCat(
              "EMBER_FLAGS: --tiered_compile=", std::string(flag), " is not one of on, off"));
        }
        result.tiered_compile = flag == "on";
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("EMBER_FLAGS: unknown flag '", std::string(flag),
                         "' (Ember accepts --dump_to=DIR, --host_backend=compiled|evaluator, "
                         "--kernel_cache_dir=DIR and --tiered_compile=on|off)"));
      }
    }
  }
  // Per-compile overrides name XLA's DebugOptions fields, all "xla_*"; anything else is an
  // error, as XLA makes it. Ember reads xla_dump_to and accepts the others; a string given to one
  // of XLA's bool options Ember knows must spell a bool.
  static constexpr const char* kBoolOptions[] = {
      "xla_embed_ir_in_executable", "xla_dump_hlo_as_text", "xla_dump_hlo_as_proto",
      "xla_dump_hlo_as_dot",        "xla_dump_hlo_as_html", "xla_dump_hlo_snapshots",
      "xla_dump_include_timestamp", "xla_enable_dumping",   "xla_cpu_enable_fast_math",
      "xla_llvm_disable_expensive_passes", "xla_detailed_logging"};
  for (const auto& [name, value] : compile_options.env_option_overrides) {
    if (!absl::StartsWith(name, "xla_")) {
      return absl::InvalidArgumentError(absl::StrCat("No such compile option: '", name, "'"));
    }
    const auto* text = std::get_if<std::string>(&value);
    bool parsed = false;
    if (text != nullptr && absl::c_linear_search(kBoolOptions, name) &&
        !absl::SimpleAtob(*text, &parsed)) {
      return absl::InvalidArgumentError(absl::StrCat("While setting option ", name, ", '", *text,
                                                     "' is not a valid bool value."));
    }
  }
  auto it = compile_options.env_option_overrides.find("xla_dump_to");
  if (it != compile_options.env_option_overrides.end()) {
    if (const auto* dir = std::get_if<std::string>(&it->second); dir && !dir->empty()) {
      result.dump_to = *dir;
    }
  }
  return result;
}

}  // namespace ember::pjrt
