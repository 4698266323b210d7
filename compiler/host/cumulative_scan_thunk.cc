#include "compiler/host/cumulative_scan_thunk.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/evaluator/eval_elementwise.h"
#include "compiler/evaluator/eval_family_support.h"
#include "compiler/evaluator/eval_util.h"
#include "compiler/evaluator/tree_scan.h"
#include "compiler/host/scratch_memory.h"
#include "compiler/ir/native_types.h"

namespace ember::host {
namespace {

namespace fs = eval::family_support;
using ir::Opcode;

// XLA's block length, the evaluator's (tree_scan.h).
constexpr int64_t kBlock = eval::kTreeScanBlock;
// Lines advanced together: rows of a last-axis scan, or neighbouring columns otherwise.
constexpr int64_t kRowLanes = 8;
constexpr int64_t kColumnLanes = 64;
constexpr int64_t kMaxLanes = std::max(kRowLanes, kColumnLanes);

// The body's op on one element type, computed as the evaluator's ApplyBinary computes it
// (eval_binary.cc): integers wrap, narrow floats go through double and round once, max/min are
// the evaluator's own. f32 and f64 add and multiply natively: IEEE rounding of the double result
// back to the type gives the same bits (double has more than twice their precision).
template <Opcode kOp, typename T>
struct BodyOp {
  static T Apply(T a, T b) {
    if constexpr (kOp == Opcode::kMaximum) {
      return eval::MaxElement(a, b);
    } else if constexpr (kOp == Opcode::kMinimum) {
      return eval::MinElement(a, b);
    } else if constexpr (eval::kIsInt<T>) {
      const uint64_t x = eval::IntToU64(a), y = eval::IntToU64(b);
      if constexpr (kOp == Opcode::kAdd) {
        return eval::IntFromU64<T>(x + y);
      } else if constexpr (kOp == Opcode::kMultiply) {
        return eval::IntFromU64<T>(x * y);
      } else if constexpr (kOp == Opcode::kAnd) {
        return eval::IntFromU64<T>(x & y);
      } else if constexpr (kOp == Opcode::kOr) {
        return eval::IntFromU64<T>(x | y);
      } else {
        static_assert(kOp == Opcode::kXor);
        return eval::IntFromU64<T>(x ^ y);
      }
    } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      if constexpr (kOp == Opcode::kAdd) {
        return a + b;
      } else {
        static_assert(kOp == Opcode::kMultiply);
        return a * b;
      }
    } else {
      const double x = eval::FloatToDouble(a), y = eval::FloatToDouble(b);
      if constexpr (kOp == Opcode::kAdd) {
        return eval::FloatFromDouble<T>(x + y);
      } else {
        static_assert(kOp == Opcode::kMultiply);
        return eval::FloatFromDouble<T>(x * y);
      }
    }
  }
};

// The working elements a scan of n positions and w lanes needs: each level a block's
// accumulators (one row of w per suffix) and its blocks' totals, then the totals' own scan.
int64_t ScratchElements(int64_t n, int64_t w) {
  if (n <= kBlock) return kBlock * w;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  return kBlock * w + blocks * w + ScratchElements(blocks, w);
}

// One scan level over typed lines (see LinesScanner).
template <Opcode kOp, typename T, bool kAccumulatorFirst>
class Lines {
 public:
  Lines(T init, bool reverse) : init_(init), reverse_(reverse) {}

  T Combine(T acc, T x) const {
    if constexpr (kAccumulatorFirst) {
      return BodyOp<kOp, T>::Apply(acc, x);
    } else {
      return BodyOp<kOp, T>::Apply(x, acc);
    }
  }

