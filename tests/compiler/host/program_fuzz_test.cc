// A fuzzer of the compile-and-execute path: small random StableHLO programs (elementwise ops,
// compare/select, converts, transposes, reshapes, slices, broadcasts, concatenations, reverses,
// pads, iotas, s32 and f32 matrix products, convolutions, gathers, scatters, sorts, f32
// transcendentals and reductions over random shapes of f32 and s32) are compiled by the host
// backend (the default pass pipeline, fused and LLVM-compiled kernels) and by the reference
// evaluator and run on random inputs. Values computed only with exact ops must agree bit for bit
// (NaNs of any payload agree); values that went through a rounding op (transcendentals, f32
// products and convolutions, whose kernels round differently by design) must agree within a
// relative tolerance plus one scaled to the magnitude of the terms they were summed from (bounds
// tracked op by op), with NaNs in the same places.
// Rounded values never feed a discontinuous op (compare, select, f32 -> s32 convert, the keys of
// a multi-operand sort), which would turn an ulp into any difference. A crash fails the test
// binary (ASan/UBSan builds catch memory and undefined-behaviour errors). The run is bounded:
// EMBER_PROGRAM_FUZZ_RUNS programs (default 500 in CI: each is JIT-compiled, some 10 ms),
// starting at seed EMBER_PROGRAM_FUZZ_SEED; a finding prints its seed and program.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/passes/pass.h"
#include "tests/compiler/host/host_test_util.h"
#include "tests/compiler/parse_module.h"

namespace ember::host {
namespace {

using ::ember::test_util::Parse;

struct Val {
  std::string name;
  bool is_float = true;  // f32, else s32
  std::vector<int64_t> dims;
  bool rounded = false;  // computed through an op whose kernels may round differently
  // A rounded value's error allowance: `bound` bounds its finite magnitude; `err` the
  // magnitude of the terms whose rounding errors it carries (a product's terms can cancel to a
  // result far smaller than them). Compared within 1e-4 relative plus 1e-5 * err.
  double bound = std::numeric_limits<float>::max();
  double err = 0;
};

// A value computed from `x` by an op that moves, selects or compares values (the error and
// bound carry over).
Val Derived(const Val& x, std::string name, std::vector<int64_t> dims) {
  Val r = x;
  r.name = std::move(name);
  r.dims = std::move(dims);
  return r;
}
// Of x and y by such an op (maximum, minimum, concatenate, scatter's maximum).
Val Merged(const Val& x, const Val& y, std::string name, std::vector<int64_t> dims) {
  Val r = Derived(x, std::move(name), std::move(dims));
  r.rounded = x.rounded || y.rounded;
  r.bound = std::max(x.bound, y.bound);
  r.err = std::max(x.err, y.err);
  return r;
}
// What a rounded operand contributes to the error of a sum or product it enters: its own terms'
// errors, and its relative error (at most 1e-4 of it) on its magnitude.
double Carried(const Val& v) { return v.rounded ? v.err + v.bound : 0; }

std::string TypeOf(const std::vector<int64_t>& dims, const char* element) {
  std::string t = "tensor<";
  for (int64_t d : dims) absl::StrAppend(&t, d, "x");
  return absl::StrCat(t, element, ">");
}
std::string TypeOf(const Val& v) { return TypeOf(v.dims, v.is_float ? "f32" : "i32"); }
std::string Ints(const std::vector<int64_t>& v) { return absl::StrJoin(v, ", "); }

// Builds one random program from a seed.
class ProgramGenerator {
 public:
  explicit ProgramGenerator(uint32_t seed) : rng_(seed) {}

  std::string Generate() {
    std::vector<std::string> params;
    const int num_params = Pick(1, 3);
    for (int i = 0; i < num_params; ++i) {
      Val v{absl::StrCat("%p", i), Coin(), RandomDims()};
      params.push_back(absl::StrCat(v.name, ": ", TypeOf(v)));
      values_.push_back(v);
    }
    const int ops = Pick(3, 16);
    for (int i = 0; i < ops; ++i) AddOp();
    std::vector<std::string> names, types;
    // The newest value, and sometimes one more of any age.
    const Val* newest = &values_.back();
    for (const Val* v : {newest, Coin() ? &Any() : nullptr}) {
      if (v == nullptr) continue;
      names.push_back(v->name);
      types.push_back(TypeOf(*v));
      result_rounded_.push_back(v->rounded);
      result_err_.push_back(v->err);
    }
    return absl::StrCat("func.func @main(", absl::StrJoin(params, ", "), ") -> (",
                        absl::StrJoin(types, ", "), ") {\n", body_, "  return ",
                        absl::StrJoin(names, ", "), " : ", absl::StrJoin(types, ", "), "\n}\n");
  }

