#include "compiler/host/linalg_thunk.h"

#include <algorithm>
#include <complex>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/host/op_attributes.h"
#include "compiler/host/scratch_memory.h"
#include "compiler/host/widen_to_f32.h"

namespace ember::host {
namespace {

using ir::ElementType;

constexpr char kLuTarget[] = "ember_lu";
constexpr char kQrTarget[] = "Qr";
constexpr char kHouseholderTarget[] = "ProductOfElementaryHouseholderReflectors";
constexpr char kEighTarget[] = "ember_eigh";
constexpr char kSvdTarget[] = "ember_svd";

// A boolean attribute (bool, or an integer as some producers write it); `fallback` when absent,
// nullopt when it is something else.
std::optional<bool> BoolAttr(const ir::Instruction& inst, const char* name,
                             std::optional<bool> fallback) {
  const ir::Attribute* a = inst.attribute(name);
  if (a == nullptr) return fallback;
  if (a->kind == ir::Attribute::Kind::kBool) return a->b;
  if (a->kind == ir::Attribute::Kind::kInt) return a->i != 0;
  return std::nullopt;
}

std::vector<int64_t> BatchDims(const std::vector<int64_t>& dims) {
  return std::vector<int64_t>(dims.begin(), dims.end() - 2);
}

// Where the shapes or attributes do not fit, "" otherwise (then `options` are read).
std::string CheckShapes(const ir::Instruction& inst, LinalgThunk::Options* options) {
  bool* lower = &options->lower;
  fast::TriangularForm* form = &options->form;
  const ir::ValueType& a = inst.operand(0)->type();
  const std::vector<int64_t>& ad = a.dims();
  if (ad.size() < 2) return absl::StrCat("an operand of rank ", ad.size(), " (rank >= 2 needed)");
  const int64_t rows = ad[ad.size() - 2], cols = ad.back();
  switch (inst.opcode()) {
    case ir::Opcode::kCholesky: {
      if (inst.operands().size() != 1 || inst.num_results() != 1) return "malformed cholesky";
      if (rows != cols) return "a matrix that is not square";
      if (inst.result(0)->type().dims() != ad) return "a result of another shape";
      std::optional<bool> l = BoolAttr(inst, "lower", false);
      if (!l.has_value()) return "a 'lower' that is not a boolean";
      *lower = *l;
      return "";
    }
    case ir::Opcode::kTriangularSolve: {
      if (inst.operands().size() != 2 || inst.num_results() != 1) {
        return "malformed triangular_solve";
      }
      const std::vector<int64_t>& bd = inst.operand(1)->type().dims();
      std::optional<bool> left = BoolAttr(inst, "left_side", std::nullopt);
      std::optional<bool> low = BoolAttr(inst, "lower", std::nullopt);
      std::optional<bool> unit = BoolAttr(inst, "unit_diagonal", false);
      if (!left.has_value() || !low.has_value() || !unit.has_value()) {
        return "missing or malformed left_side/lower/unit_diagonal";
      }
      const ir::Attribute* t = inst.attribute("transpose_a");
      const std::string transpose =
          t == nullptr ? "NO_TRANSPOSE"
                       : (t->kind == ir::Attribute::Kind::kString ? t->s : std::string("?"));
      if (transpose == "NO_TRANSPOSE") {
        form->transpose = fast::TriangularForm::Transpose::kNone;
      } else if (transpose == "TRANSPOSE") {
        form->transpose = fast::TriangularForm::Transpose::kTranspose;
      } else if (transpose == "ADJOINT") {
        form->transpose = fast::TriangularForm::Transpose::kAdjoint;
      } else {
        return "an unknown transpose_a";
      }
      form->left_side = *left;
      form->lower = *low;
      form->unit_diagonal = *unit;
      if (rows != cols || bd.size() != ad.size() || BatchDims(bd) != BatchDims(ad) ||
          (*left ? bd[bd.size() - 2] : bd.back()) != rows) {
        return "shapes that do not fit the solve";
      }
      if (inst.result(0)->type().dims() != bd) return "a result of another shape";
      return "";
    }
    default:
      break;
  }
  const std::string target = CustomCallTarget(inst);
  if (target == kQrTarget) {
    if (inst.operands().size() != 1 || inst.num_results() != 2) return "malformed Qr";
    std::vector<int64_t> taus = BatchDims(ad);
    taus.push_back(std::min(rows, cols));
    const ir::ValueType& t = inst.result(1)->type();
    if (inst.result(0)->type().dims() != ad || !IsRowMajor(t) || t.dims() != taus ||
        t.element_type() != a.element_type()) {
      return "results that are not (a, taus)";
    }
    return "";
  }
  if (target == kHouseholderTarget) {
    if (inst.operands().size() != 2 || inst.num_results() != 1) {
      return "malformed ProductOfElementaryHouseholderReflectors";
    }
    const std::vector<int64_t>& td = inst.operand(1)->type().dims();
    if (td.size() + 1 != ad.size() ||
        std::vector<int64_t>(td.begin(), td.end() - 1) != BatchDims(ad) ||
        td.back() > std::min(rows, cols)) {
      return "taus that do not fit the matrix";
    }
    if (inst.result(0)->type().dims() != ad) return "a result of another shape";
    return "";
  }
  if (target == kEighTarget || target == kSvdTarget) {
    // Eigenvalues and singular values are real: f32 for c64, f64 for c128.
    const ElementType real = a.element_type() == ElementType::kC64    ? ElementType::kF32
                             : a.element_type() == ElementType::kC128 ? ElementType::kF64
                                                                      : a.element_type();
    std::vector<int64_t> values = BatchDims(ad);
    values.push_back(std::min(rows, cols));
    if (target == kEighTarget) {
      std::optional<bool> l = BackendConfigFlag(inst, "lower", true);
      if (!l.has_value()) return "a 'lower' that is not a boolean";
      *lower = *l;
      if (rows != cols) return "a matrix that is not square";
      if (inst.operands().size() != 1 || inst.num_results() != 2 ||
          inst.result(0)->type().dims() != ad || !IsRowMajor(inst.result(1)->type()) ||
          inst.result(1)->type().dims() != values ||
          inst.result(1)->type().element_type() != real) {
        return "results that are not (v, w)";
      }
      return "";
    }
    std::optional<bool> full = BackendConfigFlag(inst, "full_matrices", false);
    std::optional<bool> uv = BackendConfigFlag(inst, "compute_uv", true);
    if (!full.has_value() || !uv.has_value()) return "full_matrices/compute_uv not booleans";
    options->full_matrices = *full;
    options->compute_uv = *uv;
    if (inst.operands().size() != 1 || inst.num_results() != (*uv ? 3u : 1u)) {
      return "malformed ember_svd";
    }
    std::vector<int64_t> u = BatchDims(ad), vt = BatchDims(ad);
    u.push_back(rows);
    u.push_back(*full ? rows : std::min(rows, cols));
    vt.push_back(*full ? cols : std::min(rows, cols));
    vt.push_back(cols);
    if (inst.result(0)->type().dims() != values || !IsRowMajor(inst.result(0)->type()) ||
        inst.result(0)->type().element_type() != real ||
        (*uv && (inst.result(1)->type().dims() != u || inst.result(2)->type().dims() != vt ||
                 !IsRowMajor(inst.result(1)->type()) || !IsRowMajor(inst.result(2)->type()) ||
                 inst.result(1)->type().element_type() != a.element_type() ||
                 inst.result(2)->type().element_type() != a.element_type()))) {
      return "results that are not (s, u, vt)";
    }
    return "";
  }
  // ember_lu
  if (inst.operands().size() != 1 || inst.num_results() != 3) return "malformed ember_lu";
  std::vector<int64_t> pivots = BatchDims(ad), perm = BatchDims(ad);
  pivots.push_back(std::min(rows, cols));
  perm.push_back(rows);
  const ir::ValueType& p = inst.result(1)->type();
  const ir::ValueType& q = inst.result(2)->type();
  if (inst.result(0)->type().dims() != ad || !p.is_tensor() || !q.is_tensor() ||
      p.dims() != pivots || q.dims() != perm || p.element_type() != ElementType::kS32 ||
      q.element_type() != ElementType::kS32 || !IsRowMajor(p) || !IsRowMajor(q)) {
    return "results that are not (lu, s32 pivots, s32 permutation)";
  }
  return "";
}

template <typename S>
void FillNaN(S* m, int64_t count) {
  std::fill(m, m + count, S(std::numeric_limits<double>::quiet_NaN()));
}

// dst = src for `count` elements unless they are the same memory.
template <typename S>
void CopyMatrix(const S* src, S* dst, int64_t count) {
  if (src != dst) std::memmove(dst, src, static_cast<size_t>(count) * sizeof(S));
}

}  // namespace

bool LinalgThunk::IsLinalgOp(const ir::Instruction& inst) {
  if (inst.opcode() == ir::Opcode::kCholesky || inst.opcode() == ir::Opcode::kTriangularSolve) {
    return true;
  }
  const std::string target = CustomCallTarget(inst);
  return target == kLuTarget || target == kQrTarget || target == kHouseholderTarget ||
         target == kEighTarget || target == kSvdTarget;
}

std::string LinalgThunk::Refusal(const ir::Instruction& inst) {
  if (!IsLinalgOp(inst)) return "not a linear-algebra op";
  if (inst.operands().empty() || inst.num_results() == 0) return "malformed op";
  const ir::ValueType& a = inst.operand(0)->type();
  if (!a.is_tensor()) return "a non-array operand";
  const ElementType type = a.element_type();
  if (type != ElementType::kF64 && type != ElementType::kC64 && type != ElementType::kC128 &&
      !fast::WidensToF32(type)) {
    return absl::StrCat("no library kernel for ", std::string(ir::ElementTypeName(type)),
                        " (float and complex types only)");
  }
  for (const ir::Value* v : inst.operands()) {
    if (!IsRowMajor(v->type()) || v->type().element_type() != type) {
      return "operands of other types or layouts";
    }
  }
  // (ember_svd's first result is its real singular values: CheckShapes checks those.)
  if (CustomCallTarget(inst) != kSvdTarget &&
      (!IsRowMajor(inst.result(0)->type()) || inst.result(0)->type().element_type() != type)) {
    return "a result of another type or layout";
  }
  Options options;
  return CheckShapes(inst, &options);
}

std::unique_ptr<LinalgThunk> LinalgThunk::Create(std::string name, const ir::Instruction& inst,
                                                 std::vector<ValueRef> operands,
                                                 std::vector<ValueRef> results) {
  if (!Refusal(inst).empty()) return nullptr;
  std::unique_ptr<LinalgThunk> thunk(
      new LinalgThunk(std::move(name), std::move(operands), std::move(results)));
  CheckShapes(inst, &thunk->options_);
  const std::string target = CustomCallTarget(inst);
  thunk->op_ = inst.opcode() == ir::Opcode::kCholesky          ? Op::kCholesky
               : inst.opcode() == ir::Opcode::kTriangularSolve ? Op::kTriangularSolve
               : target == kQrTarget                           ? Op::kQr
               : target == kHouseholderTarget                  ? Op::kHouseholderProduct
               : target == kEighTarget                         ? Op::kEigh
               : target == kSvdTarget                          ? Op::kSvd
                                                               : Op::kLu;
  if (thunk->op_ == Op::kHouseholderProduct) {
    thunk->reflectors_ = inst.operand(1)->type().dims().back();
  }
  thunk->type_ = inst.operand(0)->type().element_type();
  auto array = [](const ir::ValueType& t) {
    Array a;
    a.type = t.element_type();
    a.elements = t.shape().element_count();
    a.bytes = a.elements * ir::StorageBytes(a.type);
    return a;
  };
  for (const ir::Value* v : inst.operands()) thunk->operand_arrays_.push_back(array(v->type()));
  for (size_t r = 0; r < inst.num_results(); ++r) {
    thunk->result_arrays_.push_back(array(inst.result(r)->type()));
  }
  // Each matrix's dims: the result's (triangular_solve: b's), the operand's for the others.
  const std::vector<int64_t>& out =
      inst.operand(thunk->op_ == Op::kTriangularSolve ? 1 : 0)->type().dims();
  thunk->batch_ = 1;
  for (size_t i = 0; i + 2 < out.size(); ++i) thunk->batch_ *= out[i];
  thunk->rows_ = out[out.size() - 2];
  thunk->cols_ = out.back();
  thunk->n_ = inst.operand(0)->type().dims().back();
  return thunk;
}

absl::Status LinalgThunk::Run(HostRunContext& context) const {
  ScratchMemory memory;
  Arrays arrays;
  for (const ValueRef& ref : operands_) arrays.operands.push_back(context.Address(ref));
  for (size_t r = 0; r < results_.size(); ++r) {
    if (results_[r].kind != ValueRef::Kind::kOther) {
      arrays.results.push_back(context.Address(results_[r]));
      continue;
    }
    // A result nothing reads still needs somewhere to go.
    EMBER_ASSIGN_OR_RETURN(
        void* p, memory.Allocate(std::max<int64_t>(1, result_arrays_[r].bytes), name()));
    arrays.results.push_back(static_cast<uint8_t*>(p));
  }
  switch (type_) {
    case ElementType::kF32:
      return RunTyped<float>(context, arrays);
    case ElementType::kF64:
      return RunTyped<double>(context, arrays);
    case ElementType::kC64:
      return RunTyped<std::complex<float>>(context, arrays);
    case ElementType::kC128:
      return RunTyped<std::complex<double>>(context, arrays);
    default:
      return RunNarrow(context, arrays);
  }
}

absl::Status LinalgThunk::RunNarrow(HostRunContext& context, const Arrays& arrays) const {
  // Each array of the narrow type through an f32 copy (one rounding back at the end); others
  // (ember_lu's s32 pivots and permutation) as they are.
  const fast::F32Converter convert(type_);
  ScratchMemory memory;
  // An f32 copy for an array of the narrow type, null for the others.
  auto f32_copy = [&](const Array& array) -> absl::StatusOr<float*> {
    if (array.type != type_) return nullptr;
    EMBER_ASSIGN_OR_RETURN(
        void* p, memory.Allocate(std::max<int64_t>(1, array.elements) * sizeof(float), name()));
    return static_cast<float*>(p);
  };
  Arrays wide;
  for (size_t i = 0; i < operands_.size(); ++i) {
    EMBER_ASSIGN_OR_RETURN(float* copy, f32_copy(operand_arrays_[i]));
    if (copy != nullptr) {
      convert.WidenAll(arrays.operands[i], operand_arrays_[i].elements, copy, context.pool());
    }
    wide.operands.push_back(copy != nullptr ? reinterpret_cast<const uint8_t*>(copy)
                                            : arrays.operands[i]);
  }
  std::vector<float*> result_copies;
  for (size_t r = 0; r < results_.size(); ++r) {
    EMBER_ASSIGN_OR_RETURN(float* copy, f32_copy(result_arrays_[r]));
    result_copies.push_back(copy);
    wide.results.push_back(copy != nullptr ? reinterpret_cast<uint8_t*>(copy)
                                           : arrays.results[r]);
  }
  EMBER_RETURN_IF_ERROR(RunTyped<float>(context, wide));
  for (size_t r = 0; r < results_.size(); ++r) {
    if (result_copies[r] == nullptr || results_[r].kind == ValueRef::Kind::kOther) continue;
    convert.NarrowAll(result_copies[r], result_arrays_[r].elements, arrays.results[r],
                      context.pool());
  }
  return absl::OkStatus();
}

// The element type the spectral solvers take for S: complex<float> matrices are widened to
// complex<double> (dense_solvers.h says why), the others are solved in their own type.
template <typename S>
struct SolverScalar {
  using type = S;
};
template <>
struct SolverScalar<std::complex<float>> {
  using type = std::complex<double>;
};
template <typename S>
struct RealScalar {
  using type = S;
};
template <typename T>
struct RealScalar<std::complex<T>> {
  using type = T;
};

// One matrix's eigh or svd through the solver's type W: in place when W is S, else through
// per-thread copies widened from S and rounded back to S.
template <typename S>
class SpectralSolver {
 public:
  using R = typename RealScalar<S>::type;
  using W = typename SolverScalar<S>::type;
  using WR = typename RealScalar<W>::type;

