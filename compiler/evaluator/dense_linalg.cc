#include "compiler/evaluator/dense_linalg.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <numeric>

namespace ember::eval::linalg {
namespace {

constexpr double kEps = DBL_EPSILON;
constexpr double kTiny = DBL_MIN;

inline double Conj(double v) { return v; }
inline Complex Conj(Complex v) { return std::conj(v); }
inline double Re(double v) { return v; }
inline double Re(Complex v) { return v.real(); }
inline double Im(double) { return 0; }
inline double Im(Complex v) { return v.imag(); }
inline double Abs2(double v) { return v * v; }
inline double Abs2(Complex v) { return std::norm(v); }
inline double Abs1(double v) { return std::abs(v); }
inline double Abs1(Complex v) { return std::abs(v.real()) + std::abs(v.imag()); }

// xLARFG: turns (alpha, x[0..m)) into (beta, v[1..m]) with H^H (alpha; x) = (beta; 0),
// H = I - tau v v^H, v[0] = 1, beta real. x is read and written with `stride`.
template <typename S>
S MakeReflector(S& alpha, S* x, int64_t m, int64_t stride) {
  double xnorm2 = 0;
  for (int64_t i = 0; i < m; ++i) xnorm2 += Abs2(x[i * stride]);
  if (xnorm2 == 0 && Im(alpha) == 0) return S(0);
  const double beta = -std::copysign(std::sqrt(Abs2(alpha) + xnorm2), Re(alpha));
  const S tau = (S(beta) - alpha) / S(beta);
  const S scale = S(1) / (alpha - S(beta));
  for (int64_t i = 0; i < m; ++i) x[i * stride] *= scale;
  alpha = S(beta);
  return tau;
}

// m := H m over rows [r0, r0 + v.size()) of m, H = I - tau v v^H (all columns from c0).
template <typename S>
void ReflectRows(Matrix<S>& m, int64_t r0, int64_t c0, const std::vector<S>& v, S tau) {
  if (tau == S(0)) return;
  const int64_t k = static_cast<int64_t>(v.size());
  // Row by row (contiguous): each column's dot product still sums its rows in order.
  std::vector<S> dot(static_cast<size_t>(m.cols - c0), S(0));
  for (int64_t i = 0; i < k; ++i) {
    const S* row = &m(r0 + i, c0);
    const S vi = Conj(v[i]);
    for (size_t j = 0; j < dot.size(); ++j) dot[j] += vi * row[j];
  }
  for (S& x : dot) x *= tau;
  for (int64_t i = 0; i < k; ++i) {
    S* row = &m(r0 + i, c0);
    for (size_t j = 0; j < dot.size(); ++j) row[j] -= v[i] * dot[j];
  }
}

// m := m H over columns [c0, c0 + v.size()) of m (rows [0, rows)).
template <typename S>
void ReflectColumns(Matrix<S>& m, int64_t rows, int64_t c0, const std::vector<S>& v, S tau) {
  if (tau == S(0)) return;
  const int64_t k = static_cast<int64_t>(v.size());
  for (int64_t i = 0; i < rows; ++i) {
    S dot = S(0);
    for (int64_t j = 0; j < k; ++j) dot += m(i, c0 + j) * v[j];
    dot *= tau;
    for (int64_t j = 0; j < k; ++j) m(i, c0 + j) -= dot * Conj(v[j]);
  }
}

// The Hermitian matrix held in one triangle of `a` (the diagonal's imaginary part ignored, as
// LAPACK does).
template <typename S>
Matrix<S> HermitianFromTriangle(const Matrix<S>& a, bool lower) {
  const int64_t n = a.rows;
  Matrix<S> w(n, n);
  for (int64_t i = 0; i < n; ++i) {
    w(i, i) = S(Re(a(i, i)));
    for (int64_t j = 0; j < i; ++j) {
      const S v = lower ? a(i, j) : Conj(a(j, i));
      w(i, j) = v;
      w(j, i) = Conj(v);
    }
  }
  return w;
}

// The rank-2 update of xHETD2 on the leading/trailing block of w at [o, o + v.size()): with
// p = tau W v, w' = p - tau/2 (p^H v) v, W -= v w'^H + w' v^H.
template <typename S>
void HermitianRank2Update(Matrix<S>& w, int64_t o, const std::vector<S>& v, S tau) {
  const int64_t k = static_cast<int64_t>(v.size());
  std::vector<S> p(static_cast<size_t>(k), S(0));
  for (int64_t i = 0; i < k; ++i) {
    S acc = S(0);
    for (int64_t j = 0; j < k; ++j) acc += w(o + i, o + j) * v[j];
    p[i] = tau * acc;
  }
  S pv = S(0);
  for (int64_t i = 0; i < k; ++i) pv += Conj(p[i]) * v[i];
  const S alpha = S(-0.5) * tau * pv;
  for (int64_t i = 0; i < k; ++i) p[i] += alpha * v[i];
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t j = 0; j < k; ++j) w(o + i, o + j) -= v[i] * Conj(p[j]) + p[i] * Conj(v[j]);
  }
  for (int64_t i = 0; i < k; ++i) w(o + i, o + i) = S(Re(w(o + i, o + i)));
}

