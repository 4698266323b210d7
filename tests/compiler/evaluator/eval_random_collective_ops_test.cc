// Tests of the evaluator's random, collective and custom_call families.
//
// rng_bit_generator known answers come from:
// - the StableHLO spec's rng_bit_generator example (docs/spec.md);
// - openxla/stablehlo stablehlo/testdata/rng_bit_generator_uint64_2.mlir and
//   rng_bit_generator_uint32_4.mlir (outputs recorded from XLA; also in
//   ../shared/testdata/stablehlo/testdata);
// - Random123's kat_vectors for Threefry-2x32-20 and Philox-4x32-10 (the vectors JAX's
//   random_test.py and TensorFlow's XLA stateful_random_ops_test.py check XLA against).
#include <cmath>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "compiler/evaluator/evaluator.h"
#include "tests/compiler/evaluator/eval_ops_test_util.h"

namespace ember::eval {
namespace {

using testing::Ints;
using testing::Lit;
using testing::OpRunner;
using testing::TensorType;
using testing::Values;
using ET = ir::ElementType;

absl::StatusOr<std::vector<EvalValue>> RunRng(OpRunner& r, const std::string& algorithm,
                                              std::vector<uint64_t> state, ET type,
                                              std::vector<int64_t> dims) {
  ir::AttributeMap a;
  a.Set("rng_algorithm", ir::Attribute::String(algorithm));
  const int64_t n = static_cast<int64_t>(state.size());
  return r.Run(ir::Opcode::kRngBitGenerator, {Lit<uint64_t>({n}, state)},
               {TensorType(ET::kU64, {n}), TensorType(type, std::move(dims))}, std::move(a));
}

TEST(EvalRngBitGenerator, ThreeFrySpecExample) {
  OpRunner r;
  auto out = RunRng(r, "THREE_FRY", {1, 2}, ET::kU64, {2, 2});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<uint64_t>((*out)[0].array), (std::vector<uint64_t>{1, 6}));
  EXPECT_EQ(Values<uint64_t>((*out)[1].array),
            (std::vector<uint64_t>{9236835810183407956ull, 16087790271692313299ull,
                                   18212823393184779219ull, 2658481902456610144ull}));
}

TEST(EvalRngBitGenerator, ThreeFryMatchesStablehloTestdata) {
  OpRunner r;
  auto scalar = RunRng(r, "THREE_FRY", {3, 3}, ET::kU64, {});
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_EQ(Values<uint64_t>((*scalar)[0].array), (std::vector<uint64_t>{3, 4}));
  EXPECT_EQ(Values<uint64_t>((*scalar)[1].array)[0], 3349939604322698703ull);

  // rng_bit_generator_uint32_4: state bitcast from ui32 [1, 4, 0, 1].
  const uint64_t s0 = 1 | (uint64_t{4} << 32), s1 = uint64_t{1} << 32;
  auto big = RunRng(r, "THREE_FRY", {s0, s1}, ET::kU64, {100, 100});
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(Values<uint64_t>((*big)[0].array), (std::vector<uint64_t>{s0, s1 + 10000}));
  const std::vector<uint64_t> v = Values<uint64_t>((*big)[1].array);
  ASSERT_EQ(v.size(), 10000u);
  EXPECT_EQ(v[0], 11811099535163642817ull);
  EXPECT_EQ(v[1], 2679220122055838158ull);
  EXPECT_EQ(v[2], 13026259361296983694ull);
  EXPECT_EQ(v[99], 16320525238332004447ull);
  EXPECT_EQ(v[100], 2357259389024332664ull);
  EXPECT_EQ(v[9999], 11786507949933426536ull);
}

TEST(EvalRngBitGenerator, ThreeFryKnownAnswersAnd32BitSplit) {
  OpRunner r;
  // Threefry-2x32-20: key (0, 0), counter (0, 0) -> (0x6b200159, 0x99ba4efe); the 64-bit output
  // is x0 | x1 << 32 of key = state[0], counter = state[1].
  auto zero = RunRng(r, "THREE_FRY", {0, 0}, ET::kU64, {});
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ(Values<uint64_t>((*zero)[1].array)[0], 0x99ba4efe6b200159ull);
  auto pi = RunRng(r, "THREE_FRY", {0x0370734413198a2eull, 0x85a308d3243f6a88ull}, ET::kU64, {});
  ASSERT_TRUE(pi.ok()) << pi.status();
  EXPECT_EQ(Values<uint64_t>((*pi)[1].array)[0], 0x483df7a0c4923a9cull);
  // u32 [3]: no even dim, so the split takes dim 0 into halves of 2: elements 0, 1 are (x0, x1)
  // of counter c and element 2 is x0 of counter c + 1; the state advances by 2.
  const uint64_t key = 77, c = 1000;
  auto u32 = RunRng(r, "THREE_FRY", {key, c}, ET::kU32, {3});
  auto w0 = RunRng(r, "THREE_FRY", {key, c}, ET::kU64, {});
  auto w1 = RunRng(r, "THREE_FRY", {key, c + 1}, ET::kU64, {});
  ASSERT_TRUE(u32.ok() && w0.ok() && w1.ok());
  const uint64_t a = Values<uint64_t>((*w0)[1].array)[0], b = Values<uint64_t>((*w1)[1].array)[0];
  EXPECT_EQ(Values<uint32_t>((*u32)[1].array),
            (std::vector<uint32_t>{uint32_t(a), uint32_t(a >> 32), uint32_t(b)}));
  EXPECT_EQ(Values<uint64_t>((*u32)[0].array), (std::vector<uint64_t>{key, c + 2}));
  // u32 [2, 3]: dim 0 is even: half [1, 3]; element (i, j) is word i of counter c + j.
  auto grid = RunRng(r, "THREE_FRY", {key, c}, ET::kU32, {2, 3});
  ASSERT_TRUE(grid.ok()) << grid.status();
  std::vector<uint32_t> want(6);
  for (int j = 0; j < 3; ++j) {
    auto w = RunRng(r, "THREE_FRY", {key, c + j}, ET::kU64, {});
    ASSERT_TRUE(w.ok());
    const uint64_t x = Values<uint64_t>((*w)[1].array)[0];
    want[j] = uint32_t(x);
    want[3 + j] = uint32_t(x >> 32);
  }
  EXPECT_EQ(Values<uint32_t>((*grid)[1].array), want);
}

TEST(EvalRngBitGenerator, PhiloxKnownAnswers) {
  OpRunner r;
  struct Kat {
    uint32_t ctr[4], key[2], out[4];
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& k : kats) {
    const uint64_t key = k.key[0] | (uint64_t{k.key[1]} << 32);
    const uint64_t lo = k.ctr[0] | (uint64_t{k.ctr[1]} << 32);
    const uint64_t hi = k.ctr[2] | (uint64_t{k.ctr[3]} << 32);
    auto out = RunRng(r, "PHILOX", {key, lo, hi}, ET::kU32, {4});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<uint32_t>((*out)[1].array),
              (std::vector<uint32_t>{k.out[0], k.out[1], k.out[2], k.out[3]}));
    // The 128-bit counter advances by one block, carrying into the high word.
    const uint64_t new_lo = lo + 1, new_hi = new_lo == 0 ? hi + 1 : hi;
    EXPECT_EQ(Values<uint64_t>((*out)[0].array), (std::vector<uint64_t>{key, new_lo, new_hi}));
  }
}

