// Runs one function per NCCL rank on its own thread, each with its virtual GPU's context current
// and a stream of its own (used by nccl_test.cc and nccl_peer_process.cc).
#ifndef EMBER_TESTS_VIRTUAL_GPU_NCCL_TEST_RANKS_H_
#define EMBER_TESTS_VIRTUAL_GPU_NCCL_TEST_RANKS_H_

#include <cuda.h>

#include <functional>
#include <thread>
#include <vector>

namespace ember::vgpu::testing {

// `fn(rank, stream)` runs for ranks 0..n-1 on devices 0..n-1 at once; returns after all finished
// and their streams are synchronized. The primary contexts must already be retained.
inline void RunRanks(int n, const std::function<void(int rank, CUstream stream)>& fn) {
  std::vector<std::thread> threads;
  for (int rank = 0; rank < n; ++rank) {
    threads.emplace_back([rank, &fn] {
      CUcontext ctx = nullptr;
      cuDevicePrimaryCtxRetain(&ctx, rank);
      cuCtxPushCurrent(ctx);
      CUstream stream = nullptr;
      cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING);
      fn(rank, stream);
      cuStreamSynchronize(stream);
      cuStreamDestroy(stream);
      cuCtxPopCurrent(&ctx);
      cuDevicePrimaryCtxRelease(rank);
    });
  }
  for (std::thread& t : threads) t.join();
}

}  // namespace ember::vgpu::testing

#endif  // EMBER_TESTS_VIRTUAL_GPU_NCCL_TEST_RANKS_H_
