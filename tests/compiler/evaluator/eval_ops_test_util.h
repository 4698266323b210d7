// Helpers for the op-family tests of the reference evaluator (ember_eval_ops_test): build a
// one-instruction function by hand, run it, and read results; seeded random inputs; scalar
// regions (add, max, compare) for reduce-like ops.
#ifndef EMBER_TESTS_COMPILER_HOST_EVAL_OPS_TEST_UTIL_H_
#define EMBER_TESTS_COMPILER_HOST_EVAL_OPS_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "compiler/evaluator/eval_value.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/ir/literal.h"
#include "compiler/ir/module.h"

namespace ember::eval::testing {

inline ir::ValueType TensorType(ir::ElementType type, std::vector<int64_t> dims) {
  return ir::ValueType::Tensor(ir::Shape::Make(type, dims).value());
}

template <typename T>
ir::Literal Lit(std::vector<int64_t> dims, const std::vector<T>& values) {
  absl::StatusOr<ir::Literal> l;
  if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> has no contiguous storage
    auto copy = std::make_unique<bool[]>(values.size() + 1);
    for (size_t i = 0; i < values.size(); ++i) copy[i] = values[i];
    l = ir::Literal::FromValues<bool>(dims, absl::Span<const bool>(copy.get(), values.size()));
  } else {
    l = ir::Literal::FromValues<T>(dims, values);
  }
  EXPECT_TRUE(l.ok()) << l.status();
  return *std::move(l);
}

template <typename T>
std::vector<T> Values(const ir::Literal& literal) {
  absl::StatusOr<absl::Span<const T>> d = literal.data<T>();
  EXPECT_TRUE(d.ok()) << d.status();
  if (!d.ok()) return {};
  return std::vector<T>(d->begin(), d->end());
}

inline std::vector<float> RandomFloats(size_t n, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}
inline std::vector<double> RandomDoubles(size_t n, uint32_t seed, double lo = -1, double hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = dist(rng);
  return v;
}
template <typename F>
std::vector<std::complex<F>> RandomComplex(size_t n, uint32_t seed) {
  std::vector<double> re = RandomDoubles(2 * n, seed);
  std::vector<std::complex<F>> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = {static_cast<F>(re[2 * i]), static_cast<F>(re[2 * i + 1])};
  return v;
}

// One module per test; each RunOp adds a fresh function to it.
class OpRunner {
 public:
  ir::Module& module() { return module_; }

  // An operand in a braced list: Literals are move-only, initializer lists are const.
  struct Operand {
    Operand(ir::Literal l) : literal(std::move(l)) {}  // NOLINT: implicit on purpose
    mutable ir::Literal literal;
  };

  absl::StatusOr<std::vector<EvalValue>> Run(ir::Opcode opcode,
                                             std::initializer_list<Operand> operands,
                                             std::vector<ir::ValueType> result_types,
                                             ir::AttributeMap attributes = {},
                                             std::vector<ir::Computation*> regions = {},
                                             EvalOptions options = {},
                                             ir::Computation* callee = nullptr) {
    std::vector<ir::Literal> ops;
    for (const Operand& o : operands) ops.push_back(std::move(o.literal));
    return RunVec(opcode, std::move(ops), std::move(result_types), std::move(attributes),
                  std::move(regions), options, callee);
  }

  // Runs `opcode` on `operands` (parameters of a new function) and returns its results.
  absl::StatusOr<std::vector<EvalValue>> RunVec(
      ir::Opcode opcode, std::vector<ir::Literal> operands, std::vector<ir::ValueType> result_types,
      ir::AttributeMap attributes = {}, std::vector<ir::Computation*> regions = {},
      EvalOptions options = {}, ir::Computation* callee = nullptr) {
    absl::StatusOr<ir::Computation*> f = module_.AddFunction(absl::StrCat("f", next_++));
    if (!f.ok()) return f.status();
    std::vector<ir::Value*> params;
    std::vector<EvalValue> args;
    for (ir::Literal& l : operands) {
      params.push_back((*f)->AddParameter(ir::ValueType::Tensor(l.shape())));
      args.push_back(EvalValue::Array(std::move(l)));
    }
    ir::Instruction* inst = (*f)->AddInstruction(opcode, params, std::move(result_types),
                                                 std::move(attributes), std::move(regions));
    if (callee != nullptr) inst->set_callee(callee);
    std::vector<ir::Value*> results;
    for (size_t i = 0; i < inst->num_results(); ++i) results.push_back(inst->result(i));
    (*f)->AddInstruction(ir::Opcode::kReturn, results, {});
    Evaluator evaluator(options);
    return evaluator.Run(**f, std::move(args));
  }

  // A scalar region (x, y) -> opcode(x, y) of element type `type` (compare: `direction`).
  ir::Computation* BinaryRegion(ir::Opcode opcode, ir::ElementType type,
                                const std::string& direction = "") {
    ir::Computation* r = module_.AddRegion("body");
    ir::ValueType scalar = TensorType(type, {});
    ir::Value* x = r->AddParameter(scalar);
    ir::Value* y = r->AddParameter(scalar);
    ir::AttributeMap attrs;
    ir::ValueType out = scalar;
    if (opcode == ir::Opcode::kCompare) {
      attrs.Set("comparison_direction", ir::Attribute::String(direction));
      out = TensorType(ir::ElementType::kPred, {});
    }
    ir::Instruction* op = r->AddInstruction(opcode, {x, y}, {out}, std::move(attrs));
    r->AddInstruction(ir::Opcode::kReturn, {op->result()}, {});
    return r;
  }

 private:
  ir::Module module_;
  int next_ = 0;
};

inline ir::Attribute Ints(std::vector<int64_t> v) { return ir::Attribute::Ints(std::move(v)); }

}  // namespace ember::eval::testing

#endif  // EMBER_TESTS_COMPILER_HOST_EVAL_OPS_TEST_UTIL_H_
