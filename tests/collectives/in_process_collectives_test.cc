// The in-process Communicator: every operation among threads acting as devices, rendezvous
// isolation between launches, and the errors that replace hangs (timeout, abort, mismatch).
#include "collectives/in_process/in_process_collectives.h"

#include <cstring>
#include <functional>
#include <random>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace ember::collectives {
namespace {

MutableBytes AsBytes(std::vector<int32_t>& v) {
  return MutableBytes(reinterpret_cast<uint8_t*>(v.data()), v.size() * sizeof(int32_t));
}

ReduceFn SumInt32() {
  return [](absl::Span<const ConstBytes> inputs, MutableBytes out) {
    const size_t n = out.size() / sizeof(int32_t);
    std::vector<int32_t> acc(n, 0);
    for (const ConstBytes& in : inputs) {
      for (size_t i = 0; i < n; ++i) {
        int32_t v;
        std::memcpy(&v, in.data() + i * sizeof(int32_t), sizeof(v));
        acc[i] += v;
      }
    }
    std::memcpy(out.data(), acc.data(), out.size());
    return absl::OkStatus();
  };
}

// Runs fn(rank, communicator) on `n` threads for one clique of `run`.
void RunRanks(InProcessCollectives& hub, uint64_t run, const std::string& op, int n,
              const std::function<void(int, Communicator&)>& fn) {
  CliqueKey key;
  key.run_id = run;
  key.op = op;
  for (int i = 0; i < n; ++i) key.devices.push_back(10 + i);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      auto comm = hub.Join(key, r);
      ASSERT_TRUE(comm.ok()) << comm.status();
      EXPECT_EQ((*comm)->rank(), r);
      EXPECT_EQ((*comm)->size(), n);
      fn(r, **comm);
    });
  }
  for (auto& t : threads) t.join();
}

