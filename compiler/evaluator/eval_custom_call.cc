// Reference evaluation of composite (through its decomposition function) and of the
// custom_call targets that reach a plugin platform.
//
// Targets (source: ../shared/reference/jax_integration.md section 5.3, the generic-lowering
// table; the Qr / ProductOfElementaryHouseholderReflectors lowerings (api_version 1, results
// (a, taus) and q) and _CUSTOM_CALL_TARGETS_GUARANTEED_STABLE in jax/_src/export/_export.py were
// confirmed in jax's sources; the check.* targets come from the StableHLO testdata):
//   Qr, ProductOfElementaryHouseholderReflectors   generic geqrf / householder_product lowerings
//                                                  (LAPACK conventions, eval_linalg_decomp.cc)
//   ApproxTopK (backend_config is_fallback = true)  approx_max_k / approx_min_k: a stable sort
//                                                  along reduction_dim with the comparator, then
//                                                  the first k (the result's size) entries
//   stablehlo.dynamic_top_k                        lax.top_k with a k operand (largest first,
//                                                  ties by lower index, NaN largest)
//   chlo.top_k                                     the same, k from the results' shape
//   chlo.<special function>, chlo.next_after, chlo.mulhi
//                                                  CHLO ops kept by the importer (eval_chlo.cc)
//   stablehlo.dynamic_rng_bit_generator            rng_bit_generator with a shape operand
//   stablehlo.dynamic_reduce_window                reduce_window with window operands
//   Sharding, SPMDFullToShardShape, SPMDShardToFullShape, LayoutConstraint,
//   annotate_device_placement, MoveToHost, MoveToDevice, Pin, Unpin
//                                                  identities on one unpartitioned device
//   shape_assertion                                an error with error_message when operand 0 is
//                                                  false
//   AllocateBuffer, CreateBuffer                   a zero-filled result (contents are undefined)
//   check.expect_eq, check.expect_almost_eq (absolute tolerance, same sign),
//   check.expect_close (max/min_ulp_difference), check.eq (returns i1),
//   check.expect_eq_const / check.expect_almost_eq_const (expected value in `value`)
//                                                  the StableHLO test suites' checks
//   interpreter.print                              the operand on stdout
//   interpreter.probe, check.expect_serialized_eq  the interpreter's probes (values kept in
//                                                  memory for the execution)
// The tolerances: the check dialect's ops carry theirs (the importer fills in the op's defaults,
// 1e-4 and 1/0 ULP); a `stablehlo.custom_call @check.expect_*` carries none and gets the StableHLO
// interpreter's values for the custom-call form: 1e-3 absolute, and 0 to 3 ULP.
//   ember_eigh, ember_svd, ember_eig, ember_schur, ember_hessenberg, ember_tridiagonal, ember_lu
//                                                  Ember's lowerings of JAX's linalg primitives
//                                                  (eval_linalg_custom_calls.cc)
// Not covered (platform-only or dynamic-only): stablehlo.dynamic_approx_top_k, LuDecomposition,
// Eigh, lapack_* / cusolver_* / cu_* FFI kernels, tpu_custom_call. Any other target goes to the
// launch's ExternalCalls (XLA FFI handlers registered at run time, ffi/), else is an error naming
// it.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "compiler/evaluator/eval_chlo.h"
#include "compiler/evaluator/eval_family_support.h"
#include "compiler/evaluator/eval_linalg_custom_calls.h"
#include "compiler/evaluator/evaluator.h"

