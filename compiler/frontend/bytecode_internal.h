// Internal state shared by the pieces of the MLIR bytecode reader: the decoded string, dialect,
// op-name, property and resource tables, and the lazily resolved attribute/type tables with the
// entry reader that dialect decoders (builtin, VHLO, sdy) use. Not a public interface.
#ifndef EMBER_COMPILER_FRONTEND_BYTECODE_INTERNAL_H_
#define EMBER_COMPILER_FRONTEND_BYTECODE_INTERNAL_H_

#include <cstdint>
#include <memory>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/frontend/bytecode_stream.h"
#include "compiler/frontend/mlir_ast.h"

namespace ember::frontend::bytecode {

// Container versions (mlir/include/mlir/Bytecode/Encoding.h).
inline constexpr uint64_t kDialectVersioning = 1;
inline constexpr uint64_t kLazyLoading = 2;
inline constexpr uint64_t kUseListOrdering = 3;
inline constexpr uint64_t kElideUnknownBlockArgLocation = 4;
inline constexpr uint64_t kNativePropertiesEncoding = 5;
inline constexpr uint64_t kNativePropertiesODSSegmentSize = 6;
inline constexpr uint64_t kMaxVersion = 6;

struct DialectInfo {
  std::string name;
  std::vector<uint8_t> version_blob;  // empty when the dialect wrote none
};

struct OpNameInfo {
  std::string full_name;
  bool registered = true;
};

struct EntryInfo {
  size_t dialect = 0;
  bool custom = false;
  size_t begin = 0, end = 0;  // absolute byte range in the file
};

struct ResourceEntry {
  std::string key;
  uint8_t kind = 0;  // 0 blob, 1 bool, 2 string
  std::vector<uint8_t> blob;
  bool bool_value = false;
  std::string string_value;
};

struct State {
  absl::Span<const uint8_t> file;
  uint64_t version = 0;
  std::string producer;
  std::vector<std::string> strings;
  std::vector<DialectInfo> dialects;
  std::vector<OpNameInfo> op_names;
  std::vector<ByteReader::Section> property_records;
  std::vector<EntryInfo> attr_entries, type_entries;
  std::vector<AttrPtr> attrs;
  std::vector<TypePtr> types;
  std::vector<uint8_t> attr_state, type_state;  // 0 unresolved, 1 in progress, 2 done
  // Nesting depth of each resolved entry: bounded so that printing, comparing and destroying
  // the (recursive) values cannot exhaust the stack on hostile input.
  std::vector<uint32_t> attr_depth, type_depth;
  std::vector<ResourceEntry> dialect_resources;

  // Set when a resolution was deferred because it nested too deeply (see GetAttribute).
  bool deferred_is_type = false;
  uint64_t deferred_index = 0;

  absl::StatusOr<absl::string_view> String(uint64_t index, const ByteReader& at) const;
  // Resolves attribute/type `index` (memoized). Deep reference chains (long CallSiteLoc chains
  // from JAX tracebacks) are resolved with an explicit worklist, not unbounded recursion.
  absl::StatusOr<AttrPtr> GetAttribute(uint64_t index);
  absl::StatusOr<TypePtr> GetType(uint64_t index);

  // Used by EntryReader: resolve at nesting `depth`, deferring past the limit.
  absl::StatusOr<AttrPtr> AttributeAtDepth(uint64_t index, int depth);
  absl::StatusOr<TypePtr> TypeAtDepth(uint64_t index, int depth);
};

// What dialect decoders read an attribute/type entry payload with.
class EntryReader {
 public:
  EntryReader(State& state, ByteReader bytes, int depth)
      : state_(state), bytes_(bytes), depth_(depth) {}

  State& state() { return state_; }
  ByteReader& bytes() { return bytes_; }
  absl::Status Error(absl::string_view message) const { return bytes_.Error(message); }

