// Reference evaluation of the matrix decompositions: cholesky and triangular_solve (StableHLO
// ops), and the Householder QR pair behind custom_call @Qr /
// @ProductOfElementaryHouseholderReflectors (LAPACK geqrf / orgqr conventions).
//
// Choices where the spec leaves room:
// - All arithmetic is in double (complex<double> for complex types), rounded once at the end.
// - cholesky reads only the requested triangle and writes zeros to the other one. A matrix that
//   is not positive definite (a pivot <= 0 or NaN) yields all NaN for that matrix, as XLA does.
// - triangular_solve reads only the requested triangle (and assumes 1 on the diagonal when
//   unit_diagonal); the result is the full solution X.
// - Qr follows LAPACK xGEQRF: R on and above the diagonal, the Householder vectors (implicit
//   leading 1) below it, taus with H(i) = I - tau v v^H and beta = -sign(re(alpha)) * norm.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "compiler/evaluator/eval_family_support.h"
#include "compiler/evaluator/evaluator.h"

namespace ember::eval {
namespace {

namespace fs = family_support;
using Complex = std::complex<double>;

inline double Conj(double v) { return v; }
inline Complex Conj(Complex v) { return std::conj(v); }
inline double Real(double v) { return v; }
inline double Real(Complex v) { return v.real(); }

struct BatchedMatrix {
  int64_t batch = 1, rows = 0, cols = 0;
};

absl::StatusOr<BatchedMatrix> MatrixDims(const ir::Instruction& inst, const ir::Shape& shape,
                                         std::string_view what) {
  if (shape.rank() < 2) {
    return fs::OpError(
        inst, absl::StrCat(std::string(what), " must have rank >= 2, got ", shape.ToString()));
  }
  BatchedMatrix m;
  m.rows = shape.dim(shape.rank() - 2);
  m.cols = shape.dim(shape.rank() - 1);
  for (int64_t i = 0; i < shape.rank() - 2; ++i) m.batch *= shape.dim(i);
  return m;
}

// Runs fn.template operator()<S>() with S = double for real and complex<double> for complex
// element types.

template <typename S>
absl::StatusOr<EvalValue> ToResult(const ir::Instruction& inst, size_t i,
                                   const std::vector<S>& values) {
  EMBER_ASSIGN_OR_RETURN(ir::Shape shape, fs::ResultShape(inst, i));
  EMBER_ASSIGN_OR_RETURN(ir::Literal literal,
                         fs::LiteralFrom<S>(shape, absl::MakeConstSpan(values)));
  return EvalValue::Array(std::move(literal));
}

// ---- cholesky ----------------------------------------------------------------------------------

absl::StatusOr<std::vector<EvalValue>> EvalCholesky(const ir::Instruction& inst,
                                                    std::vector<EvalValue>& operands, Evaluator&) {
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 1));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* a, fs::ArrayOperand(inst, operands, 0));
  EMBER_ASSIGN_OR_RETURN(bool lower, fs::BoolAttr(inst, "lower", false));
  EMBER_ASSIGN_OR_RETURN(BatchedMatrix m, MatrixDims(inst, a->shape(), "a"));
  if (m.rows != m.cols) return fs::OpError(inst, "a must be square");
  return fs::ByLinalgScalar(inst, a->element_type(), [&](auto tag) -> absl::StatusOr<std::vector<EvalValue>> {
    using S = typename decltype(tag)::type;
    EMBER_ASSIGN_OR_RETURN(std::vector<S> in, fs::LiteralTo<S>(*a));
    const int64_t n = m.rows;
    std::vector<S> out(in.size(), S(0));
    for (int64_t b = 0; b < m.batch; ++b) {
      const S* x = in.data() + b * n * n;
      S* l = out.data() + b * n * n;
      // The lower-triangle view of the input: A(i, j) for i >= j.
      auto at = [&](int64_t i, int64_t j) -> S {
        return lower ? x[i * n + j] : Conj(x[j * n + i]);
      };
      bool ok = true;
      for (int64_t j = 0; j < n && ok; ++j) {
        double d = Real(at(j, j));
        for (int64_t k = 0; k < j; ++k) d -= std::norm(Complex(l[j * n + k]));
        if (!(d > 0)) {
          ok = false;
          break;
        }
        const double djj = std::sqrt(d);
        l[j * n + j] = S(djj);
        for (int64_t i = j + 1; i < n; ++i) {
          S s = at(i, j);
          for (int64_t k = 0; k < j; ++k) s -= l[i * n + k] * Conj(l[j * n + k]);
          l[i * n + j] = s / djj;
        }
      }
      if (!ok) {
        for (int64_t i = 0; i < n * n; ++i) l[i] = S(std::numeric_limits<double>::quiet_NaN());
        continue;
      }
      if (!lower) {  // U = L^H
        for (int64_t i = 0; i < n; ++i) {
          for (int64_t j = 0; j < i; ++j) {
            l[j * n + i] = Conj(l[i * n + j]);
            l[i * n + j] = S(0);
          }
        }
      }
    }
    std::vector<EvalValue> results;
    EMBER_ASSIGN_OR_RETURN(EvalValue r, ToResult<S>(inst, 0, out));
    results.push_back(std::move(r));
    return results;
  });
}

