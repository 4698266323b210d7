// Fused loop and reduction kernels of the fast host backend (see fast_kernels.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "compiler/host/eval_elementwise.h"
#include "compiler/host/fast_kernels.h"
#include "compiler/host/fast_math.h"

namespace ember::host::fast {

using ir::ElementType;
using ir::Opcode;

bool SupportedType(ElementType type) {
  switch (type) {
    case ElementType::kPred:
    case ElementType::kS32:
    case ElementType::kS64:
    case ElementType::kU8:
    case ElementType::kU32:
    case ElementType::kF32:
    case ElementType::kF64:
      return true;
    default:
      return false;
  }
}

namespace {

bool IsFloatType(ElementType t) { return t == ElementType::kF32 || t == ElementType::kF64; }
bool IsSignedType(ElementType t) { return t == ElementType::kS32 || t == ElementType::kS64; }

bool DenseTensor(const ir::Value* v) {
  if (!v->type().is_tensor() || !SupportedType(v->type().element_type())) return false;
  // Row-major only (the IR's default layout).
  absl::StatusOr<ir::Shape> plain = ir::Shape::Make(v->type().element_type(), v->type().dims());
  return plain.ok() && *plain == v->type().shape();
}

const std::vector<int64_t>* IntsAttr(const ir::Instruction& inst, std::string_view name) {
  const ir::Attribute* a = inst.attribute(name);
  if (a == nullptr || a->kind != ir::Attribute::Kind::kInts) return nullptr;
  return &a->ints;
}

int CompareDirection(const ir::Instruction& inst) {
  const ir::Attribute* d = inst.attribute("comparison_direction");
  if (d == nullptr || d->kind != ir::Attribute::Kind::kString) return -1;
  static constexpr const char* kNames[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  for (int i = 0; i < 6; ++i) {
    if (d->s == kNames[i]) return i;
  }
  return -1;
}

bool CompareTypeOk(const ir::Instruction& inst, ElementType operand) {
  const ir::Attribute* t = inst.attribute("compare_type");
  if (t == nullptr) return true;
  if (t->kind != ir::Attribute::Kind::kString) return false;
  if (IsFloatType(operand)) return t->s == "FLOAT";
  if (IsSignedType(operand)) return t->s == "SIGNED";
  return t->s == "UNSIGNED";
}

bool ElementwiseSupported(const ir::Instruction& inst) {
  const ElementType t = inst.result()->type().element_type();
  const bool fl = IsFloatType(t);
  const bool pred = t == ElementType::kPred;
  switch (inst.opcode()) {
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kNegate:
      return !pred;
    case Opcode::kAbs:
      return !pred && t != ElementType::kU8 && t != ElementType::kU32;
    case Opcode::kDivide:
    case Opcode::kRemainder:
    case Opcode::kPower:
    case Opcode::kAtan2:
    case Opcode::kExponential:
    case Opcode::kExponentialMinusOne:
    case Opcode::kLog:
    case Opcode::kLogPlusOne:
    case Opcode::kTanh:
    case Opcode::kSqrt:
    case Opcode::kRsqrt:
    case Opcode::kLogistic:
    case Opcode::kSine:
    case Opcode::kCosine:
    case Opcode::kFloor:
    case Opcode::kCeil:
    case Opcode::kRoundNearestEven:
      return fl;
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
    case Opcode::kNot:
      return !fl;
    case Opcode::kSelect:
      return inst.operand(0)->type().element_type() == ElementType::kPred;
    case Opcode::kCompare:
      return CompareDirection(inst) >= 0 &&
             CompareTypeOk(inst, inst.operand(0)->type().element_type());
    case Opcode::kConvert: {
      const ElementType from = inst.operand(0)->type().element_type();
      return !IsFloatType(from) || IsFloatType(t);  // float -> int/pred stays with the evaluator
    }
    default:
      return false;
  }
}

}  // namespace

bool LoopFusible(const ir::Instruction& inst) {
  if (inst.num_results() != 1 || !DenseTensor(inst.result())) return false;
  for (const ir::Value* v : inst.operands()) {
    if (!DenseTensor(v)) return false;
  }
  if (!inst.regions().empty()) return false;
  const int64_t rank = inst.result()->type().shape().rank();
  switch (inst.opcode()) {
    case Opcode::kBroadcastInDim: {
      const std::vector<int64_t>* dims = IntsAttr(inst, "broadcast_dimensions");
      if (dims == nullptr || dims->size() != inst.operand(0)->type().dims().size()) return false;
      for (int64_t d : *dims) {
        if (d < 0 || d >= rank) return false;
      }
      return inst.operand(0)->type().element_type() == inst.result()->type().element_type();
    }
    case Opcode::kReshape:
      return inst.operand(0)->type().shape().element_count() ==
                 inst.result()->type().shape().element_count() &&
             inst.operand(0)->type().element_type() == inst.result()->type().element_type();
    case Opcode::kTranspose: {
      const std::vector<int64_t>* perm = IntsAttr(inst, "permutation");
      return perm != nullptr && static_cast<int64_t>(perm->size()) == rank;
    }
    case Opcode::kSlice: {
      const std::vector<int64_t>* start = IntsAttr(inst, "start_indices");
      const std::vector<int64_t>* strides = IntsAttr(inst, "strides");
      return start != nullptr && static_cast<int64_t>(start->size()) == rank &&
             (strides == nullptr || static_cast<int64_t>(strides->size()) == rank);
    }
    case Opcode::kIota: {
      const ir::Attribute* d = inst.attribute("iota_dimension");
      return d != nullptr && d->kind == ir::Attribute::Kind::kInt && d->i >= 0 && d->i < rank;
    }
    default:
      break;
  }
  // Elementwise: operands have the result's dims, or (select's predicate) are scalars.
  for (size_t i = 0; i < inst.operands().size(); ++i) {
    const auto& dims = inst.operand(i)->type().dims();
    const bool scalar_ok = inst.opcode() == Opcode::kSelect && i == 0;
    if (dims != inst.result()->type().dims() && !(scalar_ok && dims.empty())) return false;
  }
  if (inst.operands().empty()) return false;
  return ElementwiseSupported(inst);
}

bool ReduceFusible(const ir::Instruction& inst) {
  if (inst.opcode() != Opcode::kReduce || inst.operands().size() != 2 || inst.num_results() != 1 ||
      inst.regions().size() != 1) {
    return false;
  }
  if (!DenseTensor(inst.operand(0)) || !DenseTensor(inst.operand(1)) || !DenseTensor(inst.result())) {
    return false;
  }
  const ElementType t = inst.result()->type().element_type();
  if (inst.operand(0)->type().element_type() != t || inst.operand(1)->type().element_type() != t ||
      !inst.operand(1)->type().dims().empty()) {
    return false;
  }
  std::optional<SimpleBinaryRegion> body = MatchSimpleBinaryRegion(*inst.regions()[0], t);
  if (!body.has_value()) return false;
  switch (body->opcode) {
    case Opcode::kAdd:
    case Opcode::kMultiply:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
      return t != ElementType::kPred;
    case Opcode::kAnd:
    case Opcode::kOr:
      return !IsFloatType(t);
    default:
      return false;
  }
}

// ---- Nodes ----------------------------------------------------------------------------------

enum class NodeKind { kInput, kElementwise, kMap, kReshape, kIota };

struct FusedKernel::Node {
  NodeKind kind = NodeKind::kInput;
  Opcode op = Opcode::kAdd;
  ElementType type = ElementType::kInvalid;
  ElementType in_type = ElementType::kInvalid;  // operand type (convert, compare)
  std::vector<int> operands;
  std::vector<char> scalar;  // per operand: rank 0 while the node is not (broadcast its value)
  int input = -1;            // kInput: index into the kernel inputs
  std::vector<int64_t> dims;
  // kMap: operand linear index = offset + sum(multi_index[d] * src_stride[d]).
  std::vector<int64_t> src_stride;
  int64_t src_offset = 0;
  bool src_single = false;
  // kIota: value = (linear / iota_div) % iota_mod.
  int64_t iota_div = 1, iota_mod = 1;
  int direction = 0;
  // Scratch slots: the memo (identity requests), one per operand edge, one for indices.
  int memo_slot = -1, edge_slot = -1, index_slot = -1;
};

namespace {

using Node = FusedKernel::Node;

int TypeBytes(ElementType t) { return ir::StorageBytes(t); }

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * dims[d + 1];
  return s;
}

// A request: the node's values at `n` linear indices, either start, start+1, ... (list null)
// or list[0..n).
struct Request {
  const int64_t* list = nullptr;
  int64_t start = 0;
  int64_t n = 0;
};

// For a contiguous request (r.list null, rank >= 1): calls fn(i, index_i, run) for each run of
// the request along the last dim, where index_{i+k} = index_i + k * stride[last] for k < run.
template <typename Fn>
void ForEachRun(const Request& r, const std::vector<int64_t>& dims,
                const std::vector<int64_t>& stride, int64_t offset, Fn&& fn) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  int64_t m[16];
  int64_t l = r.start;
  int64_t cur = offset;
  for (int64_t d = rank - 1; d >= 0; --d) {
    const int64_t q = l / dims[d];
    m[d] = l - q * dims[d];
    cur += m[d] * stride[d];
    l = q;
  }
  const int64_t last = rank - 1;
  const int64_t s = stride[last];
  int64_t i = 0;
  while (i < r.n) {
    const int64_t run = std::min(r.n - i, dims[last] - m[last]);
    fn(i, cur, run);
    i += run;
    m[last] += run;
    cur += run * s;
    for (int64_t d = last; d > 0 && m[d] == dims[d]; --d) {
      cur -= m[d] * stride[d];
      m[d] = 0;
      ++m[d - 1];
      cur += stride[d - 1];
    }
  }
}

// out[i] = offset + sum_d multi(index_i)[d] * stride[d], for the request's indices over `dims`.
void MapIndices(const Request& r, const std::vector<int64_t>& dims,
                const std::vector<int64_t>& stride, int64_t offset, int64_t* out) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (rank == 0) {
    for (int64_t i = 0; i < r.n; ++i) out[i] = offset;
    return;
  }
  if (r.list != nullptr) {
    int64_t count = 1;
    for (int64_t d : dims) count *= d;
    if (count <= (int64_t{1} << 31)) {
      // 32-bit divisions: several times cheaper than 64-bit ones on many x86 cores.
      for (int64_t i = 0; i < r.n; ++i) {
        uint32_t l = static_cast<uint32_t>(r.list[i]);
        int64_t cur = offset;
        for (int64_t d = rank - 1; d >= 0; --d) {
          const uint32_t dim = static_cast<uint32_t>(dims[d]);
          const uint32_t q = l / dim;
          cur += static_cast<int64_t>(l - q * dim) * stride[d];
          l = q;
        }
        out[i] = cur;
      }
      return;
    }
    for (int64_t i = 0; i < r.n; ++i) {
      int64_t l = r.list[i];
      int64_t cur = offset;
      for (int64_t d = rank - 1; d >= 0; --d) {
        const int64_t q = l / dims[d];
        cur += (l - q * dims[d]) * stride[d];
        l = q;
      }
      out[i] = cur;
    }
    return;
  }
  const int64_t s = stride[rank - 1];
  ForEachRun(r, dims, stride, offset, [&](int64_t i, int64_t cur, int64_t run) {
    for (int64_t k = 0; k < run; ++k) out[i + k] = cur + k * s;
  });
}

