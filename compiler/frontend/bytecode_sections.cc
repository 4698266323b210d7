// The table sections of MLIR bytecode: strings, dialects + op names (with dialect version
// blobs), properties records, resources (external and dialect groups, aligned blobs), and the
// attribute/type offset table that lets entries be decoded lazily.
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/frontend/bytecode_internal.h"

namespace ember::frontend::bytecode {

absl::Status ReadStringSection(State& state, ByteReader::Section section) {
  ByteReader r(state.file, section.begin, section.end, "String section");
  // Each string takes at least one length byte and one NUL.
  EMBER_ASSIGN_OR_RETURN(uint64_t count, r.ReadCount(2));
  std::vector<uint64_t> sizes(count);
  // Sizes are listed last string first.
  for (uint64_t i = count; i > 0; --i) {
    EMBER_ASSIGN_OR_RETURN(sizes[i - 1], r.ReadVarInt());
  }
  uint64_t total = 0;
  for (uint64_t size : sizes) {
    if (size == 0) return r.Error("string of length 0 (the length includes the NUL)");
    if (size > r.remaining() - total) return r.Error("string lengths exceed the section");
    total += size;
  }
  if (total != r.remaining()) {
    return r.Error(absl::StrCat("string data is ", r.remaining(), " bytes but the lengths sum to ",
                                total));
  }
  state.strings.reserve(count);
  for (uint64_t size : sizes) {
    EMBER_ASSIGN_OR_RETURN(absl::Span<const uint8_t> bytes, r.ReadBytes(size));
    if (bytes.back() != 0) return r.Error("string is not NUL-terminated");
    state.strings.emplace_back(reinterpret_cast<const char*>(bytes.data()), size - 1);
  }
  return absl::OkStatus();
}

absl::Status ReadPropertiesSection(State& state, ByteReader::Section section) {
  ByteReader r(state.file, section.begin, section.end, "Properties section");
  EMBER_ASSIGN_OR_RETURN(uint64_t count, r.ReadCount(1));
  state.property_records.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    EMBER_ASSIGN_OR_RETURN(uint64_t size, r.ReadVarInt());
    const size_t begin = r.pos();
    EMBER_RETURN_IF_ERROR(r.ReadBytes(size).status());
    state.property_records.push_back({static_cast<int>(SectionId::kProperties), begin, r.pos()});
  }
  if (!r.empty()) return r.Error("unexpected trailing bytes in the properties section");
  return absl::OkStatus();
}

absl::Status ReadDialectSection(State& state, ByteReader::Section section) {
  ByteReader r(state.file, section.begin, section.end, "Dialect section");
  EMBER_ASSIGN_OR_RETURN(uint64_t num_dialects, r.ReadCount(1));
  for (uint64_t i = 0; i < num_dialects; ++i) {
    DialectInfo d;
    uint64_t name_index = 0;
    bool has_version = false;
    if (state.version >= kDialectVersioning) {
      EMBER_ASSIGN_OR_RETURN(uint64_t v, r.ReadVarInt());
      name_index = v >> 1;
      has_version = (v & 1) != 0;
    } else {
      EMBER_ASSIGN_OR_RETURN(name_index, r.ReadVarInt());
    }
    EMBER_ASSIGN_OR_RETURN(absl::string_view name, state.String(name_index, r));
    d.name = std::string(name);
    if (has_version) {
      EMBER_ASSIGN_OR_RETURN(ByteReader::Section sec, r.ReadSection());
      if (sec.id != static_cast<int>(SectionId::kDialectVersions)) {
        return r.Error(absl::StrCat("expected a dialect version section for '", d.name,
                                    "', found section id ", sec.id));
      }
      d.version_blob.assign(state.file.begin() + sec.begin, state.file.begin() + sec.end);
    }
    state.dialects.push_back(std::move(d));
  }
  if (state.version >= kElideUnknownBlockArgLocation) {
    // Total number of op names: only a reservation hint upstream.
    EMBER_RETURN_IF_ERROR(r.ReadVarInt().status());
  }
  while (!r.empty()) {
    EMBER_ASSIGN_OR_RETURN(uint64_t dialect, r.ReadVarInt());
    if (dialect >= state.dialects.size()) {
      return r.Error(absl::StrCat("op-name group dialect ", dialect, " out of range"));
    }
    EMBER_ASSIGN_OR_RETURN(uint64_t count, r.ReadCount(1));
    for (uint64_t i = 0; i < count; ++i) {
      OpNameInfo info;
      uint64_t name_index = 0;
      if (state.version >= kNativePropertiesEncoding) {
        EMBER_ASSIGN_OR_RETURN(uint64_t v, r.ReadVarInt());
        name_index = v >> 1;
        info.registered = (v & 1) != 0;
      } else {
        EMBER_ASSIGN_OR_RETURN(name_index, r.ReadVarInt());
      }
      EMBER_ASSIGN_OR_RETURN(absl::string_view name, state.String(name_index, r));
      info.full_name = state.dialects[dialect].name;
      // An empty name is the legacy "dialect-only" op name.
      if (!name.empty()) info.full_name += "." + std::string(name);
      state.op_names.push_back(std::move(info));
    }
  }
  return absl::OkStatus();
}