namespace ember::eval {
namespace {

namespace fs = family_support;
using Complex = std::complex<double>;

absl::StatusOr<std::vector<EvalValue>> EvalComposite(const ir::Instruction& inst,
                                                     std::vector<EvalValue>& operands,
                                                     Evaluator& evaluator) {
  if (inst.callee() == nullptr) {
    const ir::Attribute* name = inst.attribute("name");
    return fs::OpUnimplemented(
        inst, absl::StrCat("composite ", name != nullptr ? name->ToString() : std::string("?"),
                           " has no decomposition function"));
  }
  return evaluator.Run(*inst.callee(), std::move(operands));
}

// The comparator / body of a custom_call: its callee, its first region, or the first function
// named in `called_computations` (kept by the importer as a list of function names).
const ir::Computation* CalledComputation(const ir::Instruction& inst) {
  if (inst.callee() != nullptr) return inst.callee();
  if (!inst.regions().empty()) return inst.regions()[0];
  const ir::Attribute* called = inst.attribute("called_computations");
  if (called == nullptr || inst.parent() == nullptr || inst.parent()->module() == nullptr) {
    return nullptr;
  }
  std::string name;
  if (called->kind == ir::Attribute::Kind::kString) {
    name = called->s;
  } else if (called->kind == ir::Attribute::Kind::kList && !called->list.empty() &&
             called->list[0].kind == ir::Attribute::Kind::kString) {
    name = called->list[0].s;
  }
  if (!name.empty() && name[0] == '@') name = name.substr(1);
  return name.empty() ? nullptr : inst.parent()->module()->FindFunction(name);
}

// A backend_config entry: from a Dict attribute, or from "name = value" / "name: value" text.
std::optional<std::string> ConfigEntry(const ir::Instruction& inst, const std::string& key) {
  if (const ir::Attribute* value = fs::BackendConfigEntry(inst, key)) {
    if (value->kind == ir::Attribute::Kind::kInt) return std::to_string(value->i);
    if (value->kind == ir::Attribute::Kind::kBool) return std::string(value->b ? "true" : "false");
    if (value->kind == ir::Attribute::Kind::kString) return value->s;
    return value->ToString();
  }
  const ir::Attribute* a = inst.attribute("backend_config");
  if (a == nullptr) a = inst.attribute("mhlo.backend_config");
  if (a == nullptr) return std::nullopt;
  if (a->kind == ir::Attribute::Kind::kString) {
    const std::string& s = a->s;
    size_t pos = s.find(key);
    if (pos == std::string::npos) return std::nullopt;
    pos = s.find_first_of("=:", pos + key.size());
    if (pos == std::string::npos) return std::nullopt;
    pos = s.find_first_not_of(" \"", pos + 1);
    if (pos == std::string::npos) return std::nullopt;
    const size_t end = s.find_first_of(" ,}\"", pos);
    return s.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<EvalValue>> Passthrough(const ir::Instruction& inst,
                                                   std::vector<EvalValue>& operands) {
  if (operands.size() != inst.num_results()) {
    return fs::OpError(inst, absl::StrCat("passes ", operands.size(), " operands to ",
                                          inst.num_results(), " results"));
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (inst.result(i)->type().is_tensor() && operands[i].kind == EvalValue::Kind::kArray &&
        inst.result(i)->type().dims() != operands[i].array.shape().dims()) {
      return fs::OpUnimplemented(
          inst, absl::StrCat("changes the shape ", operands[i].array.shape().ToString(), " to ",
                             inst.result(i)->type().ToString(),
                             ": the module must be partitioned before evaluation"));
    }
  }
  return std::move(operands);
}

// Stable sort of positions along `axis` of `inputs` with a region comparator
// (lhs0, rhs0, lhs1, rhs1, ...) -> i1; keeps the first `keep` entries per row.
absl::StatusOr<std::vector<EvalValue>> SortAndSlice(const ir::Instruction& inst,
                                                    const std::vector<const ir::Literal*>& inputs,
                                                    int64_t axis, const ir::Computation& less,
                                                    Evaluator& evaluator) {
  const std::vector<int64_t>& dims = inputs[0]->shape().dims();
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (axis < 0 || axis >= rank) return fs::OpError(inst, "reduction dimension out of range");
  std::vector<ir::Literal> results;
  for (size_t i = 0; i < inputs.size(); ++i) {
    EMBER_ASSIGN_OR_RETURN(ir::Literal r, fs::ZeroResult(inst, i));
    std::vector<int64_t> expect = dims;
    expect[axis] = r.shape().dims().size() == dims.size() ? r.shape().dim(axis) : -1;
    if (r.shape().dims() != expect || expect[axis] > dims[axis] ||
        r.element_type() != inputs[i]->element_type()) {
      return fs::OpError(inst,
                         absl::StrCat("result ", r.shape().ToString(), " is not a slice of ",
                                      inputs[i]->shape().ToString(), " along dimension ", axis));
    }
    results.push_back(std::move(r));
  }
  const int64_t n = dims[axis];
  const int64_t keep = results[0].shape().dim(axis);
  std::vector<int64_t> outer_dims = dims;
  outer_dims[axis] = 1;
  const std::vector<int64_t> in_str = fs::RowMajorStrides(dims);
  const std::vector<int64_t> out_str = fs::RowMajorStrides(results[0].shape().dims());
  if (fs::Product(outer_dims) == 0 || n == 0) {
    std::vector<EvalValue> out;
    for (ir::Literal& r : results) out.push_back(EvalValue::Array(std::move(r)));
    return out;
  }
  std::vector<int64_t> oi(dims.size(), 0);
  do {
    const int64_t in_base = fs::Linearize(oi, in_str);
    const int64_t out_base = fs::Linearize(oi, out_str);
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    absl::Status failure;
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
      if (!failure.ok()) return false;
      std::vector<ir::Literal> args;
      for (const ir::Literal* in : inputs) {
        absl::StatusOr<ir::Literal> a = fs::ScalarAt(*in, in_base + x * in_str[axis]);
        absl::StatusOr<ir::Literal> b = fs::ScalarAt(*in, in_base + y * in_str[axis]);
        if (!a.ok() || !b.ok()) {
          failure = a.ok() ? b.status() : a.status();
          return false;
        }
        args.push_back(*std::move(a));
        args.push_back(*std::move(b));
      }
      absl::StatusOr<std::vector<EvalValue>> r = fs::RunRegion(evaluator, less, std::move(args));
      if (!r.ok()) {
        failure = r.status();
        return false;
      }
      if (r->size() != 1 || (*r)[0].kind != EvalValue::Kind::kArray ||
          (*r)[0].array.element_type() != ir::ElementType::kPred) {
        failure = fs::OpError(inst, "comparator must return one i1");
        return false;
      }
      return (*r)[0].array.bytes()[0] != 0;
    });
    EMBER_RETURN_IF_ERROR(failure);
    for (size_t i = 0; i < inputs.size(); ++i) {
      for (int64_t j = 0; j < keep; ++j) {
        fs::CopyElement(*inputs[i], in_base + order[j] * in_str[axis], results[i],
                        out_base + j * out_str[axis]);
      }
    }
  } while (fs::NextIndex(oi, outer_dims));
  std::vector<EvalValue> out;
  for (ir::Literal& r : results) out.push_back(EvalValue::Array(std::move(r)));
  return out;
}

absl::StatusOr<std::vector<EvalValue>> ApproxTopK(const ir::Instruction& inst,
                                                  std::vector<EvalValue>& operands,
                                                  Evaluator& evaluator) {
  const ir::Computation* less = CalledComputation(inst);
  if (less == nullptr) return fs::OpError(inst, "ApproxTopK needs a comparator computation");
  const size_t n = inst.num_results();
  if (n == 0 || operands.size() < n) return fs::OpError(inst, "ApproxTopK operand count");
  std::vector<const ir::Literal*> inputs;
  for (size_t i = 0; i < n; ++i) {
    EMBER_ASSIGN_OR_RETURN(const ir::Literal* p, fs::ArrayOperand(inst, operands, i));
    inputs.push_back(p);
  }
  const int64_t rank = inputs[0]->shape().rank();
  int64_t axis = rank - 1;
  if (std::optional<std::string> dim = ConfigEntry(inst, "reduction_dim")) {
    axis = std::atoll(dim->c_str());
    if (axis < 0) axis += rank;
  }
  return SortAndSlice(inst, inputs, axis, *less, evaluator);
}

// Total order key for top_k: NaN above +inf, -0 == +0.
double TopKKey(double v) { return std::isnan(v) ? std::numeric_limits<double>::infinity() * 2 : v; }

// stablehlo.dynamic_top_k (operand, k) and chlo.top_k (operand; k is the results' last dim).
absl::StatusOr<std::vector<EvalValue>> TopK(const ir::Instruction& inst,
                                            std::vector<EvalValue>& operands,
                                            size_t operand_count) {
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, operand_count));
  if (inst.num_results() != 2) return fs::OpError(inst, "top_k has two results");
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* operand, fs::ArrayOperand(inst, operands, 0));
  EMBER_ASSIGN_OR_RETURN(ir::Literal values, fs::ZeroResult(inst, 0));
  EMBER_ASSIGN_OR_RETURN(ir::Shape index_shape, fs::ResultShape(inst, 1));
  const std::vector<int64_t>& dims = operand->shape().dims();
  if (dims.empty()) return fs::OpError(inst, "top_k needs rank >= 1");
  const int64_t n = dims.back();
  const int64_t k = values.shape().dims().empty() ? -1 : values.shape().dims().back();
  std::vector<int64_t> expect = dims;
  expect.back() = k;
  if (values.shape().dims() != expect || index_shape.dims() != expect || k > n) {
    return fs::OpError(inst, "top_k results must have the operand's shape with k last");
  }
  std::vector<double> keys;
  if (ir::IsComplex(operand->element_type())) {
    return fs::OpError(inst, "top_k does not take complex operands");
  }
  if (ir::IsFloat(operand->element_type())) {
    EMBER_ASSIGN_OR_RETURN(keys, fs::LiteralTo<double>(*operand));
  } else {
    EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> ints, fs::IntegerValues(*operand));
    // Unsigned 64-bit values above INT64_MAX saturate; fine for ordering all but those.
    for (int64_t v : ints) keys.push_back(static_cast<double>(v));
  }
  const int64_t rows = n == 0 ? 0 : operand->shape().element_count() / n;
  std::vector<uint64_t> indices(static_cast<size_t>(rows * k));
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return TopKKey(keys[r * n + a]) > TopKKey(keys[r * n + b]);
    });
    for (int64_t j = 0; j < k; ++j) {
      fs::CopyElement(*operand, r * n + order[j], values, r * k + j);
      indices[r * k + j] = static_cast<uint64_t>(order[j]);
    }
  }
  EMBER_ASSIGN_OR_RETURN(ir::Literal idx,
                         fs::LiteralFrom<uint64_t>(index_shape, absl::MakeConstSpan(indices)));
  std::vector<EvalValue> out;
  out.push_back(EvalValue::Array(std::move(values)));
  out.push_back(EvalValue::Array(std::move(idx)));
  return out;
}