template <typename T>
void Gather(const T* base, const int64_t* list, int64_t n, T* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = base[list[i]];
}

void GatherBytes(const void* base, int bytes, const int64_t* list, int64_t n, void* out) {
  switch (bytes) {
    case 1: Gather(static_cast<const uint8_t*>(base), list, n, static_cast<uint8_t*>(out)); break;
    case 2: Gather(static_cast<const uint16_t*>(base), list, n, static_cast<uint16_t*>(out)); break;
    case 4: Gather(static_cast<const uint32_t*>(base), list, n, static_cast<uint32_t*>(out)); break;
    default: Gather(static_cast<const uint64_t*>(base), list, n, static_cast<uint64_t*>(out)); break;
  }
}

template <typename T>
void Strided(const T* base, int64_t stride, int64_t n, T* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = base[i * stride];
}

// out[i] = base[i * stride] for i < n, elements of `bytes` bytes.
void StridedBytes(const void* base, int bytes, int64_t stride, int64_t n, void* out) {
  switch (bytes) {
    case 1: Strided(static_cast<const uint8_t*>(base), stride, n, static_cast<uint8_t*>(out)); break;
    case 2: Strided(static_cast<const uint16_t*>(base), stride, n, static_cast<uint16_t*>(out)); break;
    case 4: Strided(static_cast<const uint32_t*>(base), stride, n, static_cast<uint32_t*>(out)); break;
    default: Strided(static_cast<const uint64_t*>(base), stride, n, static_cast<uint64_t*>(out)); break;
  }
}

