#include "tests/collectives/nccl/nccl_process_ranks.h"

#include <cstring>
#include <functional>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "collectives/nccl/nccl_collectives.h"
#include "stream_executor/cuda/cuda_platform.h"

namespace ember::collectives::nccl {
namespace {

using Bytes = std::vector<uint8_t>;

// One operation of the run: its inputs (per rank, from a seed) and what every rank must receive.
struct Step {
  std::string name;
  size_t send_bytes = 0;
  size_t recv_bytes = 0;
  std::function<AsyncEventRef(Communicator&, se::DeviceMemory, se::DeviceMemory, se::Stream*)> run;
  std::vector<Bytes> inputs;    // per rank
  std::vector<Bytes> expected;  // per rank
};

template <typename T>
Bytes AsBytes(const std::vector<T>& values) {
  Bytes out(values.size() * sizeof(T));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// Floats that are multiples of 1/64 in [-2, 2]: sums of four are exact in any order.
std::vector<float> Floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> q(-128, 128);
  std::vector<float> out(n);
  for (float& v : out) v = static_cast<float>(q(rng)) / 64.0f;
  return out;
}

template <typename T>
std::vector<T> Ints(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> d(-1'000'000'000LL, 1'000'000'000LL);
  std::vector<T> out(n);
  for (T& v : out) v = static_cast<T>(d(rng));
  return out;
}

std::vector<Step> Steps() {
  std::vector<Step> steps;
  constexpr int n = kJobRanks;
  {
    constexpr size_t count = 7;
    Step s{"all_reduce f32 sum",
           count * 4,
           count * 4,
           [](Communicator& c, se::DeviceMemory a, se::DeviceMemory b, se::Stream* st) {
             return c.AllReduce(a, b, DataType::kF32, count, ReductionKind::kSum, st);
           },
           {},
           {}};
    std::vector<float> sum(count, 0.0f);
    for (int r = 0; r < n; ++r) {
      std::vector<float> in = Floats(count, 100 + r);
      for (size_t i = 0; i < count; ++i) sum[i] += in[i];
      s.inputs.push_back(AsBytes(in));
    }
    s.expected.assign(n, AsBytes(sum));
    steps.push_back(std::move(s));
  }
  {
    constexpr size_t count = 5;
    Step s{"all_reduce s64 sum",
           count * 8,
           count * 8,
           [](Communicator& c, se::DeviceMemory a, se::DeviceMemory b, se::Stream* st) {
             return c.AllReduce(a, b, DataType::kS64, count, ReductionKind::kSum, st);
           },
           {},
           {}};
    std::vector<int64_t> sum(count, 0);
    for (int r = 0; r < n; ++r) {
      std::vector<int64_t> in = Ints<int64_t>(count, 200 + r);
      for (size_t i = 0; i < count; ++i) sum[i] += in[i];
      s.inputs.push_back(AsBytes(in));
    }
    s.expected.assign(n, AsBytes(sum));
    steps.push_back(std::move(s));
  }
  {
    constexpr size_t count = 3;
    Step s{"all_gather f32",
           count * 4,
           n * count * 4,
           [](Communicator& c, se::DeviceMemory a, se::DeviceMemory b, se::Stream* st) {
             return c.AllGather(a, b, DataType::kF32, count, st);
           },
           {},
           {}};
    std::vector<float> all;
    for (int r = 0; r < n; ++r) {
      std::vector<float> in = Floats(count, 300 + r);
      all.insert(all.end(), in.begin(), in.end());
      s.inputs.push_back(AsBytes(in));
    }
    s.expected.assign(n, AsBytes(all));
    steps.push_back(std::move(s));
  }
  {
    constexpr size_t count = 4;
    Step s{"reduce_scatter s32 sum",
           n * count * 4,
           count * 4,
           [](Communicator& c, se::DeviceMemory a, se::DeviceMemory b, se::Stream* st) {
             return c.ReduceScatter(a, b, DataType::kS32, count, ReductionKind::kSum, st);
           },
           {},
           {}};
    std::vector<int32_t> sum(n * count, 0);
    for (int r = 0; r < n; ++r) {
      // Small enough that the sum of four never overflows.
      std::vector<int32_t> in = Ints<int32_t>(n * count, 400 + r);
      for (int32_t& v : in) v /= 8;
      for (size_t i = 0; i < sum.size(); ++i) sum[i] += in[i];
      s.inputs.push_back(AsBytes(in));
    }
    for (int r = 0; r < n; ++r) {
      s.expected.push_back(
          AsBytes(std::vector<int32_t>(sum.begin() + r * count, sum.begin() + (r + 1) * count)));
    }
    steps.push_back(std::move(s));
  }
  {
    constexpr size_t count = 6;
    constexpr int root = 2;
    Step s{"broadcast f32 from rank 2",
           count * 4,
           count * 4,
           [](Communicator& c, se::DeviceMemory a, se::DeviceMemory b, se::Stream* st) {
             return c.Broadcast(a, b, DataType::kF32, count, RankId(root), st);
           },
           {},
           {}};
    for (int r = 0; r < n; ++r) s.inputs.push_back(AsBytes(Floats(count, 500 + r)));
    s.expected.assign(n, s.inputs[root]);
    steps.push_back(std::move(s));
  }
  return steps;
}

// One rank's run; what went wrong, or empty. `comm` keeps the rank's communicator.
std::string RunRank(NcclCollectives& transport, se::Platform& platform, int64_t first_device,
                    int rank, const std::vector<Step>& steps, std::shared_ptr<Communicator>& comm) {
  CliqueKey key;
  for (int d = 0; d < kJobRanks; ++d) key.devices.push_back(d);
  const std::string who = absl::StrCat("rank ", rank, ": ");
  absl::StatusOr<std::shared_ptr<Communicator>> got = transport.GetCommunicator(key, RankId(rank));
  if (!got.ok()) return absl::StrCat(who, got.status().ToString(), "\n");
  comm = *got;
  absl::StatusOr<se::Executor*> executor =
      platform.ExecutorForDevice(static_cast<int>(rank - first_device));
  if (!executor.ok()) return absl::StrCat(who, executor.status().ToString(), "\n");
  absl::StatusOr<std::unique_ptr<se::Stream>> stream = (*executor)->CreateStream();
  if (!stream.ok()) return absl::StrCat(who, stream.status().ToString(), "\n");
  std::string failures;
  std::vector<se::DeviceMemory> recvs, buffers;
  std::vector<AsyncEventRef> events;
  for (const Step& step : steps) {
    absl::StatusOr<se::DeviceMemory> send = (*executor)->Allocate(step.send_bytes);
    absl::StatusOr<se::DeviceMemory> recv = (*executor)->Allocate(step.recv_bytes);
    if (!send.ok() || !recv.ok()) return absl::StrCat(who, "cannot allocate\n");
    buffers.push_back(*send);
    buffers.push_back(*recv);
    send->size = step.send_bytes;
    recv->size = step.recv_bytes;
    const Bytes garbage(step.recv_bytes, 0xab);
    if (!(*executor)->SynchronousMemcpyH2D(*send, step.inputs[rank].data(), step.send_bytes).ok() ||
        !(*executor)->SynchronousMemcpyH2D(*recv, garbage.data(), step.recv_bytes).ok()) {
      return absl::StrCat(who, "cannot copy the inputs\n");
    }
    recvs.push_back(*recv);
    events.push_back(step.run(*comm, *send, *recv, stream->get()));
  }
  if (absl::Status synced = (*stream)->BlockHostUntilDone(); !synced.ok()) {
    absl::StrAppend(&failures, who, "stream: ", synced.ToString(), "\n");
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    if (absl::Status done = events[i]->Await(); !done.ok()) {
      absl::StrAppend(&failures, who, steps[i].name, ": ", done.ToString(), "\n");
      continue;
    }
    Bytes out(steps[i].recv_bytes);
    if (!(*executor)->SynchronousMemcpyD2H(out.data(), recvs[i], out.size()).ok()) {
      absl::StrAppend(&failures, who, steps[i].name, ": cannot copy the result\n");
    } else if (out != steps[i].expected[rank]) {
      absl::StrAppend(&failures, who, steps[i].name, ": wrong result\n");
    }
  }
  for (se::DeviceMemory mem : buffers) (*executor)->Deallocate(mem);
  return failures;
}

}  // namespace

absl::StatusOr<std::unique_ptr<se::Platform>> VirtualCudaPlatform() {
  se::CudaPlatformOptions options;
  options.driver_library = EMBER_VIRTUAL_CUDA_DRIVER;
  options.library_directory = EMBER_VIRTUAL_GPU_LIB_DIR;
  return se::CreateCudaPlatform(options);
}

std::string RunProcessRanks(se::Platform& platform, std::shared_ptr<KeyValueStore> store,
                            int64_t first_device, absl::Duration timeout, int rounds) {
  NcclTopology topology;
  topology.store = store;
  topology.first_device = first_device;
  topology.device_count = kProcessRanks;
  absl::StatusOr<std::shared_ptr<NcclCollectives>> transport =
      NcclCollectives::Create(platform, EMBER_VIRTUAL_GPU_LIB_DIR, timeout, topology);
  if (!transport.ok()) return transport.status().ToString();
  const std::vector<Step> steps = Steps();
  std::string failures;
  for (int round = 0; round < rounds; ++round) {
    absl::Mutex mu;
    std::vector<std::shared_ptr<Communicator>> comms(kProcessRanks);
    std::vector<std::thread> threads;
    for (int r = 0; r < kProcessRanks; ++r) {
      threads.emplace_back([&, r] {
        std::string failed = RunRank(**transport, platform, first_device,
                                     static_cast<int>(first_device) + r, steps, comms[r]);
        absl::MutexLock lock(&mu);
        if (!failed.empty()) absl::StrAppend(&failures, "round ", round, ", ", failed);
      });
    }
    for (std::thread& t : threads) t.join();
    if (round + 1 == rounds) break;
    // Every process is done with the round (no peer still reads this one's buffers) before the
    // clique is aborted; the next round's request then builds the next generation.
    const std::string done = absl::StrCat("test/round", round, "/done/");
    if (absl::Status set = store->Set(absl::StrCat(done, first_device), "1"); !set.ok()) {
      return absl::StrCat(failures, set.ToString(), "\n");
    }
    for (int64_t other = 0; other < kJobRanks; other += kProcessRanks) {
      if (other == first_device) continue;
      if (absl::StatusOr<std::string> got = store->Get(absl::StrCat(done, other), timeout);
          !got.ok()) {
        return absl::StrCat(failures, got.status().ToString(), "\n");
      }
    }
    for (std::shared_ptr<Communicator>& comm : comms) {
      if (comm == nullptr) continue;
      comm->Abort(absl::CancelledError(absl::StrCat("round ", round, " is over")));
      if (comm->HealthCheck().ok()) {
        absl::StrAppend(&failures, "round ", round, ": an aborted clique still looks healthy\n");
      }
    }
  }
  if ((*transport)->cliques_created() != rounds) {
    absl::StrAppend(&failures, (*transport)->cliques_created(), " cliques created in ", rounds,
                    " rounds\n");
  }
  return failures;
}

std::string JoinAndIdle(se::Platform& platform, std::shared_ptr<KeyValueStore> store,
                        int64_t first_device, absl::Duration timeout) {
  NcclTopology topology;
  topology.store = store;
  topology.first_device = first_device;
  topology.device_count = kProcessRanks;
  absl::StatusOr<std::shared_ptr<NcclCollectives>> transport =
      NcclCollectives::Create(platform, EMBER_VIRTUAL_GPU_LIB_DIR, timeout, topology);
  if (!transport.ok()) return transport.status().ToString();
  CliqueKey key;
  for (int d = 0; d < kJobRanks; ++d) key.devices.push_back(d);
  absl::Mutex mu;
  std::string failures;
  std::vector<std::shared_ptr<Communicator>> comms(kProcessRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kProcessRanks; ++r) {
    threads.emplace_back([&, r] {
      auto comm = (*transport)->GetCommunicator(key, RankId(static_cast<int>(first_device) + r));
      absl::MutexLock lock(&mu);
      if (comm.ok()) {
        comms[r] = *comm;
      } else {
        absl::StrAppend(&failures, comm.status().ToString(), "\n");
      }
    });
  }
  for (std::thread& t : threads) t.join();
  if (absl::StatusOr<std::string> released = store->Get("test/release", timeout); !released.ok()) {
    absl::StrAppend(&failures, released.status().ToString(), "\n");
  }
  return failures;
}

}  // namespace ember::collectives::nccl
