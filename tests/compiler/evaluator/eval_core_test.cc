// Tests of the reference evaluator's core (Evaluator::Run, captures, errors) and its first op
// families: elementwise (unary, binary, convert, compare), data movement, control flow and
// reduction. Programs are built by hand; expectations are computed independently per element.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "compiler/evaluator/eval_util.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/ir/module.h"

namespace ember::eval {
namespace {

using ir::Attribute;
using ir::AttributeMap;
using ir::ElementType;
using ir::Literal;
using ir::Opcode;
using ir::ValueType;

ValueType TensorType(ElementType type, std::vector<int64_t> dims = {}) {
  return ValueType::Tensor(*ir::Shape::Make(type, dims));
}

template <typename T>
Literal Lit(std::vector<int64_t> dims, std::vector<T> values) {
  absl::StatusOr<Literal> l;
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    l = Literal::FromBytes(*ir::Shape::Make(ElementType::kPred, dims), bytes);
  } else {
    l = Literal::FromValues<T>(dims, values);
  }
  EXPECT_TRUE(l.ok()) << l.status();
  return *std::move(l);
}

// Literals are move-only, so brace lists of arguments hold them in a wrapper they can be moved
// out of.
struct Arg {
  Arg(Literal&& literal) : literal(std::move(literal)) {}  // NOLINT: implicit on purpose
  mutable Literal literal;
};
using Args = std::initializer_list<Arg>;
std::vector<Literal> ToVector(Args args) {
  std::vector<Literal> v;
  for (const Arg& a : args) v.push_back(std::move(a.literal));
  return v;
}

template <typename T>
std::vector<T> Values(const Literal& literal) {
  absl::Span<const T> span = *literal.data<T>();
  return std::vector<T>(span.begin(), span.end());
}

AttributeMap Attrs(std::vector<std::pair<std::string, Attribute>> entries) {
  AttributeMap map;
  for (auto& [name, value] : entries) map.Set(name, std::move(value));
  return map;
}

// A module with a `main` function that tests fill in.
struct Program {
  ir::Module module;
  ir::Computation* main = *module.AddFunction("main");

