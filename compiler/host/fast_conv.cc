#include "compiler/host/fast_conv.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/evaluator/eval_family_support.h"
#include "compiler/host/fast_gemm.h"
#include "compiler/host/thread_scratch.h"
#include "compiler/host/widen_to_f32.h"

namespace ember::host::fast {
namespace {

namespace fs = eval::family_support;

bool IsRowMajor(const ir::ValueType& t) {
  absl::StatusOr<ir::Shape> plain = ir::Shape::Make(t.element_type(), t.dims());
  return plain.ok() && *plain == t.shape();
}

std::vector<int64_t> DenseStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * dims[d + 1];
  }
  return strides;
}

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// Visits every index of `dims` in row-major order, calling fn(linear, offset) where offset is
// sum index[d] * strides[d].
template <typename Fn>
void ForEachIndex(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, Fn fn) {
  const size_t rank = dims.size();
  const int64_t total = Product(dims);
  if (total == 0) return;
  std::vector<int64_t> index(rank, 0);
  int64_t offset = 0;
  for (int64_t linear = 0; linear < total; ++linear) {
    fn(linear, offset);
    for (size_t d = rank; d-- > 0;) {
      offset += strides[d];
      if (++index[d] < dims[d]) break;
      offset -= strides[d] * dims[d];
      index[d] = 0;
    }
  }
}

// fn(i, at, n) over `dims` in runs: the n elements from row-major index i lie at offsets at,
// at + 1, ... Runs are a unit-stride innermost dim (copied whole), else single elements.
template <typename Fn>
void ForEachRun(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, Fn fn) {
  if (dims.empty() || strides.back() != 1 || dims.back() < 4) {
    ForEachIndex(dims, strides, [&](int64_t i, int64_t at) { fn(i, at, 1); });
    return;
  }
  const int64_t run = dims.back();
  const std::vector<int64_t> outer_dims(dims.begin(), dims.end() - 1);
  const std::vector<int64_t> outer_strides(strides.begin(), strides.end() - 1);
  ForEachIndex(outer_dims, outer_strides, [&](int64_t i, int64_t at) { fn(i * run, at, run); });
}

constexpr const char* kNotHere = "the fast convolution does not run ";

// The calling thread's layout copies of one convolution (the input and result in canonical
// order, the packed kernel), kept between calls (thread_scratch.h); apart from F32Scratch, which
// holds a narrow convolution's widened operands while these are in use.
struct ConvLayoutCopies;
template <typename T>
using LayoutScratch = ThreadScratch<T, ConvLayoutCopies>;

}  // namespace

