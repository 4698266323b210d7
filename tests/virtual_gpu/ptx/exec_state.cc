#include "tests/virtual_gpu/ptx/exec_state.h"

#include <cinttypes>
#include <cstdio>

#include "absl/strings/str_cat.h"

namespace ember::vgpu::ptx {

std::string HexAddress(uint64_t address) {
  char text[32];
  std::snprintf(text, sizeof(text), "0x%016" PRIx64, address);
  return text;
}

std::string Warp::ThreadName(int lane) const {
  const LaunchDims& dims = launch->dims;
  const uint32_t t = tid[lane];
  const uint32_t x = t % dims.block[0];
  const uint32_t y = (t / dims.block[0]) % dims.block[1];
  const uint32_t z = t / (dims.block[0] * dims.block[1]);
  return absl::StrCat("thread (", x, ",", y, ",", z, ") of block (", block->ctaid[0], ",",
                      block->ctaid[1], ",", block->ctaid[2], ")");
}

bool Warp::Fail(const Instr& instr, int lane, FaultKind kind, const std::string& detail) {
  if (launch->faulted) return false;
  const KernelProgram& program = *launch->program;
  std::string where = absl::StrCat("kernel '", program.name, "'");
  if (instr.function != 0) {
    absl::StrAppend(&where, " (in function '", program.function_names[instr.function], "')");
  }
  absl::StrAppend(&where, " line ", instr.line);
  if (instr.text != nullptr) absl::StrAppend(&where, " (", *instr.text, ")");
  launch->faulted = true;
  launch->fault_kind = kind;
  launch->fault_message = lane >= 0 ? absl::StrCat(where, ": ", ThreadName(lane), ": ", detail)
                                    : absl::StrCat(where, ": ", detail);
  return false;
}

uint32_t GuardMask(Warp& w, const Instr& instr, uint32_t mask) {
  uint32_t result = 0;
  const uint64_t* p = w.Slot(instr.guard);
  ForEachLane(mask, [&](int lane) {
    if ((p[lane] != 0) != instr.guard_negated) result |= 1u << lane;
  });
  return result;
}

uint8_t* Launch::ResolveGlobal(Warp& warp, const Instr& instr, int lane, uint64_t address,
                               uint64_t size, bool write) {
  for (DeviceRange& range : cache) {
    if (range.host != nullptr && address - range.base < range.size) {
      if (range.freed != nullptr && range.freed->load(std::memory_order_relaxed)) {
        warp.Fail(instr, lane, FaultKind::kIllegalAddress,
                  absl::StrCat(write ? "write" : "read", " of ", size, " bytes at ",
                               HexAddress(address), ": use after free of ", range.description));
        return nullptr;
      }
      if (size > range.size - (address - range.base)) {
        warp.Fail(instr, lane, FaultKind::kIllegalAddress,
                  absl::StrCat(write ? "write" : "read", " of ", size, " bytes at ",
                               HexAddress(address), " is out of bounds: it ends ",
                               address + size - (range.base + range.size),
                               " bytes past the end of ", range.description));
        return nullptr;
      }
      if (write && !range.writable) {
        warp.Fail(instr, lane, FaultKind::kIllegalAddress,
                  absl::StrCat("write of ", size, " bytes at ", HexAddress(address),
                               " into read-only ", range.description));
        return nullptr;
      }
      return range.host + (address - range.base);
    }
  }
  absl::StatusOr<DeviceRange> found = memory->Find(address);
  if (!found.ok()) {
    warp.Fail(instr, lane, FaultKind::kIllegalAddress,
              absl::StrCat(write ? "write" : "read", " of ", size, " bytes at ",
                           HexAddress(address), ": ", found.status().message()));
    return nullptr;
  }
  if (address - found->base >= found->size) {
    warp.Fail(instr, lane, FaultKind::kIllegalAddress,
              absl::StrCat("internal error: the driver resolved ", HexAddress(address),
                           " to a range that does not contain it"));
    return nullptr;
  }
  cache[cache_next] = *std::move(found);
  cache_next = (cache_next + 1) % 4;
  return ResolveGlobal(warp, instr, lane, address, size, write);
}

}  // namespace ember::vgpu::ptx
