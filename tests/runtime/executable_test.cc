// runtime::Executable over several host devices: replicas with collectives, concurrent launches
// from several threads, SPMD programs with Shardy shardings and manual computations (shard_map),
// and the argument errors of multi-device launches.
#include "runtime/executable.h"

#include <algorithm>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "compiler/driver/compile_program.h"
#include "gtest/gtest.h"
#include "tests/runtime/executable_test_util.h"

namespace ember::runtime {
namespace {

using test_util::Build;
using test_util::Download;
using test_util::MakeClient;
using test_util::Random;
using test_util::RunOnDevices;
using test_util::Upload;

constexpr char kAllReducePlusReplicaId[] = R"(
module @replicas {
  func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
    %sum = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<3xf32>) -> tensor<3xf32>
    %id = stablehlo.replica_id : tensor<ui32>
    %f = stablehlo.convert %id : (tensor<ui32>) -> tensor<f32>
    %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %r = stablehlo.add %sum, %b : tensor<3xf32>
    return %r : tensor<3xf32>
  }
})";

TEST(ExecutableTest, ReplicasAllReduceAndKnowTheirIds) {
  auto client = MakeClient(4);
  auto executable = Build(client, kAllReducePlusReplicaId, 4, 1);
  ASSERT_TRUE(executable.ok()) << executable.status();
  ASSERT_EQ((*executable)->devices().size(), 4u);
  std::vector<std::vector<float>> in(4);
  std::vector<std::unique_ptr<Buffer>> owned;
  std::vector<std::vector<Buffer*>> args(4);
  for (int d = 0; d < 4; ++d) {
    in[d] = Random(3, d);
    owned.push_back(Upload(*client, client->devices()[d], in[d], {3}));
    args[d].push_back(owned.back().get());
  }
  auto launch = (*executable)->Execute(args, {}, nullptr);
  ASSERT_TRUE(launch.ok()) << launch.status();
  for (int d = 0; d < 4; ++d) {
    ASSERT_TRUE(launch->done[d]->Await().ok()) << launch->done[d]->Await();
    EXPECT_EQ(launch->outputs[d][0]->device(), client->devices()[d]);
    std::vector<float> out = Download(*launch->outputs[d][0]);
    for (int i = 0; i < 3; ++i) {
      const float sum = ((in[0][i] + in[1][i]) + in[2][i]) + in[3][i];
      EXPECT_NEAR(out[i], sum + d, 1e-5f) << "device " << d << " element " << i;
    }
  }
}

// Donation on every replica: x is donated; x * 2 + replica_id may take its memory once the
// all_reduce (which reads x) has run, which the compiler's schedule arranges.
constexpr char kDonatedReplicas[] = R"(
module @donated_replicas {
  func.func @main(%x: tensor<64xf32> {jax.buffer_donor = true}) -> (tensor<64xf32>, tensor<64xf32>) {
    %two = stablehlo.constant dense<2.0> : tensor<64xf32>
    %scaled = stablehlo.multiply %x, %two : tensor<64xf32>
    %id = stablehlo.replica_id : tensor<ui32>
    %f = stablehlo.convert %id : (tensor<ui32>) -> tensor<f32>
    %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %r = stablehlo.add %scaled, %b : tensor<64xf32>
    %sum = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<f32>, %c: tensor<f32>):
        %s = stablehlo.add %a, %c : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<64xf32>) -> tensor<64xf32>
    return %r, %sum : tensor<64xf32>, tensor<64xf32>
  }
})";