absl::StatusOr<std::unique_ptr<ConvKernel>> ConvKernel::Create(const ir::Instruction& inst) {
  auto unsupported = [&](const char* why) {
    return absl::UnimplementedError(absl::StrCat(kNotHere, inst.Describe(), ": ", why));
  };
  if (inst.opcode() != ir::Opcode::kConvolution || inst.operands().size() != 2 ||
      inst.num_results() != 1) {
    return unsupported("not a two-operand convolution");
  }
  const ir::ValueType& lt = inst.operand(0)->type();
  const ir::ValueType& kt = inst.operand(1)->type();
  const ir::ValueType& rt = inst.result()->type();
  if (!lt.is_tensor() || !kt.is_tensor() || !rt.is_tensor()) return unsupported("not arrays");
  const ir::ElementType type = rt.element_type();
  const bool f64 = type == ir::ElementType::kF64;
  if (f64 ? lt.element_type() != type || kt.element_type() != type
          : !WidensToF32(type) || !WidensToF32(lt.element_type()) ||
                !WidensToF32(kt.element_type())) {
    return unsupported("element types other than f64 throughout or f32 and narrow floats");
  }
  if (!IsRowMajor(lt) || !IsRowMajor(kt) || !IsRowMajor(rt)) return unsupported("layouts");
  const int64_t rank = static_cast<int64_t>(lt.dims().size());
  if (rank < 2 || static_cast<int64_t>(kt.dims().size()) != rank ||
      static_cast<int64_t>(rt.dims().size()) != rank) {
    return unsupported("ranks");
  }
  const int64_t s = rank - 2;
  std::unique_ptr<ConvKernel> k(new ConvKernel());
  k->f64_ = f64;
  k->lhs_type_ = lt.element_type();
  k->rhs_type_ = kt.element_type();
  k->out_type_ = type;
  EMBER_ASSIGN_OR_RETURN(k->strides_, fs::IntsAttr(inst, "window_strides", std::vector<int64_t>(s, 1)));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> padding,
                         fs::IntsAttr(inst, "padding", std::vector<int64_t>(2 * s, 0)));
  EMBER_ASSIGN_OR_RETURN(k->lhs_dilation_,
                         fs::IntsAttr(inst, "lhs_dilation", std::vector<int64_t>(s, 1)));
  EMBER_ASSIGN_OR_RETURN(k->rhs_dilation_,
                         fs::IntsAttr(inst, "rhs_dilation", std::vector<int64_t>(s, 1)));
  EMBER_ASSIGN_OR_RETURN(k->reversal_,
                         fs::BoolsAttr(inst, "window_reversal", std::vector<bool>(s, false)));
  EMBER_ASSIGN_OR_RETURN(const int64_t in_batch, fs::IntAttr(inst, "input_batch_dimension"));
  EMBER_ASSIGN_OR_RETURN(const int64_t in_feature, fs::IntAttr(inst, "input_feature_dimension"));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> in_sp, fs::IntsAttr(inst, "input_spatial_dimensions"));
  EMBER_ASSIGN_OR_RETURN(const int64_t k_in, fs::IntAttr(inst, "kernel_input_feature_dimension"));
  EMBER_ASSIGN_OR_RETURN(const int64_t k_out, fs::IntAttr(inst, "kernel_output_feature_dimension"));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> k_sp, fs::IntsAttr(inst, "kernel_spatial_dimensions"));
  EMBER_ASSIGN_OR_RETURN(const int64_t out_batch, fs::IntAttr(inst, "output_batch_dimension"));
  EMBER_ASSIGN_OR_RETURN(const int64_t out_feature, fs::IntAttr(inst, "output_feature_dimension"));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> out_sp,
                         fs::IntsAttr(inst, "output_spatial_dimensions"));
  EMBER_ASSIGN_OR_RETURN(k->groups_, fs::IntAttr(inst, "feature_group_count", 1));
  EMBER_ASSIGN_OR_RETURN(const int64_t batch_groups, fs::IntAttr(inst, "batch_group_count", 1));
  if (batch_groups != 1) return unsupported("batch_group_count > 1");
  auto sized = [&](const auto& v, int64_t n) { return static_cast<int64_t>(v.size()) == n; };
  if (!sized(k->strides_, s) || !sized(padding, 2 * s) || !sized(k->lhs_dilation_, s) ||
      !sized(k->rhs_dilation_, s) || !sized(k->reversal_, s) || !sized(in_sp, s) ||
      !sized(k_sp, s) || !sized(out_sp, s)) {
    return unsupported("attribute sizes");
  }
  std::vector<int64_t> dims = {in_batch, in_feature};
  dims.insert(dims.end(), in_sp.begin(), in_sp.end());
  EMBER_RETURN_IF_ERROR(fs::CheckDims(inst, "input", dims, rank));
  dims = {k_in, k_out};
  dims.insert(dims.end(), k_sp.begin(), k_sp.end());
  EMBER_RETURN_IF_ERROR(fs::CheckDims(inst, "kernel", dims, rank));
  dims = {out_batch, out_feature};
  dims.insert(dims.end(), out_sp.begin(), out_sp.end());
  EMBER_RETURN_IF_ERROR(fs::CheckDims(inst, "output", dims, rank));
  for (int64_t i = 0; i < s; ++i) {
    if (k->strides_[i] <= 0 || k->lhs_dilation_[i] <= 0 || k->rhs_dilation_[i] <= 0) {
      return unsupported("non-positive strides or dilations");
    }
  }
  const std::vector<int64_t>& ld = lt.dims();
  const std::vector<int64_t>& kd = kt.dims();
  const std::vector<int64_t>& rd = rt.dims();
  k->batch_ = ld[in_batch];
  k->in_features_ = ld[in_feature];
  k->out_features_ = kd[k_out];
  if (k->groups_ <= 0 || k->in_features_ % k->groups_ != 0 ||
      kd[k_in] * k->groups_ != k->in_features_ || k->out_features_ % k->groups_ != 0) {
    return unsupported("feature groups do not divide the features");
  }
  if (rd[out_batch] != k->batch_ || rd[out_feature] != k->out_features_) {
    return unsupported("result batch or feature size");
  }
  k->pointwise_ = k->groups_ == 1;
  for (int64_t i = 0; i < s; ++i) {
    const int64_t in = ld[in_sp[i]];
    const int64_t window = kd[k_sp[i]];
    const int64_t dilated_in = in == 0 ? 0 : (in - 1) * k->lhs_dilation_[i] + 1;
    const int64_t padded = padding[2 * i] + dilated_in + padding[2 * i + 1];
    const int64_t dilated_k = window == 0 ? 0 : (window - 1) * k->rhs_dilation_[i] + 1;
    const int64_t out = padded <= 0 || dilated_k > padded
                            ? 0 : (padded - dilated_k) / k->strides_[i] + 1;
    if (out != rd[out_sp[i]]) return unsupported("result spatial size");
    k->in_spatial_.push_back(in);
    k->window_dims_.push_back(window);
    k->out_spatial_.push_back(out);
    k->pad_lo_.push_back(padding[2 * i]);
    k->pointwise_ = k->pointwise_ && window == 1 && k->strides_[i] == 1 && padding[2 * i] == 0 &&
                    padding[2 * i + 1] == 0 && k->lhs_dilation_[i] == 1;
  }
  k->window_ = Product(k->window_dims_);
  k->rows_ = k->batch_ * Product(k->out_spatial_);
  const std::vector<int64_t> ls = DenseStrides(ld), ks = DenseStrides(kd), os = DenseStrides(rd);
  k->lhs_strides_ = {ls[in_batch]};
  k->out_strides_ = {os[out_batch]};
  k->lhs_canonical_ = in_batch == 0 && in_feature == s + 1;
  k->out_canonical_ = out_batch == 0 && out_feature == s + 1;
  for (int64_t i = 0; i < s; ++i) {
    k->lhs_strides_.push_back(ls[in_sp[i]]);
    k->rhs_strides_.push_back(ks[k_sp[i]]);
    k->out_strides_.push_back(os[out_sp[i]]);
    k->lhs_canonical_ = k->lhs_canonical_ && in_sp[i] == i + 1;
    k->out_canonical_ = k->out_canonical_ && out_sp[i] == i + 1;
  }
  k->lhs_strides_.push_back(ls[in_feature]);
  k->rhs_strides_.push_back(ks[k_in]);
  k->rhs_strides_.push_back(ks[k_out]);
  k->out_strides_.push_back(os[out_feature]);
  return k;
}

