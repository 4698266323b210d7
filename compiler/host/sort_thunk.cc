#include "compiler/host/sort_thunk.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <type_traits>
#include <utility>

#include "base/status_macros.h"
#include "compiler/evaluator/merge_sort.h"
#include "compiler/host/scratch_memory.h"

namespace ember::host {
namespace {

// heap[0, k) = the first k positions of the stable sort of n by `less` (a strict weak order),
// in order: a bounded heap whose top is the worst position kept.
template <typename Less>
void SelectPrefix(int64_t* heap, int64_t n, int64_t k, const Less& less) {
  if (k == 0) return;
  // The stable sort's order: by `less`, ties to the lower index.
  auto before = [&less](int64_t a, int64_t b) {
    if (less(a, b)) return true;
    if (less(b, a)) return false;
    return a < b;
  };
  for (int64_t i = 0; i < k; ++i) heap[i] = i;
  std::make_heap(heap, heap + k, before);
  for (int64_t i = k; i < n; ++i) {
    // Position i follows every kept one: it goes before the worst only when strictly less.
    if (!less(i, heap[0])) continue;
    std::pop_heap(heap, heap + k, before);
    heap[k - 1] = i;
    std::push_heap(heap, heap + k, before);
  }
  std::sort_heap(heap, heap + k, before);
}

// Keys that order as the comparator: floats' bit patterns as signed integers with the magnitude
// bits of negative ones flipped (the total order: -NaN < -inf < ... < -0 < +0 < ... < +NaN, as
// the comparator emitter computes it), integers by value, u64 shifted into int64's range. False
// for other types.
bool FillKeys(ir::ElementType type, const uint8_t* data, int64_t base, int64_t step, int64_t n,
              int64_t* keys) {
  auto fill = [&](auto tag, auto key_of) {
    using T = decltype(tag);
    for (int64_t i = 0; i < n; ++i) {
      T v;
      std::memcpy(&v, data + (base + i * step) * sizeof(T), sizeof(T));
      keys[i] = key_of(v);
    }
    return true;
  };
  auto float_key = [](auto v) -> int64_t {
    using T = decltype(v);
    using U = std::make_unsigned_t<T>;
    const T magnitude = static_cast<T>(static_cast<U>(~U{0}) >> 1);
    return static_cast<int64_t>(v < 0 ? static_cast<T>(v ^ magnitude) : v);
  };
  auto value = [](auto v) -> int64_t { return static_cast<int64_t>(v); };
  switch (type) {
    case ir::ElementType::kF16:
    case ir::ElementType::kBF16: return fill(int16_t{}, float_key);
    case ir::ElementType::kF32: return fill(int32_t{}, float_key);
    case ir::ElementType::kF64: return fill(int64_t{}, float_key);
    case ir::ElementType::kS8: return fill(int8_t{}, value);
    case ir::ElementType::kS16: return fill(int16_t{}, value);
    case ir::ElementType::kS32: return fill(int32_t{}, value);
    case ir::ElementType::kS64: return fill(int64_t{}, value);
    case ir::ElementType::kU8: return fill(uint8_t{}, value);
    case ir::ElementType::kU16: return fill(uint16_t{}, value);
    case ir::ElementType::kU32: return fill(uint32_t{}, value);
    case ir::ElementType::kU64:
      return fill(uint64_t{}, [](uint64_t v) {
        return static_cast<int64_t>(v ^ (uint64_t{1} << 63));
      });
    default: return false;
  }
}

}  // namespace

SortThunk::SortThunk(std::string name, codegen::HostLoopKernel comparator,
                     std::vector<ValueRef> operands, std::vector<ValueRef> results,
                     std::vector<int64_t> dims, int64_t dimension, int64_t prefix,
                     std::optional<SortKeyOrder> key_order)
    : HostThunk(Kind::kKernel, std::move(name)), comparator_(std::move(comparator)),
      operands_(std::move(operands)), results_(std::move(results)), key_order_(key_order) {
  for (const ValueRef& r : operands_) {
    widths_.push_back(ir::StorageBytes(r.value->type().element_type()));
  }
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  length_ = dims[dimension];
  for (size_t d = dimension + 1; d < dims.size(); ++d) step_ *= dims[d];
  lines_ = length_ > 0 ? total / length_ : 0;
  // A heap of k costs about log k comparisons for each element that enters it: worth it while
  // k is a small share of the line.
  prefix_ = prefix >= 0 && prefix * 4 <= length_ ? prefix : length_;
}

absl::Status SortThunk::Run(HostRunContext& context) const {
  if (lines_ == 0 || length_ == 0) return absl::OkStatus();
  std::vector<const void*> in;
  std::vector<uint8_t*> out;
  for (const ValueRef& r : operands_) in.push_back(context.Address(r));
  for (const ValueRef& r : results_) out.push_back(context.Address(r));
  // Parts of about 64 Ki elements, at most a few per thread; each part sorts its lines with an
  // order and a scratch array of its own, allocated here, on the launch's memory account (a line
  // too long for memory is RESOURCE_EXHAUSTED, not an abort in a worker).
  const int64_t per_part = std::max<int64_t>(1, 65536 / length_);
  const int64_t parts = std::min<int64_t>((lines_ + per_part - 1) / per_part,
                                          4 * std::max<int64_t>(1, context.pool().size()));
  ScratchMemory memory;
  // (A third array for the keys when the comparator's order is a plain key compare.)
  const int64_t arrays_per_part = key_order_.has_value() ? 3 : 2;
  const uint64_t bytes =
      static_cast<uint64_t>(parts) * arrays_per_part * length_ * sizeof(int64_t);
  EMBER_ASSIGN_OR_RETURN(void* arrays, memory.Allocate(bytes, name()));
  // Part `part` sorts its share of the lines.
  auto sort_part = [&](int64_t part) {
    int64_t* arrays_of_part = static_cast<int64_t*>(arrays) + part * arrays_per_part * length_;
    std::span<int64_t> order(arrays_of_part, length_);
    std::span<int64_t> scratch(arrays_of_part + length_, length_);
    std::span<int64_t> keys(key_order_.has_value() ? arrays_of_part + 2 * length_ : nullptr,
                            key_order_.has_value() ? length_ : 0);
    uint8_t less_byte = 0;
    void* less_out[] = {&less_byte};
    const int64_t first = lines_ * part / parts, last = lines_ * (part + 1) / parts;
    for (int64_t line = first; line < last; ++line) {
      // Line `line` starts at its outer block times the block's size plus its inner offset.
      const int64_t base = (line / step_) * length_ * step_ + line % step_;
      auto less = [&](int64_t a, int64_t b) {
        comparator_.fn(in.data(), less_out, base + a * step_, base + b * step_);
        return less_byte != 0;
      };
      // The first prefix_ positions: selected, or the whole line merge sorted.
      auto order_line = [&](const auto& before) {
        if (prefix_ < length_) {
          SelectPrefix(order.data(), length_, prefix_, before);
        } else {
          for (int64_t k = 0; k < length_; ++k) order[k] = k;
          eval::MergeSort(order, scratch, 0, order.size(), before);
        }
      };
      if (keys.data() != nullptr &&
          FillKeys(key_order_->type, static_cast<const uint8_t*>(in[0]), base, step_, length_,
                   keys.data())) {
        // The comparator's order on native keys, without a call per comparison.
        const int64_t* key = keys.data();
        if (key_order_->descending) {
          order_line([key](int64_t a, int64_t b) { return key[a] > key[b]; });
        } else {
          order_line([key](int64_t a, int64_t b) { return key[a] < key[b]; });
        }
      } else {
        order_line(less);
      }
      for (size_t i = 0; i < in.size(); ++i) {
        if (out[i] == nullptr) continue;  // a result nothing reads
        const int w = widths_[i];
        const uint8_t* src = static_cast<const uint8_t*>(in[i]);
        for (int64_t k = 0; k < prefix_; ++k) {
          std::memcpy(out[i] + (base + k * step_) * w, src + (base + order[k] * step_) * w, w);
        }
      }
    }
  };
  context.pool().ParallelFor(parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) sort_part(part);
  });
  return absl::OkStatus();
}

}  // namespace ember::host