  // After Generate: for each result, whether it went through a rounding op.
  const std::vector<bool>& result_rounded() const { return result_rounded_; }
  const std::vector<double>& result_err() const { return result_err_; }

 private:
  int Pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Coin() { return Pick(0, 1) == 1; }
  std::vector<int64_t> RandomDims() {
    static const int64_t kSizes[] = {1, 2, 3, 5, 8, 17, 33};
    std::vector<int64_t> dims(static_cast<size_t>(Pick(0, 3)));
    for (int64_t& d : dims) d = kSizes[Pick(0, 6)];
    return dims;
  }
  // Mostly one of the newest values, so ops build on each other (chains that fuse) rather than
  // on the parameters only (dead code the passes remove).
  const Val& Any() {
    const int n = static_cast<int>(values_.size());
    const int lo = Pick(0, 3) > 0 ? std::max(0, n - 3) : 0;
    return values_[static_cast<size_t>(Pick(lo, n - 1))];
  }
  std::string Fresh() { return absl::StrCat("%v", next_++); }
  Val Emit(const std::string& text, Val result) {
    absl::StrAppend(&body_, "  ", result.name, " = ", text, "\n");
    values_.push_back(result);
    return result;
  }
  // A value of `like`'s type: another value of that type (an exact one if `exact`), or a splat
  // constant.
  Val Partner(const Val& like, bool exact = false) {
    std::vector<const Val*> same;
    for (const Val& v : values_) {
      if (v.is_float == like.is_float && v.dims == like.dims && !(exact && v.rounded)) {
        same.push_back(&v);
      }
    }
    if (!same.empty() && Pick(0, 3) > 0) {
      return *same[static_cast<size_t>(Pick(0, static_cast<int>(same.size()) - 1))];
    }
    static const char* kFloats[] = {"0.0", "-0.0", "1.5", "-3.0", "0x7FC00000", "0x7F800000"};
    static const char* kInts[] = {"0", "1", "-7", "2147483647", "-2147483648"};
    const std::string c = Fresh();
    absl::StrAppend(&body_, "  ", c, " = stablehlo.constant dense<",
                    like.is_float ? kFloats[Pick(0, 5)] : kInts[Pick(0, 4)], "> : ",
                    TypeOf(like), "\n");
    return Val{c, like.is_float, like.dims};
  }
  // `x` clamped to [-1000, 1000] (NaN stays NaN): products and sums of such values cannot
  // overflow in any order, so the f32 matrix products and convolutions differ by rounding only.
  std::string Tame(const Val& x, double* bound) {
    *bound = std::min(x.bound, 1000.0);
    const std::string lo = Fresh(), hi = Fresh(), y = Fresh();
    absl::StrAppend(&body_, "  ", lo, " = stablehlo.constant dense<-1000.0> : tensor<f32>\n  ", hi,
                    " = stablehlo.constant dense<1000.0> : tensor<f32>\n  ", y,
                    " = \"stablehlo.clamp\"(", lo, ", ", x.name, ", ", hi, ") : (tensor<f32>, ",
                    TypeOf(x), ", tensor<f32>) -> ", TypeOf(x), "\n");
    return y;
  }
  // A dense literal of `dims` with small random values (a convolution kernel).
  std::string DenseLiteral(const std::vector<int64_t>& dims, size_t d = 0) {
    static const char* kValues[] = {"-2.0", "-1.5", "-1.0", "-0.5", "0.25", "0.5", "1.0", "2.0", "3.0"};
    if (d == dims.size()) return kValues[Pick(0, 8)];
    std::vector<std::string> parts;
    for (int64_t i = 0; i < dims[d]; ++i) parts.push_back(DenseLiteral(dims, d + 1));
    return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
  }
  // Row indices for gather/scatter along dimension 0 of size `rows`: a tensor<Nx1xi32>
  // constant, some out of range (gather clamps them, scatter skips them), some repeated.
  std::string RowIndices(int64_t rows, int n) {
    std::vector<std::string> parts;
    for (int i = 0; i < n; ++i) {
      parts.push_back(absl::StrCat("[", Pick(-2, static_cast<int>(rows) + 1), "]"));
    }
    const std::string c = Fresh();
    absl::StrAppend(&body_, "  ", c, " = stablehlo.constant dense<[", absl::StrJoin(parts, ", "),
                    "]> : tensor<", n, "x1xi32>\n");
    return c;
  }
  // x[indices] along dimension 0 with the window `sizes` (sizes[0] = 1, collapsed).
  Val GatherRows(const Val& x, const std::string& indices, int n, std::vector<int64_t> sizes) {
    const int rank = static_cast<int>(x.dims.size());
    std::vector<int64_t> offset;
    Val r = Derived(x, Fresh(), {n});
    for (int d = 1; d < rank; ++d) {
      offset.push_back(d);
      r.dims.push_back(sizes[static_cast<size_t>(d)]);
    }
    return Emit(absl::StrCat("\"stablehlo.gather\"(", x.name, ", ", indices,
                             ") {dimension_numbers = #stablehlo.gather<offset_dims = [",
                             Ints(offset), "], collapsed_slice_dims = [0], start_index_map = [0], "
                             "index_vector_dim = 1>, slice_sizes = array<i64: ", Ints(sizes),
                             ">} : (", TypeOf(x), ", tensor<", n, "x1xi32>) -> ", TypeOf(r)),
                r);
  }
  // A scalar region (T, T) -> T applying `op` (scatter's update computation).
  static std::string ScalarRegion(const char* op, const std::string& scalar) {
    return absl::StrCat("({\n  ^bb0(%ra: ", scalar, ", %rb: ", scalar, "):\n    %rm = stablehlo.",
                        op, " %ra, %rb : ", scalar, "\n    stablehlo.return %rm : ", scalar,
                        "\n  })");
  }