  // tree_scan.h's TreeScan, without allocations: `in` may equal `out`.
  void Scan(const T* in, T* out, int64_t n, int64_t stride, int64_t w, int64_t lane_stride,
            T* scratch) const {
    T* acc = scratch;
    if (n <= kBlock) {
      Block(in, out, 0, n, 0, stride, w, lane_stride, acc, nullptr);
      return;
    }
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    T* totals = scratch + kBlock * w;
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t real = std::min(kBlock, n - b * kBlock);
      // The sequence is padded with the init value to whole blocks.
      Block(in, out, b * kBlock, real, kBlock - real, stride, w, lane_stride, acc, totals + b * w);
    }
    Scan(totals, totals, blocks, w, w, 1, totals + blocks * w);
    for (int64_t b = 0; b < blocks; ++b) {
      // Combined with the inclusive total of the blocks before (after, for suffixes).
      const int64_t from = reverse_ ? b + 1 : b - 1;
      const T* total = from < 0 || from >= blocks ? nullptr : totals + from * w;
      const int64_t end = std::min(n, (b + 1) * kBlock);
      for (int64_t i = b * kBlock; i < end; ++i) {
        T* o = out + i * stride;
        for (int64_t l = 0; l < w; ++l) {
          o[l * lane_stride] = Combine(o[l * lane_stride], total != nullptr ? total[l] : init_);
        }
      }
    }
  }

 private:
  // Positions [lo, lo + real) followed by `pads` init values, scanned from the init value;
  // `totals` (when set) receives the block's fold: its last prefix or its first suffix.
  void Block(const T* in, T* out, int64_t lo, int64_t real, int64_t pads, int64_t stride, int64_t w,
             int64_t lane_stride, T* acc, T* totals) const {
    const int64_t end = lo + real;
    if (!reverse_) {
      for (int64_t l = 0; l < w; ++l) acc[l] = init_;
      for (int64_t i = lo; i < end; ++i) {
        const T* x = in + i * stride;
        T* o = out + i * stride;
        for (int64_t l = 0; l < w; ++l) {
          acc[l] = Combine(acc[l], x[l * lane_stride]);
          o[l * lane_stride] = acc[l];
        }
      }
      if (totals == nullptr) return;
      for (int64_t p = 0; p < pads; ++p) {
        for (int64_t l = 0; l < w; ++l) acc[l] = Combine(acc[l], init_);
      }
      for (int64_t l = 0; l < w; ++l) totals[l] = acc[l];
      return;
    }
    // Suffixes: each folded forward from its own element to the block's end, as the evaluator's
    // ScanElements does (it does not fold suffixes from the end). All of the block's suffixes
    // advance together, element by element (suffix j of lane l in acc[j * w + l]), which keeps
    // every suffix's order and lets the combinations of one element run side by side.
    for (int64_t j = 0; j < real * w; ++j) acc[j] = init_;
    T x[kMaxLanes];
    for (int64_t k = lo; k < end; ++k) {
      const T* row = in + k * stride;
      for (int64_t l = 0; l < w; ++l) x[l] = row[l * lane_stride];
      // The suffixes that start at or before k take element k.
      for (int64_t j = 0; j <= k - lo; ++j) {
        for (int64_t l = 0; l < w; ++l) acc[j * w + l] = Combine(acc[j * w + l], x[l]);
      }
    }
    for (int64_t p = 0; p < pads; ++p) {
      for (int64_t j = 0; j < real * w; ++j) acc[j] = Combine(acc[j], init_);
    }
    for (int64_t j = 0; j < real; ++j) {
      T* o = out + (lo + j) * stride;
      for (int64_t l = 0; l < w; ++l) o[l * lane_stride] = acc[j * w + l];
    }
    if (totals == nullptr) return;
    for (int64_t l = 0; l < w; ++l) totals[l] = acc[l];
  }

  T init_;
  bool reverse_;
};

template <Opcode kOp, typename T>
void ScanLines(const uint8_t* in, uint8_t* out, int64_t n, int64_t stride, int64_t lanes,
               int64_t lane_stride, const uint8_t* init, bool accumulator_first, bool reverse,
               uint8_t* scratch) {
  T init_value;
  std::memcpy(&init_value, init, sizeof(T));
  // The body's operand order as a template argument: the inner loops stay branch-free.
  if (accumulator_first) {
    Lines<kOp, T, true>(init_value, reverse)
        .Scan(reinterpret_cast<const T*>(in), reinterpret_cast<T*>(out), n, stride, lanes,
              lane_stride, reinterpret_cast<T*>(scratch));
  } else {
    Lines<kOp, T, false>(init_value, reverse)
        .Scan(reinterpret_cast<const T*>(in), reinterpret_cast<T*>(out), n, stride, lanes,
              lane_stride, reinterpret_cast<T*>(scratch));
  }
}