// ---- check.* ------------------------------------------------------------------------------------

// Bits of element i, zero-extended.
uint64_t ElementBits(const ir::Literal& l, int64_t i) {
  uint64_t v = 0;
  const int64_t n = fs::ElementBytes(l);
  std::memcpy(&v, l.bytes().data() + i * n, static_cast<size_t>(std::min<int64_t>(n, 8)));
  return v;
}

// Distance in representable values between two finite values of a real float type, through
// the sign-magnitude -> ordered integer map; nullopt when either is not finite.
std::optional<uint64_t> UlpDistance(double a, double b, ir::ElementType type) {
  if (!std::isfinite(a) || !std::isfinite(b)) return std::nullopt;
  auto key = [&](double v) -> int64_t {
    uint64_t bits;
    int width;
    if (type == ir::ElementType::kF64) {
      std::memcpy(&bits, &v, 8);
      width = 64;
    } else if (type == ir::ElementType::kF32) {
      const float f = static_cast<float>(v);
      uint32_t b32;
      std::memcpy(&b32, &f, 4);
      bits = b32;
      width = 32;
    } else {
      const FloatFormat* fmt = ir::NarrowFloatFormat(type);
      bits = EncodeFloat(*fmt, v);
      width = fmt->total_bits();
    }
    const uint64_t sign = uint64_t{1} << (width - 1);
    const int64_t magnitude = static_cast<int64_t>(bits & (sign - 1));
    return (bits & sign) != 0 ? -magnitude : magnitude;
  };
  const int64_t ka = key(a), kb = key(b);
  return static_cast<uint64_t>(ka > kb ? ka - kb : kb - ka);
}

