#include "collectives/collectives_factory.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "collectives/in_process/in_process_collectives.h"
#ifdef EMBER_HAVE_GLOO
#include "collectives/gloo/gloo_collectives.h"
#endif
#ifdef EMBER_HAVE_CUDA
#include "collectives/nccl/nccl_collectives.h"
#endif

namespace ember::collectives {

absl::StatusOr<std::shared_ptr<Collectives>> CreateCollectives(std::string_view platform,
                                                               const CollectivesOptions& options) {
  if (platform == "host") {
    if (options.process_count <= 1) return std::make_shared<InProcessCollectives>(options.timeout);
    if (options.kv_store == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "collectives across ", options.process_count,
          " processes need the job's key-value store (jax.distributed.initialize passes it)"));
    }
#ifdef EMBER_HAVE_GLOO
    return std::make_shared<GlooCollectives>(options.kv_store, options.timeout);
#else
    return absl::UnimplementedError(
        "collectives across processes need Gloo, and this Ember was built without it "
        "(install libgloo-dev and rebuild)");
#endif
  }
  if (platform == "cuda") {
#ifdef EMBER_HAVE_CUDA
    if (options.platform == nullptr) {
      return absl::InvalidArgumentError("NCCL collectives need the CUDA platform");
    }
    nccl::NcclTopology topology;
    if (options.process_count > 1) topology.store = options.kv_store;
    topology.first_device = options.first_device_id;
    topology.device_count = options.platform->DeviceCount();
    absl::StatusOr<std::shared_ptr<nccl::NcclCollectives>> nccl = nccl::NcclCollectives::Create(
        *options.platform, options.library_directory, options.timeout, std::move(topology));
    if (!nccl.ok()) return nccl.status();
    return std::shared_ptr<Collectives>(*std::move(nccl));
#else
    return absl::UnimplementedError(
        "collectives between GPUs need NCCL, and this Ember was built without the CUDA toolkit");
#endif
  }
  return absl::UnimplementedError(absl::StrCat("no collectives transport for ",
                                               std::string(platform), " devices"));
}

}  // namespace ember::collectives
