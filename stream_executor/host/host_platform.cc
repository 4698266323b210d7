#include "stream_executor/host/host_platform.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "stream_executor/host/host_executor.h"

namespace ember::se {
namespace {

class HostPlatform final : public Platform {
 public:
  explicit HostPlatform(std::vector<std::unique_ptr<host::HostExecutor>> executors)
      : executors_(std::move(executors)) {}

  std::string_view Name() const override { return "host"; }
  int DeviceCount() const override { return static_cast<int>(executors_.size()); }

  absl::StatusOr<Executor*> ExecutorForDevice(int ordinal) override {
    if (ordinal < 0 || ordinal >= DeviceCount()) {
      return absl::InvalidArgumentError(absl::StrCat("host platform: device ordinal ", ordinal,
                                                     " out of range [0, ", DeviceCount(), ")"));
    }
    return executors_[ordinal].get();
  }

 private:
  std::vector<std::unique_ptr<host::HostExecutor>> executors_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Platform>> CreateHostPlatform(
    int device_count, std::optional<int64_t> memory_limit_bytes) {
  if (device_count < 1 || device_count > kMaxHostDevices) {
    return absl::InvalidArgumentError(absl::StrCat("host platform: device count ", device_count,
                                                   " out of range [1, ", kMaxHostDevices, "]"));
  }
  if (memory_limit_bytes.has_value() && *memory_limit_bytes <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "host platform: memory limit must be positive, got ", *memory_limit_bytes, " bytes"));
  }
  std::vector<std::unique_ptr<host::HostExecutor>> executors;
  executors.reserve(device_count);
  for (int i = 0; i < device_count; ++i) {
    EMBER_ASSIGN_OR_RETURN(auto executor, host::HostExecutor::Create(i, memory_limit_bytes));
    executors.push_back(std::move(executor));
  }
  return std::make_unique<HostPlatform>(std::move(executors));
}

}  // namespace ember::se
