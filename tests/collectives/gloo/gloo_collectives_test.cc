// The Gloo transport over loopback TCP: every operation, element type and reduction against the
// in-process transport (byte for byte), ranks as threads of one process and as forked
// processes sharing a file-backed store, and the errors that replace hangs: a peer that never
// arrives, a peer that skips an operation, a peer process that dies, an abort.
#include "collectives/gloo/gloo_collectives.h"

#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "collectives/in_process/in_process_collectives.h"
#include "gtest/gtest.h"
#include "stream_executor/host/host_stream.h"
#include "tests/collectives/collectives_test_util.h"
#include "tests/collectives/file_key_value_store.h"

namespace ember::collectives {
namespace {

using test_util::RunRanks;
using test_util::WaitChild;

using Bytes = std::vector<uint8_t>;

template <typename T>
se::DeviceMemory Mem(std::vector<T>& v) {
  return se::DeviceMemory{v.data(), v.size() * sizeof(T)};
}

CliqueKey Clique(int n, int64_t first = 0) {
  CliqueKey key;
  for (int i = 0; i < n; ++i) key.devices.push_back(first + i);
  return key;
}

absl::Status Sync(const AsyncEventRef& done) { return done->Await(); }

bool Contains(const absl::Status& s, const char* part) {
  return s.message().find(part) != absl::string_view::npos;
}

std::shared_ptr<GlooCollectives> MakeGloo(absl::Duration timeout) {
  return std::make_shared<GlooCollectives>(std::make_shared<InMemoryKeyValueStore>(), timeout);
}

// Random bytes for `count` elements (pred: 0 or 1); floats get arbitrary bit patterns, NaNs
// and infinities included, which the comparison with the in-process transport must survive.
Bytes RandomBytes(DataType type, size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  Bytes v(count * DataTypeBytes(type));
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  if (type == DataType::kPred) {
    for (auto& b : v) b &= 1;
  }
  return v;
}

std::vector<int32_t> RandomInts(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> dist(-1000, 1000);
  std::vector<int32_t> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

std::vector<float> RandomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

constexpr DataType kAllTypes[] = {
    DataType::kPred,     DataType::kS8,    DataType::kU8,  DataType::kS16, DataType::kU16,
    DataType::kS32,      DataType::kU32,   DataType::kS64, DataType::kU64, DataType::kF16,
    DataType::kBF16,     DataType::kF32,   DataType::kF64, DataType::kC64, DataType::kC128,
    DataType::kF8E4M3FN, DataType::kF8E5M2};
constexpr ReductionKind kAllKinds[] = {
    ReductionKind::kSum, ReductionKind::kProduct, ReductionKind::kMin, ReductionKind::kMax,
    ReductionKind::kAnd, ReductionKind::kOr,      ReductionKind::kXor};

enum class Op { kAllReduce, kReduceScatter, kReduce, kAllGather, kAllToAll, kPermute, kBroadcast };
const char* OpName(Op op) {
  switch (op) {
    case Op::kAllReduce:
      return "all-reduce";
    case Op::kReduceScatter:
      return "reduce-scatter";
    case Op::kReduce:
      return "reduce";
    case Op::kAllGather:
      return "all-gather";
    case Op::kAllToAll:
      return "all-to-all";
    case Op::kPermute:
      return "collective-permute";
    case Op::kBroadcast:
      return "broadcast";
  }
  return "?";
}

struct Case {
  Op op;
  DataType type;
  ReductionKind kind;
  size_t count;
  int root;
};

// Runs case `c` (number `index`) as rank `r` of `n` on `comm`, from `send`, into `recv`.
absl::Status RunCase(const Case& c, int index, int r, int n, Communicator& comm, Bytes& send,
                     Bytes& recv) {
  switch (c.op) {
    case Op::kAllReduce:
      return Sync(comm.AllReduce(Mem(send), Mem(recv), c.type, c.count, c.kind, nullptr));
    case Op::kReduceScatter:
      return Sync(comm.ReduceScatter(Mem(send), Mem(recv), c.type, c.count, c.kind, nullptr));
    case Op::kReduce:
      return Sync(
          comm.Reduce(Mem(send), Mem(recv), c.type, c.count, c.kind, RankId(c.root), nullptr));
    case Op::kAllGather:
      return Sync(comm.AllGather(Mem(send), Mem(recv), c.type, c.count, nullptr));
    case Op::kAllToAll:
      return Sync(comm.AllToAll(Mem(send), Mem(recv), c.type, c.count, nullptr));
    case Op::kBroadcast:
      return Sync(comm.Broadcast(Mem(send), Mem(recv), c.type, c.count, RankId(c.root), nullptr));
    case Op::kPermute: {
      // r -> r + shift, except that rank `root` sends nothing (so its target has no source).
      const int shift = 1 + index % (n - 1);
      std::vector<RankId> targets;
      if (r != c.root) targets.push_back(RankId((r + shift) % n));
      std::optional<RankId> source;
      const int from = (r - shift + n) % n;
      if (from != c.root) source = RankId(from);
      return Sync(
          comm.CollectivePermute(Mem(send), Mem(recv), c.type, c.count, source, targets, nullptr));
    }
  }
  return absl::InternalError("unknown op");
}

// Send and receive sizes of case `c`, in elements.
std::pair<size_t, size_t> Sizes(const Case& c, int n) {
  switch (c.op) {
    case Op::kAllReduce:
    case Op::kReduce:
    case Op::kPermute:
    case Op::kBroadcast:
      return {c.count, c.count};
    case Op::kReduceScatter:
      return {c.count * n, c.count};
    case Op::kAllGather:
      return {c.count, c.count * n};
    case Op::kAllToAll:
      return {c.count * n, c.count * n};
  }
  return {0, 0};
}

// Every operation on every type it allows, every valid reduction, odd counts and count 0:
// the Gloo transport's results equal the in-process transport's byte for byte, from one cached
// communicator per rank.
TEST(GlooCollectivesTest, EveryOperationMatchesTheInProcessTransport) {
  const int n = 4;
  auto gloo = MakeGloo(absl::Seconds(20));
  InProcessCollectives reference(absl::Seconds(20));
  const size_t counts[] = {7, 3, 1, 37, 0, 5};
  std::vector<Case> cases;
  for (DataType type : kAllTypes) {
    for (ReductionKind kind : kAllKinds) {
      if (!IsValidReduction(kind, type)) continue;
      for (Op op : {Op::kAllReduce, Op::kReduceScatter, Op::kReduce}) {
        cases.push_back({op, type, kind, counts[cases.size() % 6], int(cases.size() % n)});
      }
    }
    for (Op op : {Op::kAllGather, Op::kAllToAll, Op::kPermute, Op::kBroadcast}) {
      cases.push_back(
          {op, type, ReductionKind::kSum, counts[cases.size() % 6], int(cases.size() % n)});
    }
  }
  ASSERT_GT(cases.size(), 300u);
  const absl::Time start = absl::Now();
  std::atomic<int> mismatches{0};
  RunRanks(*gloo, Clique(n), [&](int r, Communicator& comm) {
    auto ref = reference.GetCommunicator(Clique(n), RankId(r));
    ASSERT_TRUE(ref.ok());
    for (size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      const auto [send_count, recv_count] = Sizes(c, n);
      Bytes send = RandomBytes(c.type, send_count, 1000 * i + r);
      // Both receive buffers start alike and not zero, so zero-filling is checked too.
      Bytes got(recv_count * DataTypeBytes(c.type), 0xA5), want = got;
      const std::string what =
          absl::StrCat(OpName(c.op), " ", DataTypeName(c.type), " ", ReductionKindName(c.kind),
                       " count ", c.count, " root ", c.root, " rank ", r);
      absl::Status g = RunCase(c, i, r, n, comm, send, got);
      absl::Status w = RunCase(c, i, r, n, **ref, send, want);
      ASSERT_TRUE(g.ok()) << what << ": " << g;
      ASSERT_TRUE(w.ok()) << what << ": " << w;
      if (got != want) {
        ++mismatches;
        ADD_FAILURE() << what << ": gloo and in-process results differ";
      }
    }
    // The communicator is cached: the same one again, still healthy.
    auto again = gloo->GetCommunicator(Clique(n), RankId(r));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->get(), &comm);
    EXPECT_TRUE(comm.HealthCheck().ok());
  });
  EXPECT_EQ(mismatches.load(), 0);
  std::cout << cases.size() << " cases x " << n << " ranks in "
            << absl::FormatDuration(absl::Now() - start) << "\n";
}

// Float sums fold in rank order ((x0 + x1) + x2) + x3, whichever rank owns the chunk.
TEST(GlooCollectivesTest, FloatSumsFoldInRankOrder) {
  const int n = 4;
  auto gloo = MakeGloo(absl::Seconds(20));
  std::vector<std::vector<float>> in = {{1e8f, 1.0f, 3.0f, 1e8f, -1e8f},
                                        {1.0f, 1e8f, 1e8f, 1.0f, 1.0f},
                                        {-1e8f, -1e8f, 5.0f, -1e8f, 1e8f},
                                        {1.0f, 1.0f, -1e8f, 1.0f, 1.0f}};
  std::vector<std::vector<float>> out(n, std::vector<float>(5));
  RunRanks(*gloo, Clique(n), [&](int r, Communicator& c) {
    EXPECT_TRUE(
        Sync(c.AllReduce(Mem(in[r]), Mem(out[r]), DataType::kF32, 5, ReductionKind::kSum, nullptr))
            .ok());
  });
  for (int r = 0; r < n; ++r) {
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(out[r][i], ((in[0][i] + in[1][i]) + in[2][i]) + in[3][i]) << r << " " << i;
    }
  }
}

// Large messages, and send and receive buffers that are one buffer.
TEST(GlooCollectivesTest, LargeAndInPlaceOperations) {
  const int n = 3;
  const size_t count = 100003;
  auto gloo = MakeGloo(absl::Seconds(20));
  InProcessCollectives reference;
  RunRanks(*gloo, Clique(n), [&](int r, Communicator& comm) {
    auto ref = reference.GetCommunicator(Clique(n), RankId(r));
    ASSERT_TRUE(ref.ok());
    std::vector<float> in = RandomFloats(count, 7 + r), want(count);
    ASSERT_TRUE(Sync((*ref)->AllReduce(Mem(in), Mem(want), DataType::kF32, count,
                                       ReductionKind::kSum, nullptr))
                    .ok());
    std::vector<float> inout = in;
    ASSERT_TRUE(Sync(comm.AllReduce(Mem(inout), Mem(inout), DataType::kF32, count,
                                    ReductionKind::kSum, nullptr))
                    .ok());
    EXPECT_EQ(std::memcmp(inout.data(), want.data(), count * sizeof(float)), 0) << "rank " << r;

    std::vector<int32_t> blocks = RandomInts(n * 1001, 70 + r), expect(n * 1001);
    ASSERT_TRUE(
        Sync((*ref)->AllToAll(Mem(blocks), Mem(expect), DataType::kS32, 1001, nullptr)).ok());
    ASSERT_TRUE(Sync(comm.AllToAll(Mem(blocks), Mem(blocks), DataType::kS32, 1001, nullptr)).ok());
    EXPECT_EQ(blocks, expect) << "rank " << r;
  });
}

TEST(GlooCollectivesTest, OperationsOrderedOnHostStreams) {
  const int n = 2;
  auto gloo = MakeGloo(absl::Seconds(20));
  std::vector<std::unique_ptr<se::host::HostStream>> streams;
  for (int r = 0; r < n; ++r) {
    streams.push_back(std::make_unique<se::host::HostStream>("test stream"));
  }
  std::vector<std::vector<int32_t>> in(n, std::vector<int32_t>(3, 0)),
      out(n, std::vector<int32_t>(3));
  std::vector<AsyncEventRef> done(n);
  for (int r = 0; r < n; ++r) {
    auto comm = gloo->GetCommunicator(Clique(n), RankId(r));
    ASSERT_TRUE(comm.ok());
    // The input is written by stream work queued before the collective.
    ASSERT_TRUE(streams[r]
                    ->EnqueueHostCallback([&, r]() {
                      absl::SleepFor(absl::Milliseconds(20));
                      in[r] = {r + 1, r + 2, r + 3};
                      return absl::OkStatus();
                    })
                    .ok());
    done[r] = (*comm)->AllReduce(Mem(in[r]), Mem(out[r]), DataType::kS32, 3, ReductionKind::kSum,
                                 streams[r].get());
  }
  for (int r = 0; r < n; ++r) {
    ASSERT_TRUE(done[r]->Await().ok());
    EXPECT_EQ(out[r], (std::vector<int32_t>{3, 5, 7}));
  }
}

// Wrong arguments are errors before any rank touches the network: no peer is needed.
TEST(GlooCollectivesTest, InvalidArgumentsFailBeforeTheNetwork) {
  auto gloo = MakeGloo(absl::Seconds(30));
  EXPECT_FALSE(gloo->GetCommunicator(Clique(2), RankId(2)).ok());
  EXPECT_FALSE(gloo->GetCommunicator(CliqueKey{}, RankId(0)).ok());
  EXPECT_STREQ(gloo->name(), "gloo");
  auto comm = gloo->GetCommunicator(Clique(2), RankId(0));
  ASSERT_TRUE(comm.ok());
  const absl::Time start = absl::Now();
  std::vector<float> f = {1.0f}, g = {0.0f};
  absl::Status bad =
      Sync((*comm)->AllReduce(Mem(f), Mem(g), DataType::kF32, 1, ReductionKind::kXor, nullptr));
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument) << bad;
  EXPECT_TRUE(Contains(bad,
                       "gloo all-reduce on devices [0,1], rank 0: reduction 'xor' is not "
                       "defined on f32"))
      << bad;
  std::vector<int32_t> in = {1, 2, 3}, out = {0};
  EXPECT_EQ(Sync((*comm)->AllGather(Mem(in), Mem(out), DataType::kS32, 3, nullptr)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Sync((*comm)->Reduce(Mem(in), Mem(in), DataType::kS32, 3, ReductionKind::kSum,
                                 RankId(5), nullptr))
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  EXPECT_TRUE((*comm)->HealthCheck().ok());
}

// Only rank 0 of two ever comes: its first operation fails within about the timeout, naming
// the operation, the clique and the missing rank; the clique is failed, and the next request
// builds a new one (fresh keys) that works once both ranks come.
TEST(GlooCollectivesTest, PeerThatNeverArrivesFailsTheOperation) {
  auto gloo = MakeGloo(absl::Seconds(1));
  const CliqueKey key = Clique(2, 5);
  auto comm = gloo->GetCommunicator(key, RankId(0));
  ASSERT_TRUE(comm.ok());
  std::vector<int32_t> in = {1, 2}, out(2);
  const absl::Time start = absl::Now();
  absl::Status s =
      Sync((*comm)->AllReduce(Mem(in), Mem(out), DataType::kS32, 2, ReductionKind::kSum, nullptr));
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_TRUE(Contains(s,
                       "gloo all-reduce on devices [5,6], rank 0: peer rank 1 did not arrive "
                       "within 1s"))
      << s;
  EXPECT_GE(took, absl::Milliseconds(900));
  EXPECT_LT(took, absl::Seconds(4));
  EXPECT_EQ((*comm)->HealthCheck(), s);
  // Later operations fail at once.
  EXPECT_EQ(Sync((*comm)->AllGather(Mem(in), Mem(out), DataType::kS32, 1, nullptr)), s);
  auto fresh = gloo->GetCommunicator(key, RankId(0));
  ASSERT_TRUE(fresh.ok());
  EXPECT_NE(fresh->get(), comm->get());
  EXPECT_TRUE((*fresh)->HealthCheck().ok());
  RunRanks(*gloo, key, [&](int r, Communicator& c) {
    std::vector<int32_t> mine = {10 * r + 1}, all(2);
    EXPECT_TRUE(Sync(c.AllGather(Mem(mine), Mem(all), DataType::kS32, 1, nullptr)).ok());
    EXPECT_EQ(all, (std::vector<int32_t>{1, 11}));
  });
}

// Connected ranks, then one skips an operation: the other's times out naming it, and the
// clique fails for every local rank.
TEST(GlooCollectivesTest, PeerThatSkipsAnOperationTimesOut) {
  auto gloo = MakeGloo(absl::Seconds(1));
  const CliqueKey key = Clique(2, 8);
  std::vector<std::shared_ptr<Communicator>> comms;
  RunRanks(*gloo, key, [&](int r, Communicator& c) {
    std::vector<int32_t> mine = {r}, all(2);
    EXPECT_TRUE(Sync(c.AllGather(Mem(mine), Mem(all), DataType::kS32, 1, nullptr)).ok());
  });
  auto a = gloo->GetCommunicator(key, RankId(0));
  auto b = gloo->GetCommunicator(key, RankId(1));
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<int32_t> in = {1}, out(1);
  const absl::Time start = absl::Now();
  absl::Status s =
      Sync((*a)->AllReduce(Mem(in), Mem(out), DataType::kS32, 1, ReductionKind::kSum, nullptr));
  EXPECT_LT(absl::Now() - start, absl::Seconds(4));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_TRUE(Contains(s,
                       "gloo all-reduce on devices [8,9], rank 0: peer rank 1 did not arrive "
                       "within 1s"))
      << s;
  EXPECT_FALSE((*b)->HealthCheck().ok());
  EXPECT_FALSE(
      Sync((*b)->AllReduce(Mem(in), Mem(out), DataType::kS32, 1, ReductionKind::kSum, nullptr))
          .ok());
}

// Abort on one rank fails the operation another rank is waiting in, at once.
TEST(GlooCollectivesTest, AbortFailsAPendingOperationOfAnotherRank) {
  auto gloo = MakeGloo(absl::Seconds(30));
  const int n = 3;
  const CliqueKey key = Clique(n);
  RunRanks(*gloo, key, [&](int r, Communicator& c) {
    std::vector<int32_t> mine = {r}, all(n);
    EXPECT_TRUE(Sync(c.AllGather(Mem(mine), Mem(all), DataType::kS32, 1, nullptr)).ok());
  });
  std::vector<std::shared_ptr<Communicator>> comms;
  for (int r = 0; r < n; ++r) comms.push_back(*gloo->GetCommunicator(key, RankId(r)));
  std::vector<absl::Status> status(n);
  const absl::Time start = absl::Now();
  std::vector<std::thread> waiters;
  for (int r = 1; r < n; ++r) {
    waiters.emplace_back([&, r] {
      std::vector<int32_t> in = {r}, out(1);
      status[r] = Sync(
          comms[r]->AllReduce(Mem(in), Mem(out), DataType::kS32, 1, ReductionKind::kSum, nullptr));
    });
  }
  absl::SleepFor(absl::Milliseconds(200));
  comms[0]->Abort(absl::InternalError("device 0 failed: boom"));
  for (auto& t : waiters) t.join();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  for (int r = 1; r < n; ++r) {
    EXPECT_EQ(status[r].code(), absl::StatusCode::kInternal) << status[r];
    EXPECT_TRUE(Contains(status[r], "boom")) << status[r];
  }
  for (int r = 0; r < n; ++r) EXPECT_FALSE(comms[r]->HealthCheck().ok());
  auto fresh = gloo->GetCommunicator(key, RankId(1));
  ASSERT_TRUE(fresh.ok());
  EXPECT_NE(fresh->get(), comms[1].get());
}

// An abort also ends a rank's wait for its peers to publish their addresses.
TEST(GlooCollectivesTest, AbortEndsAWaitForPeersToConnect) {
  auto gloo = MakeGloo(absl::Seconds(30));
  const CliqueKey key = Clique(2);
  auto a = gloo->GetCommunicator(key, RankId(0));
  auto b = gloo->GetCommunicator(key, RankId(1));
  ASSERT_TRUE(a.ok() && b.ok());
  absl::Status waited;
  const absl::Time start = absl::Now();
  std::thread waiter([&] {
    std::vector<int32_t> in = {1}, out(2);
    waited = Sync((*b)->AllGather(Mem(in), Mem(out), DataType::kS32, 1, nullptr));
  });
  absl::SleepFor(absl::Milliseconds(200));
  (*a)->Abort(absl::InternalError("device 0 failed: boom"));
  waiter.join();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_TRUE(Contains(waited, "boom")) << waited;
}

// EMBER_GLOO_HOSTNAME picks the address the TCP device listens on; one it cannot use is an
// error from GetCommunicator, not a crash.
TEST(GlooCollectivesTest, HostnameComesFromTheEnvironment) {
  const char* outer = getenv("EMBER_GLOO_HOSTNAME");
  const std::string saved = outer != nullptr ? outer : "";
  unsetenv("EMBER_GLOO_HOSTNAME");
  EXPECT_EQ(GlooCollectives::Hostname(), "127.0.0.1");
  ASSERT_EQ(setenv("EMBER_GLOO_HOSTNAME", "192.0.2.1", 1), 0);  // TEST-NET-1: not this machine's
  EXPECT_EQ(GlooCollectives::Hostname(), "192.0.2.1");
  auto gloo = MakeGloo(absl::Seconds(5));
  auto comm = gloo->GetCommunicator(Clique(2), RankId(0));
  if (saved.empty()) {
    unsetenv("EMBER_GLOO_HOSTNAME");
  } else {
    setenv("EMBER_GLOO_HOSTNAME", saved.c_str(), 1);
  }
  ASSERT_FALSE(comm.ok());
  EXPECT_EQ(comm.status().code(), absl::StatusCode::kUnavailable) << comm.status();
  EXPECT_TRUE(Contains(comm.status(), "cannot open a TCP device on '192.0.2.1'")) << comm.status();
  // A clique of one device needs no network at all.
  auto single = gloo->GetCommunicator(Clique(1), RankId(0));
  ASSERT_TRUE(single.ok()) << single.status();
  std::vector<int32_t> in = {4, 5}, out(2);
  EXPECT_TRUE(
      Sync((*single)->AllReduce(Mem(in), Mem(out), DataType::kS32, 2, ReductionKind::kSum, nullptr))
          .ok());
  EXPECT_EQ(out, in);
}

// --- Ranks in several processes -------------------------------------------------------------

int ThreadCount() {
  int count = 0;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (dirent* e = readdir(dir)) {
      if (e->d_name[0] != '.') ++count;
    }
    closedir(dir);
  }
  return count;
}

// Forks a child running `body`; the child exits with its result and never returns here.
pid_t ForkChild(const std::function<int()>& body) {
  pid_t pid = fork();
  if (pid == 0) {
    int code = 100;
    try {
      code = body();
    } catch (...) {
      code = 101;
    }
    _exit(code);
  }
  return pid;
}

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/ember_gloo_test_XXXXXX";
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

// What every rank of the two-process clique runs; 0 when every result is right, else a bit per
// wrong step. Inputs come from seeds, so each process knows every rank's.
int RunAcrossProcesses(Communicator& c, int r, int n) {
  int failed = 0;
  {
    std::vector<int32_t> in = RandomInts(5, 100 + r), out(5), want(5, 0);
    for (int k = 0; k < n; ++k) {
      std::vector<int32_t> other = RandomInts(5, 100 + k);
      for (int i = 0; i < 5; ++i) want[i] += other[i];
    }
    if (!Sync(c.AllReduce(Mem(in), Mem(out), DataType::kS32, 5, ReductionKind::kSum, nullptr))
             .ok() ||
        out != want) {
      failed |= 1;
    }
  }
  {
    std::vector<float> in = RandomFloats(9, 200 + r), out(9), want = RandomFloats(9, 200);
    for (int k = 1; k < n; ++k) {
      std::vector<float> other = RandomFloats(9, 200 + k);
      for (int i = 0; i < 9; ++i) want[i] += other[i];
    }
    if (!Sync(c.AllReduce(Mem(in), Mem(out), DataType::kF32, 9, ReductionKind::kSum, nullptr))
             .ok() ||
        std::memcmp(out.data(), want.data(), 9 * sizeof(float)) != 0) {
      failed |= 2;
    }
  }
  {
    std::vector<int32_t> in = RandomInts(3, 300 + r), out(3 * n), want;
    for (int k = 0; k < n; ++k) {
      std::vector<int32_t> other = RandomInts(3, 300 + k);
      want.insert(want.end(), other.begin(), other.end());
    }
    if (!Sync(c.AllGather(Mem(in), Mem(out), DataType::kS32, 3, nullptr)).ok() || out != want) {
      failed |= 4;
    }
  }
  {
    std::vector<int32_t> in = RandomInts(2 * n, 400 + r), out(2 * n), want(2 * n);
    for (int k = 0; k < n; ++k) {
      std::vector<int32_t> other = RandomInts(2 * n, 400 + k);
      want[2 * k] = other[2 * r];
      want[2 * k + 1] = other[2 * r + 1];
    }
    if (!Sync(c.AllToAll(Mem(in), Mem(out), DataType::kS32, 2, nullptr)).ok() || out != want) {
      failed |= 8;
    }
  }
  {
    std::vector<int32_t> in = RandomInts(4, 500 + r), out(4);
    std::vector<RankId> targets = {RankId((r + 1) % n)};
    if (!Sync(c.CollectivePermute(Mem(in), Mem(out), DataType::kS32, 4, RankId((r + n - 1) % n),
                                  targets, nullptr))
             .ok() ||
        out != RandomInts(4, 500 + (r + n - 1) % n)) {
      failed |= 16;
    }
  }
  return failed;
}

// Runs `ranks` of `key` on threads of this process through `store`; the OR of their results
// (64 when a communicator could not be had).
int RunLocalRanks(std::shared_ptr<KeyValueStore> store, const CliqueKey& key,
                  std::vector<int> ranks) {
  GlooCollectives gloo(std::move(store), absl::Seconds(10));
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int r : ranks) {
    threads.emplace_back([&, r] {
      auto comm = gloo.GetCommunicator(key, RankId(r));
      failed |= comm.ok() ? RunAcrossProcesses(**comm, r, key.size()) : 64;
    });
  }
  for (auto& t : threads) t.join();
  return failed;
}