TEST(ExecutableTest, DonatedArgumentsBecomeResultsOnEveryReplica) {
  auto client = MakeClient(2);
  auto executable = Build(client, kDonatedReplicas, 2, 1);
  ASSERT_TRUE(executable.ok()) << executable.status();
  ASSERT_EQ((*executable)->program().executable->layout().result_aliases, (std::vector<int>{0, -1}));
  std::vector<std::vector<float>> in(2);
  std::vector<std::unique_ptr<Buffer>> owned;
  std::vector<std::vector<Buffer*>> args(2);
  std::vector<void*> memory(2);
  for (int d = 0; d < 2; ++d) {
    in[d] = Random(64, 10 + d);
    owned.push_back(Upload(*client, client->devices()[d], in[d], {64}));
    args[d].push_back(owned.back().get());
    auto pointer = owned.back()->OpaqueDevicePointer();
    ASSERT_TRUE(pointer.ok()) << pointer.status();
    memory[d] = *pointer;
  }
  auto launch = (*executable)->Execute(args, {}, nullptr);
  ASSERT_TRUE(launch.ok()) << launch.status();
  for (int d = 0; d < 2; ++d) {
    ASSERT_TRUE(launch->done[d]->Await().ok()) << launch->done[d]->Await();
    EXPECT_TRUE(owned[d]->IsDeleted());
    auto pointer = launch->outputs[d][0]->OpaqueDevicePointer();
    ASSERT_TRUE(pointer.ok()) << pointer.status();
    EXPECT_EQ(*pointer, memory[d]) << "device " << d;
    const std::vector<float> scaled = Download(*launch->outputs[d][0]);
    const std::vector<float> sum = Download(*launch->outputs[d][1]);
    for (int i = 0; i < 64; ++i) {
      EXPECT_FLOAT_EQ(scaled[i], in[d][i] * 2 + static_cast<float>(d));
      EXPECT_FLOAT_EQ(sum[i], in[0][i] + in[1][i]);
    }
  }
  // Kept (non-donatable) on this call: fresh memory, the argument stays.
  std::vector<std::unique_ptr<Buffer>> kept;
  for (int d = 0; d < 2; ++d) {
    kept.push_back(Upload(*client, client->devices()[d], in[d], {64}));
    args[d] = {kept.back().get()};
  }
  const int64_t keep[] = {0};
  auto again = (*executable)->Execute(args, keep, nullptr);
  ASSERT_TRUE(again.ok()) << again.status();
  for (int d = 0; d < 2; ++d) {
    ASSERT_TRUE(again->done[d]->Await().ok());
    EXPECT_FALSE(kept[d]->IsDeleted());
    EXPECT_NE(*again->outputs[d][0]->OpaqueDevicePointer(), *kept[d]->OpaqueDevicePointer());
    EXPECT_EQ(Download(*kept[d]), in[d]);
  }
}

// A donated buffer passed again in the same call is an error (as on XLA), and the buffer
// stays: nothing is deleted or launched.
constexpr char kDonatedTwice[] = R"(
module @donated_twice {
  func.func @main(%x: tensor<8xf32> {jax.buffer_donor = true}, %y: tensor<8xf32>) -> tensor<8xf32> {
    %r = stablehlo.add %x, %y : tensor<8xf32>
    return %r : tensor<8xf32>
  }
})";

TEST(ExecutableTest, DonatingABufferPassedTwiceIsAnError) {
  auto client = MakeClient(1);
  auto executable = Build(client, kDonatedTwice, 1, 1);
  ASSERT_TRUE(executable.ok()) << executable.status();
  const std::vector<float> in = Random(8, 3);
  std::unique_ptr<Buffer> x = Upload(*client, client->devices()[0], in, {8});
  std::vector<std::vector<Buffer*>> args = {{x.get(), x.get()}};
  auto launch = (*executable)->Execute(args, {}, nullptr);
  ASSERT_FALSE(launch.ok());
  EXPECT_EQ(launch.status().code(), absl::StatusCode::kInvalidArgument) << launch.status();
  EXPECT_NE(launch.status().message().find("donated"), std::string::npos) << launch.status();
  EXPECT_FALSE(x->IsDeleted());
  EXPECT_EQ(Download(*x), in);
  // Not donated on this call: fine.
  const int64_t keep[] = {0};
  auto kept = (*executable)->Execute(args, keep, nullptr);
  ASSERT_TRUE(kept.ok()) << kept.status();
  ASSERT_TRUE(kept->done[0]->Await().ok());
  const std::vector<float> out = Download(*kept->outputs[0][0]);
  for (int i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(out[i], in[i] + in[i]);
}

// collective_reduce (StableHLO 1.19): the root of each group gets the reduction, the others
// zeros; with has_dynamic_root the root's rank in the group is the last operand.
constexpr char kCollectiveReduce[] = R"(
module @reduce_to_root {
  func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
    %to_first = "stablehlo.collective_reduce"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    %root = stablehlo.constant dense<2> : tensor<1xi32>
    %to_third = "stablehlo.collective_reduce"(%x, %root) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %m = stablehlo.maximum %a, %b : tensor<f32>
        stablehlo.return %m : tensor<f32>
    }) {replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>, has_dynamic_root} : (tensor<2xf32>, tensor<1xi32>) -> tensor<2xf32>
    return %to_first, %to_third : tensor<2xf32>, tensor<2xf32>
  }
})";

