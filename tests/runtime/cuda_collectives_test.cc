// The runtime client on CUDA devices (the virtual GPU) gets NCCL as its collectives transport:
// one process owning every GPU, and two clients of a job of two processes (played in one process,
// sharing an in-process key-value store), whose cliques span both and exchange their unique id
// through the store.
#include <future>

#include "absl/strings/match.h"
#include "collectives/key_value_store.h"
#include "collectives/nccl/nccl_collectives.h"
#include "gtest/gtest.h"
#include "runtime/client.h"

namespace ember::runtime {
namespace {

DeviceOptions CudaOptions() {
  DeviceOptions options;
  options.platform = "cuda";
  options.cuda_library_path = EMBER_VIRTUAL_GPU_LIB_DIR;
  options.collective_timeout = absl::Seconds(20);
  return options;
}

TEST(CudaCollectivesTest, OneProcessWithSeveralGpusUsesNccl) {
  auto client = Client::Create(CudaOptions());
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_EQ((*client)->se_platform_name(), "cuda");
  ASSERT_GE((*client)->devices().size(), 2u);
  ASSERT_NE((*client)->collectives(), nullptr) << (*client)->no_collectives_reason();
  EXPECT_STREQ((*client)->collectives()->name(), "nccl");
  collectives::CliqueKey clique{{0, 1}};
  auto rank0 = (*client)->collectives()->GetCommunicator(clique, collectives::RankId(0));
  ASSERT_TRUE(rank0.ok()) << rank0.status();
  EXPECT_EQ((*rank0)->size(), 2);
  EXPECT_TRUE((*rank0)->HealthCheck().ok());
}

TEST(CudaCollectivesTest, ClientsOfTwoProcessesShareACliqueThroughTheStore) {
  auto store = std::make_shared<collectives::InMemoryKeyValueStore>();
  std::vector<std::future<absl::StatusOr<std::shared_ptr<Client>>>> pending;
  for (int p = 0; p < 2; ++p) {
    pending.push_back(std::async(std::launch::async, [p, store] {
      DeviceOptions options = CudaOptions();
      options.process_index = p;
      options.process_count = 2;
      return Client::Create(options, store);
    }));
  }
  std::vector<std::shared_ptr<Client>> clients;
  for (auto& made : pending) {
    auto client = made.get();
    ASSERT_TRUE(client.ok()) << client.status();
    clients.push_back(*client);
  }
  const int local = static_cast<int>(clients[0]->addressable_devices().size());
  ASSERT_EQ(clients[1]->devices()[local]->id(), local);
  ASSERT_TRUE(clients[1]->devices()[local]->addressable());
  // Device 0 (process 0, GPU 0) and device local + 1 (process 1, GPU 1): one clique, one rank in
  // each client.
  collectives::CliqueKey clique{{0, local + 1}};
  std::vector<std::future<absl::StatusOr<std::shared_ptr<collectives::Communicator>>>> comms;
  for (int p = 0; p < 2; ++p) {
    ASSERT_NE(clients[p]->collectives(), nullptr) << clients[p]->no_collectives_reason();
    comms.push_back(std::async(std::launch::async, [&, p] {
      return clients[p]->collectives()->GetCommunicator(clique, collectives::RankId(p));
    }));
  }
  for (int p = 0; p < 2; ++p) {
    auto comm = comms[p].get();
    ASSERT_TRUE(comm.ok()) << "process " << p << ": " << comm.status();
    EXPECT_EQ((*comm)->rank().value, p);
    EXPECT_EQ((*comm)->size(), 2);
  }
  // The id went through the store, under the first clients' keys.
  auto id = store->Get(
      "ember/client0/" + collectives::nccl::NcclCollectives::KeyPrefix(clique, 0) + "id",
      absl::Milliseconds(1));
  EXPECT_TRUE(id.ok()) << id.status();
}

}  // namespace
}  // namespace ember::runtime