  ir::Value* Param(ValueType type, ir::Computation* c = nullptr) {
    return (c ? c : main)->AddParameter(std::move(type));
  }
  ir::Value* Add(Opcode op, std::vector<ir::Value*> operands, ValueType result,
                 AttributeMap attributes = {}, std::vector<ir::Computation*> regions = {},
                 ir::Computation* c = nullptr) {
    return (c ? c : main)
        ->AddInstruction(op, std::move(operands), {std::move(result)}, std::move(attributes),
                         std::move(regions))
        ->result(0);
  }
  void Return(std::vector<ir::Value*> values, ir::Computation* c = nullptr) {
    (c ? c : main)->AddInstruction(Opcode::kReturn, std::move(values), {});
  }
  absl::StatusOr<std::vector<EvalValue>> Run(Args args, EvalOptions options = {}) {
    std::vector<EvalValue> values;
    for (Literal& l : ToVector(args)) values.push_back(EvalValue::Array(std::move(l)));
    Evaluator evaluator(options);
    return evaluator.Run(*main, std::move(values));
  }
  // A scalar region computing `op`(p0, p1) of `type`: reduce bodies, comparators.
  ir::Computation* BinaryRegion(Opcode op, ElementType type, ValueType result,
                                AttributeMap attributes = {}) {
    ir::Computation* r = module.AddRegion("body");
    ir::Value* a = r->AddParameter(TensorType(type));
    ir::Value* b = r->AddParameter(TensorType(type));
    Return({Add(op, {a, b}, std::move(result), std::move(attributes), {}, r)}, r);
    return r;
  }
};

// Runs a single op on array arguments and returns its only result.
absl::StatusOr<Literal> RunOpOn(Opcode op, std::vector<Literal> args, ValueType result,
                                AttributeMap attributes = {}) {
  Program p;
  std::vector<ir::Value*> params;
  std::vector<EvalValue> values;
  for (Literal& a : args) {
    params.push_back(p.Param(ValueType::Tensor(a.shape())));
    values.push_back(EvalValue::Array(std::move(a)));
  }
  p.Return({p.Add(op, params, std::move(result), std::move(attributes))});
  Evaluator evaluator;
  absl::StatusOr<std::vector<EvalValue>> out = evaluator.Run(*p.main, std::move(values));
  if (!out.ok()) return out.status();
  return std::move((*out)[0].array);
}

absl::StatusOr<Literal> RunOp(Opcode op, Args args, ValueType result,
                              AttributeMap attributes = {}) {
  return RunOpOn(op, ToVector(args), std::move(result), std::move(attributes));
}

Literal RunOk(Opcode op, Args args, ValueType result, AttributeMap attributes = {}) {
  absl::StatusOr<Literal> out =
      RunOpOn(op, ToVector(args), std::move(result), std::move(attributes));
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *std::move(out) : Literal();
}

// ---- Binary ops on every element type, random inputs
// ---------------------------------------------

template <typename T>
std::vector<T> RandomValues(std::mt19937& rng, int n, bool nonzero = false) {
  std::vector<T> v;
  std::uniform_real_distribution<double> real(-8, 8);
  std::uniform_int_distribution<int64_t> any(std::numeric_limits<int64_t>::min(),
                                             std::numeric_limits<int64_t>::max());
  for (int i = 0; i < n; ++i) {
    if constexpr (kIsRealFloat<T>) {
      double x = real(rng);
      if (nonzero && std::fabs(x) < 0.5) x = 1.5;
      v.push_back(FloatFromDouble<T>(x));
    } else if constexpr (kIsComplex<T>) {
      v.push_back(T(static_cast<typename T::value_type>(real(rng)),
                    static_cast<typename T::value_type>(real(rng))));
    } else {
      T x = IntFromI64<T>(any(rng));
      if (nonzero && IntToI64(x) == 0) x = IntFromI64<T>(1);
      v.push_back(x);
    }
  }
  return v;
}

// Independent per-type expectations for add / subtract / multiply / divide.
template <typename T>
T Expected(Opcode op, T a, T b) {
  if constexpr (kIsComplex<T>) {
    std::complex<double> x(a.real(), a.imag()), y(b.real(), b.imag()), r;
    if (op == Opcode::kAdd) r = x + y;
    if (op == Opcode::kSubtract) r = x - y;
    if (op == Opcode::kMultiply) r = x * y;
    if (op == Opcode::kDivide) r = x / y;
    return T(static_cast<typename T::value_type>(r.real()),
             static_cast<typename T::value_type>(r.imag()));
  } else if constexpr (kIsRealFloat<T>) {
    const double x = FloatToDouble(a), y = FloatToDouble(b);
    double r = 0;
    if (op == Opcode::kAdd) r = x + y;
    if (op == Opcode::kSubtract) r = x - y;
    if (op == Opcode::kMultiply) r = x * y;
    if (op == Opcode::kDivide) r = x / y;
    return FloatFromDouble<T>(r);
  } else {
    // Integers: exact arithmetic in __int128, reduced modulo 2^bits.
    constexpr int kBits = BitWidthOf<T>();
    const __int128 x = kIsSignedInt<T>
                           ? __int128(IntToI64(a))
                           : __int128(IntToU64(a) & (kBits == 64 ? ~0ull : (1ull << kBits) - 1));
    const __int128 y = kIsSignedInt<T>
                           ? __int128(IntToI64(b))
                           : __int128(IntToU64(b) & (kBits == 64 ? ~0ull : (1ull << kBits) - 1));
    // Unsigned 128-bit arithmetic wraps (no UB), and wrapping commutes with reducing mod 2^bits.
    using U = unsigned __int128;
    U r = 0;
    if (op == Opcode::kAdd) r = U(x) + U(y);
    if (op == Opcode::kSubtract) r = U(x) - U(y);
    if (op == Opcode::kMultiply) r = U(x) * U(y);
    if (op == Opcode::kDivide) r = U(x / y);  // y != 0 in these tests
    return IntFromU64<T>(static_cast<uint64_t>(r));
  }
}

template <typename T>
void CheckArithmetic(uint32_t seed) {
  SCOPED_TRACE(TypeName(ir::kElementTypeOf<T>));
  std::mt19937 rng(seed);
  const int n = 64;
  for (Opcode op : {Opcode::kAdd, Opcode::kSubtract, Opcode::kMultiply, Opcode::kDivide}) {
    SCOPED_TRACE(std::string(ir::OpcodeName(op)));
    std::vector<T> a = RandomValues<T>(rng, n);
    std::vector<T> b = RandomValues<T>(rng, n, /*nonzero=*/op == Opcode::kDivide);
    if constexpr (kIsSignedInt<T>) {
      // Keep INT_MIN / -1 out of the random part (it has its own test).
      for (int i = 0; i < n; ++i) {
        if (op == Opcode::kDivide && IntToI64(b[i]) == -1) b[i] = IntFromI64<T>(3);
      }
    }
    Literal out = RunOk(op, {Lit<T>({4, 16}, a), Lit<T>({4, 16}, b)},
                        TensorType(ir::kElementTypeOf<T>, {4, 16}));
    std::vector<T> got = Values<T>(out);
    ASSERT_EQ(got.size(), static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      const T want = Expected(op, a[i], b[i]);
      if constexpr (kIsRealFloat<T>) {
        EXPECT_EQ(FloatBits(got[i]), FloatBits(want))
            << i << ": " << FloatToDouble(a[i]) << ", " << FloatToDouble(b[i]);
      } else if constexpr (kIsComplex<T>) {
        EXPECT_EQ(got[i], want) << i;
      } else {
        EXPECT_EQ(IntToI64(got[i]), IntToI64(want))
            << i << ": " << IntToI64(a[i]) << ", " << IntToI64(b[i]);
      }
    }
  }
}

TEST(EvalBinary, ArithmeticEveryType) {
  CheckArithmetic<int8_t>(1);
  CheckArithmetic<int16_t>(2);
  CheckArithmetic<int32_t>(3);
  CheckArithmetic<int64_t>(4);
  CheckArithmetic<uint8_t>(5);
  CheckArithmetic<uint16_t>(6);
  CheckArithmetic<uint32_t>(7);
  CheckArithmetic<uint64_t>(8);
  CheckArithmetic<ir::S1>(9);
  CheckArithmetic<ir::S2>(10);
  CheckArithmetic<ir::S4>(11);
  CheckArithmetic<ir::U1>(12);
  CheckArithmetic<ir::U2>(13);
  CheckArithmetic<ir::U4>(14);
  CheckArithmetic<float>(15);
  CheckArithmetic<double>(16);
  CheckArithmetic<ir::BF16>(17);
  CheckArithmetic<ir::F16>(18);
  CheckArithmetic<ir::F8E4M3FN>(19);
  CheckArithmetic<ir::F8E5M2>(20);
  CheckArithmetic<ir::F8E4M3FNUZ>(21);
  CheckArithmetic<ir::F8E5M2FNUZ>(22);
  CheckArithmetic<ir::F8E4M3B11FNUZ>(23);
  CheckArithmetic<ir::F8E4M3>(24);
  CheckArithmetic<ir::F8E3M4>(25);
  CheckArithmetic<ir::F6E2M3FN>(26);
  CheckArithmetic<ir::F6E3M2FN>(27);
  CheckArithmetic<ir::F4E2M1FN>(28);
  CheckArithmetic<ir::F8E8M0FNU>(31);
  CheckArithmetic<std::complex<float>>(29);
  CheckArithmetic<std::complex<double>>(30);
}

TEST(EvalBinary, PredAddIsOrMultiplyIsAnd) {
  Literal a = Lit<bool>({4}, {false, false, true, true});
  Literal b = Lit<bool>({4}, {false, true, false, true});
  auto t = TensorType(ElementType::kPred, {4});
  EXPECT_EQ(Values<bool>(RunOk(Opcode::kAdd, {*a.Clone(), *b.Clone()}, t)),
            (std::vector<bool>{false, true, true, true}));
  EXPECT_EQ(Values<bool>(RunOk(Opcode::kMultiply, {*a.Clone(), *b.Clone()}, t)),
            (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(Values<bool>(RunOk(Opcode::kXor, {*a.Clone(), *b.Clone()}, t)),
            (std::vector<bool>{false, true, true, false}));
  EXPECT_FALSE(RunOp(Opcode::kSubtract, {std::move(a), std::move(b)}, t).ok());
}

TEST(EvalBinary, IntegerDivisionEdgeCases) {
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  auto t = TensorType(ElementType::kS32, {5});
  Literal a = Lit<int32_t>({5}, {7, -7, kMin, kMin, 5});
  Literal b = Lit<int32_t>({5}, {0, 2, -1, 0, -3});
  EXPECT_EQ(Values<int32_t>(RunOk(Opcode::kDivide, {*a.Clone(), *b.Clone()}, t)),
            (std::vector<int32_t>{-1, -3, kMin, -1, -1}));
  EXPECT_EQ(Values<int32_t>(RunOk(Opcode::kRemainder, {std::move(a), std::move(b)}, t)),
            (std::vector<int32_t>{7, -1, 0, kMin, 2}));
  // int64 INT_MIN / -1 must not trap.
  const int64_t kMin64 = std::numeric_limits<int64_t>::min();
  auto t64 = TensorType(ElementType::kS64, {2});
  EXPECT_EQ(
      Values<int64_t>(RunOk(Opcode::kDivide,
                            {Lit<int64_t>({2}, {kMin64, 9}), Lit<int64_t>({2}, {-1, 0})}, t64)),
      (std::vector<int64_t>{kMin64, -1}));
  EXPECT_EQ(
      Values<int64_t>(RunOk(Opcode::kRemainder,
                            {Lit<int64_t>({2}, {kMin64, 9}), Lit<int64_t>({2}, {-1, 0})}, t64)),
      (std::vector<int64_t>{0, 9}));
  // Unsigned: x / 0 is all ones, x % 0 is x.
  auto tu = TensorType(ElementType::kU8, {2});
  EXPECT_EQ(Values<uint8_t>(RunOk(Opcode::kDivide,
                                  {Lit<uint8_t>({2}, {200, 9}), Lit<uint8_t>({2}, {0, 4})}, tu)),
            (std::vector<uint8_t>{255, 2}));
  EXPECT_EQ(Values<uint8_t>(RunOk(Opcode::kRemainder,
                                  {Lit<uint8_t>({2}, {200, 9}), Lit<uint8_t>({2}, {0, 4})}, tu)),
            (std::vector<uint8_t>{200, 1}));
  // s4: -8 / -1 wraps to -8; 7 + 1 wraps to -8.
  auto t4 = TensorType(ElementType::kS4, {2});
  Literal q = RunOk(Opcode::kDivide,
                    {Lit<ir::S4>({2}, {ir::S4::FromValue(-8), ir::S4::FromValue(7)}),
                     Lit<ir::S4>({2}, {ir::S4::FromValue(-1), ir::S4::FromValue(2)})},
                    t4);
  EXPECT_EQ(Values<ir::S4>(q)[0].value(), -8);
  EXPECT_EQ(Values<ir::S4>(q)[1].value(), 3);
}

TEST(EvalBinary, FloatRemainderHasTheDividendsSign) {
  auto t = TensorType(ElementType::kF32, {3});
  EXPECT_EQ(Values<float>(RunOk(
                Opcode::kRemainder,
                {Lit<float>({3}, {5.5f, -5.5f, 5.5f}), Lit<float>({3}, {2.f, 2.f, -2.f})}, t)),
            (std::vector<float>{1.5f, -1.5f, 1.5f}));
}

TEST(EvalBinary, ShiftsPastTheBitWidth) {
  auto t = TensorType(ElementType::kS8, {5});
  Literal a = Lit<int8_t>({5}, {1, -128, -128, 64, -1});
  Literal b = Lit<int8_t>({5}, {7, 1, 8, 9, -1});
  EXPECT_EQ(Values<int8_t>(RunOk(Opcode::kShiftLeft, {*a.Clone(), *b.Clone()}, t)),
            (std::vector<int8_t>{-128, 0, 0, 0, 0}));
  EXPECT_EQ(Values<int8_t>(RunOk(Opcode::kShiftRightLogical, {*a.Clone(), *b.Clone()}, t)),
            (std::vector<int8_t>{0, 64, 0, 0, 0}));
  EXPECT_EQ(Values<int8_t>(RunOk(Opcode::kShiftRightArithmetic, {std::move(a), std::move(b)}, t)),
            (std::vector<int8_t>{0, -64, -1, 0, -1}));
  // Unsigned arithmetic shift fills with the top bit; u4 logical shift stays in 4 bits.
  EXPECT_EQ(Values<uint8_t>(RunOk(Opcode::kShiftRightArithmetic,
                                  {Lit<uint8_t>({2}, {0x80, 0x40}), Lit<uint8_t>({2}, {1, 1})},
                                  TensorType(ElementType::kU8, {2}))),
            (std::vector<uint8_t>{0xC0, 0x20}));
  Literal u4 = RunOk(Opcode::kShiftLeft,
                     {Lit<ir::U4>({2}, {ir::U4::FromValue(9), ir::U4::FromValue(1)}),
                      Lit<ir::U4>({2}, {ir::U4::FromValue(1), ir::U4::FromValue(4)})},
                     TensorType(ElementType::kU4, {2}));
  EXPECT_EQ(Values<ir::U4>(u4)[0].value(), 2);
  EXPECT_EQ(Values<ir::U4>(u4)[1].value(), 0);
}

TEST(EvalBinary, MaxMinPropagateNaNAndOrderZeros) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto t = TensorType(ElementType::kF32, {4});
  Literal a = Lit<float>({4}, {nan, 1.f, -0.f, 0.f});
  Literal b = Lit<float>({4}, {1.f, nan, 0.f, -0.f});
  std::vector<float> mx = Values<float>(RunOk(Opcode::kMaximum, {*a.Clone(), *b.Clone()}, t));
  std::vector<float> mn = Values<float>(RunOk(Opcode::kMinimum, {std::move(a), std::move(b)}, t));
  EXPECT_TRUE(std::isnan(mx[0]) && std::isnan(mx[1]) && std::isnan(mn[0]) && std::isnan(mn[1]));
  EXPECT_FALSE(std::signbit(mx[2]));
  EXPECT_FALSE(std::signbit(mx[3]));
  EXPECT_TRUE(std::signbit(mn[2]));
  EXPECT_TRUE(std::signbit(mn[3]));
  // Complex: lexicographic.
  using C = std::complex<float>;
  Literal c =
      RunOk(Opcode::kMaximum, {Lit<C>({2}, {C(1, 5), C(2, 0)}), Lit<C>({2}, {C(1, 6), C(1, 9)})},
            TensorType(ElementType::kC64, {2}));
  EXPECT_EQ(Values<C>(c), (std::vector<C>{C(1, 6), C(2, 0)}));
}

TEST(EvalBinary, IntegerPower) {
  auto t = TensorType(ElementType::kS32, {7});
  EXPECT_EQ(Values<int32_t>(RunOk(Opcode::kPower,
                                  {Lit<int32_t>({7}, {2, -1, -1, 2, 1, 0, 3}),
                                   Lit<int32_t>({7}, {10, -3, -4, -1, -5, 0, 21})},
                                  t)),
            (std::vector<int32_t>{1024, -1, 1, 0, 1, 1, static_cast<int32_t>(10460353203ll)}));
}

TEST(EvalBinary, Atan2AndComplex) {
  Literal r = RunOk(Opcode::kAtan2, {Lit<double>({3}, {1, -1, 0}), Lit<double>({3}, {1, -1, -1})},
                    TensorType(ElementType::kF64, {3}));
  EXPECT_EQ(Values<double>(r),
            (std::vector<double>{std::atan2(1., 1.), std::atan2(-1., -1.), std::atan2(0., -1.)}));
  Literal c = RunOk(Opcode::kComplex, {Lit<float>({2}, {1, 2}), Lit<float>({2}, {3, 4})},
                    TensorType(ElementType::kC64, {2}));
  EXPECT_EQ(Values<std::complex<float>>(c), (std::vector<std::complex<float>>{{1, 3}, {2, 4}}));
}

// ---- Unary ops ----------------------------------------------------------------------------------

TEST(EvalUnary, FloatFunctionsMatchDoubleRoundedOnce) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> dist(0.1, 4);
  std::vector<float> xs;
  for (int i = 0; i < 32; ++i) xs.push_back(static_cast<float>(dist(rng)));
  struct Case {
    Opcode op;
    double (*fn)(double);
  };
  const Case cases[] = {
      {Opcode::kExponential, [](double x) { return std::exp(x); }},
      {Opcode::kLog, [](double x) { return std::log(x); }},
      {Opcode::kSqrt, [](double x) { return std::sqrt(x); }},
      {Opcode::kRsqrt, [](double x) { return 1 / std::sqrt(x); }},
      {Opcode::kCbrt, [](double x) { return std::cbrt(x); }},
      {Opcode::kSine, [](double x) { return std::sin(x); }},
      {Opcode::kCosine, [](double x) { return std::cos(x); }},
      {Opcode::kTan, [](double x) { return std::tan(x); }},
      {Opcode::kTanh, [](double x) { return std::tanh(x); }},
      {Opcode::kLogistic, [](double x) { return 1 / (1 + std::exp(-x)); }},
      {Opcode::kExponentialMinusOne, [](double x) { return std::expm1(x); }},
      {Opcode::kLogPlusOne, [](double x) { return std::log1p(x); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(ir::OpcodeName(c.op)));
    std::vector<float> got =
        Values<float>(RunOk(c.op, {Lit<float>({32}, xs)}, TensorType(ElementType::kF32, {32})));
    for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(got[i], static_cast<float>(c.fn(xs[i])));
    // bf16 rounds the double result once.
    std::vector<ir::BF16> in16;
    for (float x : xs) in16.push_back(ir::BF16::FromFloat(x));
    std::vector<ir::BF16> got16 = Values<ir::BF16>(
        RunOk(c.op, {Lit<ir::BF16>({32}, in16)}, TensorType(ElementType::kBF16, {32})));
    for (size_t i = 0; i < xs.size(); ++i) {
      EXPECT_EQ(got16[i].bits, ir::BF16::FromDouble(c.fn(in16[i].ToFloat())).bits);
    }
  }
  // Small arguments keep their precision.
  std::vector<double> tiny =
      Values<double>(RunOk(Opcode::kExponentialMinusOne, {Lit<double>({1}, {1e-12})},
                           TensorType(ElementType::kF64, {1})));
  EXPECT_NEAR(tiny[0], 1e-12, 1e-24);
}

TEST(EvalUnary, RoundingModes) {
  Literal x = Lit<float>({7}, {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 2.6f});
  auto t = TensorType(ElementType::kF32, {7});
  EXPECT_EQ(Values<float>(RunOk(Opcode::kRoundNearestAfz, {*x.Clone()}, t)),
            (std::vector<float>{-3, -2, -1, 1, 2, 3, 3}));
  EXPECT_EQ(Values<float>(RunOk(Opcode::kRoundNearestEven, {*x.Clone()}, t)),
            (std::vector<float>{-2, -2, -0.f, 0, 2, 2, 3}));
  EXPECT_EQ(Values<float>(RunOk(Opcode::kFloor, {*x.Clone()}, t)),
            (std::vector<float>{-3, -2, -1, 0, 1, 2, 2}));
  EXPECT_EQ(Values<float>(RunOk(Opcode::kCeil, {std::move(x)}, t)),
            (std::vector<float>{-2, -1, -0.f, 1, 2, 3, 3}));
}

TEST(EvalUnary, SignAbsNegateEdgeCases) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> s =
      Values<float>(RunOk(Opcode::kSign, {Lit<float>({5}, {nan, -0.f, 0.f, -3.f, 7.f})},
                          TensorType(ElementType::kF32, {5})));
  EXPECT_TRUE(std::isnan(s[0]));
  EXPECT_TRUE(s[1] == 0 && std::signbit(s[1]));
  EXPECT_TRUE(s[2] == 0 && !std::signbit(s[2]));
  EXPECT_EQ(s[3], -1.f);
  EXPECT_EQ(s[4], 1.f);
  const int8_t kMin = -128;
  auto t8 = TensorType(ElementType::kS8, {3});
  EXPECT_EQ(Values<int8_t>(RunOk(Opcode::kAbs, {Lit<int8_t>({3}, {kMin, -5, 5})}, t8)),
            (std::vector<int8_t>{kMin, 5, 5}));
  EXPECT_EQ(Values<int8_t>(RunOk(Opcode::kNegate, {Lit<int8_t>({3}, {kMin, -5, 5})}, t8)),
            (std::vector<int8_t>{kMin, 5, -5}));
  EXPECT_EQ(Values<int8_t>(RunOk(Opcode::kSign, {Lit<int8_t>({3}, {kMin, 0, 5})}, t8)),
            (std::vector<int8_t>{-1, 0, 1}));
  // abs(complex) is real.
  Literal a = RunOk(Opcode::kAbs, {Lit<std::complex<float>>({1}, {{3, 4}})},
                    TensorType(ElementType::kF32, {1}));
  EXPECT_EQ(Values<float>(a), (std::vector<float>{5}));
  // sign(complex) = z / |z|; NaN parts give NaN.
  Literal sc = RunOk(Opcode::kSign, {Lit<std::complex<double>>({2}, {{3, 4}, {nan, 0}})},
                     TensorType(ElementType::kC128, {2}));
  EXPECT_EQ(Values<std::complex<double>>(sc)[0], std::complex<double>(0.6, 0.8));
  EXPECT_TRUE(std::isnan(Values<std::complex<double>>(sc)[1].imag()));
}

TEST(EvalUnary, BitCounting) {
  auto t = TensorType(ElementType::kS8, {4});
  EXPECT_EQ(Values<int8_t>(RunOk(Opcode::kPopcnt, {Lit<int8_t>({4}, {0, -1, 7, -128})}, t)),
            (std::vector<int8_t>{0, 8, 3, 1}));
  EXPECT_EQ(Values<int8_t>(RunOk(Opcode::kCountLeadingZeros, {Lit<int8_t>({4}, {0, -1, 7, 1})}, t)),
            (std::vector<int8_t>{8, 0, 5, 7}));
  Literal u4 =
      RunOk(Opcode::kCountLeadingZeros,
            {Lit<ir::U4>({3}, {ir::U4::FromValue(0), ir::U4::FromValue(1), ir::U4::FromValue(8)})},
            TensorType(ElementType::kU4, {3}));
  EXPECT_EQ(Values<ir::U4>(u4)[0].value(), 4);
  EXPECT_EQ(Values<ir::U4>(u4)[1].value(), 3);
  EXPECT_EQ(Values<ir::U4>(u4)[2].value(), 0);
  EXPECT_EQ(Values<uint32_t>(RunOk(Opcode::kNot, {Lit<uint32_t>({1}, {0xF0F0F0F0u})},
                                   TensorType(ElementType::kU32, {1}))),
            (std::vector<uint32_t>{0x0F0F0F0Fu}));
  EXPECT_EQ(Values<bool>(RunOk(Opcode::kNot, {Lit<bool>({2}, {true, false})},
                               TensorType(ElementType::kPred, {2}))),
            (std::vector<bool>{false, true}));
}

TEST(EvalUnary, IsFiniteRealImag) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(Values<bool>(RunOk(Opcode::kIsFinite, {Lit<double>({4}, {1, inf, -inf, std::nan("")})},
                               TensorType(ElementType::kPred, {4}))),
            (std::vector<bool>{true, false, false, false}));
  using C = std::complex<float>;
  EXPECT_EQ(Values<float>(
                RunOk(Opcode::kImag, {Lit<C>({1}, {C(1, 2)})}, TensorType(ElementType::kF32, {1}))),
            (std::vector<float>{2}));
  EXPECT_EQ(Values<float>(
                RunOk(Opcode::kReal, {Lit<C>({1}, {C(1, 2)})}, TensorType(ElementType::kF32, {1}))),
            (std::vector<float>{1}));
}