TEST(ExecutableTest, CollectiveReduceGivesTheRootTheReduction) {
  auto client = MakeClient(3);
  auto executable = Build(client, kCollectiveReduce, 3, 1);
  ASSERT_TRUE(executable.ok()) << executable.status();
  std::vector<std::vector<float>> in(3);
  std::vector<std::unique_ptr<Buffer>> owned;
  std::vector<std::vector<Buffer*>> args(3);
  for (int d = 0; d < 3; ++d) {
    in[d] = Random(2, 40 + d);
    owned.push_back(Upload(*client, client->devices()[d], in[d], {2}));
    args[d].push_back(owned.back().get());
  }
  auto launch = (*executable)->Execute(args, {}, nullptr);
  ASSERT_TRUE(launch.ok()) << launch.status();
  for (int d = 0; d < 3; ++d) {
    ASSERT_TRUE(launch->done[d]->Await().ok()) << launch->done[d]->Await();
    std::vector<float> sum = Download(*launch->outputs[d][0]);
    std::vector<float> max = Download(*launch->outputs[d][1]);
    for (int i = 0; i < 2; ++i) {
      EXPECT_NEAR(sum[i], d == 0 ? (in[0][i] + in[1][i]) + in[2][i] : 0.0f, 1e-6f) << d;
      EXPECT_EQ(max[i], d == 2 ? std::max({in[0][i], in[1][i], in[2][i]}) : 0.0f) << d;
    }
  }
}

// Reduction regions no transport runs (legalize-collectives): an all_reduce of a - b, and of a
// compound expression, become all_gather plus a fold in rank order, exactly the evaluator's
// order; a reduce_scatter with such a region is a clear compile-time error.
constexpr char kUnusualReductions[] = R"(
module @unusual {
  func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    %diff = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.subtract %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>} : (tensor<4xf32>) -> tensor<4xf32>
    %mix = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %p = stablehlo.multiply %a, %b : tensor<f32>
        %s = stablehlo.add %p, %a : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[2, 0, 1]]> : tensor<1x3xi64>} : (tensor<4xf32>) -> tensor<4xf32>
    return %diff, %mix : tensor<4xf32>, tensor<4xf32>
  }
})";

TEST(ExecutableTest, UnusualReductionRegionsFoldInRankOrder) {
  auto client = MakeClient(3);
  auto executable = Build(client, kUnusualReductions, 3, 1);
  ASSERT_TRUE(executable.ok()) << executable.status();
  std::vector<std::vector<float>> in(3);
  for (int d = 0; d < 3; ++d) in[d] = Random(4, 90 + d);
  const auto out = RunOnDevices(*client, **executable, in, {4});
  ASSERT_EQ(out.size(), 3u);
  auto mix = [](float a, float b) { return a * b + a; };
  for (int d = 0; d < 3; ++d) {
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(out[d][0][i], (in[0][i] - in[1][i]) - in[2][i]) << "device " << d;
      // Ranks follow the group's order: replica 2 first, then 0, then 1.
      EXPECT_EQ(out[d][1][i], mix(mix(in[2][i], in[0][i]), in[1][i])) << "device " << d;
    }
  }
}

