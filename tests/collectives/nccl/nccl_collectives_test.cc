// The NCCL transport on 4 virtual GPUs in one process (tests/virtual_gpu's libcuda.so.1 and
// libnccl.so.2), ranks as threads: every operation on device buffers and streams, against the
// in-process transport on the same random data, for several types and every reduction; the
// clique cache; errors found before NCCL is called; abort; a rank that never arrives.
#include "collectives/nccl/nccl_collectives.h"

#include <cuda.h>
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "collectives/in_process/in_process_collectives.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stream_executor/cuda/cuda_platform.h"

namespace ember::collectives::nccl {
namespace {

using ::testing::HasSubstr;
using Bytes = std::vector<uint8_t>;

constexpr int kRanks = 4;

// One collective as both transports run it: `send_bytes` and `recv_bytes` per rank, and the call.
struct Op {
  std::string name;
  size_t send_bytes = 0;
  size_t recv_bytes = 0;
  std::function<AsyncEventRef(Communicator&, int rank, se::DeviceMemory send,
                              se::DeviceMemory recv, se::Stream* stream)>
      run;
};

// Random values that keep every reduction exact and equal in both transports: small integers,
// floats in (-2, 2), pred bytes 0/1, anything for types that are only moved.
Bytes RandomElements(std::mt19937& rng, DataType type, size_t count) {
  std::uniform_int_distribution<int> small(1, 5);
  std::uniform_real_distribution<float> real(-2, 2);
  std::uniform_int_distribution<int> byte(0, 255);
  const size_t e = DataTypeBytes(type);
  Bytes out(count * e);
  for (size_t i = 0; i < count; ++i) {
    uint8_t* p = out.data() + i * e;
    switch (type) {
      case DataType::kF32: { float v = real(rng); std::memcpy(p, &v, 4); break; }
      case DataType::kF64: { double v = real(rng); std::memcpy(p, &v, 8); break; }
      case DataType::kC64: { float v[2] = {real(rng), real(rng)}; std::memcpy(p, v, 8); break; }
      case DataType::kC128: { double v[2] = {real(rng), real(rng)}; std::memcpy(p, v, 16); break; }
      case DataType::kBF16: {
        float v = real(rng);
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        const uint16_t top = static_cast<uint16_t>(bits >> 16);
        std::memcpy(p, &top, 2);
        break;
      }
      case DataType::kPred: *p = static_cast<uint8_t>(small(rng) & 1); break;
      case DataType::kF8E4M3FN: case DataType::kF8E5M2: case DataType::kS16: case DataType::kU16:
        for (size_t b = 0; b < e; ++b) p[b] = static_cast<uint8_t>(byte(rng));
        break;
      default: {
        const int64_t v = small(rng);  // little-endian: the low bytes hold the value
        std::memcpy(p, &v, e);
        break;
      }
    }
  }
  return out;
}

CliqueKey AllDevices() {
  CliqueKey key;
  for (int d = 0; d < kRanks; ++d) key.devices.push_back(d);
  return key;
}

class NcclCollectivesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("EMBER_VIRTUAL_GPU_COUNT", "4", /*overwrite=*/0);
    se::CudaPlatformOptions options;
    options.driver_library = EMBER_VIRTUAL_CUDA_DRIVER;
    options.library_directory = EMBER_VIRTUAL_GPU_LIB_DIR;
    auto platform = se::CreateCudaPlatform(options);
    ASSERT_TRUE(platform.ok()) << platform.status();
    platform_ = *std::move(platform);
    ASSERT_EQ(platform_->DeviceCount(), kRanks);
    auto transport = NcclCollectives::Create(*platform_, EMBER_VIRTUAL_GPU_LIB_DIR);
    ASSERT_TRUE(transport.ok()) << transport.status();
    transport_ = *std::move(transport);
    // The virtual NCCL's own hook (the same library instance the transport opened).
    void* nccl = dlopen(EMBER_VIRTUAL_GPU_LIB_DIR "/libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(nccl, nullptr) << dlerror();
    set_timeout_ms_ = reinterpret_cast<void (*)(int64_t)>(dlsym(nccl, "ember_vgpu_nccl_set_timeout_ms"));
    ASSERT_NE(set_timeout_ms_, nullptr);
    set_timeout_ms_(20000);
    for (int d = 0; d < kRanks; ++d) {
      auto executor = platform_->ExecutorForDevice(d);
      ASSERT_TRUE(executor.ok()) << executor.status();
      executors_.push_back(*executor);
      auto stream = (*executor)->CreateStream();
      ASSERT_TRUE(stream.ok()) << stream.status();
      streams_.push_back(*std::move(stream));
    }
  }

