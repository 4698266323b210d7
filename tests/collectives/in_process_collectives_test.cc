// The in-process transport: every operation among threads acting as devices, the n-th operation
// of each rank meeting the n-th of the others, communicator reuse and renewal after failure, the
// errors that replace hangs (timeout, abort, mismatch), and operations ordered on host streams.
#include "collectives/in_process/in_process_collectives.h"

#include <cstring>
#include <functional>
#include <random>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "collectives/clique_scope.h"
#include "gtest/gtest.h"
#include "stream_executor/host/host_stream.h"
#include "tests/collectives/collectives_test_util.h"

namespace ember::collectives {
namespace {

using test_util::RunRanks;

template <typename T>
se::DeviceMemory Mem(std::vector<T>& v) {
  return se::DeviceMemory{v.data(), v.size() * sizeof(T)};
}

CliqueKey Clique(int n, int64_t first = 10) {
  CliqueKey key;
  for (int i = 0; i < n; ++i) key.devices.push_back(first + i);
  return key;
}

std::vector<int32_t> Random(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> dist(-1000, 1000);
  std::vector<int32_t> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

absl::Status Sync(const AsyncEventRef& done) { return done->Await(); }

TEST(InProcessCollectivesTest, AllReduceSumsInRankOrder) {
  InProcessCollectives transport;
  const int n = 4;
  std::vector<std::vector<int32_t>> in(n), out(n, std::vector<int32_t>(6));
  for (int r = 0; r < n; ++r) in[r] = Random(6, r);
  RunRanks(transport, Clique(n), [&](int r, Communicator& c) {
    EXPECT_TRUE(Sync(c.AllReduce(Mem(in[r]), Mem(out[r]), DataType::kS32, 6, ReductionKind::kSum,
                                 nullptr)).ok());
  });
  for (size_t i = 0; i < 6; ++i) {
    int32_t want = 0;
    for (int r = 0; r < n; ++r) want += in[r][i];
    for (int r = 0; r < n; ++r) EXPECT_EQ(out[r][i], want) << "rank " << r << " element " << i;
  }
}

// recv may be send: each rank's buffer becomes the sum, over several tiles of the reduction.
TEST(InProcessCollectivesTest, AllReduceInPlace) {
  InProcessCollectives transport;
  const int n = 3;
  const size_t count = 100003;
  std::vector<std::vector<int32_t>> in(n), inout(n);
  for (int r = 0; r < n; ++r) inout[r] = in[r] = Random(count, 40 + r);
  RunRanks(transport, Clique(n), [&](int r, Communicator& c) {
    EXPECT_TRUE(Sync(c.AllReduce(Mem(inout[r]), Mem(inout[r]), DataType::kS32, count,
                                 ReductionKind::kSum, nullptr)).ok());
  });
  for (size_t i = 0; i < count; ++i) {
    const int32_t want = in[0][i] + in[1][i] + in[2][i];
    for (int r = 0; r < n; ++r) ASSERT_EQ(inout[r][i], want) << "rank " << r << " element " << i;
  }
}

// Float sums fold in rank order ((x0 + x1) + x2) + x3, as the reference evaluator does, and
// min/max follow its NaN and signed-zero rules.
TEST(InProcessCollectivesTest, FloatReductionsMatchTheEvaluatorsRules) {
  InProcessCollectives transport;
  const int n = 4;
  std::vector<std::vector<float>> in = {{1e8f, 1.0f, -0.0f, 2.0f},
                                        {1.0f, NAN, 0.0f, -3.0f},
                                        {-1e8f, 5.0f, -0.0f, 7.0f},
                                        {1.0f, 2.0f, -0.0f, 1.0f}};
  std::vector<std::vector<float>> sum(n, std::vector<float>(4)), max(n, std::vector<float>(4));
  RunRanks(transport, Clique(n), [&](int r, Communicator& c) {
    EXPECT_TRUE(Sync(c.AllReduce(Mem(in[r]), Mem(sum[r]), DataType::kF32, 4, ReductionKind::kSum,
                                 nullptr)).ok());
    EXPECT_TRUE(Sync(c.AllReduce(Mem(in[r]), Mem(max[r]), DataType::kF32, 4, ReductionKind::kMax,
                                 nullptr)).ok());
  });
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(sum[r][0], ((1e8f + 1.0f) + -1e8f) + 1.0f);
    EXPECT_TRUE(std::isnan(sum[r][1]));
    EXPECT_TRUE(std::isnan(max[r][1]));
    EXPECT_EQ(max[r][2], 0.0f);
    EXPECT_FALSE(std::signbit(max[r][2]));  // max(-0, +0) = +0
    EXPECT_EQ(max[r][3], 7.0f);
  }
}

TEST(InProcessCollectivesTest, ReductionsOfEveryKindAndType) {
  InProcessCollectives transport;
  const int n = 3;
  std::vector<std::vector<uint8_t>> preds = {{1, 0, 1, 0}, {1, 1, 0, 0}, {1, 0, 0, 1}};
  std::vector<std::vector<uint8_t>> any(n, std::vector<uint8_t>(4)), all(n, std::vector<uint8_t>(4));
  std::vector<std::vector<int64_t>> ints = {{5, -7}, {12, 3}, {-1, 9}};
  std::vector<std::vector<int64_t>> prod(n, std::vector<int64_t>(2)), xr(n, std::vector<int64_t>(2));
  std::vector<std::vector<uint16_t>> halves = {{0x3C00, 0x4000}, {0x3C00, 0x4200}, {0x3C00, 0x4400}};
  std::vector<std::vector<uint16_t>> hsum(n, std::vector<uint16_t>(2));
  RunRanks(transport, Clique(n), [&](int r, Communicator& c) {
    EXPECT_TRUE(Sync(c.AllReduce(Mem(preds[r]), Mem(any[r]), DataType::kPred, 4,
                                 ReductionKind::kOr, nullptr)).ok());
    EXPECT_TRUE(Sync(c.AllReduce(Mem(preds[r]), Mem(all[r]), DataType::kPred, 4,
                                 ReductionKind::kAnd, nullptr)).ok());
    EXPECT_TRUE(Sync(c.AllReduce(Mem(ints[r]), Mem(prod[r]), DataType::kS64, 2,
                                 ReductionKind::kProduct, nullptr)).ok());
    EXPECT_TRUE(Sync(c.AllReduce(Mem(ints[r]), Mem(xr[r]), DataType::kS64, 2, ReductionKind::kXor,
                                 nullptr)).ok());
    // f16: 1 + 1 + 1 = 3 (0x4200); 2 + 3 + 4 = 9 (0x4880).
    EXPECT_TRUE(Sync(c.AllReduce(Mem(halves[r]), Mem(hsum[r]), DataType::kF16, 2,
                                 ReductionKind::kSum, nullptr)).ok());
  });
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(any[r], (std::vector<uint8_t>{1, 1, 1, 1}));
    EXPECT_EQ(all[r], (std::vector<uint8_t>{1, 0, 0, 0}));
    EXPECT_EQ(prod[r], (std::vector<int64_t>{5 * 12 * -1, -7 * 3 * 9}));
    EXPECT_EQ(xr[r], (std::vector<int64_t>{5 ^ 12 ^ -1, -7 ^ 3 ^ 9}));
    EXPECT_EQ(hsum[r], (std::vector<uint16_t>{0x4200, 0x4880}));
  }
  // Kinds a type does not have are errors, not garbage.
  auto comm = transport.GetCommunicator(Clique(1), RankId(0));
  ASSERT_TRUE(comm.ok());
  std::vector<float> f = {1.0f}, g = {0.0f};
  absl::Status bad = Sync((*comm)->AllReduce(Mem(f), Mem(g), DataType::kF32, 1,
                                             ReductionKind::kXor, nullptr));
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument) << bad;
  EXPECT_NE(bad.message().find("'xor' is not defined on f32"), absl::string_view::npos) << bad;
}