void FillBytes(const void* value, int bytes, int64_t n, void* out) {
  switch (bytes) {
    case 1: std::fill_n(static_cast<uint8_t*>(out), n, *static_cast<const uint8_t*>(value)); break;
    case 2: std::fill_n(static_cast<uint16_t*>(out), n, *static_cast<const uint16_t*>(value)); break;
    case 4: std::fill_n(static_cast<uint32_t*>(out), n, *static_cast<const uint32_t*>(value)); break;
    default: std::fill_n(static_cast<uint64_t*>(out), n, *static_cast<const uint64_t*>(value)); break;
  }
}

// ---- Element functions (the evaluator's semantics) -------------------------------------------

template <typename T>
using Unsigned = std::make_unsigned_t<T>;

// NaN-propagating max/min with max(-0, +0) = +0 and min(-0, +0) = -0, written without branches so
// that loops over them vectorize: for equal operands the sign bits are combined (and: +0 wins,
// or: -0 wins; equal nonzero values are unchanged).
template <typename T>
inline T CombineBits(T a, T b, bool use_and) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  U x, y;
  std::memcpy(&x, &a, sizeof x);
  std::memcpy(&y, &b, sizeof y);
  const U z = use_and ? (x & y) : (x | y);
  T r;
  std::memcpy(&r, &z, sizeof r);
  return r;
}
template <typename T>
inline T FloatMax(T a, T b) {
  T r = a > b ? a : b;
  r = a == b ? CombineBits(a, b, true) : r;
  r = b != b ? b : r;
  return a != a ? a : r;
}
template <typename T>
inline T FloatMin(T a, T b) {
  T r = a < b ? a : b;
  r = a == b ? CombineBits(a, b, false) : r;
  r = b != b ? b : r;
  return a != a ? a : r;
}

template <typename T>
void FloatUnary(Opcode op, const T* a, T* o, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    // Vectorized polynomial cores (fast_math.h): a few ulp from the evaluator's double libm.
    static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    switch (op) {
      case Opcode::kExponential: avx2 ? avx2::ExpF32(a, o, n) : ExpF32(a, o, n); return;
      case Opcode::kLog: avx2 ? avx2::LogF32(a, o, n) : LogF32(a, o, n); return;
      case Opcode::kTanh: avx2 ? avx2::TanhF32(a, o, n) : TanhF32(a, o, n); return;
      case Opcode::kLogistic: avx2 ? avx2::LogisticF32(a, o, n) : LogisticF32(a, o, n); return;
      default: break;
    }
  }
  switch (op) {
    case Opcode::kNegate: for (int64_t i = 0; i < n; ++i) o[i] = -a[i]; return;
    case Opcode::kAbs: for (int64_t i = 0; i < n; ++i) o[i] = std::fabs(a[i]); return;
    case Opcode::kExponential: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(std::exp(static_cast<double>(a[i]))); return;
    case Opcode::kExponentialMinusOne: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(std::expm1(static_cast<double>(a[i]))); return;
    case Opcode::kLog: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(std::log(static_cast<double>(a[i]))); return;
    case Opcode::kLogPlusOne: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(std::log1p(static_cast<double>(a[i]))); return;
    case Opcode::kTanh: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(std::tanh(static_cast<double>(a[i]))); return;
    case Opcode::kSqrt: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(std::sqrt(static_cast<double>(a[i]))); return;
    case Opcode::kRsqrt: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(1.0 / std::sqrt(static_cast<double>(a[i]))); return;
    case Opcode::kLogistic: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(1.0 / (1.0 + std::exp(-static_cast<double>(a[i])))); return;
    case Opcode::kSine: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(std::sin(static_cast<double>(a[i]))); return;
    case Opcode::kCosine: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(std::cos(static_cast<double>(a[i]))); return;
    case Opcode::kFloor: for (int64_t i = 0; i < n; ++i) o[i] = std::floor(a[i]); return;
    case Opcode::kCeil: for (int64_t i = 0; i < n; ++i) o[i] = std::ceil(a[i]); return;
    case Opcode::kRoundNearestEven: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(std::nearbyint(static_cast<double>(a[i]))); return;
    default: return;
  }
}

template <typename T>
void FloatBinary(Opcode op, const T* a, const T* b, T* o, int64_t n) {
  switch (op) {
    case Opcode::kAdd: for (int64_t i = 0; i < n; ++i) o[i] = a[i] + b[i]; return;
    case Opcode::kSubtract: for (int64_t i = 0; i < n; ++i) o[i] = a[i] - b[i]; return;
    case Opcode::kMultiply: for (int64_t i = 0; i < n; ++i) o[i] = a[i] * b[i]; return;
    case Opcode::kDivide: for (int64_t i = 0; i < n; ++i) o[i] = a[i] / b[i]; return;
    case Opcode::kMaximum: for (int64_t i = 0; i < n; ++i) o[i] = FloatMax(a[i], b[i]); return;
    case Opcode::kMinimum: for (int64_t i = 0; i < n; ++i) o[i] = FloatMin(a[i], b[i]); return;
    case Opcode::kRemainder: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(std::fmod(static_cast<double>(a[i]), static_cast<double>(b[i]))); return;
    case Opcode::kPower: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(std::pow(static_cast<double>(a[i]), static_cast<double>(b[i]))); return;
    case Opcode::kAtan2: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(std::atan2(static_cast<double>(a[i]), static_cast<double>(b[i]))); return;
    default: return;
  }
}

// Integers wrap (two's complement); pred is 0/1 in a byte.
template <typename T>
void IntUnary(Opcode op, bool pred, const T* a, T* o, int64_t n) {
  using U = Unsigned<T>;
  switch (op) {
    case Opcode::kNegate: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(U(0) - static_cast<U>(a[i])); return;
    case Opcode::kAbs: for (int64_t i = 0; i < n; ++i) o[i] = a[i] < 0 ? static_cast<T>(U(0) - static_cast<U>(a[i])) : a[i]; return;
    case Opcode::kNot:
      if (pred) {
        for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(a[i] ^ 1);
      } else {
        for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(~a[i]);
      }
      return;
    default: return;
  }
}