  void AddOp() {
    const Val x = Any();
    const std::string t = TypeOf(x);
    const int rank = static_cast<int>(x.dims.size());
    switch (Pick(0, 21)) {
      case 0:
      case 1: {  // elementwise binary
        static const char* kOps[] = {"add", "subtract", "multiply", "maximum", "minimum"};
        const Val y = Partner(x);
        const int op = Pick(0, 4);
        Val r = Merged(x, y, Fresh(), x.dims);
        if (op < 2) {  // add, subtract
          r.bound = x.bound + y.bound;
          r.err = Carried(x) + Carried(y);
        } else if (op == 2) {  // multiply
          r.bound = x.bound * y.bound;
          r.err = Carried(x) * y.bound + Carried(y) * x.bound;
        }
        Emit(absl::StrCat("stablehlo.", kOps[op], " ", x.name, ", ", y.name, " : ", t), r);
        return;
      }
      case 2: {  // unary
        Emit(absl::StrCat("stablehlo.", Coin() ? "negate" : "abs", " ", x.name, " : ", t),
             Derived(x, Fresh(), x.dims));
        return;
      }
      case 3: {  // compare + select (of exact values: a rounded one could flip the choice)
        static const char* kDirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
        if (x.rounded) return;
        const Val y = Partner(x, /*exact=*/true);
        const std::string p = Fresh();
        absl::StrAppend(&body_, "  ", p, " = stablehlo.compare ", kDirs[Pick(0, 5)], ", ", x.name,
                        ", ", y.name, " : (", t, ", ", t, ") -> ", TypeOf(x.dims, "i1"), "\n");
        Emit(absl::StrCat("stablehlo.select ", p, ", ", x.name, ", ", y.name, " : ",
                          TypeOf(x.dims, "i1"), ", ", t),
             Val{Fresh(), x.is_float, x.dims});
        return;
      }
      case 4: {  // convert between f32 and s32 (f32 -> s32 of exact values: it truncates)
        if (x.rounded) return;
        Val r{Fresh(), !x.is_float, x.dims};
        Emit(absl::StrCat("stablehlo.convert ", x.name, " : (", t, ") -> ", TypeOf(r)), r);
        return;
      }
      case 5: {  // transpose
        if (rank < 2) return;
        std::vector<int64_t> perm(static_cast<size_t>(rank));
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng_);
        Val r = Derived(x, Fresh(), {});
        for (int64_t p : perm) r.dims.push_back(x.dims[static_cast<size_t>(p)]);
        Emit(absl::StrCat("stablehlo.transpose ", x.name, ", dims = [", Ints(perm), "] : (", t,
                          ") -> ", TypeOf(r)),
             r);
        return;
      }
      case 6: {  // reshape: reversed dims, or flattened
        Val r = Derived(x, Fresh(), x.dims);
        if (Coin()) {
          std::reverse(r.dims.begin(), r.dims.end());
        } else {
          int64_t n = 1;
          for (int64_t d : x.dims) n *= d;
          r.dims = {n};
        }
        Emit(absl::StrCat("stablehlo.reshape ", x.name, " : (", t, ") -> ", TypeOf(r)), r);
        return;
      }
      case 7: {  // slice
        if (rank == 0) return;
        std::vector<std::string> parts;
        Val r = Derived(x, Fresh(), {});
        for (int64_t d : x.dims) {
          const int64_t start = Pick(0, static_cast<int>(d) - 1);
          const int64_t limit = Pick(static_cast<int>(start) + 1, static_cast<int>(d));
          const int64_t stride = Pick(1, 3);
          parts.push_back(absl::StrCat(start, ":", limit, ":", stride));
          r.dims.push_back((limit - start + stride - 1) / stride);
        }
        Emit(absl::StrCat("stablehlo.slice ", x.name, " [", absl::StrJoin(parts, ", "), "] : (", t,
                          ") -> ", TypeOf(r)),
             r);
        return;
      }
      case 8: {  // broadcast_in_dim: a new leading dim
        if (rank >= 4) return;
        Val r = Derived(x, Fresh(), x.dims);
        r.dims.insert(r.dims.begin(), Pick(2, 3));
        std::vector<int64_t> map(static_cast<size_t>(rank));
        std::iota(map.begin(), map.end(), 1);
        Emit(absl::StrCat("stablehlo.broadcast_in_dim ", x.name, ", dims = [", Ints(map), "] : (",
                          t, ") -> ", TypeOf(r)),
             r);
        return;
      }
      case 9: {  // concatenate with a partner along a random dim
        if (rank == 0) return;
        const int64_t dim = Pick(0, rank - 1);
        const Val y = Partner(x);
        Val r = Merged(x, y, Fresh(), x.dims);
        r.dims[static_cast<size_t>(dim)] *= 2;
        Emit(absl::StrCat("stablehlo.concatenate ", x.name, ", ", y.name, ", dim = ", dim, " : (", t,
                          ", ", t, ") -> ", TypeOf(r)),
             r);
        return;
      }
      case 12: {  // reverse some dims
        if (rank == 0) return;
        std::vector<int64_t> dims;
        for (int d = 0; d < rank; ++d) {
          if (Coin()) dims.push_back(d);
        }
        if (dims.empty()) dims.push_back(rank - 1);
        Emit(absl::StrCat("stablehlo.reverse ", x.name, ", dims = [", Ints(dims), "] : ", t),
             Derived(x, Fresh(), x.dims));
        return;
      }
      case 13: {  // pad with edge and interior padding
        if (rank == 0) return;
        std::vector<int64_t> low, high, interior;
        Val r = Derived(x, Fresh(), {});
        for (int64_t d : x.dims) {
          low.push_back(Pick(0, 2));
          high.push_back(Pick(0, 2));
          interior.push_back(Pick(0, 1));
          r.dims.push_back(low.back() + high.back() + d + (d - 1) * interior.back());
        }
        const std::string scalar = TypeOf({}, x.is_float ? "f32" : "i32");
        const std::string value = Fresh();
        absl::StrAppend(&body_, "  ", value, " = stablehlo.constant dense<",
                        x.is_float ? "-2.5" : "9", "> : ", scalar, "\n");
        Emit(absl::StrCat("stablehlo.pad ", x.name, ", ", value, ", low = [", Ints(low),
                          "], high = [", Ints(high), "], interior = [", Ints(interior), "] : (", t,
                          ", ", scalar, ") -> ", TypeOf(r)),
             r);
        return;
      }
      case 14: {  // plus an iota along a random dim (values that depend on the index)
        if (rank == 0) return;
        const std::string iota = Fresh();
        absl::StrAppend(&body_, "  ", iota, " = stablehlo.iota dim = ", Pick(0, rank - 1), " : ",
                        t, "\n");
        Val r = Derived(x, Fresh(), x.dims);
        r.bound += 33;  // the iota's largest value
        r.err = Carried(x);
        Emit(absl::StrCat("stablehlo.add ", x.name, ", ", iota, " : ", t), r);
        return;
      }
      case 15: {  // x . x^T over s32 (exact; f32 products round differently by design)
        if (rank != 2 || x.is_float) return;
        Val r{Fresh(), false, {x.dims[0], x.dims[0]}};
        Emit(absl::StrCat("stablehlo.dot_general ", x.name, ", ", x.name,
                          ", contracting_dims = [1] x [1] : (", t, ", ", t, ") -> ", TypeOf(r)),
             r);
        return;
      }
      case 16: {  // an f32 transcendental of an exact value (rounds differently per kernel)
        static const char* kOps[] = {"exponential", "log",   "tanh",   "logistic",
                                     "sqrt",        "rsqrt", "sine",   "cosine",
                                     "exponential_minus_one", "log_plus_one"};
        if (!x.is_float || x.rounded) return;
        // Magnitude bounds of each op's finite results over f32. Their error is relative,
        // except near a zero of the function (log near 1, sine near pi), where fast kernels
        // are accurate to about an ulp of 1: err = 1 allows 1e-5 there.
        static const double kBounds[] = {3.5e38, 104, 1, 1, 1.9e19, 3.5e38, 1, 1, 3.5e38, 104};
        const int op = Pick(0, 9);
        Val r{Fresh(), true, x.dims, true, kBounds[op], 1};
        Emit(absl::StrCat("\"stablehlo.", kOps[op], "\"(", x.name, ") : (", t, ") -> ", t), r);
        return;
      }
      case 17: {  // f32 matrix products: x . y^T or x^T . y (rank 2), batched (rank 3)
        if (!x.is_float || rank < 2) return;
        const Val y = Partner(x);
        double xb = 0, yb = 0;
        const std::string a = Tame(x, &xb), b = Tame(y, &yb);
        std::vector<int64_t> batch;
        int64_t contract = 1;
        Val r{Fresh(), true, {}, true};
        if (rank == 3) {
          batch = {0};
          contract = 2;
          r.dims = {x.dims[0], x.dims[1], x.dims[1]};
        } else if (rank == 2 && Coin()) {
          r.dims = {x.dims[0], x.dims[0]};
        } else if (rank == 2) {
          contract = 0;
          r.dims = {x.dims[1], x.dims[1]};
        } else {
          return;
        }
        const double k = static_cast<double>(x.dims[static_cast<size_t>(contract)]);
        r.bound = k * xb * yb;
        r.err = k * (xb * yb + Carried(x) * yb + Carried(y) * xb);
        Emit(absl::StrCat("\"stablehlo.dot_general\"(", a, ", ", b,
                          ") {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [",
                          Ints(batch), "], rhs_batching_dimensions = [", Ints(batch),
                          "], lhs_contracting_dimensions = [", contract,
                          "], rhs_contracting_dimensions = [", contract, "]>} : (", t, ", ", t,
                          ") -> ", TypeOf(r)),
             r);
        return;
      }
      case 18: {  // f32 convolution: 1-D over (N, W, C) or 2-D over (N, H, W, C), random windows
        if (!x.is_float || rank < 3) return;
        const int spatial = rank - 2;
        const int64_t c = x.dims[static_cast<size_t>(rank - 1)];
        const int64_t groups = c > 1 && Pick(0, 3) == 0 ? c : 1;
        const int64_t out_features = groups * Pick(1, 2);
        std::vector<int64_t> kernel_dims, stride, lhs_dilate, rhs_dilate;
        std::vector<std::string> pads, labels;
        Val r{Fresh(), true, {x.dims[0]}, true};
        for (int i = 0; i < spatial; ++i) {
          const int64_t w = x.dims[static_cast<size_t>(i + 1)];
          const int64_t k = Pick(1, 3), lo = Pick(0, 2), hi = Pick(0, 2);
          const int64_t s = Pick(1, 2), ld = Pick(0, 3) == 0 ? 2 : 1, rd = Pick(1, 2);
          const int64_t padded = (w - 1) * ld + 1 + lo + hi, window = (k - 1) * rd + 1;
          if (padded < window) return;
          kernel_dims.push_back(k);
          stride.push_back(s);
          lhs_dilate.push_back(ld);
          rhs_dilate.push_back(rd);
          pads.push_back(absl::StrCat("[", lo, ", ", hi, "]"));
          labels.push_back(absl::StrCat(i));
          r.dims.push_back((padded - window) / s + 1);
        }
        r.dims.push_back(out_features);
        double xb = 0;
        const std::string tamed = Tame(x, &xb);
        double window = static_cast<double>(c / groups);
        for (int i = 0; i < spatial; ++i) window *= static_cast<double>(kernel_dims[static_cast<size_t>(i)]);
        r.bound = window * xb * 3;  // kernel values are at most 3 in magnitude
        r.err = window * (xb + Carried(x)) * 3;
        kernel_dims.push_back(c / groups);
        kernel_dims.push_back(out_features);
        const std::string kernel = Fresh();
        absl::StrAppend(&body_, "  ", kernel, " = stablehlo.constant dense<",
                        DenseLiteral(kernel_dims), "> : ", TypeOf(kernel_dims, "f32"), "\n");
        const std::string sp = absl::StrJoin(labels, ", ");
        Emit(absl::StrCat("stablehlo.convolution(", tamed, ", ", kernel, ") dim_numbers = [b, ",
                          sp, ", f]x[", sp, ", i, o]->[b, ", sp, ", f], window = {stride = [",
                          Ints(stride), "], pad = [", absl::StrJoin(pads, ", "),
                          "], lhs_dilate = [", Ints(lhs_dilate), "], rhs_dilate = [",
                          Ints(rhs_dilate), "]} {batch_group_count = 1 : i64, ",
                          "feature_group_count = ", groups, " : i64} : (", t, ", ",
                          TypeOf(kernel_dims, "f32"), ") -> ", TypeOf(r)),
             r);
        return;
      }
      case 19: {  // gather rows, with windows narrower than the operand
        if (rank == 0) return;
        const int n = Pick(1, 4);
        std::vector<int64_t> sizes = {1};
        for (int d = 1; d < rank; ++d) {
          sizes.push_back(Pick(1, static_cast<int>(x.dims[static_cast<size_t>(d)])));
        }
        GatherRows(x, RowIndices(x.dims[0], n), n, sizes);
        return;
      }
      case 20: {  // scatter gathered rows back: s32 add or f32 maximum (exact in any order)
        if (rank == 0) return;
        const int n = Pick(1, 4);
        std::vector<int64_t> sizes = x.dims;
        sizes[0] = 1;
        const Val updates = GatherRows(x, RowIndices(x.dims[0], n), n, sizes);
        std::vector<int64_t> window;
        for (int d = 1; d < rank; ++d) window.push_back(d);
        const std::string scalar = TypeOf({}, x.is_float ? "f32" : "i32");
        Emit(absl::StrCat("\"stablehlo.scatter\"(", x.name, ", ", RowIndices(x.dims[0], n), ", ",
                          updates.name, ") ", ScalarRegion(x.is_float ? "maximum" : "add", scalar),
                          " {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [",
                          Ints(window), "], inserted_window_dims = [0], "
                          "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (", t,
                          ", tensor<", n, "x1xi32>, ", TypeOf(updates), ") -> ", t),
             Merged(x, updates, Fresh(), x.dims));
        return;
      }
      case 21: {  // stable sort along a dim, by exact keys with a second operand, or alone
        if (rank == 0) return;
        const int64_t dim = Pick(0, rank - 1);
        const std::string key_scalar = TypeOf({}, x.is_float ? "f32" : "i32");
        std::string key = x.name;
        if (x.is_float) {
          // NaN keys read as 0: a NaN's sign (which a total order sorts by) is not an op's
          // result anyone specifies.
          const std::string nan = Fresh(), zero = Fresh();
          key = Fresh();
          absl::StrAppend(&body_, "  ", nan, " = stablehlo.compare NE, ", x.name, ", ", x.name,
                          " : (", t, ", ", t, ") -> ", TypeOf(x.dims, "i1"), "\n  ", zero,
                          " = stablehlo.constant dense<0.0> : ", t, "\n  ", key,
                          " = stablehlo.select ", nan, ", ", zero, ", ", x.name, " : ",
                          TypeOf(x.dims, "i1"), ", ", t, "\n");
        }
        const bool pair = !x.rounded && Coin();
        const Val* other = nullptr;
        if (pair) {
          std::vector<const Val*> same;
          for (const Val& v : values_) {
            if (v.dims == x.dims) same.push_back(&v);
          }
          other = same[static_cast<size_t>(Pick(0, static_cast<int>(same.size()) - 1))];
        }
        std::string params = absl::StrCat("%ra: ", key_scalar, ", %rb: ", key_scalar);
        if (other != nullptr) {
          const std::string s2 = TypeOf({}, other->is_float ? "f32" : "i32");
          absl::StrAppend(&params, ", %rc: ", s2, ", %rd: ", s2);
        }
        const std::string name = Fresh();
        const Val sorted = Derived(x, other != nullptr ? name + "#0" : name, x.dims);
        absl::StrAppend(
            &body_, "  ", name, other != nullptr ? ":2" : "", " = \"stablehlo.sort\"(", key,
            other != nullptr ? ", " + other->name : std::string(), ") ({\n  ^bb0(", params,
            "):\n    %rm = \"stablehlo.compare\"(%ra, %rb) {comparison_direction = "
            "#stablehlo<comparison_direction ", Coin() ? "LT" : "GT",
            ">, compare_type = #stablehlo<comparison_type ", x.is_float ? "TOTALORDER" : "SIGNED",
            ">} : (", key_scalar, ", ", key_scalar, ") -> tensor<i1>\n    stablehlo.return %rm : "
            "tensor<i1>\n  }) {dimension = ", dim, " : i64, is_stable = true} : (", t,
            other != nullptr ? ", " + TypeOf(*other) : std::string(), ") -> ",
            other != nullptr ? absl::StrCat("(", t, ", ", TypeOf(*other), ")") : t, "\n");
        if (other != nullptr) {
          const Val moved = Derived(*other, name + "#1", other->dims);
          values_.push_back(sorted);
          values_.push_back(moved);
        } else {
          values_.push_back(sorted);
        }
        return;
      }
      default: {  // reduce: s32 add (exact in any order) or f32 maximum
        if (rank == 0) return;
        std::vector<int64_t> dims;
        Val r = Derived(x, Fresh(), {});
        for (int d = 0; d < rank; ++d) {
          if (Coin() || (d == rank - 1 && dims.empty())) {
            dims.push_back(d);
          } else {
            r.dims.push_back(x.dims[static_cast<size_t>(d)]);
          }
        }
        const std::string init = Fresh();
        const std::string scalar = TypeOf({}, x.is_float ? "f32" : "i32");
        absl::StrAppend(&body_, "  ", init, " = stablehlo.constant dense<",
                        x.is_float ? "0xFF800000" : "0", "> : ", scalar, "\n");
        Emit(absl::StrCat("stablehlo.reduce(", x.name, " init: ", init, ") applies stablehlo.",
                          x.is_float ? "maximum" : "add", " across dimensions = [", Ints(dims),
                          "] : (", t, ", ", scalar, ") -> ", TypeOf(r)),
             r);
        return;
      }
    }
  }

