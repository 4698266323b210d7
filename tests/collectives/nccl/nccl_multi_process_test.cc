// The NCCL transport with a clique spread over processes, on the virtual GPU: this process and a
// peer process (ember_nccl_process_ranks_peer) each own two GPUs of a four-rank clique and meet
// through a file-backed key-value store; every rank checks its results, over two generations of
// the clique. A process whose peers never arrive, or whose rank-0 process never publishes the
// unique id, gets a timeout naming the clique and the rank it waited for, without hanging.
#include <cuda.h>
#include <dlfcn.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "collectives/key_value_store.h"
#include "collectives/nccl/nccl_collectives.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/collectives/collectives_test_util.h"
#include "tests/collectives/file_key_value_store.h"
#include "tests/collectives/nccl/nccl_process_ranks.h"

extern char** environ;

namespace ember::collectives::nccl {
namespace {

using ::ember::collectives::test_util::WaitChild;
using ::testing::HasSubstr;

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/ember_nccl_test_XXXXXX";
    path_ = mkdtemp(pattern) != nullptr ? pattern : "";
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Starts the peer process with `args` and its own number of virtual GPUs; -1 when it cannot.
pid_t SpawnPeer(const std::vector<std::string>& args, int gpus) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (entry.rfind("EMBER_VIRTUAL_GPU_COUNT=", 0) == 0) continue;
    if (entry.rfind("EMBER_VIRTUAL_NCCL_TIMEOUT_SECONDS=", 0) == 0) continue;
    env_strings.push_back(entry);
  }
  env_strings.push_back(absl::StrCat("EMBER_VIRTUAL_GPU_COUNT=", gpus));
  // The virtual NCCL's own waits end well before the test gives up on the peer.
  env_strings.push_back("EMBER_VIRTUAL_NCCL_TIMEOUT_SECONDS=20");
  std::vector<char*> env, argv;
  for (std::string& s : env_strings) env.push_back(s.data());
  env.push_back(nullptr);
  std::string program = EMBER_NCCL_PROCESS_RANKS_PEER;
  std::vector<std::string> arg_strings = args;
  argv.push_back(program.data());
  for (std::string& s : arg_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, program.c_str(), nullptr, nullptr, argv.data(), env.data()) != 0) {
    return -1;
  }
  return pid;
}

CliqueKey FourRanks() { return CliqueKey{{0, 1, 2, 3}}; }

class NcclMultiProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("EMBER_VIRTUAL_GPU_COUNT", "4", /*overwrite=*/0);
    auto platform = VirtualCudaPlatform();
    ASSERT_TRUE(platform.ok()) << platform.status();
    platform_ = *std::move(platform);
    ASSERT_GE(platform_->DeviceCount(), kProcessRanks);
  }

  // A transport owning global devices [first, first + 2) of this process's platform.
  std::shared_ptr<NcclCollectives> Transport(std::shared_ptr<KeyValueStore> store, int64_t first,
                                             absl::Duration timeout) {
    NcclTopology topology;
    topology.store = std::move(store);
    topology.first_device = first;
    topology.device_count = kProcessRanks;
    auto transport =
        NcclCollectives::Create(*platform_, EMBER_VIRTUAL_GPU_LIB_DIR, timeout, topology);
    EXPECT_TRUE(transport.ok()) << transport.status();
    return transport.ok() ? *transport : nullptr;
  }

  void TearDown() override {
    platform_.reset();
    if (devices_faulted_) {
      // A failed NCCL operation faults this process's devices until they are reset.
      void* driver = dlopen(EMBER_VIRTUAL_CUDA_DRIVER, RTLD_NOW | RTLD_NOLOAD);
      ASSERT_NE(driver, nullptr);
      auto reset =
          reinterpret_cast<CUresult (*)(CUdevice)>(dlsym(driver, "cuDevicePrimaryCtxReset_v2"));
      ASSERT_NE(reset, nullptr);
      for (int d = 0; d < kProcessRanks; ++d) EXPECT_EQ(reset(d), CUDA_SUCCESS);
    }
  }

  std::unique_ptr<se::Platform> platform_;
  bool devices_faulted_ = false;
};

