// Platform: a kind of device ("host" or "cuda") and the executors for its devices. Created
// explicitly through platform_factory.h; there is no static registration.
#ifndef EMBER_STREAM_EXECUTOR_PLATFORM_H_
#define EMBER_STREAM_EXECUTOR_PLATFORM_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "stream_executor/executor.h"

namespace ember::se {

class Platform {
 public:
  virtual ~Platform() = default;

  virtual std::string_view Name() const = 0;  // "host" or "cuda"
  virtual int DeviceCount() const = 0;
  // The executor is owned by the platform and lives as long as it. InvalidArgument for an ordinal
  // outside [0, DeviceCount()).
  virtual absl::StatusOr<Executor*> ExecutorForDevice(int ordinal) = 0;
};

}  // namespace ember::se

#endif  // EMBER_STREAM_EXECUTOR_PLATFORM_H_
