// DeviceMemory: an untyped, non-owning view of a region of one device's memory. Ownership stays
// with the Executor that allocated it (Executor::Allocate / Executor::Deallocate).
#ifndef EMBER_STREAM_EXECUTOR_DEVICE_MEMORY_H_
#define EMBER_STREAM_EXECUTOR_DEVICE_MEMORY_H_

#include <cstdint>

namespace ember::se {

struct DeviceMemory {
  void* opaque = nullptr;  // host pointer on the host platform, CUdeviceptr value on CUDA
  uint64_t size = 0;       // bytes the caller may use (the size it asked for)

  bool is_null() const { return opaque == nullptr; }
};

}  // namespace ember::se

#endif  // EMBER_STREAM_EXECUTOR_DEVICE_MEMORY_H_