TEST(EvalUnary, ComplexFunctions) {
  using C = std::complex<double>;
  auto t = TensorType(ElementType::kC128, {1});
  C s = Values<C>(RunOk(Opcode::kSqrt, {Lit<C>({1}, {C(-4, 0)})}, t))[0];
  EXPECT_NEAR(s.real(), 0, 1e-15);
  EXPECT_NEAR(s.imag(), 2, 1e-15);
  C e = Values<C>(RunOk(Opcode::kExponential, {Lit<C>({1}, {C(0, M_PI)})}, t))[0];
  EXPECT_NEAR(e.real(), -1, 1e-15);
  EXPECT_NEAR(e.imag(), 0, 1e-15);
  C l = Values<C>(RunOk(Opcode::kLog, {Lit<C>({1}, {C(-1, 0)})}, t))[0];
  EXPECT_NEAR(l.imag(), M_PI, 1e-15);
  C m = Values<C>(RunOk(Opcode::kExponentialMinusOne, {Lit<C>({1}, {C(1e-10, 1e-10)})}, t))[0];
  EXPECT_NEAR(m.real(), 1e-10, 1e-20);
  EXPECT_NEAR(m.imag(), 1e-10 * (1 + 1e-10), 1e-24);  // e^x sin(y)
  C p = Values<C>(RunOk(Opcode::kLogPlusOne, {Lit<C>({1}, {C(1e-10, 0)})}, t))[0];
  EXPECT_NEAR(p.real(), 1e-10, 1e-20);
  for (Opcode op : {Opcode::kSine, Opcode::kCosine, Opcode::kTanh, Opcode::kTan}) {
    C z(0.3, -0.7);
    C got = Values<C>(RunOk(op, {Lit<C>({1}, {z})}, t))[0];
    C want = op == Opcode::kSine     ? std::sin(z)
             : op == Opcode::kCosine ? std::cos(z)
             : op == Opcode::kTanh   ? std::tanh(z)
                                     : std::tan(z);
    // Within a few ulps of libm: the optimizer may contract or reorder the complex formulas.
    EXPECT_LE(std::abs(got - want), 4e-16 * std::abs(want)) << got << " vs " << want;
  }
  C cb = Values<C>(RunOk(Opcode::kCbrt, {Lit<C>({1}, {C(-8, 0)})}, t))[0];
  EXPECT_NEAR(std::abs(cb * cb * cb - C(-8, 0)), 0, 1e-12);
  // Real cbrt keeps the sign.
  EXPECT_EQ(Values<float>(
                RunOk(Opcode::kCbrt, {Lit<float>({1}, {-8})}, TensorType(ElementType::kF32, {1}))),
            (std::vector<float>{-2}));
}

