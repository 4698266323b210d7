// The persistent kernel cache's files (kernel_disk_cache.h). An entry is a header (magic, payload
// size, payload checksum) and the object code; anything else under the name reads as a miss.
#include "compiler/codegen/kernel_disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"

namespace ember::codegen {
namespace {

constexpr char kMagic[8] = {'E', 'M', 'B', 'K', 'C', 'A', 'C', '1'};
constexpr size_t kHeaderSize = sizeof(kMagic) + 2 * sizeof(uint64_t);

std::atomic<int64_t> hits{0}, misses{0}, corrupt{0}, writes{0}, compiles{0};

// FNV-1a: a checksum against truncated or damaged files, not against tampering.
uint64_t Checksum(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

bool ValidKey(std::string_view key) {
  if (key.empty() || key.size() > 200) return false;
  for (char c : key) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

std::filesystem::path EntryPath(std::string_view dir, std::string_view key) {
  return std::filesystem::path(std::string(dir)) / absl::StrCat(std::string(key), ".o.cache");
}

}  // namespace

KernelCacheCounters GetKernelCacheCounters() {
  return KernelCacheCounters{hits.load(), misses.load(), corrupt.load(), writes.load(),
                             compiles.load()};
}

void CountKernelCompile() { ++compiles; }

std::optional<std::string> ReadCachedKernels(std::string_view dir, std::string_view key) {
  if (!ValidKey(key)) {
    ++misses;
    return std::nullopt;
  }
  // POSIX calls rather than streams: a stream reading a directory throws.
  const int fd = open(EntryPath(dir, key).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    ++misses;
    return std::nullopt;
  }
  struct stat info;
  std::string file;
  bool read_ok = fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
  if (read_ok) {
    file.resize(static_cast<size_t>(info.st_size));
    size_t done = 0;
    while (read_ok && done < file.size()) {
      const ssize_t n = read(fd, file.data() + done, file.size() - done);
      if (n < 0 && errno == EINTR) continue;
      read_ok = n > 0;
      if (n > 0) done += static_cast<size_t>(n);
    }
  }
  close(fd);
  uint64_t size = 0, checksum = 0;
  if (read_ok && file.size() >= kHeaderSize) {
    std::memcpy(&size, file.data() + sizeof(kMagic), sizeof(size));
    std::memcpy(&checksum, file.data() + sizeof(kMagic) + sizeof(size), sizeof(checksum));
  }
  if (!read_ok || file.size() < kHeaderSize ||
      std::memcmp(file.data(), kMagic, sizeof(kMagic)) != 0 ||
      size != file.size() - kHeaderSize ||
      checksum != Checksum(std::string_view(file).substr(kHeaderSize))) {
    ++corrupt;
    ++misses;
    return std::nullopt;
  }
  ++hits;
  return file.substr(kHeaderSize);
}

absl::Status WriteCachedKernels(std::string_view dir, std::string_view key,
                                std::string_view object) {
  if (!ValidKey(key)) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel cache: bad key '", std::string(key), "'"));
  }
  std::error_code error;
  std::filesystem::create_directories(std::string(dir), error);
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("kernel cache: cannot create ", std::string(dir), ": ", error.message()));
  }
  // A name no other writer uses; the rename makes the entry appear whole or not at all.
  static std::atomic<uint64_t> serial{0};
  const std::filesystem::path final_path = EntryPath(dir, key);
  const std::filesystem::path temp_path =
      std::filesystem::path(std::string(dir)) /
      absl::StrCat(std::string(key), ".tmp.", getpid(), ".", serial++);
  char header[kHeaderSize];
  const uint64_t size = object.size();
  const uint64_t checksum = Checksum(object);
  std::memcpy(header, kMagic, sizeof(kMagic));
  std::memcpy(header + sizeof(kMagic), &size, sizeof(size));
  std::memcpy(header + sizeof(kMagic) + sizeof(size), &checksum, sizeof(checksum));
  {
    const int fd = open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    bool write_ok = fd >= 0;
    for (std::string_view part : {std::string_view(header, sizeof(header)), object}) {
      while (write_ok && !part.empty()) {
        const ssize_t n = write(fd, part.data(), part.size());
        if (n < 0 && errno == EINTR) continue;
        write_ok = n > 0;
        if (n > 0) part.remove_prefix(static_cast<size_t>(n));
      }
    }
    if (fd >= 0 && close(fd) != 0) write_ok = false;
    if (!write_ok) {
      std::filesystem::remove(temp_path, error);
      return absl::UnavailableError(
          absl::StrCat("kernel cache: cannot write ", temp_path.string()));
    }
  }
  std::filesystem::rename(temp_path, final_path, error);
  if (error) {
    std::filesystem::remove(temp_path, error);
    return absl::UnavailableError(
        absl::StrCat("kernel cache: cannot rename to ", final_path.string()));
  }
  ++writes;
  return absl::OkStatus();
}

}  // namespace ember::codegen