// ---- triangular_solve ------------------------------------------------------------------------

absl::StatusOr<std::vector<EvalValue>> EvalTriangularSolve(const ir::Instruction& inst,
                                                           std::vector<EvalValue>& operands,
                                                           Evaluator&) {
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 2));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* a, fs::ArrayOperand(inst, operands, 0));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* b, fs::ArrayOperand(inst, operands, 1));
  EMBER_ASSIGN_OR_RETURN(bool left, fs::BoolAttr(inst, "left_side"));
  EMBER_ASSIGN_OR_RETURN(bool lower, fs::BoolAttr(inst, "lower"));
  EMBER_ASSIGN_OR_RETURN(bool unit, fs::BoolAttr(inst, "unit_diagonal", false));
  EMBER_ASSIGN_OR_RETURN(std::string transpose,
                         fs::StringAttr(inst, "transpose_a", std::string("NO_TRANSPOSE")));
  if (transpose != "NO_TRANSPOSE" && transpose != "TRANSPOSE" && transpose != "ADJOINT") {
    return fs::OpError(inst, absl::StrCat("unknown transpose_a '", transpose, "'"));
  }
  EMBER_ASSIGN_OR_RETURN(BatchedMatrix am, MatrixDims(inst, a->shape(), "a"));
  EMBER_ASSIGN_OR_RETURN(BatchedMatrix bm, MatrixDims(inst, b->shape(), "b"));
  const int64_t n = am.rows;
  if (am.cols != n || am.batch != bm.batch || (left ? bm.rows : bm.cols) != n ||
      a->shape().rank() != b->shape().rank()) {
    return fs::OpError(
        inst, absl::StrCat("shapes ", a->shape().ToString(), " and ", b->shape().ToString(),
                           " do not fit a ", left ? "left" : "right", "-side solve"));
  }
  return fs::ByLinalgScalar(inst, a->element_type(), [&](auto tag) -> absl::StatusOr<std::vector<EvalValue>> {
    using S = typename decltype(tag)::type;
    EMBER_ASSIGN_OR_RETURN(std::vector<S> av, fs::LiteralTo<S>(*a));
    EMBER_ASSIGN_OR_RETURN(std::vector<S> bv, fs::LiteralTo<S>(*b));
    std::vector<S> out(bv.size());
    // op(a) is lower triangular when a's lower triangle is used as is, or its upper triangle is
    // transposed. Right-side solves X op(a) = B run as op(a)^T X^T = B^T.
    const bool op_lower = lower == (transpose == "NO_TRANSPOSE");
    const bool sys_lower = left ? op_lower : !op_lower;
    std::vector<S> mat(static_cast<size_t>(n * n));
    const int64_t systems = left ? bm.cols : bm.rows;
    std::vector<S> y(static_cast<size_t>(n * systems));
    for (int64_t batch = 0; batch < am.batch; ++batch) {
      const S* x = av.data() + batch * n * n;
      // mat = the system matrix N with N y = c.
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          // op(a)(i, j), reading only the requested triangle of a.
          int64_t r = i, c = j;
          if (transpose != "NO_TRANSPOSE") std::swap(r, c);
          S v = S(0);
          if (r == c) {
            v = unit ? S(1) : x[r * n + c];
          } else if (lower ? r > c : r < c) {
            v = x[r * n + c];
          }
          if (transpose == "ADJOINT") v = Conj(v);
          if (left) {
            mat[i * n + j] = v;
          } else {
            mat[j * n + i] = v;
          }
        }
      }
      const S* bb = bv.data() + batch * bm.rows * bm.cols;
      S* ob = out.data() + batch * bm.rows * bm.cols;
      // y[i, s]: unknown i of system s, every system at once, so each substitution step runs
      // along a contiguous row; each system still sums its terms in the same order.
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t s = 0; s < systems; ++s) {
          y[i * systems + s] = left ? bb[i * bm.cols + s] : bb[s * bm.cols + i];
        }
      }
      auto substitute = [&](int64_t i, int64_t j) {
        const S m = mat[i * n + j];
        S* yi = &y[i * systems];
        const S* yj = &y[j * systems];
        for (int64_t s = 0; s < systems; ++s) yi[s] -= m * yj[s];
      };
      auto divide = [&](int64_t i) {
        const S d = mat[i * n + i];
        S* yi = &y[i * systems];
        for (int64_t s = 0; s < systems; ++s) yi[s] = yi[s] / d;
      };
      if (sys_lower) {
        for (int64_t i = 0; i < n; ++i) {
          for (int64_t j = 0; j < i; ++j) substitute(i, j);
          divide(i);
        }
      } else {
        for (int64_t i = n - 1; i >= 0; --i) {
          for (int64_t j = i + 1; j < n; ++j) substitute(i, j);
          divide(i);
        }
      }
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t s = 0; s < systems; ++s) {
          if (left) {
            ob[i * bm.cols + s] = y[i * systems + s];
          } else {
            ob[s * bm.cols + i] = y[i * systems + s];
          }
        }
      }
    }
    std::vector<EvalValue> results;
    EMBER_ASSIGN_OR_RETURN(EvalValue r, ToResult<S>(inst, 0, out));
    results.push_back(std::move(r));
    return results;
  });
}

}  // namespace

