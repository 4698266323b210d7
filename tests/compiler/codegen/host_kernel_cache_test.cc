// The host target's compiled-code lifetime and caches: kernels compiled on several threads at
// once (JAX compiles from several) by the process-wide JIT, each executable's code staying valid
// until its last kernel is released; the persistent cache (kernel_disk_cache.h) turning a second
// compile of the same kernels into a hit that skips code generation and gives the same results,
// and a corrupted entry being recompiled and rewritten. Results are checked against the
// evaluator on random inputs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/host_kernel_compiler.h"
#include "compiler/codegen/kernel_disk_cache.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/passes/rewrite.h"
#include "tests/compiler/parse_module.h"

namespace ember::codegen {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kN = 1000;

// An f32 chain over kN elements whose scalar constant `c` (folded into the code) makes each
// program's IR distinct.
std::string Program(int c) {
  return absl::StrCat(
      "func.func @main(%x: tensor<", kN, "xf32>, %y: tensor<", kN, "xf32>) -> tensor<", kN,
      "xf32> {\n  %c0 = stablehlo.constant dense<", c, ".5> : tensor<f32>\n",
      "  %c = stablehlo.broadcast_in_dim %c0, dims = [] : (tensor<f32>) -> tensor<", kN, "xf32>\n",
      "  %a = stablehlo.multiply %x, %y : tensor<", kN, "xf32>\n",
      "  %b = stablehlo.add %a, %c : tensor<", kN, "xf32>\n",
      "  %m = stablehlo.maximum %b, %x : tensor<", kN, "xf32>\n",
      "  %r = stablehlo.divide %m, %y : tensor<", kN, "xf32>\n",
      "  return %r : tensor<", kN, "xf32>\n}\n");
}

// One program, its single loop kernel, random inputs and the evaluator's result.
struct Case {
  std::unique_ptr<ir::Module> module;
  passes::Kernel kernel;
  std::vector<ir::Literal> inputs;
  ir::Literal want;
};

Case MakeCase(int c, uint64_t seed) {
  Case k;
  k.module = test_util::Parse(Program(c));
  if (k.module == nullptr) return k;
  const ir::Computation& entry = *k.module->entry();
  k.kernel.kind = passes::KernelKind::kLoop;
  for (const auto& p : entry.parameters()) k.kernel.inputs.push_back(p.get());
  for (const auto& inst : entry.instructions()) {
    if (inst->opcode() == ir::Opcode::kConstant) k.kernel.inputs.push_back(inst->result());
    if (inst->opcode() == ir::Opcode::kConstant || inst->opcode() == ir::Opcode::kReturn) continue;
    k.kernel.instructions.push_back(inst.get());
  }
  k.kernel.outputs.push_back(entry.return_instruction()->operands()[0]);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> value(-10, 10);
  std::vector<eval::EvalValue> args;
  for (int p = 0; p < 2; ++p) {
    ir::Literal lit =
        ir::Literal::Create(ir::Shape::Make(ir::ElementType::kF32, {kN}).value()).value();
    auto* data = reinterpret_cast<float*>(lit.mutable_bytes().data());
    for (int64_t i = 0; i < kN; ++i) data[i] = value(rng);
    args.push_back(eval::EvalValue::Array(lit.Clone().value()));
    k.inputs.push_back(std::move(lit));
  }
  eval::Evaluator evaluator;
  absl::StatusOr<std::vector<eval::EvalValue>> want = evaluator.Run(entry, std::move(args));
  EXPECT_TRUE(want.ok()) << want.status();
  if (want.ok()) k.want = std::move((*want)[0].array);
  return k;
}

// Runs `kernel`'s code (the current code of a tiered kernel, or `code` given) on the case's
// inputs and counts the elements that differ from the evaluator's.
int Mismatches(const Case& k, const HostLoopKernel& kernel, HostLoopFn code = nullptr) {
  const HostLoopFn fn = code != nullptr ? code : kernel.code();
  if (fn == nullptr) return -1;
  std::vector<const void*> in = {k.inputs[0].bytes().data(), k.inputs[1].bytes().data(),
                                 passes::ConstantLiteral(k.kernel.inputs[2])->bytes().data()};
  std::vector<float> got(kN, -1.0f);
  void* out[] = {got.data()};
  fn(in.data(), out, 0, kN / 3);
  fn(in.data(), out, kN / 3, kN);
  int bad = 0;
  for (int64_t i = 0; i < kN; ++i) {
    bad += std::memcmp(&got[i], k.want.bytes().data() + 4 * i, 4) != 0;
  }
  return bad;
}

// Compiles the case alone; the kernel keeps its code alive after the compiler is gone.
HostLoopKernel CompileCase(const Case& k, const std::string& cache_dir = "",
                           double* ms = nullptr, KernelTier tier = KernelTier::kOptimized) {
  HostKernelCompiler compiler(cache_dir);
  absl::StatusOr<int> id = compiler.AddKernel(k.kernel, tier);
  EXPECT_TRUE(id.ok()) << id.status();
  if (!id.ok()) return {};
  absl::Status compiled = compiler.Compile();
  EXPECT_TRUE(compiled.ok()) << compiled;
  if (ms != nullptr) *ms = compiler.compile_ms();
  return compiled.ok() ? compiler.Get(*id) : HostLoopKernel{};
}

class CacheDir {
 public:
  explicit CacheDir(const std::string& name)
      : dir_(fs::temp_directory_path() / absl::StrCat("ember_hkc_", name, "_", getpid())) {
    fs::remove_all(dir_);
  }
  ~CacheDir() { fs::remove_all(dir_); }
  std::string path() const { return dir_.string(); }
  std::vector<fs::path> Entries() const {
    std::vector<fs::path> out;
    if (fs::exists(dir_)) {
      for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path());
    }
    return out;
  }