template <typename T>
void ConvKernel::RunTyped(const T* lhs, const T* rhs, T* out, ThreadPool& pool) const {
  const size_t s = in_spatial_.size();
  const int64_t cin_g = in_features_ / groups_;
  const int64_t cout_g = out_features_ / groups_;
  const int64_t kg = window_ * cin_g;  // GEMM depth per group
  const int64_t total_out = rows_ * out_features_;
  if (total_out == 0) return;
  if (kg == 0) {
    std::fill_n(out, total_out, T(0));
    return;
  }
  // The input as [batch, spatial..., feature].
  std::vector<int64_t> x_dims = {batch_};
  x_dims.insert(x_dims.end(), in_spatial_.begin(), in_spatial_.end());
  x_dims.push_back(in_features_);
  LayoutScratch<T> scratch;
  const T* x = lhs;
  if (!lhs_canonical_) {
    T* x_copy = scratch.Get(0, Product(x_dims));
    ForEachRun(x_dims, lhs_strides_,
               [&](int64_t i, int64_t at, int64_t n) { std::copy_n(lhs + at, n, x_copy + i); });
    x = x_copy;
  }
  // The kernel as one [window x in feature, out feature] matrix per group, window positions in
  // the order the input is walked (reversed dims read the kernel backwards).
  T* w = scratch.Get(1, groups_ * kg * cout_g);
  {
    std::vector<int64_t> packed_dims = {groups_};
    packed_dims.insert(packed_dims.end(), window_dims_.begin(), window_dims_.end());
    packed_dims.push_back(cin_g);
    packed_dims.push_back(cout_g);
    std::vector<int64_t> strides = {cout_g * rhs_strides_[s + 1]};
    int64_t start = 0;
    for (size_t j = 0; j < s; ++j) {
      if (reversal_[j]) {
        start += (window_dims_[j] - 1) * rhs_strides_[j];
        strides.push_back(-rhs_strides_[j]);
      } else {
        strides.push_back(rhs_strides_[j]);
      }
    }
    strides.push_back(rhs_strides_[s]);
    strides.push_back(rhs_strides_[s + 1]);
    const T* base = rhs + start;
    ForEachRun(packed_dims, strides,
               [&](int64_t i, int64_t at, int64_t n) { std::copy_n(base + at, n, w + i); });
  }
  T* y = out;
  if (!out_canonical_) y = scratch.Get(2, total_out);
  if (pointwise_) {
    // Each output row is one input row times the kernel (rhs dilation does not matter for a
    // one-element window).
    pool.ParallelFor((rows_ + 63) / 64, 1, [&](int64_t b0, int64_t b1) {
      const int64_t r0 = b0 * 64, r1 = std::min(rows_, b1 * 64);
      Gemm(x + r0 * in_features_, w, y + r0 * out_features_, r1 - r0, in_features_,
           out_features_);
    });
  } else {
    // Input strides of canonical x, and per spatial dim the input coordinate each (output,
    // window) position pair reads, or -1 for padding and holes between dilated elements.
    std::vector<int64_t> x_stride(s + 1, in_features_);
    for (size_t j = s; j-- > 0;) x_stride[j] = x_stride[j + 1] * in_spatial_[j];
    std::vector<std::vector<int64_t>> coord(s);
    for (size_t j = 0; j < s; ++j) {
      coord[j].resize(static_cast<size_t>(out_spatial_[j] * window_dims_[j]));
      for (int64_t o = 0; o < out_spatial_[j]; ++o) {
        for (int64_t q = 0; q < window_dims_[j]; ++q) {
          const int64_t at = o * strides_[j] - pad_lo_[j] + q * rhs_dilation_[j];
          int64_t c = -1;
          if (at >= 0 && at % lhs_dilation_[j] == 0 && at / lhs_dilation_[j] < in_spatial_[j]) {
            c = at / lhs_dilation_[j];
          }
          coord[j][o * window_dims_[j] + q] = c;
        }
      }
    }
    const bool dilated = std::any_of(lhs_dilation_.begin(), lhs_dilation_.end(),
                                     [](int64_t d) { return d > 1; });
    if (dilated) {
      RunPhases(x, w, y, coord, x_stride, pool);
    } else {
      // About 1 MiB of windows (f32) per block: big enough that Eigen's packing of the kernel
      // matrix per GEMM call is amortized, small enough to stay in L2 with it.
      const int64_t block = std::clamp<int64_t>(262144 / kg, 16, 1024);
      // Per output position of the innermost spatial dim: whether its window's taps along that
      // dim read consecutive input positions, none of them padding. Without feature groups those
      // taps' features are one contiguous run of the input (a first layer's three channels per
      // tap make many tiny copies otherwise).
      const bool whole_rows = groups_ == 1 && s > 0;
      std::vector<bool> inner_run;
      if (whole_rows) {
        const size_t j = s - 1;
        inner_run.assign(static_cast<size_t>(out_spatial_[j]), false);
        for (int64_t o = 0; o < out_spatial_[j]; ++o) {
          bool run = true;
          for (int64_t q = 0; q < window_dims_[j] && run; ++q) {
            const int64_t c = coord[j][o * window_dims_[j] + q];
            run = c >= 0 && c == coord[j][o * window_dims_[j]] + q;
          }
          inner_run[o] = run;
        }
      }
      pool.ParallelFor((rows_ + block - 1) / block, 1, [&](int64_t b0, int64_t b1) {
        thread_local std::vector<T> col, part;
        std::vector<int64_t> o(s), q(s);
        for (int64_t blk = b0; blk < b1; ++blk) {
          const int64_t r0 = blk * block;
          const int64_t n = std::min(block, rows_ - r0);
          col.resize(static_cast<size_t>(n * kg));
          for (int64_t g = 0; g < groups_; ++g) {
            // im2col: row r holds the window of output position r, [window pos][in feature].
            int64_t rest = r0;
            for (size_t j = s; j-- > 0;) {
              o[j] = rest % out_spatial_[j];
              rest /= out_spatial_[j];
            }
            int64_t b = rest;
            for (int64_t r = 0; r < n; ++r) {
              T* dst = col.data() + r * kg;
              std::fill(q.begin(), q.end(), 0);
              for (int64_t p = 0; p < window_; ++p, dst += cin_g) {
                int64_t at = b * x_stride[0] + g * cin_g;
                bool inside = true;
                int64_t taps = 1;  // window positions this copy fills
                for (size_t j = 0; j < s; ++j) {
                  const int64_t c = coord[j][o[j] * window_dims_[j] + q[j]];
                  if (c < 0) {
                    inside = false;
                    break;
                  }
                  at += c * x_stride[j + 1];
                  // The innermost window row lies inside and contiguous: one copy for it.
                  if (j + 1 == s && q[j] == 0 && whole_rows && inner_run[o[j]]) {
                    taps = window_dims_[j];
                  }
                }
                if (inside) {
                  std::memcpy(dst, x + at, static_cast<size_t>(taps * cin_g) * sizeof(T));
                } else {
                  std::fill_n(dst, cin_g, T(0));
                }
                dst += (taps - 1) * cin_g;
                p += taps - 1;
                if (s > 0) q[s - 1] += taps - 1;
                for (size_t j = s; j-- > 0;) {
                  if (++q[j] < window_dims_[j]) break;
                  q[j] = 0;
                }
              }
              for (size_t j = s; j-- > 0;) {
                if (++o[j] < out_spatial_[j]) break;
                o[j] = 0;
                if (j == 0) ++b;
              }
              if (s == 0) ++b;
            }
            const T* wg = w + g * kg * cout_g;
            if (groups_ == 1) {
              Gemm(col.data(), wg, y + r0 * out_features_, n, kg, cout_g);
              continue;
            }
            part.resize(static_cast<size_t>(n * cout_g));
            Gemm(col.data(), wg, part.data(), n, kg, cout_g);
            for (int64_t r = 0; r < n; ++r) {
              std::memcpy(y + (r0 + r) * out_features_ + g * cout_g, part.data() + r * cout_g,
                          static_cast<size_t>(cout_g) * sizeof(T));
            }
          }
        }
      });
    }
  }
  if (!out_canonical_) {
    std::vector<int64_t> y_dims = {batch_};
    y_dims.insert(y_dims.end(), out_spatial_.begin(), out_spatial_.end());
    y_dims.push_back(out_features_);
    ForEachRun(y_dims, out_strides_,
               [&](int64_t i, int64_t at, int64_t n) { std::copy_n(y + i, n, out + at); });
  }
}