TEST(ExecutableTest, ReduceScatterWithAnUnusualRegionIsACompileError) {
  constexpr char kProgram[] = R"(
module @bad {
  func.func @main(%x: tensor<4xf32>) -> tensor<2xf32> {
    %r = "stablehlo.reduce_scatter"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.subtract %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, scatter_dimension = 0 : i64} : (tensor<4xf32>) -> tensor<2xf32>
    return %r : tensor<2xf32>
  }
})";
  auto client = MakeClient(2);
  auto executable = Build(client, kProgram, 2, 1);
  ASSERT_FALSE(executable.ok());
  EXPECT_EQ(executable.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(executable.status().message().find("stablehlo.reduce_scatter"), std::string::npos)
      << executable.status();
  EXPECT_NE(executable.status().message().find("reduction region"), std::string::npos)
      << executable.status();
}

TEST(ExecutableTest, ConcurrentLaunchesFromSeveralThreadsDoNotMix) {
  auto client = MakeClient(4);
  auto executable = Build(client, kAllReducePlusReplicaId, 4, 1);
  ASSERT_TRUE(executable.ok()) << executable.status();
  Executable* exe = executable->get();
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 5; ++k) {
        const float base = static_cast<float>(t * 10 + k);
        std::vector<std::unique_ptr<Buffer>> owned;
        std::vector<std::vector<Buffer*>> args(4);
        for (int d = 0; d < 4; ++d) {
          owned.push_back(Upload(*client, client->devices()[d], {base, base, base}, {3}));
          args[d].push_back(owned.back().get());
        }
        auto launch = exe->Execute(args, {}, nullptr);
        if (!launch.ok()) {
          ++failures;
          continue;
        }
        for (int d = 0; d < 4; ++d) {
          if (!launch->done[d]->Await().ok()) {
            ++failures;
            continue;
          }
          std::vector<float> out = Download(*launch->outputs[d][0]);
          if (out[0] != 4 * base + d) ++failures;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

absl::StatusOr<std::unique_ptr<compiler::CompiledProgram>> CompileText(const std::string& text) {
  frontend::CompileOptions options;
  return compiler::CompileProgram(
      "mlir", absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()),
      options, ember::test_util::HostTestBackend());
}

constexpr char kTwiceXPlusOne[] = R"(
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %two = stablehlo.constant dense<2.0> : tensor<4xf32>
  %one = stablehlo.constant dense<1.0> : tensor<4xf32>
  %m = stablehlo.multiply %x, %two : tensor<4xf32>
  %r = stablehlo.add %m, %one : tensor<4xf32>
  return %r : tensor<4xf32>
})";

TEST(ExecutableTest, OnlyCheapProgramsRunInline) {
  auto cheap = CompileText(kTwiceXPlusOne);
  ASSERT_TRUE(cheap.ok()) << cheap.status();
  EXPECT_TRUE((*cheap)->executable->dispatch_inline());
  // 256 KiB per value: handed to the stream thread.
  auto large = CompileText(R"(
func.func @main(%x: tensor<65536xf32>) -> tensor<65536xf32> {
  %r = stablehlo.add %x, %x : tensor<65536xf32>
  return %r : tensor<65536xf32>
})");
  ASSERT_TRUE(large.ok()) << large.status();
  EXPECT_FALSE((*large)->executable->dispatch_inline());
  // A loop may run for any time.
  auto loop = CompileText(R"(
func.func @main(%n: tensor<i32>) -> tensor<i32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %r = stablehlo.while(%i = %zero) : tensor<i32>
    cond {
      %c = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %next = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %next : tensor<i32>
    }
  return %r : tensor<i32>
})");
  ASSERT_TRUE(loop.ok()) << loop.status();
  EXPECT_FALSE((*loop)->executable->dispatch_inline());
}

