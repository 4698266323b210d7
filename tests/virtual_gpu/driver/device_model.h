// The parts the virtual GPU can pretend to be (an A100-SXM4-40GB at sm_80, an H100-SXM5-80GB at
// sm_90) with their published limits, and the machine it builds from the environment:
// EMBER_VIRTUAL_GPU_COUNT (default 2) devices of EMBER_VIRTUAL_GPU_MODEL ("H100" by default, or
// "A100", or a comma-separated list naming each device's model).
#ifndef EMBER_TESTS_VIRTUAL_GPU_DRIVER_DEVICE_MODEL_H_
#define EMBER_TESTS_VIRTUAL_GPU_DRIVER_DEVICE_MODEL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ember::vgpu {

struct DeviceModel {
  std::string short_name;  // "A100"
  std::string name;        // what cuDeviceGetName reports
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  uint64_t total_memory = 0;
  int shared_per_block = 48 * 1024;
  int shared_per_block_optin = 0;
  int shared_per_sm = 0;
  int reserved_shared_per_block = 1024;
  int registers_per_block = 65536;
  int registers_per_sm = 65536;
  int max_threads_per_block = 1024;
  int max_threads_per_sm = 2048;
  int max_blocks_per_sm = 32;
  int clock_khz = 0;
  int memory_clock_khz = 0;
  int memory_bus_width = 0;
  int l2_bytes = 0;
  int total_constant_memory = 64 * 1024;
  int pci_device_id = 0;
};

// nullopt for names other than "A100" and "H100" (case-insensitive).
std::optional<DeviceModel> FindDeviceModel(const std::string& name);

struct MachineConfig {
  std::vector<DeviceModel> devices;
};

// Reads EMBER_VIRTUAL_GPU_COUNT and EMBER_VIRTUAL_GPU_MODEL; InvalidArgument naming the variable
// for values it does not understand.
absl::StatusOr<MachineConfig> MachineConfigFromEnvironment();

}  // namespace ember::vgpu

#endif  // EMBER_TESTS_VIRTUAL_GPU_DRIVER_DEVICE_MODEL_H_
