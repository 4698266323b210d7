#include "compiler/driver/dump.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace ember::compiler {

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
