// The devices of a multi-process job: every process publishes what it has (platform, device kind
// and count) in the job's key-value store and reads what the others have, so that each client
// lists every device of the job with its process index and a global id. Ids are dense: process
// p's devices follow those of processes 0..p-1, in ordinal order.
#ifndef EMBER_RUNTIME_PROCESS_TOPOLOGY_H_
#define EMBER_RUNTIME_PROCESS_TOPOLOGY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "collectives/key_value_store.h"

namespace ember::runtime {

struct ProcessDevices {
  std::string platform;  // se::Platform::Name() ("host", "cuda")
  std::string kind;      // the devices' kind (all devices of a process have one)
  int count = 0;
  int first_id = 0;  // the global id of its ordinal-0 device
};

// What the job's coordination service last said of a process (PJRT_Client_UpdateGlobalProcessInfo).
struct ProcessState {
  enum class Kind { kUnspecified, kUninitialized, kDisconnected, kConnected, kError };
  int process_index = 0;
  uint64_t incarnation = 0;
  Kind kind = Kind::kUnspecified;
  std::string error;  // empty unless kind is kError
};

// Publishes `local` as process `process_index`'s devices and returns every process's, in
// process order, waiting up to `timeout` for the others. Processes on different platforms are
// an error naming both.
absl::StatusOr<std::vector<ProcessDevices>> ExchangeProcessDevices(
    collectives::KeyValueStore& store, int process_index, int process_count,
    const ProcessDevices& local, absl::Duration timeout);

}  // namespace ember::runtime

#endif  // EMBER_RUNTIME_PROCESS_TOPOLOGY_H_