// Sorts eigenvalues ascending, moving the columns of z with them.
template <typename S>
void SortAscending(std::vector<double>& d, Matrix<S>& z) {
  const int64_t n = static_cast<int64_t>(d.size());
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return d[a] < d[b]; });
  std::vector<double> ds(d.size());
  Matrix<S> zs(z.rows, z.cols);
  for (int64_t j = 0; j < n; ++j) {
    ds[j] = d[order[j]];
    for (int64_t i = 0; i < z.rows; ++i) zs(i, j) = z(i, order[j]);
  }
  d = std::move(ds);
  z = std::move(zs);
}

// Gram-Schmidt completion: fills the columns of q not marked `good` (and keeps the good ones)
// with unit vectors orthogonal to every other column, drawn from the standard basis.
template <typename S>
void CompleteOrthonormal(Matrix<S>& q, std::vector<bool> good) {
  const int64_t m = q.rows;
  int64_t next_basis = 0;
  std::vector<S> c(static_cast<size_t>(m));
  for (int64_t col = 0; col < q.cols; ++col) {
    if (good[col]) continue;
    while (next_basis < m) {
      for (int64_t i = 0; i < m; ++i) c[i] = S(i == next_basis ? 1 : 0);
      ++next_basis;
      for (int pass = 0; pass < 2; ++pass) {
        for (int64_t j = 0; j < q.cols; ++j) {
          if (!good[j]) continue;
          S dot = S(0);
          for (int64_t i = 0; i < m; ++i) dot += Conj(q(i, j)) * c[i];
          for (int64_t i = 0; i < m; ++i) c[i] -= dot * q(i, j);
        }
      }
      double norm2 = 0;
      for (int64_t i = 0; i < m; ++i) norm2 += Abs2(c[i]);
      if (norm2 > 0.25) {
        const double inv = 1 / std::sqrt(norm2);
        for (int64_t i = 0; i < m; ++i) q(i, col) = c[i] * inv;
        good[col] = true;
        break;
      }
    }
  }
}

// ---- Schur: QR iteration on a Hessenberg matrix -------------------------------------------------

// Complex single-shift QR with Wilkinson shifts (the order of xLAHQR's complex variant). `t` is
// upper Hessenberg; z accumulates the transformations.
bool ComplexSchurIterate(Matrix<Complex>& t, Matrix<Complex>& z) {
  const int64_t n = t.rows;
  int64_t hi = n - 1;
  int its = 0;
  while (hi > 0) {
    int64_t l = hi;
    for (; l > 0; --l) {
      const double s = Abs1(t(l - 1, l - 1)) + Abs1(t(l, l));
      if (Abs1(t(l, l - 1)) <= kEps * (s == 0 ? 1.0 : s) || Abs1(t(l, l - 1)) < kTiny) {
        t(l, l - 1) = 0;
        break;
      }
    }
    if (l == hi) {
      --hi;
      its = 0;
      continue;
    }
    if (++its > 30 * std::max<int64_t>(n, 10)) return false;
    Complex mu;
    if (its % 11 == 10) {
      mu =
          t(hi, hi) + 0.75 * std::abs(t(hi, hi - 1).real()) + 0.75 * std::abs(t(hi, hi - 1).imag());
    } else {
      const Complex a = t(hi - 1, hi - 1), b = t(hi - 1, hi), c = t(hi, hi - 1), d = t(hi, hi);
      const Complex delta = 0.5 * (a - d);
      Complex root = std::sqrt(delta * delta + b * c);
      if (std::real(std::conj(delta) * root) < 0) root = -root;
      const Complex denom = delta + root;
      mu = std::abs(denom) == 0 ? d : d - b * c / denom;
    }
    for (int64_t k = l; k < hi; ++k) {
      Complex x = k == l ? t(l, l) - mu : t(k, k - 1);
      Complex y = k == l ? t(l + 1, l) : t(k + 1, k - 1);
      const double norm = std::hypot(std::abs(x), std::abs(y));
      if (norm == 0) continue;
      double c;
      Complex s;
      if (std::abs(x) == 0) {
        c = 0;
        s = std::conj(y) / std::abs(y);
      } else {
        const Complex phase = x / std::abs(x);
        c = std::abs(x) / norm;
        s = phase * std::conj(y) / norm;
      }
      // Rows k, k+1 of t: G = [c s; -conj(s) c].
      for (int64_t j = (k > l ? k - 1 : k); j < n; ++j) {
        const Complex p = t(k, j), q = t(k + 1, j);
        t(k, j) = c * p + s * q;
        t(k + 1, j) = -std::conj(s) * p + c * q;
      }
      if (k > l) t(k + 1, k - 1) = 0;
      // Columns k, k+1 of t and z: times G^H.
      const int64_t last = std::min(k + 2, hi);
      for (int64_t i = 0; i <= last; ++i) {
        const Complex p = t(i, k), q = t(i, k + 1);
        t(i, k) = c * p + std::conj(s) * q;
        t(i, k + 1) = -s * p + c * q;
      }
      for (int64_t i = 0; i < n; ++i) {
        const Complex p = z(i, k), q = z(i, k + 1);
        z(i, k) = c * p + std::conj(s) * q;
        z(i, k + 1) = -s * p + c * q;
      }
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < i; ++j) t(i, j) = 0;
  }
  return true;
}