TEST(EvalRngBitGenerator, PhiloxLayoutsAndDefault) {
  OpRunner r;
  const uint64_t key = 0x1234567890abcdefull, lo = 42, hi = 7;
  // 32-bit: 4 words per block, blocks at counter + i; 64-bit: pairs of words.
  auto w32 = RunRng(r, "PHILOX", {key, lo, hi}, ET::kU32, {10});
  auto w64 = RunRng(r, "PHILOX", {key, lo, hi}, ET::kU64, {5});
  auto dflt = RunRng(r, "DEFAULT", {key, lo, hi}, ET::kU64, {5});
  ASSERT_TRUE(w32.ok() && w64.ok() && dflt.ok());
  const std::vector<uint32_t> a = Values<uint32_t>((*w32)[1].array);
  const std::vector<uint64_t> b = Values<uint64_t>((*w64)[1].array);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(b[i], a[2 * i] | (uint64_t{a[2 * i + 1]} << 32)) << i;
  EXPECT_EQ(Values<uint64_t>((*w32)[0].array), (std::vector<uint64_t>{key, lo + 3, hi}));
  EXPECT_EQ(Values<uint64_t>((*w64)[0].array), (std::vector<uint64_t>{key, lo + 3, hi}));
  EXPECT_EQ(Values<uint64_t>((*dflt)[1].array), b);
  // u64[2] state: the counter is (low = state[1], high = state[0]); only the low word returns.
  auto two = RunRng(r, "PHILOX", {key, lo}, ET::kU32, {10});
  auto three = RunRng(r, "PHILOX", {key, lo, key}, ET::kU32, {10});
  ASSERT_TRUE(two.ok() && three.ok());
  EXPECT_EQ(Values<uint32_t>((*two)[1].array), Values<uint32_t>((*three)[1].array));
  EXPECT_EQ(Values<uint64_t>((*two)[0].array), (std::vector<uint64_t>{key, lo + 3}));
  // u8 keeps the low byte of each 32-bit word.
  auto bytes = RunRng(r, "PHILOX", {key, lo, hi}, ET::kU8, {10});
  ASSERT_TRUE(bytes.ok());
  const std::vector<uint8_t> c = Values<uint8_t>((*bytes)[1].array);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(c[i], uint8_t(a[i]));
  EXPECT_FALSE(RunRng(r, "THREE_FRY", {1, 2, 3}, ET::kU32, {4}).ok());
}