template <typename T>
constexpr bool kScannedType = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                              std::is_same_v<T, ir::BF16> || std::is_same_v<T, ir::F16> ||
                              (std::is_integral_v<T> && !std::is_same_v<T, bool>);

CumulativeScanThunk::LinesScanner ScannerFor(ir::ElementType type, Opcode op) {
  return ir::VisitElementType(type, [op](auto tag) -> CumulativeScanThunk::LinesScanner {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_void_v<T>) {
      return nullptr;
    } else if constexpr (!kScannedType<T>) {
      return nullptr;
    } else {
      switch (op) {
        case Opcode::kAdd:
          return ScanLines<Opcode::kAdd, T>;
        case Opcode::kMultiply:
          return ScanLines<Opcode::kMultiply, T>;
        case Opcode::kMaximum:
          return ScanLines<Opcode::kMaximum, T>;
        case Opcode::kMinimum:
          return ScanLines<Opcode::kMinimum, T>;
        default:
          break;
      }
      if constexpr (eval::kIsInt<T>) {
        switch (op) {
          case Opcode::kAnd:
            return ScanLines<Opcode::kAnd, T>;
          case Opcode::kOr:
            return ScanLines<Opcode::kOr, T>;
          case Opcode::kXor:
            return ScanLines<Opcode::kXor, T>;
          default:
            break;
        }
      }
      return nullptr;
    }
  });
}

// What Create needs, or why the evaluator keeps the op.
struct Plan {
  CumulativeScanThunk::LinesScanner scan = nullptr;
  uint64_t init = 0;
  int element_bytes = 0;
  bool accumulator_first = true;
  bool reverse = false;
  int64_t outer = 1, n = 0, inner = 1;
};

// How the body is folded: natively (one op), or by the compiled combiner (`combiner` null while
// planning, before it is compiled).
enum class BodyKind { kNative, kCombiner };

absl::StatusOr<Plan> Analyze(const ir::Instruction& inst, BodyKind kind,
                             codegen::HostLoopFn combiner = nullptr) {
  auto refuse = [](auto&&... why) { return absl::UnimplementedError(absl::StrCat(why...)); };
  if (inst.opcode() != Opcode::kReduceWindow || inst.operands().size() != 2 ||
      inst.num_results() != 1 || inst.regions().size() != 1) {
    return refuse("not a reduce_window of one operand");
  }
  const ir::ValueType& in = inst.operand(0)->type();
  const ir::ValueType& init = inst.operand(1)->type();
  const ir::ValueType& out = inst.result()->type();
  if (!in.is_tensor() || !init.is_tensor() || !out.is_tensor() || !init.dims().empty() ||
      in.element_type() != out.element_type() || init.element_type() != out.element_type() ||
      in.dims() != out.dims()) {
    return refuse("not a scan of one array with a scalar init of its type");
  }
  const ir::ElementType type = in.element_type();
  absl::StatusOr<fs::WindowParams> p =
      fs::ReadWindowParams(inst, static_cast<int64_t>(in.dims().size()));
  if (!p.ok()) return refuse("unreadable window attributes");
  const size_t rank = in.dims().size();
  if (p->window_dimensions.size() != rank || p->window_strides.size() != rank ||
      p->base_dilations.size() != rank || p->window_dilations.size() != rank ||
      p->padding.size() != 2 * rank) {
    return refuse("window attributes that do not match the operand's rank");
  }
  const std::optional<fs::CumulativeAxis> axis = fs::FindCumulativeAxis(in.dims(), *p);
  if (!axis.has_value()) return refuse("not a cumulative window");
  const std::optional<eval::SimpleBinaryRegion> body =
      eval::MatchSimpleBinaryRegion(*inst.regions()[0], type);
  Plan plan;
  if (kind == BodyKind::kNative) {
    if (!body.has_value()) return refuse("its body is not one elementwise fold");
    plan.scan = ScannerFor(type, body->opcode);
    if (plan.scan == nullptr) {
      return refuse("no native scan of ", std::string(ir::OpcodeName(body->opcode)), " over ",
                    in.ToString());
    }
  } else if (body.has_value()) {
    return refuse("its body is one elementwise fold (the native scan's, or the evaluator's)");
  }
  const ir::Instruction* producer = inst.operand(1)->producer();
  const ir::Attribute* value = producer != nullptr && producer->opcode() == Opcode::kConstant
                                   ? producer->attribute("value")
                                   : nullptr;
  if (value == nullptr || value->kind != ir::Attribute::Kind::kLiteral ||
      value->literal == nullptr || !(value->literal->shape() == init.shape())) {
    return refuse("its init value is not a constant");
  }
  plan.element_bytes = ir::StorageBytes(type);
  if (plan.element_bytes > 8 || value->literal->size_bytes() != plan.element_bytes) {
    return refuse("an init value of unexpected size");
  }
  std::memcpy(&plan.init, value->literal->bytes().data(), plan.element_bytes);
  plan.reverse = axis->reverse;
  // The evaluator scans only when combining the init value with itself gives it back.
  uint64_t twice = 0;
  if (kind == BodyKind::kNative) {
    plan.accumulator_first = body->accumulator_first;
    uint64_t scratch[kBlock] = {};  // ScratchElements(1, 1) elements
    plan.scan(reinterpret_cast<const uint8_t*>(&plan.init), reinterpret_cast<uint8_t*>(&twice), 1,
              1, 1, 1, reinterpret_cast<const uint8_t*>(&plan.init), plan.accumulator_first,
              plan.reverse, reinterpret_cast<uint8_t*>(scratch));
  } else if (combiner != nullptr) {
    const void* values[2] = {&plan.init, &plan.init};
    void* result[1] = {&twice};
    combiner(values, result, 0, 0);
  } else {
    twice = plan.init;  // (asked again once compiled)
  }
  if (std::memcmp(&twice, &plan.init, plan.element_bytes) != 0) {
    return refuse("its init value is not idempotent (the evaluator folds window by window)");
  }
  for (size_t d = 0; d < rank; ++d) {
    if (d < axis->axis) plan.outer *= in.dims()[d];
    if (d > axis->axis) plan.inner *= in.dims()[d];
  }
  plan.n = in.dims()[axis->axis];
  return plan;
}