// Compares two arrays; `mode`: 0 exact (floats by value, NaN == NaN), 1 absolute tolerance,
// 2 ULP range. Returns an empty string when they match, else a description of the first
// mismatch.
absl::StatusOr<std::string> Compare(const ir::Instruction& inst, const ir::Literal& actual,
                                    const ir::Literal& expected, int mode) {
  if (actual.shape().dims() != expected.shape().dims() ||
      actual.element_type() != expected.element_type()) {
    return absl::StrCat("types differ: ", actual.shape().ToString(), " vs ",
                        expected.shape().ToString());
  }
  const ir::ElementType type = actual.element_type();
  const int64_t count = actual.shape().element_count();
  if (!ir::IsFloat(type) && !ir::IsComplex(type)) {
    for (int64_t i = 0; i < count; ++i) {
      if (ElementBits(actual, i) != ElementBits(expected, i)) {
        EMBER_ASSIGN_OR_RETURN(ir::Literal a, fs::ScalarAt(actual, i));
        EMBER_ASSIGN_OR_RETURN(ir::Literal e, fs::ScalarAt(expected, i));
        return absl::StrCat("element ", i, ": got ", a.ToString(), ", expected ", e.ToString());
      }
    }
    return std::string();
  }
  EMBER_ASSIGN_OR_RETURN(double tolerance, fs::FloatAttr(inst, "tolerance", 1e-3));
  EMBER_ASSIGN_OR_RETURN(int64_t max_ulp, fs::IntAttr(inst, "max_ulp_difference", 3));
  EMBER_ASSIGN_OR_RETURN(int64_t min_ulp, fs::IntAttr(inst, "min_ulp_difference", 0));
  EMBER_ASSIGN_OR_RETURN(std::vector<Complex> a, fs::LiteralTo<Complex>(actual));
  EMBER_ASSIGN_OR_RETURN(std::vector<Complex> e, fs::LiteralTo<Complex>(expected));
  const ir::ElementType part =
      type == ir::ElementType::kC64
          ? ir::ElementType::kF32
          : (type == ir::ElementType::kC128 ? ir::ElementType::kF64 : type);
  auto same_value = [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); };
  for (int64_t i = 0; i < count; ++i) {
    bool ok = true;
    for (int c = 0; c < 2 && ok; ++c) {
      const double x = c == 0 ? a[i].real() : a[i].imag();
      const double y = c == 0 ? e[i].real() : e[i].imag();
      if (mode == 0) {
        ok = same_value(x, y);
      } else if (mode == 1) {
        ok = same_value(x, y) ||
             (std::signbit(x) == std::signbit(y) && std::abs(x - y) <= tolerance);
      } else {
        std::optional<uint64_t> ulp = UlpDistance(x, y, part);
        ok = ulp.has_value() ? (*ulp <= static_cast<uint64_t>(max_ulp) &&
                                *ulp >= static_cast<uint64_t>(min_ulp))
                             : (ElementBits(actual, i) == ElementBits(expected, i) ||
                                (std::isnan(x) && std::isnan(y)) || x == y);
      }
    }
    if (!ok) {
      EMBER_ASSIGN_OR_RETURN(ir::Literal av, fs::ScalarAt(actual, i));
      EMBER_ASSIGN_OR_RETURN(ir::Literal ev, fs::ScalarAt(expected, i));
      return absl::StrCat("element ", i, ": got ", av.ToString(), ", expected ", ev.ToString());
    }
  }
  return std::string();
}

