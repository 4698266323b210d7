// The virtual GPU's unified address space: device allocations (backed by host memory but placed
// at non-canonical addresses, so host code that dereferences a device pointer crashes as it would
// on a real GPU), pinned and registered host memory, and module variables. Addresses are never
// reused, so an access to freed memory is recognized as use after free, and one past an
// allocation's exact size as out of bounds.
#ifndef EMBER_TESTS_VIRTUAL_GPU_DRIVER_ADDRESS_SPACE_H_
#define EMBER_TESTS_VIRTUAL_GPU_DRIVER_ADDRESS_SPACE_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace ember::vgpu {

// Device memory of device d lives at kDeviceBase + d * kDeviceSpan.
inline constexpr uint64_t kDeviceBase = 0x0000a00000000000ull;
inline constexpr uint64_t kDeviceSpan = 0x0000010000000000ull;

struct Allocation {
  enum class Kind { kDevice, kPinnedHost, kRegisteredHost, kModuleGlobal, kModuleConst };
  Kind kind = Kind::kDevice;
  uint64_t base = 0;
  uint64_t size = 0;
  int device = -1;  // -1 for host memory (reachable from every device)
  uint8_t* host = nullptr;
  std::unique_ptr<uint8_t[]> owned;  // backing of device-side kinds
  std::atomic<bool> freed{false};
  std::string label;  // e.g. the module variable's name
  bool writable() const { return kind != Kind::kModuleConst; }
  bool on_device() const { return device >= 0; }
  std::string Describe() const;  // "the 4096-byte allocation at 0x... on device 0"
};

class AddressSpace {
 public:
  // Device memory filled with 0xff (NaN in every float format), as uninitialized memory would be
  // garbage on a GPU. ResourceExhausted when the host cannot back it.
  absl::StatusOr<std::shared_ptr<Allocation>> AllocateDevice(int device, uint64_t size,
                                                             Allocation::Kind kind,
                                                             std::string label);
  // Pinned (kPinnedHost: allocated here) or registered (kRegisteredHost: the caller's) host
  // memory, device-visible at its host address.
  absl::StatusOr<std::shared_ptr<Allocation>> AddHost(uint8_t* host, uint64_t size,
                                                      Allocation::Kind kind);
  // Removes a live allocation that starts at `base` and has `kind`.
  absl::StatusOr<std::shared_ptr<Allocation>> Remove(uint64_t base, Allocation::Kind kind);
  // The live allocation containing `address`; otherwise an error saying whether the address is
  // in freed memory, just past an allocation, or nowhere.
  absl::StatusOr<std::shared_ptr<Allocation>> Find(uint64_t address) const;
  // As Find, and [address, address + size) must lie inside the allocation.
  absl::StatusOr<std::shared_ptr<Allocation>> FindRange(uint64_t address, uint64_t size) const;
  // True when `address` lies in the device address range (live or not).
  static bool IsDeviceAddress(uint64_t address) {
    return address >= kDeviceBase && address < kDeviceBase + 16 * kDeviceSpan;
  }
  uint64_t DeviceBytesInUse(int device) const;
  // Every live allocation of `device` (device memory and module variables).
  std::vector<std::shared_ptr<Allocation>> DeviceAllocations(int device) const;
  size_t LiveCount(Allocation::Kind kind) const;

 private:
  struct FreedRange {
    uint64_t size;
    std::string description;
  };
  mutable absl::Mutex mu_;
  std::map<uint64_t, std::shared_ptr<Allocation>> live_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, FreedRange> freed_ ABSL_GUARDED_BY(mu_);
  uint64_t next_[16] ABSL_GUARDED_BY(mu_) = {};
  uint64_t in_use_[16] ABSL_GUARDED_BY(mu_) = {};
};

}  // namespace ember::vgpu

#endif  // EMBER_TESTS_VIRTUAL_GPU_DRIVER_ADDRESS_SPACE_H_