template <typename T>
void IntBinary(Opcode op, const T* a, const T* b, T* o, int64_t n) {
  using U = Unsigned<T>;
  switch (op) {
    case Opcode::kAdd: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(static_cast<U>(a[i]) + static_cast<U>(b[i])); return;
    case Opcode::kSubtract: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(static_cast<U>(a[i]) - static_cast<U>(b[i])); return;
    case Opcode::kMultiply: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(static_cast<U>(a[i]) * static_cast<U>(b[i])); return;
    case Opcode::kMaximum: for (int64_t i = 0; i < n; ++i) o[i] = a[i] >= b[i] ? a[i] : b[i]; return;
    case Opcode::kMinimum: for (int64_t i = 0; i < n; ++i) o[i] = a[i] <= b[i] ? a[i] : b[i]; return;
    case Opcode::kAnd: for (int64_t i = 0; i < n; ++i) o[i] = a[i] & b[i]; return;
    case Opcode::kOr: for (int64_t i = 0; i < n; ++i) o[i] = a[i] | b[i]; return;
    case Opcode::kXor: for (int64_t i = 0; i < n; ++i) o[i] = a[i] ^ b[i]; return;
    default: return;
  }
}

template <typename T>
void CompareLoop(int direction, const T* a, const T* b, uint8_t* o, int64_t n) {
  switch (direction) {
    case 0: for (int64_t i = 0; i < n; ++i) o[i] = a[i] == b[i]; return;
    case 1: for (int64_t i = 0; i < n; ++i) o[i] = a[i] != b[i]; return;
    case 2: for (int64_t i = 0; i < n; ++i) o[i] = a[i] < b[i]; return;
    case 3: for (int64_t i = 0; i < n; ++i) o[i] = a[i] <= b[i]; return;
    case 4: for (int64_t i = 0; i < n; ++i) o[i] = a[i] > b[i]; return;
    default: for (int64_t i = 0; i < n; ++i) o[i] = a[i] >= b[i]; return;
  }
}

template <typename T>
void SelectLoop(const uint8_t* p, const T* a, const T* b, T* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = p[i] ? a[i] : b[i];
}

template <typename From, typename To>
void ConvertLoop(const From* a, To* o, int64_t n, bool to_pred) {
  if (to_pred) {
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<To>(a[i] != 0);
  } else if constexpr (std::is_integral_v<From> && std::is_integral_v<To>) {
    // Integer to integer wraps (through the unsigned type of the source's width).
    for (int64_t i = 0; i < n; ++i) {
      o[i] = static_cast<To>(static_cast<std::make_unsigned_t<To>>(
          static_cast<int64_t>(a[i])));
    }
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<To>(a[i]);
  }
}

#define EMBER_FAST_TYPES(X)                                                                    \
  X(ElementType::kPred, uint8_t) X(ElementType::kS32, int32_t) X(ElementType::kS64, int64_t) \
  X(ElementType::kU8, uint8_t) X(ElementType::kU32, uint32_t) X(ElementType::kF32, float)    \
  X(ElementType::kF64, double)

template <typename From>
void ConvertFrom(const From* a, ElementType to, void* o, int64_t n) {
  switch (to) {
#define EMBER_CASE(E, T) \
  case E: ConvertLoop<From, T>(a, static_cast<T*>(o), n, E == ElementType::kPred); return;
    EMBER_FAST_TYPES(EMBER_CASE)
#undef EMBER_CASE
    default: return;
  }
}

template <typename T>
void ComputeTyped(const Node& node, const void* const* in, void* out, int64_t n) {
  T* o = static_cast<T*>(out);
  auto arg = [&](int i) { return static_cast<const T*>(in[i]); };
  switch (node.op) {
    case Opcode::kSelect:
      SelectLoop<T>(static_cast<const uint8_t*>(in[0]), arg(1), arg(2), o, n);
      return;
    default:
      break;
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (node.operands.size() == 1) {
      FloatUnary<T>(node.op, arg(0), o, n);
    } else {
      FloatBinary<T>(node.op, arg(0), arg(1), o, n);
    }
  } else {
    if (node.operands.size() == 1) {
      IntUnary<T>(node.op, node.type == ElementType::kPred, arg(0), o, n);
    } else {
      IntBinary<T>(node.op, arg(0), arg(1), o, n);
    }
  }
}

void Compute(const Node& node, const void* const* in, void* out, int64_t n) {
  if (node.op == Opcode::kCompare) {
    switch (node.in_type) {
#define EMBER_CASE(E, T)                                                                     \
  case E:                                                                                    \
    CompareLoop<T>(node.direction, static_cast<const T*>(in[0]), static_cast<const T*>(in[1]), \
                   static_cast<uint8_t*>(out), n);                                           \
    return;
      EMBER_FAST_TYPES(EMBER_CASE)
#undef EMBER_CASE
      default: return;
    }
  }
  if (node.op == Opcode::kConvert) {
    switch (node.in_type) {
#define EMBER_CASE(E, T) \
  case E: ConvertFrom<T>(static_cast<const T*>(in[0]), node.type, out, n); return;
      EMBER_FAST_TYPES(EMBER_CASE)
#undef EMBER_CASE
      default: return;
    }
  }
  switch (node.type) {
#define EMBER_CASE(E, T) \
  case E: ComputeTyped<T>(node, in, out, n); return;
    EMBER_FAST_TYPES(EMBER_CASE)
#undef EMBER_CASE
    default: return;
  }
}

template <typename T>
void IotaLoop(const Request& r, int64_t div, int64_t mod, T* o) {
  if (r.list != nullptr) {
    for (int64_t i = 0; i < r.n; ++i) o[i] = static_cast<T>((r.list[i] / div) % mod);
  } else {
    for (int64_t i = 0; i < r.n; ++i) o[i] = static_cast<T>(((r.start + i) / div) % mod);
  }
}

// Per-thread scratch: slots of kChunk 8-byte words and the memo of identity requests.
struct Scratch {
  std::vector<uint64_t> words;
  std::vector<uint64_t> memo_gen;
  std::vector<const void*> memo_ptr;
  uint64_t gen = 0;
  void* slot(int s) { return words.data() + static_cast<size_t>(s) * kChunk; }
};

Scratch& ThreadScratch(int slots, size_t nodes) {
  thread_local Scratch scratch;
  const size_t words = static_cast<size_t>(slots) * kChunk;
  if (scratch.words.size() < words) scratch.words.resize(words);
  if (scratch.memo_gen.size() < nodes) {
    scratch.memo_gen.resize(nodes, 0);
    scratch.memo_ptr.resize(nodes, nullptr);
  }
  return scratch;
}