absl::StatusOr<std::vector<EvalValue>> Check(const ir::Instruction& inst, const std::string& target,
                                             std::vector<EvalValue>& operands) {
  const bool against_constant =
      target == "check.expect_eq_const" || target == "check.expect_almost_eq_const";
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, against_constant ? 1 : 2));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* a, fs::ArrayOperand(inst, operands, 0));
  const ir::Literal* b = nullptr;
  if (against_constant) {
    // The interpreter's check dialect: the expected value is the op's `value` attribute.
    const ir::Attribute* value = inst.attribute("value");
    if (value == nullptr || value->kind != ir::Attribute::Kind::kLiteral || !value->literal) {
      return fs::OpError(inst, absl::StrCat(target, " needs a dense `value` attribute"));
    }
    b = value->literal.get();
  } else {
    EMBER_ASSIGN_OR_RETURN(b, fs::ArrayOperand(inst, operands, 1));
  }
  const int mode = (target == "check.expect_almost_eq" || target == "check.expect_almost_eq_const")
                       ? 1
                       : (target == "check.expect_close" ? 2 : 0);
  EMBER_ASSIGN_OR_RETURN(std::string mismatch, Compare(inst, *a, *b, mode));
  if (target == "check.eq") {
    EMBER_ASSIGN_OR_RETURN(ir::Shape shape, fs::ResultShape(inst, 0));
    std::vector<uint8_t> value(static_cast<size_t>(shape.element_count()), mismatch.empty());
    EMBER_ASSIGN_OR_RETURN(ir::Literal r, fs::LiteralFrom<bool>(shape, absl::MakeConstSpan(value)));
    std::vector<EvalValue> out;
    out.push_back(EvalValue::Array(std::move(r)));
    return out;
  }
  if (!mismatch.empty()) {
    return fs::OpError(inst, absl::StrCat(target, " failed: ", mismatch));
  }
  return std::vector<EvalValue>();
}

