#include "collectives/nccl/nccl_collectives.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "collectives/communicator_request.h"
#include "collectives/nccl/nccl_communicator.h"
#include "stream_executor/cuda/cuda_executor.h"

namespace ember::collectives::nccl {

absl::StatusOr<std::shared_ptr<NcclCollectives>> NcclCollectives::Create(
    se::Platform& platform, const std::string& library_directory, absl::Duration timeout,
    NcclTopology topology) {
  if (platform.Name() != "cuda") {
    return absl::InvalidArgumentError(absl::StrCat(
        "NCCL collectives need the CUDA platform, got '", std::string(platform.Name()), "'"));
  }
  if (topology.device_count < 0) topology.device_count = platform.DeviceCount();
  if (topology.first_device < 0 || topology.device_count > platform.DeviceCount()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "NCCL collectives: this process's devices [", topology.first_device, ", ",
        topology.first_device + topology.device_count, ") do not fit the platform's ",
        platform.DeviceCount(), " CUDA devices"));
  }
  EMBER_ASSIGN_OR_RETURN(std::shared_ptr<const NcclLibrary> nccl,
                         NcclLibrary::Open(library_directory));
  return std::make_shared<NcclCollectives>(std::move(nccl), platform, timeout,
                                           std::move(topology));
}

std::string NcclCollectives::KeyPrefix(const CliqueKey& clique, uint64_t generation) {
  return absl::StrCat("ember/nccl/", absl::StrJoin(clique.devices, ","), "/g", generation, "/");
}

absl::StatusOr<std::shared_ptr<NcclClique>> NcclCollectives::CreateClique(const CliqueKey& clique,
                                                                          uint64_t generation) {
  std::vector<se::cuda::CudaExecutor*> executors;
  absl::flat_hash_set<int64_t> seen;
  bool all_local = true;
  for (int64_t device : clique.devices) {
    if (!seen.insert(device).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "NCCL clique ", clique.ToString(), " names device ", device,
          " twice (one rank per GPU)"));
    }
    if (!IsLocal(device)) {
      if (topology_.store == nullptr || device < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "NCCL clique ", clique.ToString(), ": no CUDA device ", device, " (",
            topology_.first_device == 0
                ? absl::StrCat(topology_.device_count, " devices")
                : absl::StrCat("this process has devices [", topology_.first_device, ", ",
                               topology_.first_device + topology_.device_count,
                               ") and no key-value store to reach others"),
            ")"));
      }
      executors.push_back(nullptr);  // another process's rank
      all_local = false;
      continue;
    }
    const int ordinal = static_cast<int>(device - topology_.first_device);
    EMBER_ASSIGN_OR_RETURN(se::Executor * executor, platform_.ExecutorForDevice(ordinal));
    auto* cuda = dynamic_cast<se::cuda::CudaExecutor*>(executor);
    if (cuda == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("NCCL clique ", clique.ToString(), ": device ", device, " is not a GPU"));
    }
    executors.push_back(cuda);
  }
  ncclUniqueId id;
  if (all_local) {
    EMBER_RETURN_IF_ERROR(nccl_->Check(nccl_->GetUniqueId(&id), "ncclGetUniqueId", nullptr));
  } else {
    EMBER_ASSIGN_OR_RETURN(id, ExchangeUniqueId(clique, generation, executors));
  }
  return NcclClique::Create(nccl_, clique, std::move(executors), id);
}

