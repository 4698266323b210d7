#include "tests/virtual_gpu/ptx/memory_access.h"

#include "absl/strings/str_cat.h"
#include "tests/virtual_gpu/ptx/instr_builder.h"

namespace ember::vgpu::ptx {
namespace {

const char* Verb(AccessKind kind) {
  return kind == AccessKind::kRead ? "read" : kind == AccessKind::kWrite ? "write" : "atomic";
}

uint8_t* OutOfArea(Warp& w, const Instr& instr, int lane, const char* area, uint64_t offset,
                   uint32_t size, uint64_t limit, AccessKind kind) {
  w.Fail(instr, lane, FaultKind::kIllegalAddress,
         absl::StrCat(Verb(kind), " of ", size, " bytes at offset ", offset, " of ", area,
                      " is out of bounds (", limit, " bytes)"));
  return nullptr;
}

uint8_t* Shared(Warp& w, const Instr& instr, int lane, uint64_t offset, uint32_t size,
                AccessKind kind) {
  Block& block = *w.block;
  const uint64_t limit = block.shared.size();
  if (offset >= limit || size > limit - offset) {
    return OutOfArea(w, instr, lane, "shared memory", offset, size, limit, kind);
  }
  const LaunchOptions& options = w.launch->options;
  if (options.check_shared_races || options.check_shared_poison) {
    const SharedMemoryChecker::Accessor who{w.tid[lane], block.epoch, block.first_epoch,
                                            static_cast<uint16_t>(w.sync_epoch)};
    const SharedMemoryChecker::Access access =
        kind == AccessKind::kRead    ? SharedMemoryChecker::Access::kRead
        : kind == AccessKind::kWrite ? SharedMemoryChecker::Access::kWrite
                                     : SharedMemoryChecker::Access::kAtomic;
    std::string problem =
        w.launch->shadow.Check(static_cast<uint32_t>(offset), size, access, who,
                               options.check_shared_races, options.check_shared_poison);
    if (!problem.empty()) {
      w.Fail(instr, lane, FaultKind::kLaunchFailed, problem);
      return nullptr;
    }
  }
  return block.shared.data() + offset;
}

uint8_t* Local(Warp& w, const Instr& instr, int lane, uint64_t offset, uint32_t size,
               AccessKind kind) {
  const uint64_t limit = w.launch->program->local_bytes;
  if (offset >= limit || size > limit - offset) {
    return OutOfArea(w, instr, lane, "local memory", offset, size, limit, kind);
  }
  return w.local.data() + static_cast<size_t>(lane) * limit + offset;
}

uint8_t* Param(Warp& w, const Instr& instr, int lane, uint64_t address, uint32_t size,
               AccessKind kind) {
  if (address < kFuncParamBase) {
    const uint64_t limit = w.launch->params.size();
    if (kind != AccessKind::kRead) {
      w.Fail(instr, lane, FaultKind::kIllegalAddress, "kernel parameters are read-only");
      return nullptr;
    }
    if (address >= limit || size > limit - address) {
      return OutOfArea(w, instr, lane, "the kernel parameters", address, size, limit, kind);
    }
    return w.launch->params.data() + address;
  }
  const uint64_t offset = address - kFuncParamBase;
  const uint64_t limit = w.launch->program->param_scratch_bytes;
  if (offset >= limit || size > limit - offset) {
    return OutOfArea(w, instr, lane, "function parameters", offset, size, limit, kind);
  }
  return w.scratch.data() + static_cast<size_t>(lane) * limit + offset;
}

}  // namespace

uint8_t* ResolveAccess(Space space, Warp& w, const Instr& instr, int lane, uint64_t address,
                       uint32_t size, AccessKind kind) {
  if (space == Space::kGeneric) {
    if (address - kSharedWindow < kWindowSize) {
      space = Space::kShared;
      address -= kSharedWindow;
    } else if (address - kLocalWindow < kWindowSize) {
      space = Space::kLocal;
      address -= kLocalWindow;
    } else if (address - kParamWindow < kWindowSize) {
      space = Space::kParam;
      address -= kParamWindow;
    } else {
      space = Space::kGlobal;
    }
  }
  if (size > 1 && address % size != 0) {
    w.Fail(instr, lane, FaultKind::kMisalignedAddress,
           absl::StrCat(Verb(kind), " of ", size, " bytes at ", HexAddress(address), " in ",
                        SpaceName(space), " space is not aligned to ", size, " bytes"));
    return nullptr;
  }
  switch (space) {
    case Space::kShared:
      return Shared(w, instr, lane, address, size, kind);
    case Space::kLocal:
      return Local(w, instr, lane, address, size, kind);
    case Space::kParam:
      return Param(w, instr, lane, address, size, kind);
    case Space::kConst:
      if (kind != AccessKind::kRead) {
        w.Fail(instr, lane, FaultKind::kIllegalAddress, "the constant space is read-only");
        return nullptr;
      }
      return w.launch->ResolveGlobal(w, instr, lane, address, size, false);
    default:
      return w.launch->ResolveGlobal(w, instr, lane, address, size, kind != AccessKind::kRead);
  }
}

}  // namespace ember::vgpu::ptx
