#include "pjrt_plugin/create_options.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
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

absl::StatusOr<std::string> AsString(const std::string& name, const OptionValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  return absl::InvalidArgumentError(absl::StrCat("option '", name, "' must be a string"));
}

absl::Status ApplyOption(const std::string& name, const OptionValue& value,
                         runtime::ClientOptions& options) {
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
  } else if (name == "cuda_library_path") {
    EMBER_ASSIGN_OR_RETURN(options.cuda_library_path, AsString(name, value));
  } else if (name == "node_id") {
    EMBER_ASSIGN_OR_RETURN(int64_t node, AsInt(name, value));
    if (node < 0) return absl::InvalidArgumentError("option 'node_id' must be >= 0");
    options.process_index = static_cast<int>(node);
  } else if (name == "num_nodes") {
    EMBER_ASSIGN_OR_RETURN(int64_t nodes, AsInt(name, value));
    if (nodes != 1) {
      return absl::UnimplementedError(absl::StrCat(
          "num_nodes = ", nodes, ": Ember does not run across several processes yet"));
    }
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown create option '", name,
        "' (Ember accepts platform, host_device_count, memory_limit_bytes, cuda_library_path, "
        "node_id, num_nodes)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<runtime::ClientOptions> ParseClientOptions(
    const std::map<std::string, OptionValue>& options) {
  runtime::ClientOptions result;
  const std::pair<const char*, const char*> env_options[] = {
      {"EMBER_PLATFORM", "platform"},
      {"EMBER_HOST_DEVICE_COUNT", "host_device_count"},
      {"EMBER_MEMORY_LIMIT_BYTES", "memory_limit_bytes"},
      {"EMBER_CUDA_LIBRARY_PATH", "cuda_library_path"}};
  for (const auto& [env, name] : env_options) {
    const char* text = std::getenv(env);
    if (text == nullptr || options.count(name)) continue;
    absl::Status status = ApplyOption(name, std::string(text), result);
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("environment variable ", env, ": ", status.message()));
    }
  }
  for (const auto& [name, value] : options) {
    EMBER_RETURN_IF_ERROR(ApplyOption(name, value, result));
  }
  if (result.process_index != 0) {
    return absl::UnimplementedError(absl::StrCat(
        "node_id = ", result.process_index, ": Ember does not run across several processes yet"));
  }
  return result;
}

}  // namespace ember::pjrt
