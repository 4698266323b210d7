// Shared by the code generator's differential tests: one program compiled by the host target as
// one kernel (a loop or reduction kernel of all its instructions), at both tiers, and run over a
// split of its range, as threads run it, against the reference evaluator, element by element.
#ifndef EMBER_TESTS_COMPILER_CODEGEN_DIFFERENTIAL_HARNESS_H_
#define EMBER_TESTS_COMPILER_CODEGEN_DIFFERENTIAL_HARNESS_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/host_kernel_compiler.h"
#include "compiler/codegen/reduce_support.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/passes/rewrite.h"
#include "tests/compiler/codegen/differential_inputs.h"
#include "tests/compiler/parse_module.h"

namespace ember::codegen::test_harness {

using ir::ElementType;
using namespace test_inputs;  // NOLINT: the shared input makers

// The single-kernel program `text` (one entry, the root's result returned) compiled as one loop
// kernel and compared with the evaluator on `inputs`. Returns the number of mismatches.
struct KernelRun {
  bool compiled = false;
  std::string refusal;
  int mismatches = 0;
  int tier_mismatches = 0;  // between the optimized and the quick kernel
};

// How far a result may be from the evaluator's: bit for bit by default; `ulp` units in the last
// place of floats (polynomial transcendentals); `relative` of max(1, |evaluator|) for floats
// (reassociated sums).
struct Tolerance {
  int64_t ulp = 0;
  double relative = 0;
};

// The distance of two floats of `t` in units in the last place (0 for +0 and -0).
inline int64_t UlpDistance(ElementType t, uint64_t a, uint64_t b) {
  // (f8E8M0FNU has no sign: its encodings are in order.)
  if (t == ElementType::kF8E8M0FNU) return std::abs(static_cast<int64_t>(a) - static_cast<int64_t>(b));
  const int w = ir::NarrowFloatFormat(t) != nullptr ? ir::NarrowFloatFormat(t)->total_bits()
                                                    : Width(t);
  const uint64_t sign = uint64_t{1} << (w - 1);
  auto ordered = [&](uint64_t x) {
    return (x & sign) ? -static_cast<int64_t>(x & (sign - 1)) : static_cast<int64_t>(x);
  };
  return std::abs(ordered(a) - ordered(b));
}

inline double AsDouble(ElementType t, uint64_t bits) {
  switch (t) {
    case ElementType::kF64: {
      double d;
      std::memcpy(&d, &bits, 8);
      return d;
    }
    case ElementType::kF32: {
      float f;
      const uint32_t b = static_cast<uint32_t>(bits);
      std::memcpy(&f, &b, 4);
      return f;
    }
    default: return DecodeFloat(*ir::NarrowFloatFormat(t), static_cast<uint32_t>(bits));
  }
}

inline bool Close(ElementType t, uint64_t a, uint64_t b, const Tolerance& tolerance) {
  if (!IsF(t)) return false;
  if (tolerance.ulp > 0 && UlpDistance(t, a, b) <= tolerance.ulp) return true;
  if (tolerance.relative > 0) {
    const double x = AsDouble(t, a), y = AsDouble(t, b);
    if (std::isfinite(x) && std::isfinite(y) &&
        std::abs(x - y) <= tolerance.relative * std::max(1.0, std::abs(y))) {
      return true;
    }
  }
  return false;
}

// What results are compared by: complex numbers part by part (each part a float of its own),
// every other type element by element. The unit's type and its bytes.
inline std::pair<ElementType, int> CompareUnit(ElementType t) {
  if (t == ElementType::kC64) return {ElementType::kF32, 4};
  if (t == ElementType::kC128) return {ElementType::kF64, 8};
  return {t, ir::StorageBytes(t)};
}

// The entry's instructions as one kernel: a reduction kernel when it has a reduce.
inline passes::Kernel WholeEntryKernel(const ir::Computation& entry) {
  passes::Kernel kernel;
  kernel.kind = passes::KernelKind::kLoop;
  for (const auto& inst : entry.instructions()) {
    if (inst->opcode() == ir::Opcode::kReturn) continue;
    if (inst->opcode() == ir::Opcode::kReduce) kernel.kind = passes::KernelKind::kReduce;
    if (inst->opcode() == ir::Opcode::kScatter) kernel.kind = passes::KernelKind::kSingle;
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

// Runs the kernel compiled at `tier` over `inputs` (split as threads run it) into `got`.
inline bool RunCompiled(const passes::Kernel& kernel, KernelTier tier,
                        const std::vector<const void*>& in, int64_t begin_split,
                        std::vector<ir::Literal>& got, std::string* refusal) {
  HostKernelCompiler compiler;
  absl::StatusOr<int> id = compiler.AddKernel(kernel, tier);
  if (!id.ok()) {
    *refusal = std::string(id.status().message());
    return false;
  }
  absl::Status compiled = compiler.Compile();
  EXPECT_TRUE(compiled.ok()) << compiled;
  if (!compiled.ok()) return false;
  HostLoopKernel fn = compiler.Get(*id);
  got.clear();
  std::vector<void*> out;
  for (const ir::Value* v : kernel.outputs) {
    got.push_back(ir::Literal::Create(v->type().shape()).value());
    std::memset(got.back().mutable_bytes().data(), 0xA5, got.back().size_bytes());
    out.push_back(got.back().mutable_bytes().data());
  }
  // The function's units: output elements of a loop kernel, rows of a reduction kernel.
  int64_t n = kernel.root()->result()->type().shape().element_count();
  if (kernel.kind == passes::KernelKind::kReduce) {
    for (const ir::Instruction* inst : kernel.instructions) {
      if (inst->opcode() == ir::Opcode::kReduce) n = inst->result()->type().shape().element_count();
    }
  }
  // A split reduction (ReducePartsPerRow > 1, reduce_emitter.h) takes its partial slots after
  // its outputs, and runs its parts (here in two calls over a split of them, as threads run
  // them), then its rows.
  int64_t parts = 1;
  size_t reduces = 0;
  if (kernel.kind == passes::KernelKind::kReduce) {
    absl::StatusOr<ReduceKernelLayout> layout = LayOutReduceKernel(kernel);
    if (layout.ok()) {
      parts = ReducePartsPerRow(*layout);
      reduces = layout->reduces.size();
    }
  }
  std::vector<std::vector<uint8_t>> slots(parts > 1 ? reduces : 0);
  if (parts > 1) {
    const int64_t units = n * parts;
    for (std::vector<uint8_t>& slot : slots) {
      slot.assign(units * kSplitSlotBytes, 0xA5);
      out.push_back(slot.data());
    }
    const int64_t split = begin_split >= 0 ? std::min(begin_split, units) : units / 3;
    fn.fn(in.data(), out.data(), 0, split);
    fn.fn(in.data(), out.data(), split, units);
    fn.fn(in.data(), out.data(), units, units + n);
  } else {
    // Two calls over a split of the range, as threads run it.
    const int64_t split = begin_split >= 0 ? begin_split : n / 3;
    fn.fn(in.data(), out.data(), 0, split);
    fn.fn(in.data(), out.data(), split, n);
  }
  return true;
}

// Compiles the kernel at both tiers (KernelTier: optimized, and quick) and compares each with
// the evaluator.
inline KernelRun CompareWithEvaluator(const std::string& text, std::vector<ir::Literal> inputs,
                               int64_t begin_split = -1, Tolerance tolerance = {}) {
  KernelRun run;
  std::unique_ptr<ir::Module> module = test_util::Parse(text);
  if (module == nullptr) return run;
  const ir::Computation& entry = *module->entry();
  passes::Kernel kernel = WholeEntryKernel(entry);

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
  std::vector<ir::Literal> optimized;
  for (KernelTier tier : {KernelTier::kOptimized, KernelTier::kQuick}) {
    const char* tier_name = tier == KernelTier::kQuick ? "quick" : "optimized";
    std::vector<ir::Literal> got;
    if (!RunCompiled(kernel, tier, in, begin_split, got, &run.refusal)) return run;
    run.compiled = true;
    if (tier == KernelTier::kOptimized) {
      for (const ir::Literal& l : got) optimized.push_back(l.Clone().value());
    } else {
      // The tiers compute the same bits (NaNs apart, whose payloads may differ): an executable
      // that switches tiers between launches gives the same results.
      for (size_t o = 0; o < got.size(); ++o) {
        const ElementType t = kernel.outputs[o]->type().element_type();
        const auto [u, bytes] = CompareUnit(t);
        const int64_t units = got[o].size_bytes() / bytes;
        for (int64_t i = 0; i < units; ++i) {
          uint64_t a = 0, b = 0;
          std::memcpy(&a, got[o].bytes().data() + i * bytes, bytes);
          std::memcpy(&b, optimized[o].bytes().data() + i * bytes, bytes);
          if (a == b || (IsNan(u, a) && IsNan(u, b))) continue;
          if (++run.tier_mismatches <= 5) {
            ADD_FAILURE() << "output " << o << " unit " << i << ": quick 0x"
                          << absl::StrCat(absl::Hex(a)) << ", optimized 0x"
                          << absl::StrCat(absl::Hex(b)) << "\n"
                          << text;
          }
        }
      }
    }
    for (size_t o = 0; o < got.size(); ++o) {
      const ElementType t = kernel.outputs[o]->type().element_type();
      const auto [u, bytes] = CompareUnit(t);
      const ir::Literal& w = (*want)[o].array;
      const int64_t units = w.size_bytes() / bytes;
      for (int64_t i = 0; i < units; ++i) {
        uint64_t a = 0, b = 0;
        std::memcpy(&a, got[o].bytes().data() + i * bytes, bytes);
        std::memcpy(&b, w.bytes().data() + i * bytes, bytes);
        if (a == b || (IsNan(u, a) && IsNan(u, b)) || Close(u, a, b, tolerance)) continue;
        if (++run.mismatches <= 5) {
          std::string operands;
          for (const ir::Literal& l : inputs) {
            const int ib = CompareUnit(l.element_type()).second;
            uint64_t x = 0;
            if ((i + 1) * ib <= static_cast<int64_t>(l.size_bytes())) {
              std::memcpy(&x, l.bytes().data() + i * ib, ib);
            }
            absl::StrAppend(&operands, " 0x", absl::Hex(x));
          }
          ADD_FAILURE() << tier_name << " kernel, unit " << i << ": got 0x"
                        << absl::StrCat(absl::Hex(a)) << ", evaluator 0x"
                        << absl::StrCat(absl::Hex(b)) << " (operands" << operands << ")\n"
                        << text;
        }
      }
    }
  }
  return run;
}

// Inputs for every parameter of `text` (the specials first, then random elements).
inline std::vector<ir::Literal> InputsFor(const std::string& text, uint64_t seed) {
  std::vector<ir::Literal> inputs;
  std::unique_ptr<ir::Module> probe = test_util::Parse(text);
  if (probe == nullptr) return inputs;
  for (const auto& p : probe->entry()->parameters()) {
    const ElementType et = p->type().element_type();
    std::vector<ir::Literal> one =
        MakeInputs({et}, std::max<int64_t>(1, p->type().shape().element_count()), seed++);
    inputs.push_back(ir::Literal::FromBytes(p->type().shape(), one[0].bytes()).value());
  }
  return inputs;
}

}  // namespace ember::codegen::test_harness

#endif  // EMBER_TESTS_COMPILER_CODEGEN_DIFFERENTIAL_HARNESS_H_