namespace family_support {

absl::StatusOr<std::vector<EvalValue>> QrCore(const ir::Instruction& inst, const ir::Literal& a) {
  EMBER_ASSIGN_OR_RETURN(BatchedMatrix m, MatrixDims(inst, a.shape(), "Qr operand"));
  if (inst.num_results() != 2) return OpError(inst, "Qr has two results (a, taus)");
  const int64_t rows = m.rows, cols = m.cols, k = std::min(rows, cols);
  return fs::ByLinalgScalar(inst, a.element_type(), [&](auto tag) -> absl::StatusOr<std::vector<EvalValue>> {
    using S = typename decltype(tag)::type;
    EMBER_ASSIGN_OR_RETURN(std::vector<S> x, LiteralTo<S>(a));
    std::vector<S> taus(static_cast<size_t>(m.batch * k), S(0));
    std::vector<S> w(static_cast<size_t>(cols));
    for (int64_t b = 0; b < m.batch; ++b) {
      S* q = x.data() + b * rows * cols;
      for (int64_t j = 0; j < k; ++j) {
        const S alpha = q[j * cols + j];
        double xnorm2 = 0;
        for (int64_t i = j + 1; i < rows; ++i) xnorm2 += std::norm(Complex(q[i * cols + j]));
        S tau = S(0);
        if (xnorm2 == 0 && Complex(alpha).imag() == 0) {
          tau = S(0);  // H = I
        } else {
          const double norm = std::sqrt(std::norm(Complex(alpha)) + xnorm2);
          const double beta = -std::copysign(norm, Real(alpha));
          tau = (S(beta) - alpha) / S(beta);
          const S scale = S(1) / (alpha - S(beta));
          for (int64_t i = j + 1; i < rows; ++i) q[i * cols + j] *= scale;
          q[j * cols + j] = S(beta);
        }
        taus[b * k + j] = tau;
        // Apply H^H = I - conj(tau) v v^H to the trailing columns (v[j] = 1).
        // Row by row (contiguous); each column's sum still adds its rows in order.
        if (tau != S(0)) {
          for (int64_t c = j + 1; c < cols; ++c) w[c] = q[j * cols + c];
          for (int64_t i = j + 1; i < rows; ++i) {
            const S vi = Conj(q[i * cols + j]);
            const S* row = q + i * cols;
            for (int64_t c = j + 1; c < cols; ++c) w[c] += vi * row[c];
          }
          const S ct = Conj(tau);
          for (int64_t c = j + 1; c < cols; ++c) q[j * cols + c] -= ct * w[c];
          for (int64_t i = j + 1; i < rows; ++i) {
            const S vi = q[i * cols + j];
            S* row = q + i * cols;
            for (int64_t c = j + 1; c < cols; ++c) row[c] -= ct * vi * w[c];
          }
        }
      }
    }
    std::vector<EvalValue> results;
    EMBER_ASSIGN_OR_RETURN(EvalValue r0, ToResult<S>(inst, 0, x));
    EMBER_ASSIGN_OR_RETURN(EvalValue r1, ToResult<S>(inst, 1, taus));
    results.push_back(std::move(r0));
    results.push_back(std::move(r1));
    return results;
  });
}

absl::StatusOr<std::vector<EvalValue>> HouseholderProductCore(const ir::Instruction& inst,
                                                              const ir::Literal& a,
                                                              const ir::Literal& taus) {
  EMBER_ASSIGN_OR_RETURN(BatchedMatrix m, MatrixDims(inst, a.shape(), "a"));
  const ir::Shape& ts = taus.shape();
  if (ts.rank() != a.shape().rank() - 1) {
    return OpError(inst, "taus must have one dimension fewer than a");
  }
  const int64_t k = ts.dim(ts.rank() - 1);
  const int64_t rows = m.rows, cols = m.cols;
  if (k > std::min(rows, cols)) {
    return OpError(inst, absl::StrCat(k, " reflectors for a ", rows, "x", cols, " matrix"));
  }
  return fs::ByLinalgScalar(inst, a.element_type(), [&](auto tag) -> absl::StatusOr<std::vector<EvalValue>> {
    using S = typename decltype(tag)::type;
    EMBER_ASSIGN_OR_RETURN(std::vector<S> x, LiteralTo<S>(a));
    EMBER_ASSIGN_OR_RETURN(std::vector<S> t, LiteralTo<S>(taus));
    std::vector<S> out(x.size(), S(0));
    std::vector<S> v(static_cast<size_t>(rows)), w(static_cast<size_t>(cols));
    for (int64_t b = 0; b < m.batch; ++b) {
      const S* ab = x.data() + b * rows * cols;
      S* q = out.data() + b * rows * cols;
      for (int64_t i = 0; i < std::min(rows, cols); ++i) q[i * cols + i] = S(1);
      // Q = H(0) H(1) ... H(k-1) applied to the first `cols` columns of I, last factor first.
      for (int64_t r = k - 1; r >= 0; --r) {
        const S tau = t[b * k + r];
        for (int64_t i = 0; i < rows; ++i) {
          v[i] = i < r ? S(0) : (i == r ? S(1) : ab[i * cols + r]);
        }
        // Row by row (contiguous); each column's sum still adds its rows in order.
        std::fill(w.begin(), w.end(), S(0));
        for (int64_t i = r; i < rows; ++i) {
          const S vi = Conj(v[i]);
          const S* row = q + i * cols;
          for (int64_t c = 0; c < cols; ++c) w[c] += vi * row[c];
        }
        for (int64_t i = r; i < rows; ++i) {
          for (int64_t c = 0; c < cols; ++c) q[i * cols + c] -= tau * v[i] * w[c];
        }
      }
    }
    std::vector<EvalValue> results;
    EMBER_ASSIGN_OR_RETURN(EvalValue r0, ToResult<S>(inst, 0, out));
    results.push_back(std::move(r0));
    return results;
  });
}

void RegisterDecompositionOps(OpTable& table) {
  table.Register(ir::Opcode::kCholesky, EvalCholesky);
  table.Register(ir::Opcode::kTriangularSolve, EvalTriangularSolve);
}

}  // namespace family_support

}  // namespace ember::eval
