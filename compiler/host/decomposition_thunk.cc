#include "compiler/host/decomposition_thunk.h"

#include <algorithm>
#include <complex>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/evaluator/dense_linalg.h"
#include "compiler/host/op_attributes.h"
#include "compiler/host/widen_to_f32.h"
#include "compiler/ir/native_types.h"

namespace ember::host {
namespace {

using eval::linalg::Complex;
using eval::linalg::Matrix;
using ir::ElementType;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <typename T>
struct IsComplex : std::false_type {};
template <typename F>
struct IsComplex<std::complex<F>> : std::true_type {};

// The element types a decomposition reads and writes: every float and complex type.
bool Decomposable(ElementType type) { return ir::IsFloat(type) || ir::IsComplex(type); }
template <typename T>
constexpr bool kDecomposable =
    std::is_floating_point_v<T> || fast::kIsNarrowFloat<T> || IsComplex<T>::value;

// One stored element as the cores' scalar S (double or complex<double>), as the evaluator reads
// it (narrow floats through their f32 value).
template <typename S, typename T>
S Load(const T& v) {
  if constexpr (fast::kIsNarrowFloat<T>) {
    return S(static_cast<double>(v.ToFloat()));
  } else if constexpr (IsComplex<T>::value) {
    if constexpr (IsComplex<S>::value) {
      return S(static_cast<double>(v.real()), static_cast<double>(v.imag()));
    } else {
      return S(static_cast<double>(v.real()));
    }
  } else {
    return S(static_cast<double>(v));
  }
}

// A core's value rounded once into a stored element of T, as the evaluator writes its results
// (a complex value into a real type keeps its real part).
template <typename T, typename V>
T Store(const V& v) {
  if constexpr (IsComplex<V>::value && !IsComplex<T>::value) {
    return Store<T>(v.real());
  } else if constexpr (fast::kIsNarrowFloat<T>) {
    return T::FromDouble(static_cast<double>(v));
  } else if constexpr (IsComplex<T>::value) {
    if constexpr (IsComplex<V>::value) {
      return T(static_cast<typename T::value_type>(v.real()),
               static_cast<typename T::value_type>(v.imag()));
    } else {
      return T(static_cast<typename T::value_type>(v), 0);
    }
  } else {
    return static_cast<T>(v);
  }
}

// Matrix `b` (n x n) of an array of `type` at `base`.
template <typename S>
Matrix<S> LoadMatrix(ElementType type, const uint8_t* base, int64_t b, int64_t n) {
  Matrix<S> m(n, n);
  ir::VisitElementType(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kDecomposable<T>) {
      const T* from = reinterpret_cast<const T*>(base) + b * n * n;
      for (int64_t i = 0; i < n * n; ++i) m.data[static_cast<size_t>(i)] = Load<S>(from[i]);
    }
  });
  return m;
}

// Stores `values` as block `b` (of values.size() elements) of an array of `type` at `base`; a
// result nothing reads (null base) is not written.
template <typename V>
void StoreBlock(ElementType type, const std::vector<V>& values, int64_t b, uint8_t* base) {
  if (base == nullptr || values.empty()) return;
  ir::VisitElementType(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kDecomposable<T>) {
      T* to = reinterpret_cast<T*>(base) + b * static_cast<int64_t>(values.size());
      for (size_t i = 0; i < values.size(); ++i) to[i] = Store<T>(values[i]);
    }
  });
}

// The results' dims per matrix of n x n, in order, for the op and its flags.
std::vector<std::vector<int64_t>> ResultDims(const std::string& target, int64_t n, bool left,
                                             bool right, bool schur_vectors) {
  const int64_t reflectors = std::max<int64_t>(n - 1, 0);
  if (target == "ember_eig") {
    std::vector<std::vector<int64_t>> dims = {{n}};
    if (left) dims.push_back({n, n});
    if (right) dims.push_back({n, n});
    return dims;
  }
  if (target == "ember_schur") {
    if (schur_vectors) return {{n, n}, {n, n}};
    return {{n, n}};
  }
  if (target == "ember_hessenberg") return {{n, n}, {reflectors}};
  return {{n, n}, {n}, {reflectors}, {reflectors}};  // ember_tridiagonal: a, d, e, taus
}

}  // namespace

bool DecompositionThunk::IsDecomposition(const ir::Instruction& inst) {
  const std::string target = CustomCallTarget(inst);
  return target == "ember_eig" || target == "ember_schur" || target == "ember_hessenberg" ||
         target == "ember_tridiagonal";
}

