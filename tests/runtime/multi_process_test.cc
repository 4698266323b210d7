// Clients of a multi-process job, played by several clients of one process that share an
// in-process key-value store: the device lists they exchange, what each may address, and
// programs over every device of the job, each client launching on its own devices.
#include <future>
#include <thread>

#include "absl/strings/match.h"
#include "collectives/key_value_store.h"
#include "gtest/gtest.h"
#include "runtime/process_topology.h"
#include "tests/runtime/executable_test_util.h"

namespace ember::runtime {
namespace {

using test_util::Build;
using test_util::Download;
using test_util::Random;
using test_util::Upload;

// Creates the clients of a job of `processes` processes with `devices` host devices each, all at
// once (each waits for the others' device lists).
std::vector<std::shared_ptr<Client>> MakeJob(
    int processes, int devices, absl::Duration timeout = absl::Seconds(20),
    std::shared_ptr<collectives::KeyValueStore> store =
        std::make_shared<collectives::InMemoryKeyValueStore>()) {
  std::vector<std::future<absl::StatusOr<std::shared_ptr<Client>>>> pending;
  for (int p = 0; p < processes; ++p) {
    pending.push_back(std::async(std::launch::async, [=] {
      DeviceOptions options;
      options.platform = "host";
      options.host_device_count = devices;
      options.process_index = p;
      options.process_count = processes;
      options.collective_timeout = timeout;
      return Client::Create(options, store);
    }));
  }
  std::vector<std::shared_ptr<Client>> clients;
  for (auto& client : pending) {
    absl::StatusOr<std::shared_ptr<Client>> made = client.get();
    EXPECT_TRUE(made.ok()) << made.status();
    clients.push_back(made.ok() ? *made : nullptr);
  }
  return clients;
}

TEST(ProcessTopologyTest, EveryProcessSeesEveryDeviceWithDenseIds) {
  collectives::InMemoryKeyValueStore store;
  auto other = std::async(std::launch::async, [&] {
    return ExchangeProcessDevices(store, 1, 2, {"host", "cpu; odd\nkind", 3, 0}, absl::Seconds(10));
  });
  auto mine = ExchangeProcessDevices(store, 0, 2, {"host", "cpu", 2, 0}, absl::Seconds(10));
  auto theirs = other.get();
  ASSERT_TRUE(mine.ok()) << mine.status();
  ASSERT_TRUE(theirs.ok()) << theirs.status();
  for (const auto* view : {&*mine, &*theirs}) {
    ASSERT_EQ(view->size(), 2u);
    EXPECT_EQ((*view)[0].count, 2);
    EXPECT_EQ((*view)[0].first_id, 0);
    EXPECT_EQ((*view)[0].kind, "cpu");
    EXPECT_EQ((*view)[1].count, 3);
    EXPECT_EQ((*view)[1].first_id, 2);
    EXPECT_EQ((*view)[1].kind, "cpu; odd\nkind");
  }
}

TEST(ProcessTopologyTest, AMissingProcessOrAnotherPlatformIsAnError) {
  collectives::InMemoryKeyValueStore store;
  auto alone = ExchangeProcessDevices(store, 0, 2, {"host", "cpu", 1, 0}, absl::Milliseconds(50));
  ASSERT_FALSE(alone.ok());
  EXPECT_EQ(alone.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(absl::StrContains(alone.status().message(), "devices of process 1 of 2"))
      << alone.status();
  // The same process publishing again is refused (keys are written once).
  EXPECT_EQ(ExchangeProcessDevices(store, 0, 2, {"host", "cpu", 1, 0}, absl::Seconds(1))
                .status()
                .code(),
            absl::StatusCode::kAlreadyExists);
  collectives::InMemoryKeyValueStore other_platform;
  ASSERT_TRUE(other_platform.Set("ember/devices/1", "1\ncuda\nH100").ok());
  auto mixed =
      ExchangeProcessDevices(other_platform, 0, 2, {"host", "cpu", 1, 0}, absl::Seconds(1));
  ASSERT_FALSE(mixed.ok());
  EXPECT_TRUE(absl::StrContains(mixed.status().message(), "same platform")) << mixed.status();
  collectives::InMemoryKeyValueStore garbled_store;
  ASSERT_TRUE(garbled_store.Set("ember/devices/1", "two\nhost\ncpu").ok());
  auto garbled =
      ExchangeProcessDevices(garbled_store, 0, 2, {"host", "cpu", 1, 0}, absl::Seconds(1));
  ASSERT_FALSE(garbled.ok());
  EXPECT_TRUE(absl::StrContains(garbled.status().message(), "malformed")) << garbled.status();
  EXPECT_FALSE(ExchangeProcessDevices(store, 2, 2, {"host", "cpu", 1, 0}, absl::Seconds(1)).ok());
}

TEST(MultiProcessClientTest, ClientsListTheJobsDevicesAndAddressTheirOwn) {
  auto clients = MakeJob(2, 2);
  ASSERT_EQ(clients.size(), 2u);
  for (int p = 0; p < 2; ++p) {
    ASSERT_NE(clients[p], nullptr);
    const Client& client = *clients[p];
    EXPECT_EQ(client.process_index(), p);
    ASSERT_EQ(client.devices().size(), 4u);
    ASSERT_EQ(client.addressable_devices().size(), 2u);
    for (int id = 0; id < 4; ++id) {
      Device* device = client.devices()[id];
      EXPECT_EQ(device->id(), id);
      EXPECT_EQ(device->process_index(), id / 2);
      EXPECT_EQ(device->addressable(), id / 2 == p);
      EXPECT_EQ(device->local_hardware_id(), id / 2 == p ? id % 2 : -1);
      EXPECT_EQ(device->Kind(), client.addressable_devices()[0]->Kind());
      EXPECT_EQ(device->default_memory() != nullptr, device->addressable());
    }
    EXPECT_EQ(client.memories().size(), 2u);
    auto local = client.LookupAddressableDevice(1);
    ASSERT_TRUE(local.ok()) << local.status();
    EXPECT_EQ((*local)->id(), 2 * p + 1);
    // Another process's device takes no data from here.
    Device* remote = client.devices()[p == 0 ? 3 : 0];
    auto source = Upload(*clients[p], client.addressable_devices()[0], {1, 2}, {2});
    auto copy = source->CopyTo(remote, nullptr);
    ASSERT_FALSE(copy.ok());
    EXPECT_TRUE(absl::StrContains(copy.status().message(), "belongs to process")) << copy.status();
  }
}

TEST(MultiProcessClientTest, OneProcessOfSeveralNeedsTheStore) {
  DeviceOptions options;
  options.platform = "host";
  options.process_index = 0;
  options.process_count = 2;
  auto client = Client::Create(options, nullptr);
  ASSERT_FALSE(client.ok());
  EXPECT_TRUE(absl::StrContains(client.status().message(), "key-value store")) << client.status();
  options.process_index = 2;
  EXPECT_FALSE(Client::Create(options, std::make_shared<collectives::InMemoryKeyValueStore>()).ok());
}

constexpr char kAllReducePlusReplicaId[] = R"(
module @job {
  func.func @main(%x: tensor<5xf32>) -> tensor<5xf32> {
    %sum = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<5xf32>) -> tensor<5xf32>
    %id = stablehlo.replica_id : tensor<ui32>
    %f = stablehlo.convert %id : (tensor<ui32>) -> tensor<f32>
    %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %r = stablehlo.add %sum, %b : tensor<5xf32>
    return %r : tensor<5xf32>
  }
})";

#ifdef EMBER_HAVE_GLOO
// Each client launches the 4-replica program on its 2 devices; the all-reduce meets across the
// clients through Gloo, and every device knows its replica id in the whole job.
TEST(MultiProcessClientTest, AProgramOverTheJobRunsEachProcessOnItsOwnDevices) {
  auto clients = MakeJob(2, 2);
  std::vector<std::vector<float>> in(4);
  std::vector<float> sum(5, 0.0f);
  for (int d = 0; d < 4; ++d) {
    in[d] = Random(5, 40 + d);
    for (int i = 0; i < 5; ++i) sum[i] += in[d][i];
  }
  std::vector<std::unique_ptr<Executable>> executables;
  for (int p = 0; p < 2; ++p) {
    auto executable = Build(clients[p], kAllReducePlusReplicaId, 4, 1);
    ASSERT_TRUE(executable.ok()) << executable.status();
    ASSERT_EQ((*executable)->devices().size(), 4u);
    ASSERT_EQ((*executable)->addressable_devices().size(), 2u);
    executables.push_back(*std::move(executable));
  }
  for (int round = 0; round < 2; ++round) {  // the second round reuses the communicators
    std::vector<std::unique_ptr<Buffer>> owned;
    std::vector<Executable::Launch> launches;
    for (int p = 0; p < 2; ++p) {
      std::vector<std::vector<Buffer*>> args(2);
      for (int d = 0; d < 2; ++d) {
        owned.push_back(Upload(*clients[p], clients[p]->addressable_devices()[d], in[2 * p + d], {5}));
        args[d].push_back(owned.back().get());
      }
      auto launch = executables[p]->Execute(args, {}, nullptr);
      ASSERT_TRUE(launch.ok()) << launch.status();
      launches.push_back(*std::move(launch));
    }
    for (int p = 0; p < 2; ++p) {
      for (int d = 0; d < 2; ++d) {
        ASSERT_TRUE(launches[p].done[d]->Await().ok()) << launches[p].done[d]->Await();
        std::vector<float> got = Download(*launches[p].outputs[d][0]);
        for (int i = 0; i < 5; ++i) {
          EXPECT_NEAR(got[i], sum[i] + (2 * p + d), 1e-5) << "process " << p << " device " << d;
        }
      }
    }
  }
  // All four argument lists are more than this process launches.
  std::vector<std::unique_ptr<Buffer>> owned;
  std::vector<std::vector<Buffer*>> args(4);
  for (int d = 0; d < 4; ++d) {
    owned.push_back(Upload(*clients[0], clients[0]->addressable_devices()[d % 2], in[d], {5}));
    args[d].push_back(owned.back().get());
  }
  auto wrong = executables[0]->Execute(args, {}, nullptr);
  ASSERT_FALSE(wrong.ok());
  EXPECT_TRUE(absl::StrContains(wrong.status().message(), "of this process (of 4 in all)"))
      << wrong.status();
}

// A job whose clients are dropped and made again (as after jax.clear_backends()) over the same
// store: the new clients meet under their own keys, not the first clients' device lists and
// Gloo addresses.
TEST(MultiProcessClientTest, ClientsMadeAgainInTheSameJobMeetUnderTheirOwnKeys) {
  auto store = std::make_shared<collectives::InMemoryKeyValueStore>();
  for (int round = 0; round < 2; ++round) {
    auto clients = MakeJob(2, 1, absl::Seconds(20), store);
    ASSERT_EQ(clients.size(), 2u);
    std::vector<std::unique_ptr<Executable>> executables;
    std::vector<std::unique_ptr<Buffer>> owned;
    std::vector<Executable::Launch> launches;
    for (int p = 0; p < 2; ++p) {
      ASSERT_NE(clients[p], nullptr);
      auto executable = Build(clients[p], R"(
module @pair {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %sum = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    return %sum : tensor<2xf32>
  }
})", 2, 1);
      ASSERT_TRUE(executable.ok()) << executable.status();
      owned.push_back(Upload(*clients[p], clients[p]->addressable_devices()[0],
                             {1.0f + p, 10.0f * (round + 1)}, {2}));
      std::vector<std::vector<Buffer*>> args = {{owned.back().get()}};
      auto launch = (*executable)->Execute(args, {}, nullptr);
      ASSERT_TRUE(launch.ok()) << launch.status();
      launches.push_back(*std::move(launch));
      executables.push_back(*std::move(executable));
    }
    for (int p = 0; p < 2; ++p) {
      ASSERT_TRUE(launches[p].done[0]->Await().ok()) << launches[p].done[0]->Await();
      EXPECT_EQ(Download(*launches[p].outputs[0][0]),
                (std::vector<float>{3.0f, 20.0f * (round + 1)}));
    }
  }
}