  bool Eigh(const S* a, int64_t n, bool lower, R* w, S* v) {
    if constexpr (std::is_same_v<W, S>) {
      return fast::SymmetricEigen(a, n, lower, w, v);
    } else {
      a_.assign(a, a + n * n);  // widened
      v_.resize(static_cast<size_t>(n * n));
      w_.resize(static_cast<size_t>(n));
      if (!fast::SymmetricEigen(a_.data(), n, lower, w_.data(), v_.data())) return false;
      Narrow(w_, w);
      Narrow(v_, v);
      return true;
    }
  }

  bool Svd(const S* a, int64_t rows, int64_t cols, bool full, R* s, S* u, S* vt) {
    if constexpr (std::is_same_v<W, S>) {
      return fast::SingularValues(a, rows, cols, full, s, u, vt);
    } else {
      const int64_t k = std::min(rows, cols);
      a_.assign(a, a + rows * cols);  // widened
      w_.resize(static_cast<size_t>(k));
      const bool vectors = u != nullptr;
      u_.resize(vectors ? static_cast<size_t>(rows * (full ? rows : k)) : 0);
      v_.resize(vectors ? static_cast<size_t>(cols * (full ? cols : k)) : 0);
      if (!fast::SingularValues(a_.data(), rows, cols, full, w_.data(),
                                vectors ? u_.data() : nullptr, vectors ? v_.data() : nullptr)) {
        return false;
      }
      Narrow(w_, s);
      if (vectors) {
        Narrow(u_, u);
        Narrow(v_, vt);
      }
      return true;
    }
  }

