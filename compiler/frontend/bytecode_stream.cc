// Bounds-checked primitive reads for MLIR bytecode (bytecode_stream.h).
#include "compiler/frontend/bytecode_stream.h"

#include "absl/strings/str_cat.h"

namespace ember::frontend {

const char* SectionName(int id) {
  switch (id) {
    case 0: return "String";
    case 1: return "Dialect";
    case 2: return "AttrType";
    case 3: return "AttrTypeOffset";
    case 4: return "IR";
    case 5: return "Resource";
    case 6: return "ResourceOffset";
    case 7: return "DialectVersions";
    case 8: return "Properties";
    default: return "unknown";
  }
}

absl::Status ByteReader::Error(absl::string_view message) const { return ErrorAt(pos_, message); }

absl::Status ByteReader::ErrorAt(size_t offset, absl::string_view message) const {
  return absl::InvalidArgumentError(
      absl::StrCat("MLIR bytecode: ", what_, " at byte offset ", offset, ": ", message));
}

absl::StatusOr<uint8_t> ByteReader::ReadByte() {
  if (pos_ >= end_) return Error("unexpected end of data reading a byte");
  return file_[pos_++];
}

absl::StatusOr<uint64_t> ByteReader::ReadVarInt() {
  if (pos_ >= end_) return Error("unexpected end of data reading a varint");
  const uint8_t first = file_[pos_];
  if (first & 1) {
    ++pos_;
    return first >> 1;
  }
  if (first == 0) {
    // 9-byte form: a marker byte, then the little-endian uint64.
    if (end_ - pos_ < 9) return Error("unexpected end of data reading a 9-byte varint");
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{file_[pos_ + 1 + i]} << (8 * i);
    pos_ += 9;
    return v;
  }
  // The count of trailing zeros in the first byte is the number of extra bytes.
  const int extra = __builtin_ctz(first);
  const size_t total = static_cast<size_t>(extra) + 1;
  if (end_ - pos_ < total) return Error("unexpected end of data reading a varint");
  uint64_t v = 0;
  for (size_t i = 0; i < total; ++i) v |= uint64_t{file_[pos_ + i]} << (8 * i);
  pos_ += total;
  return v >> total;
}

absl::StatusOr<int64_t> ByteReader::ReadSignedVarInt() {
  absl::StatusOr<uint64_t> u = ReadVarInt();
  if (!u.ok()) return u.status();
  return static_cast<int64_t>((*u >> 1) ^ (~(*u & 1) + 1));
}

absl::StatusOr<uint64_t> ByteReader::ReadCount(size_t min_item_bytes) {
  const size_t at = pos_;
  absl::StatusOr<uint64_t> n = ReadVarInt();
  if (!n.ok()) return n.status();
  if (min_item_bytes > 0 && *n > remaining() / min_item_bytes) {
    return ErrorAt(at, absl::StrCat("count ", *n, " exceeds the ", remaining(),
                                    " bytes left in the section"));
  }
  return n;
}

absl::StatusOr<absl::Span<const uint8_t>> ByteReader::ReadBytes(uint64_t n) {
  if (n > remaining()) {
    return Error(absl::StrCat("need ", n, " bytes but only ", remaining(), " remain"));
  }
  absl::Span<const uint8_t> out = file_.subspan(pos_, n);
  pos_ += n;
  return out;
}

absl::StatusOr<absl::Span<const uint8_t>> ByteReader::ReadBlob() {
  absl::StatusOr<uint64_t> n = ReadVarInt();
  if (!n.ok()) return n.status();
  return ReadBytes(*n);
}

absl::StatusOr<absl::string_view> ByteReader::ReadNulTerminated() {
  for (size_t i = pos_; i < end_; ++i) {
    if (file_[i] == 0) {
      absl::string_view s(reinterpret_cast<const char*>(file_.data() + pos_), i - pos_);
      pos_ = i + 1;
      return s;
    }
  }
  return Error("unterminated string");
}

absl::Status ByteReader::AlignTo(uint64_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return Error(absl::StrCat("alignment ", alignment, " is not a power of two"));
  }
  if (alignment > 4096) return Error(absl::StrCat("alignment ", alignment, " is too large"));
  while (pos_ % alignment != 0) {
    if (pos_ >= end_) return Error("unexpected end of data in alignment padding");
    if (file_[pos_] != 0xCB) return Error("alignment padding byte is not 0xCB");
    ++pos_;
  }
  return absl::OkStatus();
}

absl::StatusOr<ByteReader::Section> ByteReader::ReadSection() {
  const size_t at = pos_;
  absl::StatusOr<uint8_t> id_and_flag = ReadByte();
  if (!id_and_flag.ok()) return id_and_flag.status();
  const int id = *id_and_flag & 0x7F;
  const bool aligned = (*id_and_flag & 0x80) != 0;
  absl::StatusOr<uint64_t> length = ReadVarInt();
  if (!length.ok()) return length.status();
  if (aligned) {
    absl::StatusOr<uint64_t> alignment = ReadVarInt();
    if (!alignment.ok()) return alignment.status();
    absl::Status s = AlignTo(*alignment);
    if (!s.ok()) return s;
  }
  if (*length > remaining()) {
    return ErrorAt(at, absl::StrCat("section ", SectionName(id), " (id ", id, ") length ",
                                    *length, " exceeds the ", remaining(), " bytes left"));
  }
  Section s{id, pos_, pos_ + static_cast<size_t>(*length)};
  pos_ = s.end;
  return s;
}

}  // namespace ember::frontend