 private:
  fs::path dir_;
};

TEST(HostKernelCacheTest, CodeOutlivesTheCompilerAndIsReleased) {
  Case k = MakeCase(1, 11);
  ASSERT_NE(k.module, nullptr);
  std::vector<HostLoopKernel> kept;
  for (int round = 0; round < 20; ++round) {
    HostLoopKernel fn = CompileCase(k);
    EXPECT_EQ(Mismatches(k, fn), 0);
    // Keep every fourth executable's kernels; the others' JITDylibs go away now.
    if (round % 4 == 0) kept.push_back(fn);
  }
  for (const HostLoopKernel& fn : kept) EXPECT_EQ(Mismatches(k, fn), 0);
}

TEST(HostKernelCacheTest, ConcurrentCompilesAndReleases) {
  constexpr int kThreads = 4, kRounds = 6;
  std::vector<Case> cases;
  for (int t = 0; t < kThreads; ++t) cases.push_back(MakeCase(t + 2, 100 + t));
  for (const Case& k : cases) ASSERT_NE(k.module, nullptr);
  std::vector<int> bad(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      HostLoopKernel previous;
      for (int round = 0; round < kRounds; ++round) {
        // Each thread compiles its own program and another thread's, and releases code while
        // the others compile.
        HostLoopKernel mine = CompileCase(cases[t]);
        HostLoopKernel other = CompileCase(cases[(t + round) % kThreads]);
        bad[t] += Mismatches(cases[t], mine) != 0;
        bad[t] += Mismatches(cases[(t + round) % kThreads], other) != 0;
        if (previous.fn != nullptr) bad[t] += Mismatches(cases[t], previous) != 0;
        previous = mine;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(bad[t], 0) << "thread " << t;
}

TEST(HostKernelCacheTest, KernelsAnotherExecutableHoldsAreReused) {
  // While an executable holds a kernel's code, another compile of the same kernel takes it (the
  // process-wide CompiledKernelCache): no compile, no disk look-up, the same entry point. Once
  // nothing holds it, the kernel is compiled again.
  Case k = MakeCase(9, 23);
  ASSERT_NE(k.module, nullptr);
  const KernelCacheCounters start = GetKernelCacheCounters();
  HostLoopKernel first = CompileCase(k);
  ASSERT_NE(first.fn, nullptr);
  HostLoopKernel second = CompileCase(k);
  EXPECT_EQ(second.fn, first.fn);
  EXPECT_EQ(Mismatches(k, second), 0);
  EXPECT_EQ(GetKernelCacheCounters().compiles - start.compiles, 1);
  first = HostLoopKernel{};
  EXPECT_EQ(Mismatches(k, second), 0);  // still held by the second
  second = HostLoopKernel{};
  HostLoopKernel third = CompileCase(k);
  EXPECT_EQ(Mismatches(k, third), 0);
  EXPECT_EQ(GetKernelCacheCounters().compiles - start.compiles, 2);
}

TEST(HostKernelCacheTest, DiskCacheHitSkipsCodeGeneration) {
  CacheDir dir("hit");
  Case k = MakeCase(7, 21);
  ASSERT_NE(k.module, nullptr);
  const KernelCacheCounters start = GetKernelCacheCounters();
  HostLoopKernel first = CompileCase(k, dir.path());
  EXPECT_EQ(Mismatches(k, first), 0);
  const KernelCacheCounters after_first = GetKernelCacheCounters();
  EXPECT_EQ(after_first.compiles - start.compiles, 1);
  EXPECT_EQ(after_first.misses - start.misses, 1);
  EXPECT_EQ(after_first.writes - start.writes, 1);
  ASSERT_EQ(dir.Entries().size(), 1u);

  // The same kernels in a new process (here: once nothing holds the first code): a disk hit,
  // no compile.
  first = HostLoopKernel{};
  HostLoopKernel second = CompileCase(k, dir.path());
  EXPECT_EQ(Mismatches(k, second), 0);
  const KernelCacheCounters after_second = GetKernelCacheCounters();
  EXPECT_EQ(after_second.hits - after_first.hits, 1);
  EXPECT_EQ(after_second.compiles, after_first.compiles);

  // Another program is another entry.
  Case other = MakeCase(8, 22);
  ASSERT_NE(other.module, nullptr);
  EXPECT_EQ(Mismatches(other, CompileCase(other, dir.path())), 0);
  EXPECT_EQ(GetKernelCacheCounters().compiles - after_second.compiles, 1);
  EXPECT_EQ(dir.Entries().size(), 2u);
}

TEST(HostKernelCacheTest, CorruptedEntryIsRecompiledAndRewritten) {
  CacheDir dir("corrupt");
  Case k = MakeCase(9, 31);
  ASSERT_NE(k.module, nullptr);
  EXPECT_EQ(Mismatches(k, CompileCase(k, dir.path())), 0);
  std::vector<fs::path> entries = dir.Entries();
  ASSERT_EQ(entries.size(), 1u);
  std::string good;
  {
    std::ifstream in(entries[0], std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_GT(good.size(), 100u);
  std::mt19937_64 rng(5);
  // Damage in the object code itself (past the header), a truncation and garbage: each time
  // the kernels are compiled again, correct, and the entry is whole again afterwards.
  const std::vector<std::string> damaged = {
      [&] {
        std::string bad = good;
        bad[bad.size() / 2] = static_cast<char>(bad[bad.size() / 2] ^ 0x10);
        return bad;
      }(),
      good.substr(0, good.size() / 3), std::string(good.size(), 'x')};
  for (size_t d = 0; d < damaged.size(); ++d) {
    std::ofstream(entries[0], std::ios::binary | std::ios::trunc) << damaged[d];
    const KernelCacheCounters before = GetKernelCacheCounters();
    EXPECT_EQ(Mismatches(k, CompileCase(k, dir.path())), 0) << "damage " << d;
    const KernelCacheCounters after = GetKernelCacheCounters();
    EXPECT_EQ(after.corrupt - before.corrupt, 1) << "damage " << d;
    EXPECT_EQ(after.compiles - before.compiles, 1) << "damage " << d;
    EXPECT_EQ(after.hits, before.hits) << "damage " << d;
    // Rewritten: the next compile is a hit again.
    EXPECT_EQ(Mismatches(k, CompileCase(k, dir.path())), 0);
    EXPECT_EQ(GetKernelCacheCounters().hits - after.hits, 1) << "damage " << d;
  }
  EXPECT_EQ(dir.Entries().size(), 1u);
}

TEST(HostKernelCacheTest, TieredKernelRunsQuickCodeUntilItsOptimizedCodeReplacesIt) {
  Case k = MakeCase(12, 51);
  ASSERT_NE(k.module, nullptr);
  const KernelCacheCounters start = GetKernelCacheCounters();
  HostLoopKernel tiered;
  {
    HostKernelCompiler compiler;
    absl::StatusOr<int> id = compiler.AddKernel(k.kernel, KernelTier::kTiered);
    ASSERT_TRUE(id.ok()) << id.status();
    ASSERT_TRUE(compiler.Compile().ok());
    EXPECT_EQ(compiler.tiered_kernels(), 1);
    tiered = compiler.Get(*id);
    ASSERT_NE(tiered.tiered, nullptr);
    // The quick code, and whatever code is current (quick, or already optimized): both right.
    EXPECT_EQ(Mismatches(k, tiered, tiered.fn), 0);
    EXPECT_EQ(Mismatches(k, tiered), 0);
    compiler.WaitForOptimizedCode();
    EXPECT_TRUE(tiered.final_code());
  }  // the compiler is gone; the kernel holds both codes
  EXPECT_NE(tiered.code(), tiered.fn);
  EXPECT_EQ(Mismatches(k, tiered), 0);
  EXPECT_EQ(Mismatches(k, tiered, tiered.fn), 0);
  EXPECT_EQ(GetKernelCacheCounters().compiles - start.compiles, 2);  // quick, then optimized
  // The optimized code is the kernel's code for everyone: an optimized compile of the same
  // kernel takes it, with no compile.
  HostLoopKernel optimized = CompileCase(k);
  EXPECT_EQ(optimized.fn, tiered.code());
  EXPECT_EQ(GetKernelCacheCounters().compiles - start.compiles, 2);
}

TEST(HostKernelCacheTest, TieredKernelsDroppedBeforeTheirOptimizedCodeAreNotCompiledForNobody) {
  // Compilers and kernels released at once, while their background compiles are queued or
  // running: nothing crashes, no code is used after it is freed (the sanitizer build), and a
  // large launch's wait ends.
  std::vector<Case> cases;
  for (int c = 0; c < 8; ++c) cases.push_back(MakeCase(20 + c, 60 + c));
  HostLoopKernel kept;
  for (int round = 0; round < 8; ++round) {
    const Case& k = cases[round];
    ASSERT_NE(k.module, nullptr);
    HostLoopKernel kernel = CompileCase(k, "", nullptr, KernelTier::kTiered);
    if (round == 3) {
      kept = kernel;
      // A launch over kTieredWaitElements takes the settled code.
      EXPECT_EQ(Mismatches(k, kept, kept.code(kTieredWaitElements)), 0);
      EXPECT_TRUE(kept.final_code());
    }
  }
  HostKernelCompiler().WaitForOptimizedCode();  // (a compiler without tiered kernels waits not)
  HostKernelCompiler waiter;
  ASSERT_TRUE(waiter.AddKernel(cases[0].kernel, KernelTier::kTiered).ok());
  ASSERT_TRUE(waiter.Compile().ok());
  waiter.WaitForOptimizedCode();
  EXPECT_EQ(Mismatches(cases[3], kept), 0);
}

TEST(HostKernelCacheTest, BackgroundKernelHasNoQuickCodeAndItsLaunchesWait) {
  Case k = MakeCase(14, 81);
  ASSERT_NE(k.module, nullptr);
  const KernelCacheCounters start = GetKernelCacheCounters();
  HostKernelCompiler compiler;
  absl::StatusOr<int> id = compiler.AddKernel(k.kernel, KernelTier::kBackground);
  ASSERT_TRUE(id.ok()) << id.status();
  ASSERT_TRUE(compiler.Compile().ok());
  EXPECT_EQ(compiler.background_kernels(), 1);
  EXPECT_EQ(compiler.tiered_kernels(), 0);
  HostLoopKernel kernel = compiler.Get(*id);
  EXPECT_EQ(kernel.fn, nullptr);  // no quick code
  ASSERT_NE(kernel.tiered, nullptr);
  // Even a small launch waits: there is nothing else to run.
  const HostLoopFn code = kernel.code(0);
  ASSERT_NE(code, nullptr) << kernel.Unavailable();
  EXPECT_TRUE(kernel.final_code());
  EXPECT_EQ(Mismatches(k, kernel, code), 0);
  compiler.WaitForOptimizedCode();
  EXPECT_EQ(GetKernelCacheCounters().compiles - start.compiles, 1);  // the optimized code only
}

TEST(HostKernelCacheTest, TieredKernelsWithAPersistentCacheAreOptimizedAtOnce) {
  CacheDir dir("tiered");
  Case k = MakeCase(13, 71);
  ASSERT_NE(k.module, nullptr);
  HostLoopKernel kernel = CompileCase(k, dir.path(), nullptr, KernelTier::kTiered);
  EXPECT_EQ(kernel.tiered, nullptr);
  EXPECT_EQ(Mismatches(k, kernel), 0);
  EXPECT_EQ(dir.Entries().size(), 1u);
  kernel = CompileCase(MakeCase(15, 72), dir.path(), nullptr, KernelTier::kBackground);
  EXPECT_EQ(kernel.tiered, nullptr);
  EXPECT_NE(kernel.fn, nullptr);
  EXPECT_EQ(dir.Entries().size(), 2u);
}

TEST(HostKernelCacheTest, UnwritableCacheDirectoryStillCompiles) {
  const fs::path file = fs::temp_directory_path() / absl::StrCat("ember_hkc_file_", getpid());
  std::ofstream(file) << "a file, not a directory";
  Case k = MakeCase(10, 41);
  ASSERT_NE(k.module, nullptr);
  EXPECT_EQ(Mismatches(k, CompileCase(k, (file / "cache").string())), 0);
  fs::remove(file);
}

}  // namespace
}  // namespace ember::codegen