  void TearDown() override {
    streams_.clear();
    transport_.reset();
    platform_.reset();
    if (devices_faulted_) {
      // A failed NCCL operation faults the device, which stays faulted until it is reset.
      void* driver = dlopen(EMBER_VIRTUAL_CUDA_DRIVER, RTLD_NOW | RTLD_NOLOAD);
      ASSERT_NE(driver, nullptr);
      auto reset =
          reinterpret_cast<CUresult (*)(CUdevice)>(dlsym(driver, "cuDevicePrimaryCtxReset_v2"));
      ASSERT_NE(reset, nullptr);
      for (int d = 0; d < kRanks; ++d) EXPECT_EQ(reset(d), CUDA_SUCCESS);
    }
  }

  // The ops through NCCL on device memory, one thread per rank, all queued on the rank's stream
  // before it is synchronized; the recv buffers start as 0xab so that untouched bytes show.
  std::vector<std::vector<Bytes>> RunNccl(const std::vector<Op>& ops,
                                          const std::vector<std::vector<Bytes>>& inputs) {
    std::vector<std::vector<Bytes>> out(kRanks, std::vector<Bytes>(ops.size()));
    std::vector<std::thread> threads;
    for (int r = 0; r < kRanks; ++r) {
      threads.emplace_back([&, r] {
        auto comm = transport_->GetCommunicator(AllDevices(), RankId(r));
        ASSERT_TRUE(comm.ok()) << comm.status();
        se::Executor& executor = *executors_[r];
        se::Stream& stream = *streams_[r];
        std::vector<se::DeviceMemory> buffers;
        std::vector<AsyncEventRef> events;
        for (size_t i = 0; i < ops.size(); ++i) {
          auto send = executor.Allocate(std::max<size_t>(ops[i].send_bytes, 1));
          auto recv = executor.Allocate(std::max<size_t>(ops[i].recv_bytes, 1));
          ASSERT_TRUE(send.ok() && recv.ok());
          send->size = ops[i].send_bytes;
          recv->size = ops[i].recv_bytes;
          ASSERT_TRUE(executor.SynchronousMemcpyH2D(*send, inputs[r][i].data(), ops[i].send_bytes).ok());
          const Bytes garbage(ops[i].recv_bytes, 0xab);
          ASSERT_TRUE(executor.SynchronousMemcpyH2D(*recv, garbage.data(), garbage.size()).ok());
          buffers.push_back(*send);
          buffers.push_back(*recv);
          events.push_back(ops[i].run(**comm, r, *send, *recv, &stream));
        }
        const absl::Status synced = stream.BlockHostUntilDone();
        EXPECT_TRUE(synced.ok()) << synced;
        for (size_t i = 0; i < ops.size(); ++i) {
          const absl::Status status = events[i]->Await();
          EXPECT_TRUE(status.ok()) << ops[i].name << ": " << status;
          out[r][i].resize(ops[i].recv_bytes);
          EXPECT_TRUE(executor.SynchronousMemcpyD2H(out[r][i].data(), buffers[2 * i + 1],
                                                    ops[i].recv_bytes).ok());
        }
        for (se::DeviceMemory mem : buffers) executor.Deallocate(mem);
      });
    }
    for (std::thread& t : threads) t.join();
    return out;
  }