TEST(EvalRng, UniformStaysInRangeAndIsDeterministic) {
  OpRunner r;
  ir::AttributeMap a;
  a.Set("rng_distribution", ir::Attribute::String("UNIFORM"));
  auto f = r.Run(ir::Opcode::kRng,
                 {Lit<float>({}, {2.0f}), Lit<float>({}, {3.0f}), Lit<int64_t>({1}, {64})},
                 {TensorType(ET::kF32, {64})}, a);
  auto f2 = r.Run(ir::Opcode::kRng,
                  {Lit<float>({}, {2.0f}), Lit<float>({}, {3.0f}), Lit<int64_t>({1}, {64})},
                  {TensorType(ET::kF32, {64})}, a);
  auto i = r.Run(ir::Opcode::kRng,
                 {Lit<int32_t>({}, {-5}), Lit<int32_t>({}, {5}), Lit<int64_t>({1}, {64})},
                 {TensorType(ET::kS32, {64})}, a);
  ASSERT_TRUE(f.ok() && f2.ok() && i.ok());
  for (float v : Values<float>((*f)[0].array)) EXPECT_TRUE(v >= 2.0f && v < 3.0f) << v;
  for (int32_t v : Values<int32_t>((*i)[0].array)) EXPECT_TRUE(v >= -5 && v < 5) << v;
  // Same op position in a same-named function would repeat; different functions differ.
  EXPECT_NE(Values<float>((*f)[0].array), Values<float>((*f2)[0].array));
}

// ---- collectives ---------------------------------------------------------------------------