// Cheap launches run on the calling thread when the device's stream is idle and are queued
// otherwise; chains of launches fed by each other's outputs, from several threads at once, must
// still see every input complete and in order.
TEST(ExecutableTest, CheapLaunchChainsFromSeveralThreadsStayOrdered) {
  auto client = MakeClient(1);
  auto program = CompileText(kTwiceXPlusOne);
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_TRUE((*program)->executable->dispatch_inline());
  auto executable = Executable::Create(client, *std::move(program));
  ASSERT_TRUE(executable.ok()) << executable.status();
  Executable* exe = executable->get();
  Device* device = client->devices()[0];
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const float start = static_cast<float>(t);
      std::unique_ptr<Buffer> current = Upload(*client, device, {start, start, start, start}, {4});
      float expected = start;
      for (int k = 0; k < 20; ++k) {
        std::vector<std::vector<Buffer*>> args = {{current.get()}};
        auto launch = exe->Execute(args, {}, nullptr);
        if (!launch.ok()) {
          ++failures;
          return;
        }
        current = std::move(launch->outputs[0][0]);
        expected = expected * 2 + 1;
        if (k % 5 == 4) {
          // Only some steps wait, so later launches often find their input still pending.
          // Exact: integers below 2^24.
          std::vector<float> out = Download(*current);
          for (float v : out) {
            if (v != expected) ++failures;
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(ExecutableTest, MultiDeviceArgumentErrors) {
  auto client = MakeClient(4);
  auto executable = Build(client, kAllReducePlusReplicaId, 4, 1);
  ASSERT_TRUE(executable.ok()) << executable.status();
  auto buffer = Upload(*client, client->devices()[0], {1, 2, 3}, {3});
  // Too few argument lists.
  std::vector<std::vector<Buffer*>> two(2, std::vector<Buffer*>{buffer.get()});
  auto launch = (*executable)->Execute(two, {}, nullptr);
  ASSERT_FALSE(launch.ok());
  EXPECT_EQ(launch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(launch.status().message().find("argument lists for 2 devices"), absl::string_view::npos)
      << launch.status();
  // A buffer on the wrong device.
  std::vector<std::vector<Buffer*>> four(4, std::vector<Buffer*>{buffer.get()});
  launch = (*executable)->Execute(four, {}, nullptr);
  ASSERT_FALSE(launch.ok());
  EXPECT_NE(launch.status().message().find("device list 1"), absl::string_view::npos)
      << launch.status();
  // One device of a multi-device executable.
  launch = (*executable)->Execute(two, {}, client->devices()[0]);
  EXPECT_EQ(launch.status().code(), absl::StatusCode::kInvalidArgument);
  // The buffer was not consumed by the failed calls.
  EXPECT_FALSE(buffer->IsDeleted());
}

// Replica 3 fails before the all_reduce (an unknown custom call on its branch); its peers,
// already waiting at the collective, must fail promptly with its error rather than hang.
constexpr char kOneReplicaFails[] = R"(
module @fails {
  func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
    %id = stablehlo.replica_id : tensor<ui32>
    %three = stablehlo.constant dense<3> : tensor<ui32>
    %is3 = stablehlo.compare EQ, %id, %three : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
    %y = "stablehlo.if"(%is3) ({
      %bad = stablehlo.custom_call @ember_test_no_such_target(%x) : (tensor<3xf32>) -> tensor<3xf32>
      stablehlo.return %bad : tensor<3xf32>
    }, {
      stablehlo.return %x : tensor<3xf32>
    }) : (tensor<i1>) -> tensor<3xf32>
    %sum = "stablehlo.all_reduce"(%y) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<3xf32>) -> tensor<3xf32>
    return %sum : tensor<3xf32>
  }
})";

TEST(ExecutableTest, AFailingDeviceFailsItsPeersInsteadOfHanging) {
  auto client = MakeClient(4);
  auto executable = Build(client, kOneReplicaFails, 4, 1);
  ASSERT_TRUE(executable.ok()) << executable.status();
  std::vector<std::unique_ptr<Buffer>> owned;
  std::vector<std::vector<Buffer*>> args(4);
  for (int d = 0; d < 4; ++d) {
    owned.push_back(Upload(*client, client->devices()[d], {1, 2, 3}, {3}));
    args[d].push_back(owned.back().get());
  }
  const absl::Time start = absl::Now();
  auto launch = (*executable)->Execute(args, {}, nullptr);
  ASSERT_TRUE(launch.ok()) << launch.status();
  for (int d = 0; d < 4; ++d) {
    absl::Status s = launch->done[d]->Await();
    EXPECT_FALSE(s.ok()) << "device " << d;
    EXPECT_NE(s.message().find("ember_test_no_such_target"), absl::string_view::npos)
        << "device " << d << ": " << s;
    EXPECT_FALSE(launch->outputs[d][0]->ReadyEvent()->Await().ok());
  }
  EXPECT_LT(absl::Now() - start, absl::Seconds(20));
  // The executable still runs a good launch afterwards (its peers' streams are not stuck).
  auto client_ok = Build(client, kAllReducePlusReplicaId, 4, 1);
  ASSERT_TRUE(client_ok.ok());
  auto again = (*client_ok)->Execute(args, {}, nullptr);
  ASSERT_TRUE(again.ok()) << again.status();
  for (int d = 0; d < 4; ++d) EXPECT_TRUE(again->done[d]->Await().ok());
}

constexpr char kDouble[] = R"(
module @double {
  func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
    %y = stablehlo.add %x, %x : tensor<3xf32>
    return %y : tensor<3xf32>
  }
})";

