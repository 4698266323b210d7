#include "collectives/nccl/nccl_collectives.h"

#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "collectives/communicator_request.h"
#include "collectives/nccl/nccl_communicator.h"
#include "stream_executor/cuda/cuda_executor.h"

namespace ember::collectives::nccl {

absl::StatusOr<std::shared_ptr<NcclCollectives>> NcclCollectives::Create(
    se::Platform& platform, const std::string& library_directory, absl::Duration timeout) {
  if (platform.Name() != "cuda") {
    return absl::InvalidArgumentError(absl::StrCat(
        "NCCL collectives need the CUDA platform, got '", std::string(platform.Name()), "'"));
  }
  EMBER_ASSIGN_OR_RETURN(std::shared_ptr<const NcclLibrary> nccl,
                         NcclLibrary::Open(library_directory));
  return std::make_shared<NcclCollectives>(std::move(nccl), platform, timeout);
}

absl::StatusOr<std::shared_ptr<NcclClique>> NcclCollectives::CreateClique(
    const CliqueKey& clique) {
  std::vector<se::cuda::CudaExecutor*> executors;
  absl::flat_hash_set<int64_t> seen;
  for (int64_t device : clique.devices) {
    if (!seen.insert(device).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "NCCL clique ", clique.ToString(), " names device ", device,
          " twice (one rank per GPU)"));
    }
    if (device < 0 || device >= platform_.DeviceCount()) {
      return absl::InvalidArgumentError(absl::StrCat("NCCL clique ", clique.ToString(),
                                                     ": no CUDA device ", device, " (",
                                                     platform_.DeviceCount(), " devices)"));
    }
    EMBER_ASSIGN_OR_RETURN(se::Executor * executor,
                           platform_.ExecutorForDevice(static_cast<int>(device)));
    auto* cuda = dynamic_cast<se::cuda::CudaExecutor*>(executor);
    if (cuda == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("NCCL clique ", clique.ToString(), ": device ", device, " is not a GPU"));
    }
    executors.push_back(cuda);
  }
  return NcclClique::Create(nccl_, clique, std::move(executors));
}

absl::StatusOr<std::shared_ptr<Communicator>> NcclCollectives::GetCommunicator(
    const CliqueKey& clique, RankId rank) {
  EMBER_RETURN_IF_ERROR(CheckCommunicatorRequest(clique, rank));
  // Creation runs under the lock: the ranks of one clique ask at once and must share one.
  absl::MutexLock lock(&mu_);
  std::shared_ptr<NcclClique>& slot = cliques_[clique];
  if (slot == nullptr || !slot->Health().ok()) {
    slot.reset();  // a failed clique goes once its last communicator does
    absl::StatusOr<std::shared_ptr<NcclClique>> created = CreateClique(clique);
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
