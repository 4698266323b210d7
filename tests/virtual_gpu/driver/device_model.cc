#include "tests/virtual_gpu/driver/device_model.h"

#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ember::vgpu {

namespace {

// The parts' published figures (NVIDIA's A100 and H100 datasheets and CUDA occupancy tables).
struct ModelFigures {
  const char* short_name;
  const char* name;
  int cc_major, cc_minor, sm_count;
  uint64_t total_memory;
  int shared_per_block_optin, shared_per_sm, clock_khz, memory_clock_khz, l2_bytes, pci_device_id;
};
constexpr ModelFigures kModels[] = {
    {"A100", "NVIDIA A100-SXM4-40GB (Ember virtual GPU)", 8, 0, 108, 42505273344ull, 166912, 167936,
     1410000, 1215000, 41943040, 0x20b0},
    {"H100", "NVIDIA H100 80GB HBM3 (Ember virtual GPU)", 9, 0, 132, 85520809984ull, 232448, 233472,
     1980000, 2619000, 52428800, 0x2330},
};

}  // namespace

std::optional<DeviceModel> FindDeviceModel(const std::string& name) {
  const std::string key = absl::AsciiStrToUpper(name);
  for (const ModelFigures& f : kModels) {
    if (key != f.short_name) continue;
    DeviceModel m;
    m.short_name = f.short_name;
    m.name = f.name;
    m.cc_major = f.cc_major;
    m.cc_minor = f.cc_minor;
    m.sm_count = f.sm_count;
    m.total_memory = f.total_memory;
    m.shared_per_block_optin = f.shared_per_block_optin;
    m.shared_per_sm = f.shared_per_sm;
    m.clock_khz = f.clock_khz;
    m.memory_clock_khz = f.memory_clock_khz;
    m.memory_bus_width = 5120;
    m.l2_bytes = f.l2_bytes;
    m.pci_device_id = f.pci_device_id;
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