// xLANV2: the rotation (cs, sn) that standardizes the real 2x2 block [a b; c d]: upper triangular
// when its eigenvalues are real, equal diagonal and b*c < 0 when they are a complex pair.
void Standardize2x2(double& a, double& b, double& c, double& d, double& cs, double& sn) {
  const auto sign = [](double x, double y) { return std::copysign(std::abs(x), y); };
  if (c == 0) {
    cs = 1;
    sn = 0;
  } else if (b == 0) {
    cs = 0;
    sn = 1;
    std::swap(a, d);
    b = -c;
    c = 0;
  } else if (a - d == 0 && std::signbit(b) != std::signbit(c)) {
    cs = 1;
    sn = 0;
  } else {
    const double temp = a - d;
    double p = 0.5 * temp;
    const double bcmax = std::max(std::abs(b), std::abs(c));
    const double bcmis = std::min(std::abs(b), std::abs(c)) * sign(1.0, b) * sign(1.0, c);
    const double scale = std::max(std::abs(p), bcmax);
    double z = p / scale * p + bcmax / scale * bcmis;
    if (z >= 4 * kEps) {
      // Real eigenvalues.
      z = p + sign(std::sqrt(scale) * std::sqrt(z), p);
      a = d + z;
      d = d - bcmax / z * bcmis;
      const double tau = std::hypot(c, z);
      cs = z / tau;
      sn = c / tau;
      b = b - c;
      c = 0;
    } else {
      // Complex or nearly equal real eigenvalues: make the diagonal equal.
      const double sigma = b + c;
      const double tau = std::hypot(sigma, temp);
      cs = std::sqrt(0.5 * (1 + std::abs(sigma) / tau));
      sn = -(p / (tau * cs)) * sign(1.0, sigma);
      const double aa = a * cs + b * sn, bb = -a * sn + b * cs;
      const double cc = c * cs + d * sn, dd = -c * sn + d * cs;
      a = aa * cs + cc * sn;
      b = bb * cs + dd * sn;
      c = -aa * sn + cc * cs;
      d = -bb * sn + dd * cs;
      const double mid = 0.5 * (a + d);
      a = mid;
      d = mid;
      if (c != 0) {
        if (b != 0) {
          if (std::signbit(b) == std::signbit(c)) {
            // Real eigenvalues after all: reduce to upper triangular.
            const double sab = std::sqrt(std::abs(b)), sac = std::sqrt(std::abs(c));
            p = sign(sab * sac, c);
            const double t2 = 1 / std::sqrt(std::abs(b + c));
            a = mid + p;
            d = mid - p;
            b = b - c;
            c = 0;
            const double cs1 = sab * t2, sn1 = sac * t2;
            const double ncs = cs * cs1 - sn * sn1;
            sn = cs * sn1 + sn * cs1;
            cs = ncs;
          }
        } else {
          b = -c;
          c = 0;
          const double tmp = cs;
          cs = -sn;
          sn = tmp;
        }
      }
    }
  }
}