TEST(InProcessCollectivesTest, AllGatherConcatenatesByRank) {
  InProcessCollectives transport;
  const int n = 3;
  std::vector<std::vector<int32_t>> in(n), out(n, std::vector<int32_t>(2 * n));
  for (int r = 0; r < n; ++r) in[r] = Random(2, 10 + r);
  RunRanks(transport, Clique(n), [&](int r, Communicator& c) {
    EXPECT_TRUE(Sync(c.AllGather(Mem(in[r]), Mem(out[r]), DataType::kS32, 2, nullptr)).ok());
  });
  for (int r = 0; r < n; ++r) {
    for (int k = 0; k < n; ++k) {
      EXPECT_EQ(out[r][2 * k], in[k][0]);
      EXPECT_EQ(out[r][2 * k + 1], in[k][1]);
    }
  }
}

TEST(InProcessCollectivesTest, ReduceScatterGivesEachRankItsBlock) {
  InProcessCollectives transport;
  const int n = 4;
  std::vector<std::vector<int32_t>> in(n), out(n, std::vector<int32_t>(3));
  for (int r = 0; r < n; ++r) in[r] = Random(3 * n, 20 + r);
  RunRanks(transport, Clique(n), [&](int r, Communicator& c) {
    EXPECT_TRUE(Sync(c.ReduceScatter(Mem(in[r]), Mem(out[r]), DataType::kS32, 3,
                                     ReductionKind::kSum, nullptr)).ok());
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
  InProcessCollectives transport;
  const int n = 4;
  std::vector<std::vector<int32_t>> in(n), out(n, std::vector<int32_t>(2 * n));
  for (int r = 0; r < n; ++r) in[r] = Random(2 * n, 30 + r);
  RunRanks(transport, Clique(n), [&](int r, Communicator& c) {
    EXPECT_TRUE(Sync(c.AllToAll(Mem(in[r]), Mem(out[r]), DataType::kS32, 2, nullptr)).ok());
  });
  for (int r = 0; r < n; ++r) {
    for (int j = 0; j < n; ++j) {
      EXPECT_EQ(out[r][2 * j], in[j][2 * r]);
      EXPECT_EQ(out[r][2 * j + 1], in[j][2 * r + 1]);
    }
  }
}

TEST(InProcessCollectivesTest, CollectivePermuteRingAndZerosWithoutSource) {
  InProcessCollectives transport;
  const int n = 4;
  std::vector<std::vector<int32_t>> in(n), out(n, std::vector<int32_t>(5, 77));
  for (int r = 0; r < n; ++r) in[r] = Random(5, 40 + r);
  // 0 -> 1 -> 2 -> 3; nobody sends to 0.
  RunRanks(transport, Clique(n), [&](int r, Communicator& c) {
    std::optional<RankId> source;
    if (r > 0) source = RankId(r - 1);
    std::vector<RankId> targets;
    if (r + 1 < n) targets.push_back(RankId(r + 1));
    EXPECT_TRUE(Sync(c.CollectivePermute(Mem(in[r]), Mem(out[r]), DataType::kS32, 5, source,
                                         targets, nullptr)).ok());
  });
  EXPECT_EQ(out[0], std::vector<int32_t>(5, 0));
  for (int r = 1; r < n; ++r) EXPECT_EQ(out[r], in[r - 1]);
}

TEST(InProcessCollectivesTest, BroadcastFromRoot) {
  InProcessCollectives transport;
  const int n = 3;
  std::vector<std::vector<int32_t>> in(n), out(n, std::vector<int32_t>(4));
  for (int r = 0; r < n; ++r) in[r] = Random(4, 50 + r);
  RunRanks(transport, Clique(n), [&](int r, Communicator& c) {
    EXPECT_TRUE(Sync(c.Broadcast(Mem(in[r]), Mem(out[r]), DataType::kS32, 4, RankId(2),
                                 nullptr)).ok());
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(out[r], in[2]);
}

TEST(InProcessCollectivesTest, ReduceToRootZerosElsewhere) {
  InProcessCollectives transport;
  const int n = 3;
  std::vector<std::vector<int32_t>> in(n), out(n, std::vector<int32_t>(5, 7));
  for (int r = 0; r < n; ++r) in[r] = Random(5, 70 + r);
  RunRanks(transport, Clique(n), [&](int r, Communicator& c) {
    EXPECT_TRUE(Sync(c.Reduce(Mem(in[r]), Mem(out[r]), DataType::kS32, 5, ReductionKind::kSum,
                              RankId(1), nullptr)).ok());
  });
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(out[1][i], in[0][i] + in[1][i] + in[2][i]) << "element " << i;
    EXPECT_EQ(out[0][i], 0);
    EXPECT_EQ(out[2][i], 0);
  }
  auto comm = transport.GetCommunicator(Clique(2, 1), RankId(0));
  ASSERT_TRUE(comm.ok());
  EXPECT_EQ(Sync((*comm)->Reduce(Mem(in[0]), Mem(in[1]), DataType::kS32, 5, ReductionKind::kSum,
                                 RankId(2), nullptr)).code(),
            absl::StatusCode::kInvalidArgument);
}

// The n-th operation of each rank meets the n-th of the others: a rank may run ahead by several
// operations, and results never mix.
TEST(InProcessCollectivesTest, OperationsMeetInIssueOrder) {
  InProcessCollectives transport;
  const int n = 4, ops = 20;
  std::vector<std::vector<int32_t>> out(n, std::vector<int32_t>(ops));
  RunRanks(transport, Clique(n), [&](int r, Communicator& c) {
    for (int k = 0; k < ops; ++k) {
      std::vector<int32_t> in = {k * 100 + r}, sum = {0};
      if (r == 0 && k % 5 == 0) absl::SleepFor(absl::Milliseconds(2));
      EXPECT_TRUE(Sync(c.AllReduce(Mem(in), Mem(sum), DataType::kS32, 1, ReductionKind::kSum,
                                   nullptr)).ok());
      out[r][k] = sum[0];
    }
  });
  for (int r = 0; r < n; ++r) {
    for (int k = 0; k < ops; ++k) EXPECT_EQ(out[r][k], k * 100 * n + 6) << "rank " << r;
  }
}

TEST(InProcessCollectivesTest, CommunicatorsAreCachedUntilTheyFail) {
  InProcessCollectives transport(absl::Milliseconds(100));
  CliqueKey key = Clique(2, 3);
  auto a = transport.GetCommunicator(key, RankId(0));
  auto b = transport.GetCommunicator(key, RankId(1));
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<int32_t> one = {1}, two = {0, 0};
  // Rank 1 never arrives: the clique fails for both ranks.
  absl::Status s = Sync((*a)->AllGather(Mem(one), Mem(two), DataType::kS32, 1, nullptr));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_NE(s.message().find("timed out"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("devices [4]"), absl::string_view::npos) << s;
  EXPECT_FALSE((*a)->HealthCheck().ok());
  EXPECT_FALSE((*b)->HealthCheck().ok());
  EXPECT_FALSE(Sync((*b)->AllGather(Mem(one), Mem(two), DataType::kS32, 1, nullptr)).ok());
  // A failed clique is not handed out again: the next request builds a working one.
  RunRanks(transport, key, [&](int r, Communicator& c) {
    EXPECT_TRUE(c.HealthCheck().ok());
    std::vector<int32_t> in = {r + 1}, out = {0, 0};
    EXPECT_TRUE(Sync(c.AllGather(Mem(in), Mem(out), DataType::kS32, 1, nullptr)).ok());
    EXPECT_EQ(out, (std::vector<int32_t>{1, 2}));
  });
}

TEST(InProcessCollectivesTest, ScopeAbortFailsWaitersAndLaterRequests) {
  auto transport = std::make_shared<InProcessCollectives>(absl::Seconds(60));
  auto scope = std::make_shared<CliqueScope>(transport);
  CliqueKey key = Clique(2, 0);
  absl::Status waited;
  std::thread waiter([&] {
    auto comm = scope->GetCommunicator(key, RankId(0));
    ASSERT_TRUE(comm.ok());
    std::vector<int32_t> in = {1}, out = {0, 0};
    waited = Sync((*comm)->AllGather(Mem(in), Mem(out), DataType::kS32, 1, nullptr));
  });
  absl::SleepFor(absl::Milliseconds(100));
  scope->Abort(absl::InternalError("device 1 failed: boom"));
  waiter.join();
  EXPECT_FALSE(waited.ok());
  EXPECT_NE(waited.message().find("boom"), absl::string_view::npos) << waited;
  auto late = scope->GetCommunicator(key, RankId(1));
  ASSERT_FALSE(late.ok());
  EXPECT_NE(late.status().message().find("the launch was aborted: device 1 failed"),
            absl::string_view::npos)
      << late.status();
  // Another launch's scope gets a fresh clique.
  CliqueScope next(transport);
  auto fresh = next.GetCommunicator(key, RankId(1));
  ASSERT_TRUE(fresh.ok());
  EXPECT_TRUE((*fresh)->HealthCheck().ok());
}

TEST(InProcessCollectivesTest, MismatchedOperationsAreErrors) {
  InProcessCollectives transport(absl::Seconds(10));
  std::vector<absl::Status> status(2);
  RunRanks(transport, Clique(2), [&](int r, Communicator& c) {
    std::vector<int32_t> in = {r}, out = {0, 0};
    if (r == 0) {
      status[r] = Sync(c.AllGather(Mem(in), Mem(out), DataType::kS32, 1, nullptr));
    } else {
      std::vector<int32_t> one = {0};
      status[r] = Sync(c.Broadcast(Mem(in), Mem(one), DataType::kS32, 1, RankId(0), nullptr));
    }
  });
  for (const auto& s : status) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find("all_gather"), absl::string_view::npos) << s;
    EXPECT_NE(s.message().find("broadcast"), absl::string_view::npos) << s;
  }
}

TEST(InProcessCollectivesTest, BadSizesAndRanksAreErrors) {
  InProcessCollectives transport(absl::Milliseconds(100));
  EXPECT_FALSE(transport.GetCommunicator(Clique(2), RankId(2)).ok());
  EXPECT_FALSE(transport.GetCommunicator(CliqueKey{}, RankId(0)).ok());
  auto comm = transport.GetCommunicator(Clique(2), RankId(0));
  ASSERT_TRUE(comm.ok());
  std::vector<int32_t> in = {1, 2, 3}, out = {0};
  EXPECT_EQ(Sync((*comm)->AllGather(Mem(in), Mem(out), DataType::kS32, 3, nullptr)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Sync((*comm)->Broadcast(Mem(in), Mem(in), DataType::kS32, 3, RankId(5), nullptr)).code(),
            absl::StatusCode::kInvalidArgument);
}

// With a stream, an operation runs when the stream reaches it, after the work queued before it.
TEST(InProcessCollectivesTest, OperationsOrderedOnHostStreams) {
  InProcessCollectives transport;
  const int n = 2;
  std::vector<std::unique_ptr<se::host::HostStream>> streams;
  for (int r = 0; r < n; ++r) {
    streams.push_back(std::make_unique<se::host::HostStream>("test stream"));
  }
  std::vector<std::vector<int32_t>> in(n, std::vector<int32_t>(3, 0)), out(n, std::vector<int32_t>(3));
  std::vector<AsyncEventRef> done(n);
  for (int r = 0; r < n; ++r) {
    auto comm = transport.GetCommunicator(Clique(n), RankId(r));
    ASSERT_TRUE(comm.ok());
    // The input is written by stream work queued before the collective.
    ASSERT_TRUE(streams[r]->EnqueueHostCallback([&, r]() {
      absl::SleepFor(absl::Milliseconds(20));
      in[r] = {r + 1, r + 2, r + 3};
      return absl::OkStatus();
    }).ok());
    done[r] = (*comm)->AllReduce(Mem(in[r]), Mem(out[r]), DataType::kS32, 3, ReductionKind::kSum,
                                 streams[r].get());
  }
  for (int r = 0; r < n; ++r) {
    ASSERT_TRUE(done[r]->Await().ok());
    EXPECT_EQ(out[r], (std::vector<int32_t>{3, 5, 7}));
  }
}

}  // namespace
}  // namespace ember::collectives