// Two processes of two ranks each, rendezvousing through a shared directory.
TEST(GlooCollectivesTest, TwoProcessesOfTwoRanks) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const CliqueKey key = Clique(4, 20);
  // fork() copies only the calling thread: it must be the only one.
  ASSERT_EQ(ThreadCount(), 1);
  const absl::Time start = absl::Now();
  pid_t child = ForkChild([&] {
    return RunLocalRanks(std::make_shared<FileKeyValueStore>(dir.path()), key, {2, 3});
  });
  ASSERT_GT(child, 0);
  EXPECT_EQ(RunLocalRanks(std::make_shared<FileKeyValueStore>(dir.path()), key, {0, 1}), 0);
  EXPECT_EQ(WaitChild(child, absl::Seconds(20)), 0) << "the child's ranks 2 and 3";
  std::cout << "two processes: " << absl::FormatDuration(absl::Now() - start) << "\n";
}

// A peer process that connects, then dies while the survivor waits in an all-reduce: the
// all-reduce fails with an error naming the peer, long before the timeout.
TEST(GlooCollectivesTest, PeerProcessDyingFailsTheCollective) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const CliqueKey key = Clique(2, 30);
  ASSERT_EQ(ThreadCount(), 1);
  pid_t child = ForkChild([&] {
    GlooCollectives gloo(std::make_shared<FileKeyValueStore>(dir.path()), absl::Seconds(10));
    auto comm = gloo.GetCommunicator(key, RankId(1));
    if (!comm.ok()) return 1;
    std::vector<int32_t> in = {7}, out(2);
    if (!Sync((*comm)->AllGather(Mem(in), Mem(out), DataType::kS32, 1, nullptr)).ok()) return 2;
    absl::SleepFor(absl::Milliseconds(300));  // the parent is in its all-reduce by now
    _exit(0);                                 // dies connected, without closing anything
  });
  ASSERT_GT(child, 0);
  GlooCollectives gloo(std::make_shared<FileKeyValueStore>(dir.path()), absl::Seconds(10));
  auto comm = gloo.GetCommunicator(key, RankId(0));
  ASSERT_TRUE(comm.ok());
  std::vector<int32_t> in = {3}, out(2);
  ASSERT_TRUE(Sync((*comm)->AllGather(Mem(in), Mem(out), DataType::kS32, 1, nullptr)).ok());
  EXPECT_EQ(out, (std::vector<int32_t>{3, 7}));
  const absl::Time start = absl::Now();
  std::vector<int32_t> sum(1);
  absl::Status s =
      Sync((*comm)->AllReduce(Mem(in), Mem(sum), DataType::kS32, 1, ReductionKind::kSum, nullptr));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s,
                       "gloo all-reduce on devices [30,31], rank 0: connection to peer rank 1 "
                       "failed"))
      << s;
  EXPECT_FALSE((*comm)->HealthCheck().ok());
  EXPECT_EQ(WaitChild(child, absl::Seconds(10)), 0);
}

}  // namespace
}  // namespace ember::collectives
