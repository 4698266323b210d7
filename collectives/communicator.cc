#include "collectives/communicator.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ember::collectives {

std::string CliqueKey::ToString() const {
  return absl::StrCat("run ", run_id, " op ", op, " devices [", absl::StrJoin(devices, ","), "]");
}

const char* CollectiveKindName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce: return "all_reduce";
    case CollectiveKind::kAllGather: return "all_gather";
    case CollectiveKind::kReduceScatter: return "reduce_scatter";
    case CollectiveKind::kAllToAll: return "all_to_all";
    case CollectiveKind::kCollectivePermute: return "collective_permute";
    case CollectiveKind::kBroadcast: return "collective_broadcast";
    case CollectiveKind::kReduce: return "collective_reduce";
  }
  return "collective";
}

}  // namespace ember::collectives