// A dilated input (lhs_dilation d > 1, the input gradient of a strided convolution) is mostly
// holes: of a window's taps, only those landing on an input element (not between two) multiply
// anything. Which taps those are depends only on the output position's phase, (o * stride -
// pad_lo) mod d per spatial dim, so the outputs of one phase form a sub-grid that is an ordinary
// convolution with the kernel's taps of that phase (about 1/d of them per dim): im2col and GEMM
// over those taps alone, the rows written back to their output positions. Outputs whose phase
// has no tap are zero. Sums lose only their zero terms.
template <typename T>
void ConvKernel::RunPhases(const T* x, const T* w, T* y,
                           const std::vector<std::vector<int64_t>>& coord,
                           const std::vector<int64_t>& x_stride, ThreadPool& pool) const {
  const size_t s = in_spatial_.size();
  const int64_t cin_g = in_features_ / groups_;
  const int64_t cout_g = out_features_ / groups_;
  const int64_t kg = window_ * cin_g;
  // Per spatial dim and phase: its output positions and its taps.
  struct DimPhase {
    std::vector<int64_t> outputs, taps;
  };
  std::vector<std::vector<DimPhase>> dim_phases(s);
  for (size_t j = 0; j < s; ++j) {
    const int64_t d = lhs_dilation_[j];
    dim_phases[j].resize(static_cast<size_t>(d));
    for (int64_t o = 0; o < out_spatial_[j]; ++o) {
      const int64_t phase = ((o * strides_[j] - pad_lo_[j]) % d + d) % d;
      dim_phases[j][phase].outputs.push_back(o);
    }
    for (int64_t phase = 0; phase < d; ++phase) {
      for (int64_t q = 0; q < window_dims_[j]; ++q) {
        if ((phase + q * rhs_dilation_[j]) % d == 0) dim_phases[j][phase].taps.push_back(q);
      }
    }
  }
  // Window positions are row-major over window_dims_ (w's rows), outputs over out_spatial_.
  std::vector<int64_t> window_stride(s, 1), out_stride(s, 1);
  for (size_t j = s; j-- > 1;) {
    window_stride[j - 1] = window_stride[j] * window_dims_[j];
    out_stride[j - 1] = out_stride[j] * out_spatial_[j];
  }
  const int64_t out_per_batch = Product(out_spatial_);
  // Every combination of one phase per dim with outputs: its sub-kernel per group, and its rows
  // cut into blocks (the work items).
  struct Phase {
    std::vector<const DimPhase*> dims;
    int64_t rows = 0;  // batch x its output positions
    int64_t taps = 1;  // window positions with a tap in every dim
    std::vector<T> kernel;  // per group: [taps x cin_g, cout_g]
    int64_t block = 1;
  };
  std::vector<Phase> phases;
  std::vector<int64_t> pick(s, 0);
  for (bool more = true; more;) {
    Phase ph;
    ph.rows = batch_;
    for (size_t j = 0; j < s; ++j) {
      ph.dims.push_back(&dim_phases[j][pick[j]]);
      ph.rows *= static_cast<int64_t>(ph.dims.back()->outputs.size());
      ph.taps *= static_cast<int64_t>(ph.dims.back()->taps.size());
    }
    if (ph.rows > 0) phases.push_back(std::move(ph));
    more = false;
    for (size_t j = s; j-- > 0;) {
      if (++pick[j] < lhs_dilation_[j]) {
        more = true;
        break;
      }
      pick[j] = 0;
    }
  }
  struct Item {
    size_t phase;
    int64_t r0, n;
  };
  std::vector<Item> items;
  std::vector<int64_t> t(s);
  for (size_t p = 0; p < phases.size(); ++p) {
    Phase& ph = phases[p];
    const int64_t kgp = ph.taps * cin_g;
    if (kgp > 0) {
      ph.kernel.resize(static_cast<size_t>(groups_ * kgp * cout_g));
      for (int64_t g = 0; g < groups_; ++g) {
        T* dst = ph.kernel.data() + g * kgp * cout_g;
        std::fill(t.begin(), t.end(), 0);
        for (int64_t tap = 0; tap < ph.taps; ++tap) {
          int64_t position = 0;
          for (size_t j = 0; j < s; ++j) position += ph.dims[j]->taps[t[j]] * window_stride[j];
          std::memcpy(dst + tap * cin_g * cout_g, w + g * kg * cout_g + position * cin_g * cout_g,
                      static_cast<size_t>(cin_g * cout_g) * sizeof(T));
          for (size_t j = s; j-- > 0;) {
            if (++t[j] < static_cast<int64_t>(ph.dims[j]->taps.size())) break;
            t[j] = 0;
          }
        }
      }
    }
    // About 1 MiB of windows (f32) per block, as RunTyped's.
    ph.block = std::clamp<int64_t>(262144 / std::max<int64_t>(1, kgp), 16, 1024);
    for (int64_t r0 = 0; r0 < ph.rows; r0 += ph.block) {
      items.push_back({p, r0, std::min(ph.block, ph.rows - r0)});
    }
  }
  pool.ParallelFor(static_cast<int64_t>(items.size()), 1, [&](int64_t i0, int64_t i1) {
    thread_local std::vector<T> col, part;
    std::vector<int64_t> at_out(s), tap(s);
    for (int64_t i = i0; i < i1; ++i) {
      const Item& item = items[i];
      const Phase& ph = phases[item.phase];
      const int64_t kgp = ph.taps * cin_g;
      // Each of the item's rows: its output row, batch and output position per spatial dim.
      std::vector<int64_t> out_row(static_cast<size_t>(item.n)), batch(out_row.size()),
          position(out_row.size() * s);
      int64_t rest = item.r0;
      for (size_t j = s; j-- > 0;) {
        const int64_t size = static_cast<int64_t>(ph.dims[j]->outputs.size());
        at_out[j] = rest % size;
        rest /= size;
      }
      int64_t b = rest;
      for (int64_t r = 0; r < item.n; ++r) {
        int64_t row = b * out_per_batch;
        for (size_t j = 0; j < s; ++j) {
          position[r * s + j] = ph.dims[j]->outputs[at_out[j]];
          row += position[r * s + j] * out_stride[j];
        }
        out_row[r] = row;
        batch[r] = b;
        for (size_t j = s; j-- > 0;) {
          if (++at_out[j] < static_cast<int64_t>(ph.dims[j]->outputs.size())) break;
          at_out[j] = 0;
          if (j == 0) ++b;
        }
        if (s == 0) ++b;
      }
      if (kgp == 0) {
        for (int64_t r = 0; r < item.n; ++r) {
          std::fill_n(y + out_row[r] * out_features_, out_features_, T(0));
        }
        continue;
      }
      col.resize(static_cast<size_t>(item.n * kgp));
      part.resize(static_cast<size_t>(item.n * cout_g));
      for (int64_t g = 0; g < groups_; ++g) {
        for (int64_t r = 0; r < item.n; ++r) {
          const int64_t* o = position.data() + r * s;
          T* dst = col.data() + r * kgp;
          std::fill(tap.begin(), tap.end(), 0);
          for (int64_t k = 0; k < ph.taps; ++k, dst += cin_g) {
            int64_t at = batch[r] * x_stride[0] + g * cin_g;
            bool inside = true;
            for (size_t j = 0; j < s; ++j) {
              const int64_t c =
                  coord[j][o[j] * window_dims_[j] + ph.dims[j]->taps[tap[j]]];
              if (c < 0) {
                inside = false;
                break;
              }
              at += c * x_stride[j + 1];
            }
            if (inside) {
              std::memcpy(dst, x + at, static_cast<size_t>(cin_g) * sizeof(T));
            } else {
              std::fill_n(dst, cin_g, T(0));
            }
            for (size_t j = s; j-- > 0;) {
              if (++tap[j] < static_cast<int64_t>(ph.dims[j]->taps.size())) break;
              tap[j] = 0;
            }
          }
        }
        Gemm(col.data(), ph.kernel.data() + g * kgp * cout_g, part.data(), item.n, kgp, cout_g);
        for (int64_t r = 0; r < item.n; ++r) {
          std::memcpy(y + out_row[r] * out_features_ + g * cout_g, part.data() + r * cout_g,
                      static_cast<size_t>(cout_g) * sizeof(T));
        }
      }
    }
  });
}