TEST(EvalUnary, UnsupportedTypeNamesTheInstruction) {
  absl::StatusOr<Literal> r =
      RunOp(Opcode::kPopcnt, {Lit<float>({1}, {1})}, TensorType(ElementType::kF32, {1}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("stablehlo.popcnt"), std::string::npos)
      << r.status();
}

// ---- convert, bitcast_convert, reduce_precision -------------------------------------------------

TEST(EvalConvert, FloatToIntTruncatesSaturatesAndMapsNaNToZero) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(Values<int32_t>(RunOk(Opcode::kConvert,
                                  {Lit<float>({6}, {-1.7f, 1.7f, nan, 3e9f, -3e9f, -0.f})},
                                  TensorType(ElementType::kS32, {6}))),
            (std::vector<int32_t>{-1, 1, 0, std::numeric_limits<int32_t>::max(),
                                  std::numeric_limits<int32_t>::min(), 0}));
  EXPECT_EQ(Values<uint8_t>(RunOk(Opcode::kConvert, {Lit<float>({4}, {-1.f, 300.f, 255.9f, -0.9f})},
                                  TensorType(ElementType::kU8, {4}))),
            (std::vector<uint8_t>{0, 255, 255, 0}));
  EXPECT_EQ(
      Values<uint64_t>(RunOk(Opcode::kConvert, {Lit<double>({2}, {1e30, 1.8446744073709552e19})},
                             TensorType(ElementType::kU64, {2}))),
      (std::vector<uint64_t>{~0ull, ~0ull}));
  Literal s4 = RunOk(Opcode::kConvert, {Lit<float>({3}, {9.f, -9.f, -3.5f})},
                     TensorType(ElementType::kS4, {3}));
  EXPECT_EQ(Values<ir::S4>(s4)[0].value(), 7);
  EXPECT_EQ(Values<ir::S4>(s4)[1].value(), -8);
  EXPECT_EQ(Values<ir::S4>(s4)[2].value(), -3);
}

TEST(EvalConvert, IntToFloatRoundsOnceToNearestEven) {
  // 2^24 + 1 is a tie in f32: ties to even gives 2^24; 2^24 + 3 gives 2^24 + 4.
  EXPECT_EQ(
      Values<float>(RunOk(Opcode::kConvert, {Lit<int32_t>({2}, {(1 << 24) + 1, (1 << 24) + 3})},
                          TensorType(ElementType::kF32, {2}))),
      (std::vector<float>{16777216.f, 16777220.f}));
  // 2^60 + 2^52 + 1 to bf16: just above a tie, so it rounds up to 2^60 + 2^53. Going through
  // double first would make it an exact tie and round down to 2^60.
  const int64_t v = (int64_t{1} << 60) + (int64_t{1} << 52) + 1;
  Literal b =
      RunOk(Opcode::kConvert, {Lit<int64_t>({1}, {v})}, TensorType(ElementType::kBF16, {1}));
  EXPECT_EQ(Values<ir::BF16>(b)[0].ToFloat(), std::ldexp(1.0f, 60) + std::ldexp(1.0f, 53));
  Literal u =
      RunOk(Opcode::kConvert, {Lit<uint64_t>({1}, {~0ull})}, TensorType(ElementType::kF16, {1}));
  EXPECT_TRUE(std::isinf(Values<ir::F16>(u)[0].ToFloat()));
}

TEST(EvalConvert, IntWrapsAndBoolAndComplex) {
  EXPECT_EQ(Values<int8_t>(RunOk(Opcode::kConvert, {Lit<int32_t>({3}, {300, -129, 127})},
                                 TensorType(ElementType::kS8, {3}))),
            (std::vector<int8_t>{44, 127, 127}));
  EXPECT_EQ(Values<uint32_t>(RunOk(Opcode::kConvert, {Lit<int8_t>({1}, {-1})},
                                   TensorType(ElementType::kU32, {1}))),
            (std::vector<uint32_t>{0xFFFFFFFFu}));
  EXPECT_EQ(
      Values<bool>(RunOk(Opcode::kConvert, {Lit<float>({4}, {0.f, -0.f, std::nanf(""), 0.1f})},
                         TensorType(ElementType::kPred, {4}))),
      (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(Values<float>(RunOk(Opcode::kConvert, {Lit<bool>({2}, {true, false})},
                                TensorType(ElementType::kF32, {2}))),
            (std::vector<float>{1, 0}));
  using C = std::complex<float>;
  EXPECT_EQ(Values<float>(RunOk(Opcode::kConvert, {Lit<C>({1}, {C(2.5f, 9)})},
                                TensorType(ElementType::kF32, {1}))),
            (std::vector<float>{2.5f}));
  EXPECT_EQ(Values<C>(RunOk(Opcode::kConvert, {Lit<int32_t>({1}, {-3})},
                            TensorType(ElementType::kC64, {1}))),
            (std::vector<C>{C(-3, 0)}));
  // f32 -> f8E4M3FN rounds to nearest even and saturates to NaN past the range (ml_dtypes).
  Literal f8 = RunOk(Opcode::kConvert, {Lit<float>({2}, {1.0625f, 1.1875f})},
                     TensorType(ElementType::kF8E4M3FN, {2}));
  EXPECT_EQ(Values<ir::F8E4M3FN>(f8)[0].ToFloat(), 1.0f);
  EXPECT_EQ(Values<ir::F8E4M3FN>(f8)[1].ToFloat(), 1.25f);
}

TEST(EvalConvert, EveryPairOfTypesKeepsZeroAndOne) {
  // 0 and 1 exist in every type but f8E8M0FNU (no zero: check 1 alone) and s1 (no 1: check 0).
  for (ElementType from : ir::AllElementTypes()) {
    if (from == ElementType::kToken) continue;
    for (ElementType to : ir::AllElementTypes()) {
      if (to == ElementType::kToken) continue;
      SCOPED_TRACE(TypeName(from) + " -> " + TypeName(to));
      const bool no_zero = from == ElementType::kF8E8M0FNU || to == ElementType::kF8E8M0FNU;
      const bool no_one = from == ElementType::kS1 || to == ElementType::kS1;
      if (no_zero && no_one) continue;
      Literal in = ir::VisitElementType(from, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_void_v<T>) {
          return Literal();
        } else {
          std::vector<T> v;
          if (!no_zero) v.push_back(ConvertElement<T>(int32_t{0}));
          if (!no_one) v.push_back(ConvertElement<T>(int32_t{1}));
          return Lit<T>({static_cast<int64_t>(v.size())}, v);
        }
      });
      const int64_t n = in.shape().element_count();
      Literal out = RunOk(Opcode::kConvert, {std::move(in)}, TensorType(to, {n}));
      ir::VisitElementType(to, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (!std::is_void_v<T>) {
          std::vector<T> got = Values<T>(out);
          ASSERT_EQ(got.size(), static_cast<size_t>(n));
          for (int64_t i = 0; i < n; ++i) {
            const double want = no_zero ? 1.0 : static_cast<double>(i);
            EXPECT_EQ(ConvertElement<double>(got[i]), want);
          }
        }
      });
    }
  }
}

TEST(EvalUnary, NarrowFloatsRoundOnce) {
  auto check = [](auto tag) {
    using T = typename decltype(tag)::type;
    SCOPED_TRACE(TypeName(ir::kElementTypeOf<T>));
    std::mt19937 rng(9);
    std::vector<T> xs = RandomValues<T>(rng, 32);
    for (T& x : xs) x = FloatFromDouble<T>(std::fabs(FloatToDouble(x)) + 0.25);
    const ElementType type = ir::kElementTypeOf<T>;
    std::vector<T> s = Values<T>(RunOk(Opcode::kSqrt, {Lit<T>({32}, xs)}, TensorType(type, {32})));
    std::vector<T> n =
        Values<T>(RunOk(Opcode::kNegate, {Lit<T>({32}, xs)}, TensorType(type, {32})));
    for (size_t i = 0; i < xs.size(); ++i) {
      EXPECT_EQ(FloatBits(s[i]), FloatBits(FloatFromDouble<T>(std::sqrt(FloatToDouble(xs[i])))));
      EXPECT_EQ(FloatToDouble(n[i]), -FloatToDouble(xs[i]));
    }
  };
  check(std::type_identity<ir::F16>{});
  check(std::type_identity<ir::BF16>{});
  check(std::type_identity<ir::F8E4M3FN>{});
  check(std::type_identity<ir::F8E5M2>{});
  check(std::type_identity<ir::F8E4M3FNUZ>{});
  check(std::type_identity<ir::F8E3M4>{});
  check(std::type_identity<ir::F6E3M2FN>{});
  check(std::type_identity<ir::F4E2M1FN>{});
}