  absl::StatusOr<uint64_t> VarInt() { return bytes_.ReadVarInt(); }
  absl::StatusOr<int64_t> SignedVarInt() { return bytes_.ReadSignedVarInt(); }
  absl::StatusOr<uint64_t> Count() { return bytes_.ReadCount(1); }
  absl::StatusOr<bool> Bool();
  absl::StatusOr<AttrPtr> Attr();
  // varint (index << 1) | present; null when absent.
  absl::StatusOr<AttrPtr> OptionalAttr();
  absl::StatusOr<TypePtr> TypeRef();
  absl::StatusOr<std::string> String();
  absl::StatusOr<std::vector<uint8_t>> Blob();
  // APInt of a known bit width: little-endian 64-bit words, truncated to `width`.
  absl::StatusOr<std::vector<uint64_t>> APInt(unsigned width);
  absl::StatusOr<std::vector<AttrPtr>> AttrList();
  absl::StatusOr<std::vector<TypePtr>> TypeList();
  absl::StatusOr<std::vector<int64_t>> SignedVarIntList();

  // Deepest nesting among the entries this reader referenced.
  uint32_t max_child_depth() const { return max_child_depth_; }

 private:
  State& state_;
  ByteReader bytes_;
  int depth_;
  uint32_t max_child_depth_ = 0;
};

// Values nested deeper than this (attributes inside attributes, types inside types) are rejected.
inline constexpr uint32_t kMaxValueNesting = 2000;

// Dialect decoders: each reads a kind code then the fields; the caller checks the entry was
// consumed exactly.
absl::StatusOr<AttrPtr> DecodeBuiltinAttribute(EntryReader& r);
absl::StatusOr<TypePtr> DecodeBuiltinType(EntryReader& r);
absl::StatusOr<AttrPtr> DecodeVhloAttribute(EntryReader& r);
absl::StatusOr<TypePtr> DecodeVhloType(EntryReader& r);
absl::StatusOr<TypePtr> DecodeStablehloType(EntryReader& r);
absl::StatusOr<AttrPtr> DecodeSdyAttribute(EntryReader& r);

// Textual-fallback entries: builtin types we know by name are decoded; anything else is kept
// verbatim as an opaque attribute/type of its dialect.
absl::StatusOr<AttrPtr> ParseTextualAttribute(absl::string_view text, absl::string_view dialect);
absl::StatusOr<TypePtr> ParseTextualType(absl::string_view text, absl::string_view dialect);

// Bytes per element in dense-element storage for a builtin or VHLO element type (bits rounded up
// to whole bytes; complex counts both parts); 0 for i1 (bit-packed) ; error when not an element.
absl::StatusOr<uint64_t> ElementStorageBytes(const Type& element);
// Number of elements of a static shape, rejecting dynamic dims and overflow.
absl::StatusOr<uint64_t> StaticElementCount(const std::vector<int64_t>& shape);
// Checks dense data against its shaped type (splat, packed i1, or full), as MLIR does.
absl::Status ValidateDenseData(const Type& shaped, size_t data_size, const ByteReader& at);

// Property schema: the inherent attributes of an op in byte-wise sorted order.
struct PropertySpec {
  const char* name;
  bool optional;
};
// Null when the op is unknown to us.
const std::vector<PropertySpec>* FindPropertySchema(absl::string_view op_name);

// Section decoders (bytecode_sections.cc), in the order the reader runs them.
absl::Status ReadStringSection(State& state, ByteReader::Section section);
absl::Status ReadPropertiesSection(State& state, ByteReader::Section section);
absl::Status ReadDialectSection(State& state, ByteReader::Section section);
absl::Status ReadResourceSections(State& state, ByteReader::Section offsets,
                                  ByteReader::Section data);
absl::Status ReadAttrTypeOffsets(State& state, ByteReader::Section offsets,
                                 ByteReader::Section data);

// Reads the IR section into the single top-level operation.
absl::StatusOr<std::unique_ptr<Operation>> ReadIrSection(State& state, ByteReader::Section ir);

}  // namespace ember::frontend::bytecode

#endif  // EMBER_COMPILER_FRONTEND_BYTECODE_INTERNAL_H_
