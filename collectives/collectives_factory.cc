#include "collectives/collectives_factory.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "collectives/in_process/in_process_collectives.h"
#ifdef EMBER_HAVE_GLOO
#include "collectives/gloo/gloo_collectives.h"
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
  return absl::UnimplementedError(absl::StrCat(
      "collectives between ", std::string(platform),
      " devices are not supported yet (NCCL arrives with the CUDA backend)"));
}

}  // namespace ember::collectives
