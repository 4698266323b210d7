#include "pjrt_plugin/serialized_executable.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace ember::pjrt {
namespace {

constexpr std::string_view kMagic = "EMBEREXE";
enum Tag : uint8_t { kFormat = 1, kCode = 2, kCompileOptions = 3, kFingerprint = 4 };

template <typename T>
void Put(std::string& out, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void PutRecord(std::string& out, Tag tag, std::string_view bytes) {
  Put<uint8_t>(out, tag);
  Put<uint64_t>(out, bytes.size());
  out.append(bytes);
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  template <typename T>
  absl::StatusOr<T> Get(const char* what) {
    if (bytes_.size() - pos_ < sizeof(T)) return Truncated(what);
    T value = 0;
    for (size_t i = 0; i < sizeof(T); ++i) {
      value |= static_cast<T>(static_cast<uint8_t>(bytes_[pos_ + i])) << (8 * i);
    }
    pos_ += sizeof(T);
    return value;
  }
  absl::StatusOr<std::string_view> Bytes(uint64_t n, const char* what) {
    if (bytes_.size() - pos_ < n) return Truncated(what);
    std::string_view out = bytes_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  size_t pos() const { return pos_; }

 private:
  absl::Status Truncated(const char* what) const {
    return absl::InvalidArgumentError(absl::StrCat("serialized executable is truncated: ", what,
                                                    " at byte ", pos_, " of ", bytes_.size()));
  }
  std::string_view bytes_;
  size_t pos_ = 0;
};

}  // namespace

std::string SerializeExecutable(const ProgramSource& source) {
  std::string out(kMagic);
  Put<uint32_t>(out, kSerializedExecutableVersion);
  Put<uint32_t>(out, 4);
  PutRecord(out, kFormat, source.format);
  PutRecord(out, kCode, source.code);
  PutRecord(out, kCompileOptions, source.compile_options);
  PutRecord(out, kFingerprint, source.fingerprint);
  return out;
}

absl::StatusOr<ProgramSource> DeserializeExecutable(std::string_view bytes) {
  if (bytes.size() < kMagic.size() || bytes.substr(0, kMagic.size()) != kMagic) {
    return absl::InvalidArgumentError(
        "not a serialized Ember executable (PJRT_Executable_Serialize of Ember writes bytes "
        "starting with \"EMBEREXE\")");
  }
  Reader reader(bytes.substr(kMagic.size()));
  absl::StatusOr<uint32_t> version = reader.Get<uint32_t>("version");
  if (!version.ok()) return version.status();
  if (*version == 0 || *version > kSerializedExecutableVersion) {
    return absl::InvalidArgumentError(absl::StrCat(
        "serialized executable has format version ", *version, "; this Ember reads versions 1 to ",
        kSerializedExecutableVersion, " (serialize it again with this plugin)"));
  }
  absl::StatusOr<uint32_t> count = reader.Get<uint32_t>("record count");
  if (!count.ok()) return count.status();
  ProgramSource source;
  bool have_format = false, have_code = false;
  for (uint32_t r = 0; r < *count; ++r) {
    absl::StatusOr<uint8_t> tag = reader.Get<uint8_t>("record tag");
    if (!tag.ok()) return tag.status();
    absl::StatusOr<uint64_t> length = reader.Get<uint64_t>("record length");
    if (!length.ok()) return length.status();
    absl::StatusOr<std::string_view> data = reader.Bytes(*length, "record data");
    if (!data.ok()) return data.status();
    switch (*tag) {
      case kFormat: source.format = std::string(*data); have_format = true; break;
      case kCode: source.code = std::string(*data); have_code = true; break;
      case kCompileOptions: source.compile_options = std::string(*data); break;
      case kFingerprint: source.fingerprint = std::string(*data); break;
      default: break;  // a record of a later version
    }
  }
  if (!have_format || !have_code) {
    return absl::InvalidArgumentError("serialized executable lacks its program (format or code)");
  }
  return source;
}

}  // namespace ember::pjrt