// interpreter.probe records its operand under `probe_id` and returns it;
// check.expect_serialized_eq compares its operand with the `iteration`-th (default 0; `iter` in the text form) value recorded
// under `probe_id`. The interpreter keeps them in files of a probe directory; the evaluator keeps
// them in memory for the execution, which is what the check needs.
absl::StatusOr<std::vector<EvalValue>> Probe(const ir::Instruction& inst, const std::string& target,
                                             std::vector<EvalValue>& operands,
                                             Evaluator& evaluator) {
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 1));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* value, fs::ArrayOperand(inst, operands, 0));
  EMBER_ASSIGN_OR_RETURN(std::string id, fs::StringAttr(inst, "probe_id"));
  if (target == "interpreter.probe") {
    EMBER_ASSIGN_OR_RETURN(ir::Literal copy, value->Clone());
    evaluator.RecordProbe(id, std::move(copy));
    return Passthrough(inst, operands);
  }
  EMBER_ASSIGN_OR_RETURN(int64_t iteration, fs::IntAttr(inst, "iteration", 0));
  const ir::Literal* recorded = evaluator.FindProbe(id, iteration);
  if (recorded == nullptr) {
    return fs::OpError(inst, absl::StrCat("check.expect_serialized_eq: no value recorded for probe '",
                                          id, "' at iteration ", iteration));
  }
  EMBER_ASSIGN_OR_RETURN(std::string mismatch, Compare(inst, *value, *recorded, /*mode=*/0));
  if (!mismatch.empty()) {
    return fs::OpError(inst, absl::StrCat("check.expect_serialized_eq failed for probe '", id,
                                          "': ", mismatch));
  }
  return std::vector<EvalValue>();
}

