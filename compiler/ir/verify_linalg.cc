// Verifier checks of the linear-algebra ops: dot, dot_general, convolution (result shape
// inferred from dimension numbers, window and group counts), triangular_solve, cholesky, fft.
#include <set>
#include <string>
#include <vector>

#include "compiler/ir/verifier_internal.h"

namespace ember::ir::verifier {
namespace {

#define RETURN_IF_ERROR(expr)                          \
  do {                                                 \
    if (absl::Status s_ = (expr); !s_.ok()) return s_; \
  } while (0)
#define ASSIGN_OR_RETURN(lhs, expr)                   \
  auto lhs##_or = (expr);                             \
  if (!lhs##_or.ok()) return lhs##_or.status();       \
  auto lhs = *std::move(lhs##_or)

absl::Status Precision(const OpChecker& c) {
  const Attribute* p = c.inst().attribute("precision_config");
  if (p == nullptr) return absl::OkStatus();
  if (p->kind != Attribute::Kind::kList || p->list.size() > 2) {
    return c.Error("precision_config must list at most 2 precisions");
  }
  for (const Attribute& e : p->list) {
    if (e.kind != Attribute::Kind::kString ||
        (e.s != "DEFAULT" && e.s != "HIGH" && e.s != "HIGHEST")) {
      return c.Error("precision_config holds ", e.ToString(),
                     ", not one of DEFAULT, HIGH, HIGHEST");
    }
  }
  return absl::OkStatus();
}

absl::Status DotGeneral(const OpChecker& c) {
  RETURN_IF_ERROR(c.OperandCount(2));
  RETURN_IF_ERROR(c.ResultCount(1));
  RETURN_IF_ERROR(c.AllTensors());
  const std::vector<int64_t>& lhs = c.operand(0).dims();
  const std::vector<int64_t>& rhs = c.operand(1).dims();
  const int64_t lrank = static_cast<int64_t>(lhs.size());
  const int64_t rrank = static_cast<int64_t>(rhs.size());
  const std::vector<int64_t> lb = c.IntsOr("lhs_batching_dimensions", {});
  const std::vector<int64_t> rb = c.IntsOr("rhs_batching_dimensions", {});
  const std::vector<int64_t> lc = c.IntsOr("lhs_contracting_dimensions", {});
  const std::vector<int64_t> rc = c.IntsOr("rhs_contracting_dimensions", {});
  if (lb.size() != rb.size()) {
    return c.Error("lhs_batching_dimensions and rhs_batching_dimensions have different sizes ",
                   lb.size(), " and ", rb.size());
  }
  if (lc.size() != rc.size()) {
    return c.Error("lhs_contracting_dimensions and rhs_contracting_dimensions have different ",
                   "sizes ", lc.size(), " and ", rc.size());
  }
  RETURN_IF_ERROR(c.DimsInRange("lhs_batching_dimensions", lb, lrank));
  RETURN_IF_ERROR(c.DimsInRange("lhs_contracting_dimensions", lc, lrank));
  RETURN_IF_ERROR(c.DimsInRange("rhs_batching_dimensions", rb, rrank));
  RETURN_IF_ERROR(c.DimsInRange("rhs_contracting_dimensions", rc, rrank));
  std::vector<int64_t> lall = lb, rall = rb;
  lall.insert(lall.end(), lc.begin(), lc.end());
  rall.insert(rall.end(), rc.begin(), rc.end());
  RETURN_IF_ERROR(c.DimsUnique("lhs batching and contracting dimensions", lall));
  RETURN_IF_ERROR(c.DimsUnique("rhs batching and contracting dimensions", rall));
  for (size_t i = 0; i < lb.size(); ++i) {
    if (lhs[lb[i]] != rhs[rb[i]]) {
      return c.Error("batching dimension sizes differ: lhs dimension ", lb[i], " is ",
                     lhs[lb[i]], ", rhs dimension ", rb[i], " is ", rhs[rb[i]]);
    }
  }
  for (size_t i = 0; i < lc.size(); ++i) {
    if (lhs[lc[i]] != rhs[rc[i]]) {
      return c.Error("contracting dimension sizes differ: lhs dimension ", lc[i], " is ",
                     lhs[lc[i]], ", rhs dimension ", rc[i], " is ", rhs[rc[i]]);
    }
  }
  RETURN_IF_ERROR(Precision(c));
  std::vector<int64_t> out;
  for (int64_t d : lb) out.push_back(lhs[d]);
  const std::set<int64_t> lused(lall.begin(), lall.end()), rused(rall.begin(), rall.end());
  for (int64_t i = 0; i < lrank; ++i) {
    if (!lused.count(i)) out.push_back(lhs[i]);
  }
  for (int64_t i = 0; i < rrank; ++i) {
    if (!rused.count(i)) out.push_back(rhs[i]);
  }
  if (IsComplex(c.operand(0).element_type()) != IsComplex(c.result().element_type())) {
    return c.Error("result element type ", std::string(ElementTypeName(c.result().element_type())),
                   " does not fit operand element type ",
                   std::string(ElementTypeName(c.operand(0).element_type())));
  }
  return c.ResultDims(0, out);
}

absl::Status Dot(const OpChecker& c) {
  RETURN_IF_ERROR(c.OperandCount(2));
  RETURN_IF_ERROR(c.ResultCount(1));
  RETURN_IF_ERROR(c.AllTensors());
  const std::vector<int64_t>& lhs = c.operand(0).dims();
  const std::vector<int64_t>& rhs = c.operand(1).dims();
  if (lhs.empty() || lhs.size() > 2 || rhs.empty() || rhs.size() > 2) {
    return c.Error("operands must have rank 1 or 2, got ", lhs.size(), " and ", rhs.size());
  }
  if (lhs.back() != rhs.front()) {
    return c.Error("contracting dimension sizes differ: ", lhs.back(), " and ", rhs.front());
  }
  RETURN_IF_ERROR(Precision(c));
  std::vector<int64_t> out;
  if (lhs.size() == 2) out.push_back(lhs[0]);
  if (rhs.size() == 2) out.push_back(rhs[1]);
  return c.ResultDims(0, out);
}

absl::Status Convolution(const OpChecker& c) {
  RETURN_IF_ERROR(c.OperandCount(2));
  RETURN_IF_ERROR(c.ResultCount(1));
  RETURN_IF_ERROR(c.AllTensors());
  const std::vector<int64_t>& lhs = c.operand(0).dims();
  const std::vector<int64_t>& rhs = c.operand(1).dims();
  const int64_t rank = static_cast<int64_t>(lhs.size());
  if (static_cast<int64_t>(rhs.size()) != rank || c.result().dims().size() != lhs.size()) {
    return c.Error("lhs, rhs and result must have the same rank, got ", lhs.size(), ", ",
                   rhs.size(), " and ", c.result().dims().size());
  }
  ASSIGN_OR_RETURN(ib, c.Int("input_batch_dimension"));
  ASSIGN_OR_RETURN(ifd, c.Int("input_feature_dimension"));
  ASSIGN_OR_RETURN(is, c.Ints("input_spatial_dimensions"));
  ASSIGN_OR_RETURN(kif, c.Int("kernel_input_feature_dimension"));
  ASSIGN_OR_RETURN(kof, c.Int("kernel_output_feature_dimension"));
  ASSIGN_OR_RETURN(ks, c.Ints("kernel_spatial_dimensions"));
  ASSIGN_OR_RETURN(ob, c.Int("output_batch_dimension"));
  ASSIGN_OR_RETURN(of, c.Int("output_feature_dimension"));
  ASSIGN_OR_RETURN(os, c.Ints("output_spatial_dimensions"));
  const size_t n = static_cast<size_t>(rank - 2);
  if (rank < 2) return c.Error("operands must have rank at least 2, got ", rank);
  RETURN_IF_ERROR(c.SizeIs("input_spatial_dimensions", is, n, "rank - 2"));
  RETURN_IF_ERROR(c.SizeIs("kernel_spatial_dimensions", ks, n, "rank - 2"));
  RETURN_IF_ERROR(c.SizeIs("output_spatial_dimensions", os, n, "rank - 2"));
  std::vector<int64_t> in = is, kn = ks, out = os;
  in.insert(in.begin(), {ib, ifd});
  kn.insert(kn.begin(), {kif, kof});
  out.insert(out.begin(), {ob, of});
  RETURN_IF_ERROR(c.DimsInRange("input dimensions", in, rank));
  RETURN_IF_ERROR(c.DimsUnique("input dimensions", in));
  RETURN_IF_ERROR(c.DimsInRange("kernel dimensions", kn, rank));
  RETURN_IF_ERROR(c.DimsUnique("kernel dimensions", kn));
  RETURN_IF_ERROR(c.DimsInRange("output dimensions", out, rank));
  RETURN_IF_ERROR(c.DimsUnique("output dimensions", out));
  const int64_t fgc = c.IntOr("feature_group_count", 1);
  const int64_t bgc = c.IntOr("batch_group_count", 1);
  if (fgc <= 0) return c.Error("feature_group_count = ", fgc, " must be positive");
  if (bgc <= 0) return c.Error("batch_group_count = ", bgc, " must be positive");
  if (fgc != 1 && bgc != 1) return c.Error("feature_group_count and batch_group_count are both > 1");
  if (lhs[ifd] % fgc != 0) {
    return c.Error("input feature size ", lhs[ifd], " is not a multiple of feature_group_count ", fgc);
  }
  if (lhs[ifd] / fgc != rhs[kif]) {
    return c.Error("input feature size ", lhs[ifd], " / feature_group_count ", fgc,
                   " differs from kernel input feature size ", rhs[kif]);
  }
  if (rhs[kof] % fgc != 0) {
    return c.Error("kernel output feature size ", rhs[kof],
                   " is not a multiple of feature_group_count ", fgc);
  }
  if (lhs[ib] % bgc != 0) {
    return c.Error("input batch size ", lhs[ib], " is not a multiple of batch_group_count ", bgc);
  }
  if (rhs[kof] % bgc != 0) {
    return c.Error("kernel output feature size ", rhs[kof],
                   " is not a multiple of batch_group_count ", bgc);
  }
  const std::vector<int64_t> strides = c.IntsOr("window_strides", std::vector<int64_t>(n, 1));
  const std::vector<int64_t> padding = c.IntsOr("padding", std::vector<int64_t>(2 * n, 0));
  const std::vector<int64_t> ldil = c.IntsOr("lhs_dilation", std::vector<int64_t>(n, 1));
  const std::vector<int64_t> rdil = c.IntsOr("rhs_dilation", std::vector<int64_t>(n, 1));
  RETURN_IF_ERROR(c.SizeIs("window_strides", strides, n, "one per spatial dimension"));
  RETURN_IF_ERROR(c.SizeIs("padding", padding, 2 * n, "a (low, high) pair per spatial dimension"));
  RETURN_IF_ERROR(c.SizeIs("lhs_dilation", ldil, n, "one per spatial dimension"));
  RETURN_IF_ERROR(c.SizeIs("rhs_dilation", rdil, n, "one per spatial dimension"));
  if (const Attribute* rev = c.inst().attribute("window_reversal");
      rev != nullptr && rev->kind == Attribute::Kind::kBools && rev->bools.size() != n) {
    return c.Error("window_reversal has ", rev->bools.size(), " elements, expected ", n);
  }
  std::vector<int64_t> result(lhs.size());
  result[ob] = lhs[ib] / bgc;
  result[of] = rhs[kof];
  for (size_t i = 0; i < n; ++i) {
    if (strides[i] <= 0) return c.Error("window_strides[", i, "] = ", strides[i], " must be positive");
    if (ldil[i] <= 0) return c.Error("lhs_dilation[", i, "] = ", ldil[i], " must be positive");
    if (rdil[i] <= 0) return c.Error("rhs_dilation[", i, "] = ", rdil[i], " must be positive");
    const int64_t window = rhs[ks[i]];
    if (window == 0) {
      // An empty window (dilated size 0): as the spec's formula reads with window size 0.
      int64_t dilated = 0, padded = 0;
      if (lhs[is[i]] > 0 && (__builtin_mul_overflow(lhs[is[i]] - 1, ldil[i], &dilated) ||
                             __builtin_add_overflow(dilated, 1, &dilated))) {
        return c.Error("dimension ", i, ": the dilated input overflows int64");
      }
      if (__builtin_add_overflow(dilated, padding[2 * i], &padded) ||
          __builtin_add_overflow(padded, padding[2 * i + 1], &padded)) {
        return c.Error("dimension ", i, ": the padded input overflows int64");
      }
      result[os[i]] = padded <= 0 ? 0 : padded / strides[i] + 1;
      continue;
    }
    absl::StatusOr<int64_t> count = c.WindowCount(i, lhs[is[i]], ldil[i], padding[2 * i],
                                                  padding[2 * i + 1], window, rdil[i], strides[i]);
    if (!count.ok()) return count.status();
    result[os[i]] = *count;
  }
  RETURN_IF_ERROR(Precision(c));
  return c.ResultDims(0, result);
}

absl::Status TriangularSolve(const OpChecker& c) {
  RETURN_IF_ERROR(c.OperandCount(2));
  RETURN_IF_ERROR(c.ResultCount(1));
  RETURN_IF_ERROR(c.AllTensors());
  const std::vector<int64_t>& a = c.operand(0).dims();
  const std::vector<int64_t>& b = c.operand(1).dims();
  if (a.size() < 2 || a.size() != b.size()) {
    return c.Error("a and b must have the same rank of at least 2, got ", a.size(), " and ", b.size());
  }
  const size_t r = a.size();
  if (a[r - 1] != a[r - 2]) return c.Error("a must be square in its last two dimensions");
  for (size_t i = 0; i + 2 < r; ++i) {
    if (a[i] != b[i]) return c.Error("batch dimension ", i, " of a and b differ");
  }
  const bool left = c.BoolOr("left_side", false);
  if ((left ? b[r - 2] : b[r - 1]) != a[r - 1]) {
    return c.Error("b dimension ", left ? r - 2 : r - 1, " must match a's size ", a[r - 1]);
  }
  if (!IsFloat(c.operand(0).element_type()) && !IsComplex(c.operand(0).element_type())) {
    return c.Error("element type ", std::string(ElementTypeName(c.operand(0).element_type())),
                   " is not supported (expected float or complex)");
  }
  ASSIGN_OR_RETURN(t, c.String("transpose_a"));
  if (t != "NO_TRANSPOSE" && t != "TRANSPOSE" && t != "ADJOINT") {
    return c.Error("transpose_a ", t, " is not one of NO_TRANSPOSE, TRANSPOSE, ADJOINT");
  }
  if (c.operand(0).element_type() != c.operand(1).element_type()) {
    return c.Error("a and b have different element types");
  }
  return c.ResultIs(0, c.operand(1));
}

absl::Status Fft(const OpChecker& c) {
  RETURN_IF_ERROR(c.OperandCount(1));
  RETURN_IF_ERROR(c.ResultCount(1));
  RETURN_IF_ERROR(c.AllTensors());
  ASSIGN_OR_RETURN(type, c.String("fft_type"));
  ASSIGN_OR_RETURN(length, c.Ints("fft_length"));
  if (length.empty() || length.size() > 3) {
    return c.Error("fft_length must have 1 to 3 elements, got ", length.size());
  }
  const std::vector<int64_t>& in = c.operand(0).dims();
  if (in.size() < length.size()) return c.Error("operand rank is smaller than fft_length's size");
  const ElementType et = c.operand(0).element_type();
  ElementType out_type = et;
  if (type == "FFT" || type == "IFFT") {
    if (!IsComplex(et)) return c.Error(type, " needs a complex operand");
  } else if (type == "RFFT") {
    if (!IsFloat(et)) return c.Error("RFFT needs a float operand");
    out_type = et == ElementType::kF64 ? ElementType::kC128 : ElementType::kC64;
  } else if (type == "IRFFT") {
    if (!IsComplex(et)) return c.Error("IRFFT needs a complex operand");
    out_type = et == ElementType::kC128 ? ElementType::kF64 : ElementType::kF32;
  } else {
    return c.Error("fft_type ", type, " is not one of FFT, IFFT, RFFT, IRFFT");
  }
  // The transformed (full, complex) sizes are fft_length on the last axes (C3, C5); the real
  // side of RFFT/IRFFT has them, the complex side L / 2 + 1 on the last axis (C6).
  const size_t r = in.size(), l = length.size();
  std::vector<int64_t> full = in;
  for (size_t i = 0; i < l; ++i) {
    if (length[i] < 0) return c.Error("fft_length[", i, "] = ", length[i], " is negative");
    full[r - l + i] = length[i];
  }
  std::vector<int64_t> expect_in = full, out = full;
  if (type == "RFFT") out.back() = length.back() / 2 + 1;
  if (type == "IRFFT") expect_in.back() = length.back() / 2 + 1;
  if (in != expect_in) {
    return c.Error(type, " with fft_length ", Dims(length), " takes an operand of dims ",
                   Dims(expect_in), ", got ", c.operand(0).ToString());
  }
  return c.ResultIs(0, TensorOf(out_type, out));
}

}  // namespace

absl::Status VerifyLinalg(const OpChecker& c) {
  switch (c.opcode()) {
    case Opcode::kDotGeneral: return DotGeneral(c);
    case Opcode::kDot: return Dot(c);
    case Opcode::kConvolution: return Convolution(c);
    case Opcode::kTriangularSolve: return TriangularSolve(c);
    case Opcode::kCholesky: {
      RETURN_IF_ERROR(c.OperandCount(1));
      RETURN_IF_ERROR(c.ResultCount(1));
      RETURN_IF_ERROR(c.AllTensors());
      const std::vector<int64_t>& a = c.operand(0).dims();
      if (a.size() < 2 || a[a.size() - 1] != a[a.size() - 2]) {
        return c.Error("a must be square in its last two dimensions, got ", c.operand(0).ToString());
      }
      const ElementType e = c.operand(0).element_type();
      if (!IsFloat(e) && !IsComplex(e)) {
        return c.Error("element type ", std::string(ElementTypeName(e)),
                       " is not supported (expected float or complex)");
      }
      return c.ResultIs(0, c.operand(0));
    }
    case Opcode::kFft: return Fft(c);
    default: return absl::OkStatus();
  }
}

}  // namespace ember::ir::verifier