namespace {

struct ResourceInfo {
  std::string key;
  uint64_t size;
  uint8_t kind;
};

absl::StatusOr<std::vector<ResourceInfo>> ReadResourceGroup(State& state, ByteReader& r) {
  // Each record: key, size and kind take at least three bytes.
  EMBER_ASSIGN_OR_RETURN(uint64_t count, r.ReadCount(3));
  std::vector<ResourceInfo> out;
  for (uint64_t i = 0; i < count; ++i) {
    ResourceInfo info;
    EMBER_ASSIGN_OR_RETURN(uint64_t key, r.ReadVarInt());
    EMBER_ASSIGN_OR_RETURN(absl::string_view key_str, state.String(key, r));
    info.key = std::string(key_str);
    EMBER_ASSIGN_OR_RETURN(info.size, r.ReadVarInt());
    EMBER_ASSIGN_OR_RETURN(info.kind, r.ReadByte());
    if (info.kind > 2) return r.Error(absl::StrCat("unknown resource kind ", info.kind));
    out.push_back(std::move(info));
  }
  return out;
}

absl::StatusOr<ResourceEntry> ReadResourcePayload(State& state, ByteReader& data,
                                                  const ResourceInfo& info) {
  const size_t begin = data.pos();
  EMBER_RETURN_IF_ERROR(data.ReadBytes(info.size).status());
  ByteReader r(state.file, begin, data.pos(), "Resource section (entry)");
  ResourceEntry e;
  e.key = info.key;
  e.kind = info.kind;
  switch (info.kind) {
    case 0: {
      EMBER_ASSIGN_OR_RETURN(uint64_t alignment, r.ReadVarInt());
      EMBER_ASSIGN_OR_RETURN(uint64_t size, r.ReadVarInt());
      EMBER_RETURN_IF_ERROR(r.AlignTo(alignment));
      EMBER_ASSIGN_OR_RETURN(absl::Span<const uint8_t> bytes, r.ReadBytes(size));
      e.blob.assign(bytes.begin(), bytes.end());
      break;
    }
    case 1: {
      EMBER_ASSIGN_OR_RETURN(uint8_t b, r.ReadByte());
      e.bool_value = b != 0;
      break;
    }
    default: {
      EMBER_ASSIGN_OR_RETURN(uint64_t index, r.ReadVarInt());
      EMBER_ASSIGN_OR_RETURN(absl::string_view s, state.String(index, r));
      e.string_value = std::string(s);
      break;
    }
  }
  return e;
}

}  // namespace

