// Conversions between DeviceMemory's opaque pointer and the Driver API's CUdeviceptr integer.
#ifndef EMBER_STREAM_EXECUTOR_CUDA_CUDA_POINTER_H_
#define EMBER_STREAM_EXECUTOR_CUDA_CUDA_POINTER_H_

#include <cuda.h>

#include <cstdint>

#include "stream_executor/device_memory.h"

namespace ember::se::cuda {

inline CUdeviceptr ToCuDevicePtr(const void* opaque) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(opaque));
}
inline CUdeviceptr ToCuDevicePtr(DeviceMemory mem) { return ToCuDevicePtr(mem.opaque); }
inline void* FromCuDevicePtr(CUdeviceptr ptr) {
  return reinterpret_cast<void*>(static_cast<uintptr_t>(ptr));
}

}  // namespace ember::se::cuda

#endif  // EMBER_STREAM_EXECUTOR_CUDA_CUDA_POINTER_H_