// Real Francis double-shift QR (the structure of EISPACK's hqr2) on the upper Hessenberg t,
// accumulating into z, ending with standardized 2x2 blocks.
bool RealSchurIterate(Matrix<double>& t, Matrix<double>& z) {
  const int64_t n = t.rows;
  double anorm = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = std::max<int64_t>(i - 1, 0); j < n; ++j) anorm += std::abs(t(i, j));
  }
  int64_t nn = n - 1;
  double shift = 0;  // exceptional shifts subtracted from the active diagonal so far
  auto rotate = [&](int64_t k, double cs, double sn) {
    for (int64_t j = k + 2; j < n; ++j) {
      const double x = t(k, j), y = t(k + 1, j);
      t(k, j) = cs * x + sn * y;
      t(k + 1, j) = cs * y - sn * x;
    }
    for (int64_t i = 0; i < k; ++i) {
      const double x = t(i, k), y = t(i, k + 1);
      t(i, k) = cs * x + sn * y;
      t(i, k + 1) = cs * y - sn * x;
    }
    for (int64_t i = 0; i < n; ++i) {
      const double x = z(i, k), y = z(i, k + 1);
      z(i, k) = cs * x + sn * y;
      z(i, k + 1) = cs * y - sn * x;
    }
  };
  int its = 0;
  while (nn >= 0) {
    int64_t l = nn;
    for (; l >= 1; --l) {
      double s = std::abs(t(l - 1, l - 1)) + std::abs(t(l, l));
      if (s == 0) s = anorm;
      if (std::abs(t(l, l - 1)) <= kEps * s || std::abs(t(l, l - 1)) < kTiny) {
        t(l, l - 1) = 0;
        break;
      }
    }
    if (l == nn) {  // one eigenvalue
      t(nn, nn) += shift;
      --nn;
      its = 0;
      continue;
    }
    if (l == nn - 1) {  // a 2x2 block
      t(nn, nn) += shift;
      t(nn - 1, nn - 1) += shift;
      double a = t(nn - 1, nn - 1), b = t(nn - 1, nn), c = t(nn, nn - 1), d = t(nn, nn);
      double cs, sn;
      Standardize2x2(a, b, c, d, cs, sn);
      t(nn - 1, nn - 1) = a;
      t(nn - 1, nn) = b;
      t(nn, nn - 1) = c;
      t(nn, nn) = d;
      rotate(nn - 1, cs, sn);
      nn -= 2;
      its = 0;
      continue;
    }
    if (++its > 30 * std::max<int64_t>(n, 10)) return false;
    double x = t(nn, nn), y = t(nn - 1, nn - 1), w = t(nn, nn - 1) * t(nn - 1, nn);
    if (its % 11 == 10) {  // exceptional shift
      shift += x;
      for (int64_t i = 0; i <= nn; ++i) t(i, i) -= x;
      const double s = std::abs(t(nn, nn - 1)) + std::abs(t(nn - 1, nn - 2));
      x = y = 0.75 * s;
      w = -0.4375 * s * s;
    }
    // The first column of (H - s1)(H - s2), looking for two small subdiagonals.
    int64_t m = nn - 2;
    double p = 0, q = 0, r = 0;
    for (; m >= l; --m) {
      const double zz = t(m, m);
      const double rr = x - zz, ss = y - zz;
      p = (rr * ss - w) / t(m + 1, m) + t(m, m + 1);
      q = t(m + 1, m + 1) - zz - rr - ss;
      r = t(m + 2, m + 1);
      const double s = std::abs(p) + std::abs(q) + std::abs(r);
      p /= s;
      q /= s;
      r /= s;
      if (m == l) break;
      const double u = std::abs(t(m, m - 1)) * (std::abs(q) + std::abs(r));
      const double v =
          std::abs(p) * (std::abs(t(m - 1, m - 1)) + std::abs(zz) + std::abs(t(m + 1, m + 1)));
      if (u <= kEps * v) break;
    }
    for (int64_t i = m + 2; i <= nn; ++i) {
      t(i, i - 2) = 0;
      if (i != m + 2) t(i, i - 3) = 0;
    }
    // The double-shift QR step: bulge chasing with 3x3 Householder reflections.
    for (int64_t k = m; k <= nn - 1; ++k) {
      if (k != m) {
        p = t(k, k - 1);
        q = t(k + 1, k - 1);
        r = k != nn - 1 ? t(k + 2, k - 1) : 0;
        x = std::abs(p) + std::abs(q) + std::abs(r);
        if (x == 0) continue;
        p /= x;
        q /= x;
        r /= x;
      }
      const double s = std::copysign(std::sqrt(p * p + q * q + r * r), p);
      if (s == 0) continue;
      if (k == m) {
        if (l != m) t(k, k - 1) = -t(k, k - 1);
      } else {
        t(k, k - 1) = -s * x;
      }
      p += s;
      x = p / s;
      y = q / s;
      const double zz = r / s;
      q /= p;
      r /= p;
      for (int64_t j = k; j < n; ++j) {  // rows k..k+2
        double pp = t(k, j) + q * t(k + 1, j);
        if (k != nn - 1) {
          pp += r * t(k + 2, j);
          t(k + 2, j) -= pp * zz;
        }
        t(k + 1, j) -= pp * y;
        t(k, j) -= pp * x;
      }
      const int64_t last = std::min(nn, k + 3);
      for (int64_t i = 0; i <= last; ++i) {  // columns k..k+2
        double pp = x * t(i, k) + y * t(i, k + 1);
        if (k != nn - 1) {
          pp += zz * t(i, k + 2);
          t(i, k + 2) -= pp * r;
        }
        t(i, k + 1) -= pp * q;
        t(i, k) -= pp;
      }
      for (int64_t i = 0; i < n; ++i) {
        double pp = x * z(i, k) + y * z(i, k + 1);
        if (k != nn - 1) {
          pp += zz * z(i, k + 2);
          z(i, k + 2) -= pp * r;
        }
        z(i, k + 1) -= pp * q;
        z(i, k) -= pp;
      }
    }
  }
  // Below the blocks everything is zero.
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j + 1 < i; ++j) t(i, j) = 0;
  }
  return true;
}

// Unit 2-norm with the largest component real (xGEEV's normalization).
void NormalizeEigenvector(std::vector<Complex>& v) {
  double norm2 = 0;
  size_t big = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    norm2 += std::norm(v[i]);
    if (std::norm(v[i]) > std::norm(v[big])) big = i;
  }
  if (norm2 == 0) return;
  const Complex scale = std::abs(v[big]) == 0 ? Complex(1) : std::conj(v[big]) / std::abs(v[big]);
  const double inv = 1 / std::sqrt(norm2);
  for (Complex& x : v) x *= scale * inv;
  v[big] = Complex(v[big].real(), 0);
}