std::string DecompositionThunk::Refusal(const ir::Instruction& inst) {
  if (!IsDecomposition(inst)) return "not a decomposition custom call";
  const std::string target = CustomCallTarget(inst);
  if (inst.operands().size() != 1) return absl::StrCat(target, " takes one operand");
  const ir::ValueType& a = inst.operand(0)->type();
  if (!IsRowMajor(a)) return "an operand that is not a static row-major array";
  if (!Decomposable(a.element_type())) {
    return absl::StrCat("a ", std::string(ir::ElementTypeName(a.element_type())),
                        " operand (float and complex types only)");
  }
  const std::vector<int64_t>& ad = a.dims();
  if (ad.size() < 2 || ad[ad.size() - 2] != ad.back()) {
    return "an operand that is not a batch of square matrices";
  }
  std::optional<bool> left = BackendConfigFlag(inst, "compute_left", false);
  std::optional<bool> right = BackendConfigFlag(inst, "compute_right", true);
  std::optional<bool> vectors = BackendConfigFlag(inst, "compute_schur_vectors", true);
  std::optional<bool> lower = BackendConfigFlag(inst, "lower", true);
  if (!left.has_value() || !right.has_value() || !vectors.has_value() || !lower.has_value()) {
    return "a backend_config flag that is not a boolean";
  }
  const std::vector<std::vector<int64_t>> per =
      ResultDims(target, ad.back(), *left, *right, *vectors);
  if (inst.num_results() != per.size()) {
    return absl::StrCat(inst.num_results(), " results where ", target, " has ", per.size());
  }
  for (size_t r = 0; r < per.size(); ++r) {
    const ir::ValueType& t = inst.result(r)->type();
    std::vector<int64_t> dims(ad.begin(), ad.end() - 2);
    dims.insert(dims.end(), per[r].begin(), per[r].end());
    if (!IsRowMajor(t) || !Decomposable(t.element_type()) || t.dims() != dims) {
      return absl::StrCat("result ", r, " is not a row-major float or complex array of the shape ",
                          target, " gives");
    }
  }
  return "";
}

std::unique_ptr<DecompositionThunk> DecompositionThunk::Create(std::string name,
                                                               const ir::Instruction& inst,
                                                               std::vector<ValueRef> operands,
                                                               std::vector<ValueRef> results) {
  if (!Refusal(inst).empty() || operands.size() != 1 || results.size() != inst.num_results()) {
    return nullptr;
  }
  std::unique_ptr<DecompositionThunk> thunk(
      new DecompositionThunk(std::move(name), operands[0], std::move(results)));
  const std::string target = CustomCallTarget(inst);
  thunk->op_ = target == "ember_eig"          ? Op::kEig
               : target == "ember_schur"      ? Op::kSchur
               : target == "ember_hessenberg" ? Op::kHessenberg
                                              : Op::kTridiagonal;
  thunk->left_ = *BackendConfigFlag(inst, "compute_left", false);
  thunk->right_ = *BackendConfigFlag(inst, "compute_right", true);
  thunk->lower_ = *BackendConfigFlag(inst, "lower", true);
  const ir::ValueType& a = inst.operand(0)->type();
  thunk->type_ = a.element_type();
  thunk->n_ = a.dims().back();
  for (size_t i = 0; i + 2 < a.dims().size(); ++i) thunk->batch_ *= a.dims()[i];
  for (size_t r = 0; r < inst.num_results(); ++r) {
    thunk->result_types_.push_back(inst.result(r)->type().element_type());
  }
  return thunk;
}

template <typename S>
void DecompositionThunk::RunMatrix(const uint8_t* in, uint8_t* const* out, int64_t b) const {
  const int64_t n = n_;
  auto store = [&](size_t r, const auto& values) {
    StoreBlock(result_types_[r], values, b, out[r]);
  };
  auto nan_matrix = [&](const auto& fill) {
    Matrix<std::decay_t<decltype(fill)>> m(n, n);
    std::fill(m.data.begin(), m.data.end(), fill);
    return m;
  };
  Matrix<S> a = LoadMatrix<S>(type_, in, b, n);
  switch (op_) {
    case Op::kEig: {
      std::vector<Complex> w;
      Matrix<Complex> vl, vr;
      if (!eval::linalg::GeneralEigen(a, left_, right_, w, vl, vr)) {
        w.assign(static_cast<size_t>(n), Complex(kNaN, kNaN));
        vl = vr = nan_matrix(Complex(kNaN, kNaN));
      }
      size_t r = 0;
      store(r++, w);
      if (left_) store(r++, vl.data);
      if (right_) store(r++, vr.data);
      return;
    }
    case Op::kSchur: {
      Matrix<S> t, z;
      if (!eval::linalg::Schur(a, t, z)) t = z = nan_matrix(S(kNaN));
      store(0, t.data);
      if (results_.size() > 1) store(1, z.data);
      return;
    }
    case Op::kHessenberg: {
      std::vector<S> taus;
      eval::linalg::Hessenberg(a, taus);
      store(0, a.data);
      store(1, taus);
      return;
    }
    case Op::kTridiagonal: {
      std::vector<double> d, e;
      std::vector<S> taus;
      eval::linalg::Tridiagonalize(a, lower_, d, e, taus);
      store(0, a.data);
      store(1, d);
      store(2, e);
      store(3, taus);
      return;
    }
  }
}

absl::Status DecompositionThunk::Run(HostRunContext& context) const {
  if (batch_ == 0 || n_ == 0) return absl::OkStatus();
  const uint8_t* in = context.Address(operand_);
  std::vector<uint8_t*> out;
  for (const ValueRef& ref : results_) out.push_back(context.Address(ref));  // null: unread
  // A matrix is O(n^3) work: one per item of the pool's split.
  context.pool().ParallelFor(batch_, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      if (ir::IsComplex(type_)) {
        RunMatrix<Complex>(in, out.data(), b);
      } else {
        RunMatrix<double>(in, out.data(), b);
      }
    }
  });
  return absl::OkStatus();
}

}  // namespace ember::host
