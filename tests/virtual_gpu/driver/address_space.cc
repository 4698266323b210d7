#include "tests/virtual_gpu/driver/address_space.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <new>

#include "absl/strings/str_cat.h"

namespace ember::vgpu {
namespace {

// Between two device allocations: enough that an access just past one is never inside the next.
constexpr uint64_t kGuard = 64 * 1024;
constexpr size_t kMaxFreedRecords = 1 << 16;

std::string Hex(uint64_t v) {
  char text[32];
  std::snprintf(text, sizeof(text), "0x%016" PRIx64, v);
  return text;
}

const char* KindName(Allocation::Kind kind) {
  switch (kind) {
    case Allocation::Kind::kDevice: return "device allocation";
    case Allocation::Kind::kPinnedHost: return "pinned host allocation";
    case Allocation::Kind::kRegisteredHost: return "registered host range";
    case Allocation::Kind::kModuleGlobal: return "module .global variable";
    case Allocation::Kind::kModuleConst: return "module .const variable";
  }
  return "allocation";
}

}  // namespace

std::string Allocation::Describe() const {
  std::string text = absl::StrCat("the ", size, "-byte ", KindName(kind));
  if (!label.empty()) absl::StrAppend(&text, " '", label, "'");
  absl::StrAppend(&text, " at ", Hex(base));
  if (device >= 0) absl::StrAppend(&text, " on device ", device);
  return text;
}

absl::StatusOr<std::shared_ptr<Allocation>> AddressSpace::AllocateDevice(int device, uint64_t size,
                                                                         Allocation::Kind kind,
                                                                         std::string label) {
  auto allocation = std::make_shared<Allocation>();
  allocation->kind = kind;
  allocation->size = size;
  allocation->device = device;
  allocation->label = std::move(label);
  const uint64_t backing = size == 0 ? 1 : size;
  allocation->owned.reset(new (std::nothrow) uint8_t[backing]);
  if (allocation->owned == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the host cannot back a ", size, "-byte virtual device allocation"));
  }
  allocation->host = allocation->owned.get();
  std::memset(allocation->host, 0xff, backing);
  absl::MutexLock lock(&mu_);
  const uint64_t rounded = (backing + 255) / 256 * 256;
  if (next_[device] + rounded + kGuard > kDeviceSpan) {
    return absl::ResourceExhaustedError("virtual device address space exhausted");
  }
  allocation->base = kDeviceBase + static_cast<uint64_t>(device) * kDeviceSpan + next_[device] + kGuard;
  next_[device] += rounded + kGuard;
  in_use_[device] += size;
  live_[allocation->base] = allocation;
  return allocation;
}

absl::StatusOr<std::shared_ptr<Allocation>> AddressSpace::AddHost(uint8_t* host, uint64_t size,
                                                                  Allocation::Kind kind) {
  auto allocation = std::make_shared<Allocation>();
  allocation->kind = kind;
  allocation->size = size;
  allocation->host = host;
  allocation->base = reinterpret_cast<uintptr_t>(host);
  absl::MutexLock lock(&mu_);
  auto next = live_.lower_bound(allocation->base);
  if (next != live_.end() && next->first < allocation->base + size) {
    return absl::AlreadyExistsError(absl::StrCat("overlaps ", next->second->Describe()));
  }
  if (next != live_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second->size > allocation->base) {
      return absl::AlreadyExistsError(absl::StrCat("overlaps ", prev->second->Describe()));
    }
  }
  live_[allocation->base] = allocation;
  return allocation;
}

absl::StatusOr<std::shared_ptr<Allocation>> AddressSpace::Remove(uint64_t base,
                                                                 Allocation::Kind kind) {
  absl::MutexLock lock(&mu_);
  auto it = live_.find(base);
  if (it == live_.end() || it->second->kind != kind) {
    auto freed = freed_.find(base);
    if (freed != freed_.end()) {
      return absl::FailedPreconditionError(
          absl::StrCat(Hex(base), " was already freed (", freed->second.description, ")"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat(Hex(base), " is not the start of a live ", KindName(kind)));
  }
  std::shared_ptr<Allocation> allocation = std::move(it->second);
  live_.erase(it);
  allocation->freed.store(true);
  if (allocation->device >= 0) in_use_[allocation->device] -= allocation->size;
  if (freed_.size() >= kMaxFreedRecords) freed_.erase(freed_.begin());
  if (allocation->kind != Allocation::Kind::kRegisteredHost &&
      allocation->kind != Allocation::Kind::kPinnedHost) {
    freed_[allocation->base] = FreedRange{allocation->size, allocation->Describe()};
  }
  return allocation;
}

absl::StatusOr<std::shared_ptr<Allocation>> AddressSpace::Find(uint64_t address) const {
  absl::MutexLock lock(&mu_);
  auto next = live_.upper_bound(address);
  const Allocation* before = nullptr;
  if (next != live_.begin()) {
    const std::shared_ptr<Allocation>& a = std::prev(next)->second;
    if (address - a->base < a->size) return a;
    before = a.get();
  }
  auto freed = freed_.upper_bound(address);
  if (freed != freed_.begin()) {
    auto f = std::prev(freed);
    if (address - f->first < std::max<uint64_t>(f->second.size, 1) &&
        (before == nullptr || f->first > before->base)) {
      return absl::NotFoundError(absl::StrCat("use after free of ", f->second.description,
                                              " (", address - f->first, " bytes into it)"));
    }
  }
  if (before != nullptr && address - (before->base + before->size) < kGuard) {
    return absl::OutOfRangeError(absl::StrCat("out of bounds: it starts ",
                                              address - (before->base + before->size),
                                              " bytes past the end of ", before->Describe()));
  }
  if (IsDeviceAddress(address)) {
    return absl::NotFoundError(
        absl::StrCat("not inside any allocation of device ", (address - kDeviceBase) / kDeviceSpan));
  }
  return absl::NotFoundError(
      "not a device address (a host pointer that is neither pinned nor registered?)");
}

absl::StatusOr<std::shared_ptr<Allocation>> AddressSpace::FindRange(uint64_t address,
                                                                    uint64_t size) const {
  absl::StatusOr<std::shared_ptr<Allocation>> found = Find(address);
  if (!found.ok()) return found;
  const Allocation& a = **found;
  if (size > a.size - (address - a.base)) {
    return absl::OutOfRangeError(absl::StrCat(
        size, " bytes from ", Hex(address), " run ", address + size - (a.base + a.size),
        " bytes past the end of ", a.Describe()));
  }
  return found;
}

uint64_t AddressSpace::DeviceBytesInUse(int device) const {
  absl::MutexLock lock(&mu_);
  return in_use_[device];
}

std::vector<std::shared_ptr<Allocation>> AddressSpace::DeviceAllocations(int device) const {
  absl::MutexLock lock(&mu_);
  std::vector<std::shared_ptr<Allocation>> result;
  for (const auto& [base, a] : live_) {
    if (a->device == device) result.push_back(a);
  }
  return result;
}

size_t AddressSpace::LiveCount(Allocation::Kind kind) const {
  absl::MutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [base, a] : live_) n += a->kind == kind ? 1 : 0;
  return n;
}

}  // namespace ember::vgpu
