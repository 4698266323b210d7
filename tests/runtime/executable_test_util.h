// Helpers of the runtime::Executable tests: a host client with N devices, a program compiled
// for replicas x partitions (device ids in row-major order), and f32 buffers up and down.
#ifndef EMBER_TESTS_RUNTIME_EXECUTABLE_TEST_UTIL_H_
#define EMBER_TESTS_RUNTIME_EXECUTABLE_TEST_UTIL_H_

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "compiler/driver/compile_program.h"
#include "tests/backend_test_util.h"
#include "gtest/gtest.h"
#include "runtime/client.h"
#include "runtime/executable.h"

namespace ember::runtime::test_util {

inline std::shared_ptr<Client> MakeClient(int devices) {
  DeviceOptions options;
  options.platform = "host";
  options.host_device_count = devices;
  auto client = Client::Create(options);
  EXPECT_TRUE(client.ok()) << client.status();
  return *client;
}

inline absl::StatusOr<std::unique_ptr<Executable>> Build(std::shared_ptr<Client> client,
                                                         const std::string& text, int64_t replicas,
                                                         int64_t partitions, bool spmd = false,
                                                         const CompilerOptions& compiler = {}) {
  frontend::CompileOptions options;
  options.num_replicas = replicas;
  options.num_partitions = partitions;
  options.use_spmd_partitioning = spmd;
  for (int64_t r = 0; r < replicas; ++r) {
    options.device_assignment.emplace_back();
    for (int64_t p = 0; p < partitions; ++p) {
      options.device_assignment.back().push_back(r * partitions + p);
    }
  }
  auto program = compiler::CompileProgram(
      "mlir", absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()),
      options, ember::test_util::HostTestBackend(compiler), compiler);
  if (!program.ok()) return program.status();
  return Executable::Create(std::move(client), *std::move(program));
}

inline std::unique_ptr<Buffer> Upload(Client& client, Device* device,
                                      const std::vector<float>& values, std::vector<int64_t> dims) {
  AsyncEventRef done_with_host;
  auto buffer = client.BufferFromHostBuffer(values.data(), ir::ElementType::kF32, dims, {},
                                            HostBufferSemantics::kImmutableOnlyDuringCall,
                                            device->default_memory(), &done_with_host);
  EXPECT_TRUE(buffer.ok()) << buffer.status();
  return *std::move(buffer);
}

inline std::vector<float> Download(Buffer& buffer) {
  int64_t n = 1;
  for (int64_t d : buffer.dims()) n *= d;
  std::vector<float> out(n);
  auto done = buffer.ToHost(out.data(), {});
  EXPECT_TRUE(done.ok()) << done.status();
  EXPECT_TRUE((*done)->Await().ok());
  return out;
}

inline std::vector<float> Random(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist;
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Runs `executable` with in[d] (f32 of `dims`) as the one argument of device d, waits for every
// device and returns each device's results as f32 values (empty, with a test failure, on error).
inline std::vector<std::vector<std::vector<float>>> RunOnDevices(
    Client& client, Executable& executable, const std::vector<std::vector<float>>& in,
    const std::vector<int64_t>& dims) {
  std::vector<std::unique_ptr<Buffer>> owned;
  std::vector<std::vector<Buffer*>> args(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    owned.push_back(Upload(client, client.devices()[d], in[d], dims));
    args[d].push_back(owned.back().get());
  }
  auto launch = executable.Execute(args, {}, nullptr);
  EXPECT_TRUE(launch.ok()) << launch.status();
  if (!launch.ok()) return {};
  std::vector<std::vector<std::vector<float>>> out(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    const absl::Status done = launch->done[d]->Await();
    EXPECT_TRUE(done.ok()) << "device " << d << ": " << done;
    if (!done.ok()) return {};
    for (const auto& result : launch->outputs[d]) out[d].push_back(Download(*result));
  }
  return out;
}

}  // namespace ember::runtime::test_util

#endif  // EMBER_TESTS_RUNTIME_EXECUTABLE_TEST_UTIL_H_