absl::StatusOr<ncclUniqueId> NcclCollectives::ExchangeUniqueId(
    const CliqueKey& clique, uint64_t generation,
    const std::vector<se::cuda::CudaExecutor*>& executors) {
  KeyValueStore& store = *topology_.store;
  const std::string prefix = KeyPrefix(clique, generation);
  const std::string what =
      absl::StrCat("NCCL clique ", clique.ToString(), " (generation ", generation, ")");
  const absl::Time deadline = absl::Now() + timeout_;
  auto remaining = [&] { return std::max(deadline - absl::Now(), absl::ZeroDuration()); };
  // Every process says its ranks have arrived and waits for the others' before rank 0 makes an
  // id: a peer that never comes is then a timeout naming it, not an ncclCommInitRank waiting
  // forever (real NCCL) on an id nobody else will use.
  for (int r = 0; r < clique.size(); ++r) {
    if (executors[r] == nullptr) continue;
    absl::Status set = store.Set(absl::StrCat(prefix, "arrived/", r), "1");
    if (!set.ok()) {
      return absl::Status(set.code(), absl::StrCat(what, ": cannot say that rank ", r,
                                                   " arrived: ", set.message()));
    }
  }
  for (int r = 0; r < clique.size(); ++r) {
    if (executors[r] != nullptr) continue;
    absl::StatusOr<std::string> arrived = store.Get(absl::StrCat(prefix, "arrived/", r),
                                                    remaining());
    if (!arrived.ok()) {
      return absl::Status(arrived.status().code(),
                          absl::StrCat(what, ": rank ", r, " (device ", clique.devices[r],
                                       ", another process) did not arrive within ",
                                       absl::FormatDuration(timeout_), ": ",
                                       arrived.status().message()));
    }
  }
  ncclUniqueId id;
  const std::string id_key = absl::StrCat(prefix, "id");
  if (executors[0] != nullptr) {
    EMBER_RETURN_IF_ERROR(nccl_->Check(nccl_->GetUniqueId(&id), "ncclGetUniqueId", nullptr));
    absl::Status set = store.Set(id_key, std::string_view(id.internal, sizeof(id.internal)));
    if (!set.ok()) {
      return absl::Status(set.code(), absl::StrCat(what, ": cannot publish the unique id: ",
                                                   set.message()));
    }
    return id;
  }
  absl::StatusOr<std::string> published = store.Get(id_key, remaining());
  if (!published.ok()) {
    return absl::Status(published.status().code(),
                        absl::StrCat(what, ": no unique id from the process of rank 0 (device ",
                                     clique.devices[0], ") within ",
                                     absl::FormatDuration(timeout_), ": ",
                                     published.status().message()));
  }
  if (published->size() != sizeof(id.internal)) {
    return absl::InternalError(absl::StrCat(what, ": the unique id under '", id_key, "' holds ",
                                            published->size(), " bytes, not ",
                                            sizeof(id.internal)));
  }
  std::memcpy(id.internal, published->data(), sizeof(id.internal));
  return id;
}

absl::StatusOr<std::shared_ptr<Communicator>> NcclCollectives::GetCommunicator(
    const CliqueKey& clique, RankId rank) {
  EMBER_RETURN_IF_ERROR(CheckCommunicatorRequest(clique, rank));
  if (topology_.store != nullptr && !IsLocal(clique.devices[rank.value])) {
    return absl::InvalidArgumentError(absl::StrCat(
        "NCCL ", clique.ToString(), ": rank ", rank.value, " (device ",
        clique.devices[rank.value], ") is not on this process's devices [",
        topology_.first_device, ", ", topology_.first_device + topology_.device_count, ")"));
  }
  // Creation runs under the lock: the ranks of one clique ask at once and must share one.
  absl::MutexLock lock(&mu_);
  std::shared_ptr<NcclClique>& slot = cliques_[clique];
  if (slot == nullptr || !slot->Health().ok()) {
    slot.reset();  // a failed clique goes once its last communicator does
    absl::StatusOr<std::shared_ptr<NcclClique>> created =
        CreateClique(clique, next_generation_[clique]++);
    if (!created.ok()) {
      cliques_.erase(clique);
      return created.status();
    }
    slot = *std::move(created);
    ++cliques_created_;
  }
  return std::shared_ptr<Communicator>(std::make_shared<NcclCommunicator>(slot, rank, watchdog_));
}

int NcclCollectives::cliques_created() const {
  absl::MutexLock lock(&mu_);
  return cliques_created_;
}

}  // namespace ember::collectives::nccl
