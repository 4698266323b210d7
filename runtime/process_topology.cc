#include "runtime/process_topology.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"

namespace ember::runtime {
namespace {

std::string Key(int process_index) { return absl::StrCat("ember/devices/", process_index); }

// "<count>\n<platform>\n<kind>": the kind goes last, so it may hold anything.
std::string Encode(const ProcessDevices& devices) {
  return absl::StrCat(devices.count, "\n", devices.platform, "\n", devices.kind);
}

absl::StatusOr<ProcessDevices> Decode(int process_index, const std::string& text) {
  std::vector<std::string> fields = absl::StrSplit(text, absl::MaxSplits('\n', 2));
  ProcessDevices devices;
  if (fields.size() != 3 || !absl::SimpleAtoi(fields[0], &devices.count) || devices.count < 0) {
    return absl::InvalidArgumentError(absl::StrCat("process ", process_index,
                                                   " published a malformed device list under '",
                                                   Key(process_index), "': \"", text, "\""));
  }
  devices.platform = fields[1];
  devices.kind = fields[2];
  return devices;
}

}  // namespace

absl::StatusOr<std::vector<ProcessDevices>> ExchangeProcessDevices(
    collectives::KeyValueStore& store, int process_index, int process_count,
    const ProcessDevices& local, absl::Duration timeout) {
  if (process_count < 1 || process_index < 0 || process_index >= process_count) {
    return absl::InvalidArgumentError(absl::StrCat("process ", process_index, " of ", process_count,
                                                   " is not a valid process index"));
  }
  EMBER_RETURN_IF_ERROR(store.Set(Key(process_index), Encode(local)));
  std::vector<ProcessDevices> all;
  int next_id = 0;
  for (int p = 0; p < process_count; ++p) {
    ProcessDevices devices = local;
    if (p != process_index) {
      absl::StatusOr<std::string> text = store.Get(Key(p), timeout);
      if (!text.ok()) {
        return absl::Status(
            text.status().code(),
            absl::StrCat("process ", process_index, " waited for the devices of process ", p,
                         " of ", process_count, ": ", text.status().message()));
      }
      EMBER_ASSIGN_OR_RETURN(devices, Decode(p, *text));
      if (devices.platform != local.platform) {
        return absl::FailedPreconditionError(
            absl::StrCat("process ", p, " runs Ember on ", devices.platform,
                         " devices and process ", process_index, " on ", local.platform,
                         " devices: every process of a job must use the same platform"));
      }
    }
    devices.first_id = next_id;
    next_id += devices.count;
    all.push_back(std::move(devices));
  }
  return all;
}

}  // namespace ember::runtime