struct Context {
  const std::vector<Node>& nodes;
  absl::Span<const void* const> inputs;
  Scratch& scratch;
  int64_t start, n;  // the chunk
  int root = -1;              // the node whose identity result goes to root_dst
  void* root_dst = nullptr;
};

// The node's values for request `r`. Identity requests (the chunk itself) are computed once per
// chunk into the node's memo slot (the root's go straight to the kernel output); other requests
// are written to `dst`, an edge slot of the caller. Returns where the values are (possibly an
// input buffer or an operand's result).
const void* Eval(Context& c, int id, const Request& r, void* dst) {
  const Node& node = c.nodes[id];
  const bool identity = r.list == nullptr && r.start == c.start && r.n == c.n;
  if (identity) {
    if (c.scratch.memo_gen[id] == c.scratch.gen) return c.scratch.memo_ptr[id];
    dst = id == c.root && c.root_dst != nullptr ? c.root_dst : c.scratch.slot(node.memo_slot);
  }
  const int bytes = TypeBytes(node.type);
  const void* result = nullptr;
  switch (node.kind) {
    case NodeKind::kInput: {
      const void* base = c.inputs[node.input];
      if (r.list == nullptr) {
        result = static_cast<const uint8_t*>(base) + r.start * bytes;
      } else {
        GatherBytes(base, bytes, r.list, r.n, dst);
        result = dst;
      }
      break;
    }
    case NodeKind::kReshape:
      result = Eval(c, node.operands[0], r, dst);
      break;
    case NodeKind::kIota: {
      void* out = dst;
      switch (node.type) {
#define EMBER_CASE(E, T) \
  case E: IotaLoop<T>(r, node.iota_div, node.iota_mod, static_cast<T*>(out)); break;
        EMBER_FAST_TYPES(EMBER_CASE)
#undef EMBER_CASE
        default: break;
      }
      result = out;
      break;
    }
    case NodeKind::kMap: {
      void* out = dst;
      if (node.src_single) {
        Request one{nullptr, 0, 1};
        const void* v = Eval(c, node.operands[0], one, c.scratch.slot(node.edge_slot));
        uint64_t value = 0;
        std::memcpy(&value, v, bytes);
        FillBytes(&value, bytes, r.n, out);
        result = out;
      } else if (r.list == nullptr && !node.dims.empty() &&
                 c.nodes[node.operands[0]].kind == NodeKind::kInput) {
        // A contiguous request over a buffer: copy (stride 1), fill (stride 0) or step through
        // it run by run along the last dim, without an index list.
        const auto* base = static_cast<const uint8_t*>(c.inputs[c.nodes[node.operands[0]].input]);
        auto* o = static_cast<uint8_t*>(out);
        const int64_t last = static_cast<int64_t>(node.dims.size()) - 1;
        const int64_t s = node.src_stride[last];
        ForEachRun(r, node.dims, node.src_stride, node.src_offset,
                   [&](int64_t at, int64_t cur, int64_t run) {
                     if (s == 1) {
                       std::memcpy(o + at * bytes, base + cur * bytes,
                                   static_cast<size_t>(run * bytes));
                     } else if (s == 0) {
                       FillBytes(base + cur * bytes, bytes, run, o + at * bytes);
                     } else {
                       StridedBytes(base + cur * bytes, bytes, s, run, o + at * bytes);
                     }
                   });
        result = out;
      } else if (r.list == nullptr && !node.dims.empty() && node.dims.back() >= 8 &&
                 node.src_stride.back() <= 1) {
        // A contiguous request whose runs along the last dim are contiguous (stride 1) or one
        // value (stride 0) in the operand: ask the operand for each run, so index lists (a
        // division per element and dim) are never built.
        auto* o = static_cast<uint8_t*>(out);
        const bool fill = node.src_stride.back() == 0;
        void* edge = c.scratch.slot(node.edge_slot);
        ForEachRun(r, node.dims, node.src_stride, node.src_offset,
                   [&](int64_t at, int64_t cur, int64_t run) {
                     uint8_t* dst_run = o + at * bytes;
                     if (fill) {
                       const void* v = Eval(c, node.operands[0], Request{nullptr, cur, 1}, edge);
                       FillBytes(v, bytes, run, dst_run);
                     } else {
                       const void* v = Eval(c, node.operands[0], Request{nullptr, cur, run}, dst_run);
                       if (v != dst_run) std::memmove(dst_run, v, static_cast<size_t>(run * bytes));
                     }
                   });
        result = out;
      } else {
        auto* indices = static_cast<int64_t*>(c.scratch.slot(node.index_slot));
        MapIndices(r, node.dims, node.src_stride, node.src_offset, indices);
        Request inner{indices, 0, r.n};
        result = Eval(c, node.operands[0], inner, out);
      }
      break;
    }
    case NodeKind::kElementwise: {
      const void* args[3] = {nullptr, nullptr, nullptr};
      for (size_t i = 0; i < node.operands.size(); ++i) {
        void* edge = c.scratch.slot(node.edge_slot + static_cast<int>(i));
        if (node.scalar[i]) {
          Request one{nullptr, 0, 1};
          const void* v = Eval(c, node.operands[i], one, edge);
          const int ob = TypeBytes(c.nodes[node.operands[i]].type);
          uint64_t value = 0;
          std::memcpy(&value, v, ob);
          FillBytes(&value, ob, r.n, edge);
          args[i] = edge;
        } else {
          args[i] = Eval(c, node.operands[i], r, edge);
        }
      }
      void* out = dst;
      Compute(node, args, out, r.n);
      result = out;
      break;
    }
  }
  if (identity) {
    c.scratch.memo_gen[id] = c.scratch.gen;
    c.scratch.memo_ptr[id] = result;
  }
  return result;
}

template <typename T, Opcode kOp, bool kFirst>
inline T Fold(T a, T x) {
  if constexpr (std::is_floating_point_v<T>) {
    if constexpr (kOp == Opcode::kAdd) return kFirst ? a + x : x + a;
    if constexpr (kOp == Opcode::kMultiply) return kFirst ? a * x : x * a;
    if constexpr (kOp == Opcode::kMaximum) return kFirst ? FloatMax(a, x) : FloatMax(x, a);
    return kFirst ? FloatMin(a, x) : FloatMin(x, a);
  } else {
    using U = Unsigned<T>;
    if constexpr (kOp == Opcode::kAdd) return static_cast<T>(static_cast<U>(a) + static_cast<U>(x));
    if constexpr (kOp == Opcode::kMultiply) return static_cast<T>(static_cast<U>(a) * static_cast<U>(x));
    if constexpr (kOp == Opcode::kMaximum) return kFirst ? (a >= x ? a : x) : (x >= a ? x : a);
    if constexpr (kOp == Opcode::kMinimum) return kFirst ? (a <= x ? a : x) : (x <= a ? x : a);
    if constexpr (kOp == Opcode::kAnd) return a & x;
    return a | x;
  }
}