TEST_F(NcclMultiProcessTest, TwoProcessesOfTwoGpusOverTwoGenerations) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const absl::Time start = absl::Now();
  const pid_t peer = SpawnPeer({dir.path(), "2", "20", "2"}, /*gpus=*/2);
  ASSERT_GT(peer, 0);
  auto store = std::make_shared<FileKeyValueStore>(dir.path());
  EXPECT_EQ(RunProcessRanks(*platform_, store, /*first_device=*/0, absl::Seconds(20),
                            /*rounds=*/2),
            "");
  EXPECT_EQ(WaitChild(peer, absl::Seconds(30)), 0) << "the peer process (ranks 2 and 3)";
  std::cout << "two processes, two generations: " << absl::FormatDuration(absl::Now() - start)
            << "\n";
  // Rank 0's process published an id per generation, under the clique's and generation's keys.
  for (int generation : {0, 1}) {
    const std::string key = absl::StrCat(NcclCollectives::KeyPrefix(FourRanks(), generation), "id");
    EXPECT_EQ(key, absl::StrCat("ember/nccl/0,1,2,3/g", generation, "/id"));
    auto id = store->Get(key, absl::ZeroDuration());
    ASSERT_TRUE(id.ok()) << id.status();
    EXPECT_EQ(id->size(), sizeof(ncclUniqueId));
  }
  EXPECT_FALSE(store->Get("ember/nccl/0,1,2,3/g2/id", absl::ZeroDuration()).ok());
}

TEST_F(NcclMultiProcessTest, PeersThatNeverArriveAreATimeoutNamingTheClique) {
  auto store = std::make_shared<InMemoryKeyValueStore>();
  std::shared_ptr<NcclCollectives> transport = Transport(store, 0, absl::Milliseconds(500));
  ASSERT_NE(transport, nullptr);
  const absl::Time start = absl::Now();
  auto comm = transport->GetCommunicator(FourRanks(), RankId(0));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  ASSERT_FALSE(comm.ok());
  EXPECT_EQ(comm.status().code(), absl::StatusCode::kDeadlineExceeded) << comm.status();
  EXPECT_THAT(comm.status().message(),
              HasSubstr("NCCL clique devices [0,1,2,3] (generation 0): rank 2 (device 2, another "
                        "process) did not arrive within 500ms"));
  // The next request tries again, under the next generation's keys.
  comm = transport->GetCommunicator(FourRanks(), RankId(1));
  ASSERT_FALSE(comm.ok());
  EXPECT_THAT(comm.status().message(), HasSubstr("(generation 1): rank 2 (device 2"));
  EXPECT_TRUE(store->Get("ember/nccl/0,1,2,3/g1/arrived/1", absl::ZeroDuration()).ok());
  EXPECT_EQ(transport->cliques_created(), 0);

  // Seen from the process of ranks 2 and 3: rank 0 never came.
  std::shared_ptr<NcclCollectives> other =
      Transport(std::make_shared<InMemoryKeyValueStore>(), 2, absl::Milliseconds(500));
  ASSERT_NE(other, nullptr);
  comm = other->GetCommunicator(FourRanks(), RankId(3));
  ASSERT_FALSE(comm.ok());
  EXPECT_EQ(comm.status().code(), absl::StatusCode::kDeadlineExceeded) << comm.status();
  EXPECT_THAT(comm.status().message(),
              HasSubstr("NCCL clique devices [0,1,2,3] (generation 0): rank 0 (device 0, another "
                        "process) did not arrive"));
}

// A real peer process that starts, opens its transport and exits without asking for the clique.
TEST_F(NcclMultiProcessTest, APeerProcessThatNeverJoinsIsATimeoutNotAHang) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const pid_t peer = SpawnPeer({dir.path(), "2", "20", /*rounds=*/"0"}, /*gpus=*/2);
  ASSERT_GT(peer, 0);
  std::shared_ptr<NcclCollectives> transport =
      Transport(std::make_shared<FileKeyValueStore>(dir.path()), 0, absl::Milliseconds(500));
  ASSERT_NE(transport, nullptr);
  const absl::Time start = absl::Now();
  auto comm = transport->GetCommunicator(FourRanks(), RankId(1));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  ASSERT_FALSE(comm.ok());
  EXPECT_EQ(comm.status().code(), absl::StatusCode::kDeadlineExceeded) << comm.status();
  EXPECT_THAT(comm.status().message(),
              HasSubstr("NCCL clique devices [0,1,2,3] (generation 0): rank 2 (device 2, another "
                        "process) did not arrive within 500ms"));
  EXPECT_EQ(WaitChild(peer, absl::Seconds(20)), 0);
}

