// The linear-algebra custom calls that Ember's JAX lowerings emit for platform "ember"
// (python/jax_plugins/ember/linalg.py), where JAX itself lowers eigh, svd, eig, schur,
// hessenberg and tridiagonal only to LAPACK / cuSOLVER kernels. Operands and results are
// row-major, batched over leading dimensions; attributes are entries of the dictionary
// backend_config (typed-FFI style). Outputs follow XLA:CPU's (LAPACK's) conventions:
//   ember_eigh(a) {lower}                         -> v, w        w ascending, real
//   ember_svd(a) {full_matrices, compute_uv}      -> s[, u, vt]  s descending, real
//   ember_eig(a) {compute_left, compute_right}    -> w[, vl][, vr]  complex
//   ember_schur(a) {compute_schur_vectors}        -> t[, vs]     real input: quasi-triangular
//   ember_hessenberg(a)                           -> a, taus     xGEHRD's packed form
//   ember_tridiagonal(a) {lower}                  -> a, d, e, taus  xSYTRD / xHETRD's packed form
//   ember_lu(a)                                   -> lu, pivots, permutation  xGETRF's packed form,
//                                                    pivots and permutation 0-based int32
// A matrix whose iteration does not converge gets NaN in all its results, as XLA:CPU gives when
// LAPACK reports failure. The numerics are in dense_linalg.cc (double precision throughout).
#include "compiler/evaluator/eval_linalg_custom_calls.h"

#include <cmath>
#include <limits>

#include "compiler/evaluator/dense_linalg.h"
#include "compiler/evaluator/eval_family_support.h"

