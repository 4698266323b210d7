// The virtual NCCL against the in-process collectives of collectives/in_process (the same data
// through both, ranks as threads): every collective, every NCCL type and reduction op, Send/Recv
// (collective permute and all-to-all through them), PreMulSum, ncclCommInitAll; then its strict
// checks: one thread driving several ranks outside a group, ranks whose calls differ, a rank that
// never comes (timeout), abort, and ranks in two processes.
#include <nccl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "collectives/in_process/in_process_collectives.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/virtual_gpu/nccl_test_ranks.h"
#include "tests/virtual_gpu/reference_math.h"
#include "tests/virtual_gpu/vgpu_test_util.h"

extern "C" const char* ember_vgpu_nccl_last_error(void);
extern "C" void ember_vgpu_nccl_set_timeout_ms(int64_t ms);

extern char** environ;

namespace ember::vgpu::testing {
namespace {

using ::testing::HasSubstr;

int ElementSize(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: case ncclUint8: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    default: return 8;
  }
}

bool IsFloatType(ncclDataType_t t) {
  return t == ncclFloat16 || t == ncclBfloat16 || t == ncclFloat32 || t == ncclFloat64;
}

double LoadValue(ncclDataType_t t, const uint8_t* p) {
  switch (t) {
    case ncclInt8: return static_cast<int8_t>(*p);
    case ncclUint8: return *p;
    case ncclInt32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case ncclUint32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    case ncclInt64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case ncclUint64: { uint64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case ncclFloat16: { uint16_t v; std::memcpy(&v, p, 2); return RefFromF16(v); }
    case ncclBfloat16: { uint16_t v; std::memcpy(&v, p, 2); return RefFromBF16(v); }
    case ncclFloat32: { float v; std::memcpy(&v, p, 4); return v; }
    default: { double v; std::memcpy(&v, p, 8); return v; }
  }
}

void StoreValue(ncclDataType_t t, uint8_t* p, double v) {
  switch (t) {
    case ncclInt8: { int8_t x = static_cast<int8_t>(static_cast<int64_t>(v)); std::memcpy(p, &x, 1); break; }
    case ncclUint8: { uint8_t x = static_cast<uint8_t>(static_cast<int64_t>(v)); std::memcpy(p, &x, 1); break; }
    case ncclInt32: { int32_t x = static_cast<int32_t>(static_cast<int64_t>(v)); std::memcpy(p, &x, 4); break; }
    case ncclUint32: { uint32_t x = static_cast<uint32_t>(static_cast<int64_t>(v)); std::memcpy(p, &x, 4); break; }
    case ncclInt64: { int64_t x = static_cast<int64_t>(v); std::memcpy(p, &x, 8); break; }
    case ncclUint64: { uint64_t x = static_cast<uint64_t>(v); std::memcpy(p, &x, 8); break; }
    case ncclFloat16: { uint16_t x = RefToF16(v); std::memcpy(p, &x, 2); break; }
    case ncclBfloat16: { uint16_t x = RefToBF16(v); std::memcpy(p, &x, 2); break; }
    case ncclFloat32: { float x = static_cast<float>(v); std::memcpy(p, &x, 4); break; }
    default: std::memcpy(p, &v, 8); break;
  }
}

// Small values so integer sums and products stay exact in every type.
std::vector<uint8_t> RandomBuffer(std::mt19937& rng, ncclDataType_t t, size_t count) {
  std::uniform_int_distribution<int> dist(1, 5);
  std::uniform_real_distribution<double> real(-2, 2);
  std::vector<uint8_t> bytes(count * ElementSize(t));
  for (size_t i = 0; i < count; ++i) {
    StoreValue(t, bytes.data() + i * ElementSize(t), IsFloatType(t) ? real(rng) : dist(rng));
  }
  return bytes;
}

collectives::DataType ToDataType(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: return collectives::DataType::kS8;
    case ncclUint8: return collectives::DataType::kU8;
    case ncclInt32: return collectives::DataType::kS32;
    case ncclUint32: return collectives::DataType::kU32;
    case ncclInt64: return collectives::DataType::kS64;
    case ncclUint64: return collectives::DataType::kU64;
    case ncclFloat16: return collectives::DataType::kF16;
    case ncclBfloat16: return collectives::DataType::kBF16;
    case ncclFloat32: return collectives::DataType::kF32;
    default: return collectives::DataType::kF64;
  }
}

// ncclAvg is a sum divided by the rank count at the end (DivideByRanks).
collectives::ReductionKind ToKind(ncclRedOp_t op) {
  switch (op) {
    case ncclProd: return collectives::ReductionKind::kProduct;
    case ncclMax: return collectives::ReductionKind::kMax;
    case ncclMin: return collectives::ReductionKind::kMin;
    default: return collectives::ReductionKind::kSum;
  }
}

void DivideByRanks(ncclDataType_t t, int nranks, std::vector<uint8_t>& bytes) {
  const int e = ElementSize(t);
  for (size_t i = 0; i < bytes.size() / e; ++i) {
    const double sum = LoadValue(t, bytes.data() + i * e);
    StoreValue(t, bytes.data() + i * e, IsFloatType(t) ? sum / nranks : std::trunc(sum / nranks));
  }
}

se::DeviceMemory Mem(std::vector<uint8_t>& bytes) { return se::DeviceMemory{bytes.data(), bytes.size()}; }

class NcclTest : public ::testing::Test {
 protected:
  void SetUp() override {
    EMBER_ASSERT_CU(cuInit(0));
    EMBER_ASSERT_CU(cuDeviceGetCount(&nranks_));
    ASSERT_GE(nranks_, 2);
    ember_vgpu_nccl_set_timeout_ms(20000);
  }