// A peer process that joined the clique and then never issues the all-reduce: the transport's
// watchdog aborts the clique after its timeout, and says that this process's ranks all issued it
// (what the other process's ranks did is not seen from here).
TEST_F(NcclMultiProcessTest, APeerThatJoinsButNeverIssuesTimesOutThroughTheWatchdog) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const pid_t peer = SpawnPeer({dir.path(), "2", "20", "idle"}, /*gpus=*/2);
  ASSERT_GT(peer, 0);
  auto store = std::make_shared<FileKeyValueStore>(dir.path());
  std::shared_ptr<NcclCollectives> transport = Transport(store, 0, absl::Seconds(2));
  ASSERT_NE(transport, nullptr);
  devices_faulted_ = true;
  const absl::Time start = absl::Now();
  std::vector<absl::Status> results(kProcessRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kProcessRanks; ++r) {
    threads.emplace_back([&, r] {
      auto comm = transport->GetCommunicator(FourRanks(), RankId(r));
      ASSERT_TRUE(comm.ok()) << comm.status();
      auto executor = platform_->ExecutorForDevice(r);
      ASSERT_TRUE(executor.ok());
      auto stream = (*executor)->CreateStream();
      ASSERT_TRUE(stream.ok());
      auto buffer = (*executor)->Allocate(64);
      ASSERT_TRUE(buffer.ok());
      AsyncEventRef done = (*comm)->AllReduce(*buffer, *buffer, DataType::kF32, 16,
                                              ReductionKind::kSum, stream->get());
      EXPECT_FALSE((*stream)->BlockHostUntilDone().ok());
      results[r] = done->Await();
      (*executor)->Deallocate(*buffer);
    });
  }
  for (std::thread& t : threads) t.join();
  const absl::Duration took = absl::Now() - start;
  EXPECT_LT(took, absl::Seconds(10));
  for (int r = 0; r < kProcessRanks; ++r) {
    EXPECT_EQ(results[r].code(), absl::StatusCode::kDeadlineExceeded) << results[r];
    EXPECT_THAT(results[r].message(),
                HasSubstr(absl::StrCat("all_reduce (NCCL, devices [0,1,2,3], rank ", r, "): ")));
    EXPECT_THAT(results[r].message(),
                HasSubstr("all_reduce (NCCL operation #1 of devices [0,1,2,3]) timed out after "
                          "2s; every rank of this process issued it"));
  }
  ASSERT_TRUE(store->Set("test/release", "1").ok());
  EXPECT_EQ(WaitChild(peer, absl::Seconds(20)), 0);
}

TEST_F(NcclMultiProcessTest, ARankZeroProcessThatNeverPublishesTheIdIsATimeout) {
  auto store = std::make_shared<InMemoryKeyValueStore>();
  // Rank 0's process said it arrived and then went away before publishing the unique id.
  ASSERT_TRUE(store->Set("ember/nccl/0,1,2,3/g0/arrived/0", "1").ok());
  ASSERT_TRUE(store->Set("ember/nccl/0,1,2,3/g0/arrived/1", "1").ok());
  std::shared_ptr<NcclCollectives> transport = Transport(store, 2, absl::Milliseconds(300));
  ASSERT_NE(transport, nullptr);
  const absl::Time start = absl::Now();
  auto comm = transport->GetCommunicator(FourRanks(), RankId(2));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  ASSERT_FALSE(comm.ok());
  EXPECT_EQ(comm.status().code(), absl::StatusCode::kDeadlineExceeded) << comm.status();
  EXPECT_THAT(comm.status().message(),
              HasSubstr("NCCL clique devices [0,1,2,3] (generation 0): no unique id from the "
                        "process of rank 0 (device 0) within 300ms"));
  EXPECT_THAT(comm.status().message(), HasSubstr("ember/nccl/0,1,2,3/g0/id"));
}