TEST(EvalCollectives, ProcessIdsComeFromOptions) {
  OpRunner r;
  EvalOptions o;
  o.replica_id = 3;
  o.partition_id = 5;
  o.num_replicas = 4;
  o.num_partitions = 8;
  auto rid = r.Run(ir::Opcode::kReplicaId, {}, {TensorType(ET::kU32, {})}, {}, {}, o);
  auto pid = r.Run(ir::Opcode::kPartitionId, {}, {TensorType(ET::kU32, {})}, {}, {}, o);
  ASSERT_TRUE(rid.ok() && pid.ok());
  EXPECT_EQ(Values<uint32_t>((*rid)[0].array)[0], 3u);
  EXPECT_EQ(Values<uint32_t>((*pid)[0].array)[0], 5u);
}

TEST(EvalCollectives, GroupOfOneWithoutHooks) {
  OpRunner r;
  ir::Computation* add = r.BinaryRegion(ir::Opcode::kAdd, ET::kF32);
  auto ar = r.Run(ir::Opcode::kAllReduce, {Lit<float>({3}, {1, 2, 3})}, {TensorType(ET::kF32, {3})},
                  {}, {add});
  ASSERT_TRUE(ar.ok()) << ar.status();
  EXPECT_EQ(Values<float>((*ar)[0].array), (std::vector<float>{1, 2, 3}));
  ir::AttributeMap ag;
  ag.Set("all_gather_dim", ir::Attribute::Int(0));
  ag.Set("replica_groups", ir::Attribute::OfLiteral(Lit<int64_t>({1, 1}, {0})));
  auto g =
      r.Run(ir::Opcode::kAllGather, {Lit<int32_t>({2}, {7, 8})}, {TensorType(ET::kS32, {2})}, ag);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Values<int32_t>((*g)[0].array), (std::vector<int32_t>{7, 8}));
  // collective_permute: a pair to itself keeps the operand, no incoming pair gives zeros.
  ir::AttributeMap self;
  self.Set("source_target_pairs", ir::Attribute::OfLiteral(Lit<int64_t>({1, 2}, {0, 0})));
  auto p = r.Run(ir::Opcode::kCollectivePermute, {Lit<float>({2}, {4, 5})},
                 {TensorType(ET::kF32, {2})}, self);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(Values<float>((*p)[0].array), (std::vector<float>{4, 5}));
  ir::AttributeMap away;
  away.Set("source_target_pairs", ir::Attribute::OfLiteral(Lit<int64_t>({1, 2}, {0, 1})));
  EvalOptions two;
  two.num_replicas = 2;
  auto z = r.Run(ir::Opcode::kCollectivePermute, {Lit<float>({2}, {4, 5})},
                 {TensorType(ET::kF32, {2})}, away, {}, two);
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(Values<float>((*z)[0].array), (std::vector<float>{0, 0}));
  // Two replicas in one group need hooks.
  auto bad = r.Run(ir::Opcode::kAllReduce, {Lit<float>({1}, {1})}, {TensorType(ET::kF32, {1})}, {},
                   {add}, two);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("EvalOptions::collectives"), absl::string_view::npos);
}

struct DoublingHooks : CollectiveHooks {
  int calls = 0;
  absl::StatusOr<std::vector<EvalValue>> Run(const ir::Instruction& op,
                                             std::vector<EvalValue> operands) override {
    ++calls;
    EXPECT_EQ(op.opcode(), ir::Opcode::kAllReduce);
    std::vector<float> v = Values<float>(operands[0].array);
    for (float& x : v) x *= 2;
    std::vector<EvalValue> out;
    out.push_back(EvalValue::Array(Lit<float>({static_cast<int64_t>(v.size())}, v)));
    return out;
  }
};

TEST(EvalCollectives, HooksReceiveTheOperands) {
  OpRunner r;
  DoublingHooks hooks;
  EvalOptions o;
  o.num_replicas = 2;
  o.collectives = &hooks;
  ir::Computation* add = r.BinaryRegion(ir::Opcode::kAdd, ET::kF32);
  auto out = r.Run(ir::Opcode::kAllReduce, {Lit<float>({2}, {1.5f, -2})},
                   {TensorType(ET::kF32, {2})}, {}, {add}, o);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(hooks.calls, 1);
  EXPECT_EQ(Values<float>((*out)[0].array), (std::vector<float>{3, -4}));
}