// Lines [begin, end) of the operand as [outer, n, inner] (line l: o = l / inner, column
// l % inner), each scanned by TreeScan with `combiner`, in the order the evaluator runs an
// interpreted body (suffixes folded from each block's end). V: the element's storage.
template <typename V>
void CombinerScanLines(const uint8_t* in, uint8_t* out, int64_t begin, int64_t end, int64_t n,
                       int64_t inner, const uint64_t& init_bits, bool reverse,
                       codegen::HostLoopFn combiner) {
  V init;
  std::memcpy(&init, &init_bits, sizeof(V));
  auto combine = [combiner](const V& a, const V& b, V& r) {
    const void* values[2] = {&a, &b};
    V c;
    void* result[1] = {&c};
    combiner(values, result, 0, 0);
    r = c;
    return absl::OkStatus();
  };
  const eval::TreeScanOrder order{.reverse = reverse, .suffix_from_end = true};
  std::vector<V> line(static_cast<size_t>(n)), scanned;
  for (int64_t l = begin; l < end; ++l) {
    const int64_t first = (l / inner) * n * inner + l % inner;
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(&line[i], in + (first + i * inner) * sizeof(V), sizeof(V));
    }
    // (The combiner cannot fail, so neither can the scan.)
    eval::TreeScan(line, init, order, combine, scanned).IgnoreError();
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(out + (first + i * inner) * sizeof(V), &scanned[i], sizeof(V));
    }
  }
}

}  // namespace

std::string CumulativeScanThunk::Refusal(const ir::Instruction& instruction) {
  return std::string(Analyze(instruction, BodyKind::kNative).status().message());
}

std::string CumulativeScanThunk::CombinerRefusal(const ir::Instruction& instruction) {
  return std::string(Analyze(instruction, BodyKind::kCombiner).status().message());
}

std::unique_ptr<CumulativeScanThunk> CumulativeScanThunk::Create(
    std::string name, const ir::Instruction& instruction, ValueRef operand, ValueRef result,
    codegen::HostLoopKernel combiner) {
  absl::StatusOr<Plan> plan = Analyze(instruction, BodyKind::kNative);
  if (!plan.ok() && combiner.fn != nullptr) {
    plan = Analyze(instruction, BodyKind::kCombiner, combiner.fn);
  }
  if (!plan.ok()) return nullptr;
  std::unique_ptr<CumulativeScanThunk> thunk(
      new CumulativeScanThunk(std::move(name), operand, result));
  thunk->scan_ = plan->scan;
  if (thunk->scan_ == nullptr) thunk->combiner_ = std::move(combiner);
  thunk->init_ = plan->init;
  thunk->element_bytes_ = plan->element_bytes;
  thunk->accumulator_first_ = plan->accumulator_first;
  thunk->reverse_ = plan->reverse;
  thunk->outer_ = plan->outer;
  thunk->n_ = plan->n;
  thunk->inner_ = plan->inner;
  return thunk;
}