absl::Status ReadResourceSections(State& state, ByteReader::Section offsets,
                                  ByteReader::Section data) {
  ByteReader r(state.file, offsets.begin, offsets.end, "ResourceOffset section");
  ByteReader d(state.file, data.begin, data.end, "Resource section");
  EMBER_ASSIGN_OR_RETURN(uint64_t num_external, r.ReadCount(2));
  for (uint64_t g = 0; g < num_external; ++g) {
    // External resources belong to tools (e.g. pass pipelines); we only step over them.
    EMBER_ASSIGN_OR_RETURN(uint64_t key, r.ReadVarInt());
    EMBER_RETURN_IF_ERROR(state.String(key, r).status());
    EMBER_ASSIGN_OR_RETURN(std::vector<ResourceInfo> infos, ReadResourceGroup(state, r));
    for (const ResourceInfo& info : infos) {
      EMBER_RETURN_IF_ERROR(ReadResourcePayload(state, d, info).status());
    }
  }
  while (!r.empty()) {
    EMBER_ASSIGN_OR_RETURN(uint64_t dialect, r.ReadVarInt());
    if (dialect >= state.dialects.size()) {
      return r.Error(absl::StrCat("resource group dialect ", dialect, " out of range"));
    }
    EMBER_ASSIGN_OR_RETURN(std::vector<ResourceInfo> infos, ReadResourceGroup(state, r));
    for (const ResourceInfo& info : infos) {
      EMBER_ASSIGN_OR_RETURN(ResourceEntry e, ReadResourcePayload(state, d, info));
      state.dialect_resources.push_back(std::move(e));
    }
  }
  return absl::OkStatus();
}

absl::Status ReadAttrTypeOffsets(State& state, ByteReader::Section offsets,
                                 ByteReader::Section data) {
  ByteReader r(state.file, offsets.begin, offsets.end, "AttrTypeOffset section");
  // Every entry has a size varint in this section, so the counts are bounded by its bytes.
  EMBER_ASSIGN_OR_RETURN(uint64_t num_attrs, r.ReadCount(1));
  EMBER_ASSIGN_OR_RETURN(uint64_t num_types, r.ReadCount(1));
  if (num_attrs + num_types > r.remaining()) {
    return r.Error("attribute and type counts exceed the section");
  }
  size_t cursor = data.begin;
  auto read_entries = [&](std::vector<EntryInfo>& entries, uint64_t total) -> absl::Status {
    entries.reserve(total);
    while (entries.size() < total) {
      EMBER_ASSIGN_OR_RETURN(uint64_t dialect, r.ReadVarInt());
      if (dialect >= state.dialects.size()) {
        return r.Error(absl::StrCat("entry group dialect ", dialect, " out of range"));
      }
      EMBER_ASSIGN_OR_RETURN(uint64_t count, r.ReadVarInt());
      if (count > total - entries.size()) return r.Error("entry group overflows the table");
      for (uint64_t i = 0; i < count; ++i) {
        EMBER_ASSIGN_OR_RETURN(uint64_t v, r.ReadVarInt());
        const uint64_t size = v >> 1;
        if (size > data.end - cursor) {
          return r.Error(absl::StrCat("entry of ", size, " bytes runs past the AttrType section"));
        }
        entries.push_back({dialect, (v & 1) != 0, cursor, cursor + static_cast<size_t>(size)});
        cursor += size;
      }
    }
    return absl::OkStatus();
  };
  EMBER_RETURN_IF_ERROR(read_entries(state.attr_entries, num_attrs));
  EMBER_RETURN_IF_ERROR(read_entries(state.type_entries, num_types));
  if (!r.empty()) return r.Error("unexpected trailing bytes in the AttrTypeOffset section");
  if (cursor != data.end) {
    return ByteReader(state.file, cursor, data.end, "AttrType section")
        .Error("bytes not covered by any attribute or type entry");
  }
  state.attrs.resize(num_attrs);
  state.attr_state.assign(num_attrs, 0);
  state.attr_depth.assign(num_attrs, 0);
  state.type_depth.assign(num_types, 0);
  state.types.resize(num_types);
  state.type_state.assign(num_types, 0);
  return absl::OkStatus();
}

}  // namespace ember::frontend::bytecode