// Eigenvectors of the upper triangular t (eigenvalue t(k,k) for vector k), mapped through z.
// Right: t x = w x by back substitution; left: x^H t = w x^H, i.e. t^H x = conj(w) x.
void TriangularEigenvectors(const Matrix<Complex>& t, const Matrix<Complex>& z, bool left,
                            Matrix<Complex>& out) {
  const int64_t n = t.rows;
  out = Matrix<Complex>(n, n);
  std::vector<Complex> x(static_cast<size_t>(n)), v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    const Complex w = t(k, k);
    const double smin = std::max(kEps * Abs1(w), kTiny);
    std::fill(x.begin(), x.end(), Complex(0));
    x[k] = 1;
    if (!left) {
      for (int64_t i = k - 1; i >= 0; --i) {
        Complex acc = 0;
        for (int64_t j = i + 1; j <= k; ++j) acc += t(i, j) * x[j];
        Complex denom = t(i, i) - w;
        if (Abs1(denom) < smin) denom = smin;
        x[i] = -acc / denom;
      }
    } else {
      for (int64_t i = k + 1; i < n; ++i) {
        Complex acc = 0;
        for (int64_t j = k; j < i; ++j) acc += std::conj(t(j, i)) * x[j];
        Complex denom = std::conj(t(i, i)) - std::conj(w);
        if (Abs1(denom) < smin) denom = smin;
        x[i] = -acc / denom;
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      Complex acc = 0;
      for (int64_t j = 0; j < n; ++j) acc += z(i, j) * x[j];
      v[i] = acc;
    }
    NormalizeEigenvector(v);
    for (int64_t i = 0; i < n; ++i) out(i, k) = v[i];
  }
}

}  // namespace

template <typename S>
Matrix<S> Matrix<S>::Identity(int64_t n) {
  Matrix<S> m(n, n);
  for (int64_t i = 0; i < n; ++i) m(i, i) = S(1);
  return m;
}

template <typename S>
void Tridiagonalize(Matrix<S>& a, bool lower, std::vector<double>& d, std::vector<double>& e,
                    std::vector<S>& taus) {
  const int64_t n = a.rows;
  d.assign(static_cast<size_t>(n), 0);
  e.assign(static_cast<size_t>(std::max<int64_t>(n - 1, 0)), 0);
  taus.assign(e.size(), S(0));
  if (n == 0) return;
  Matrix<S> w = HermitianFromTriangle(a, lower);
  std::vector<S> v;
  if (lower) {
    for (int64_t i = 0; i + 1 < n; ++i) {
      S alpha = w(i + 1, i);
      const int64_t m = n - i - 2;
      std::vector<S> x(static_cast<size_t>(m));
      for (int64_t k = 0; k < m; ++k) x[k] = w(i + 2 + k, i);
      const S tau = MakeReflector(alpha, x.data(), m, 1);
      e[i] = Re(alpha);
      v.assign(static_cast<size_t>(m + 1), S(1));
      for (int64_t k = 0; k < m; ++k) v[k + 1] = x[k];
      if (tau != S(0)) HermitianRank2Update(w, i + 1, v, tau);
      // The packed output: T's column and the reflector below it.
      a(i, i) = S(Re(w(i, i)));
      a(i + 1, i) = S(e[i]);
      for (int64_t k = 0; k < m; ++k) a(i + 2 + k, i) = x[k];
      d[i] = Re(w(i, i));
      taus[i] = tau;
    }
    d[n - 1] = Re(w(n - 1, n - 1));
    a(n - 1, n - 1) = S(d[n - 1]);
  } else {
    for (int64_t i = n - 2; i >= 0; --i) {
      S alpha = w(i, i + 1);
      const int64_t m = i;
      std::vector<S> x(static_cast<size_t>(m));
      for (int64_t k = 0; k < m; ++k) x[k] = w(k, i + 1);
      const S tau = MakeReflector(alpha, x.data(), m, 1);
      e[i] = Re(alpha);
      v.assign(static_cast<size_t>(m + 1), S(1));
      for (int64_t k = 0; k < m; ++k) v[k] = x[k];
      if (tau != S(0)) HermitianRank2Update(w, 0, v, tau);
      a(i + 1, i + 1) = S(Re(w(i + 1, i + 1)));
      a(i, i + 1) = S(e[i]);
      for (int64_t k = 0; k < m; ++k) a(k, i + 1) = x[k];
      d[i + 1] = Re(w(i + 1, i + 1));
      taus[i] = tau;
    }
    d[0] = Re(w(0, 0));
    a(0, 0) = S(d[0]);
  }
}

template <typename S>
Matrix<S> TridiagonalQ(const Matrix<S>& packed, bool lower, const std::vector<S>& taus) {
  const int64_t n = packed.rows;
  Matrix<S> q = Matrix<S>::Identity(n);
  std::vector<S> v;
  if (lower) {
    // Q = H(0) H(1) ... H(n-2); H(i) acts on rows i+1.. with v stored below the subdiagonal.
    for (int64_t i = n - 2; i >= 0; --i) {
      v.assign(static_cast<size_t>(n - i - 1), S(1));
      for (int64_t k = 1; k < n - i - 1; ++k) v[k] = packed(i + 1 + k, i);
      ReflectRows(q, i + 1, 0, v, taus[i]);
    }
  } else {
    // Q = H(n-2) ... H(0); H(i) acts on rows 0..i with v stored above the superdiagonal.
    for (int64_t i = 0; i + 1 < n; ++i) {
      v.assign(static_cast<size_t>(i + 1), S(1));
      for (int64_t k = 0; k < i; ++k) v[k] = packed(k, i + 1);
      ReflectRows(q, 0, 0, v, taus[i]);
    }
  }
  return q;
}