TEST(EvalConvert, BitcastBetweenWidths) {
  // Same width.
  EXPECT_EQ(Values<uint32_t>(RunOk(Opcode::kBitcastConvert, {Lit<float>({1}, {1.0f})},
                                   TensorType(ElementType::kU32, {1}))),
            (std::vector<uint32_t>{0x3F800000u}));
  // The spec's example: f64 0x0123456789ABCDEF -> f16[4] little-endian.
  double d;
  const uint64_t bits = 0x0123456789ABCDEFull;
  std::memcpy(&d, &bits, 8);
  Literal h =
      RunOk(Opcode::kBitcastConvert, {Lit<double>({}, {d})}, TensorType(ElementType::kF16, {4}));
  std::vector<ir::F16> hv = Values<ir::F16>(h);
  EXPECT_EQ(hv[0].bits, 0xCDEF);
  EXPECT_EQ(hv[1].bits, 0x89AB);
  EXPECT_EQ(hv[2].bits, 0x4567);
  EXPECT_EQ(hv[3].bits, 0x0123);
  // Narrow to wide removes the minor dim.
  EXPECT_EQ(Values<uint16_t>(RunOk(Opcode::kBitcastConvert,
                                   {Lit<uint8_t>({2, 2}, {0x34, 0x12, 0xCD, 0xAB})},
                                   TensorType(ElementType::kU16, {2}))),
            (std::vector<uint16_t>{0x1234, 0xABCD}));
  // Sub-byte: u8 0xAB -> s4[2] = [0xB, 0xA] = [-5, -6], and back.
  Literal s4 = RunOk(Opcode::kBitcastConvert, {Lit<uint8_t>({1}, {0xAB})},
                     TensorType(ElementType::kS4, {1, 2}));
  EXPECT_EQ(Values<ir::S4>(s4)[0].value(), -5);
  EXPECT_EQ(Values<ir::S4>(s4)[1].value(), -6);
  EXPECT_EQ(Values<uint8_t>(
                RunOk(Opcode::kBitcastConvert, {std::move(s4)}, TensorType(ElementType::kU8, {1}))),
            (std::vector<uint8_t>{0xAB}));
  // Mismatched shapes are errors.
  EXPECT_FALSE(RunOp(Opcode::kBitcastConvert, {Lit<uint8_t>({2}, {1, 2})},
                     TensorType(ElementType::kU16, {2}))
                   .ok());
}

TEST(EvalConvert, ReducePrecisionSpecExample) {
  const double inf = std::numeric_limits<double>::infinity();
  double denormal;
  const uint64_t one = 1;
  std::memcpy(&denormal, &one, 8);
  Literal out =
      RunOk(Opcode::kReducePrecision,
            {Lit<double>({6}, {inf, std::nan(""), denormal, 0.0, 65519.0, 65520.0})},
            TensorType(ElementType::kF64, {6}),
            Attrs({{"exponent_bits", Attribute::Int(5)}, {"mantissa_bits", Attribute::Int(10)}}));
  std::vector<double> v = Values<double>(out);
  EXPECT_EQ(v[0], inf);
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_EQ(v[2], 0.0);
  EXPECT_EQ(v[3], 0.0);
  EXPECT_EQ(v[4], 65504.0);
  EXPECT_EQ(v[5], inf);
  // f32 to bf16 precision equals a bf16 round trip; f32 subnormals survive exponent_bits = 8.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-100, 100);
  std::vector<float> xs;
  for (int i = 0; i < 32; ++i) xs.push_back(dist(rng));
  xs.push_back(1e-40f);
  std::vector<float> got = Values<float>(
      RunOk(Opcode::kReducePrecision, {Lit<float>({33}, xs)}, TensorType(ElementType::kF32, {33}),
            Attrs({{"exponent_bits", Attribute::Int(8)}, {"mantissa_bits", Attribute::Int(7)}})));
  for (int i = 0; i < 32; ++i) EXPECT_EQ(got[i], ir::BF16::FromFloat(xs[i]).ToFloat()) << xs[i];
  EXPECT_NE(got[32], 0.f);
}

// ---- compare, select, clamp ---------------------------------------------------------------------

absl::StatusOr<std::vector<bool>> Compare(Literal a, Literal b, const char* direction,
                                          const char* type) {
  const std::vector<int64_t> dims = a.shape().dims();
  AttributeMap attrs = Attrs({{"comparison_direction", Attribute::String(direction)}});
  if (type != nullptr) attrs.Set("compare_type", Attribute::String(type));
  absl::StatusOr<Literal> r = RunOp(Opcode::kCompare, {std::move(a), std::move(b)},
                                    TensorType(ElementType::kPred, dims), std::move(attrs));
  if (!r.ok()) return r.status();
  return Values<bool>(*r);
}

TEST(EvalCompare, FloatDirectionsWithNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Literal a = Lit<float>({4}, {1, 2, nan, -0.f});
  Literal b = Lit<float>({4}, {2, 2, nan, 0.f});
  struct {
    const char* dir;
    std::vector<bool> want;
  } cases[] = {{"EQ", {false, true, false, true}},   {"NE", {true, false, true, false}},
               {"LT", {true, false, false, false}},  {"LE", {true, true, false, true}},
               {"GT", {false, false, false, false}}, {"GE", {false, true, false, true}}};
  for (auto& c : cases) {
    EXPECT_EQ(*Compare(*a.Clone(), *b.Clone(), c.dir, "FLOAT"), c.want) << c.dir;
  }
}

TEST(EvalCompare, TotalOrder) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Ascending in totalOrder.
  const std::vector<float> order = {-nan, -inf, -1.f, -1e-45f, -0.f, 0.f, 1e-45f, 1.f, inf, nan};
  const int n = static_cast<int>(order.size());
  std::vector<float> a, b;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      a.push_back(order[i]);
      b.push_back(order[j]);
    }
  }
  std::vector<bool> lt =
      *Compare(Lit<float>({n * n}, a), Lit<float>({n * n}, b), "LT", "TOTALORDER");
  std::vector<bool> eq =
      *Compare(Lit<float>({n * n}, a), Lit<float>({n * n}, b), "EQ", "TOTALORDER");
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      EXPECT_EQ(lt[i * n + j], i < j) << i << " " << j;
      EXPECT_EQ(eq[i * n + j], i == j) << i << " " << j;
    }
  }
  // bf16 too.
  std::vector<ir::BF16> x = {ir::BF16::FromFloat(-0.f), ir::BF16::FromFloat(nan)};
  std::vector<ir::BF16> y = {ir::BF16::FromFloat(0.f), ir::BF16::FromFloat(inf)};
  EXPECT_EQ(*Compare(Lit<ir::BF16>({2}, x), Lit<ir::BF16>({2}, y), "LT", "TOTALORDER"),
            (std::vector<bool>{true, false}));
}

TEST(EvalCompare, IntegersPredAndComplex) {
  EXPECT_EQ(*Compare(Lit<int32_t>({2}, {-1, 3}), Lit<int32_t>({2}, {1, 3}), "LT", "SIGNED"),
            (std::vector<bool>{true, false}));
  EXPECT_EQ(
      *Compare(Lit<uint32_t>({2}, {0xFFFFFFFFu, 3}), Lit<uint32_t>({2}, {1, 3}), "GT", nullptr),
      (std::vector<bool>{true, false}));
  EXPECT_EQ(*Compare(Lit<bool>({2}, {false, true}), Lit<bool>({2}, {true, true}), "LT", "UNSIGNED"),
            (std::vector<bool>{true, false}));
  Literal s4a = Lit<ir::S4>({2}, {ir::S4::FromValue(-8), ir::S4::FromValue(7)});
  Literal s4b = Lit<ir::S4>({2}, {ir::S4::FromValue(7), ir::S4::FromValue(-1)});
  EXPECT_EQ(*Compare(std::move(s4a), std::move(s4b), "LT", "SIGNED"),
            (std::vector<bool>{true, false}));
  using C = std::complex<float>;
  EXPECT_EQ(*Compare(Lit<C>({3}, {C(1, 2), C(1, 2), C(0, 9)}),
                     Lit<C>({3}, {C(1, 2), C(1, 3), C(1, 0)}), "LT", "FLOAT"),
            (std::vector<bool>{false, true, true}));
  EXPECT_EQ(
      *Compare(Lit<C>({2}, {C(1, 2), C(1, 2)}), Lit<C>({2}, {C(1, 2), C(1, 3)}), "EQ", nullptr),
      (std::vector<bool>{true, false}));
  EXPECT_FALSE(Compare(Lit<int32_t>({1}, {1}), Lit<int32_t>({1}, {1}), "LT", "FLOAT").ok());
  EXPECT_FALSE(Compare(Lit<int32_t>({1}, {1}), Lit<int32_t>({1}, {1}), "XX", nullptr).ok());
}

