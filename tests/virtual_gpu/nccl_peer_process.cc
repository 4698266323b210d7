// A second process for nccl_test.cc's cross-process case: joins the communicator whose unique id
// it gets in hex on the command line as `rank` of `nranks`, on its own virtual GPU 0, all-reduces
// (sum, float32) `count` elements equal to rank + i * 0.5, and prints the first result element.
// Exit status 0 on success.
#include <cuda.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s <id-hex> <rank> <nranks> <count>\n", argv[0]);
    return 2;
  }
  ncclUniqueId id;
  const std::string hex = argv[1];
  if (hex.size() != 2 * sizeof(id.internal)) return 2;
  for (size_t i = 0; i < sizeof(id.internal); ++i) {
    id.internal[i] = static_cast<char>(std::strtoul(hex.substr(2 * i, 2).c_str(), nullptr, 16));
  }
  const int rank = std::atoi(argv[2]), nranks = std::atoi(argv[3]);
  const size_t count = std::strtoul(argv[4], nullptr, 10);
  CUcontext ctx = nullptr;
  if (cuInit(0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&ctx, 0) != CUDA_SUCCESS ||
      cuCtxPushCurrent(ctx) != CUDA_SUCCESS) {
    return 3;
  }
  ncclComm_t comm = nullptr;
  if (ncclCommInitRank(&comm, nranks, id, rank) != ncclSuccess) return 4;
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = static_cast<float>(rank + i * 0.5);
  CUdeviceptr buffer = 0;
  CUstream stream = nullptr;
  if (cuMemAlloc(&buffer, count * 4) != CUDA_SUCCESS || cuMemcpyHtoD(buffer, values.data(), count * 4) != CUDA_SUCCESS ||
      cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
    return 5;
  }
  void* p = reinterpret_cast<void*>(buffer);
  if (ncclAllReduce(p, p, count, ncclFloat32, ncclSum, comm, stream) != ncclSuccess) return 6;
  if (cuStreamSynchronize(stream) != CUDA_SUCCESS) return 7;
  if (cuMemcpyDtoH(values.data(), buffer, count * 4) != CUDA_SUCCESS) return 8;
  std::printf("%.3f\n", values[0]);
  ncclCommDestroy(comm);
  cuStreamDestroy(stream);
  cuMemFree(buffer);
  cuCtxPopCurrent(&ctx);
  cuDevicePrimaryCtxRelease(0);
  return 0;
}
