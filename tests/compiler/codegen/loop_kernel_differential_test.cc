// The code generator against the reference evaluator: every elementwise op the elemental
// emitter takes, over every element type it takes, compiled by the host target (LLVM ORC JIT)
// as a loop kernel and run on random inputs mixed with special values (NaN, +-0, +-inf,
// denormals, INT_MIN / -1, shift amounts >= the width). Results must match bit for bit; the
// only latitude is a NaN's payload (any NaN matches any NaN), which the evaluator's double
// arithmetic does not define either. Conversions the emitter refuses (f64 -> bf16/f16 and wide
// integers -> bf16/f16, which would round twice) are listed and must be refused. Then fused
// chains with index ops (broadcast, transpose, slice, reshape, iota), scalar constants, and the
// per-executable cache of identical kernels.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "compiler/codegen/elemental_support.h"
#include "compiler/codegen/host_kernel_compiler.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/passes/rewrite.h"
#include "tests/compiler/parse_module.h"

namespace ember::codegen {
namespace {

using ir::ElementType;

struct TypeInfo {
  ElementType type;
  const char* mlir;
};
constexpr TypeInfo kTypes[] = {
    {ElementType::kPred, "i1"},  {ElementType::kS8, "i8"},    {ElementType::kS16, "i16"},
    {ElementType::kS32, "i32"},  {ElementType::kS64, "i64"},  {ElementType::kU8, "ui8"},
    {ElementType::kU16, "ui16"}, {ElementType::kU32, "ui32"}, {ElementType::kU64, "ui64"},
    {ElementType::kBF16, "bf16"}, {ElementType::kF16, "f16"}, {ElementType::kF32, "f32"},
    {ElementType::kF64, "f64"}};

const char* Mlir(ElementType t) {
  for (const TypeInfo& info : kTypes) {
    if (info.type == t) return info.mlir;
  }
  return "?";
}

bool IsF(ElementType t) { return ir::IsFloat(t); }
int Width(ElementType t) { return t == ElementType::kPred ? 8 : 8 * ir::StorageBytes(t); }

// Bit patterns worth testing for each type.
std::vector<uint64_t> Specials(ElementType t) {
  switch (t) {
    case ElementType::kPred:
      return {0, 1};
    case ElementType::kBF16:
      return {0x7FC0, 0xFFC0, 0x7F81, 0x0000, 0x8000, 0x7F80, 0xFF80, 0x0001, 0x8001,
              0x3F80, 0xBF80, 0x7F7F, 0xFF7F, 0x4020, 0xC020, 0x3F00, 0x4120};
    case ElementType::kF16:
      return {0x7E00, 0xFE00, 0x7C01, 0x0000, 0x8000, 0x7C00, 0xFC00, 0x0001, 0x8001,
              0x3C00, 0xBC00, 0x7BFF, 0xFBFF, 0x4100, 0xC100, 0x3800, 0x4900};
    case ElementType::kF32:
      return {0x7FC00000, 0xFFC00000, 0x7F800001, 0x00000000, 0x80000000, 0x7F800000,
              0xFF800000, 0x00000001, 0x80000001, 0x3F800000, 0xBF800000, 0x7F7FFFFF,
              0xFF7FFFFF, 0x40200000, 0xC0200000, 0x3F000000, 0x4F000000, 0xCF000000,
              0x5F800000, 0x4B800001};
    case ElementType::kF64:
      return {0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, 0,
              0x8000000000000000, 0x7FF0000000000000, 0xFFF0000000000000, 1,
              0x8000000000000001, 0x3FF0000000000000, 0xBFF0000000000000, 0x7FEFFFFFFFFFFFFF,
              0x4004000000000000, 0xC004000000000000, 0x3FE0000000000000, 0x43E0000000000000,
              0xC3E0000000000000, 0x41E0000000000000, 0x36A0000000000000};
    default: {
      const int w = Width(t);
      const uint64_t mask = w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
      const uint64_t min = uint64_t{1} << (w - 1);
      std::vector<uint64_t> v = {0, 1, mask /* -1 */, min /* INT_MIN */, min - 1, 2, 3,
                                 static_cast<uint64_t>(w - 1), static_cast<uint64_t>(w),
                                 static_cast<uint64_t>(w + 1), static_cast<uint64_t>(2 * w),
                                 mask - 1 /* -2 */, 7};
      for (uint64_t& x : v) x &= mask;
      return v;
    }
  }
}

// Random elements: a third random bit patterns, the rest moderate values of the type.
uint64_t RandomBits(ElementType t, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> value(-40, 40);
  const bool raw = rng() % 3 == 0;
  const int w = Width(t);
  const uint64_t mask = w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
  if (t == ElementType::kPred) return rng() & 1;
  if (raw) return rng() & mask;
  const double v = value(rng);
  switch (t) {
    case ElementType::kF64: {
      uint64_t b;
      std::memcpy(&b, &v, 8);
      return b;
    }
    case ElementType::kF32:
    case ElementType::kBF16: {
      const float f = static_cast<float>(v);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return t == ElementType::kF32 ? b : b >> 16;
    }
    case ElementType::kF16:
      return ir::F16::FromDouble(v).bits;
    default:
      return static_cast<uint64_t>(static_cast<int64_t>(v)) & mask;
  }
}

// `operands` arrays of n elements of `types`: the first specials^2 rows pair every special of
// operand 0 with every special of operand 1 (unary ops: each special), the rest random.
std::vector<ir::Literal> MakeInputs(const std::vector<ElementType>& types, int64_t n,
                                    uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<ir::Literal> out;
  for (size_t k = 0; k < types.size(); ++k) {
    const ElementType t = types[k];
    ir::Literal lit = ir::Literal::Create(ir::Shape::Make(t, {n}).value()).value();
    const std::vector<uint64_t> s0 = Specials(types[0]);
    const std::vector<uint64_t> s = Specials(t);
    const int bytes = ir::StorageBytes(t);
    for (int64_t i = 0; i < n; ++i) {
      uint64_t bits;
      const int64_t pairs = static_cast<int64_t>(s0.size() * s.size());
      if (i < pairs) {
        bits = k == 0 ? s0[i / s.size()] : s[i % s.size()];
      } else {
        bits = RandomBits(t, rng);
      }
      std::memcpy(lit.mutable_bytes().data() + i * bytes, &bits, bytes);
    }
    out.push_back(std::move(lit));
  }
  return out;
}

bool IsNan(ElementType t, uint64_t b) {
  switch (t) {
    case ElementType::kBF16: return (b & 0x7FFF) > 0x7F80;
    case ElementType::kF16: return (b & 0x7FFF) > 0x7C00;
    case ElementType::kF32: return (b & 0x7FFFFFFF) > 0x7F800000;
    case ElementType::kF64: return (b & 0x7FFFFFFFFFFFFFFF) > 0x7FF0000000000000;
    default: return false;
  }
}

// The single-kernel program `text` (one entry, the root's result returned) compiled as one loop
// kernel and compared with the evaluator on `inputs`. Returns the number of mismatches.
struct KernelRun {
  bool compiled = false;
  std::string refusal;
  int mismatches = 0;
};

passes::Kernel WholeEntryKernel(const ir::Computation& entry) {
  passes::Kernel kernel;
  kernel.kind = passes::KernelKind::kLoop;
  for (const auto& inst : entry.instructions()) {
    if (inst->opcode() == ir::Opcode::kReturn) continue;
    kernel.instructions.push_back(inst.get());
  }
  for (const auto& p : entry.parameters()) kernel.inputs.push_back(p.get());
  // Constants inside the program are kernel inputs (the backend places them as buffers); a
  // scalar one is folded into the code.
  for (const ir::Instruction* inst : std::vector<const ir::Instruction*>(kernel.instructions)) {
    if (inst->opcode() == ir::Opcode::kConstant) kernel.inputs.push_back(inst->result());
  }
  std::erase_if(kernel.instructions,
                [](const ir::Instruction* i) { return i->opcode() == ir::Opcode::kConstant; });
  for (const ir::Value* v : entry.return_instruction()->operands()) kernel.outputs.push_back(v);
  return kernel;
}

KernelRun CompareWithEvaluator(const std::string& text, std::vector<ir::Literal> inputs,
                               int64_t begin_split = -1) {
  KernelRun run;
  std::unique_ptr<ir::Module> module = test_util::Parse(text);
  if (module == nullptr) return run;
  const ir::Computation& entry = *module->entry();
  passes::Kernel kernel = WholeEntryKernel(entry);
  HostKernelCompiler compiler;
  absl::StatusOr<int> id = compiler.AddLoopKernel(kernel);
  if (!id.ok()) {
    run.refusal = std::string(id.status().message());
    return run;
  }
  absl::Status compiled = compiler.Compile();
  EXPECT_TRUE(compiled.ok()) << compiled << "\n" << text;
  if (!compiled.ok()) return run;
  run.compiled = true;
  HostLoopKernel fn = compiler.Get(*id);

  eval::Evaluator evaluator;
  std::vector<eval::EvalValue> args;
  for (const ir::Literal& l : inputs) args.push_back(eval::EvalValue::Array(l.Clone().value()));
  absl::StatusOr<std::vector<eval::EvalValue>> want = evaluator.Run(entry, std::move(args));
  EXPECT_TRUE(want.ok()) << want.status() << "\n" << text;
  if (!want.ok()) return run;

  std::vector<const void*> in;
  for (size_t k = 0; k < entry.parameters().size(); ++k) in.push_back(inputs[k].bytes().data());
  for (size_t k = entry.parameters().size(); k < kernel.inputs.size(); ++k) {
    in.push_back(passes::ConstantLiteral(kernel.inputs[k])->bytes().data());
  }
  std::vector<ir::Literal> got;
  std::vector<void*> out;
  for (const ir::Value* v : kernel.outputs) {
    got.push_back(ir::Literal::Create(v->type().shape()).value());
    std::memset(got.back().mutable_bytes().data(), 0xA5, got.back().size_bytes());
    out.push_back(got.back().mutable_bytes().data());
  }
  const int64_t n = kernel.root()->result()->type().shape().element_count();
  // Two calls over a split of the range, as threads run it.
  const int64_t split = begin_split >= 0 ? begin_split : n / 3;
  fn.fn(in.data(), out.data(), 0, split);
  fn.fn(in.data(), out.data(), split, n);

  for (size_t o = 0; o < got.size(); ++o) {
    const ElementType t = kernel.outputs[o]->type().element_type();
    const int bytes = ir::StorageBytes(t);
    const ir::Literal& w = (*want)[o].array;
    for (int64_t i = 0; i < n; ++i) {
      uint64_t a = 0, b = 0;
      std::memcpy(&a, got[o].bytes().data() + i * bytes, bytes);
      std::memcpy(&b, w.bytes().data() + i * bytes, bytes);
      if (a == b || (IsNan(t, a) && IsNan(t, b))) continue;
      if (++run.mismatches <= 5) {
        std::string operands;
        for (const ir::Literal& l : inputs) {
          const int ib = ir::StorageBytes(l.element_type());
          uint64_t x = 0;
          if (i < l.shape().element_count()) std::memcpy(&x, l.bytes().data() + i * ib, ib);
          absl::StrAppend(&operands, " 0x", absl::Hex(x));
        }
        ADD_FAILURE() << "element " << i << ": got 0x" << absl::StrCat(absl::Hex(a))
                      << ", evaluator 0x" << absl::StrCat(absl::Hex(b)) << " (operands"
                      << operands << ")\n" << text;
      }
    }
  }
  return run;
}

constexpr int64_t kN = 700;  // more than specials^2 for every type, and not a vector multiple

std::string Program(const std::vector<ElementType>& in, ElementType out, const std::string& body,
                    int64_t n = kN) {
  std::string params;
  for (size_t k = 0; k < in.size(); ++k) {
    absl::StrAppend(&params, k ? ", " : "", "%p", k, ": tensor<", n, "x", Mlir(in[k]), ">");
  }
  return absl::StrCat("func.func @main(", params, ") -> tensor<", n, "x", Mlir(out), "> {\n",
                      body, "\n  return %r : tensor<", n, "x", Mlir(out), ">\n}\n");
}

struct OpCase {
  const char* op;
  int arity;
  bool floats, signed_ints, unsigned_ints, pred;
};
// The evaluator's domain of each op (eval_binary.cc, eval_unary.cc).
constexpr OpCase kOps[] = {
    {"add", 2, true, true, true, true},
    {"subtract", 2, true, true, true, false},
    {"multiply", 2, true, true, true, true},
    {"divide", 2, true, true, true, false},
    {"remainder", 2, true, true, true, false},
    {"maximum", 2, true, true, true, true},
    {"minimum", 2, true, true, true, true},
    {"and", 2, false, true, true, true},
    {"or", 2, false, true, true, true},
    {"xor", 2, false, true, true, true},
    {"shift_left", 2, false, true, true, false},
    {"shift_right_logical", 2, false, true, true, false},
    {"shift_right_arithmetic", 2, false, true, true, false},
    {"negate", 1, true, true, true, false},
    {"abs", 1, true, true, false, false},
    {"sign", 1, true, true, false, false},
    {"not", 1, false, true, true, true},
    {"sqrt", 1, true, false, false, false},
    {"floor", 1, true, false, false, false},
    {"ceil", 1, true, false, false, false},
    {"round_nearest_even", 1, true, false, false, false},
    {"round_nearest_afz", 1, true, false, false, false},
};

bool InDomain(const OpCase& op, ElementType t) {
  if (t == ElementType::kPred) return op.pred;
  if (IsF(t)) return op.floats;
  return ir::IsSignedInteger(t) ? op.signed_ints : op.unsigned_ints;
}

TEST(LoopKernelDifferentialTest, ElementwiseOpsOverEveryType) {
  ASSERT_TRUE(HostCodegenBuilt());
  int cases = 0;
  for (const OpCase& op : kOps) {
    for (const TypeInfo& info : kTypes) {
      if (!InDomain(op, info.type)) continue;
      SCOPED_TRACE(absl::StrCat(op.op, " ", info.mlir));
      const std::string t = absl::StrCat("tensor<", kN, "x", info.mlir, ">");
      const std::string body =
          op.arity == 2 ? absl::StrCat("  %r = stablehlo.", op.op, " %p0, %p1 : ", t)
                        : absl::StrCat("  %r = stablehlo.", op.op, " %p0 : ", t);
      std::vector<ElementType> types(op.arity, info.type);
      KernelRun run = CompareWithEvaluator(Program(types, info.type, body),
                                           MakeInputs(types, kN, 17 + cases));
      EXPECT_TRUE(run.compiled) << run.refusal;
      EXPECT_EQ(run.mismatches, 0);
      ++cases;
    }
  }
  EXPECT_GT(cases, 150);
}

TEST(LoopKernelDifferentialTest, CompareSelectClampIsFinite) {
  int cases = 0;
  for (const TypeInfo& info : kTypes) {
    const ElementType et = info.type;
    const std::string t = absl::StrCat("tensor<", kN, "x", info.mlir, ">");
    const std::string p = absl::StrCat("tensor<", kN, "xi1>");
    const char* ct = IsF(et) ? "FLOAT" : ir::IsSignedInteger(et) ? "SIGNED" : "UNSIGNED";
    for (const char* dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
      SCOPED_TRACE(absl::StrCat("compare ", dir, " ", info.mlir));
      const std::string body = absl::StrCat("  %r = stablehlo.compare ", dir, ", %p0, %p1, ", ct,
                                            " : (", t, ", ", t, ") -> ", p);
      KernelRun run = CompareWithEvaluator(Program({et, et}, ElementType::kPred, body),
                                           MakeInputs({et, et}, kN, 100 + cases++));
      EXPECT_TRUE(run.compiled) << run.refusal;
      EXPECT_EQ(run.mismatches, 0);
    }
    {
      SCOPED_TRACE(absl::StrCat("select ", info.mlir));
      const std::string body =
          absl::StrCat("  %r = stablehlo.select %p0, %p1, %p2 : ", p, ", ", t);
      KernelRun run = CompareWithEvaluator(
          Program({ElementType::kPred, et, et}, et, body),
          MakeInputs({ElementType::kPred, et, et}, kN, 100 + cases++));
      EXPECT_TRUE(run.compiled) << run.refusal;
      EXPECT_EQ(run.mismatches, 0);
    }
    if (et != ElementType::kPred) {
      SCOPED_TRACE(absl::StrCat("clamp ", info.mlir));
      const std::string body = absl::StrCat("  %r = stablehlo.clamp %p0, %p1, %p2 : ", t);
      KernelRun run = CompareWithEvaluator(Program({et, et, et}, et, body),
                                           MakeInputs({et, et, et}, kN, 100 + cases++));
      EXPECT_TRUE(run.compiled) << run.refusal;
      EXPECT_EQ(run.mismatches, 0);
    }
    if (IsF(et)) {
      SCOPED_TRACE(absl::StrCat("is_finite ", info.mlir));
      const std::string body =
          absl::StrCat("  %r = stablehlo.is_finite %p0 : (", t, ") -> ", p);
      KernelRun run = CompareWithEvaluator(Program({et}, ElementType::kPred, body),
                                           MakeInputs({et}, kN, 100 + cases++));
      EXPECT_TRUE(run.compiled) << run.refusal;
      EXPECT_EQ(run.mismatches, 0);
    }
  }
}

// Conversions the emitter refuses: they would round twice through f32.
bool ConvertRefused(ElementType from, ElementType to) {
  const bool narrow = to == ElementType::kBF16 || to == ElementType::kF16;
  return narrow && (from == ElementType::kF64 || (ir::IsInteger(from) && ir::BitWidth(from) > 16));
}

TEST(LoopKernelDifferentialTest, ConvertBetweenEveryPairOfTypes) {
  int cases = 0, refused = 0;
  for (const TypeInfo& from : kTypes) {
    for (const TypeInfo& to : kTypes) {
      SCOPED_TRACE(absl::StrCat("convert ", from.mlir, " -> ", to.mlir));
      const std::string body = absl::StrCat("  %r = stablehlo.convert %p0 : (tensor<", kN, "x",
                                            from.mlir, ">) -> tensor<", kN, "x", to.mlir, ">");
      KernelRun run = CompareWithEvaluator(Program({from.type}, to.type, body),
                                           MakeInputs({from.type}, kN, 300 + cases++));
      if (ConvertRefused(from.type, to.type)) {
        EXPECT_FALSE(run.compiled);
        ++refused;
        continue;
      }
      EXPECT_TRUE(run.compiled) << run.refusal;
      EXPECT_EQ(run.mismatches, 0);
    }
  }
  EXPECT_EQ(refused, 2 * (1 + 4));  // f64 and the 4 integer types wider than 16 bits, to bf16, f16
}

TEST(LoopKernelDifferentialTest, FusedChainWithIndexOpsAndScalarConstants) {
  // softmax-like and layernorm-like bodies: broadcasts of rows and columns, a transpose, a
  // strided slice, a reshape, an iota and scalar constants, in f32 and bf16.
  for (const char* ty : {"f32", "bf16", "f64"}) {
    SCOPED_TRACE(ty);
    const std::string text = absl::StrReplaceAll(R"(
func.func @main(%x: tensor<6x40x@T@>, %row: tensor<6x@T@>, %col: tensor<40x@T@>, %w: tensor<40x6x@T@>, %big: tensor<12x82x@T@>) -> (tensor<6x40x@T@>, tensor<6x40xi1>) {
  %c = stablehlo.constant dense<0.75> : tensor<@T@>
  %b1 = stablehlo.broadcast_in_dim %row, dims = [0] : (tensor<6x@T@>) -> tensor<6x40x@T@>
  %b2 = stablehlo.broadcast_in_dim %col, dims = [1] : (tensor<40x@T@>) -> tensor<6x40x@T@>
  %bc = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<@T@>) -> tensor<6x40x@T@>
  %t = stablehlo.transpose %w, dims = [1, 0] : (tensor<40x6x@T@>) -> tensor<6x40x@T@>
  %s = stablehlo.slice %big [1:12:2, 2:82:2] : (tensor<12x82x@T@>) -> tensor<6x40x@T@>
  %sp = stablehlo.reshape %x : (tensor<6x40x@T@>) -> tensor<240x@T@>
  %sr = stablehlo.reshape %sp : (tensor<240x@T@>) -> tensor<6x40x@T@>
  %i = stablehlo.iota dim = 1 : tensor<6x40xi16>
  %if = stablehlo.convert %i : (tensor<6x40xi16>) -> tensor<6x40x@T@>
  %d = stablehlo.subtract %sr, %b1 : tensor<6x40x@T@>
  %m = stablehlo.multiply %d, %b2 : tensor<6x40x@T@>
  %a0 = stablehlo.add %m, %t : tensor<6x40x@T@>
  %a = stablehlo.add %a0, %s : tensor<6x40x@T@>
  %q = stablehlo.multiply %a, %bc : tensor<6x40x@T@>
  %r0 = stablehlo.add %q, %if : tensor<6x40x@T@>
  %cmp = stablehlo.compare GT, %r0, %t, FLOAT : (tensor<6x40x@T@>, tensor<6x40x@T@>) -> tensor<6x40xi1>
  return %r0, %cmp : tensor<6x40x@T@>, tensor<6x40xi1>
}
)", {{"@T@", ty}});
    std::unique_ptr<ir::Module> probe = test_util::Parse(text);
    ASSERT_NE(probe, nullptr);
    const ElementType et = probe->entry()->parameter(0)->type().element_type();
    std::vector<ir::Literal> inputs;
    uint64_t seed = 7;
    for (const auto& p : probe->entry()->parameters()) {
      std::vector<ir::Literal> one = MakeInputs({et}, p->type().shape().element_count(), seed++);
      inputs.push_back(ir::Literal::FromBytes(p->type().shape(), one[0].bytes()).value());
    }
    for (int64_t split : {0, 1, 39, 40, 41, 239}) {
      KernelRun run = CompareWithEvaluator(text, [&] {
        std::vector<ir::Literal> copy;
        for (const ir::Literal& l : inputs) copy.push_back(l.Clone().value());
        return copy;
      }(), split);
      EXPECT_TRUE(run.compiled) << run.refusal;
      EXPECT_EQ(run.mismatches, 0) << "split " << split;
    }
  }
}

TEST(LoopKernelDifferentialTest, IdenticalKernelsShareOneFunction) {
  const std::string text = Program({ElementType::kF32, ElementType::kF32}, ElementType::kF32,
                                   absl::StrCat("  %r = stablehlo.add %p0, %p1 : tensor<", kN,
                                                "xf32>"));
  std::unique_ptr<ir::Module> a = test_util::Parse(text);
  std::unique_ptr<ir::Module> b = test_util::Parse(text);
  ASSERT_TRUE(a != nullptr && b != nullptr);
  passes::Kernel ka = WholeEntryKernel(*a->entry());
  passes::Kernel kb = WholeEntryKernel(*b->entry());
  HostKernelCompiler compiler;
  ASSERT_TRUE(compiler.AddLoopKernel(ka).ok());
  ASSERT_TRUE(compiler.AddLoopKernel(kb).ok());
  ASSERT_TRUE(compiler.Compile().ok());
  EXPECT_EQ(compiler.kernels(), 2);
  EXPECT_EQ(compiler.unique_kernels(), 1);
  EXPECT_EQ(compiler.Get(0).fn, compiler.Get(1).fn);
  EXPECT_NE(compiler.Get(0).fn, nullptr);
}

TEST(LoopKernelDifferentialTest, RefusesWhatItDoesNotEmit) {
  // exp is not emitted yet (it needs the vector polynomials of the evaluator's accuracy).
  const std::string text = Program({ElementType::kF32}, ElementType::kF32,
                                   absl::StrCat("  %r = stablehlo.exponential %p0 : tensor<", kN,
                                                "xf32>"));
  KernelRun run = CompareWithEvaluator(text, MakeInputs({ElementType::kF32}, kN, 1));
  EXPECT_FALSE(run.compiled);
  EXPECT_NE(run.refusal.find("exponential"), std::string::npos) << run.refusal;
}

}  // namespace
}  // namespace ember::codegen