void ConvKernel::Run(const void* lhs, const void* rhs, void* out, ThreadPool& pool) const {
  if (f64_) {
    RunTyped(static_cast<const double*>(lhs), static_cast<const double*>(rhs),
             static_cast<double*>(out), pool);
    return;
  }
  // Narrow operands are widened to f32 (exact) into per-thread scratch, the convolution runs in
  // f32 with f32 accumulation, and a narrow result is rounded once at the end.
  const F32Converter lhs_conv(lhs_type_), rhs_conv(rhs_type_), out_conv(out_type_);
  F32Scratch scratch;
  auto widened = [&](const void* src, const F32Converter& conv, int64_t n, int slot) {
    if (conv.is_f32()) return static_cast<const float*>(src);
    float* dst = scratch.Get(slot, n);
    conv.WidenAll(src, n, dst, pool);
    return static_cast<const float*>(dst);
  };
  const int64_t out_n = rows_ * out_features_;
  const float* x = widened(lhs, lhs_conv, Product(in_spatial_) * batch_ * in_features_, 0);
  const float* w = widened(rhs, rhs_conv, window_ * (in_features_ / groups_) * out_features_, 1);
  float* y = out_conv.is_f32() ? static_cast<float*>(out) : scratch.Get(2, out_n);
  RunTyped(x, w, y, pool);
  if (!out_conv.is_f32()) out_conv.NarrowAll(y, out_n, out, pool);
}

}  // namespace ember::host::fast
