#include "compiler/driver/dump.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ember::compiler {

std::optional<std::string> EmberFlag(std::string_view name) {
  const char* flags = std::getenv("EMBER_FLAGS");
  if (flags == nullptr) return std::nullopt;
  const std::string prefix = absl::StrCat("--", std::string(name), "=");
  std::optional<std::string> value;
  for (absl::string_view flag : absl::StrSplit(flags, ' ', absl::SkipEmpty())) {
    if (absl::ConsumePrefix(&flag, prefix)) value = std::string(flag);  // the last one wins
  }
  return value;
}

std::optional<std::string> DumpDirectory(const frontend::CompileOptions& options) {
  auto it = options.env_option_overrides.find("xla_dump_to");
  if (it != options.env_option_overrides.end()) {
    if (const auto* dir = std::get_if<std::string>(&it->second); dir && !dir->empty()) return *dir;
  }
  std::optional<std::string> dir = EmberFlag("dump_to");
  if (dir.has_value() && dir->empty()) return std::nullopt;
  return dir;
}

absl::Status WriteDumpFile(const std::string& dir, const std::string& file_name,
                           absl::Span<const uint8_t> bytes) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return absl::InternalError(absl::StrCat("cannot create dump directory ", dir, ": ", error.message()));
  }
  const std::string path = (std::filesystem::path(dir) / file_name).string();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) return absl::InternalError(absl::StrCat("cannot write dump file ", path));
  return absl::OkStatus();
}

}  // namespace ember::compiler
