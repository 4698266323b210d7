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
#include "compiler/evaluator/eval_elementwise.h"
#include "compiler/host/fast_kernels.h"
#include "compiler/host/fast_math.h"
#include "compiler/passes/rewrite.h"

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
    case ElementType::kU64:
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
      return !pred && t != ElementType::kU8 && t != ElementType::kU32 && t != ElementType::kU64;
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightLogical:
    case Opcode::kShiftRightArithmetic:
      return !fl && !pred;
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
    case Opcode::kBitcastConvert: {
      // Same width (the dims stay): the bits are copied. Not to or from pred, whose bytes must
      // stay 0 or 1.
      const ElementType from = inst.operand(0)->type().element_type();
      return !pred && from != ElementType::kPred && ir::StorageBytes(from) == ir::StorageBytes(t);
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
      const std::vector<int64_t>* dims = passes::IntsAttribute(inst, "broadcast_dimensions");
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
      const std::vector<int64_t>* perm = passes::IntsAttribute(inst, "permutation");
      return perm != nullptr && static_cast<int64_t>(perm->size()) == rank;
    }
    case Opcode::kSlice: {
      const std::vector<int64_t>* start = passes::IntsAttribute(inst, "start_indices");
      const std::vector<int64_t>* strides = passes::IntsAttribute(inst, "strides");
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
  std::optional<eval::SimpleBinaryRegion> body = eval::MatchSimpleBinaryRegion(*inst.regions()[0], t);
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
// or list[0..n). `serial` names a request other than the chunk itself (see Eval's memo); it is
// passed down unchanged through elementwise nodes, and every new request gets a new one.
struct Request {
  const int64_t* list = nullptr;
  int64_t start = 0;
  int64_t n = 0;
  uint64_t serial = 0;
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
constexpr std::make_unsigned_t<T> kBits = static_cast<std::make_unsigned_t<T>>(8 * sizeof(T));

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
    // StableHLO shifts: the amount is read as unsigned; amounts of the width or more shift
    // everything out (arithmetic right shifts then fill with the sign).
    case Opcode::kShiftLeft:
      for (int64_t i = 0; i < n; ++i) {
        const U k = static_cast<U>(b[i]);
        o[i] = k >= kBits<T> ? T(0) : static_cast<T>(static_cast<U>(a[i]) << k);
      }
      return;
    case Opcode::kShiftRightLogical:
      for (int64_t i = 0; i < n; ++i) {
        const U k = static_cast<U>(b[i]);
        o[i] = k >= kBits<T> ? T(0) : static_cast<T>(static_cast<U>(a[i]) >> k);
      }
      return;
    case Opcode::kShiftRightArithmetic:
      for (int64_t i = 0; i < n; ++i) {
        const U k = static_cast<U>(b[i]);
        using S = std::make_signed_t<T>;
        const S v = static_cast<S>(a[i]);
        o[i] = static_cast<T>(k >= kBits<T> ? (v < 0 ? S(-1) : S(0)) : static_cast<S>(v >> k));
      }
      return;
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
  X(ElementType::kU8, uint8_t) X(ElementType::kU32, uint32_t) X(ElementType::kU64, uint64_t)   \
  X(ElementType::kF32, float) X(ElementType::kF64, double)

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
  if (node.op == Opcode::kBitcastConvert) {
    std::memcpy(out, in[0], static_cast<size_t>(n * TypeBytes(node.type)));
    return;
  }
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

// Per-thread scratch: slots of kChunk 8-byte words, the memo of identity requests and the
// memo of other requests (one per node: the last serial it answered and where the values are).
struct Scratch {
  std::vector<uint64_t> words;
  std::vector<uint64_t> memo_gen;
  std::vector<const void*> memo_ptr;
  std::vector<uint64_t> request_serial;
  std::vector<const void*> request_ptr;
  uint64_t gen = 0;
  uint64_t last_serial = 0;
  void* slot(int s) { return words.data() + static_cast<size_t>(s) * kChunk; }
};

Scratch& ThreadScratch(int slots, size_t nodes) {
  thread_local Scratch scratch;
  const size_t words = static_cast<size_t>(slots) * kChunk;
  if (scratch.words.size() < words) scratch.words.resize(words);
  if (scratch.memo_gen.size() < nodes) {
    scratch.memo_gen.resize(nodes, 0);
    scratch.memo_ptr.resize(nodes, nullptr);
    scratch.request_serial.resize(nodes, 0);
    scratch.request_ptr.resize(nodes, nullptr);
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
  // Epilogues: inputs from `first_acc` on are reduction accumulators holding outputs
  // [acc_base, ...).
  int first_acc = std::numeric_limits<int>::max();
  int64_t acc_base = 0;
};

// A request for other values than the chunk's, with a new serial.
Request NewRequest(Context& c, const int64_t* list, int64_t start, int64_t n) {
  return Request{list, start, n, ++c.scratch.last_serial};
}

// The node's values for request `r`. Identity requests (the chunk itself) are computed once per
// chunk into the node's memo slot (the root's go straight to the kernel output); other requests
// are written to `dst`, an edge slot of the caller, and remembered by serial, so a node that
// several nodes of one request use (a DAG such as threefry's rounds under a slice or broadcast)
// is computed once per request, not once per path. A node's values for a serial are in a slot
// only its evaluations for this node write, so they stay valid while the serial is in use.
// Returns where the values are (possibly an input buffer or an operand's result).
const void* Eval(Context& c, int id, const Request& r, void* dst) {
  const Node& node = c.nodes[id];
  const bool identity = r.list == nullptr && r.start == c.start && r.n == c.n;
  if (identity) {
    if (c.scratch.memo_gen[id] == c.scratch.gen) return c.scratch.memo_ptr[id];
    dst = id == c.root && c.root_dst != nullptr ? c.root_dst : c.scratch.slot(node.memo_slot);
  } else if (r.serial != 0 && c.scratch.request_serial[id] == r.serial) {
    return c.scratch.request_ptr[id];
  }
  const int bytes = TypeBytes(node.type);
  const void* result = nullptr;
  switch (node.kind) {
    case NodeKind::kInput: {
      const auto* base = static_cast<const uint8_t*>(c.inputs[node.input]);
      const int64_t shift = node.input >= c.first_acc ? c.acc_base : 0;
      if (r.list == nullptr) {
        result = base + (r.start - shift) * bytes;
      } else if (shift == 0) {
        GatherBytes(base, bytes, r.list, r.n, dst);
        result = dst;
      } else {
        auto* o = static_cast<uint8_t*>(dst);
        for (int64_t i = 0; i < r.n; ++i) {
          std::memcpy(o + i * bytes, base + (r.list[i] - shift) * bytes, static_cast<size_t>(bytes));
        }
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
        const void* v = Eval(c, node.operands[0], NewRequest(c, nullptr, 0, 1),
                             c.scratch.slot(node.edge_slot));
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
                       const void* v = Eval(c, node.operands[0], NewRequest(c, nullptr, cur, 1), edge);
                       FillBytes(v, bytes, run, dst_run);
                     } else {
                       const void* v = Eval(c, node.operands[0], NewRequest(c, nullptr, cur, run), dst_run);
                       if (v != dst_run) std::memmove(dst_run, v, static_cast<size_t>(run * bytes));
                     }
                   });
        result = out;
      } else {
        auto* indices = static_cast<int64_t*>(c.scratch.slot(node.index_slot));
        MapIndices(r, node.dims, node.src_stride, node.src_offset, indices);
        result = Eval(c, node.operands[0], NewRequest(c, indices, 0, r.n), out);
      }
      break;
    }
    case NodeKind::kElementwise: {
      const void* args[3] = {nullptr, nullptr, nullptr};
      for (size_t i = 0; i < node.operands.size(); ++i) {
        void* edge = c.scratch.slot(node.edge_slot + static_cast<int>(i));
        if (node.scalar[i]) {
          const void* v = Eval(c, node.operands[i], NewRequest(c, nullptr, 0, 1), edge);
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
  } else if (r.serial != 0) {
    c.scratch.request_serial[id] = r.serial;
    c.scratch.request_ptr[id] = result;
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
  int64_t base = 0;  // the accumulator holds outputs [base, ...)
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
    T a = acc[t - target.base];
    if (j - i >= 32) {
      a = Fold<T, kOp, kFirst>(a, FoldPartial<T, kOp>(v + i, j - i));
    } else {
      for (int64_t k = i; k < j; ++k) a = Fold<T, kOp, kFirst>(a, v[k]);
    }
    acc[t - target.base] = a;
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
  if (kernel.kind != passes::KernelKind::kLoop && kernel.kind != passes::KernelKind::kReduce) {
    return absl::UnimplementedError("not a loop or reduction kernel");
  }
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
  k->num_inputs_ = static_cast<int>(kernel.inputs.size());
  // Reductions: their results are accumulator inputs of the epilogue (inputs after the kernel's).
  std::vector<const ir::Instruction*> reduces;
  for (const ir::Instruction* inst : kernel.instructions) {
    if (inst->opcode() != Opcode::kReduce) continue;
    if (kernel.kind != passes::KernelKind::kReduce || !ReduceFusible(*inst)) return unsupported(*inst);
    Node node;
    node.kind = NodeKind::kInput;
    node.type = inst->result()->type().element_type();
    node.dims = inst->result()->type().dims();
    node.input = k->num_inputs_ + static_cast<int>(reduces.size());
    node_of[inst->result()] = static_cast<int>(k->nodes_.size());
    k->nodes_.push_back(std::move(node));
    reduces.push_back(inst);
  }
  if (kernel.kind == passes::KernelKind::kReduce && reduces.empty()) {
    return absl::UnimplementedError("a reduction kernel without a reduce");
  }
  // epilogue[node]: computed from an accumulator (over the reduces' output space).
  std::vector<char> epilogue(k->nodes_.size(), 0);
  for (size_t r = 0; r < reduces.size(); ++r) epilogue[k->num_inputs_ + r] = 1;
  for (const ir::Instruction* inst : kernel.instructions) {
    if (inst->opcode() == Opcode::kReduce) continue;
    if (!LoopFusible(*inst)) return unsupported(*inst);
    Node node;
    node.op = inst->opcode();
    node.type = inst->result()->type().element_type();
    node.dims = inst->result()->type().dims();
    bool from_acc = false;
    for (const ir::Value* v : inst->operands()) {
      auto it = node_of.find(v);
      if (it == node_of.end()) return unsupported(*inst);
      node.operands.push_back(it->second);
      node.scalar.push_back(v->type().dims().empty() && !node.dims.empty());
      from_acc = from_acc || epilogue[it->second];
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
        const std::vector<int64_t>& bd = *passes::IntsAttribute(*inst, "broadcast_dimensions");
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
        const std::vector<int64_t>& perm = *passes::IntsAttribute(*inst, "permutation");
        for (int64_t p : perm) node.src_stride.push_back(os[p]);
        break;
      }
      case Opcode::kSlice: {
        node.kind = NodeKind::kMap;
        const std::vector<int64_t> os = RowMajorStrides(inst->operand(0)->type().dims());
        const std::vector<int64_t>& start = *passes::IntsAttribute(*inst, "start_indices");
        const std::vector<int64_t>* strides = passes::IntsAttribute(*inst, "strides");
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
    if (node.kind == NodeKind::kMap &&
        inst->operand(0)->type().shape().element_count() ==
            inst->result()->type().shape().element_count()) {
      // A map that reads each operand element at its own linear index (size-1 dims added or
      // moved): a reshape.
      const std::vector<int64_t> own = RowMajorStrides(out_dims);
      bool identity = node.src_offset == 0;
      for (size_t d = 0; d < out_dims.size() && identity; ++d) {
        identity = out_dims[d] == 1 || node.src_stride[d] == own[d];
      }
      if (identity) node.kind = NodeKind::kReshape;
    }
    if (from_acc) {
      // An epilogue runs on a range of outputs: it may read accumulators only at the same index.
      if (node.kind == NodeKind::kMap) return unsupported(*inst);
      for (size_t i = 0; i < node.operands.size(); ++i) {
        if (epilogue[node.operands[i]] && node.scalar[i]) return unsupported(*inst);
      }
    }
    node_of[inst->result()] = static_cast<int>(k->nodes_.size());
    k->nodes_.push_back(std::move(node));
    epilogue.push_back(from_acc ? 1 : 0);
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
  if (kernel.outputs.empty()) return absl::UnimplementedError("a kernel without outputs");
  if (!reduces.empty()) {
    const ir::Instruction* first = reduces.front();
    const std::vector<int64_t>* dims = passes::IntsAttribute(*first, "dimensions");
    if (dims == nullptr) return unsupported(*first);
    for (const ir::Instruction* reduce : reduces) {
      const std::vector<int64_t>* rd = passes::IntsAttribute(*reduce, "dimensions");
      if (rd == nullptr || *rd != *dims ||
          reduce->operand(0)->type().dims() != first->operand(0)->type().dims() ||
          reduce->result()->type().dims() != first->result()->type().dims()) {
        return unsupported(*reduce);
      }
      auto in = node_of.find(reduce->operand(0));
      auto init = node_of.find(reduce->operand(1));
      if (in == node_of.end() || init == node_of.end() || epilogue[in->second] ||
          k->nodes_[init->second].kind != NodeKind::kInput ||
          k->nodes_[init->second].input >= k->num_inputs_) {
        return unsupported(*reduce);
      }
      std::optional<eval::SimpleBinaryRegion> body =
          eval::MatchSimpleBinaryRegion(*reduce->regions()[0], reduce->result()->type().element_type());
      if (!body.has_value()) return unsupported(*reduce);
      Reduction red;
      red.input_node = in->second;
      red.init_input = k->nodes_[init->second].input;
      red.op = static_cast<int>(body->opcode);
      red.accumulator_first = body->accumulator_first;
      red.type = reduce->result()->type().element_type();
      k->reductions_.push_back(red);
    }
    k->input_dims_ = first->operand(0)->type().dims();
    if (k->input_dims_.size() > 16) return unsupported(*first);
    k->body_elements_ = first->operand(0)->type().shape().element_count();
    k->output_elements_ = first->result()->type().shape().element_count();
    std::vector<bool> reduced(k->input_dims_.size(), false);
    for (int64_t d : *dims) {
      if (d < 0 || d >= static_cast<int64_t>(reduced.size())) return unsupported(*first);
      reduced[d] = true;
    }
    const std::vector<int64_t> out_strides = RowMajorStrides(first->result()->type().dims());
    size_t kept = 0;
    bool trailing = true;  // reduced dims form a suffix
    for (size_t d = 0; d < reduced.size(); ++d) {
      if (reduced[d]) {
        k->out_index_stride_.push_back(0);
      } else {
        if (kept >= out_strides.size()) return unsupported(*first);
        k->out_index_stride_.push_back(out_strides[kept++]);
        if (d > 0 && reduced[d - 1]) trailing = false;
      }
    }
    if (trailing && k->output_elements_ > 0) k->row_ = k->body_elements_ / k->output_elements_;
  } else {
    k->body_elements_ = kernel.outputs.front()->type().is_tensor()
                            ? kernel.outputs.front()->type().shape().element_count()
                            : -1;
  }
  // Where each output comes from: a reduction's accumulator, the epilogue or the body.
  for (size_t o = 0; o < kernel.outputs.size(); ++o) {
    const ir::Value* v = kernel.outputs[o];
    auto it = node_of.find(v);
    if (it == node_of.end() || !v->type().is_tensor()) {
      return absl::UnimplementedError("a kernel output the fast kernels do not compute");
    }
    const int64_t count = v->type().shape().element_count();
    const int node = it->second;
    if (node >= k->num_inputs_ && node < k->num_inputs_ + static_cast<int>(reduces.size())) {
      k->reductions_[node - k->num_inputs_].output = static_cast<int>(o);
    } else if (epilogue[node]) {
      if (count != k->output_elements_) return unsupported(*v->producer());
      k->epilogue_stores_.push_back({node, static_cast<int>(o)});
    } else {
      if (count != k->body_elements_ || k->nodes_[node].kind == NodeKind::kInput) {
        return unsupported(*v->producer());
      }
      k->body_stores_.push_back({node, static_cast<int>(o)});
    }
  }
  return k;
}

namespace {

// Each store's values for the context's chunk, written to its output.
void StoreChunk(Context& c, const std::vector<FusedKernel::Store>& stores,
                absl::Span<void* const> outs) {
  for (const FusedKernel::Store& store : stores) {
    const int bytes = TypeBytes(c.nodes[store.node].type);
    void* dst = static_cast<uint8_t*>(outs[store.output]) + c.start * bytes;
    c.root = store.node;
    c.root_dst = dst;
    const void* got = Eval(c, store.node, Request{nullptr, c.start, c.n}, nullptr);
    if (got != dst) std::memmove(dst, got, static_cast<size_t>(c.n * bytes));
  }
}

}  // namespace

void FusedKernel::LoopRange(absl::Span<const void* const> inputs, absl::Span<void* const> outs,
                            int64_t begin, int64_t end) const {
  Scratch& scratch = ThreadScratch(slots_, nodes_.size());
  for (int64_t start = begin; start < end; start += kChunk) {
    const int64_t n = std::min(kChunk, end - start);
    ++scratch.gen;
    Context c{nodes_, inputs, scratch, start, n};
    StoreChunk(c, body_stores_, outs);
  }
}

void FusedKernel::FoldRange(absl::Span<const void* const> inputs, absl::Span<void* const> outs,
                            int64_t begin, int64_t end, absl::Span<void* const> accs,
                            int64_t acc_base) const {
  Scratch& scratch = ThreadScratch(slots_, nodes_.size());
  for (int64_t start = begin; start < end; start += kChunk) {
    const int64_t n = std::min(kChunk, end - start);
    ++scratch.gen;
    Context c{nodes_, inputs, scratch, start, n};
    StoreChunk(c, body_stores_, outs);
    // Trailing-dim reductions: targets are rows of row_ inputs. Otherwise a list (in a
    // dedicated buffer: the nodes' index slots may still hold data the values point into).
    Targets targets{nullptr, start, row_, acc_base};
    if (row_ <= 0) {
      thread_local std::vector<int64_t> list;
      if (list.size() < static_cast<size_t>(kChunk)) list.resize(kChunk);
      MapIndices(Request{nullptr, start, n}, input_dims_, out_index_stride_, 0, list.data());
      targets.list = list.data();
    }
    for (size_t r = 0; r < reductions_.size(); ++r) {
      const Reduction& red = reductions_[r];
      const Opcode op = static_cast<Opcode>(red.op);
      const void* values = Eval(c, red.input_node, Request{nullptr, start, n}, nullptr);
      switch (red.type) {
#define EMBER_CASE(E, T)                                                                        \
  case E:                                                                                       \
    FoldLoop<T>(op, red.accumulator_first, static_cast<const T*>(values), targets, n,           \
                static_cast<T*>(accs[r]));                                                      \
    break;
        EMBER_FAST_TYPES(EMBER_CASE)
#undef EMBER_CASE
        default: break;
      }
    }
  }
}

void FusedKernel::EpilogueRange(absl::Span<const void* const> inputs, absl::Span<void* const> outs,
                                absl::Span<void* const> accs, int64_t acc_base, int64_t begin,
                                int64_t end) const {
  if (epilogue_stores_.empty()) return;
  thread_local std::vector<const void*> all;
  all.assign(inputs.begin(), inputs.end());
  all.insert(all.end(), accs.begin(), accs.end());
  Scratch& scratch = ThreadScratch(slots_, nodes_.size());
  for (int64_t start = begin; start < end; start += kChunk) {
    const int64_t n = std::min(kChunk, end - start);
    ++scratch.gen;
    Context c{nodes_, all, scratch, start, n};
    c.first_acc = num_inputs_;
    c.acc_base = acc_base;
    StoreChunk(c, epilogue_stores_, outs);
  }
}

void FusedKernel::FillInit(absl::Span<const void* const> inputs, absl::Span<void* const> accs,
                           int64_t n) const {
  for (size_t r = 0; r < reductions_.size(); ++r) {
    FillBytes(inputs[reductions_[r].init_input], TypeBytes(reductions_[r].type), n, accs[r]);
  }
}

void FusedKernel::RunRows(absl::Span<const void* const> inputs, absl::Span<void* const> outs,
                          int64_t rows, int64_t begin, int64_t end) const {
  if (reductions_.empty()) {
    const int64_t per = body_elements_ / rows;
    LoopRange(inputs, outs, begin * per, end * per);
    return;
  }
  if (row_ <= 0) return;
  // The accumulators of these rows' outputs live in per-thread memory, then go to the outputs.
  const int64_t per = output_elements_ / rows;
  const int64_t first = begin * per;
  const int64_t count = (end - begin) * per;
  thread_local std::vector<uint64_t> words;
  const size_t need = reductions_.size() * static_cast<size_t>(count);
  if (words.size() < need) words.resize(need);
  std::vector<void*> accs(reductions_.size());
  for (size_t r = 0; r < reductions_.size(); ++r) {
    accs[r] = words.data() + static_cast<int64_t>(r) * count;
  }
  FillInit(inputs, accs, count);
  FoldRange(inputs, outs, first * row_, (first + count) * row_, accs, first);
  EpilogueRange(inputs, outs, accs, first, first, first + count);
  for (size_t r = 0; r < reductions_.size(); ++r) {
    if (reductions_[r].output < 0) continue;
    const int bytes = TypeBytes(reductions_[r].type);
    std::memcpy(static_cast<uint8_t*>(outs[reductions_[r].output]) + first * bytes, accs[r],
                static_cast<size_t>(count * bytes));
  }
}

void FusedKernel::Run(absl::Span<const void* const> inputs, absl::Span<void* const> outs,
                      ThreadPool& pool) const {
  if (reductions_.empty()) {
    const int64_t total = body_elements_;
    const int64_t chunks = (total + kChunk - 1) / kChunk;
    pool.ParallelFor(chunks, std::max<int64_t>(1, 65536 / kChunk), [&](int64_t begin, int64_t end) {
      LoopRange(inputs, outs, begin * kChunk, std::min(total, end * kChunk));
    });
    return;
  }
  // Reductions: initialize, then fold the fused input, then the epilogue. Trailing-dim reductions
  // with enough rows split whole rows across threads (each range runs its epilogue); other big
  // reductions (to a scalar, over leading dims) split the input across threads, each part folding
  // into its own partial results (starting from the op's identity), which are then folded into
  // the accumulators in part order. A reduce result that is no output accumulates in scratch.
  const size_t nred = reductions_.size();
  std::vector<void*> accs(nred);
  std::vector<std::vector<uint64_t>> scratch(nred);
  for (size_t r = 0; r < nred; ++r) {
    if (reductions_[r].output >= 0) {
      accs[r] = outs[reductions_[r].output];
    } else {
      scratch[r].resize(static_cast<size_t>(std::max<int64_t>(1, output_elements_)));
      accs[r] = scratch[r].data();
    }
  }
  FillInit(inputs, accs, output_elements_);
  const int threads = pool.size();
  if (body_elements_ == 0) {
    EpilogueRange(inputs, outs, accs, 0, 0, output_elements_);
    return;
  }
  // A reduction that also writes body outputs does a loop kernel's work per element: split it
  // across threads at a loop kernel's grain.
  const int64_t grain = body_stores_.empty() ? 65536 : 8192;
  if (row_ > 0 && output_elements_ >= threads && body_elements_ >= grain) {
    pool.ParallelFor(output_elements_, std::max<int64_t>(1, 32768 / row_),
                     [&](int64_t begin, int64_t end) {
                       FoldRange(inputs, outs, begin * row_, end * row_, accs, 0);
                       EpilogueRange(inputs, outs, accs, 0, begin, end);
                     });
    return;
  }
  const int64_t parts = std::min<int64_t>(threads, body_elements_ / grain);
  if (parts <= 1 || output_elements_ * parts * 4 > body_elements_) {
    FoldRange(inputs, outs, 0, body_elements_, accs, 0);
    EpilogueRange(inputs, outs, accs, 0, 0, output_elements_);
    return;
  }
  // Part p covers chunks [p * per, (p + 1) * per) of the input (chunk-aligned).
  const int64_t chunks = (body_elements_ + kChunk - 1) / kChunk;
  const int64_t per = (chunks + parts - 1) / parts;
  const int64_t stride = static_cast<int64_t>(nred) * output_elements_;
  std::vector<uint64_t> partials(static_cast<size_t>(parts * stride));
  auto partial = [&](int64_t p, size_t r) {
    return static_cast<void*>(partials.data() + p * stride + static_cast<int64_t>(r) * output_elements_);
  };
  pool.ParallelFor(parts, 1, [&](int64_t p0, int64_t p1) {
    std::vector<void*> part_accs(nred);
    for (int64_t p = p0; p < p1; ++p) {
      for (size_t r = 0; r < nred; ++r) {
        const Opcode op = static_cast<Opcode>(reductions_[r].op);
        const bool pred = reductions_[r].type == ElementType::kPred;
        part_accs[r] = partial(p, r);
        switch (reductions_[r].type) {
#define EMBER_CASE(E, T)                                                                      \
  case E:                                                                                     \
    std::fill_n(static_cast<T*>(part_accs[r]), output_elements_, FoldIdentity<T>(op, pred));  \
    break;
          EMBER_FAST_TYPES(EMBER_CASE)
#undef EMBER_CASE
          default: break;
        }
      }
      const int64_t begin = std::min(body_elements_, p * per * kChunk);
      const int64_t end = std::min(body_elements_, (p + 1) * per * kChunk);
      if (begin < end) FoldRange(inputs, outs, begin, end, part_accs, 0);
    }
  });
  for (int64_t p = 0; p < parts; ++p) {
    for (size_t r = 0; r < nred; ++r) {
      const Reduction& red = reductions_[r];
      const Opcode op = static_cast<Opcode>(red.op);
      const void* part = partial(p, r);
      switch (red.type) {
#define EMBER_CASE(E, T)                                                                        \
  case E:                                                                                       \
    CombineParts<T>(op, red.accumulator_first, static_cast<const T*>(part), output_elements_,   \
                    static_cast<T*>(accs[r]));                                                  \
    break;
        EMBER_FAST_TYPES(EMBER_CASE)
#undef EMBER_CASE
        default: break;
      }
    }
  }
  EpilogueRange(inputs, outs, accs, 0, 0, output_elements_);
}

}  // namespace ember::host::fast