// op over v[0..n) with kLanes independent partial results combined pairwise at the end, so the
// loop vectorizes and is not bound by one accumulator's latency. This reassociates the fold (as
// XLA:CPU does): float sums differ from the sequential order by at most ~n*eps*sum|v| (in
// practice ~log2(n)*eps), max/min/and/or and integer ops are exact.
template <typename T, Opcode kOp>
T FoldPartial(const T* v, int64_t n) {
  constexpr int kLanes = 16;
  T p[kLanes];
  for (int j = 0; j < kLanes; ++j) p[j] = v[j];
  int64_t k = kLanes;
  for (; k + kLanes <= n; k += kLanes) {
    for (int j = 0; j < kLanes; ++j) p[j] = Fold<T, kOp, true>(p[j], v[k + j]);
  }
  for (int j = 0; k < n; ++k, ++j) p[j] = Fold<T, kOp, true>(p[j], v[k]);
  for (int w = kLanes / 2; w > 0; w /= 2) {
    for (int j = 0; j < w; ++j) p[j] = Fold<T, kOp, true>(p[j], p[j + w]);
  }
  return p[0];
}

// acc[target[i]] = op(acc[target[i]], v[i]); each run of equal targets is folded on its own
// (FoldPartial when long) and then into the accumulator.
// Where the values of one chunk go: list[i] for value i, or (when list is null) rows of `row`
// consecutive inputs starting at input `start` (trailing-dim reductions).
struct Targets {
  const int64_t* list = nullptr;
  int64_t start = 0;
  int64_t row = 1;
};

template <typename T, Opcode kOp, bool kFirst>
void FoldRuns(const T* v, const Targets& target, int64_t n, T* acc) {
  int64_t i = 0;
  while (i < n) {
    int64_t t, j;
    if (target.list == nullptr) {
      t = (target.start + i) / target.row;
      j = std::min(n, (t + 1) * target.row - target.start);
    } else {
      t = target.list[i];
      j = i + 1;
      while (j < n && target.list[j] == t) ++j;
    }
    T a = acc[t];
    if (j - i >= 32) {
      a = Fold<T, kOp, kFirst>(a, FoldPartial<T, kOp>(v + i, j - i));
    } else {
      for (int64_t k = i; k < j; ++k) a = Fold<T, kOp, kFirst>(a, v[k]);
    }
    acc[t] = a;
    i = j;
  }
}

// The identity of a reduction op (partial results of parallel parts start from it): -0.0 for
// float add (x + -0.0 == x for every x, -0.0 included), -inf / +inf for float max / min.
template <typename T>
T FoldIdentity(Opcode op, bool pred) {
  switch (op) {
    case Opcode::kAdd:
      if constexpr (std::is_floating_point_v<T>) return -T(0);
      return T(0);
    case Opcode::kMultiply: return T(1);
    case Opcode::kMaximum:
      if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
      return std::numeric_limits<T>::lowest();
    case Opcode::kMinimum:
      if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
      return std::numeric_limits<T>::max();
    case Opcode::kAnd:
      if constexpr (!std::is_floating_point_v<T>) return pred ? T(1) : static_cast<T>(~T(0));
      return T(0);
    default:
      return T(0);  // or
  }
}

// acc[i] = op(acc[i], part[i]) for i < n.
template <typename T>
void CombineParts(Opcode op, bool first, const T* part, int64_t n, T* acc) {
  auto run = [&](auto k_op) {
    constexpr Opcode kOp = decltype(k_op)::value;
    for (int64_t i = 0; i < n; ++i) {
      acc[i] = first ? Fold<T, kOp, true>(acc[i], part[i]) : Fold<T, kOp, false>(acc[i], part[i]);
    }
  };
  switch (op) {
    case Opcode::kAdd: run(std::integral_constant<Opcode, Opcode::kAdd>()); return;
    case Opcode::kMultiply: run(std::integral_constant<Opcode, Opcode::kMultiply>()); return;
    case Opcode::kMaximum: run(std::integral_constant<Opcode, Opcode::kMaximum>()); return;
    case Opcode::kMinimum: run(std::integral_constant<Opcode, Opcode::kMinimum>()); return;
    default:
      if constexpr (!std::is_floating_point_v<T>) {
        if (op == Opcode::kAnd) {
          run(std::integral_constant<Opcode, Opcode::kAnd>());
        } else {
          run(std::integral_constant<Opcode, Opcode::kOr>());
        }
      }
      return;
  }
}

template <typename T, Opcode kOp>
void FoldOrdered(bool first, const T* v, const Targets& target, int64_t n, T* acc) {
  if (first) {
    FoldRuns<T, kOp, true>(v, target, n, acc);
  } else {
    FoldRuns<T, kOp, false>(v, target, n, acc);
  }
}

template <typename T>
void FoldLoop(Opcode op, bool first, const T* v, const Targets& target, int64_t n, T* acc) {
  switch (op) {
    case Opcode::kAdd: FoldOrdered<T, Opcode::kAdd>(first, v, target, n, acc); return;
    case Opcode::kMultiply: FoldOrdered<T, Opcode::kMultiply>(first, v, target, n, acc); return;
    case Opcode::kMaximum: FoldOrdered<T, Opcode::kMaximum>(first, v, target, n, acc); return;
    case Opcode::kMinimum: FoldOrdered<T, Opcode::kMinimum>(first, v, target, n, acc); return;
    default:
      if constexpr (!std::is_floating_point_v<T>) {
        if (op == Opcode::kAnd) {
          FoldOrdered<T, Opcode::kAnd>(first, v, target, n, acc);
        } else {
          FoldOrdered<T, Opcode::kOr>(first, v, target, n, acc);
        }
      }
      return;
  }
}

}  // namespace

FusedKernel::~FusedKernel() = default;