template <typename S>
void Hessenberg(Matrix<S>& a, std::vector<S>& taus) {
  const int64_t n = a.rows;
  taus.assign(static_cast<size_t>(std::max<int64_t>(n - 1, 0)), S(0));
  std::vector<S> v;
  for (int64_t i = 0; i + 1 < n; ++i) {
    S alpha = a(i + 1, i);
    const int64_t m = n - i - 2;
    S* x = m > 0 ? &a(i + 2, i) : nullptr;
    const S tau = MakeReflector(alpha, x, m, a.cols);
    v.assign(static_cast<size_t>(m + 1), S(1));
    for (int64_t k = 0; k < m; ++k) v[k + 1] = a(i + 2 + k, i);
    // A := H^H A H on the trailing part (xGEHD2: right on rows 0.., left on columns i+1..).
    ReflectColumns(a, n, i + 1, v, tau);
    ReflectRows(a, i + 1, i + 1, v, Conj(tau));
    a(i + 1, i) = alpha;
    taus[i] = tau;
  }
}

template <typename S>
Matrix<S> HessenbergQ(const Matrix<S>& packed, const std::vector<S>& taus) {
  return TridiagonalQ(packed, /*lower=*/true, taus);
}

template <typename S>
bool TridiagonalEigen(std::vector<double>& d, std::vector<double> e, Matrix<S>& z) {
  const int64_t n = static_cast<int64_t>(d.size());
  if (n == 0) return true;
  // The rotations act on pairs of columns of z: they run on the rows of its transpose zc, in
  // contiguous memory, and z is written back once at the end.
  Matrix<S> zc(z.cols, z.rows);
  for (int64_t k = 0; k < z.rows; ++k) {
    for (int64_t j = 0; j < z.cols; ++j) zc(j, k) = z(k, j);
  }
  auto write_back = [&] {
    for (int64_t k = 0; k < z.rows; ++k) {
      for (int64_t j = 0; j < z.cols; ++j) z(k, j) = zc(j, k);
    }
  };
  e.resize(static_cast<size_t>(n), 0.0);
  e[n - 1] = 0;
  for (int64_t l = 0; l < n; ++l) {
    int iter = 0;
    int64_t m;
    do {
      for (m = l; m < n - 1; ++m) {
        const double dd = std::abs(d[m]) + std::abs(d[m + 1]);
        if (std::abs(e[m]) <= kEps * dd || std::abs(e[m]) < kTiny) break;
      }
      if (m != l) {
        if (iter++ == 60) {
          write_back();
          return false;
        }
        double g = (d[l + 1] - d[l]) / (2 * e[l]);
        double r = std::hypot(g, 1.0);
        g = d[m] - d[l] + e[l] / (g + std::copysign(r, g));
        double s = 1, c = 1, p = 0;
        int64_t i = m - 1;
        bool underflow = false;
        for (; i >= l; --i) {
          double f = s * e[i];
          const double b = c * e[i];
          r = std::hypot(f, g);
          e[i + 1] = r;
          if (r == 0) {
            d[i + 1] -= p;
            e[m] = 0;
            underflow = true;
            break;
          }
          s = f / r;
          c = g / r;
          g = d[i + 1] - p;
          r = (d[i] - g) * s + 2 * c * b;
          p = s * r;
          d[i + 1] = g + p;
          g = c * r - b;
          S* zi = &zc(i, 0);
          S* zi1 = &zc(i + 1, 0);
          for (int64_t k = 0; k < z.rows; ++k) {
            const S zk1 = zi1[k];
            zi1[k] = S(s) * zi[k] + S(c) * zk1;
            zi[k] = S(c) * zi[k] - S(s) * zk1;
          }
        }
        if (underflow) continue;
        d[l] -= p;
        e[l] = g;
        e[m] = 0;
      }
    } while (m != l);
  }
  write_back();
  SortAscending(d, z);
  return true;
}

template <typename S>
bool HermitianEigen(const Matrix<S>& a, bool lower, std::vector<double>& w, Matrix<S>& v) {
  Matrix<S> packed = a;
  std::vector<double> e;
  std::vector<S> taus;
  Tridiagonalize(packed, lower, w, e, taus);
  v = TridiagonalQ(packed, lower, taus);
  return TridiagonalEigen(w, e, v);
}