namespace ember::eval {
namespace {

namespace fs = family_support;
using linalg::Complex;
using linalg::Matrix;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The batch count and the trailing matrix dims of operand 0.
struct Batched {
  int64_t batch = 1, rows = 0, cols = 0;
};

absl::StatusOr<Batched> MatrixOperand(const ir::Instruction& inst, const ir::Literal& a,
                                      bool square) {
  const ir::Shape& shape = a.shape();
  if (shape.rank() < 2) {
    return fs::OpError(inst, absl::StrCat("operand must have rank >= 2, got ", shape.ToString()));
  }
  Batched b;
  b.rows = shape.dim(shape.rank() - 2);
  b.cols = shape.dim(shape.rank() - 1);
  for (int64_t i = 0; i < shape.rank() - 2; ++i) b.batch *= shape.dim(i);
  if (square && b.rows != b.cols) {
    return fs::OpError(inst, absl::StrCat("operand must be square, got ", shape.ToString()));
  }
  return b;
}

template <typename T>
absl::StatusOr<EvalValue> MakeResult(const ir::Instruction& inst, size_t i,
                                     const std::vector<T>& values) {
  EMBER_ASSIGN_OR_RETURN(ir::Shape shape, fs::ResultShape(inst, i));
  if (shape.element_count() != static_cast<int64_t>(values.size())) {
    return fs::OpError(inst, absl::StrCat("result ", i, " has type ", shape.ToString(), " but ",
                                          values.size(), " values were computed"));
  }
  EMBER_ASSIGN_OR_RETURN(ir::Literal literal,
                         fs::LiteralFrom<T>(shape, absl::MakeConstSpan(values)));
  return EvalValue::Array(std::move(literal));
}

template <typename S>
Matrix<S> Slice(const std::vector<S>& flat, int64_t b, int64_t rows, int64_t cols) {
  Matrix<S> m(rows, cols);
  std::copy(flat.begin() + b * rows * cols, flat.begin() + (b + 1) * rows * cols, m.data.begin());
  return m;
}

template <typename S>
void Append(std::vector<S>& out, const Matrix<S>& m) {
  out.insert(out.end(), m.data.begin(), m.data.end());
}

absl::StatusOr<std::vector<EvalValue>> Eigh(const ir::Instruction& inst, const ir::Literal& a) {
  EMBER_ASSIGN_OR_RETURN(Batched m, MatrixOperand(inst, a, /*square=*/true));
  EMBER_ASSIGN_OR_RETURN(bool lower, fs::BackendConfigFlag(inst, "lower", true));
  if (inst.num_results() != 2) return fs::OpError(inst, "ember_eigh has two results (v, w)");
  return fs::ByLinalgScalar(
      inst, a.element_type(), [&](auto tag) -> absl::StatusOr<std::vector<EvalValue>> {
        using S = typename decltype(tag)::type;
        EMBER_ASSIGN_OR_RETURN(std::vector<S> in, fs::LiteralTo<S>(a));
        std::vector<S> vs;
        std::vector<double> ws;
        for (int64_t b = 0; b < m.batch; ++b) {
          Matrix<S> v;
          std::vector<double> w;
          if (!linalg::HermitianEigen(Slice(in, b, m.rows, m.cols), lower, w, v)) {
            v = Matrix<S>(m.rows, m.rows);
            std::fill(v.data.begin(), v.data.end(), S(kNaN));
            w.assign(static_cast<size_t>(m.rows), kNaN);
          }
          Append(vs, v);
          ws.insert(ws.end(), w.begin(), w.end());
        }
        std::vector<EvalValue> out;
        EMBER_ASSIGN_OR_RETURN(EvalValue r0, MakeResult<S>(inst, 0, vs));
        EMBER_ASSIGN_OR_RETURN(EvalValue r1, MakeResult<double>(inst, 1, ws));
        out.push_back(std::move(r0));
        out.push_back(std::move(r1));
        return out;
      });
}

absl::StatusOr<std::vector<EvalValue>> Svd(const ir::Instruction& inst, const ir::Literal& a) {
  EMBER_ASSIGN_OR_RETURN(Batched m, MatrixOperand(inst, a, /*square=*/false));
  EMBER_ASSIGN_OR_RETURN(bool full, fs::BackendConfigFlag(inst, "full_matrices", false));
  EMBER_ASSIGN_OR_RETURN(bool compute_uv, fs::BackendConfigFlag(inst, "compute_uv", true));
  if (inst.num_results() != (compute_uv ? 3u : 1u)) {
    return fs::OpError(inst, compute_uv ? "ember_svd has three results (s, u, vt)"
                                        : "ember_svd without compute_uv has one result (s)");
  }
  const int64_t k = std::min(m.rows, m.cols);
  const int64_t ucols = full ? m.rows : k, vrows = full ? m.cols : k;
  return fs::ByLinalgScalar(
      inst, a.element_type(), [&](auto tag) -> absl::StatusOr<std::vector<EvalValue>> {
        using S = typename decltype(tag)::type;
        EMBER_ASSIGN_OR_RETURN(std::vector<S> in, fs::LiteralTo<S>(a));
        std::vector<double> ss;
        std::vector<S> us, vts;
        for (int64_t b = 0; b < m.batch; ++b) {
          std::vector<double> s;
          Matrix<S> u, vt;
          const bool ok =
              k == 0 ? false : linalg::SingularValues(Slice(in, b, m.rows, m.cols), full, s, u, vt);
          if (!ok) {
            // Empty matrices: the identity where the full form asks for one; non-convergence: NaN.
            const S fill = k == 0 ? S(0) : S(kNaN);
            s.assign(static_cast<size_t>(k), kNaN);
            u = Matrix<S>(m.rows, ucols);
            vt = Matrix<S>(vrows, m.cols);
            std::fill(u.data.begin(), u.data.end(), fill);
            std::fill(vt.data.begin(), vt.data.end(), fill);
            if (k == 0) {
              for (int64_t i = 0; i < std::min(u.rows, u.cols); ++i) u(i, i) = S(1);
              for (int64_t i = 0; i < std::min(vt.rows, vt.cols); ++i) vt(i, i) = S(1);
            }
          }
          ss.insert(ss.end(), s.begin(), s.end());
          Append(us, u);
          Append(vts, vt);
        }
        std::vector<EvalValue> out;
        EMBER_ASSIGN_OR_RETURN(EvalValue r0, MakeResult<double>(inst, 0, ss));
        out.push_back(std::move(r0));
        if (compute_uv) {
          EMBER_ASSIGN_OR_RETURN(EvalValue r1, MakeResult<S>(inst, 1, us));
          EMBER_ASSIGN_OR_RETURN(EvalValue r2, MakeResult<S>(inst, 2, vts));
          out.push_back(std::move(r1));
          out.push_back(std::move(r2));
        }
        return out;
      });
}

absl::StatusOr<std::vector<EvalValue>> Eig(const ir::Instruction& inst, const ir::Literal& a) {
  EMBER_ASSIGN_OR_RETURN(Batched m, MatrixOperand(inst, a, /*square=*/true));
  EMBER_ASSIGN_OR_RETURN(bool left, fs::BackendConfigFlag(inst, "compute_left", false));
  EMBER_ASSIGN_OR_RETURN(bool right, fs::BackendConfigFlag(inst, "compute_right", true));
  if (inst.num_results() != 1u + left + right) {
    return fs::OpError(inst, "ember_eig has a result for w and one per computed vector set");
  }
  return fs::ByLinalgScalar(
      inst, a.element_type(), [&](auto tag) -> absl::StatusOr<std::vector<EvalValue>> {
        using S = typename decltype(tag)::type;
        EMBER_ASSIGN_OR_RETURN(std::vector<S> in, fs::LiteralTo<S>(a));
        std::vector<Complex> ws, vls, vrs;
        const int64_t n = m.rows;
        for (int64_t b = 0; b < m.batch; ++b) {
          std::vector<Complex> w;
          Matrix<Complex> vl, vr;
          if (!linalg::GeneralEigen(Slice(in, b, n, n), left, right, w, vl, vr)) {
            w.assign(static_cast<size_t>(n), Complex(kNaN, kNaN));
            vl = vr = Matrix<Complex>(n, n);
            std::fill(vl.data.begin(), vl.data.end(), Complex(kNaN, kNaN));
            std::fill(vr.data.begin(), vr.data.end(), Complex(kNaN, kNaN));
          }
          ws.insert(ws.end(), w.begin(), w.end());
          if (left) Append(vls, vl);
          if (right) Append(vrs, vr);
        }
        std::vector<EvalValue> out;
        EMBER_ASSIGN_OR_RETURN(EvalValue r0, MakeResult<Complex>(inst, 0, ws));
        out.push_back(std::move(r0));
        if (left) {
          EMBER_ASSIGN_OR_RETURN(EvalValue r, MakeResult<Complex>(inst, out.size(), vls));
          out.push_back(std::move(r));
        }
        if (right) {
          EMBER_ASSIGN_OR_RETURN(EvalValue r, MakeResult<Complex>(inst, out.size(), vrs));
          out.push_back(std::move(r));
        }
        return out;
      });
}

absl::StatusOr<std::vector<EvalValue>> Schur(const ir::Instruction& inst, const ir::Literal& a) {
  EMBER_ASSIGN_OR_RETURN(Batched m, MatrixOperand(inst, a, /*square=*/true));
  EMBER_ASSIGN_OR_RETURN(bool vectors, fs::BackendConfigFlag(inst, "compute_schur_vectors", true));
  if (inst.num_results() != (vectors ? 2u : 1u)) {
    return fs::OpError(inst, "ember_schur has results t and, with compute_schur_vectors, vs");
  }
  return fs::ByLinalgScalar(inst, a.element_type(),
                            [&](auto tag) -> absl::StatusOr<std::vector<EvalValue>> {
                              using S = typename decltype(tag)::type;
                              EMBER_ASSIGN_OR_RETURN(std::vector<S> in, fs::LiteralTo<S>(a));
                              std::vector<S> ts, zs;
                              for (int64_t b = 0; b < m.batch; ++b) {
                                Matrix<S> t, z;
                                if (!linalg::Schur(Slice(in, b, m.rows, m.rows), t, z)) {
                                  t = z = Matrix<S>(m.rows, m.rows);
                                  std::fill(t.data.begin(), t.data.end(), S(kNaN));
                                  std::fill(z.data.begin(), z.data.end(), S(kNaN));
                                }
                                Append(ts, t);
                                Append(zs, z);
                              }
                              std::vector<EvalValue> out;
                              EMBER_ASSIGN_OR_RETURN(EvalValue r0, MakeResult<S>(inst, 0, ts));
                              out.push_back(std::move(r0));
                              if (vectors) {
                                EMBER_ASSIGN_OR_RETURN(EvalValue r1, MakeResult<S>(inst, 1, zs));
                                out.push_back(std::move(r1));
                              }
                              return out;
                            });
}

absl::StatusOr<std::vector<EvalValue>> Hessenberg(const ir::Instruction& inst,
                                                  const ir::Literal& a) {
  EMBER_ASSIGN_OR_RETURN(Batched m, MatrixOperand(inst, a, /*square=*/true));
  if (inst.num_results() != 2) return fs::OpError(inst, "ember_hessenberg has two results");
  return fs::ByLinalgScalar(inst, a.element_type(),
                            [&](auto tag) -> absl::StatusOr<std::vector<EvalValue>> {
                              using S = typename decltype(tag)::type;
                              EMBER_ASSIGN_OR_RETURN(std::vector<S> in, fs::LiteralTo<S>(a));
                              std::vector<S> packed, taus;
                              for (int64_t b = 0; b < m.batch; ++b) {
                                Matrix<S> h = Slice(in, b, m.rows, m.rows);
                                std::vector<S> t;
                                linalg::Hessenberg(h, t);
                                Append(packed, h);
                                taus.insert(taus.end(), t.begin(), t.end());
                              }
                              std::vector<EvalValue> out;
                              EMBER_ASSIGN_OR_RETURN(EvalValue r0, MakeResult<S>(inst, 0, packed));
                              EMBER_ASSIGN_OR_RETURN(EvalValue r1, MakeResult<S>(inst, 1, taus));
                              out.push_back(std::move(r0));
                              out.push_back(std::move(r1));
                              return out;
                            });
}

absl::StatusOr<std::vector<EvalValue>> Tridiagonal(const ir::Instruction& inst,
                                                   const ir::Literal& a) {
  EMBER_ASSIGN_OR_RETURN(Batched m, MatrixOperand(inst, a, /*square=*/true));
  EMBER_ASSIGN_OR_RETURN(bool lower, fs::BackendConfigFlag(inst, "lower", true));
  if (inst.num_results() != 4) {
    return fs::OpError(inst, "ember_tridiagonal has four results (a, d, e, taus)");
  }
  return fs::ByLinalgScalar(inst, a.element_type(),
                            [&](auto tag) -> absl::StatusOr<std::vector<EvalValue>> {
                              using S = typename decltype(tag)::type;
                              EMBER_ASSIGN_OR_RETURN(std::vector<S> in, fs::LiteralTo<S>(a));
                              std::vector<S> packed, taus;
                              std::vector<double> ds, es;
                              for (int64_t b = 0; b < m.batch; ++b) {
                                Matrix<S> t = Slice(in, b, m.rows, m.rows);
                                std::vector<double> d, e;
                                std::vector<S> tau;
                                linalg::Tridiagonalize(t, lower, d, e, tau);
                                Append(packed, t);
                                ds.insert(ds.end(), d.begin(), d.end());
                                es.insert(es.end(), e.begin(), e.end());
                                taus.insert(taus.end(), tau.begin(), tau.end());
                              }
                              std::vector<EvalValue> out;
                              EMBER_ASSIGN_OR_RETURN(EvalValue r0, MakeResult<S>(inst, 0, packed));
                              EMBER_ASSIGN_OR_RETURN(EvalValue r1, MakeResult<double>(inst, 1, ds));
                              EMBER_ASSIGN_OR_RETURN(EvalValue r2, MakeResult<double>(inst, 2, es));
                              EMBER_ASSIGN_OR_RETURN(EvalValue r3, MakeResult<S>(inst, 3, taus));
                              out.push_back(std::move(r0));
                              out.push_back(std::move(r1));
                              out.push_back(std::move(r2));
                              out.push_back(std::move(r3));
                              return out;
                            });
}

absl::StatusOr<std::vector<EvalValue>> Lu(const ir::Instruction& inst, const ir::Literal& a) {
  EMBER_ASSIGN_OR_RETURN(Batched m, MatrixOperand(inst, a, /*square=*/false));
  if (inst.num_results() != 3) {
    return fs::OpError(inst, "ember_lu has three results (lu, pivots, permutation)");
  }
  return fs::ByLinalgScalar(
      inst, a.element_type(), [&](auto tag) -> absl::StatusOr<std::vector<EvalValue>> {
        using S = typename decltype(tag)::type;
        EMBER_ASSIGN_OR_RETURN(std::vector<S> in, fs::LiteralTo<S>(a));
        std::vector<S> lus;
        std::vector<int32_t> pivots, permutations;
        for (int64_t b = 0; b < m.batch; ++b) {
          Matrix<S> lu = Slice(in, b, m.rows, m.cols);
          std::vector<int32_t> p;
          linalg::LuFactor(lu, p);
          std::vector<int32_t> perm(static_cast<size_t>(m.rows));
          for (int64_t i = 0; i < m.rows; ++i) perm[static_cast<size_t>(i)] = static_cast<int32_t>(i);
          for (size_t j = 0; j < p.size(); ++j) std::swap(perm[j], perm[static_cast<size_t>(p[j])]);
          Append(lus, lu);
          pivots.insert(pivots.end(), p.begin(), p.end());
          permutations.insert(permutations.end(), perm.begin(), perm.end());
        }
        std::vector<EvalValue> out;
        EMBER_ASSIGN_OR_RETURN(EvalValue r0, MakeResult<S>(inst, 0, lus));
        EMBER_ASSIGN_OR_RETURN(EvalValue r1, MakeResult<int32_t>(inst, 1, pivots));
        EMBER_ASSIGN_OR_RETURN(EvalValue r2, MakeResult<int32_t>(inst, 2, permutations));
        out.push_back(std::move(r0));
        out.push_back(std::move(r1));
        out.push_back(std::move(r2));
        return out;
      });
}

}  // namespace

bool IsLinalgCustomCall(std::string_view target) {
  return target == "ember_eigh" || target == "ember_svd" || target == "ember_eig" ||
         target == "ember_schur" || target == "ember_hessenberg" || target == "ember_tridiagonal" ||
         target == "ember_lu";
}

absl::StatusOr<std::vector<EvalValue>> EvalLinalgCustomCall(const ir::Instruction& inst,
                                                            std::string_view target,
                                                            std::vector<EvalValue>& operands) {
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 1));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* a, fs::ArrayOperand(inst, operands, 0));
  if (target == "ember_eigh") return Eigh(inst, *a);
  if (target == "ember_svd") return Svd(inst, *a);
  if (target == "ember_eig") return Eig(inst, *a);
  if (target == "ember_schur") return Schur(inst, *a);
  if (target == "ember_hessenberg") return Hessenberg(inst, *a);
  if (target == "ember_lu") return Lu(inst, *a);
  return Tridiagonal(inst, *a);
}

}  // namespace ember::eval