absl::StatusOr<std::unique_ptr<FusedKernel>> FusedKernel::Create(const passes::Kernel& kernel) {
  std::unique_ptr<FusedKernel> k(new FusedKernel());
  std::unordered_map<const ir::Value*, int> node_of;
  auto unsupported = [](const ir::Instruction& inst) {
    return absl::UnimplementedError(
        absl::StrCat("the fast host kernels do not run ", inst.Describe()));
  };
  for (size_t i = 0; i < kernel.inputs.size(); ++i) {
    const ir::Value* v = kernel.inputs[i];
    if (!v->type().is_tensor()) return absl::UnimplementedError("non-array kernel input");
    Node node;
    node.kind = NodeKind::kInput;
    node.type = v->type().element_type();
    node.dims = v->type().dims();
    node.input = static_cast<int>(i);
    node_of[v] = static_cast<int>(k->nodes_.size());
    k->nodes_.push_back(std::move(node));
  }
  const ir::Instruction* reduce = kernel.kind == passes::KernelKind::kReduce ? kernel.root() : nullptr;
  for (const ir::Instruction* inst : kernel.instructions) {
    if (inst == reduce) continue;
    if (!LoopFusible(*inst)) return unsupported(*inst);
    Node node;
    node.op = inst->opcode();
    node.type = inst->result()->type().element_type();
    node.dims = inst->result()->type().dims();
    for (const ir::Value* v : inst->operands()) {
      auto it = node_of.find(v);
      if (it == node_of.end()) return unsupported(*inst);
      node.operands.push_back(it->second);
      node.scalar.push_back(v->type().dims().empty() && !node.dims.empty());
    }
    if (!inst->operands().empty()) node.in_type = inst->operand(0)->type().element_type();
    const std::vector<int64_t> out_dims = node.dims;
    switch (inst->opcode()) {
      case Opcode::kReshape:
        node.kind = NodeKind::kReshape;
        break;
      case Opcode::kIota: {
        node.kind = NodeKind::kIota;
        const int64_t d = inst->attribute("iota_dimension")->i;
        node.iota_div = RowMajorStrides(out_dims)[d];
        node.iota_mod = out_dims[d];
        break;
      }
      case Opcode::kBroadcastInDim: {
        node.kind = NodeKind::kMap;
        const auto& od = inst->operand(0)->type().dims();
        const std::vector<int64_t> os = RowMajorStrides(od);
        const std::vector<int64_t>& bd = *IntsAttr(*inst, "broadcast_dimensions");
        node.src_stride.assign(out_dims.size(), 0);
        for (size_t j = 0; j < bd.size(); ++j) {
          if (od[j] != 1) node.src_stride[bd[j]] = os[j];
        }
        node.src_single = inst->operand(0)->type().shape().element_count() == 1;
        break;
      }
      case Opcode::kTranspose: {
        node.kind = NodeKind::kMap;
        const std::vector<int64_t> os = RowMajorStrides(inst->operand(0)->type().dims());
        const std::vector<int64_t>& perm = *IntsAttr(*inst, "permutation");
        for (int64_t p : perm) node.src_stride.push_back(os[p]);
        break;
      }
      case Opcode::kSlice: {
        node.kind = NodeKind::kMap;
        const std::vector<int64_t> os = RowMajorStrides(inst->operand(0)->type().dims());
        const std::vector<int64_t>& start = *IntsAttr(*inst, "start_indices");
        const std::vector<int64_t>* strides = IntsAttr(*inst, "strides");
        for (size_t d = 0; d < out_dims.size(); ++d) {
          const int64_t s = strides != nullptr ? (*strides)[d] : 1;
          node.src_stride.push_back(os[d] * s);
          node.src_offset += start[d] * os[d];
        }
        break;
      }
      case Opcode::kCompare:
        node.kind = NodeKind::kElementwise;
        node.direction = CompareDirection(*inst);
        break;
      default:
        node.kind = NodeKind::kElementwise;
        if (node.operands.size() > 3) return unsupported(*inst);
        break;
    }
    if (node.dims.size() > 16) return unsupported(*inst);
    node_of[inst->result()] = static_cast<int>(k->nodes_.size());
    k->nodes_.push_back(std::move(node));
  }
  // Scratch slots.
  int slots = 0;
  for (Node& node : k->nodes_) {
    node.memo_slot = slots++;
    node.edge_slot = slots;
    slots += std::max<int>(1, static_cast<int>(node.operands.size()));
    node.index_slot = slots++;
  }
  k->slots_ = slots;
  if (reduce == nullptr) {
    k->root_ = node_of.at(kernel.root()->result());
    k->output_bytes_ = kernel.root()->result()->type().shape().ByteSize();
    return k;
  }
  k->reduce_ = true;
  auto in = node_of.find(reduce->operand(0));
  auto init = node_of.find(reduce->operand(1));
  if (in == node_of.end() || init == node_of.end() || k->nodes_[init->second].kind != NodeKind::kInput) {
    return unsupported(*reduce);
  }
  k->root_ = in->second;
  k->init_input_ = k->nodes_[init->second].input;
  std::optional<SimpleBinaryRegion> body =
      MatchSimpleBinaryRegion(*reduce->regions()[0], reduce->result()->type().element_type());
  if (!body.has_value()) return unsupported(*reduce);
  k->reduce_op_ = static_cast<int>(body->opcode);
  k->accumulator_first_ = body->accumulator_first;
  k->reduce_type_ = reduce->result()->type().element_type();
  k->input_dims_ = reduce->operand(0)->type().dims();
  if (k->input_dims_.size() > 16) return unsupported(*reduce);
  k->input_elements_ = reduce->operand(0)->type().shape().element_count();
  k->output_elements_ = reduce->result()->type().shape().element_count();
  k->output_bytes_ = reduce->result()->type().shape().ByteSize();
  const std::vector<int64_t>* dims = IntsAttr(*reduce, "dimensions");
  if (dims == nullptr) return unsupported(*reduce);
  std::vector<bool> reduced(k->input_dims_.size(), false);
  for (int64_t d : *dims) {
    if (d < 0 || d >= static_cast<int64_t>(reduced.size())) return unsupported(*reduce);
    reduced[d] = true;
  }
  const std::vector<int64_t> out_strides = RowMajorStrides(reduce->result()->type().dims());
  size_t kept = 0;
  bool trailing = true;  // reduced dims form a suffix
  for (size_t d = 0; d < reduced.size(); ++d) {
    if (reduced[d]) {
      k->out_index_stride_.push_back(0);
    } else {
      if (kept >= out_strides.size()) return unsupported(*reduce);
      k->out_index_stride_.push_back(out_strides[kept++]);
      if (d > 0 && reduced[d - 1]) trailing = false;
    }
  }
  if (trailing && k->output_elements_ > 0) k->row_ = k->input_elements_ / k->output_elements_;
  return k;
}