template <typename S>
bool SingularValues(const Matrix<S>& a, bool full, std::vector<double>& s, Matrix<S>& u,
                    Matrix<S>& vt) {
  const int64_t m = a.rows, n = a.cols;
  if (m < n) {
    // a^H = U' S V'^H, so a = V' S U'^H.
    Matrix<S> ah(n, m);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) ah(j, i) = Conj(a(i, j));
    }
    Matrix<S> u2, vt2;
    if (!SingularValues(ah, full, s, u2, vt2)) return false;
    u = Matrix<S>(vt2.cols, vt2.rows);
    for (int64_t i = 0; i < vt2.rows; ++i) {
      for (int64_t j = 0; j < vt2.cols; ++j) u(j, i) = Conj(vt2(i, j));
    }
    vt = Matrix<S>(u2.cols, u2.rows);
    for (int64_t i = 0; i < u2.rows; ++i) {
      for (int64_t j = 0; j < u2.cols; ++j) vt(j, i) = Conj(u2(i, j));
    }
    return true;
  }
  // m >= n: rotate pairs of columns of w = a v until they are orthogonal. The columns of w and
  // v are kept as the rows of wc and vc, so each rotation streams through contiguous memory.
  Matrix<S> wc(n, m);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) wc(j, i) = a(i, j);
  }
  Matrix<S> vc = Matrix<S>::Identity(n);
  auto rotate = [](S* x_row, S* y_row, int64_t len, double c, double sn, S back) {
    for (int64_t i = 0; i < len; ++i) {
      const S x = x_row[i], y = y_row[i] * back;
      x_row[i] = c * x - sn * y;
      y_row[i] = sn * x + c * y;
    }
  };
  bool converged = n < 2;
  for (int sweep = 0; sweep < 100 && !converged; ++sweep) {
    bool rotated = false;
    for (int64_t p = 0; p + 1 < n; ++p) {
      S* wp = &wc(p, 0);
      for (int64_t q = p + 1; q < n; ++q) {
        S* wq = &wc(q, 0);
        double alpha = 0, beta = 0;
        S gamma = S(0);
        for (int64_t i = 0; i < m; ++i) {
          alpha += Abs2(wp[i]);
          beta += Abs2(wq[i]);
          gamma += Conj(wp[i]) * wq[i];
        }
        const double g = std::abs(gamma);
        if (g == 0 || g <= kEps * std::sqrt(alpha * beta)) continue;
        rotated = true;
        const S phase = gamma / S(g);
        const double zeta = (beta - alpha) / (2 * g);
        const double t = std::copysign(1.0, zeta) / (std::abs(zeta) + std::sqrt(1 + zeta * zeta));
        const double c = 1 / std::sqrt(1 + t * t), sn = c * t;
        const S back = Conj(phase);
        rotate(wp, wq, m, c, sn, back);
        rotate(&vc(p, 0), &vc(q, 0), n, c, sn, back);
      }
    }
    converged = !rotated;
  }
  if (!converged) return false;
  std::vector<double> norms(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    double acc = 0;
    for (int64_t i = 0; i < m; ++i) acc += Abs2(wc(j, i));
    norms[j] = std::sqrt(acc);
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t x, int64_t y) { return norms[x] > norms[y]; });
  const double largest = n > 0 ? norms[order[0]] : 0;
  s.assign(static_cast<size_t>(n), 0);
  u = Matrix<S>(m, full ? m : n);
  std::vector<bool> good(static_cast<size_t>(u.cols), false);
  for (int64_t j = 0; j < n; ++j) {
    const int64_t src = order[j];
    s[j] = norms[src];
    if (s[j] > 0 && s[j] > largest * kEps * static_cast<double>(m)) {
      for (int64_t i = 0; i < m; ++i) u(i, j) = wc(src, i) / S(s[j]);
      good[j] = true;
    }
  }
  CompleteOrthonormal(u, good);
  vt = Matrix<S>(n, n);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < n; ++i) vt(j, i) = Conj(vc(order[j], i));
  }
  return true;
}

// The upper Hessenberg form t of a (below the subdiagonal exactly zero) and the z it came from.
template <typename S>
void HessenbergForm(const Matrix<S>& a, Matrix<S>& t, Matrix<S>& z) {
  t = a;
  std::vector<S> taus;
  Hessenberg(t, taus);
  z = HessenbergQ(t, taus);
  for (int64_t i = 0; i < t.rows; ++i) {
    for (int64_t j = 0; j + 1 < i; ++j) t(i, j) = S(0);
  }
}

template <>
bool Schur<double>(const Matrix<double>& a, Matrix<double>& t, Matrix<double>& z) {
  HessenbergForm(a, t, z);
  return RealSchurIterate(t, z);
}

template <>
bool Schur<Complex>(const Matrix<Complex>& a, Matrix<Complex>& t, Matrix<Complex>& z) {
  HessenbergForm(a, t, z);
  return ComplexSchurIterate(t, z);
}

template <>
bool GeneralEigen<Complex>(const Matrix<Complex>& a, bool left, bool right, std::vector<Complex>& w,
                           Matrix<Complex>& vl, Matrix<Complex>& vr) {
  Matrix<Complex> t, z;
  if (!Schur(a, t, z)) return false;
  const int64_t n = a.rows;
  w.resize(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) w[k] = t(k, k);
  if (left) TriangularEigenvectors(t, z, /*left=*/true, vl);
  if (right) TriangularEigenvectors(t, z, /*left=*/false, vr);
  return true;
}