// A multi-device launch whose input on device 0 comes from a single-device launch that is
// itself still waiting for its input: the multi-device launch must not occupy device 0's
// stream while it waits (the producer would queue behind it forever).
TEST(ExecutableTest, WaitsForInputsFromLaterQueuedWorkWithoutDeadlock) {
  auto client = MakeClient(4);
  Device* device0 = client->devices()[0];
  auto single = Build(client, kDouble, 1, 1);
  ASSERT_TRUE(single.ok()) << single.status();
  auto multi = Build(client, kAllReducePlusReplicaId, 4, 1);
  ASSERT_TRUE(multi.ok()) << multi.status();
  auto allocation = DeviceAllocation::Allocate(device0->executor(), 3 * sizeof(float));
  ASSERT_TRUE(allocation.ok()) << allocation.status();
  AsyncEventRef pending = AsyncEvent::Create();
  Buffer late(client, device0, device0->default_memory(), ir::ElementType::kF32, {3}, *allocation,
              pending);
  auto doubled = (*single)->Execute(std::vector<std::vector<Buffer*>>{{&late}}, {}, nullptr);
  ASSERT_TRUE(doubled.ok()) << doubled.status();
  std::vector<std::unique_ptr<Buffer>> owned;
  std::vector<std::vector<Buffer*>> args(4);
  args[0].push_back(doubled->outputs[0][0].get());
  for (int d = 1; d < 4; ++d) {
    owned.push_back(Upload(*client, client->devices()[d], {1, 1, 1}, {3}));
    args[d].push_back(owned.back().get());
  }
  auto summed = (*multi)->Execute(args, {}, nullptr);
  ASSERT_TRUE(summed.ok()) << summed.status();
  // Only now does the first input get its contents.
  const std::vector<float> values = {1, 2, 3};
  ASSERT_TRUE(
      device0->executor()->SynchronousMemcpyH2D((*allocation)->memory(), values.data(), 12).ok());
  pending->Set(absl::OkStatus());
  for (int d = 0; d < 4; ++d) {
    ASSERT_TRUE(summed->done[d]->Await().ok()) << summed->done[d]->Await();
    std::vector<float> out = Download(*summed->outputs[d][0]);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(out[i], 2 * values[i] + 3 + d);
  }
}

TEST(ExecutableTest, TooFewClientDevicesIsAnError) {
  auto client = MakeClient(2);
  auto executable = Build(client, kAllReducePlusReplicaId, 4, 1);
  EXPECT_FALSE(executable.ok());
}

// Global program with Shardy shardings: x is split by rows over "x", the result by columns.
constexpr char kShardedMatmul[] = R"(
module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%a: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                         %b: tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
      -> (tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x", "y"}]>}) {
    %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x6xf32>, tensor<6x4xf32>) -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
})";