// ---- composite and custom_call ------------------------------------------------------------

ir::AttributeMap Target(const std::string& name) {
  ir::AttributeMap a;
  a.Set("call_target_name", ir::Attribute::String(name));
  return a;
}

TEST(EvalCustomCall, CompositeRunsItsDecomposition) {
  OpRunner r;
  auto f = r.module().AddFunction("decomposition");
  ASSERT_TRUE(f.ok());
  ir::ValueType t = TensorType(ET::kF32, {2});
  ir::Value* x = (*f)->AddParameter(t);
  ir::Value* y = (*f)->AddParameter(t);
  ir::Instruction* sum = (*f)->AddInstruction(ir::Opcode::kAdd, {x, y}, {t});
  (*f)->AddInstruction(ir::Opcode::kReturn, {sum->result()}, {});
  ir::AttributeMap a;
  a.Set("name", ir::Attribute::String("my.add"));
  auto out = r.Run(ir::Opcode::kComposite, {Lit<float>({2}, {1, 2}), Lit<float>({2}, {10, 20})},
                   {t}, std::move(a), {}, {}, *f);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0].array), (std::vector<float>{11, 22}));
}

TEST(EvalCustomCall, PassThroughAssertionsAndUnknownTargets) {
  OpRunner r;
  auto s = r.Run(ir::Opcode::kCustomCall, {Lit<float>({2}, {1, 2})}, {TensorType(ET::kF32, {2})},
                 Target("Sharding"));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(Values<float>((*s)[0].array), (std::vector<float>{1, 2}));
  ir::AttributeMap assertion = Target("shape_assertion");
  assertion.Set("error_message", ir::Attribute::String("dimension d must be even"));
  auto failed = r.Run(ir::Opcode::kCustomCall, {Lit<bool>({}, {false})}, {}, assertion);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("dimension d must be even"), absl::string_view::npos);
  EXPECT_TRUE(r.Run(ir::Opcode::kCustomCall, {Lit<bool>({}, {true})}, {}, assertion).ok());
  auto unknown = r.Run(ir::Opcode::kCustomCall, {Lit<float>({1}, {1})}, {TensorType(ET::kF32, {1})},
                       Target("lapack_sgesdd_ffi"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("lapack_sgesdd_ffi"), absl::string_view::npos);
}

TEST(EvalCustomCall, TopKTargets) {
  OpRunner r;
  const std::vector<float> x = {3, 1, 4, 1, 5, 9, 2, 6};
  auto top = r.Run(ir::Opcode::kCustomCall, {Lit<float>({2, 4}, x), Lit<int32_t>({}, {2})},
                   {TensorType(ET::kF32, {2, 2}), TensorType(ET::kS32, {2, 2})},
                   Target("stablehlo.dynamic_top_k"));
  ASSERT_TRUE(top.ok()) << top.status();
  EXPECT_EQ(Values<float>((*top)[0].array), (std::vector<float>{4, 3, 9, 6}));
  EXPECT_EQ(Values<int32_t>((*top)[1].array), (std::vector<int32_t>{2, 0, 1, 3}));
  // ApproxTopK fallback: sort with the comparator (named in called_computations) along
  // reduction_dim 0, keep 1.
  auto gt = r.module().AddFunction("greater");
  ASSERT_TRUE(gt.ok());
  {
    ir::ValueType s = TensorType(ET::kF32, {});
    ir::Value* x = (*gt)->AddParameter(s);
    ir::Value* y = (*gt)->AddParameter(s);
    ir::AttributeMap cmp;
    cmp.Set("comparison_direction", ir::Attribute::String("GT"));
    ir::Instruction* c =
        (*gt)->AddInstruction(ir::Opcode::kCompare, {x, y}, {TensorType(ET::kPred, {})}, cmp);
    (*gt)->AddInstruction(ir::Opcode::kReturn, {c->result()}, {});
  }
  ir::AttributeMap a = Target("ApproxTopK");
  a.Set("called_computations", ir::Attribute::List({ir::Attribute::String("greater")}));
  a.Set("backend_config", ir::Attribute::Dict({{"top_k", ir::Attribute::Int(1)},
                                               {"reduction_dim", ir::Attribute::Int(0)},
                                               {"is_fallback", ir::Attribute::Bool(true)}}));
  auto approx = r.Run(ir::Opcode::kCustomCall, {Lit<float>({2, 4}, x), Lit<float>({}, {-1e30f})},
                      {TensorType(ET::kF32, {1, 4})}, std::move(a));
  ASSERT_TRUE(approx.ok()) << approx.status();
  EXPECT_EQ(Values<float>((*approx)[0].array), (std::vector<float>{5, 9, 4, 6}));
}