// A peer process that never launches: the other's all-reduce fails after the timeout, naming the
// clique, and its client still runs single-device work.
TEST(MultiProcessClientTest, APeerThatNeverLaunchesFailsTheCollectiveAfterTheTimeout) {
  auto clients = MakeJob(2, 1, absl::Seconds(2));
  auto executable = Build(clients[0], R"(
module @pair {
  func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
    %sum = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<3xf32>) -> tensor<3xf32>
    return %sum : tensor<3xf32>
  }
})", 2, 1);
  ASSERT_TRUE(executable.ok()) << executable.status();
  auto x = Upload(*clients[0], clients[0]->addressable_devices()[0], {1, 2, 3}, {3});
  std::vector<std::vector<Buffer*>> args = {{x.get()}};
  auto launch = (*executable)->Execute(args, {}, nullptr);
  ASSERT_TRUE(launch.ok()) << launch.status();
  const absl::Status done = launch->done[0]->Await();
  ASSERT_FALSE(done.ok());
  EXPECT_TRUE(absl::StrContains(done.message(), "[0,1]")) << done;
  auto single = Build(clients[0], R"(
module @alone {
  func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
    %y = stablehlo.add %x, %x : tensor<3xf32>
    return %y : tensor<3xf32>
  }
})", 1, 1);
  ASSERT_TRUE(single.ok()) << single.status();
  std::vector<std::vector<Buffer*>> one = {{x.get()}};
  auto run = (*single)->Execute(one, {}, nullptr);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_TRUE(run->done[0]->Await().ok());
  EXPECT_EQ(Download(*run->outputs[0][0]), (std::vector<float>{2, 4, 6}));
}
#else
TEST(MultiProcessClientTest, WithoutGlooAProgramOverSeveralProcessesSaysWhy) {
  auto clients = MakeJob(2, 2);
  auto executable = Build(clients[0], kAllReducePlusReplicaId, 4, 1);
  ASSERT_FALSE(executable.ok());
  EXPECT_TRUE(absl::StrContains(executable.status().message(), "Gloo")) << executable.status();
}
#endif

}  // namespace
}  // namespace ember::runtime