TEST_F(NcclMultiProcessTest, RequestsOutsideThisProcessAreErrors) {
  std::shared_ptr<NcclCollectives> transport =
      Transport(std::make_shared<InMemoryKeyValueStore>(), 2, absl::Seconds(1));
  ASSERT_NE(transport, nullptr);
  auto comm = transport->GetCommunicator(FourRanks(), RankId(1));
  EXPECT_EQ(comm.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(comm.status().message(),
              HasSubstr("rank 1 (device 1) is not on this process's devices [2, 4)"));
  EXPECT_THAT(transport->GetCommunicator(CliqueKey{{2, 2}}, RankId(0)).status().message(),
              HasSubstr("names device 2 twice"));
  // Without a store, devices beyond this process's cannot be reached.
  NcclTopology alone;
  alone.first_device = 2;
  alone.device_count = kProcessRanks;
  auto lonely =
      NcclCollectives::Create(*platform_, EMBER_VIRTUAL_GPU_LIB_DIR, absl::Seconds(1), alone);
  ASSERT_TRUE(lonely.ok()) << lonely.status();
  EXPECT_THAT((*lonely)->GetCommunicator(FourRanks(), RankId(2)).status().message(),
              HasSubstr("no CUDA device 0 (this process has devices [2, 4) and no key-value "
                        "store to reach others)"));
  // A topology that does not fit the platform.
  NcclTopology too_many;
  too_many.device_count = platform_->DeviceCount() + 1;
  EXPECT_EQ(
      NcclCollectives::Create(*platform_, EMBER_VIRTUAL_GPU_LIB_DIR, absl::Seconds(1), too_many)
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
}

// A clique wholly inside this process needs no store even when the transport has one: its two
// ranks (global devices 2 and 3, CUDA ordinals 0 and 1) meet as in a single process.
TEST_F(NcclMultiProcessTest, ACliqueWithinThisProcessNeedsNoRendezvous) {
  auto store = std::make_shared<InMemoryKeyValueStore>();
  std::shared_ptr<NcclCollectives> transport = Transport(store, 2, absl::Seconds(20));
  ASSERT_NE(transport, nullptr);
  const CliqueKey pair{{3, 2}};
  const std::vector<int64_t> values[2] = {{5, -7, 1 << 20}, {11, 13, -(1 << 21)}};
  std::vector<int64_t> results[2];
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      auto comm = transport->GetCommunicator(pair, RankId(r));
      ASSERT_TRUE(comm.ok()) << comm.status();
      auto executor = platform_->ExecutorForDevice(static_cast<int>(pair.devices[r] - 2));
      ASSERT_TRUE(executor.ok());
      auto stream = (*executor)->CreateStream();
      ASSERT_TRUE(stream.ok());
      auto buffer = (*executor)->Allocate(sizeof(int64_t) * 3);
      ASSERT_TRUE(buffer.ok());
      ASSERT_TRUE((*executor)->SynchronousMemcpyH2D(*buffer, values[r].data(), 24).ok());
      AsyncEventRef done = (*comm)->AllReduce(*buffer, *buffer, DataType::kS64, 3,
                                              ReductionKind::kSum, stream->get());
      EXPECT_TRUE((*stream)->BlockHostUntilDone().ok());
      EXPECT_TRUE(done->Await().ok()) << done->Await();
      results[r].resize(3);
      EXPECT_TRUE((*executor)->SynchronousMemcpyD2H(results[r].data(), *buffer, 24).ok());
      (*executor)->Deallocate(*buffer);
    });
  }
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(results[r], (std::vector<int64_t>{16, 6, (1 << 20) - (1 << 21)}));
  }
  EXPECT_FALSE(store->Get("ember/nccl/3,2/g0/arrived/0", absl::ZeroDuration()).ok());
}

}  // namespace
}  // namespace ember::collectives::nccl