  // Runs `fn(rank, comm, stream)` on every rank of a fresh communicator (one thread per rank).
  void WithComms(const std::function<void(int, ncclComm_t, CUstream)>& fn) {
    ncclUniqueId id;
    ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
    RunRanks(nranks_, [&](int rank, CUstream stream) {
      ncclComm_t comm = nullptr;
      ASSERT_EQ(ncclCommInitRank(&comm, nranks_, id, rank), ncclSuccess) << ember_vgpu_nccl_last_error();
      fn(rank, comm, stream);
      const CUresult synced = cuStreamSynchronize(stream);
      if (faults_expected_) {
        // A failed NCCL operation leaves the context faulted: reset it for the tests that follow.
        EXPECT_EQ(cuDevicePrimaryCtxReset(rank), CUDA_SUCCESS);
      } else {
        EXPECT_EQ(synced, CUDA_SUCCESS) << CuErrorText(synced);
      }
      EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
    });
  }

  // The in-process collectives' answer for every rank: body(rank, communicator, input copy,
  // output) issues one operation on host memory (no stream: it runs on the rank's thread).
  template <class F>
  std::vector<std::vector<uint8_t>> Reference(const std::vector<std::vector<uint8_t>>& inputs, F&& body) {
    collectives::InProcessCollectives hub;
    collectives::CliqueKey key;
    for (int r = 0; r < nranks_; ++r) key.devices.push_back(r);
    std::vector<std::vector<uint8_t>> out(nranks_);
    std::vector<std::thread> threads;
    for (int r = 0; r < nranks_; ++r) {
      threads.emplace_back([&, r] {
        auto comm = hub.GetCommunicator(key, collectives::RankId(r));
        ASSERT_TRUE(comm.ok()) << comm.status();
        std::vector<uint8_t> in = inputs[r];
        absl::Status status = body(r, **comm, in, out[r])->Await();
        EXPECT_TRUE(status.ok()) << status;
      });
    }
    for (auto& t : threads) t.join();
    return out;
  }

