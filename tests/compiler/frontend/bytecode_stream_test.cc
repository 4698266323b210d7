// Unit tests of the primitive bytecode reads: varints in every width, zigzag, counts checked
// against the remaining bytes, strings, and section headers with absolute alignment.
#include "compiler/frontend/bytecode_stream.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace ember::frontend {
namespace {

ByteReader Over(const std::vector<uint8_t>& bytes) {
  return ByteReader(bytes, 0, bytes.size(), "test");
}

TEST(ByteReaderTest, OneByteVarInt) {
  std::vector<uint8_t> b = {0x0D, 0xFF};
  ByteReader r = Over(b);
  EXPECT_EQ(*r.ReadVarInt(), 6u);
  EXPECT_EQ(*r.ReadVarInt(), 127u);
  EXPECT_TRUE(r.empty());
}

TEST(ByteReaderTest, TwoByteVarInt) {
  // 0x1234 << 2 | 0b10 = 0x48D2, little-endian.
  std::vector<uint8_t> b = {0xD2, 0x48};
  ByteReader r = Over(b);
  EXPECT_EQ(*r.ReadVarInt(), 0x1234u);
}

TEST(ByteReaderTest, EightAndNineByteVarInt) {
  // 8-byte form: first byte 0x80, 56 bits of payload.
  std::vector<uint8_t> eight = {0x80, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07};
  ByteReader r8 = Over(eight);
  EXPECT_EQ(*r8.ReadVarInt(), 0x07060504030201u);
  std::vector<uint8_t> nine = {0x00, 0xEF, 0xCD, 0xAB, 0x89, 0x67, 0x45, 0x23, 0xF1};
  ByteReader r9 = Over(nine);
  EXPECT_EQ(*r9.ReadVarInt(), 0xF123456789ABCDEFu);
  EXPECT_TRUE(r9.empty());
}

TEST(ByteReaderTest, TruncatedVarIntIsAnError) {
  std::vector<uint8_t> b = {0x00, 0x01, 0x02};
  ByteReader r = Over(b);
  absl::StatusOr<uint64_t> v = r.ReadVarInt();
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("byte offset 0"), absl::string_view::npos);
  std::vector<uint8_t> two = {0x02};
  ByteReader r2 = Over(two);
  EXPECT_FALSE(r2.ReadVarInt().ok());
  std::vector<uint8_t> none;
  ByteReader r0 = Over(none);
  EXPECT_FALSE(r0.ReadVarInt().ok());
}

TEST(ByteReaderTest, SignedVarIntZigZag) {
  // zigzag: 0 -> 0, -1 -> 1, 1 -> 2, -2 -> 3; encoded as (z << 1) | 1.
  std::vector<uint8_t> b = {0x01, 0x03, 0x05, 0x07};
  ByteReader r = Over(b);
  EXPECT_EQ(*r.ReadSignedVarInt(), 0);
  EXPECT_EQ(*r.ReadSignedVarInt(), -1);
  EXPECT_EQ(*r.ReadSignedVarInt(), 1);
  EXPECT_EQ(*r.ReadSignedVarInt(), -2);
  // INT64_MIN (a dynamic dimension) = zigzag 0xFFFF...FFFF, the 9-byte form.
  std::vector<uint8_t> min = {0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  ByteReader rm = Over(min);
  EXPECT_EQ(*rm.ReadSignedVarInt(), INT64_MIN);
}

TEST(ByteReaderTest, CountIsBoundedByRemainingBytes) {
  std::vector<uint8_t> b = {0x07, 0x01, 0x01, 0x01};  // count 3, 3 bytes follow
  ByteReader ok = Over(b);
  EXPECT_EQ(*ok.ReadCount(1), 3u);
  std::vector<uint8_t> big = {0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F};
  ByteReader r = Over(big);
  EXPECT_FALSE(r.ReadCount(1).ok());
  ByteReader r2 = Over(b);
  EXPECT_FALSE(r2.ReadCount(2).ok());  // 3 items of >= 2 bytes cannot fit in 3 bytes
}

TEST(ByteReaderTest, BytesBlobAndStrings) {
  std::vector<uint8_t> b = {0x05, 'a', 'b', 'x', 'y', 0, 'z'};
  ByteReader r = Over(b);
  absl::StatusOr<absl::Span<const uint8_t>> blob = r.ReadBlob();
  ASSERT_TRUE(blob.ok());
  EXPECT_EQ(blob->size(), 2u);
  EXPECT_EQ((*blob)[1], 'b');
  EXPECT_EQ(*r.ReadNulTerminated(), "xy");
  EXPECT_FALSE(r.ReadNulTerminated().ok());  // "z" has no NUL
  ByteReader r2 = Over(b);
  EXPECT_FALSE(r2.ReadBytes(8).ok());
}

TEST(ByteReaderTest, SectionWithAlignment) {
  // id 2 with the alignment flag, length 2, alignment 4, then padding to offset 4.
  std::vector<uint8_t> b = {0x82, 0x05, 0x09, 0xCB, 0xAA, 0xBB, 0x01};
  ByteReader r = Over(b);
  absl::StatusOr<ByteReader::Section> s = r.ReadSection();
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->id, 2);
  EXPECT_EQ(s->begin, 4u);
  EXPECT_EQ(s->end, 6u);
  EXPECT_EQ(r.pos(), 6u);
}

TEST(ByteReaderTest, BadSections) {
  std::vector<uint8_t> bad_pad = {0x82, 0x05, 0x09, 0x00, 0xAA, 0xBB};
  ByteReader r1 = Over(bad_pad);
  EXPECT_FALSE(r1.ReadSection().ok());
  std::vector<uint8_t> bad_align = {0x82, 0x05, 0x07, 0xAA, 0xBB};  // alignment 3
  ByteReader r2 = Over(bad_align);
  EXPECT_FALSE(r2.ReadSection().ok());
  std::vector<uint8_t> too_long = {0x02, 0x0B, 0xAA};  // length 5, 1 byte left
  ByteReader r3 = Over(too_long);
  absl::StatusOr<ByteReader::Section> s = r3.ReadSection();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("AttrType"), absl::string_view::npos);
}

}  // namespace
}  // namespace ember::frontend
