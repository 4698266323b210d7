// Tests of ScalarProgram (compiled scalar regions) and of sort through it: the comparators JAX
// emits compile, give the evaluator's answer for every pair of special values, and sort large
// arrays as a direct std::stable_sort over the same order does; regions with other ops are
// refused, so the evaluator runs them.
#include "compiler/evaluator/scalar_program.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "compiler/evaluator/evaluator.h"
#include "tests/compiler/evaluator/eval_ops_test_util.h"

namespace ember::eval {
namespace {

using testing::Lit;
using testing::OpRunner;
using testing::RandomFloats;
using testing::TensorType;
using testing::Values;
using ET = ir::ElementType;

ir::Value* Constant(ir::Computation* region, ir::Literal literal) {
  ir::ValueType type = ir::ValueType::Tensor(literal.shape());
  ir::AttributeMap a;
  a.Set("value", ir::Attribute::OfLiteral(std::move(literal)));
  return region->AddInstruction(ir::Opcode::kConstant, {}, {type}, std::move(a))->result();
}

ir::Value* Compare(ir::Computation* region, const char* direction, ir::Value* a, ir::Value* b,
                   const char* type = nullptr) {
  ir::AttributeMap attrs;
  attrs.Set("comparison_direction", ir::Attribute::String(direction));
  if (type != nullptr) attrs.Set("compare_type", ir::Attribute::String(type));
  return region
      ->AddInstruction(ir::Opcode::kCompare, {a, b}, {TensorType(ET::kPred, {})}, std::move(attrs))
      ->result();
}

ir::Value* Select(ir::Computation* region, ir::Value* p, ir::Value* a, ir::Value* b) {
  return region->AddInstruction(ir::Opcode::kSelect, {p, a, b}, {a->type()})->result();
}

// x with -0 as +0 and every NaN as the canonical quiet NaN, as jnp.sort's comparator does.
ir::Value* Canonical(ir::Computation* region, ir::Value* x) {
  ir::Value* zero = Constant(region, Lit<float>({}, {0.0f}));
  ir::Value* no_neg_zero = Select(region, Compare(region, "EQ", x, zero, "FLOAT"),
                                  Constant(region, Lit<float>({}, {0.0f})), x);
  ir::Value* nan = Constant(region, Lit<float>({}, {std::numeric_limits<float>::quiet_NaN()}));
  return Select(region, Compare(region, "NE", x, x, "FLOAT"), nan, no_neg_zero);
}

// The comparator of jnp.sort / jnp.argsort over f32 keys (JAX 0.10.2's lowering), with
// `extra` further (ignored) operand pairs of s32.
ir::Computation* JaxFloatComparator(OpRunner& r, int extra = 0) {
  ir::Computation* region = r.module().AddRegion("comparator");
  ir::Value* a = region->AddParameter(TensorType(ET::kF32, {}));
  ir::Value* b = region->AddParameter(TensorType(ET::kF32, {}));
  for (int i = 0; i < 2 * extra; ++i) region->AddParameter(TensorType(ET::kS32, {}));
  ir::Value* lt = Compare(region, "LT", Canonical(region, a), Canonical(region, b), "TOTALORDER");
  region->AddInstruction(ir::Opcode::kReturn, {lt}, {});
  return region;
}

bool EvaluatorAnswer(const ir::Computation& region, ir::Literal x, ir::Literal y) {
  std::vector<EvalValue> values;
  values.push_back(EvalValue::Array(std::move(x)));
  values.push_back(EvalValue::Array(std::move(y)));
  Evaluator evaluator;
  absl::StatusOr<std::vector<EvalValue>> out = evaluator.Run(region, std::move(values));
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return false;
  return Values<bool>((*out)[0].array)[0];
}

uint64_t Bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
}

const std::vector<float> kSpecials = {
    0.0f, -0.0f, 1.0f, -1.0f, std::numeric_limits<float>::infinity(),
    -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
    -std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min(), 3.4e38f};

TEST(ScalarProgram, JaxSortComparatorAgreesWithTheEvaluatorOnSpecialValues) {
  OpRunner r;
  const ir::Computation* region = JaxFloatComparator(r);
  std::optional<ScalarProgram> program = ScalarProgram::Compile(*region);
  ASSERT_TRUE(program.has_value());
  ASSERT_EQ(program->num_parameters(), 2);
  std::vector<uint64_t> regs = program->NewRegisters();
  for (float x : kSpecials) {
    for (float y : kSpecials) {
      regs[0] = Bits(x);
      regs[1] = Bits(y);
      const bool compiled = program->Run(regs) != 0;
      EXPECT_EQ(compiled, EvaluatorAnswer(*region, Lit<float>({}, {x}), Lit<float>({}, {y})))
          << x << " < " << y;
    }
  }
}

TEST(ScalarProgram, IntegerAndLogicStepsAgreeWithTheEvaluator) {
  // (a <s b) xor not(a == b or a >u b): every logic step and both integer compare types.
  OpRunner r;
  ir::Computation* region = r.module().AddRegion("logic");
  ir::Value* a = region->AddParameter(TensorType(ET::kS32, {}));
  ir::Value* b = region->AddParameter(TensorType(ET::kS32, {}));
  ir::ValueType p = TensorType(ET::kPred, {});
  ir::Value* lt = Compare(region, "LT", a, b, "SIGNED");
  ir::Value* eq = Compare(region, "EQ", a, b);
  ir::Value* gtu = Compare(region, "GT", a, b, "UNSIGNED");
  ir::Value* either = region->AddInstruction(ir::Opcode::kOr, {eq, gtu}, {p})->result();
  ir::Value* neither = region->AddInstruction(ir::Opcode::kNot, {either}, {p})->result();
  ir::Value* both = region->AddInstruction(ir::Opcode::kAnd, {lt, neither}, {p})->result();
  ir::Value* out = region->AddInstruction(ir::Opcode::kXor, {both, lt}, {p})->result();
  region->AddInstruction(ir::Opcode::kReturn, {out}, {});
  std::optional<ScalarProgram> program = ScalarProgram::Compile(*region);
  ASSERT_TRUE(program.has_value());
  const std::vector<int32_t> values = {0, 1, -1, 7, std::numeric_limits<int32_t>::min(),
                                       std::numeric_limits<int32_t>::max()};
  std::vector<uint64_t> regs = program->NewRegisters();
  for (int32_t x : values) {
    for (int32_t y : values) {
      regs[0] = static_cast<uint32_t>(x);
      regs[1] = static_cast<uint32_t>(y);
      EXPECT_EQ(program->Run(regs) != 0,
                EvaluatorAnswer(*region, Lit<int32_t>({}, {x}), Lit<int32_t>({}, {y})))
          << x << ", " << y;
    }
  }
}

TEST(ScalarProgram, RegionsWithOtherOpsOrShapesAreRefused) {
  OpRunner r;
  EXPECT_FALSE(ScalarProgram::Compile(*r.BinaryRegion(ir::Opcode::kAdd, ET::kF32)).has_value());
  EXPECT_FALSE(
      ScalarProgram::Compile(*r.BinaryRegion(ir::Opcode::kCompare, ET::kC64, "LT")).has_value());
  ir::Computation* vector = r.module().AddRegion("vector");
  ir::Value* a = vector->AddParameter(TensorType(ET::kF32, {2}));
  vector->AddInstruction(ir::Opcode::kReturn, {a}, {});
  EXPECT_FALSE(ScalarProgram::Compile(*vector).has_value());
  EXPECT_TRUE(
      ScalarProgram::Compile(*r.BinaryRegion(ir::Opcode::kCompare, ET::kBF16, "GT")).has_value());
}

TEST(ScalarProgram, ConstantsOfTheEnclosingFunctionAreReadOtherValuesRefused) {
  // Passes share constants between a function and its regions: x < c with c outside compiles;
  // x < y with y a parameter of the enclosing function cannot run without that function's frame.
  OpRunner r;
  absl::StatusOr<ir::Computation*> f = r.module().AddFunction("outer");
  ASSERT_TRUE(f.ok());
  ir::Value* outer_param = (*f)->AddParameter(TensorType(ET::kF32, {}));
  ir::Value* c = Constant(*f, Lit<float>({}, {0.5f}));
  for (ir::Value* other : {c, outer_param}) {
    ir::Computation* region = r.module().AddRegion("captures");
    ir::Value* x = region->AddParameter(TensorType(ET::kF32, {}));
    region->AddParameter(TensorType(ET::kF32, {}));
    region->AddInstruction(ir::Opcode::kReturn, {Compare(region, "LT", x, other)}, {});
    std::optional<ScalarProgram> program = ScalarProgram::Compile(*region);
    ASSERT_EQ(program.has_value(), other == c);
    if (!program.has_value()) continue;
    std::vector<uint64_t> regs = program->NewRegisters();
    for (float v : {0.25f, 0.5f, 0.75f}) {
      regs[0] = Bits(v);
      EXPECT_EQ(program->Run(regs) != 0, v < 0.5f) << v;
    }
  }
}

// The order jnp.sort promises, computed directly: -0 equals +0, NaNs (any sign) sort last.
int64_t SortKey(float x) {
  if (std::isnan(x)) return std::numeric_limits<int64_t>::max();
  if (x == 0) x = 0.0f;
  const int32_t bits = static_cast<int32_t>(Bits(x));
  return bits < 0 ? -static_cast<int64_t>(bits & 0x7fffffff) - 1 : bits;
}

TEST(ScalarProgram, SortsFiftyThousandFloatsAndCarriesAStableIndex) {
  constexpr int64_t n = 50'000;
  std::vector<float> keys = RandomFloats(n, 11, -100, 100);
  for (int64_t i = 0; i < n; i += 97) keys[i] = kSpecials[(i / 97) % kSpecials.size()];
  for (int64_t i = 5; i < n; i += 13) keys[i] = std::round(keys[i]);  // many ties
  std::vector<int32_t> index(n);
  std::iota(index.begin(), index.end(), 0);

  OpRunner r;
  ir::AttributeMap attrs;
  attrs.Set("dimension", ir::Attribute::Int(0));
  attrs.Set("is_stable", ir::Attribute::Bool(true));
  absl::StatusOr<std::vector<EvalValue>> out =
      r.Run(ir::Opcode::kSort, {Lit<float>({n}, keys), Lit<int32_t>({n}, index)},
            {TensorType(ET::kF32, {n}), TensorType(ET::kS32, {n})}, attrs,
            {JaxFloatComparator(r, /*extra=*/1)});
  ASSERT_TRUE(out.ok()) << out.status();

  std::vector<int32_t> want = index;
  std::stable_sort(want.begin(), want.end(),
                   [&](int32_t x, int32_t y) { return SortKey(keys[x]) < SortKey(keys[y]); });
  EXPECT_EQ(Values<int32_t>((*out)[1].array), want);
  const std::vector<float> sorted = Values<float>((*out)[0].array);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(Bits(sorted[i]), Bits(keys[want[i]])) << "position " << i;
  }
}

}  // namespace
}  // namespace ember::eval
