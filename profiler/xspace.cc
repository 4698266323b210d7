#include "profiler/xspace.h"

#include <algorithm>
#include <cstdint>
#include <map>

namespace ember::profiler {
namespace {

// Protobuf wire format: varints, and length-delimited fields (strings, messages).
void Varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void Tag(std::string& out, int field, int wire_type) {
  Varint(out, (static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire_type));
}
void Int(std::string& out, int field, int64_t v) {
  if (v == 0) return;  // proto3 default
  Tag(out, field, 0);
  Varint(out, static_cast<uint64_t>(v));
}
void Bytes(std::string& out, int field, const std::string& bytes) {
  Tag(out, field, 2);
  Varint(out, bytes.size());
  out += bytes;
}

// tensorflow.profiler field numbers (tsl/profiler/protobuf/xplane.proto).
namespace xspace {
constexpr int kPlanes = 1;
}
namespace xplane {
constexpr int kId = 1, kName = 2, kLines = 3, kEventMetadata = 4, kStatMetadata = 5;
}
namespace xline {
constexpr int kId = 1, kName = 2, kTimestampNs = 3, kEvents = 4;
}
namespace xevent {
constexpr int kMetadataId = 1, kOffsetPs = 2, kDurationPs = 3, kStats = 4;
}
namespace xstat {
constexpr int kMetadataId = 1, kStrValue = 5;
}
namespace xmetadata {
constexpr int kId = 1, kName = 2;
}  // namespace xmetadata
namespace map_entry {
constexpr int kKey = 1, kValue = 2;
}

// Ids for names within one plane.
struct Names {
  std::map<std::string, int64_t> ids;
  int64_t Id(const std::string& name) {
    auto [it, inserted] = ids.emplace(name, static_cast<int64_t>(ids.size()) + 1);
    return it->second;
  }
};

std::string Metadata(int64_t id, const std::string& name) {
  std::string m;
  Int(m, xmetadata::kId, id);
  Bytes(m, xmetadata::kName, name);
  return m;
}

}  // namespace

std::string SerializeXSpace(const std::vector<Event>& events) {
  // plane -> line -> events, in first-seen order.
  std::vector<std::string> plane_order;
  std::map<std::string, std::vector<std::string>> line_order;
  std::map<std::pair<std::string, std::string>, std::vector<const Event*>> by_line;
  for (const Event& e : events) {
    if (!line_order.contains(e.plane)) plane_order.push_back(e.plane);
    auto& lines = line_order[e.plane];
    if (std::find(lines.begin(), lines.end(), e.line) == lines.end()) lines.push_back(e.line);
    by_line[{e.plane, e.line}].push_back(&e);
  }
  std::string space;
  int64_t plane_id = 0;
  for (const std::string& plane_name : plane_order) {
    Names event_names, stat_names;
    std::string plane;
    Int(plane, xplane::kId, ++plane_id);
    Bytes(plane, xplane::kName, plane_name);
    int64_t line_id = 0;
    for (const std::string& line_name : line_order[plane_name]) {
      const std::vector<const Event*>& list = by_line[{plane_name, line_name}];
      int64_t start = list.front()->start_ns;
      for (const Event* e : list) start = std::min(start, e->start_ns);
      std::string line;
      Int(line, xline::kId, ++line_id);
      Bytes(line, xline::kName, line_name);
      Int(line, xline::kTimestampNs, start);
      for (const Event* e : list) {
        std::string event;
        Int(event, xevent::kMetadataId, event_names.Id(e->name));
        Int(event, xevent::kOffsetPs, (e->start_ns - start) * 1000);
        Int(event, xevent::kDurationPs, std::max<int64_t>(e->end_ns - e->start_ns, 0) * 1000);
        for (const auto& [key, value] : e->stats) {
          std::string stat;
          Int(stat, xstat::kMetadataId, stat_names.Id(key));
          Bytes(stat, xstat::kStrValue, value);
          Bytes(event, xevent::kStats, stat);
        }
        Bytes(line, xline::kEvents, event);
      }
      Bytes(plane, xplane::kLines, line);
    }
    for (const auto& [names, field] :
         {std::pair<Names*, int>{&event_names, xplane::kEventMetadata},
          std::pair<Names*, int>{&stat_names, xplane::kStatMetadata}}) {
      for (const auto& [name, id] : names->ids) {
        std::string entry;
        Int(entry, map_entry::kKey, id);
        Bytes(entry, map_entry::kValue, Metadata(id, name));
        Bytes(plane, field, entry);
      }
    }
    Bytes(space, xspace::kPlanes, plane);
  }
  return space;
}

}  // namespace ember::profiler