TEST(ExecutableTest, SpmdProgramAssemblesShardsAndCutsResults) {
  auto client = MakeClient(4);
  auto executable = Build(client, kShardedMatmul, 1, 4, /*spmd=*/true);
  ASSERT_TRUE(executable.ok()) << executable.status();
  EXPECT_TRUE((*executable)->program().spmd);
  EXPECT_EQ((*executable)->device_parameter_types()[0].dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ((*executable)->device_result_types()[0].dims(), (std::vector<int64_t>{4, 1}));
  const std::vector<float> a = Random(24, 1), b = Random(24, 2);
  std::vector<std::unique_ptr<Buffer>> owned;
  std::vector<std::vector<Buffer*>> args(4);
  for (int d = 0; d < 4; ++d) {
    const int x = d / 2, y = d % 2;  // mesh coordinates of device d
    std::vector<float> shard;
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 3; ++j) shard.push_back(a[(2 * x + i) * 6 + 3 * y + j]);
    }
    owned.push_back(Upload(*client, client->devices()[d], shard, {2, 3}));
    args[d].push_back(owned.back().get());
    owned.push_back(Upload(*client, client->devices()[d], b, {6, 4}));
    args[d].push_back(owned.back().get());
  }
  auto launch = (*executable)->Execute(args, {}, nullptr);
  ASSERT_TRUE(launch.ok()) << launch.status();
  for (int d = 0; d < 4; ++d) {
    ASSERT_TRUE(launch->done[d]->Await().ok()) << launch->done[d]->Await();
    std::vector<float> out = Download(*launch->outputs[d][0]);
    ASSERT_EQ(out.size(), 4u);
    for (int i = 0; i < 4; ++i) {
      float want = 0;
      for (int k = 0; k < 6; ++k) want += a[i * 6 + k] * b[k * 4 + d];
      EXPECT_NEAR(out[i], want, 1e-4f) << "device " << d << " row " << i;
    }
  }
}

// shard_map as JAX lowers it: psum over the manual axis plus the axis index.
constexpr char kManual[] = R"(
module @jit_body attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["i"=4]>
  func.func public @main(%arg0: tensor<8x2xf32>) -> (tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"i"}, {}]>] out_shardings=[<@mesh, [{"i"}, {}]>] manual_axes={"i"} (%arg1: tensor<2x2xf32>) {
      %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
      ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
        %9 = stablehlo.add %arg2, %arg3 : tensor<f32>
        stablehlo.return %9 : tensor<f32>
      }) : (tensor<2x2xf32>) -> tensor<2x2xf32>
      %2 = stablehlo.partition_id : tensor<ui32>
      %6 = stablehlo.convert %2 : (tensor<ui32>) -> tensor<f32>
      %7 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<f32>) -> tensor<2x2xf32>
      %8 = stablehlo.add %1, %7 : tensor<2x2xf32>
      sdy.return %8 : tensor<2x2xf32>
    } : (tensor<8x2xf32>) -> tensor<8x2xf32>
    %10 = stablehlo.multiply %0, %0 : tensor<8x2xf32>
    return %10 : tensor<8x2xf32>
  }
})";

TEST(ExecutableTest, ManualComputationRunsTheBodyPerDevice) {
  auto client = MakeClient(4);
  auto executable = Build(client, kManual, 1, 4, /*spmd=*/true);
  ASSERT_TRUE(executable.ok()) << executable.status();
  const std::vector<float> x = Random(16, 3);
  std::vector<std::unique_ptr<Buffer>> owned;
  std::vector<std::vector<Buffer*>> args(4);
  for (int d = 0; d < 4; ++d) {  // unannotated argument: every device holds all of it
    owned.push_back(Upload(*client, client->devices()[d], x, {8, 2}));
    args[d].push_back(owned.back().get());
  }
  auto launch = (*executable)->Execute(args, {}, nullptr);
  ASSERT_TRUE(launch.ok()) << launch.status();
  for (int d = 0; d < 4; ++d) {
    ASSERT_TRUE(launch->done[d]->Await().ok()) << launch->done[d]->Await();
    std::vector<float> out = Download(*launch->outputs[d][0]);
    ASSERT_EQ(out.size(), 16u);
    for (int row = 0; row < 8; ++row) {
      for (int col = 0; col < 2; ++col) {
        float sum = 0;
        for (int k = 0; k < 4; ++k) sum += x[(2 * k + row % 2) * 2 + col];
        const float v = sum + static_cast<float>(row / 2);
        EXPECT_NEAR(out[row * 2 + col], v * v, 1e-3f) << "device " << d;
      }
    }
  }
}

}  // namespace
}  // namespace ember::runtime
