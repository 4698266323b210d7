// The other process of nccl_multi_process_test.cc: runs its two ranks of the four-GPU clique
// (RunProcessRanks) on this process's virtual GPUs, meeting the test process through a
// FileKeyValueStore in a shared directory. Usage: <store-dir> <first-device> <timeout-seconds>
// <rounds>; rounds "idle" takes the ranks and issues nothing until released (JoinAndIdle). Exit
// status 0 when every result is right, 1 (with what failed on stderr) otherwise.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "tests/collectives/file_key_value_store.h"
#include "tests/collectives/nccl/nccl_process_ranks.h"

int main(int argc, char** argv) {
  using namespace ember::collectives;
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s <store-dir> <first-device> <timeout-seconds> <rounds>\n",
                 argv[0]);
    return 2;
  }
  auto platform = nccl::VirtualCudaPlatform();
  if (!platform.ok()) {
    std::fprintf(stderr, "peer: %s\n", platform.status().ToString().c_str());
    return 3;
  }
  auto store = std::make_shared<FileKeyValueStore>(argv[1]);
  const int64_t first_device = std::atoll(argv[2]);
  const absl::Duration timeout = absl::Seconds(std::atoi(argv[3]));
  const std::string failures =
      std::string(argv[4]) == "idle"
          ? nccl::JoinAndIdle(**platform, store, first_device, timeout)
          : nccl::RunProcessRanks(**platform, store, first_device, timeout, std::atoi(argv[4]));
  if (!failures.empty()) {
    std::fprintf(stderr, "peer process (devices from %s):\n%s", argv[2], failures.c_str());
    return 1;
  }
  return 0;
}