  std::mt19937 rng_;
  std::vector<Val> values_;
  std::vector<bool> result_rounded_;
  std::vector<double> result_err_;
  std::string body_;
  int next_ = 0;
};

// Random inputs with special values mixed in.
std::vector<eval::EvalValue> Inputs(const ir::Computation& entry, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<eval::EvalValue> args;
  for (const auto& p : entry.parameters()) {
    ir::Literal lit = ir::Literal::Create(p->type().shape()).value();
    if (p->type().element_type() == ir::ElementType::kF32) {
      static const float kSpecial[] = {0.0f, -0.0f, NAN, INFINITY, -INFINITY, 3e38f, 1e-45f};
      const absl::Span<float> values = lit.mutable_data<float>().value();
      for (float& x : values) {
        x = std::uniform_int_distribution<int>(0, 9)(rng) == 0
                ? kSpecial[std::uniform_int_distribution<int>(0, 6)(rng)]
                : std::uniform_real_distribution<float>(-100, 100)(rng);
      }
    } else {
      static const int32_t kSpecial[] = {0, -1, 2147483647, -2147483647 - 1};
      const absl::Span<int32_t> values = lit.mutable_data<int32_t>().value();
      for (int32_t& x : values) {
        x = std::uniform_int_distribution<int>(0, 9)(rng) == 0
                ? kSpecial[std::uniform_int_distribution<int>(0, 3)(rng)]
                : std::uniform_int_distribution<int32_t>(-1000, 1000)(rng);
      }
    }
    args.push_back(eval::EvalValue::Array(std::move(lit)));
  }
  return args;
}

// Exact results: the same bits (NaNs of any payload agree). Rounded ones: NaNs in the same
// places, infinities equal, finite values within 1e-4 relative plus 1e-5 * `err` (the magnitude
// of the terms whose rounding the value carries, see Val), or both below FLT_MIN (kernels may
// flush subnormals).
bool SameResult(const ir::Literal& want, const ir::Literal& got, bool rounded, double err) {
  if (!(want.shape() == got.shape())) return false;
  if (want == got) return true;
  if (want.element_type() != ir::ElementType::kF32) return false;
  auto x = want.data<float>().value();
  auto y = got.data<float>().value();
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::memcmp(&x[i], &y[i], 4) == 0 || (std::isnan(x[i]) && std::isnan(y[i]))) continue;
    if (!rounded || std::isnan(x[i]) || std::isnan(y[i]) || std::isinf(x[i]) || std::isinf(y[i])) {
      return false;
    }
    const double a = x[i], b = y[i];
    const double tolerance = 1e-4 * std::max(std::fabs(a), std::fabs(b)) + 1e-5 * err +
                             std::numeric_limits<float>::min();
    if (std::fabs(a - b) > tolerance) return false;
  }
  return true;
}