 private:
  template <typename Wide, typename Narrowed>
  static void Narrow(const std::vector<Wide>& from, Narrowed* to) {
    for (size_t i = 0; i < from.size(); ++i) to[i] = static_cast<Narrowed>(from[i]);
  }

  std::vector<W> a_, u_, v_;
  std::vector<WR> w_;
};

template <typename S>
absl::Status LinalgThunk::RunSpectral(HostRunContext& context, const Arrays& arrays) const {
  using R = typename RealScalar<S>::type;
  if (batch_ == 0) return absl::OkStatus();
  const int64_t per = rows_ * cols_, k = std::min(rows_, cols_);
  const R nan = std::numeric_limits<R>::quiet_NaN();
  const S* in = reinterpret_cast<const S*>(arrays.operands[0]);
  if (op_ == Op::kEigh) {
    S* v = reinterpret_cast<S*>(arrays.results[0]);
    R* w = reinterpret_cast<R*>(arrays.results[1]);
    context.pool().ParallelFor(batch_, 1, [&](int64_t begin, int64_t end) {
      SpectralSolver<S> solver;
      for (int64_t b = begin; b < end; ++b) {
        if (!solver.Eigh(in + b * per, rows_, options_.lower, w + b * k, v + b * per)) {
          FillNaN(v + b * per, per);  // not converged, or NaN/inf in: NaN out, as XLA gives
          FillNaN(w + b * k, k);
        }
      }
    });
    return absl::OkStatus();
  }
  const int64_t ucols = options_.full_matrices ? rows_ : k,
                vrows = options_.full_matrices ? cols_ : k;
  R* s = reinterpret_cast<R*>(arrays.results[0]);
  S* u = options_.compute_uv ? reinterpret_cast<S*>(arrays.results[1]) : nullptr;
  S* vt = options_.compute_uv ? reinterpret_cast<S*>(arrays.results[2]) : nullptr;
  context.pool().ParallelFor(batch_, 1, [&](int64_t begin, int64_t end) {
    SpectralSolver<S> solver;
    for (int64_t b = begin; b < end; ++b) {
      R* sb = s + b * k;
      S* ub = options_.compute_uv ? u + b * rows_ * ucols : nullptr;
      S* vb = options_.compute_uv ? vt + b * vrows * cols_ : nullptr;
      if (k > 0 && solver.Svd(in + b * per, rows_, cols_, options_.full_matrices, sb, ub, vb)) {
        continue;
      }
      // An empty matrix: identities where the full form asks for them; else NaN.
      std::fill(sb, sb + k, nan);
      if (!options_.compute_uv) continue;
      std::fill(ub, ub + rows_ * ucols, k == 0 ? S(0) : S(nan));
      std::fill(vb, vb + vrows * cols_, k == 0 ? S(0) : S(nan));
      if (k == 0) {
        for (int64_t i = 0; i < std::min(rows_, ucols); ++i) ub[i * ucols + i] = S(1);
        for (int64_t i = 0; i < std::min(vrows, cols_); ++i) vb[i * cols_ + i] = S(1);
      }
    }
  });
  return absl::OkStatus();
}

template <typename S>
absl::Status LinalgThunk::RunTyped(HostRunContext& context, const Arrays& arrays) const {
  if (op_ == Op::kEigh || op_ == Op::kSvd) {
    return RunSpectral<S>(context, arrays);  // (empty ones too)
  }
  const int64_t per = rows_ * cols_;
  if (batch_ == 0 || per == 0) return absl::OkStatus();
  const int64_t k = std::min(rows_, cols_);
  ScratchMemory memory;
  S* out = reinterpret_cast<S*>(arrays.results[0]);
  const S* in =
      reinterpret_cast<const S*>(arrays.operands[op_ == Op::kTriangularSolve ? 1 : 0]);
  // The product is written while the reflectors are read: they must not share memory.
  if (op_ == Op::kHouseholderProduct && in < out + batch_ * per && out < in + batch_ * per) {
    EMBER_ASSIGN_OR_RETURN(void* copy, memory.Allocate(batch_ * per * sizeof(S), name()));
    std::memcpy(copy, in, static_cast<size_t>(batch_ * per) * sizeof(S));
    in = static_cast<const S*>(copy);
  }
  switch (op_) {
    case Op::kEigh:
    case Op::kSvd:
      break;  // (RunSpectral, above)
    case Op::kCholesky:
      context.pool().ParallelFor(batch_, 1, [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
          S* m = out + b * per;
          CopyMatrix(in + b * per, m, per);
          if (!fast::Cholesky(m, n_, options_.lower)) FillNaN(m, per);
        }
      });
      return absl::OkStatus();
    case Op::kTriangularSolve: {
      const S* a = reinterpret_cast<const S*>(arrays.operands[0]);
      const int64_t a_per = n_ * n_;
      // The result overwrites b's copy matrix by matrix: a must not share its memory.
      if (a < out + batch_ * per && out < a + batch_ * a_per) {
        EMBER_ASSIGN_OR_RETURN(void* copy, memory.Allocate(batch_ * a_per * sizeof(S), name()));
        std::memcpy(copy, a, static_cast<size_t>(batch_ * a_per) * sizeof(S));
        a = static_cast<const S*>(copy);
      }
      context.pool().ParallelFor(batch_, 1, [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
          CopyMatrix(in + b * per, out + b * per, per);
          fast::TriangularSolve(a + b * a_per, out + b * per, rows_, cols_, options_.form);
        }
      });
      return absl::OkStatus();
    }
    case Op::kQr: {
      S* taus = reinterpret_cast<S*>(arrays.results[1]);
      context.pool().ParallelFor(batch_, 1, [&](int64_t begin, int64_t end) {
        std::vector<S> work(static_cast<size_t>(cols_));
        for (int64_t b = begin; b < end; ++b) {
          CopyMatrix(in + b * per, out + b * per, per);
          fast::Qr(out + b * per, rows_, cols_, taus + b * k, work.data());
        }
      });
      return absl::OkStatus();
    }
    case Op::kHouseholderProduct: {
      const S* taus = reinterpret_cast<const S*>(arrays.operands[1]);
      context.pool().ParallelFor(batch_, 1, [&](int64_t begin, int64_t end) {
        std::vector<S> work(static_cast<size_t>(rows_ + cols_));
        for (int64_t b = begin; b < end; ++b) {
          fast::HouseholderProduct(in + b * per, taus + b * reflectors_, out + b * per, rows_,
                                   cols_, reflectors_, work.data());
        }
      });
      return absl::OkStatus();
    }
    case Op::kLu: {
      int32_t* pivots = reinterpret_cast<int32_t*>(arrays.results[1]);
      int32_t* perm = reinterpret_cast<int32_t*>(arrays.results[2]);
      context.pool().ParallelFor(batch_, 1, [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
          CopyMatrix(in + b * per, out + b * per, per);
          int32_t* p = pivots + b * k;
          fast::LuFactor(out + b * per, rows_, cols_, p);
          // The permutation the pivots' swaps make of 0..rows-1, in order.
          int32_t* q = perm + b * rows_;
          std::iota(q, q + rows_, 0);
          for (int64_t j = 0; j < k; ++j) std::swap(q[j], q[p[j]]);
        }
      });
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

}  // namespace ember::host