std::vector<int32_t> Random(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> dist(-1000, 1000);
  std::vector<int32_t> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

TEST(InProcessCollectivesTest, AllReduceSumsInRankOrder) {
  InProcessCollectives hub;
  const int n = 4;
  std::vector<std::vector<int32_t>> in(n), out(n, std::vector<int32_t>(6));
  for (int r = 0; r < n; ++r) in[r] = Random(6, r);
  RunRanks(hub, hub.NewRunId(), "ar", n, [&](int r, Communicator& c) {
    EXPECT_TRUE(c.AllReduce(AsBytes(in[r]), AsBytes(out[r]), SumInt32()).ok());
  });
  for (size_t i = 0; i < 6; ++i) {
    int32_t want = 0;
    for (int r = 0; r < n; ++r) want += in[r][i];
    for (int r = 0; r < n; ++r) EXPECT_EQ(out[r][i], want) << "rank " << r << " element " << i;
  }
}

TEST(InProcessCollectivesTest, AllGatherConcatenatesByRank) {
  InProcessCollectives hub;
  const int n = 3;
  std::vector<std::vector<int32_t>> in(n), out(n, std::vector<int32_t>(2 * n));
  for (int r = 0; r < n; ++r) in[r] = Random(2, 10 + r);
  RunRanks(hub, hub.NewRunId(), "ag", n, [&](int r, Communicator& c) {
    EXPECT_TRUE(c.AllGather(AsBytes(in[r]), AsBytes(out[r])).ok());
  });
  for (int r = 0; r < n; ++r) {
    for (int k = 0; k < n; ++k) {
      EXPECT_EQ(out[r][2 * k], in[k][0]);
      EXPECT_EQ(out[r][2 * k + 1], in[k][1]);
    }
  }
}

TEST(InProcessCollectivesTest, ReduceScatterGivesEachRankItsBlock) {
  InProcessCollectives hub;
  const int n = 4;
  std::vector<std::vector<int32_t>> in(n), out(n, std::vector<int32_t>(3));
  for (int r = 0; r < n; ++r) in[r] = Random(3 * n, 20 + r);
  RunRanks(hub, hub.NewRunId(), "rs", n, [&](int r, Communicator& c) {
    EXPECT_TRUE(c.ReduceScatter(AsBytes(in[r]), AsBytes(out[r]), SumInt32()).ok());
  });
  for (int r = 0; r < n; ++r) {
    for (int i = 0; i < 3; ++i) {
      int32_t want = 0;
      for (int k = 0; k < n; ++k) want += in[k][3 * r + i];
      EXPECT_EQ(out[r][i], want);
    }
  }
}

TEST(InProcessCollectivesTest, AllToAllTransposesBlocks) {
  InProcessCollectives hub;
  const int n = 4;
  std::vector<std::vector<int32_t>> in(n), out(n, std::vector<int32_t>(2 * n));
  for (int r = 0; r < n; ++r) in[r] = Random(2 * n, 30 + r);
  RunRanks(hub, hub.NewRunId(), "a2a", n, [&](int r, Communicator& c) {
    EXPECT_TRUE(c.AllToAll(AsBytes(in[r]), AsBytes(out[r])).ok());
  });
  for (int r = 0; r < n; ++r) {
    for (int j = 0; j < n; ++j) {
      EXPECT_EQ(out[r][2 * j], in[j][2 * r]);
      EXPECT_EQ(out[r][2 * j + 1], in[j][2 * r + 1]);
    }
  }
}

TEST(InProcessCollectivesTest, CollectivePermuteRingAndZerosWithoutSource) {
  InProcessCollectives hub;
  const int n = 4;
  std::vector<std::vector<int32_t>> in(n), out(n, std::vector<int32_t>(5, 77));
  for (int r = 0; r < n; ++r) in[r] = Random(5, 40 + r);
  // 0 -> 1 -> 2 -> 3; nobody sends to 0.
  RunRanks(hub, hub.NewRunId(), "cp", n, [&](int r, Communicator& c) {
    std::optional<int> source;
    if (r > 0) source = r - 1;
    std::vector<int> targets;
    if (r + 1 < n) targets.push_back(r + 1);
    EXPECT_TRUE(c.CollectivePermute(AsBytes(in[r]), AsBytes(out[r]), source, targets).ok());
  });
  EXPECT_EQ(out[0], std::vector<int32_t>(5, 0));
  for (int r = 1; r < n; ++r) EXPECT_EQ(out[r], in[r - 1]);
}

TEST(InProcessCollectivesTest, BroadcastFromRoot) {
  InProcessCollectives hub;
  const int n = 3;
  std::vector<std::vector<int32_t>> in(n), out(n, std::vector<int32_t>(4));
  for (int r = 0; r < n; ++r) in[r] = Random(4, 50 + r);
  RunRanks(hub, hub.NewRunId(), "bc", n, [&](int r, Communicator& c) {
    EXPECT_TRUE(c.Broadcast(AsBytes(in[r]), AsBytes(out[r]), 2).ok());
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(out[r], in[2]);
}

TEST(InProcessCollectivesTest, ReduceToRootZerosElsewhere) {
  InProcessCollectives hub;
  const int n = 3;
  std::vector<std::vector<int32_t>> in(n), out(n, std::vector<int32_t>(5, 7));
  for (int r = 0; r < n; ++r) in[r] = Random(5, 70 + r);
  RunRanks(hub, hub.NewRunId(), "rd", n, [&](int r, Communicator& c) {
    EXPECT_TRUE(c.Reduce(AsBytes(in[r]), AsBytes(out[r]), 1, SumInt32()).ok());
  });
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(out[1][i], in[0][i] + in[1][i] + in[2][i]) << "element " << i;
    EXPECT_EQ(out[0][i], 0);
    EXPECT_EQ(out[2][i], 0);
  }
  auto comm = hub.Join(CliqueKey{hub.NewRunId(), "bad", {1, 2}}, 0);
  ASSERT_TRUE(comm.ok());
  EXPECT_EQ((*comm)->Reduce(AsBytes(in[0]), AsBytes(in[1]), 2, SumInt32()).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(InProcessCollectivesTest, ConcurrentRunsWithTheSameOpDoNotMix) {
  InProcessCollectives hub;
  const int n = 4, runs = 6;
  std::vector<std::thread> launches;
  std::vector<std::vector<std::vector<int32_t>>> out(runs);
  for (int k = 0; k < runs; ++k) {
    out[k].assign(n, std::vector<int32_t>(1));
    const uint64_t run = hub.NewRunId();
    launches.emplace_back([&, k, run] {
      RunRanks(hub, run, "same-op", n, [&](int r, Communicator& c) {
        std::vector<int32_t> in = {k * 100 + r};
        EXPECT_TRUE(c.AllReduce(AsBytes(in), AsBytes(out[k][r]), SumInt32()).ok());
      });
    });
  }
  for (auto& t : launches) t.join();
  for (int k = 0; k < runs; ++k) {
    for (int r = 0; r < n; ++r) EXPECT_EQ(out[k][r][0], k * 100 * n + 6) << "run " << k;
  }
}

TEST(InProcessCollectivesTest, MissingPeerTimesOutWithAClearError) {
  InProcessCollectives hub(absl::Milliseconds(200));
  CliqueKey key{hub.NewRunId(), "lonely", {3, 5}};
  auto comm = hub.Join(key, 0);
  ASSERT_TRUE(comm.ok());
  std::vector<int32_t> in = {1}, out = {0};
  const absl::Time start = absl::Now();
  absl::Status s = (*comm)->AllReduce(AsBytes(in), AsBytes(out), SumInt32());
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_NE(s.message().find("timed out"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("devices [5]"), absl::string_view::npos) << s;
}

TEST(InProcessCollectivesTest, AbortWakesWaiters) {
  InProcessCollectives hub(absl::Seconds(60));
  const uint64_t run = hub.NewRunId();
  CliqueKey key{run, "aborted", {0, 1}};
  absl::Status waited;
  std::thread waiter([&] {
    auto comm = hub.Join(key, 0);
    std::vector<int32_t> in = {1}, out = {0, 0};
    waited = (*comm)->AllGather(AsBytes(in), AsBytes(out));
  });
  absl::SleepFor(absl::Milliseconds(100));
  hub.Abort(run, absl::InternalError("device 1 failed: boom"));
  waiter.join();
  EXPECT_FALSE(waited.ok());
  EXPECT_NE(waited.message().find("boom"), absl::string_view::npos) << waited;
  // Later rendezvous of the aborted run fail at once; other runs are unaffected.
  auto late = hub.Join(key, 1);
  std::vector<int32_t> in = {1}, out = {0, 0};
  EXPECT_FALSE((*late)->AllGather(AsBytes(in), AsBytes(out)).ok());
  hub.Forget(run);
}

TEST(InProcessCollectivesTest, MismatchedOperationsAreErrors) {
  InProcessCollectives hub(absl::Seconds(10));
  std::vector<absl::Status> status(2);
  RunRanks(hub, hub.NewRunId(), "mixed", 2, [&](int r, Communicator& c) {
    std::vector<int32_t> in = {r}, out = {0, 0};
    if (r == 0) {
      status[r] = c.AllGather(AsBytes(in), AsBytes(out));
    } else {
      std::vector<int32_t> one = {0};
      status[r] = c.Broadcast(AsBytes(in), AsBytes(one), 0);
    }
  });
  for (const auto& s : status) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  }
}

TEST(InProcessCollectivesTest, BadSizesAndRanksAreErrors) {
  InProcessCollectives hub(absl::Milliseconds(100));
  CliqueKey key{hub.NewRunId(), "bad", {0, 1}};
  EXPECT_FALSE(hub.Join(key, 2).ok());
  EXPECT_FALSE(hub.Join(CliqueKey{1, "empty", {}}, 0).ok());
  auto comm = hub.Join(key, 0);
  std::vector<int32_t> in = {1, 2, 3}, out = {0};
  EXPECT_EQ((*comm)->AllGather(AsBytes(in), AsBytes(out)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*comm)->Broadcast(AsBytes(in), AsBytes(in), 5).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ember::collectives
