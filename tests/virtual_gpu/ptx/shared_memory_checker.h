// Shadow state for a block's shared memory: which thread last wrote and read each byte, and in
// which synchronization epoch (bumped at every bar.sync; bar.warp.sync orders lanes of one warp).
// It reports reads of bytes no thread of the block wrote (shared memory starts as garbage on a
// GPU) and conflicting accesses by two threads with no barrier between them (data races).
#ifndef EMBER_TESTS_VIRTUAL_GPU_PTX_SHARED_MEMORY_CHECKER_H_
#define EMBER_TESTS_VIRTUAL_GPU_PTX_SHARED_MEMORY_CHECKER_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ember::vgpu::ptx {

class SharedMemoryChecker {
 public:
  enum class Access : uint8_t { kRead, kWrite, kAtomic };
  struct Accessor {
    uint16_t tid;         // linear thread index in the block
    uint32_t epoch;       // the block's barrier epoch
    uint32_t first_epoch;  // the epoch the block started in
    uint16_t warp_epoch;  // the warp's bar.warp.sync count
  };

  void Resize(size_t bytes) { cells_.assign(bytes, Cell{}); }
  // A fresh epoch number, larger than every earlier one (blocks never share epochs).
  uint32_t NewEpoch() { return ++epoch_counter_; }

  // Empty when the access is fine; otherwise what is wrong with it.
  std::string Check(uint32_t offset, uint32_t size, Access access, const Accessor& who,
                    bool check_races, bool check_poison);

 private:
  struct Cell {
    uint32_t write_epoch = 0;
    uint32_t read_epoch = 0;
    uint16_t writer = 0;  // tid | kAtomicBit
    uint16_t reader = 0;  // tid | kManyReadersBit
    uint16_t write_warp_epoch = 0;
    uint16_t read_warp_epoch = 0;
  };
  static constexpr uint16_t kAtomicBit = 0x8000;
  static constexpr uint16_t kManyReadersBit = 0x4000;
  static constexpr uint16_t kTidMask = 0x3fff;

  std::vector<Cell> cells_;
  uint32_t epoch_counter_ = 0;
};

}  // namespace ember::vgpu::ptx

#endif  // EMBER_TESTS_VIRTUAL_GPU_PTX_SHARED_MEMORY_CHECKER_H_