TEST(EvalCustomCall, CheckTargets) {
  OpRunner r;
  const float one = 1.0f, next = std::nextafter(1.0f, 2.0f);
  EXPECT_TRUE(r.Run(ir::Opcode::kCustomCall,
                    {Lit<float>({2}, {one, 2}), Lit<float>({2}, {next, 2})}, {},
                    Target("check.expect_close"))
                  .ok());
  auto ne = r.Run(ir::Opcode::kCustomCall, {Lit<float>({2}, {one, 2}), Lit<float>({2}, {next, 2})},
                  {}, Target("check.expect_eq"));
  ASSERT_FALSE(ne.ok());
  EXPECT_NE(ne.status().message().find("element 0"), absl::string_view::npos);
  auto eq = r.Run(ir::Opcode::kCustomCall, {Lit<int32_t>({2}, {1, 2}), Lit<int32_t>({2}, {1, 2})},
                  {TensorType(ET::kPred, {})}, Target("check.eq"));
  ASSERT_TRUE(eq.ok()) << eq.status();
  EXPECT_EQ(Values<bool>((*eq)[0].array), (std::vector<bool>{true}));
}

// A custom-call check carries no tolerance and gets the StableHLO interpreter's: 0..3 ULP for
// expect_close, 1e-3 absolute (same sign) for expect_almost_eq; explicit attributes win.
TEST(EvalCustomCall, CheckTolerances) {
  OpRunner r;
  auto ulps_away = [](float x, int n) {
    for (int i = 0; i < n; ++i) x = std::nextafter(x, 2.0f * x);
    return x;
  };
  auto close = [&](float expected, float actual, ir::AttributeMap attrs) {
    return r.Run(ir::Opcode::kCustomCall, {Lit<float>({1}, {actual}), Lit<float>({1}, {expected})},
                 {}, std::move(attrs)).ok();
  };
  EXPECT_TRUE(close(1.5f, ulps_away(1.5f, 3), Target("check.expect_close")));
  EXPECT_FALSE(close(1.5f, ulps_away(1.5f, 4), Target("check.expect_close")));
  ir::AttributeMap strict = Target("check.expect_close");
  strict.Set("max_ulp_difference", ir::Attribute::Int(1));
  EXPECT_FALSE(close(1.5f, ulps_away(1.5f, 2), std::move(strict)));
  EXPECT_TRUE(close(100.0f, 100.0009f, Target("check.expect_almost_eq")));
  EXPECT_FALSE(close(100.0f, 100.002f, Target("check.expect_almost_eq")));
  EXPECT_FALSE(close(0.0002f, -0.0002f, Target("check.expect_almost_eq")));
  ir::AttributeMap tight = Target("check.expect_almost_eq");
  tight.Set("tolerance", ir::Attribute::Float(1e-4));
  EXPECT_FALSE(close(100.0f, 100.0009f, std::move(tight)));
}

}  // namespace
}  // namespace ember::eval