template <>
bool GeneralEigen<double>(const Matrix<double>& a, bool left, bool right, std::vector<Complex>& w,
                          Matrix<Complex>& vl, Matrix<Complex>& vr) {
  Matrix<double> t, z;
  if (!Schur(a, t, z)) return false;
  const int64_t n = a.rows;
  w.resize(static_cast<size_t>(n));
  // Complex triangular form: each standardized 2x2 block [x b; c x] (a pair x +- i mu) is
  // triangularized by a unitary g whose first column is the block's eigenvector for x + i mu.
  Matrix<Complex> tc(n, n), zc(n, n);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      tc(i, j) = t(i, j);
      zc(i, j) = z(i, j);
    }
  }
  std::vector<bool> pair_start(static_cast<size_t>(n), false);
  for (int64_t k = 0; k < n;) {
    if (k + 1 < n && t(k + 1, k) != 0) {
      const double x = t(k, k), b = t(k, k + 1), c = t(k + 1, k);
      const double mu = std::sqrt(std::abs(b)) * std::sqrt(std::abs(c));
      w[k] = Complex(x, mu);
      w[k + 1] = Complex(x, -mu);
      Complex u0 = b, u1 = Complex(0, mu);
      const double norm = std::hypot(std::abs(u0), std::abs(u1));
      u0 /= norm;
      u1 /= norm;
      // g = [u0 -conj(u1); u1 conj(u0)]: rows k, k+1 := g^H rows; columns := columns g.
      for (int64_t j = 0; j < n; ++j) {
        const Complex p = tc(k, j), q = tc(k + 1, j);
        tc(k, j) = std::conj(u0) * p + std::conj(u1) * q;
        tc(k + 1, j) = -u1 * p + u0 * q;
      }
      for (int64_t i = 0; i < n; ++i) {
        const Complex p = tc(i, k), q = tc(i, k + 1);
        tc(i, k) = p * u0 + q * u1;
        tc(i, k + 1) = -p * std::conj(u1) + q * std::conj(u0);
        const Complex pz = zc(i, k), qz = zc(i, k + 1);
        zc(i, k) = pz * u0 + qz * u1;
        zc(i, k + 1) = -pz * std::conj(u1) + qz * std::conj(u0);
      }
      tc(k + 1, k) = 0;
      tc(k, k) = w[k];
      tc(k + 1, k + 1) = w[k + 1];
      pair_start[k] = true;
      k += 2;
    } else {
      w[k] = t(k, k);
      ++k;
    }
  }
  auto vectors = [&](bool is_left, Matrix<Complex>& out) {
    TriangularEigenvectors(tc, zc, is_left, out);
    // The second vector of a pair is the conjugate of the first, exactly, as in xGEEV.
    for (int64_t k = 0; k + 1 < n; ++k) {
      if (!pair_start[k]) continue;
      for (int64_t i = 0; i < n; ++i) out(i, k + 1) = std::conj(out(i, k));
    }
    // Real eigenvalues of a real matrix have real eigenvectors.
    for (int64_t k = 0; k < n; ++k) {
      if (w[k].imag() != 0) continue;
      for (int64_t i = 0; i < n; ++i) out(i, k) = Complex(out(i, k).real(), 0);
    }
  };
  if (left) vectors(true, vl);
  if (right) vectors(false, vr);
  return true;
}

template <typename S>
void LuFactor(Matrix<S>& a, std::vector<int32_t>& pivots) {
  const int64_t k = std::min(a.rows, a.cols);
  pivots.assign(static_cast<size_t>(k), 0);
  for (int64_t j = 0; j < k; ++j) {
    // LAPACK's I*AMAX: the first largest (a NaN is never larger; a NaN first stays).
    int64_t p = j;
    double best = Abs1(a(j, j));
    for (int64_t i = j + 1; i < a.rows; ++i) {
      if (Abs1(a(i, j)) > best) {
        best = Abs1(a(i, j));
        p = i;
      }
    }
    pivots[static_cast<size_t>(j)] = static_cast<int32_t>(p);
    if (a(p, j) != S(0)) {
      if (p != j) {
        for (int64_t c = 0; c < a.cols; ++c) std::swap(a(p, c), a(j, c));
      }
      const S inverse = S(1) / a(j, j);
      for (int64_t i = j + 1; i < a.rows; ++i) a(i, j) *= inverse;
    }
    for (int64_t i = j + 1; i < a.rows; ++i) {
      const S l = a(i, j);
      if (l == S(0)) continue;
      for (int64_t c = j + 1; c < a.cols; ++c) a(i, c) -= l * a(j, c);
    }
  }
}

template struct Matrix<double>;
template struct Matrix<Complex>;
template void LuFactor(Matrix<double>&, std::vector<int32_t>&);
template void LuFactor(Matrix<Complex>&, std::vector<int32_t>&);
template void Tridiagonalize(Matrix<double>&, bool, std::vector<double>&, std::vector<double>&,
                             std::vector<double>&);
template void Tridiagonalize(Matrix<Complex>&, bool, std::vector<double>&, std::vector<double>&,
                             std::vector<Complex>&);
template Matrix<double> TridiagonalQ(const Matrix<double>&, bool, const std::vector<double>&);
template Matrix<Complex> TridiagonalQ(const Matrix<Complex>&, bool, const std::vector<Complex>&);
template void Hessenberg(Matrix<double>&, std::vector<double>&);
template void Hessenberg(Matrix<Complex>&, std::vector<Complex>&);
template Matrix<double> HessenbergQ(const Matrix<double>&, const std::vector<double>&);
template Matrix<Complex> HessenbergQ(const Matrix<Complex>&, const std::vector<Complex>&);
template bool TridiagonalEigen(std::vector<double>&, std::vector<double>, Matrix<double>&);
template bool TridiagonalEigen(std::vector<double>&, std::vector<double>, Matrix<Complex>&);
template bool HermitianEigen(const Matrix<double>&, bool, std::vector<double>&, Matrix<double>&);
template bool HermitianEigen(const Matrix<Complex>&, bool, std::vector<double>&, Matrix<Complex>&);
template bool SingularValues(const Matrix<double>&, bool, std::vector<double>&, Matrix<double>&,
                             Matrix<double>&);
template bool SingularValues(const Matrix<Complex>&, bool, std::vector<double>&, Matrix<Complex>&,
                             Matrix<Complex>&);

}  // namespace ember::eval::linalg