// Runs one program both ways; an empty string when they agree, else what differs.
std::string Differential(const std::string& text, const std::vector<bool>& rounded,
                         const std::vector<double>& err, uint32_t seed) {
  std::unique_ptr<ir::Module> reference = Parse(text);
  std::unique_ptr<ir::Module> optimized = Parse(text);
  if (reference == nullptr || optimized == nullptr) return "the generated program did not parse";
  passes::PassPipeline pipeline = passes::CreateDefaultPipeline();
  if (auto changed = pipeline.Run(*optimized); !changed.ok()) {
    return absl::StrCat("the pass pipeline failed: ", changed.status().ToString());
  }
  auto want_exe = testing::Compile(*reference->entry(), testing::HostBackend::kEvaluator);
  auto got_exe = testing::Compile(*optimized->entry(), testing::HostBackend::kCompiled);
  if (!want_exe.ok() || !got_exe.ok()) {
    return absl::StrCat("compile: evaluator ", want_exe.status().ToString(), ", host ",
                        got_exe.status().ToString());
  }
  auto want = (*want_exe)->Run(Inputs(*reference->entry(), seed));
  auto got = (*got_exe)->Run(Inputs(*optimized->entry(), seed));
  if (!want.ok() || !got.ok()) {
    return absl::StrCat("run: evaluator ", want.status().ToString(), ", host ",
                        got.status().ToString());
  }
  if (want->size() != got->size()) return "different numbers of results";
  for (size_t i = 0; i < want->size(); ++i) {
    if (!SameResult((*want)[i].array, (*got)[i].array, rounded[i], err[i])) {
      return absl::StrCat("result ", i, rounded[i] ? " (rounded)" : " (exact)",
                          " differs\nevaluator: ", (*want)[i].array.ToString(),
                          "\nhost:      ", (*got)[i].array.ToString());
    }
  }
  return "";
}

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