  int nranks_ = 0;
  bool faults_expected_ = false;
  std::mt19937 rng_{7};
};

CUdeviceptr DeviceCopy(const std::vector<uint8_t>& bytes) {
  CUdeviceptr p = 0;
  EXPECT_EQ(cuMemAlloc(&p, std::max<size_t>(bytes.size(), 1)), CUDA_SUCCESS);
  if (!bytes.empty()) {
    EXPECT_EQ(cuMemcpyHtoD(p, bytes.data(), bytes.size()), CUDA_SUCCESS);
  }
  return p;
}
std::vector<uint8_t> HostCopy(CUdeviceptr p, size_t bytes) {
  std::vector<uint8_t> out(bytes);
  if (bytes > 0) {
    EXPECT_EQ(cuMemcpyDtoH(out.data(), p, bytes), CUDA_SUCCESS);
  }
  return out;
}
void* Ptr(CUdeviceptr p) { return reinterpret_cast<void*>(p); }

constexpr ncclDataType_t kTypes[] = {ncclInt8, ncclUint8, ncclInt32, ncclUint32, ncclInt64,
                                     ncclUint64, ncclFloat16, ncclFloat32, ncclFloat64, ncclBfloat16};
constexpr ncclRedOp_t kOps[] = {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg};

TEST_F(NcclTest, ReductionsMatchTheInProcessCollectivesForEveryTypeAndOp) {
  const size_t count = 12;
  for (ncclDataType_t type : kTypes) {
    for (ncclRedOp_t op : kOps) {
      SCOPED_TRACE(absl::StrCat("type ", type, " op ", op));
      const int e = ElementSize(type);
      std::vector<std::vector<uint8_t>> inputs(nranks_);
      for (auto& in : inputs) in = RandomBuffer(rng_, type, count * nranks_);
      const std::vector<uint8_t> zeros(count * nranks_ * e, 0);
      std::vector<std::vector<uint8_t>> all_reduced(nranks_), scattered(nranks_), reduced(nranks_);
      WithComms([&](int rank, ncclComm_t comm, CUstream stream) {
        CUdeviceptr send = DeviceCopy(inputs[rank]), ar = DeviceCopy(zeros), rs = DeviceCopy(zeros), rd = DeviceCopy(zeros);
        ASSERT_EQ(ncclAllReduce(Ptr(send), Ptr(ar), count * nranks_, type, op, comm, stream), ncclSuccess);
        ASSERT_EQ(ncclReduceScatter(Ptr(send), Ptr(rs), count, type, op, comm, stream), ncclSuccess);
        ASSERT_EQ(ncclReduce(Ptr(send), Ptr(rd), count * nranks_, type, op, 1, comm, stream), ncclSuccess);
        ASSERT_EQ(cuStreamSynchronize(stream), CUDA_SUCCESS);
        all_reduced[rank] = HostCopy(ar, count * nranks_ * e);
        scattered[rank] = HostCopy(rs, count * e);
        reduced[rank] = HostCopy(rd, count * nranks_ * e);
        for (CUdeviceptr p : {send, ar, rs, rd}) cuMemFree(p);
      });
      const collectives::DataType dt = ToDataType(type);
      const collectives::ReductionKind kind = ToKind(op);
      using Bytes = std::vector<uint8_t>;
      auto expected_ar = Reference(inputs, [&](int, collectives::Communicator& c, Bytes& in, Bytes& out) {
        out.resize(count * nranks_ * e);
        return c.AllReduce(Mem(in), Mem(out), dt, count * nranks_, kind, nullptr);
      });
      auto expected_rs = Reference(inputs, [&](int, collectives::Communicator& c, Bytes& in, Bytes& out) {
        out.resize(count * e);
        return c.ReduceScatter(Mem(in), Mem(out), dt, count, kind, nullptr);
      });
      auto expected_rd = Reference(inputs, [&](int, collectives::Communicator& c, Bytes& in, Bytes& out) {
        out.resize(count * nranks_ * e);
        return c.Reduce(Mem(in), Mem(out), dt, count * nranks_, kind, collectives::RankId(1), nullptr);
      });
      if (op == ncclAvg) {
        for (auto* expected : {&expected_ar, &expected_rs, &expected_rd}) {
          for (Bytes& bytes : *expected) DivideByRanks(type, nranks_, bytes);
        }
      }
      for (int r = 0; r < nranks_; ++r) {
        EXPECT_EQ(all_reduced[r], expected_ar[r]) << "AllReduce rank " << r;
        EXPECT_EQ(scattered[r], expected_rs[r]) << "ReduceScatter rank " << r;
        if (r == 1) {
          EXPECT_EQ(reduced[r], expected_rd[r]) << "Reduce root";
        }
        if (r != 1) {
          EXPECT_EQ(reduced[r], zeros) << "Reduce leaves non-roots untouched";
        }
      }
    }
  }
}

TEST_F(NcclTest, DataMovementMatchesTheInProcessCollectives) {
  const size_t count = 10;
  const ncclDataType_t type = ncclFloat32;
  const int e = 4;
  std::vector<std::vector<uint8_t>> inputs(nranks_);
  for (auto& in : inputs) in = RandomBuffer(rng_, type, count * nranks_);
  std::vector<std::vector<uint8_t>> gathered(nranks_), broadcast(nranks_), all_to_all(nranks_), permuted(nranks_),
      p2p_all_to_all(nranks_);
  WithComms([&](int rank, ncclComm_t comm, CUstream stream) {
    CUdeviceptr send = DeviceCopy(inputs[rank]);
    CUdeviceptr ag = DeviceCopy(std::vector<uint8_t>(count * nranks_ * e)), bc = DeviceCopy(std::vector<uint8_t>(count * e));
    CUdeviceptr a2a = DeviceCopy(std::vector<uint8_t>(count * nranks_ * e)), perm = DeviceCopy(std::vector<uint8_t>(count * e));
    CUdeviceptr pa2a = DeviceCopy(std::vector<uint8_t>(count * nranks_ * e));
    ASSERT_EQ(ncclAllGather(Ptr(send), Ptr(ag), count, type, comm, stream), ncclSuccess);
    ASSERT_EQ(ncclBroadcast(Ptr(send), Ptr(bc), count, type, nranks_ - 1, comm, stream), ncclSuccess);
    ASSERT_EQ(ncclAlltoAll(Ptr(send), Ptr(a2a), count, type, comm, stream), ncclSuccess);
    // Collective permute (a ring shift) through Send/Recv in a group.
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    ASSERT_EQ(ncclSend(Ptr(send), count, type, (rank + 1) % nranks_, comm, stream), ncclSuccess);
    ASSERT_EQ(ncclRecv(Ptr(perm), count, type, (rank + nranks_ - 1) % nranks_, comm, stream), ncclSuccess);
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
    // All-to-all through Send/Recv.
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    for (int peer = 0; peer < nranks_; ++peer) {
      if (peer == rank) continue;
      ASSERT_EQ(ncclSend(Ptr(send + peer * count * e), count, type, peer, comm, stream), ncclSuccess);
      ASSERT_EQ(ncclRecv(Ptr(pa2a + peer * count * e), count, type, peer, comm, stream), ncclSuccess);
    }
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
    ASSERT_EQ(cuMemcpyDtoDAsync(pa2a + rank * count * e, send + rank * count * e, count * e, stream), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamSynchronize(stream), CUDA_SUCCESS);
    gathered[rank] = HostCopy(ag, count * nranks_ * e);
    broadcast[rank] = HostCopy(bc, count * e);
    all_to_all[rank] = HostCopy(a2a, count * nranks_ * e);
    permuted[rank] = HostCopy(perm, count * e);
    p2p_all_to_all[rank] = HostCopy(pa2a, count * nranks_ * e);
    for (CUdeviceptr p : {send, ag, bc, a2a, perm, pa2a}) cuMemFree(p);
  });
  using Bytes = std::vector<uint8_t>;
  const collectives::DataType dt = ToDataType(type);
  auto expected_ag = Reference(inputs, [&](int, collectives::Communicator& c, Bytes& in, Bytes& out) {
    out.resize(count * nranks_ * e);
    return c.AllGather(Mem(in), Mem(out), dt, count, nullptr);
  });
  auto expected_bc = Reference(inputs, [&](int, collectives::Communicator& c, Bytes& in, Bytes& out) {
    out.resize(count * e);
    return c.Broadcast(Mem(in), Mem(out), dt, count, collectives::RankId(nranks_ - 1), nullptr);
  });
  auto expected_a2a = Reference(inputs, [&](int, collectives::Communicator& c, Bytes& in, Bytes& out) {
    out.resize(count * nranks_ * e);
    return c.AllToAll(Mem(in), Mem(out), dt, count, nullptr);
  });
  auto expected_perm = Reference(inputs, [&](int r, collectives::Communicator& c, Bytes& in, Bytes& out) {
    out.resize(count * e);
    const collectives::RankId target((r + 1) % nranks_);
    return c.CollectivePermute(Mem(in), Mem(out), dt, count, collectives::RankId((r + nranks_ - 1) % nranks_),
                               absl::MakeConstSpan(&target, 1), nullptr);
  });
  for (int r = 0; r < nranks_; ++r) {
    EXPECT_EQ(gathered[r], expected_ag[r]) << "AllGather rank " << r;
    EXPECT_EQ(broadcast[r], expected_bc[r]) << "Broadcast rank " << r;
    EXPECT_EQ(all_to_all[r], expected_a2a[r]) << "AlltoAll rank " << r;
    EXPECT_EQ(permuted[r], expected_perm[r]) << "permute rank " << r;
    EXPECT_EQ(p2p_all_to_all[r], expected_a2a[r]) << "Send/Recv all-to-all rank " << r;
  }
}

TEST_F(NcclTest, InitAllAndOneThreadDrivingAllRanksInAGroup) {
  std::vector<ncclComm_t> comms(nranks_);
  ASSERT_EQ(ncclCommInitAll(comms.data(), nranks_, nullptr), ncclSuccess) << ember_vgpu_nccl_last_error();
  std::vector<CUcontext> ctxs(nranks_);
  std::vector<CUstream> streams(nranks_);
  std::vector<CUdeviceptr> buffers(nranks_);
  const size_t count = 8;
  for (int r = 0; r < nranks_; ++r) {
    EMBER_ASSERT_CU(cuDevicePrimaryCtxRetain(&ctxs[r], r));
    EMBER_ASSERT_CU(cuCtxPushCurrent(ctxs[r]));
    EMBER_ASSERT_CU(cuStreamCreate(&streams[r], CU_STREAM_NON_BLOCKING));
    std::vector<float> values(count, static_cast<float>(r + 1));
    EMBER_ASSERT_CU(cuMemAlloc(&buffers[r], count * 4));
    EMBER_ASSERT_CU(cuMemcpyHtoD(buffers[r], values.data(), count * 4));
    int device = -1;
    ASSERT_EQ(ncclCommCuDevice(comms[r], &device), ncclSuccess);
    EXPECT_EQ(device, r);
    CUcontext popped;
    EMBER_ASSERT_CU(cuCtxPopCurrent(&popped));
  }
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < nranks_; ++r) {
    EMBER_ASSERT_CU(cuCtxPushCurrent(ctxs[r]));
    ASSERT_EQ(ncclAllReduce(Ptr(buffers[r]), Ptr(buffers[r]), count, ncclFloat32, ncclSum, comms[r], streams[r]), ncclSuccess);
    CUcontext popped;
    EMBER_ASSERT_CU(cuCtxPopCurrent(&popped));
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ember_vgpu_nccl_last_error();
  const float expected = nranks_ * (nranks_ + 1) / 2.0f;
  for (int r = 0; r < nranks_; ++r) {
    EMBER_ASSERT_CU(cuCtxPushCurrent(ctxs[r]));
    EMBER_ASSERT_CU(cuStreamSynchronize(streams[r]));
    std::vector<float> out(count);
    EMBER_ASSERT_CU(cuMemcpyDtoH(out.data(), buffers[r], count * 4));
    EXPECT_EQ(out, std::vector<float>(count, expected));
    // The same calls outside a group deadlock real NCCL: refused, naming the ranks.
    if (r == 1) {
      const ncclResult_t result = ncclAllReduce(Ptr(buffers[r]), Ptr(buffers[r]), count, ncclFloat32, ncclSum, comms[r], streams[r]);
      EXPECT_EQ(result, ncclSuccess) << "rank 1 alone is fine: " << ember_vgpu_nccl_last_error();
    }
    CUcontext popped;
    EMBER_ASSERT_CU(cuCtxPopCurrent(&popped));
  }
  EMBER_ASSERT_CU(cuCtxPushCurrent(ctxs[0]));
  const ncclResult_t second = ncclAllReduce(Ptr(buffers[0]), Ptr(buffers[0]), count, ncclFloat32, ncclSum, comms[0], streams[0]);
  EXPECT_EQ(second, ncclInvalidUsage);
  EXPECT_THAT(ember_vgpu_nccl_last_error(), HasSubstr("ranks 1 and 0 of one communicator outside ncclGroupStart"));
  CUcontext popped;
  EMBER_ASSERT_CU(cuCtxPopCurrent(&popped));
  // Rank 1's lone all-reduce never meets the others: abort it, then tear down.
  for (int r = 0; r < nranks_; ++r) EXPECT_EQ(ncclCommAbort(comms[r]), ncclSuccess);
  for (int r = 0; r < nranks_; ++r) {
    EMBER_ASSERT_CU(cuCtxPushCurrent(ctxs[r]));
    cuStreamSynchronize(streams[r]);
    EMBER_ASSERT_CU(cuCtxPopCurrent(&popped));
    EMBER_ASSERT_CU(cuDevicePrimaryCtxReset(r));
    EMBER_ASSERT_CU(cuDevicePrimaryCtxRelease(r));
  }
}

TEST_F(NcclTest, RanksWhoseCallsDifferAreAnErrorNamingBoth) {
  faults_expected_ = true;
  std::vector<std::string> errors(nranks_);
  std::vector<CUresult> stream_results(nranks_);
  WithComms([&](int rank, ncclComm_t comm, CUstream stream) {
    CUdeviceptr buffer = DeviceCopy(std::vector<uint8_t>(64 * nranks_, 1));
    if (rank == 0) {
      ASSERT_EQ(ncclAllGather(Ptr(buffer), Ptr(buffer), 16, ncclFloat32, comm, stream), ncclSuccess);
    } else {
      ASSERT_EQ(ncclAllReduce(Ptr(buffer), Ptr(buffer), 16, ncclFloat32, ncclSum, comm, stream), ncclSuccess);
    }
    stream_results[rank] = cuStreamSynchronize(stream);
    ncclResult_t async = ncclSuccess;
    EXPECT_EQ(ncclCommGetAsyncError(comm, &async), ncclSuccess);
    EXPECT_NE(async, ncclSuccess);
    errors[rank] = ncclGetLastError(comm);
  });
  for (int r = 0; r < nranks_; ++r) {
    EXPECT_EQ(stream_results[r], CUDA_ERROR_LAUNCH_FAILED);
    EXPECT_THAT(errors[r], HasSubstr("collective #1 differs between ranks"));
    EXPECT_THAT(errors[r], HasSubstr("AllGather(count 16, float32)"));
    EXPECT_THAT(errors[r], HasSubstr("AllReduce(count 16, float32, sum)"));
  }
}

TEST_F(NcclTest, ARankThatNeverComesTimesOut) {
  faults_expected_ = true;
  std::vector<std::string> errors(nranks_);
  WithComms([&](int rank, ncclComm_t comm, CUstream stream) {
    // Short, but only once every rank has joined (a loaded machine may take a while for that).
    ember_vgpu_nccl_set_timeout_ms(3000);
    if (rank == nranks_ - 1) return;  // never calls
    CUdeviceptr buffer = DeviceCopy(std::vector<uint8_t>(64, 1));
    ASSERT_EQ(ncclAllReduce(Ptr(buffer), Ptr(buffer), 16, ncclFloat32, ncclMax, comm, stream), ncclSuccess);
    cuStreamSynchronize(stream);
    errors[rank] = ncclGetLastError(comm);
  });
  // Normally the missing rank is the last one; on a starved machine a slow rank may be named
  // first, which is a right answer too.
  EXPECT_THAT(errors[0], HasSubstr("never issued it"));
  EXPECT_THAT(errors[0], HasSubstr("waited in AllReduce(count 16, float32, max) (collective #1)"));
}

// One rank's in-place AllReduce of `values` with a PreMulSum op of `scale` (a host scalar).
template <class T>
void PreMulAllReduce(std::vector<T>& values, T scale, ncclDataType_t type, ncclComm_t comm, CUstream stream) {
  const size_t bytes = values.size() * sizeof(T);
  CUdeviceptr buffer = 0;
  ASSERT_EQ(cuMemAlloc(&buffer, bytes), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyHtoD(buffer, values.data(), bytes), CUDA_SUCCESS);
  ncclRedOp_t op;
  ASSERT_EQ(ncclRedOpCreatePreMulSum(&op, &scale, type, ncclScalarHostImmediate, comm), ncclSuccess);
  ASSERT_EQ(ncclAllReduce(Ptr(buffer), Ptr(buffer), values.size(), type, op, comm, stream), ncclSuccess);
  ASSERT_EQ(cuStreamSynchronize(stream), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyDtoH(values.data(), buffer, bytes), CUDA_SUCCESS);
  EXPECT_EQ(ncclRedOpDestroy(op, comm), ncclSuccess);
  cuMemFree(buffer);
}

TEST_F(NcclTest, PreMulSumScalesBeforeSumming) {
  const int count = 6;
  std::vector<std::vector<float>> floats(nranks_, std::vector<float>(count));
  std::vector<std::vector<int32_t>> ints(nranks_, std::vector<int32_t>(count));
  WithComms([&](int rank, ncclComm_t comm, CUstream stream) {
    for (int i = 0; i < count; ++i) {
      floats[rank][i] = static_cast<float>(rank * 10 + i);
      ints[rank][i] = rank * 7 - i;
    }
    PreMulAllReduce(floats[rank], 0.25f, ncclFloat32, comm, stream);
    // Integers: every rank's input is scaled, the first one included.
    PreMulAllReduce(ints[rank], int32_t{3}, ncclInt32, comm, stream);
  });
  for (int i = 0; i < count; ++i) {
    double expected = 0;
    int32_t int_expected = 0;
    for (int r = 0; r < nranks_; ++r) {
      expected += 0.25 * (r * 10 + i);
      int_expected += 3 * (r * 7 - i);
    }
    for (int r = 0; r < nranks_; ++r) {
      EXPECT_EQ(floats[r][i], static_cast<float>(expected)) << "rank " << r;
      EXPECT_EQ(ints[r][i], int_expected) << "rank " << r;
    }
  }
}

TEST_F(NcclTest, RanksInTwoProcesses) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  std::string hex;
  for (char c : id.internal) absl::StrAppend(&hex, absl::Hex(static_cast<uint8_t>(c), absl::kZeroPad2));
  const size_t count = 16;
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  const std::string count_text = std::to_string(count);
  std::vector<char*> argv = {const_cast<char*>(EMBER_VGPU_NCCL_PEER), hex.data(), const_cast<char*>("1"),
                             const_cast<char*>("2"), const_cast<char*>(count_text.c_str()), nullptr};
  pid_t child = 0;
  ASSERT_EQ(posix_spawn(&child, EMBER_VGPU_NCCL_PEER, &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  std::vector<float> result(count);
  RunRanks(1, [&](int rank, CUstream stream) {
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, 2, id, 0), ncclSuccess) << ember_vgpu_nccl_last_error();
    std::vector<float> values(count);
    for (size_t i = 0; i < count; ++i) values[i] = static_cast<float>(rank + i * 0.5);
    CUdeviceptr buffer = 0;
    ASSERT_EQ(cuMemAlloc(&buffer, count * 4), CUDA_SUCCESS);
    ASSERT_EQ(cuMemcpyHtoD(buffer, values.data(), count * 4), CUDA_SUCCESS);
    ASSERT_EQ(ncclAllReduce(Ptr(buffer), Ptr(buffer), count, ncclFloat32, ncclSum, comm, stream), ncclSuccess);
    ASSERT_EQ(cuStreamSynchronize(stream), CUDA_SUCCESS);
    ASSERT_EQ(cuMemcpyDtoH(result.data(), buffer, count * 4), CUDA_SUCCESS);
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
    cuMemFree(buffer);
  });
  char text[64] = {};
  const ssize_t n = read(pipe_fds[0], text, sizeof(text) - 1);
  close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the peer process crashed";
  EXPECT_EQ(WEXITSTATUS(status), 0);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(text, n), "1.000\n");  // rank 0's 0.0 + rank 1's 1.0
  for (size_t i = 0; i < count; ++i) EXPECT_EQ(result[i], static_cast<float>(1 + i * 1.0)) << i;
}

}  // namespace
}  // namespace ember::vgpu::testing