absl::StatusOr<std::vector<EvalValue>> EvalCustomCall(const ir::Instruction& inst,
                                                      std::vector<EvalValue>& operands,
                                                      Evaluator& evaluator) {
  EMBER_ASSIGN_OR_RETURN(std::string target, fs::StringAttr(inst, "call_target_name"));
  if (target == "interpreter.probe" || target == "check.expect_serialized_eq") {
    return Probe(inst, target, operands, evaluator);
  }
  if (target == "interpreter.print") {
    // The interpreter's debug print: the operand's value on stdout, one whole print at a time
    // (devices of a multi-device launch print from their own threads).
    EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 1));
    EMBER_ASSIGN_OR_RETURN(const ir::Literal* value, fs::ArrayOperand(inst, operands, 0));
    static absl::Mutex* print_mutex = new absl::Mutex();
    absl::MutexLock lock(print_mutex);
    std::cout << inst.operand(0)->type().ToString() << " " << value->ToString() << std::endl;
    return std::vector<EvalValue>();
  }
  if (target == "Sharding" || target == "SPMDFullToShardShape" ||
      target == "SPMDShardToFullShape" || target == "LayoutConstraint" ||
      target == "annotate_device_placement" || target == "MoveToHost" || target == "MoveToDevice" ||
      target == "Pin" || target == "Unpin") {
    return Passthrough(inst, operands);
  }
  if (target == "CreateBuffer") {
    // An uninitialized buffer (the spec's special target): zeros here. Buffers are arrays in
    // the evaluator, and Pin / Unpin (above) move them unchanged.
    EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 0));
    const ir::ValueType& type = inst.result(0)->type();
    if (inst.num_results() != 1 || !type.is_buffer() || !type.is_static()) {
      return fs::OpError(inst, "CreateBuffer returns one static buffer");
    }
    absl::StatusOr<ir::Literal> zeros = ir::Literal::Create(type.shape());
    if (!zeros.ok()) return fs::OpError(inst, zeros.status().message());
    std::vector<EvalValue> results;
    results.push_back(EvalValue::Array(*std::move(zeros)));
    return results;
  }
  if (target == "Qr") {
    EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 1));
    EMBER_ASSIGN_OR_RETURN(const ir::Literal* a, fs::ArrayOperand(inst, operands, 0));
    return fs::QrCore(inst, *a);
  }
  if (target == "ProductOfElementaryHouseholderReflectors") {
    EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 2));
    EMBER_ASSIGN_OR_RETURN(const ir::Literal* a, fs::ArrayOperand(inst, operands, 0));
    EMBER_ASSIGN_OR_RETURN(const ir::Literal* taus, fs::ArrayOperand(inst, operands, 1));
    return fs::HouseholderProductCore(inst, *a, *taus);
  }
  if (IsLinalgCustomCall(target)) return EvalLinalgCustomCall(inst, target, operands);
  if (target == "ApproxTopK") return ApproxTopK(inst, operands, evaluator);
  if (target == "stablehlo.dynamic_top_k") return TopK(inst, operands, 2);
  if (target == "chlo.top_k") return TopK(inst, operands, 1);
  if (target == "chlo.ragged_dot") return EvalRaggedDot(inst, operands);
  if (target == "chlo.scan") return EvalScan(inst, operands, evaluator);
  if (IsEvaluatedChloOp(target)) return EvalChloOp(inst, target, operands);
  if (target == "stablehlo.dynamic_rng_bit_generator") {
    if (operands.empty() || inst.num_results() != 2) {
      return fs::OpError(inst, "expects (state, shape) -> (state, output)");
    }
    EMBER_ASSIGN_OR_RETURN(const ir::Literal* state, fs::ArrayOperand(inst, operands, 0));
    EMBER_ASSIGN_OR_RETURN(std::string algorithm,
                           fs::StringAttr(inst, "rng_algorithm", std::string("DEFAULT")));
    EMBER_ASSIGN_OR_RETURN(ir::Shape output_shape, fs::ResultShape(inst, 1));
    return fs::RngBitGeneratorCore(inst, *state, algorithm, output_shape);
  }
  if (target == "stablehlo.dynamic_reduce_window") {
    const ir::Computation* body = CalledComputation(inst);
    if (body == nullptr || operands.size() < 7 || (operands.size() - 5) % 2 != 0) {
      return fs::OpError(inst, "expects inputs, init values, 5 window operands and a body");
    }
    const size_t n = (operands.size() - 5) / 2;
    std::vector<const ir::Literal*> inputs, inits;
    for (size_t i = 0; i < 2 * n; ++i) {
      EMBER_ASSIGN_OR_RETURN(const ir::Literal* p, fs::ArrayOperand(inst, operands, i));
      (i < n ? inputs : inits).push_back(p);
    }
    fs::WindowParams params;
    std::vector<int64_t>* fields[5] = {&params.window_dimensions, &params.window_strides,
                                       &params.base_dilations, &params.window_dilations,
                                       &params.padding};
    for (size_t f = 0; f < 5; ++f) {
      EMBER_ASSIGN_OR_RETURN(const ir::Literal* p, fs::ArrayOperand(inst, operands, 2 * n + f));
      EMBER_ASSIGN_OR_RETURN(*fields[f], fs::IntegerValues(*p));
    }
    return fs::ReduceWindowCore(inst, inputs, inits, params, *body, evaluator);
  }
  if (target == "shape_assertion") {
    if (operands.empty()) return fs::OpError(inst, "shape_assertion needs an assertion operand");
    EMBER_ASSIGN_OR_RETURN(const ir::Literal* ok, fs::ArrayOperand(inst, operands, 0));
    EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> v, fs::IntegerValues(*ok));
    if (std::any_of(v.begin(), v.end(), [](int64_t x) { return x == 0; })) {
      EMBER_ASSIGN_OR_RETURN(std::string message,
                             fs::StringAttr(inst, "error_message", std::string("shape assertion")));
      return absl::FailedPreconditionError(absl::StrCat(inst.Describe(), ": ", message));
    }
    return std::vector<EvalValue>();
  }
  if (target == "AllocateBuffer" || target == "CreateBuffer") {
    std::vector<EvalValue> out;
    for (size_t i = 0; i < inst.num_results(); ++i) {
      EMBER_ASSIGN_OR_RETURN(ir::Literal zeros, fs::ZeroResult(inst, i));
      out.push_back(EvalValue::Array(std::move(zeros)));
    }
    return out;
  }
  if (target == "check.expect_eq" || target == "check.expect_almost_eq" ||
      target == "check.expect_close" || target == "check.eq" ||
      target == "check.expect_eq_const" || target == "check.expect_almost_eq_const") {
    return Check(inst, target, operands);
  }
  if (ExternalCalls* external = evaluator.options().external_calls;
      external != nullptr && external->Has(target)) {
    return external->Call(inst, operands);
  }
  return fs::OpUnimplemented(
      inst, absl::StrCat("custom_call target '", target,
                         "' is not supported by the evaluator, and no FFI handler is registered "
                         "for it"));
}

}  // namespace

void RegisterCustomCallOps(OpTable& table) {
  table.Register(ir::Opcode::kCustomCall, EvalCustomCall);
  table.Register(ir::Opcode::kComposite, EvalComposite);
}

}  // namespace ember::eval