  // The same ops through the in-process transport on host memory.
  static std::vector<std::vector<Bytes>> RunReference(const std::vector<Op>& ops,
                                                      const std::vector<std::vector<Bytes>>& inputs) {
    InProcessCollectives hub;
    std::vector<std::vector<Bytes>> out(kRanks, std::vector<Bytes>(ops.size()));
    std::vector<std::thread> threads;
    for (int r = 0; r < kRanks; ++r) {
      threads.emplace_back([&, r] {
        auto comm = hub.GetCommunicator(AllDevices(), RankId(r));
        ASSERT_TRUE(comm.ok()) << comm.status();
        for (size_t i = 0; i < ops.size(); ++i) {
          Bytes send = inputs[r][i];
          out[r][i].assign(ops[i].recv_bytes, 0xab);
          const absl::Status status =
              ops[i].run(**comm, r, se::DeviceMemory{send.data(), send.size()},
                         se::DeviceMemory{out[r][i].data(), out[r][i].size()}, nullptr)->Await();
          EXPECT_TRUE(status.ok()) << ops[i].name << ": " << status;
        }
      });
    }
    for (std::thread& t : threads) t.join();
    return out;
  }

  // Runs `ops` through both transports on random inputs and compares every rank's result.
  void ExpectSameAsInProcess(const std::vector<Op>& ops, const std::vector<DataType>& types) {
    std::vector<std::vector<Bytes>> inputs(kRanks);
    for (int r = 0; r < kRanks; ++r) {
      for (size_t i = 0; i < ops.size(); ++i) {
        const size_t e = DataTypeBytes(types[i]);
        inputs[r].push_back(RandomElements(rng_, types[i], ops[i].send_bytes / e));
      }
    }
    const auto actual = RunNccl(ops, inputs);
    const auto expected = RunReference(ops, inputs);
    for (size_t i = 0; i < ops.size(); ++i) {
      for (int r = 0; r < kRanks; ++r) {
        EXPECT_EQ(actual[r][i], expected[r][i]) << ops[i].name << ", rank " << r;
      }
    }
  }

  // The ranks but `missing` run `issue` on a 64-byte buffer of their device, `missing` takes its
  // communicator and never calls; the ranks' results, awaited after their streams were
  // synchronized (after a device fault the events complete then).
  std::vector<absl::Status> RunWithoutRank(
      int missing, const std::function<AsyncEventRef(Communicator&, se::DeviceMemory, se::Stream*)>& issue) {
    std::vector<absl::Status> results(kRanks);
    std::vector<std::thread> threads;
    for (int r = 0; r < kRanks; ++r) {
      threads.emplace_back([&, r] {
        auto comm = transport_->GetCommunicator(AllDevices(), RankId(r));
        ASSERT_TRUE(comm.ok()) << comm.status();
        if (r == missing) return;
        auto buffer = executors_[r]->Allocate(64);
        ASSERT_TRUE(buffer.ok());
        AsyncEventRef done = issue(**comm, *buffer, streams_[r].get());
        EXPECT_FALSE(streams_[r]->BlockHostUntilDone().ok());
        results[r] = done->Await();
        executors_[r]->Deallocate(*buffer);
      });
    }
    for (std::thread& t : threads) t.join();
    return results;
  }

