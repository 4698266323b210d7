#include "tests/collectives/file_key_value_store.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace ember::collectives {

std::string FileKeyValueStore::PathOf(std::string_view key) const {
  return absl::StrCat(directory_, "/",
                      absl::BytesToHexString(absl::string_view(key.data(), key.size())));
}

absl::Status FileKeyValueStore::Set(std::string_view key, std::string_view value) {
  const std::string path = PathOf(key);
  // Unique per process and call, so concurrent writers never share a temporary file.
  static std::atomic<int> counter{0};
  const std::string temp = absl::StrCat(path, ".tmp.", getpid(), ".", ++counter);
  {
    std::ofstream out(temp, std::ios::binary);
    out.write(value.data(), static_cast<std::streamsize>(value.size()));
    if (!out) return absl::InternalError(absl::StrCat("file store: cannot write ", temp));
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    return absl::InternalError(
        absl::StrCat("file store: cannot rename ", temp, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> FileKeyValueStore::Get(std::string_view key, absl::Duration timeout) {
  const std::string path = PathOf(key);
  const absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream value;
      value << in.rdbuf();
      return value.str();
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat("file store: no value for key '",
                                                      std::string(key), "' after ",
                                                      absl::FormatDuration(timeout)));
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
}

}  // namespace ember::collectives
