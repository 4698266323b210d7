#include "tests/virtual_gpu/ptx/shared_memory_checker.h"

#include "absl/strings/str_cat.h"

namespace ember::vgpu::ptx {
namespace {

// Two accesses by different threads in the same barrier epoch conflict unless the threads share
// a warp and a bar.warp.sync lies between them.
bool Unordered(uint16_t tid_a, uint16_t warp_epoch_a, uint16_t tid_b, uint16_t warp_epoch_b) {
  if (tid_a == tid_b) return false;
  if (tid_a / 32 != tid_b / 32) return true;
  return warp_epoch_a == warp_epoch_b;
}

std::string Thread(uint16_t tid) { return absl::StrCat("thread ", tid, " (warp ", tid / 32, ")"); }

}  // namespace

std::string SharedMemoryChecker::Check(uint32_t offset, uint32_t size, Access access,
                                       const Accessor& who, bool check_races, bool check_poison) {
  for (uint32_t i = 0; i < size; ++i) {
    Cell& cell = cells_[offset + i];
    const uint16_t writer = cell.writer & kTidMask;
    const bool written_now = cell.write_epoch == who.epoch;
    if (access != Access::kWrite && check_poison && cell.write_epoch < who.first_epoch) {
      return absl::StrCat("reads shared memory at offset ", offset + i,
                          " that no thread of this block has written yet (shared memory starts "
                          "uninitialized; or another warp writes it later with no barrier "
                          "between)");
    }
    if (check_races && written_now &&
        Unordered(writer, cell.write_warp_epoch, who.tid, who.warp_epoch) &&
        !(access == Access::kAtomic && (cell.writer & kAtomicBit))) {
      return absl::StrCat("data race on shared memory at offset ", offset + i, ": ",
                          Thread(writer), (cell.writer & kAtomicBit) ? " updated it atomically" : " wrote it",
                          " and ", Thread(who.tid),
                          access == Access::kRead ? " reads it" : " writes it",
                          " with no barrier (bar.sync) between");
    }
    if (access == Access::kRead) {
      if (cell.read_epoch != who.epoch) {
        cell.reader = who.tid;
        cell.read_epoch = who.epoch;
      } else if ((cell.reader & kTidMask) != who.tid) {
        cell.reader |= kManyReadersBit;
      }
      cell.read_warp_epoch = who.warp_epoch;
      continue;
    }
    if (check_races && cell.read_epoch == who.epoch) {
      const uint16_t reader = cell.reader & kTidMask;
      const bool many = (cell.reader & kManyReadersBit) != 0;
      if (many || Unordered(reader, cell.read_warp_epoch, who.tid, who.warp_epoch)) {
        return absl::StrCat("data race on shared memory at offset ", offset + i, ": ",
                            many ? std::string("several threads read it") : Thread(reader) + " reads it",
                            " and ", Thread(who.tid),
                            " writes it with no barrier (bar.sync) between");
      }
    }
    cell.writer = static_cast<uint16_t>(who.tid | (access == Access::kAtomic ? kAtomicBit : 0));
    cell.write_epoch = who.epoch;
    cell.write_warp_epoch = who.warp_epoch;
  }
  return std::string();
}

}  // namespace ember::vgpu::ptx
