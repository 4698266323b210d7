// MLIR bytecode container: magic, version, producer (with the StableHLO version policy), the
// section index, and the order in which sections are decoded (strings first, IR last; the order
// on disk differs).
#include "compiler/frontend/bytecode_reader.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "compiler/frontend/bytecode_internal.h"
#include "compiler/frontend/bytecode_stream.h"

namespace ember::frontend {
namespace {

constexpr uint8_t kMagic[4] = {'M', 'L', 0xEF, 'R'};

std::string VersionString(const int v[3]) { return absl::StrCat(v[0], ".", v[1], ".", v[2]); }

// Portable artifacts name their StableHLO version in the producer: "StableHLO_vX.Y.Z".
absl::Status CheckProducer(const std::string& producer) {
  const std::string kPrefix = "StableHLO_v";
  const size_t at = producer.find(kPrefix);
  if (at == std::string::npos) return absl::OkStatus();
  const std::string version = producer.substr(at + kPrefix.size());
  std::vector<std::string> parts = absl::StrSplit(version, '.');
  int v[3] = {0, 0, 0};
  if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &v[0]) ||
      !absl::SimpleAtoi(parts[1], &v[1]) || !absl::SimpleAtoi(parts[2], &v[2])) {
    return absl::InvalidArgumentError("MLIR bytecode: malformed StableHLO version in producer '" +
                                      producer + "'");
  }
  const std::array<int, 3> got{v[0], v[1], v[2]};
  const std::array<int, 3> max{kMaxStableHloVersion[0], kMaxStableHloVersion[1],
                               kMaxStableHloVersion[2]};
  const std::array<int, 3> min{kMinStableHloVersion[0], kMinStableHloVersion[1],
                               kMinStableHloVersion[2]};
  if (got > max) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MLIR bytecode: StableHLO portable artifact version ", VersionString(v),
        " is newer than the newest version this reader supports (",
        VersionString(kMaxStableHloVersion), ")"));
  }
  if (got < min) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MLIR bytecode: StableHLO portable artifact version ", VersionString(v),
        " is older than the oldest supported version (", VersionString(kMinStableHloVersion),
        ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<BytecodeHeader> ReadHeader(ByteReader& r) {
  if (r.remaining() < 4 || !std::equal(kMagic, kMagic + 4, r.file().begin())) {
    return r.Error("missing the MLIR bytecode magic \"ML\\xEFR\"");
  }
  EMBER_RETURN_IF_ERROR(r.ReadBytes(4).status());
  BytecodeHeader h;
  EMBER_ASSIGN_OR_RETURN(h.version, r.ReadVarInt());
  if (h.version > bytecode::kMaxVersion) {
    return r.Error(absl::StrCat("bytecode version ", h.version,
                                " is newer than the newest supported version ",
                                bytecode::kMaxVersion));
  }
  EMBER_ASSIGN_OR_RETURN(absl::string_view producer, r.ReadNulTerminated());
  h.producer = std::string(producer);
  return h;
}

}  // namespace

bool IsMlirBytecode(absl::Span<const uint8_t> data) {
  return data.size() >= 4 && std::equal(kMagic, kMagic + 4, data.begin());
}

absl::StatusOr<BytecodeHeader> ReadMlirBytecodeHeader(absl::Span<const uint8_t> data) {
  ByteReader r(data, 0, data.size(), "header");
  return ReadHeader(r);
}

absl::StatusOr<std::unique_ptr<Operation>> ReadMlirBytecode(absl::Span<const uint8_t> data) {
  ByteReader r(data, 0, data.size(), "header");
  EMBER_ASSIGN_OR_RETURN(BytecodeHeader header, ReadHeader(r));
  EMBER_RETURN_IF_ERROR(CheckProducer(header.producer));

  bytecode::State state;
  state.file = data;
  state.version = header.version;
  state.producer = header.producer;

  // Index every section first: the writer's order on disk is not the decoding order.
  std::array<std::optional<ByteReader::Section>, kNumSections> sections;
  ByteReader top(data, r.pos(), data.size(), "section table");
  while (!top.empty()) {
    const size_t at = top.pos();
    EMBER_ASSIGN_OR_RETURN(ByteReader::Section s, top.ReadSection());
    if (s.id >= kNumSections || s.id == static_cast<int>(SectionId::kDialectVersions)) {
      return top.ErrorAt(at, absl::StrCat("unexpected top-level section id ", s.id));
    }
    if (sections[s.id].has_value()) {
      return top.ErrorAt(at, absl::StrCat("duplicate top-level section ", SectionName(s.id)));
    }
    sections[s.id] = s;
  }
  auto require = [&](SectionId id) -> absl::StatusOr<ByteReader::Section> {
    if (!sections[static_cast<int>(id)].has_value()) {
      return top.Error(absl::StrCat("missing required section ",
                                    SectionName(static_cast<int>(id))));
    }
    return *sections[static_cast<int>(id)];
  };
  EMBER_ASSIGN_OR_RETURN(ByteReader::Section strings, require(SectionId::kString));
  EMBER_ASSIGN_OR_RETURN(ByteReader::Section dialects, require(SectionId::kDialect));
  EMBER_ASSIGN_OR_RETURN(ByteReader::Section attr_types, require(SectionId::kAttrType));
  EMBER_ASSIGN_OR_RETURN(ByteReader::Section offsets, require(SectionId::kAttrTypeOffset));
  EMBER_ASSIGN_OR_RETURN(ByteReader::Section ir, require(SectionId::kIR));
  const auto& resources = sections[static_cast<int>(SectionId::kResource)];
  const auto& resource_offsets = sections[static_cast<int>(SectionId::kResourceOffset)];
  if (resources.has_value() != resource_offsets.has_value()) {
    return top.Error("the Resource and ResourceOffset sections must appear together");
  }

  EMBER_RETURN_IF_ERROR(bytecode::ReadStringSection(state, strings));
  if (state.version >= bytecode::kNativePropertiesEncoding) {
    EMBER_ASSIGN_OR_RETURN(ByteReader::Section props, require(SectionId::kProperties));
    EMBER_RETURN_IF_ERROR(bytecode::ReadPropertiesSection(state, props));
  }
  EMBER_RETURN_IF_ERROR(bytecode::ReadDialectSection(state, dialects));
  if (resources.has_value()) {
    EMBER_RETURN_IF_ERROR(bytecode::ReadResourceSections(state, *resource_offsets, *resources));
  }
  EMBER_RETURN_IF_ERROR(bytecode::ReadAttrTypeOffsets(state, offsets, attr_types));
  return bytecode::ReadIrSection(state, ir);
}

}  // namespace ember::frontend
