// What one process of the NCCL transport's multi-process tests runs: its two ranks of a clique of
// four GPUs (global devices 0..3, two per process), each on a thread of its own, through an
// NcclCollectives whose topology names this process's devices and the job's key-value store.
// Inputs come from seeds, so every process knows every rank's and checks its own results.
#ifndef EMBER_TESTS_COLLECTIVES_NCCL_NCCL_PROCESS_RANKS_H_
#define EMBER_TESTS_COLLECTIVES_NCCL_NCCL_PROCESS_RANKS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "collectives/key_value_store.h"
#include "stream_executor/platform.h"

namespace ember::collectives::nccl {

inline constexpr int kProcessRanks = 2;
inline constexpr int kJobRanks = 4;

// The virtual GPU's CUDA platform (the libraries the build made under virtual_gpu/lib).
absl::StatusOr<std::unique_ptr<se::Platform>> VirtualCudaPlatform();

// Runs ranks first_device and first_device + 1 of the clique devices [0,1,2,3]: all-reduce (sum
// of f32, sum of s64), all-gather (f32), reduce-scatter (sum of s32) and broadcast (f32 from
// rank 2), all queued on each rank's stream before it is synchronized; `rounds` times, the clique
// aborted between rounds (once every process is done with the round: keys "test/round<k>/done/"
// in the store), so that each round builds the clique's next generation. Empty when every result
// is right, else what went wrong, rank by rank.
std::string RunProcessRanks(se::Platform& platform, std::shared_ptr<KeyValueStore> store,
                            int64_t first_device, absl::Duration timeout, int rounds);

// Takes this process's two ranks of the clique devices [0,1,2,3] and issues nothing, until the
// key "test/release" appears in the store (or the timeout passes): a peer that joined and then
// never takes part. Empty when the communicators were had and the release came.
std::string JoinAndIdle(se::Platform& platform, std::shared_ptr<KeyValueStore> store,
                        int64_t first_device, absl::Duration timeout);

}  // namespace ember::collectives::nccl

#endif  // EMBER_TESTS_COLLECTIVES_NCCL_NCCL_PROCESS_RANKS_H_
