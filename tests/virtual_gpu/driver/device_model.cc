#include "tests/virtual_gpu/driver/device_model.h"

#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ember::vgpu {

std::optional<DeviceModel> FindDeviceModel(const std::string& name) {
  const std::string key = absl::AsciiStrToUpper(name);
  DeviceModel m;
  if (key == "A100") {
    m.short_name = "A100";
    m.name = "NVIDIA A100-SXM4-40GB (Ember virtual GPU)";
    m.cc_major = 8;
    m.cc_minor = 0;
    m.sm_count = 108;
    m.total_memory = 42505273344ull;  // 40 GiB board, 40536 MiB usable
    m.shared_per_block_optin = 166912;
    m.shared_per_sm = 167936;
    m.clock_khz = 1410000;
    m.memory_clock_khz = 1215000;
    m.memory_bus_width = 5120;
    m.l2_bytes = 41943040;
    m.pci_device_id = 0x20b0;
    return m;
  }
  if (key == "H100") {
    m.short_name = "H100";
    m.name = "NVIDIA H100 80GB HBM3 (Ember virtual GPU)";
    m.cc_major = 9;
    m.cc_minor = 0;
    m.sm_count = 132;
    m.total_memory = 85520809984ull;  // 80 GiB board, 81559 MiB usable
    m.shared_per_block_optin = 232448;
    m.shared_per_sm = 233472;
    m.clock_khz = 1980000;
    m.memory_clock_khz = 2619000;
    m.memory_bus_width = 5120;
    m.l2_bytes = 52428800;
    m.pci_device_id = 0x2330;
    return m;
  }
  return std::nullopt;
}

absl::StatusOr<MachineConfig> MachineConfigFromEnvironment() {
  int count = 2;
  if (const char* text = std::getenv("EMBER_VIRTUAL_GPU_COUNT")) {
    if (!absl::SimpleAtoi(text, &count) || count < 1 || count > 16) {
      return absl::InvalidArgumentError(absl::StrCat(
          "EMBER_VIRTUAL_GPU_COUNT must be an integer between 1 and 16, got \"", text, "\""));
    }
  }
  std::vector<std::string> names = {"H100"};
  if (const char* text = std::getenv("EMBER_VIRTUAL_GPU_MODEL")) {
    names = absl::StrSplit(text, ',', absl::SkipWhitespace());
    if (names.empty()) names = {"H100"};
  }
  if (names.size() != 1 && static_cast<int>(names.size()) != count) {
    return absl::InvalidArgumentError(absl::StrCat(
        "EMBER_VIRTUAL_GPU_MODEL names ", names.size(), " models for ", count,
        " devices (give one model, or one per device)"));
  }
  MachineConfig config;
  for (int i = 0; i < count; ++i) {
    const std::string& name = names.size() == 1 ? names[0] : names[i];
    std::optional<DeviceModel> model = FindDeviceModel(std::string(absl::StripAsciiWhitespace(name)));
    if (!model) {
      return absl::InvalidArgumentError(absl::StrCat(
          "EMBER_VIRTUAL_GPU_MODEL: unknown model \"", name, "\" (known: A100, H100)"));
    }
    config.devices.push_back(*model);
  }
  return config;
}

}  // namespace ember::vgpu