  std::unique_ptr<se::Platform> platform_;
  std::shared_ptr<NcclCollectives> transport_;
  std::vector<se::Executor*> executors_;
  std::vector<std::unique_ptr<se::Stream>> streams_;
  void (*set_timeout_ms_)(int64_t) = nullptr;
  bool devices_faulted_ = false;
  std::mt19937 rng_{17};
};

TEST_F(NcclCollectivesTest, ReductionsMatchTheInProcessTransport) {
  struct Case {
    DataType type;
    std::vector<ReductionKind> kinds;
  };
  const std::vector<ReductionKind> arithmetic = {ReductionKind::kSum, ReductionKind::kProduct,
                                                 ReductionKind::kMin, ReductionKind::kMax};
  const std::vector<Case> cases = {
      {DataType::kF32, arithmetic},
      {DataType::kBF16, arithmetic},
      {DataType::kF64, arithmetic},
      {DataType::kS32, arithmetic},
      {DataType::kU8, arithmetic},
      {DataType::kS64, arithmetic},
      {DataType::kPred, {ReductionKind::kSum, ReductionKind::kProduct, ReductionKind::kMin,
                         ReductionKind::kMax, ReductionKind::kAnd, ReductionKind::kOr}},
      {DataType::kC64, {ReductionKind::kSum}},
      {DataType::kC128, {ReductionKind::kSum}},
  };
  const size_t count = 6;
  std::vector<Op> ops;
  std::vector<DataType> types;
  for (const Case& c : cases) {
    const size_t e = DataTypeBytes(c.type);
    for (ReductionKind kind : c.kinds) {
      const std::string what = absl::StrCat(DataTypeName(c.type), " ", ReductionKindName(kind));
      const DataType type = c.type;
      ops.push_back({"all_reduce " + what, count * e, count * e,
                     [=](Communicator& comm, int, se::DeviceMemory s, se::DeviceMemory d,
                         se::Stream* stream) {
                       return comm.AllReduce(s, d, type, count, kind, stream);
                     }});
      ops.push_back({"reduce_scatter " + what, kRanks * count * e, count * e,
                     [=](Communicator& comm, int, se::DeviceMemory s, se::DeviceMemory d,
                         se::Stream* stream) {
                       return comm.ReduceScatter(s, d, type, count, kind, stream);
                     }});
      ops.push_back({"reduce " + what, count * e, count * e,
                     [=](Communicator& comm, int, se::DeviceMemory s, se::DeviceMemory d,
                         se::Stream* stream) {
                       return comm.Reduce(s, d, type, count, kind, RankId(2), stream);
                     }});
      types.insert(types.end(), 3, type);
    }
  }
  ExpectSameAsInProcess(ops, types);
}

TEST_F(NcclCollectivesTest, DataMovementMatchesTheInProcessTransport) {
  const size_t count = 5;
  std::vector<Op> ops;
  std::vector<DataType> types;
  for (DataType type : {DataType::kF32, DataType::kPred, DataType::kF8E4M3FN, DataType::kS16,
                        DataType::kC128, DataType::kU64}) {
    const size_t e = DataTypeBytes(type);
    const std::string what = DataTypeName(type);
    ops.push_back({"all_gather " + what, count * e, kRanks * count * e,
                   [=](Communicator& comm, int, se::DeviceMemory s, se::DeviceMemory d,
                       se::Stream* stream) { return comm.AllGather(s, d, type, count, stream); }});
    ops.push_back({"all_to_all " + what, kRanks * count * e, kRanks * count * e,
                   [=](Communicator& comm, int, se::DeviceMemory s, se::DeviceMemory d,
                       se::Stream* stream) { return comm.AllToAll(s, d, type, count, stream); }});
    ops.push_back({"broadcast " + what, count * e, count * e,
                   [=](Communicator& comm, int, se::DeviceMemory s, se::DeviceMemory d,
                       se::Stream* stream) {
                     return comm.Broadcast(s, d, type, count, RankId(1), stream);
                   }});
    // A ring shift: every rank sends to the next.
    ops.push_back({"ring permute " + what, count * e, count * e,
                   [=](Communicator& comm, int r, se::DeviceMemory s, se::DeviceMemory d,
                       se::Stream* stream) {
                     const RankId target((r + 1) % kRanks);
                     return comm.CollectivePermute(s, d, type, count,
                                                   RankId((r + kRanks - 1) % kRanks),
                                                   absl::MakeConstSpan(&target, 1), stream);
                   }});
    // 0 -> 1 and 0 -> 3, 2 -> 2 (itself); rank 0 receives nothing (zeros), rank 1 sends nothing.
    ops.push_back({"fan-out permute " + what, count * e, count * e,
                   [=](Communicator& comm, int r, se::DeviceMemory s, se::DeviceMemory d,
                       se::Stream* stream) {
                     const std::vector<std::vector<RankId>> targets = {
                         {RankId(1), RankId(3)}, {}, {RankId(2)}, {}};
                     const std::optional<RankId> sources[] = {std::nullopt, RankId(0), RankId(2),
                                                              RankId(0)};
                     return comm.CollectivePermute(s, d, type, count, sources[r], targets[r],
                                                   stream);
                   }});
    types.insert(types.end(), 5, type);
  }
  ExpectSameAsInProcess(ops, types);
}

TEST_F(NcclCollectivesTest, CliquesAreCachedPerDeviceListAndMapRanksToDevices) {
  auto first = transport_->GetCommunicator(AllDevices(), RankId(0));
  auto again = transport_->GetCommunicator(AllDevices(), RankId(3));
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_EQ(transport_->cliques_created(), 1);
  EXPECT_EQ((*again)->rank(), RankId(3));
  EXPECT_EQ((*again)->size(), kRanks);
  EXPECT_EQ((*again)->clique(), AllDevices());
  EXPECT_TRUE((*first)->HealthCheck().ok());

  // Two ranks on devices 3 and 1 (rank order is not device order): a sum lands on both.
  const CliqueKey pair{{3, 1}};
  const std::vector<float> values[2] = {{1, 2, 3}, {10, 20, 30}};
  std::vector<float> results[2];
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      auto comm = transport_->GetCommunicator(pair, RankId(r));
      ASSERT_TRUE(comm.ok()) << comm.status();
      se::Executor& executor = *executors_[pair.devices[r]];
      auto buffer = executor.Allocate(sizeof(float) * 3);
      ASSERT_TRUE(buffer.ok());
      ASSERT_TRUE(executor.SynchronousMemcpyH2D(*buffer, values[r].data(), buffer->size).ok());
      AsyncEventRef done = (*comm)->AllReduce(*buffer, *buffer, DataType::kF32, 3,
                                              ReductionKind::kSum,
                                              streams_[pair.devices[r]].get());
      EXPECT_TRUE(done->Await().ok()) << done->Await();
      results[r].resize(3);
      EXPECT_TRUE(executor.SynchronousMemcpyD2H(results[r].data(), *buffer, buffer->size).ok());
      executor.Deallocate(*buffer);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(transport_->cliques_created(), 2);
  for (int r = 0; r < 2; ++r) EXPECT_EQ(results[r], (std::vector<float>{11, 22, 33}));
  ASSERT_TRUE(transport_->GetCommunicator(pair, RankId(1)).ok());
  EXPECT_EQ(transport_->cliques_created(), 2) << "the pair's clique is reused";
}

TEST_F(NcclCollectivesTest, BadRequestsAreErrorsBeforeNcclIsCalled) {
  EXPECT_EQ(transport_->GetCommunicator(CliqueKey{{0, 0}}, RankId(0)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(transport_->GetCommunicator(CliqueKey{{0, 7}}, RankId(0)).status().message(),
              HasSubstr("no CUDA device 7"));
  EXPECT_EQ(transport_->GetCommunicator(AllDevices(), RankId(4)).status().code(),
            absl::StatusCode::kInvalidArgument);

  auto comm = transport_->GetCommunicator(AllDevices(), RankId(0));
  ASSERT_TRUE(comm.ok());
  auto buffer = executors_[0]->Allocate(64);
  ASSERT_TRUE(buffer.ok());
  se::Stream* stream = streams_[0].get();
  struct Bad {
    absl::Status status;
    absl::StatusCode code;
    const char* says;
  };
  const Bad cases[] = {
      {(*comm)->AllReduce(*buffer, *buffer, DataType::kF32, 4, ReductionKind::kSum, nullptr)->Await(),
       absl::StatusCode::kInvalidArgument, "NCCL needs a stream"},
      {(*comm)->AllReduce(*buffer, *buffer, DataType::kF32, 17, ReductionKind::kSum, stream)->Await(),
       absl::StatusCode::kInvalidArgument, "send holds 64 bytes, the operation needs 68"},
      {(*comm)->AllReduce(*buffer, *buffer, DataType::kS16, 4, ReductionKind::kSum, stream)->Await(),
       absl::StatusCode::kUnimplemented, "NCCL cannot reduce s16"},
      {(*comm)->AllReduce(*buffer, *buffer, DataType::kS32, 4, ReductionKind::kXor, stream)->Await(),
       absl::StatusCode::kUnimplemented, "no bitwise reductions"},
      {(*comm)->ReduceScatter(*buffer, *buffer, DataType::kF8E5M2, 4, ReductionKind::kMax, stream)->Await(),
       absl::StatusCode::kInvalidArgument, "is not defined on"},
      {(*comm)->Broadcast(*buffer, *buffer, DataType::kF32, 4, RankId(9), stream)->Await(),
       absl::StatusCode::kInvalidArgument, "root rank 9 out of range"},
  };
  for (const Bad& bad : cases) {
    EXPECT_EQ(bad.status.code(), bad.code) << bad.status;
    EXPECT_THAT(bad.status.message(), HasSubstr(bad.says));
    EXPECT_THAT(bad.status.message(), HasSubstr("devices [0,1,2,3], rank 0"));
  }
  EXPECT_TRUE((*comm)->HealthCheck().ok()) << "checks before NCCL leave the clique usable";
  executors_[0]->Deallocate(*buffer);
}

TEST_F(NcclCollectivesTest, AbortFailsTheCliqueAndANewOneIsMade) {
  auto comm = transport_->GetCommunicator(AllDevices(), RankId(1));
  ASSERT_TRUE(comm.ok());
  (*comm)->Abort(absl::CancelledError("device 2's part of the launch failed"));
  EXPECT_THAT((*comm)->HealthCheck().message(), HasSubstr("device 2's part of the launch failed"));
  auto buffer = executors_[1]->Allocate(16);
  ASSERT_TRUE(buffer.ok());
  const absl::Status after = (*comm)->AllGather(*buffer, *buffer, DataType::kF32, 1,
                                                streams_[1].get())->Await();
  EXPECT_EQ(after.code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(after.message(), HasSubstr("device 2's part of the launch failed"));
  auto renewed = transport_->GetCommunicator(AllDevices(), RankId(1));
  ASSERT_TRUE(renewed.ok());
  EXPECT_EQ(transport_->cliques_created(), 2);
  EXPECT_TRUE((*renewed)->HealthCheck().ok());
  executors_[1]->Deallocate(*buffer);
}

TEST_F(NcclCollectivesTest, ARankThatNeverArrivesTimesOutWithAClearError) {
  devices_faulted_ = true;
  set_timeout_ms_(2000);
  const std::vector<absl::Status> results =
      RunWithoutRank(kRanks - 1, [](Communicator& comm, se::DeviceMemory buffer, se::Stream* stream) {
        return comm.AllReduce(buffer, buffer, DataType::kF32, 16, ReductionKind::kMax, stream);
      });
  for (int r = 0; r + 1 < kRanks; ++r) {
    EXPECT_FALSE(results[r].ok());
    EXPECT_THAT(results[r].message(), HasSubstr("all_reduce (NCCL, devices [0,1,2,3], rank"));
    EXPECT_THAT(results[r].message(), HasSubstr("ncclAllReduce"));
    EXPECT_THAT(results[r].message(), HasSubstr("never issued it"));
  }
  // The failed clique is not handed out again; a new one cannot be made on the faulted devices.
  auto comm = transport_->GetCommunicator(AllDevices(), RankId(0));
  EXPECT_FALSE(comm.ok());
  EXPECT_THAT(comm.status().message(),
              HasSubstr("creating the NCCL communicators of devices [0,1,2,3]"));
  EXPECT_EQ(transport_->cliques_created(), 1);
}

// Real NCCL waits forever for a missing peer: the transport's own timeout aborts the clique.
TEST_F(NcclCollectivesTest, TheTransportsTimeoutAbortsACliqueWithAMissingRank) {
  devices_faulted_ = true;
  auto transport = NcclCollectives::Create(*platform_, EMBER_VIRTUAL_GPU_LIB_DIR, absl::Seconds(1));
  ASSERT_TRUE(transport.ok()) << transport.status();
  transport_ = *std::move(transport);
  const std::vector<absl::Status> results =
      RunWithoutRank(2, [](Communicator& comm, se::DeviceMemory buffer, se::Stream* stream) {
        return comm.AllGather(buffer, buffer, DataType::kBF16, 8, stream);
      });
  for (int r : {0, 1, 3}) {
    EXPECT_EQ(results[r].code(), absl::StatusCode::kDeadlineExceeded) << results[r];
    EXPECT_THAT(results[r].message(),
                HasSubstr(absl::StrCat("all_gather (NCCL, devices [0,1,2,3], rank ", r, "): ")));
    EXPECT_THAT(results[r].message(),
                HasSubstr("all_gather (NCCL operation #1 of devices [0,1,2,3]) timed out after 1s; "
                          "devices [2] never issued it"));
  }
}

}  // namespace
}  // namespace ember::collectives::nccl
