#include "compiler/host/top_k_thunk.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/float_formats.h"
#include "base/status_macros.h"
#include "compiler/host/scratch_memory.h"

namespace ember::host {
namespace {

using ir::ElementType;

// The evaluator's keys (eval_custom_call.cc TopKKey over LiteralTo<double> / IntegerValues),
// in the narrowest type that orders like them: floats widen exactly, so a float key orders as
// its double; integers of at most 32 bits are exact doubles, so an int64 key orders the same;
// 64-bit integers become doubles (rounding makes ties, which go to the lower index as in the
// evaluator) and u64 past INT64_MAX saturates first, as IntegerValues does.
float FloatKey(float v) { return std::isnan(v) ? std::numeric_limits<float>::infinity() : v; }
double DoubleKey(double v) { return std::isnan(v) ? std::numeric_limits<double>::infinity() : v; }

struct F32Keys {
  using Elem = float;
  using Key = float;
  static Key Of(Elem v) { return FloatKey(v); }
};
struct F64Keys {
  using Elem = double;
  using Key = double;
  static Key Of(Elem v) { return DoubleKey(v); }
};
struct BF16Keys {
  using Elem = uint16_t;
  using Key = float;
  static Key Of(Elem v) { return FloatKey(BF16ToFloat(v)); }
};
struct F16Keys {
  using Elem = uint16_t;
  using Key = float;
  static Key Of(Elem v) { return FloatKey(F16ToFloat(v)); }
};
template <typename T>
struct IntKeys {
  using Elem = T;
  using Key = int64_t;
  static Key Of(Elem v) { return static_cast<int64_t>(v); }
};
struct S64Keys {
  using Elem = int64_t;
  using Key = double;
  static Key Of(Elem v) { return static_cast<double>(v); }
};
struct U64Keys {
  using Elem = uint64_t;
  using Key = double;
  static Key Of(Elem v) {
    const uint64_t max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    return static_cast<double>(static_cast<int64_t>(v > max ? max : v));
  }
};

// The heap keeps k entries of a row; a full selection works on all n. The heap wins while k is
// a small share of the row (most elements fail one comparison with the worst kept).
bool UsesHeap(int64_t n, int64_t k) { return k * 4 <= n; }

template <typename Key>
struct Entry {
  Key key;
  int64_t index;
};
constexpr int64_t kMaxEntryBytes = sizeof(Entry<double>);

// The evaluator's order: larger key first, ties to the lower index (its stable sort).
template <typename Key>
bool Better(const Entry<Key>& a, const Entry<Key>& b) {
  return a.key > b.key || (a.key == b.key && a.index < b.index);
}

template <typename Keys>
void SelectRow(const uint8_t* row, int64_t n, int64_t k, void* scratch, uint8_t* values,
               uint8_t* indices, int index_bytes) {
  using Elem = typename Keys::Elem;
  using Key = typename Keys::Key;
  if (k == 0) return;
  auto element = [row](int64_t i) {
    Elem v;
    std::memcpy(&v, row + i * sizeof(Elem), sizeof(Elem));
    return v;
  };
  Entry<Key>* e = static_cast<Entry<Key>*>(scratch);
  if (UsesHeap(n, k)) {
    for (int64_t i = 0; i < k; ++i) e[i] = {Keys::Of(element(i)), i};
    // With Better as the heap's "less", the top is the worst kept entry.
    std::make_heap(e, e + k, Better<Key>);
    for (int64_t i = k; i < n; ++i) {
      const Key key = Keys::Of(element(i));
      // A later element wins only with a strictly larger key (ties go to the lower index).
      if (key > e[0].key) {
        std::pop_heap(e, e + k, Better<Key>);
        e[k - 1] = {key, i};
        std::push_heap(e, e + k, Better<Key>);
      }
    }
    std::sort_heap(e, e + k, Better<Key>);
  } else {
    for (int64_t i = 0; i < n; ++i) e[i] = {Keys::Of(element(i)), i};
    if (k < n) std::nth_element(e, e + k, e + n, Better<Key>);
    std::sort(e, e + k, Better<Key>);
  }
  for (int64_t j = 0; j < k; ++j) {
    std::memcpy(values + j * sizeof(Elem), row + e[j].index * sizeof(Elem), sizeof(Elem));
    if (index_bytes == 4) {
      const uint32_t index = static_cast<uint32_t>(e[j].index);
      std::memcpy(indices + j * 4, &index, 4);
    } else {
      const uint64_t index = static_cast<uint64_t>(e[j].index);
      std::memcpy(indices + j * 8, &index, 8);
    }
  }
}

TopKThunk::RowSelector SelectorFor(ElementType type) {
  switch (type) {
    case ElementType::kF32:
      return SelectRow<F32Keys>;
    case ElementType::kF64:
      return SelectRow<F64Keys>;
    case ElementType::kBF16:
      return SelectRow<BF16Keys>;
    case ElementType::kF16:
      return SelectRow<F16Keys>;
    case ElementType::kS8:
      return SelectRow<IntKeys<int8_t>>;
    case ElementType::kS16:
      return SelectRow<IntKeys<int16_t>>;
    case ElementType::kS32:
      return SelectRow<IntKeys<int32_t>>;
    case ElementType::kU8:
      return SelectRow<IntKeys<uint8_t>>;
    case ElementType::kU16:
      return SelectRow<IntKeys<uint16_t>>;
    case ElementType::kU32:
      return SelectRow<IntKeys<uint32_t>>;
    case ElementType::kS64:
      return SelectRow<S64Keys>;
    case ElementType::kU64:
      return SelectRow<U64Keys>;
    default:
      return nullptr;
  }
}

int IndexBytes(ElementType type) {
  switch (type) {
    case ElementType::kS32:
    case ElementType::kU32:
      return 4;
    case ElementType::kS64:
    case ElementType::kU64:
      return 8;
    default:
      return 0;
  }
}

}  // namespace

std::string TopKThunk::Refusal(const ir::Instruction& inst) {
  const ir::Attribute* target = inst.attribute("call_target_name");
  if (inst.opcode() != ir::Opcode::kCustomCall || target == nullptr ||
      target->kind != ir::Attribute::Kind::kString || target->s != "chlo.top_k") {
    return "not a chlo.top_k";
  }
  if (inst.operands().size() != 1 || inst.num_results() != 2) {
    return "top_k takes one operand and has two results";
  }
  const ir::ValueType& x = inst.operand(0)->type();
  const ir::ValueType& v = inst.result(0)->type();
  const ir::ValueType& i = inst.result(1)->type();
  if (!x.is_tensor() || !v.is_tensor() || !i.is_tensor() || x.dims().empty()) {
    return "top_k needs arrays of rank >= 1";
  }
  std::vector<int64_t> expect = x.dims();
  expect.back() = v.dims().empty() ? -1 : v.dims().back();
  if (v.dims() != expect || i.dims() != expect || expect.back() > x.dims().back() ||
      v.element_type() != x.element_type()) {
    return "top_k results must have the operand's shape with k last";
  }
  if (SelectorFor(x.element_type()) == nullptr) {
    return absl::StrCat("top_k of ", x.ToString(), " (no native selection for the type)");
  }
  if (IndexBytes(i.element_type()) == 0) {
    return absl::StrCat("top_k indices of ", i.ToString(), " (32- or 64-bit only)");
  }
  return "";
}

std::unique_ptr<TopKThunk> TopKThunk::Create(std::string name, const ir::Instruction& inst,
                                             ValueRef operand, ValueRef values, ValueRef indices) {
  if (!Refusal(inst).empty()) return nullptr;
  std::unique_ptr<TopKThunk> thunk(new TopKThunk(std::move(name), operand, values, indices));
  const ir::ValueType& x = inst.operand(0)->type();
  thunk->select_ = SelectorFor(x.element_type());
  thunk->element_bytes_ = ir::StorageBytes(x.element_type());
  thunk->index_bytes_ = IndexBytes(inst.result(1)->type().element_type());
  thunk->n_ = x.dims().back();
  thunk->k_ = inst.result(0)->type().dims().back();
  thunk->rows_ = thunk->n_ == 0 ? 0 : x.shape().element_count() / thunk->n_;
  thunk->scratch_bytes_per_row_ =
      (UsesHeap(thunk->n_, thunk->k_) ? thunk->k_ : thunk->n_) * kMaxEntryBytes;
  return thunk;
}

absl::Status TopKThunk::Run(HostRunContext& context) const {
  if (rows_ == 0 || k_ == 0) return absl::OkStatus();
  const uint8_t* in = context.Address(operand_);
  // A result nothing reads still needs somewhere to go: the part's own rows of scratch.
  uint8_t* values = values_.kind == ValueRef::Kind::kOther ? nullptr : context.Address(values_);
  uint8_t* indices = indices_.kind == ValueRef::Kind::kOther ? nullptr : context.Address(indices_);
  // Parts of about 64 Ki elements, at most a few per thread, each with a working array of its
  // own on the launch's memory account (too large a row is RESOURCE_EXHAUSTED, not an abort).
  const int64_t per_part = std::max<int64_t>(1, 65536 / n_);
  const int64_t parts = std::min<int64_t>((rows_ + per_part - 1) / per_part,
                                          4 * std::max<int64_t>(1, context.pool().size()));
  const int64_t unread_bytes =
      k_ * (values == nullptr ? element_bytes_ : 0) + k_ * (indices == nullptr ? index_bytes_ : 0);
  // (Rounded up so that every part's working array stays aligned for its entries.)
  const int64_t part_bytes = (scratch_bytes_per_row_ + unread_bytes + 63) / 64 * 64;
  ScratchMemory memory;
  EMBER_ASSIGN_OR_RETURN(void* arrays,
                         memory.Allocate(static_cast<uint64_t>(parts) * part_bytes, name()));
  auto select_part = [&](int64_t part) {
    uint8_t* scratch = static_cast<uint8_t*>(arrays) + part * part_bytes;
    uint8_t* spare = scratch + scratch_bytes_per_row_;
    const int64_t first = rows_ * part / parts, last = rows_ * (part + 1) / parts;
    for (int64_t row = first; row < last; ++row) {
      uint8_t* v = values != nullptr ? values + row * k_ * element_bytes_ : spare;
      uint8_t* i = indices != nullptr ? indices + row * k_ * index_bytes_
                                      : spare + (values == nullptr ? k_ * element_bytes_ : 0);
      select_(in + row * n_ * element_bytes_, n_, k_, scratch, v, i, index_bytes_);
    }
  };
  context.pool().ParallelFor(parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) select_part(part);
  });
  return absl::OkStatus();
}

}  // namespace ember::host