TEST(EvalCompare, SelectWithScalarPredAndClampWithScalarBounds) {
  auto t = TensorType(ElementType::kS32, {3});
  EXPECT_EQ(
      Values<int32_t>(RunOk(
          Opcode::kSelect,
          {Lit<bool>({}, {false}), Lit<int32_t>({3}, {1, 2, 3}), Lit<int32_t>({3}, {4, 5, 6})}, t)),
      (std::vector<int32_t>{4, 5, 6}));
  EXPECT_EQ(Values<int32_t>(RunOk(Opcode::kSelect,
                                  {Lit<bool>({3}, {true, false, true}),
                                   Lit<int32_t>({3}, {1, 2, 3}), Lit<int32_t>({3}, {4, 5, 6})},
                                  t)),
            (std::vector<int32_t>{1, 5, 3}));
  EXPECT_EQ(
      Values<int32_t>(RunOk(
          Opcode::kClamp,
          {Lit<int32_t>({}, {0}), Lit<int32_t>({3}, {-5, 5, 50}), Lit<int32_t>({}, {10})}, t)),
      (std::vector<int32_t>{0, 5, 10}));
  // The spec's example with full-shape bounds.
  EXPECT_EQ(Values<int32_t>(RunOk(Opcode::kClamp,
                                  {Lit<int32_t>({3}, {5, 10, 15}), Lit<int32_t>({3}, {3, 13, 23}),
                                   Lit<int32_t>({3}, {10, 15, 20})},
                                  t)),
            (std::vector<int32_t>{5, 13, 20}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> c = Values<float>(
      RunOk(Opcode::kClamp, {Lit<float>({}, {0}), Lit<float>({2}, {nan, -1}), Lit<float>({}, {1})},
            TensorType(ElementType::kF32, {2})));
  EXPECT_TRUE(std::isnan(c[0]));
  EXPECT_EQ(c[1], 0);
}

// ---- Data movement ------------------------------------------------------------------------------

TEST(EvalDataMovement, IotaBroadcastTranspose) {
  Literal iota = RunOk(Opcode::kIota, {}, TensorType(ElementType::kF32, {2, 3}),
                       Attrs({{"iota_dimension", Attribute::Int(1)}}));
  EXPECT_EQ(Values<float>(iota), (std::vector<float>{0, 1, 2, 0, 1, 2}));
  Literal b = RunOk(Opcode::kBroadcastInDim, {Lit<int32_t>({3, 1}, {1, 2, 3})},
                    TensorType(ElementType::kS32, {2, 3, 2}),
                    Attrs({{"broadcast_dimensions", Attribute::Ints({1, 2})}}));
  EXPECT_EQ(Values<int32_t>(b), (std::vector<int32_t>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  Literal bc =
      RunOk(Opcode::kBroadcast, {Lit<int32_t>({2}, {7, 8})}, TensorType(ElementType::kS32, {3, 2}),
            Attrs({{"broadcast_sizes", Attribute::Ints({3})}}));
  EXPECT_EQ(Values<int32_t>(bc), (std::vector<int32_t>{7, 8, 7, 8, 7, 8}));
  Literal t = RunOk(Opcode::kTranspose, {Lit<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6})},
                    TensorType(ElementType::kS32, {3, 2}),
                    Attrs({{"permutation", Attribute::Ints({1, 0})}}));
  EXPECT_EQ(Values<int32_t>(t), (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
  Literal r = RunOk(Opcode::kReshape, {Lit<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6})},
                    TensorType(ElementType::kS32, {3, 2}));
  EXPECT_EQ(Values<int32_t>(r), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
}

TEST(EvalDataMovement, SlicesAndUpdatesClampStarts) {
  std::vector<int32_t> v(20);
  for (int i = 0; i < 20; ++i) v[i] = i;
  Literal s =
      RunOk(Opcode::kSlice, {Lit<int32_t>({4, 5}, v)}, TensorType(ElementType::kS32, {2, 2}),
            Attrs({{"start_indices", Attribute::Ints({1, 0})},
                   {"limit_indices", Attribute::Ints({4, 4})},
                   {"strides", Attribute::Ints({2, 3})}}));
  EXPECT_EQ(Values<int32_t>(s), (std::vector<int32_t>{5, 8, 15, 18}));
  // dynamic_slice clamps a start of 3 to 2 (4 - 2) and -5 to 0.
  Literal d = RunOk(Opcode::kDynamicSlice,
                    {Lit<int32_t>({4, 5}, v), Lit<int32_t>({}, {3}), Lit<int64_t>({}, {-5})},
                    TensorType(ElementType::kS32, {2, 2}),
                    Attrs({{"slice_sizes", Attribute::Ints({2, 2})}}));
  EXPECT_EQ(Values<int32_t>(d), (std::vector<int32_t>{10, 11, 15, 16}));
  Literal u = RunOk(Opcode::kDynamicUpdateSlice,
                    {Lit<int32_t>({2, 3}, {0, 0, 0, 0, 0, 0}), Lit<int32_t>({1, 2}, {7, 8}),
                     Lit<int32_t>({}, {5}), Lit<int32_t>({}, {2})},
                    TensorType(ElementType::kS32, {2, 3}));
  EXPECT_EQ(Values<int32_t>(u), (std::vector<int32_t>{0, 0, 0, 0, 7, 8}));
}

TEST(EvalDataMovement, ConcatenatePadReverse) {
  Literal c =
      RunOk(Opcode::kConcatenate, {Lit<int8_t>({2, 1}, {1, 2}), Lit<int8_t>({2, 2}, {3, 4, 5, 6})},
            TensorType(ElementType::kS8, {2, 3}), Attrs({{"dimension", Attribute::Int(1)}}));
  EXPECT_EQ(Values<int8_t>(c), (std::vector<int8_t>{1, 3, 4, 2, 5, 6}));
  // Low -1 cuts the first element, interior 1 spreads, high 2 appends.
  Literal p = RunOk(Opcode::kPad, {Lit<int32_t>({3}, {1, 2, 3}), Lit<int32_t>({}, {9})},
                    TensorType(ElementType::kS32, {6}),
                    Attrs({{"edge_padding_low", Attribute::Ints({-1})},
                           {"edge_padding_high", Attribute::Ints({2})},
                           {"interior_padding", Attribute::Ints({1})}}));
  EXPECT_EQ(Values<int32_t>(p), (std::vector<int32_t>{9, 2, 9, 3, 9, 9}));
  Literal r =
      RunOk(Opcode::kReverse, {Lit<int32_t>({2, 2}, {1, 2, 3, 4})},
            TensorType(ElementType::kS32, {2, 2}), Attrs({{"dimensions", Attribute::Ints({1})}}));
  EXPECT_EQ(Values<int32_t>(r), (std::vector<int32_t>{2, 1, 4, 3}));
}

TEST(EvalDataMovement, DynamicShapeOpsWithStaticShapes) {
  Literal rs = RunOk(Opcode::kRealDynamicSlice,
                     {Lit<int32_t>({6}, {0, 1, 2, 3, 4, 5}), Lit<int64_t>({1}, {1}),
                      Lit<int64_t>({1}, {6}), Lit<int64_t>({1}, {2})},
                     TensorType(ElementType::kS32, {3}));
  EXPECT_EQ(Values<int32_t>(rs), (std::vector<int32_t>{1, 3, 5}));
  Literal dp = RunOk(Opcode::kDynamicPad,
                     {Lit<int32_t>({2}, {1, 2}), Lit<int32_t>({}, {0}), Lit<int32_t>({1}, {1}),
                      Lit<int32_t>({1}, {0}), Lit<int32_t>({1}, {1})},
                     TensorType(ElementType::kS32, {4}));
  EXPECT_EQ(Values<int32_t>(dp), (std::vector<int32_t>{0, 1, 0, 2}));
  Literal dr =
      RunOk(Opcode::kDynamicReshape, {Lit<int32_t>({2, 2}, {1, 2, 3, 4}), Lit<int32_t>({1}, {4})},
            TensorType(ElementType::kS32, {4}));
  EXPECT_EQ(Values<int32_t>(dr), (std::vector<int32_t>{1, 2, 3, 4}));
  Literal di =
      RunOk(Opcode::kDynamicIota, {Lit<int32_t>({1}, {3})}, TensorType(ElementType::kU8, {3}),
            Attrs({{"iota_dimension", Attribute::Int(0)}}));
  EXPECT_EQ(Values<uint8_t>(di), (std::vector<uint8_t>{0, 1, 2}));
  Literal db = RunOk(
      Opcode::kDynamicBroadcastInDim, {Lit<int32_t>({1}, {7}), Lit<int32_t>({1}, {3})},
      TensorType(ElementType::kS32, {3}), Attrs({{"broadcast_dimensions", Attribute::Ints({0})}}));
  EXPECT_EQ(Values<int32_t>(db), (std::vector<int32_t>{7, 7, 7}));
  Literal gd = RunOk(Opcode::kGetDimensionSize, {Lit<float>({2, 5}, std::vector<float>(10, 0.f))},
                     TensorType(ElementType::kS32), Attrs({{"dimension", Attribute::Int(1)}}));
  EXPECT_EQ(Values<int32_t>(gd), (std::vector<int32_t>{5}));
  // Bad attributes are errors naming the op and the attribute.
  absl::StatusOr<Literal> bad = RunOp(
      Opcode::kTranspose, {Lit<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6})},
      TensorType(ElementType::kS32, {3, 2}), Attrs({{"permutation", Attribute::Ints({0, 0})}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("stablehlo.transpose"), std::string::npos);
  absl::StatusOr<Literal> missing = RunOp(Opcode::kIota, {}, TensorType(ElementType::kS32, {3}));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(std::string(missing.status().message()).find("iota_dimension"), std::string::npos);
}

TEST(EvalDataMovement, ConstantTupleAndGetTupleElement) {
  Program p;
  ir::Value* c = p.Add(Opcode::kConstant, {}, TensorType(ElementType::kF32, {2}),
                       Attrs({{"value", Attribute::OfLiteral(Lit<float>({2}, {1.5f, 2.5f}))}}));
  ir::Value* splat = p.Add(Opcode::kConstant, {}, TensorType(ElementType::kS32, {3}),
                           Attrs({{"value", Attribute::OfLiteral(Lit<int32_t>({}, {4}))}}));
  ir::Value* t = p.Add(
      Opcode::kTuple, {c, splat},
      ValueType::Tuple({TensorType(ElementType::kF32, {2}), TensorType(ElementType::kS32, {3})}));
  ir::Value* g = p.Add(Opcode::kGetTupleElement, {t}, TensorType(ElementType::kS32, {3}),
                       Attrs({{"index", Attribute::Int(1)}}));
  p.Return({g, c});
  auto out = p.Run({});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int32_t>((*out)[0].array), (std::vector<int32_t>{4, 4, 4}));
  EXPECT_EQ(Values<float>((*out)[1].array), (std::vector<float>{1.5f, 2.5f}));
}

// ---- Control flow -------------------------------------------------------------------------------

TEST(EvalControlFlow, WhileCountingLoopWithCapture) {
  // i = 0, sum = 0; while (i < 10) { sum += i * k; i += 1 }  with k captured from main.
  Program p;
  auto s32 = TensorType(ElementType::kS32);
  ir::Value* k = p.Param(s32);
  ir::Value* zero = p.Add(Opcode::kConstant, {}, s32,
                          Attrs({{"value", Attribute::OfLiteral(Lit<int32_t>({}, {0}))}}));
  ir::Computation* cond = p.module.AddRegion("cond");
  {
    ir::Value* i = p.Param(s32, cond);
    p.Param(s32, cond);
    ir::Value* ten =
        p.Add(Opcode::kConstant, {}, s32,
              Attrs({{"value", Attribute::OfLiteral(Lit<int32_t>({}, {10}))}}), {}, cond);
    p.Return({p.Add(Opcode::kCompare, {i, ten}, TensorType(ElementType::kPred),
                    Attrs({{"comparison_direction", Attribute::String("LT")}}), {}, cond)},
             cond);
  }
  ir::Computation* body = p.module.AddRegion("body");
  {
    ir::Value* i = p.Param(s32, body);
    ir::Value* sum = p.Param(s32, body);
    ir::Value* one =
        p.Add(Opcode::kConstant, {}, s32,
              Attrs({{"value", Attribute::OfLiteral(Lit<int32_t>({}, {1}))}}), {}, body);
    ir::Value* ik = p.Add(Opcode::kMultiply, {i, k}, s32, {}, {}, body);
    p.Return({p.Add(Opcode::kAdd, {i, one}, s32, {}, {}, body),
              p.Add(Opcode::kAdd, {sum, ik}, s32, {}, {}, body)},
             body);
  }
  ir::Instruction* loop =
      p.main->AddInstruction(Opcode::kWhile, {zero, zero}, {s32, s32}, {}, {cond, body});
  p.Return({loop->result(0), loop->result(1), k});
  auto out = p.Run({Lit<int32_t>({}, {3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int32_t>((*out)[0].array)[0], 10);
  EXPECT_EQ(Values<int32_t>((*out)[1].array)[0], 45 * 3);
  EXPECT_EQ(Values<int32_t>((*out)[2].array)[0], 3);  // the captured value is still there
  // The iteration bound turns a long loop into an error.
  EvalOptions options;
  options.max_loop_iterations = 5;
  auto bounded = p.Run({Lit<int32_t>({}, {3})}, options);
  ASSERT_FALSE(bounded.ok());
  EXPECT_NE(std::string(bounded.status().message()).find("stablehlo.while"), std::string::npos);
}

TEST(EvalControlFlow, IfAndCaseWithCapturesAndOutOfRangeIndex) {
  Program p;
  auto f32 = TensorType(ElementType::kF32);
  ir::Value* pred = p.Param(TensorType(ElementType::kPred));
  ir::Value* index = p.Param(TensorType(ElementType::kS32));
  ir::Value* x = p.Param(f32);
  auto branch = [&](Opcode op) {
    ir::Computation* r = p.module.AddRegion("branch");
    p.Return({p.Add(op, {x}, f32, {}, {}, r)}, r);
    return r;
  };
  ir::Value* if_result =
      p.Add(Opcode::kIf, {pred}, f32, {}, {branch(Opcode::kNegate), branch(Opcode::kAbs)});
  ir::Value* case_result =
      p.Add(Opcode::kCase, {index}, f32, {},
            {branch(Opcode::kNegate), branch(Opcode::kSqrt), branch(Opcode::kExponential)});
  p.Return({if_result, case_result});
  struct {
    bool pred;
    int32_t index;
    float if_want, case_want;
  } cases[] = {{true, 0, -4, -4},
               {false, 1, 4, 2},
               {true, 7, -4, std::exp(4.f)},
               {false, -1, 4, std::exp(4.f)}};
  for (auto& c : cases) {
    auto out = p.Run({Lit<bool>({}, {c.pred}), Lit<int32_t>({}, {c.index}), Lit<float>({}, {4})});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<float>((*out)[0].array)[0], c.if_want);
    EXPECT_EQ(Values<float>((*out)[1].array)[0], c.case_want) << c.index;
  }
}

TEST(EvalControlFlow, CallMapAndBarrier) {
  Program p;
  auto t = TensorType(ElementType::kF32, {3});
  ir::Computation* callee = *p.module.AddFunction("twice");
  {
    ir::Value* a = p.Param(t, callee);
    p.Return({p.Add(Opcode::kAdd, {a, a}, t, {}, {}, callee)}, callee);
  }
  ir::Value* x = p.Param(t);
  ir::Instruction* call = p.main->AddInstruction(Opcode::kCall, {x}, {t});
  call->set_callee(callee);
  ir::Computation* mul =
      p.BinaryRegion(Opcode::kMultiply, ElementType::kF32, TensorType(ElementType::kF32));
  ir::Value* mapped = p.Add(Opcode::kMap, {call->result(0), x}, t,
                            Attrs({{"dimensions", Attribute::Ints({0})}}), {mul});
  ir::Value* barrier = p.Add(Opcode::kOptimizationBarrier, {mapped}, t);
  p.Return({barrier});
  auto out = p.Run({Lit<float>({3}, {1, 2, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0].array), (std::vector<float>{2, 8, 18}));
}

// ---- reduce and sort ----------------------------------------------------------------------------

TEST(EvalReduction, SumOverDimensions) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int32_t> dist(-1000, 1000);
  std::vector<int32_t> v(2 * 3 * 4);
  for (int32_t& x : v) x = dist(rng);
  Program p;
  auto s32 = TensorType(ElementType::kS32);
  ir::Value* x = p.Param(TensorType(ElementType::kS32, {2, 3, 4}));
  ir::Value* init = p.Param(s32);
  ir::Computation* add = p.BinaryRegion(Opcode::kAdd, ElementType::kS32, s32);
  p.Return({p.Add(Opcode::kReduce, {x, init}, TensorType(ElementType::kS32, {3}),
                  Attrs({{"dimensions", Attribute::Ints({0, 2})}}), {add})});
  auto out = p.Run({Lit<int32_t>({2, 3, 4}, v), Lit<int32_t>({}, {100})});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<int32_t> want(3, 100);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c) want[b] += v[(a * 3 + b) * 4 + c];
  EXPECT_EQ(Values<int32_t>((*out)[0].array), want);
}

// A reduce over `x` (dims {0}) whose body is `op` and, when `opaque`, also passes the result
// through an optimization_barrier so the single-op fast path does not apply.
template <typename T>
Literal ReduceWith(Opcode op, const Literal& x, T init, bool opaque, bool swapped = false) {
  Program p;
  const ElementType type = x.element_type();
  auto scalar = TensorType(type);
  ir::Value* in = p.Param(ValueType::Tensor(x.shape()));
  ir::Value* init_v = p.Param(scalar);
  ir::Computation* body = p.module.AddRegion("body");
  ir::Value* a = p.Param(scalar, body);
  ir::Value* b = p.Param(scalar, body);
  ir::Value* r =
      swapped ? p.Add(op, {b, a}, scalar, {}, {}, body) : p.Add(op, {a, b}, scalar, {}, {}, body);
  if (opaque) r = p.Add(Opcode::kOptimizationBarrier, {r}, scalar, {}, {}, body);
  p.Return({r}, body);
  std::vector<int64_t> out_dims(x.shape().dims().begin() + 1, x.shape().dims().end());
  p.Return({p.Add(Opcode::kReduce, {in, init_v}, TensorType(type, out_dims),
                  Attrs({{"dimensions", Attribute::Ints({0})}}), {body})});
  auto out = p.Run({*x.Clone(), Lit<T>({}, {init})});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? std::move((*out)[0].array) : Literal();
}

TEST(EvalReduction, FastPathMatchesTheGeneralPathBitForBit) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-5, 5);
  std::vector<float> v(8 * 6);
  for (float& f : v) f = dist(rng);
  v[7] = std::numeric_limits<float>::quiet_NaN();
  // One NaN per column: which of two NaNs an addition returns (and so its sign) is unspecified,
  // and differs with operand order and optimization level.
  v[14] = -std::numeric_limits<float>::quiet_NaN();
  v[20] = -0.f;
  Literal x = Lit<float>({8, 6}, v);
  for (Opcode op : {Opcode::kAdd, Opcode::kMultiply, Opcode::kMaximum, Opcode::kMinimum}) {
    for (bool swapped : {false, true}) {
      SCOPED_TRACE(std::string(ir::OpcodeName(op)) + (swapped ? " swapped" : ""));
      Literal fast = ReduceWith<float>(op, x, 0.f, /*opaque=*/false, swapped);
      Literal slow = ReduceWith<float>(op, x, 0.f, /*opaque=*/true, swapped);
      EXPECT_EQ(fast, slow) << fast.ToString() << " vs " << slow.ToString();
    }
  }
  Literal bits = Lit<uint16_t>({4, 2}, {1, 2, 4, 8, 16, 32, 64, 128});
  EXPECT_EQ(ReduceWith<uint16_t>(Opcode::kXor, bits, 0, false),
            ReduceWith<uint16_t>(Opcode::kXor, bits, 0, true));
  // A large reduction stays quick through the fast path.
  Literal big = Lit<float>({100000}, std::vector<float>(100000, 1.0f));
  EXPECT_EQ(Values<float>(ReduceWith<float>(Opcode::kAdd, big, 0.f, false))[0], 100000.f);
}

TEST(EvalReduction, ArgmaxWithTwoOperands) {
  // Reduce (value, index) pairs along dim 1: keeps the larger value, the smaller index on ties.
  Program p;
  auto f32 = TensorType(ElementType::kF32), s32 = TensorType(ElementType::kS32);
  ir::Value* values = p.Param(TensorType(ElementType::kF32, {2, 4}));
  ir::Value* indices = p.Add(Opcode::kIota, {}, TensorType(ElementType::kS32, {2, 4}),
                             Attrs({{"iota_dimension", Attribute::Int(1)}}));
  ir::Value* init_v = p.Add(Opcode::kConstant, {}, f32,
                            Attrs({{"value", Attribute::OfLiteral(Lit<float>({}, {-INFINITY}))}}));
  ir::Value* init_i = p.Add(Opcode::kConstant, {}, s32,
                            Attrs({{"value", Attribute::OfLiteral(Lit<int32_t>({}, {-1}))}}));
  ir::Computation* body = p.module.AddRegion("argmax");
  {
    ir::Value* av = p.Param(f32, body);
    ir::Value* ai = p.Param(s32, body);
    ir::Value* bv = p.Param(f32, body);
    ir::Value* bi = p.Param(s32, body);
    auto pred = TensorType(ElementType::kPred);
    ir::Value* gt = p.Add(Opcode::kCompare, {av, bv}, pred,
                          Attrs({{"comparison_direction", Attribute::String("GT")}}), {}, body);
    ir::Value* eq = p.Add(Opcode::kCompare, {av, bv}, pred,
                          Attrs({{"comparison_direction", Attribute::String("EQ")}}), {}, body);
    ir::Value* lt_i = p.Add(Opcode::kCompare, {ai, bi}, pred,
                            Attrs({{"comparison_direction", Attribute::String("LT")}}), {}, body);
    ir::Value* tie = p.Add(Opcode::kAnd, {eq, lt_i}, pred, {}, {}, body);
    ir::Value* take_a = p.Add(Opcode::kOr, {gt, tie}, pred, {}, {}, body);
    p.Return({p.Add(Opcode::kSelect, {take_a, av, bv}, f32, {}, {}, body),
              p.Add(Opcode::kSelect, {take_a, ai, bi}, s32, {}, {}, body)},
             body);
  }
  ir::Instruction* reduce = p.main->AddInstruction(
      Opcode::kReduce, {values, indices, init_v, init_i},
      {TensorType(ElementType::kF32, {2}), TensorType(ElementType::kS32, {2})},
      Attrs({{"dimensions", Attribute::Ints({1})}}), {body});
  p.Return({reduce->result(0), reduce->result(1)});
  auto out = p.Run({Lit<float>({2, 4}, {1, 7, 3, 7, -2, -1, -5, -1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0].array), (std::vector<float>{7, -1}));
  EXPECT_EQ(Values<int32_t>((*out)[1].array), (std::vector<int32_t>{1, 1}));
}

TEST(EvalReduction, StableSortWithTwoKeys) {
  // Sort rows by (key0 ascending, key1 descending); payload follows. Along dimension -1.
  Program p;
  auto s32 = TensorType(ElementType::kS32), pred = TensorType(ElementType::kPred);
  const std::vector<int64_t> dims = {2, 6};
  ir::Value* k0 = p.Param(TensorType(ElementType::kS32, dims));
  ir::Value* k1 = p.Param(TensorType(ElementType::kF32, dims));
  ir::Value* payload = p.Param(TensorType(ElementType::kS32, dims));
  ir::Computation* cmp = p.module.AddRegion("cmp");
  {
    ir::Value* a0 = p.Param(s32, cmp);
    ir::Value* b0 = p.Param(s32, cmp);
    ir::Value* a1 = p.Param(TensorType(ElementType::kF32), cmp);
    ir::Value* b1 = p.Param(TensorType(ElementType::kF32), cmp);
    p.Param(s32, cmp);
    p.Param(s32, cmp);
    ir::Value* lt0 = p.Add(Opcode::kCompare, {a0, b0}, pred,
                           Attrs({{"comparison_direction", Attribute::String("LT")}}), {}, cmp);
    ir::Value* eq0 = p.Add(Opcode::kCompare, {a0, b0}, pred,
                           Attrs({{"comparison_direction", Attribute::String("EQ")}}), {}, cmp);
    ir::Value* gt1 = p.Add(Opcode::kCompare, {a1, b1}, pred,
                           Attrs({{"comparison_direction", Attribute::String("GT")},
                                  {"compare_type", Attribute::String("TOTALORDER")}}),
                           {}, cmp);
    ir::Value* tie = p.Add(Opcode::kAnd, {eq0, gt1}, pred, {}, {}, cmp);
    p.Return({p.Add(Opcode::kOr, {lt0, tie}, pred, {}, {}, cmp)}, cmp);
  }
  ir::Instruction* sort = p.main->AddInstruction(
      Opcode::kSort, {k0, k1, payload},
      {TensorType(ElementType::kS32, dims), TensorType(ElementType::kF32, dims),
       TensorType(ElementType::kS32, dims)},
      Attrs({{"dimension", Attribute::Int(-1)}, {"is_stable", Attribute::Bool(true)}}), {cmp});
  p.Return({sort->result(0), sort->result(1), sort->result(2)});
  auto out = p.Run({Lit<int32_t>(dims, {2, 1, 2, 1, 1, 0, 5, 5, 5, 5, 5, 5}),
                    Lit<float>(dims, {1, 1, 3, 2, 1, 0, 0, 0, 0, 0, 0, 0}),
                    Lit<int32_t>(dims, {0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int32_t>((*out)[0].array),
            (std::vector<int32_t>{0, 1, 1, 1, 2, 2, 5, 5, 5, 5, 5, 5}));
  EXPECT_EQ(Values<float>((*out)[1].array),
            (std::vector<float>{0, 2, 1, 1, 3, 1, 0, 0, 0, 0, 0, 0}));
  // Stability: equal keys keep their input order (1 before 4; row 2 untouched).
  EXPECT_EQ(Values<int32_t>((*out)[2].array),
            (std::vector<int32_t>{5, 3, 1, 4, 2, 0, 0, 1, 2, 3, 4, 5}));
}

TEST(EvalReduction, SortRandomFloatsMatchesStdSort) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-10, 10);
  std::vector<float> v(3 * 50);
  for (float& x : v) x = dist(rng);
  Program p;
  ir::Value* x = p.Param(TensorType(ElementType::kF32, {3, 50}));
  ir::Computation* lt =
      p.BinaryRegion(Opcode::kCompare, ElementType::kF32, TensorType(ElementType::kPred),
                     Attrs({{"comparison_direction", Attribute::String("LT")}}));
  p.Return({p.Add(Opcode::kSort, {x}, TensorType(ElementType::kF32, {3, 50}),
                  Attrs({{"dimension", Attribute::Int(1)}}), {lt})});
  auto out = p.Run({Lit<float>({3, 50}, v)});
  ASSERT_TRUE(out.ok()) << out.status();
  for (int r = 0; r < 3; ++r) std::sort(v.begin() + r * 50, v.begin() + (r + 1) * 50);
  EXPECT_EQ(Values<float>((*out)[0].array), v);
}

// ---- Evaluator core -----------------------------------------------------------------------------

TEST(EvalCore, UnsupportedOpNamesTheInstruction) {
  Program p;
  ir::Instruction* op = p.main->AddInstruction(Opcode::kInfeed, {}, {ValueType::Token()}, {}, {},
                                               ir::Location{"model.py", 41, 7, ""});
  p.Return({op->result(0)});
  auto out = p.Run({});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(std::string(out.status().message()),
            "stablehlo.infeed at model.py:41:7: not supported by the Ember evaluator");
}

TEST(EvalCore, NestedRegionsCaptureFromEveryEnclosingComputation) {
  // while (i < 3) { i = i + (p ? x : -x) }, with x and p read two regions deep.
  Program p;
  auto s32 = TensorType(ElementType::kS32), pred = TensorType(ElementType::kPred);
  ir::Value* flag = p.Param(pred);
  ir::Value* x = p.Param(s32);
  ir::Value* start = p.Param(s32);
  ir::Computation* cond = p.module.AddRegion("cond");
  {
    ir::Value* i = p.Param(s32, cond);
    ir::Value* three =
        p.Add(Opcode::kConstant, {}, s32,
              Attrs({{"value", Attribute::OfLiteral(Lit<int32_t>({}, {3}))}}), {}, cond);
    p.Return({p.Add(Opcode::kCompare, {i, three}, pred,
                    Attrs({{"comparison_direction", Attribute::String("LT")}}), {}, cond)},
             cond);
  }
  ir::Computation* body = p.module.AddRegion("body");
  {
    ir::Value* i = p.Param(s32, body);
    ir::Computation* on_true = p.module.AddRegion("t");
    p.Return({x}, on_true);
    ir::Computation* on_false = p.module.AddRegion("f");
    p.Return({p.Add(Opcode::kNegate, {x}, s32, {}, {}, on_false)}, on_false);
    ir::Value* step = p.Add(Opcode::kIf, {flag}, s32, {}, {on_true, on_false}, body);
    p.Return({p.Add(Opcode::kAdd, {i, step}, s32, {}, {}, body)}, body);
  }
  p.Return({p.Add(Opcode::kWhile, {start}, s32, {}, {cond, body})});
  auto out = p.Run({Lit<bool>({}, {true}), Lit<int32_t>({}, {2}), Lit<int32_t>({}, {-4})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int32_t>((*out)[0].array)[0], 4);  // -4, -2, 0, 2, 4
}

TEST(EvalCore, OpErrorsNameTheInstruction) {
  Program p;
  ir::Value* a = p.Param(TensorType(ElementType::kF32, {2}));
  ir::Value* b = p.Param(TensorType(ElementType::kS32, {2}));
  ir::Instruction* add =
      p.main->AddInstruction(Opcode::kAdd, {a, b}, {TensorType(ElementType::kF32, {2})}, {}, {},
                             ir::Location{"f.py", 3, 1, ""});
  p.Return({add->result(0)});
  auto out = p.Run({Lit<float>({2}, {1, 2}), Lit<int32_t>({2}, {1, 2})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(std::string(out.status().message()).rfind("stablehlo.add at f.py:3:1: ", 0), 0u)
      << out.status();
}

TEST(EvalCore, ArgumentsAreChecked) {
  Program p;
  ir::Value* x = p.Param(TensorType(ElementType::kF32, {2}));
  p.Return({x});
  EXPECT_FALSE(p.Run({}).ok());
  EXPECT_FALSE(p.Run({Lit<int32_t>({2}, {1, 2})}).ok());
  EXPECT_FALSE(p.Run({Lit<float>({3}, {1, 2, 3})}).ok());
}

TEST(EvalCore, ColumnMajorArgumentsAreReadLogically) {
  Program p;
  auto t = TensorType(ElementType::kS32, {2, 2});
  ir::Value* x = p.Param(t);
  p.Return({p.Add(Opcode::kAdd, {x, x}, t)});
  // Logical [[1, 2], [3, 4]] stored column-major.
  Literal col = *Lit<int32_t>({2, 2}, {1, 2, 3, 4}).Relayout(ir::Layout::ColumnMajor(2));
  std::vector<EvalValue> args;
  args.push_back(EvalValue::Array(std::move(col)));
  Evaluator evaluator;
  auto out = evaluator.Run(*p.main, std::move(args));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int32_t>((*out)[0].array), (std::vector<int32_t>{2, 4, 6, 8}));
}

TEST(EvalCore, ValuesUsedTwiceAreNotConsumed) {
  // x feeds three ops; the last use may move it, earlier ones must copy.
  Program p;
  auto t = TensorType(ElementType::kF32, {2});
  ir::Value* x = p.Param(t);
  ir::Value* a = p.Add(Opcode::kNegate, {x}, t);
  ir::Value* b = p.Add(Opcode::kAdd, {x, x}, t);
  ir::Value* c = p.Add(Opcode::kMultiply, {a, x}, t);
  p.Return({a, b, c, x});
  auto out = p.Run({Lit<float>({2}, {1, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0].array), (std::vector<float>{-1, -2}));
  EXPECT_EQ(Values<float>((*out)[1].array), (std::vector<float>{2, 4}));
  EXPECT_EQ(Values<float>((*out)[2].array), (std::vector<float>{-1, -4}));
  EXPECT_EQ(Values<float>((*out)[3].array), (std::vector<float>{1, 2}));
}

}  // namespace
}  // namespace ember::eval