void FusedKernel::LoopRange(absl::Span<const void* const> inputs, void* out, int64_t begin,
                            int64_t end) const {
  const int bytes = TypeBytes(nodes_[root_].type);
  Scratch& scratch = ThreadScratch(slots_, nodes_.size());
  for (int64_t start = begin; start < end; start += kChunk) {
    const int64_t n = std::min(kChunk, end - start);
    ++scratch.gen;
    void* dst = static_cast<uint8_t*>(out) + start * bytes;
    Context c{nodes_, inputs, scratch, start, n, root_, dst};
    const void* got = Eval(c, root_, Request{nullptr, start, n}, nullptr);
    if (got != dst) std::memmove(dst, got, static_cast<size_t>(n * bytes));
  }
}

void FusedKernel::FoldRange(absl::Span<const void* const> inputs, int64_t begin, int64_t end,
                            void* acc) const {
  const Opcode op = static_cast<Opcode>(reduce_op_);
  Scratch& scratch = ThreadScratch(slots_, nodes_.size());
  for (int64_t start = begin; start < end; start += kChunk) {
    const int64_t n = std::min(kChunk, end - start);
    ++scratch.gen;
    Context c{nodes_, inputs, scratch, start, n};
    const void* values = Eval(c, root_, Request{nullptr, start, n}, nullptr);
    // Trailing-dim reductions: targets are rows of row_ inputs. Otherwise a list (in a
    // dedicated buffer: the root's index slot may still hold data the values point into).
    Targets targets{nullptr, start, row_};
    if (row_ <= 0) {
      thread_local std::vector<int64_t> list;
      if (list.size() < static_cast<size_t>(kChunk)) list.resize(kChunk);
      MapIndices(Request{nullptr, start, n}, input_dims_, out_index_stride_, 0, list.data());
      targets.list = list.data();
    }
    switch (reduce_type_) {
#define EMBER_CASE(E, T)                                                                        \
  case E:                                                                                       \
    FoldLoop<T>(op, accumulator_first_, static_cast<const T*>(values), targets, n,              \
                static_cast<T*>(acc));                                                          \
    break;
      EMBER_FAST_TYPES(EMBER_CASE)
#undef EMBER_CASE
      default: break;
    }
  }
}

void FusedKernel::RunRows(absl::Span<const void* const> inputs, void* out, int64_t rows,
                          int64_t begin, int64_t end) const {
  if (!reduce_) {
    const int64_t total = output_bytes_ / std::max(1, TypeBytes(nodes_[root_].type));
    const int64_t per = total / rows;
    LoopRange(inputs, out, begin * per, end * per);
    return;
  }
  const int bytes = TypeBytes(reduce_type_);
  const int64_t per = output_elements_ / rows;
  FillBytes(inputs[init_input_], bytes, (end - begin) * per,
            static_cast<uint8_t*>(out) + begin * per * bytes);
  if (row_ > 0) FoldRange(inputs, begin * per * row_, end * per * row_, out);
}

void FusedKernel::Run(absl::Span<const void* const> inputs, void* out, ThreadPool& pool) const {
  if (!reduce_) {
    const Node& root = nodes_[root_];
    const int bytes = TypeBytes(root.type);
    const int64_t total = output_bytes_ / std::max(1, bytes);
    const int64_t chunks = (total + kChunk - 1) / kChunk;
    pool.ParallelFor(chunks, std::max<int64_t>(1, 65536 / kChunk), [&](int64_t begin, int64_t end) {
      LoopRange(inputs, out, begin * kChunk, std::min(total, end * kChunk));
    });
    return;
  }
  // Reduction: initialize, then fold the fused input. Trailing-dim reductions with enough rows
  // split whole rows across threads; other big reductions (to a scalar, over leading dims) split
  // the input across threads, each part folding into its own partial results (starting from the
  // op's identity), which are then folded into the output in part order.
  const int bytes = TypeBytes(reduce_type_);
  FillBytes(inputs[init_input_], bytes, output_elements_, out);
  if (input_elements_ == 0) return;
  const Opcode op = static_cast<Opcode>(reduce_op_);
  auto fold_range = [&](int64_t begin, int64_t end, void* acc) { FoldRange(inputs, begin, end, acc); };
  const int threads = pool.size();
  if (row_ > 0 && output_elements_ >= threads && input_elements_ >= 65536) {
    pool.ParallelFor(output_elements_, std::max<int64_t>(1, 32768 / row_),
                     [&](int64_t begin, int64_t end) { fold_range(begin * row_, end * row_, out); });
    return;
  }
  const int64_t parts = std::min<int64_t>(threads, input_elements_ / 65536);
  if (parts <= 1 || output_elements_ * parts * 4 > input_elements_) {
    fold_range(0, input_elements_, out);
    return;
  }
  // Part p covers chunks [p * per, (p + 1) * per) of the input (chunk-aligned).
  const int64_t chunks = (input_elements_ + kChunk - 1) / kChunk;
  const int64_t per = (chunks + parts - 1) / parts;
  std::vector<uint64_t> partials(static_cast<size_t>(parts * output_elements_));
  const bool pred = reduce_type_ == ElementType::kPred;
  pool.ParallelFor(parts, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      void* acc = partials.data() + p * output_elements_;
      switch (reduce_type_) {
#define EMBER_CASE(E, T)                                                                   \
  case E:                                                                                  \
    std::fill_n(static_cast<T*>(acc), output_elements_, FoldIdentity<T>(op, pred));        \
    break;
        EMBER_FAST_TYPES(EMBER_CASE)
#undef EMBER_CASE
        default: break;
      }
      const int64_t begin = std::min(input_elements_, p * per * kChunk);
      const int64_t end = std::min(input_elements_, (p + 1) * per * kChunk);
      if (begin < end) fold_range(begin, end, acc);
    }
  });
  for (int64_t p = 0; p < parts; ++p) {
    const void* part = partials.data() + p * output_elements_;
    switch (reduce_type_) {
#define EMBER_CASE(E, T)                                                                        \
  case E:                                                                                       \
    CombineParts<T>(op, accumulator_first_, static_cast<const T*>(part), output_elements_,      \
                    static_cast<T*>(out));                                                      \
    break;
      EMBER_FAST_TYPES(EMBER_CASE)
#undef EMBER_CASE
      default: break;
    }
  }
}

}  // namespace ember::host::fast
