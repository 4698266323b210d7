// Bounds-checked primitive reads over an MLIR bytecode buffer: prefix varints, zigzag varints,
// raw bytes, NUL-terminated strings, section headers with absolute-offset alignment. Every error
// names the section being read and the absolute byte offset in the file.
#ifndef EMBER_COMPILER_FRONTEND_BYTECODE_STREAM_H_
#define EMBER_COMPILER_FRONTEND_BYTECODE_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace ember::frontend {

// Section ids of the container (mlir/include/mlir/Bytecode/Encoding.h).
enum class SectionId : uint8_t {
  kString = 0,
  kDialect = 1,
  kAttrType = 2,
  kAttrTypeOffset = 3,
  kIR = 4,
  kResource = 5,
  kResourceOffset = 6,
  kDialectVersions = 7,
  kProperties = 8,
};
inline constexpr int kNumSections = 9;
const char* SectionName(int id);

class ByteReader {
 public:
  // Reads file[begin, end); `file` is the whole buffer so offsets and alignment are absolute.
  ByteReader(absl::Span<const uint8_t> file, size_t begin, size_t end, absl::string_view what)
      : file_(file), pos_(begin), end_(end), what_(what) {}

  size_t pos() const { return pos_; }
  size_t end() const { return end_; }
  size_t remaining() const { return end_ - pos_; }
  bool empty() const { return pos_ >= end_; }
  absl::string_view what() const { return what_; }
  absl::Span<const uint8_t> file() const { return file_; }

  // An error located at the current position.
  absl::Status Error(absl::string_view message) const;
  absl::Status ErrorAt(size_t offset, absl::string_view message) const;

  absl::StatusOr<uint8_t> ReadByte();
  absl::StatusOr<uint64_t> ReadVarInt();
  absl::StatusOr<int64_t> ReadSignedVarInt();
  // A varint used as a count of items each at least `min_item_bytes` long in this reader:
  // rejects counts the remaining bytes could not hold, so no size field allocates unboundedly.
  absl::StatusOr<uint64_t> ReadCount(size_t min_item_bytes = 1);
  absl::StatusOr<absl::Span<const uint8_t>> ReadBytes(uint64_t n);
  // varint length, then that many bytes.
  absl::StatusOr<absl::Span<const uint8_t>> ReadBlob();
  absl::StatusOr<absl::string_view> ReadNulTerminated();
  // Skips 0xCB padding until the absolute offset is a multiple of `alignment` (a power of two).
  absl::Status AlignTo(uint64_t alignment);
  // Reads a section header (id byte, length, optional alignment + padding) and returns a reader
  // over its data; this reader moves past the section.
  struct Section {
    int id;
    size_t begin;
    size_t end;
  };
  absl::StatusOr<Section> ReadSection();

 private:
  absl::Span<const uint8_t> file_;
  size_t pos_;
  size_t end_;
  absl::string_view what_;  // names a static string: the section being read
};

}  // namespace ember::frontend

#endif  // EMBER_COMPILER_FRONTEND_BYTECODE_STREAM_H_
