// Internal to compiler/host: per-thread scratch buffers that host kernels keep between launches,
// so a warm launch allocates nothing (fresh vectors cost a page fault per 4 KiB and a zero fill
// each time), and that a launch which needed more than 64 MiB gives back when it ends.
#ifndef EMBER_COMPILER_HOST_THREAD_SCRATCH_H_
#define EMBER_COMPILER_HOST_THREAD_SCRATCH_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ember::host::fast {

// The calling thread's slots 0..2 of T, one set per `Owner` tag: kernels that are live at the
// same time (a narrow convolution's widened operands around the f32 convolution's layout
// copies) name different owners, so one never overwrites the other's slots. Create one on the
// stack for a launch; pointers from Get stay valid until it is destroyed.
template <typename T, typename Owner>
class ThreadScratch {
 public:
  static constexpr int kSlots = 3;
  static constexpr size_t kKeepBytes = size_t{64} << 20;

  ThreadScratch() = default;
  ThreadScratch(const ThreadScratch&) = delete;
  ThreadScratch& operator=(const ThreadScratch&) = delete;
  ~ThreadScratch() {
    if (HeldBytes() <= kKeepBytes) return;
    for (std::vector<T>& v : slots()) std::vector<T>().swap(v);
  }

  // Room for `n` elements in `slot`, contents unspecified.
  T* Get(int slot, int64_t n) {
    std::vector<T>& v = slots()[static_cast<size_t>(slot)];
    if (v.size() < static_cast<size_t>(n)) v.resize(static_cast<size_t>(n));
    return v.data();
  }

  // Bytes the calling thread holds for this owner (what is kept between launches).
  static size_t HeldBytes() {
    size_t total = 0;
    for (const std::vector<T>& v : slots()) total += v.capacity() * sizeof(T);
    return total;
  }

 private:
  static std::array<std::vector<T>, kSlots>& slots() {
    thread_local std::array<std::vector<T>, kSlots> slots;
    return slots;
  }
};

}  // namespace ember::host::fast

#endif  // EMBER_COMPILER_HOST_THREAD_SCRATCH_H_