TEST(ProgramFuzz, RandomProgramsAgreeOnTheHostBackendAndTheEvaluator) {
  const int runs = EnvInt("EMBER_PROGRAM_FUZZ_RUNS", 500);
  const uint32_t first = static_cast<uint32_t>(EnvInt("EMBER_PROGRAM_FUZZ_SEED", 1));
  int findings = 0, rounded_results = 0;
  std::map<std::string, int> op_counts;  // how often each op was generated (the mix, printed)
  for (int i = 0; i < runs; ++i) {
    const uint32_t seed = first + static_cast<uint32_t>(i);
    ProgramGenerator generator(seed);
    const std::string text = generator.Generate();
    for (bool r : generator.result_rounded()) rounded_results += r ? 1 : 0;
    for (size_t at = text.find("stablehlo."); at != std::string::npos;
         at = text.find("stablehlo.", at + 1)) {
      const size_t end = text.find_first_of(" \"(<", at);
      const std::string op = text.substr(at + 10, end - at - 10);
      if (text[at - 1] != '#' && op != "return" && op != "constant") ++op_counts[op];
    }
    const std::string difference =
        Differential(text, generator.result_rounded(), generator.result_err(), seed);
    if (!difference.empty()) {
      ++findings;
      ADD_FAILURE() << "seed " << seed << ": " << difference << "\nprogram:\n" << text;
    }
  }
  std::string mix;
  for (const auto& [op, count] : op_counts) absl::StrAppend(&mix, " ", op, "=", count);
  std::printf("program fuzz: %d programs compiled and run both ways (%d rounded results compared "
              "with a tolerance), %d findings\nop mix:%s\n",
              runs, rounded_results, findings, mix.c_str());
}

}  // namespace
}  // namespace ember::host