absl::Status CumulativeScanThunk::RunCombiner(HostRunContext& context) const {
  const uint8_t* in = context.Address(operand_);
  uint8_t* out = context.Address(result_);
  auto lines = [&](auto tag) {
    using V = decltype(tag);
    // Lines of about 64 Ki elements per part.
    context.pool().ParallelFor(outer_ * inner_, std::max<int64_t>(1, 65536 / n_),
                               [&](int64_t begin, int64_t end) {
                                 CombinerScanLines<V>(in, out, begin, end, n_, inner_, init_,
                                                      reverse_, combiner_.fn);
                               });
  };
  switch (element_bytes_) {
    case 1: lines(uint8_t{}); break;
    case 2: lines(uint16_t{}); break;
    case 4: lines(uint32_t{}); break;
    case 8: lines(uint64_t{}); break;
    default:
      return absl::InternalError(absl::StrCat(name(), ": elements of ", element_bytes_, " bytes"));
  }
  return absl::OkStatus();
}

absl::Status CumulativeScanThunk::Run(HostRunContext& context) const {
  if (outer_ == 0 || n_ == 0 || inner_ == 0) return absl::OkStatus();
  if (scan_ == nullptr) return RunCombiner(context);
  const uint8_t* in = context.Address(operand_);
  uint8_t* out = context.Address(result_);
  // A unit is a group of lines that advance together: up to kRowLanes rows of a last-axis scan
  // (lines n elements apart), or up to kColumnLanes neighbouring columns (lines 1 apart).
  const bool rows = inner_ == 1;
  const int64_t lanes = rows ? std::min(kRowLanes, outer_) : std::min(kColumnLanes, inner_);
  const int64_t groups_per_outer = rows ? 1 : (inner_ + lanes - 1) / lanes;
  const int64_t units = rows ? (outer_ + lanes - 1) / lanes : outer_ * groups_per_outer;
  // Parts of about 64 Ki elements, at most a few per thread, each with its own working array on
  // the launch's memory account.
  const int64_t per_part = std::max<int64_t>(1, 65536 / (n_ * lanes));
  const int64_t parts = std::min<int64_t>((units + per_part - 1) / per_part,
                                          4 * std::max<int64_t>(1, context.pool().size()));
  const int64_t part_bytes = (ScratchElements(n_, lanes) * element_bytes_ + 63) / 64 * 64;
  ScratchMemory memory;
  EMBER_ASSIGN_OR_RETURN(void* arrays,
                         memory.Allocate(static_cast<uint64_t>(parts) * part_bytes, name()));
  const int64_t e = element_bytes_;
  auto scan_part = [&](int64_t part) {
    uint8_t* scratch = static_cast<uint8_t*>(arrays) + part * part_bytes;
    const int64_t first = units * part / parts, last = units * (part + 1) / parts;
    for (int64_t unit = first; unit < last; ++unit) {
      int64_t offset, count, stride, lane_stride;
      if (rows) {
        const int64_t row = unit * lanes;
        count = std::min(lanes, outer_ - row);
        offset = row * n_;
        stride = 1;
        lane_stride = n_;
      } else {
        const int64_t o = unit / groups_per_outer;
        const int64_t column = (unit % groups_per_outer) * lanes;
        count = std::min(lanes, inner_ - column);
        offset = o * n_ * inner_ + column;
        stride = inner_;
        lane_stride = 1;
      }
      scan_(in + offset * e, out + offset * e, n_, stride, count, lane_stride,
            reinterpret_cast<const uint8_t*>(&init_), accumulator_first_, reverse_, scratch);
    }
  };
  context.pool().ParallelFor(parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) scan_part(part);
  });
  return absl::OkStatus();
}

}  // namespace ember::host
