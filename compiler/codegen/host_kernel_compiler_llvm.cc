// HostKernelCompiler with LLVM: emission into a few modules (shards) compiled on threads of their
// own, a lean optimization pipeline for the host CPU, native code generation to object files (or
// the persistent cache's copies of them), and the process-wide JIT (host_jit.h) that links each
// into a JITDylib of its own.
#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/codegen/background_compiler.h"
#include "compiler/codegen/compiled_kernel_cache.h"
#include "compiler/codegen/host_jit.h"
#include "compiler/codegen/host_kernel_compiler.h"
#include "compiler/codegen/kernel_disk_cache.h"
#include "compiler/codegen/loop_emitter.h"
#include "compiler/codegen/reduce_emitter.h"
#include "compiler/codegen/reduce_support.h"
#include "compiler/codegen/region_reduce_emitter.h"
#include "compiler/codegen/scatter_emitter.h"
#include "compiler/codegen/scan_emitter.h"
#include "compiler/codegen/sort_emitter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/InstCombine/InstCombine.h"
#include "llvm/Transforms/Scalar/EarlyCSE.h"
#include "llvm/Transforms/Scalar/IndVarSimplify.h"
#include "llvm/Transforms/Scalar/LICM.h"
#include "llvm/Transforms/Scalar/LoopPassManager.h"
#include "llvm/Transforms/Scalar/LoopRotation.h"
#include "llvm/Transforms/Scalar/SimplifyCFG.h"
#include "llvm/Transforms/Vectorize/LoopVectorize.h"

namespace ember::codegen {
namespace {

using Clock = std::chrono::steady_clock;
double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

bool UsesF16(const passes::Kernel& kernel) {
  auto f16 = [](const ir::Value* v) { return v->type().element_type() == ir::ElementType::kF16; };
  for (const ir::Instruction* inst : kernel.instructions) {
    if (f16(inst->result())) return true;
    for (const ir::Value* v : inst->operands()) {
      if (f16(v)) return true;
    }
  }
  return false;
}

bool HostHasF16c() {
  static const bool has = llvm::sys::getHostCPUFeatures().lookup("f16c");
  return has;
}

// Whether the loops vectorize for 512-bit registers: on CPUs whose AVX-512 runs at full clock,
// told apart by AVX512-VBMI (Intel from Ice Lake on, AMD from Zen 4 on). LLVM prefers 256 bits
// on every AVX-512 CPU, for Skylake-SP and Cascade Lake, whose 512-bit instructions lower the
// clock of the whole core; those keep LLVM's choice. (Softmax 4096x1024 on Sapphire Rapids:
// 4.1 -> 2.2-2.7 ms. The bits do not change: reductions fold in a fixed lane order,
// reduce_emitter.h.)
bool PreferZmm() {
  static const bool zmm = [] {
    const llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    return features.lookup("avx512f") && features.lookup("avx512vbmi");
  }();
  return zmm;
}

// The optimizations these kernels need, at a third of O2's cost: clean up the emitted code,
// put the loops in the shape the vectorizer wants (rotated, invariants hoisted, canonical
// induction variables), vectorize the innermost loops for the host's vector width (with
// interleaving and a vectorized remainder, as O2 does), and clean up again. O2's other passes
// (inlining, interprocedural and loop-unrolling passes, SLP) found nothing to do in these single-
// function loop nests, but cost two thirds of the time. Any change here must bump kPipelineTag.
constexpr char kPipelineTag[] =
    "pipeline 2: ecse,ic,scfg,loop(rotate,licm,indvars),lv,ic,scfg; zmm with avx512vbmi";
// Quick kernels: no optimization passes, and native code generation at CodeGenOptLevel::None.
constexpr char kQuickPipelineTag[] = "quick 1: no passes, codegen O0";

void Optimize(llvm::Module& module, llvm::TargetMachine& tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::FunctionPassManager fpm;
  fpm.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/false));
  fpm.addPass(llvm::InstCombinePass());
  fpm.addPass(llvm::SimplifyCFGPass());
  llvm::LoopPassManager lpm;
  lpm.addPass(llvm::LoopRotatePass());
  lpm.addPass(llvm::LICMPass(llvm::LICMOptions()));
  lpm.addPass(llvm::IndVarSimplifyPass());
  fpm.addPass(llvm::createFunctionToLoopPassAdaptor(std::move(lpm), /*UseMemorySSA=*/true));
  fpm.addPass(llvm::LoopVectorizePass());
  fpm.addPass(llvm::InstCombinePass());
  fpm.addPass(llvm::SimplifyCFGPass());
  if (PreferZmm()) {
    for (llvm::Function& f : module) {
      if (!f.isDeclaration()) f.addFnAttr("prefer-vector-width", "512");
    }
  }
  llvm::ModulePassManager mpm;
  mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
  mpm.run(module, mam);
}

// `kernel` as function `name` by the emitter for its kind: loop kernels; reduction kernels by the
// row/column emitter where it lays them out, else (dims apart, several inputs, bodies of several
// ops) by the region reduce emitter; a single reduce, scatter, sort (its comparator) or
// reduce_window (its scan's combiner).
absl::Status EmitKernel(const passes::Kernel& kernel, const std::string& name,
                        llvm::Module& module) {
  switch (kernel.kind) {
    case passes::KernelKind::kLoop:
      return EmitLoopKernel(kernel, name, module);
    case passes::KernelKind::kReduce:
      return LayOutReduceKernel(kernel).ok() ? EmitReduceKernel(kernel, name, module)
                                             : EmitRegionReduceKernel(kernel, name, module);
    case passes::KernelKind::kSingle:
      switch (kernel.root()->opcode()) {
        case ir::Opcode::kReduce: return EmitRegionReduceKernel(kernel, name, module);
        case ir::Opcode::kScatter: return EmitScatterKernel(kernel, name, module);
        case ir::Opcode::kSort: return EmitSortComparator(kernel, name, module);
        case ir::Opcode::kReduceWindow: return EmitScanCombiner(kernel, name, module);
        default: break;
      }
      break;
    default:
      break;
  }
  return absl::UnimplementedError(absl::StrCat(name, ": no emitter for this kernel"));
}

}  // namespace

// Milliseconds per phase of a compile, summed over threads.
struct PhaseTimes {
  double emit = 0, optimize = 0, codegen = 0, link = 0;
};

// Kernels are emitted round-robin into shards, each a module in a context of its own, so that
// the shards optimize and generate code on threads of their own: on a machine with several
// cores a program of many kernels compiles in a fraction of the time. Quick kernels have shards
// of their own (KernelTier::kQuick), with the quick twins of the tiered kernels. The optimized
// code of the kBackground and kTiered kernels has shards of its own too, filled in launch order
// (InOrder) and compiled in the background.
struct Shard {
  explicit Shard(KernelTier tier) : tier(tier) {}
  KernelTier tier;  // kOptimized or kQuick: how the module is compiled
  std::unique_ptr<llvm::LLVMContext> context = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> module =
      std::make_unique<llvm::Module>("ember_host_kernels", *context);
  std::vector<int> functions;        // indices into Impl::function_names
  std::vector<std::string> symbols;  // the functions' names in this module (same order)
};

// The background compile of one shard of a compiler's tiered kernels (one task on the
// background queue): its optimized module, and per function the code its kernels run (replaced
// once the shard is compiled) and its key in the CompiledKernelCache. It owns all it uses: the
// compiler may be destroyed first (then the code is no longer wanted, and a shard nobody runs is
// not compiled).
struct TieredShard {
  std::unique_ptr<Shard> shard;
  std::vector<std::shared_ptr<TieredCode>> code;  // per function of the shard
  std::vector<std::string> keys;                  // per function of the shard

  // Run or dropped (the process exits first), the kernels' code is settled.
  ~TieredShard() {
    Settle(absl::CancelledError(
        "its optimized code was never compiled (dropped at process exit)"));
  }
  // Settles the code not settled yet: it keeps its quick code, or has none for `why`.
  void Settle(const absl::Status& why) {
    for (const std::shared_ptr<TieredCode>& c : code) {
      if (c->settled.HasBeenNotified()) continue;
      c->failure = why;
      c->settled.Notify();
    }
  }
  void Run();
};

// Shards to compile in parallel: one per core, a few at most (each costs a target machine, a
// context and a JITDylib).
size_t MaxShards() {
  static const size_t n = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  return n;
}

// The shard of `shards` that a function goes to when `emitted` went before it: round robin over
// MaxShards() shards, made as they are first needed.
Shard* RoundRobin(std::vector<std::unique_ptr<Shard>>& shards, size_t emitted, KernelTier tier) {
  const size_t index = emitted % MaxShards();
  if (index >= shards.size()) shards.push_back(std::make_unique<Shard>(tier));
  return shards[index].get();
}

// The background shards of one kind take functions in the order they come (the order the
// program launches them), in chunks of 1, 1, 2, 2, 4, 4 and then 8 functions: the first
// launches wait for little code, compiled by several workers at once, and later functions share
// modules. The shard for a function when `emitted` went before it.
Shard* InOrder(std::vector<std::unique_ptr<Shard>>& shards, size_t emitted) {
  size_t chunk = 0, start = 0;
  while (true) {
    const size_t size = size_t{1} << std::min<size_t>(chunk / 2, 3);
    if (emitted < start + size) break;
    start += size;
    ++chunk;
  }
  while (shards.size() <= chunk) shards.push_back(std::make_unique<Shard>(KernelTier::kOptimized));
  return shards[chunk].get();
}

struct HostKernelCompiler::Impl {
  std::string cache_dir;  // the persistent cache ("" none)
  std::string dump_dir;   // where modules' IR is written ("" none)
  std::vector<std::unique_ptr<Shard>> shards;    // the optimized kernels' round-robin shards
  std::vector<std::unique_ptr<Shard>> quick_shards;  // the quick kernels' and quick twins'
  size_t quick_emitted = 0;                          // functions emitted into `quick_shards`
  // The optimized code of the kBackground and the kTiered functions (InOrder), compiled in the
  // background in that order: launches wait for the first.
  std::vector<std::unique_ptr<Shard>> background_shards, tiered_shards;
  size_t background_emitted = 0, tiered_emitted = 0;
  std::vector<std::shared_ptr<TieredCode>> tiered_code;  // per function (null: not tiered)
  int tiered = 0;                                        // kTiered functions
  int background = 0;                                    // kBackground functions
  std::unordered_map<std::string, int> by_text;  // tier and function text (name elided) ->
                                                 // function
  std::vector<std::string> function_names;
  size_t optimized_emitted = 0;  // functions emitted into `shards` (round robin)
  std::vector<int> function_of_kernel;
  std::vector<std::string> keys;  // per function: its CompiledKernelCache key
  // Functions another executable compiled (CompiledKernelCache): function -> its entry.
  std::unordered_map<int, CompiledKernelCache::Entry> reused;
  std::vector<void*> functions;
  std::shared_ptr<const void> code;  // the JITDylibs holding `functions`
  bool compiled = false;
  double ms = 0;
  PhaseTimes phases;
};

bool HostCodegenBuilt() { return true; }

HostKernelCompiler::HostKernelCompiler(std::string cache_dir, std::string dump_dir)
    : impl_(std::make_unique<Impl>()) {
  impl_->cache_dir = std::move(cache_dir);
  impl_->dump_dir = std::move(dump_dir);
}

HostKernelCompiler::~HostKernelCompiler() = default;

absl::StatusOr<int> HostKernelCompiler::AddKernel(const passes::Kernel& kernel, KernelTier tier) {
  if (impl_->compiled) return absl::FailedPreconditionError("kernels added after Compile");
  // f16 <-> f32 conversions without F16C would be library calls the JIT does not provide.
  if (!HostHasF16c() && UsesF16(kernel)) {
    return absl::UnimplementedError("f16 kernels need a CPU with F16C");
  }
  // With a persistent cache, the optimized code of a later process is a file read away; a dump
  // has every module's IR when the compile returns: no tiering with either.
  const bool background = tier == KernelTier::kTiered || tier == KernelTier::kBackground;
  if (background && (!impl_->cache_dir.empty() || !impl_->dump_dir.empty())) {
    tier = KernelTier::kOptimized;
  }
  const auto start = Clock::now();
  const size_t next = impl_->function_names.size();
  const std::string name = absl::StrCat("ember_loop_", next);
  Shard* target = nullptr;
  if (tier == KernelTier::kQuick) {
    target = RoundRobin(impl_->quick_shards, impl_->quick_emitted, KernelTier::kQuick);
  } else if (tier == KernelTier::kTiered) {
    target = InOrder(impl_->tiered_shards, impl_->tiered_emitted);
  } else if (tier == KernelTier::kBackground) {
    target = InOrder(impl_->background_shards, impl_->background_emitted);
  } else {
    target = RoundRobin(impl_->shards, impl_->optimized_emitted, KernelTier::kOptimized);
  }
  Shard& shard = *target;
  absl::Status emitted = EmitKernel(kernel, name, *shard.module);
  llvm::Function* fn = shard.module->getFunction(name);
  if (!emitted.ok()) {
    if (fn != nullptr) fn->eraseFromParent();
    return emitted;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  fn->print(os);
  os.flush();
  if (size_t at = text.find("@" + name + "("); at != std::string::npos) {
    text.erase(at + 1, name.size());
  }
  // (Attribute groups print as #N: their contents go into the key too.)
  // (A tiered kernel's key is its optimized code's: that is what the cache gets from it.)
  text.insert(0, absl::StrCat(tier == KernelTier::kQuick ? "quick\n" : "optimized\n",
                              fn->getAttributes().getAsString(llvm::AttributeList::FunctionIndex),
                              "\n"));
  text = KernelCacheKey(std::move(text));
  std::string by_text_key = tier == KernelTier::kTiered       ? absl::StrCat("tiered\n", text)
                            : tier == KernelTier::kBackground ? absl::StrCat("background\n", text)
                                                              : text;
  int function;
  if (auto it = impl_->by_text.find(by_text_key); it != impl_->by_text.end()) {
    fn->eraseFromParent();
    function = it->second;
  } else {
    function = static_cast<int>(impl_->function_names.size());
    if (std::optional<CompiledKernelCache::Entry> entry = CompiledKernelCache::Get().Find(text)) {
      // Compiled by another executable, and still held: nothing to compile.
      fn->eraseFromParent();
      impl_->reused.emplace(function, *std::move(entry));
    } else if (tier == KernelTier::kTiered) {
      // Its quick twin, compiled now with the quick kernels.
      const std::string twin = absl::StrCat(name, "_quick");
      Shard& quick = *RoundRobin(impl_->quick_shards, impl_->quick_emitted, KernelTier::kQuick);
      absl::Status twin_emitted = EmitKernel(kernel, twin, *quick.module);
      if (!twin_emitted.ok()) {
        if (llvm::Function* f = quick.module->getFunction(twin)) f->eraseFromParent();
        fn->eraseFromParent();
        return twin_emitted;
      }
      quick.functions.push_back(function);
      quick.symbols.push_back(twin);
      ++impl_->quick_emitted;
      ++impl_->tiered_emitted;
      ++impl_->tiered;
      shard.functions.push_back(function);
      shard.symbols.push_back(name);
    } else if (tier == KernelTier::kBackground) {
      ++impl_->background_emitted;
      ++impl_->background;
      shard.functions.push_back(function);
      shard.symbols.push_back(name);
    } else {
      ++(tier == KernelTier::kQuick ? impl_->quick_emitted : impl_->optimized_emitted);
      shard.functions.push_back(function);
      shard.symbols.push_back(name);
    }
    impl_->function_names.push_back(name);
    impl_->keys.push_back(text);
    impl_->tiered_code.push_back((tier == KernelTier::kTiered || tier == KernelTier::kBackground) &&
                                         !impl_->reused.contains(function)
                                     ? std::make_shared<TieredCode>()
                                     : nullptr);
    impl_->by_text.emplace(std::move(by_text_key), function);
  }
  impl_->function_of_kernel.push_back(function);
  const double ms = MsSince(start);
  impl_->ms += ms;
  impl_->phases.emit += ms;
  return static_cast<int>(impl_->function_of_kernel.size()) - 1;
}

namespace {

// The object code of `module` (optimized and compiled, or the persistent cache's copy when
// `cached` says so), for a thread of its own: nothing here is shared with other shards but the
// JIT's target machine pool and the cache directory.
// Writes `module`'s IR to `path` (a program dump, CompilerOptions::dump_to).
absl::Status DumpModule(const llvm::Module& module, const std::string& path) {
  std::error_code error;
  llvm::raw_fd_ostream os(path, error);
  if (error) {
    return absl::InternalError(absl::StrCat("cannot write the dump ", path, ": ", error.message()));
  }
  module.print(os, nullptr);
  return absl::OkStatus();
}

// `counted`: whether the compile counts in the cache's counters (not PrimeOptimizedCodeGenerator's,
// which compiles no kernel).
absl::StatusOr<std::string> CompileShard(llvm::Module& module, KernelTier tier, HostJit& jit,
                                         const std::string& cache_dir, const std::string& dump_dir,
                                         bool* cached, PhaseTimes* times, bool counted = true) {
  const bool quick = tier == KernelTier::kQuick;
  *cached = false;
  // LLVM aborts the process on invalid IR in codegen: verify first.
  std::string problems;
  llvm::raw_string_ostream problems_os(problems);
  if (llvm::verifyModule(module, &problems_os)) {
    problems_os.flush();
    return absl::InternalError(absl::StrCat("code generator: invalid LLVM IR: ", problems));
  }
  module.setDataLayout(jit.data_layout());
  module.setTargetTriple(jit.triple());
  // The persistent cache's key: the unoptimized IR, the host and LLVM (target_id), and the
  // pipeline below (its version tag changes whenever it does). Dumps are named by it too.
  std::string key;
  if (!cache_dir.empty() || !dump_dir.empty()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module.print(os, nullptr);
    os.flush();
    absl::StrAppend(&text, "\n; ", jit.target_id(), "; ", quick ? kQuickPipelineTag : kPipelineTag);
    const llvm::XXH128_hash_t hash = llvm::xxh3_128bits(
        llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
    key = absl::StrFormat("%016x%016x", hash.high64, hash.low64);
  }
  const std::string dump_path =
      dump_dir.empty() ? "" : absl::StrCat(dump_dir, "/ember-kernels-", key);
  if (!dump_path.empty()) {
    EMBER_RETURN_IF_ERROR(DumpModule(module, absl::StrCat(dump_path, ".ir-no-opt.ll")));
  }
  if (!cache_dir.empty()) {
    if (std::optional<std::string> object = ReadCachedKernels(cache_dir, key)) {
      *cached = true;
      return *std::move(object);
    }
  }
  auto start = Clock::now();
  EMBER_ASSIGN_OR_RETURN(HostJit::TargetMachinePtr tm, jit.AcquireTargetMachine());
  if (!quick) {
    Optimize(module, *tm);
    times->optimize += MsSince(start);
    if (!dump_path.empty()) {
      EMBER_RETURN_IF_ERROR(DumpModule(module, absl::StrCat(dump_path, ".ir-with-opt.ll")));
    }
  }
  start = Clock::now();
  llvm::SmallVector<char, 0> buffer;
  {
    // (The pooled target machines generate code at CodeGenOptLevel::Default: a quick module's
    // borrows None, and gives it back, with the fast instruction selector that level turns on.)
    const llvm::CodeGenOptLevel level = tm->getOptLevel();
    const bool fast_isel = tm->Options.EnableFastISel;
    const bool global_isel = tm->Options.EnableGlobalISel;
    if (quick) tm->setOptLevel(llvm::CodeGenOptLevel::None);
    llvm::raw_svector_ostream os(buffer);
    llvm::legacy::PassManager codegen;
    const bool cannot =
        tm->addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::ObjectFile);
    if (!cannot) codegen.run(module);
    tm->setOptLevel(level);
    tm->setFastISel(fast_isel);
    tm->setGlobalISel(global_isel);
    if (cannot) return absl::InternalError("LLVM: the host target cannot emit object files");
  }
  times->codegen += MsSince(start);
  if (counted) CountKernelCompile();
  std::string result(buffer.data(), buffer.size());
  if (!cache_dir.empty()) {
    // A cache that cannot be written only costs the next process a compile.
    WriteCachedKernels(cache_dir, key, result).IgnoreError();
  }
  return result;
}

// Constructs, on this thread and once per process, the function-local statics LLVM's optimizing
// code generator makes on first use (SelectionDAG's list of extended value types, among others),
// by compiling a small function at the background tier: an optimized, vectorized loop and
// arithmetic on a vector type that is no machine type. It runs before the first background task
// registers the queue's exit handler (background_compiler.h). Statics constructed after that
// registration are destroyed before the handler runs, so a background compile still running at
// exit read a destroyed SelectionDAG type list and crashed (a test binary crashed at exit in about
// one run of 25 under load).
void PrimeOptimizedCodeGenerator(HostJit& jit) {
  static std::once_flag primed;
  std::call_once(primed, [&jit] {
    llvm::LLVMContext context;
    llvm::Module module("ember_prime", context);
    llvm::Type* f32 = llvm::Type::getFloatTy(context);
    llvm::Type* i64 = llvm::Type::getInt64Ty(context);
    llvm::Type* ptr = llvm::PointerType::get(context, 0);
    llvm::Type* odd = llvm::FixedVectorType::get(llvm::Type::getIntNTy(context, 7), 5);
    llvm::Function* f = llvm::Function::Create(
        llvm::FunctionType::get(llvm::Type::getVoidTy(context), {ptr, ptr, i64}, false),
        llvm::Function::ExternalLinkage, "ember_prime", module);
    llvm::BasicBlock* entry = llvm::BasicBlock::Create(context, "entry", f);
    llvm::BasicBlock* loop = llvm::BasicBlock::Create(context, "loop", f);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(context, "done", f);
    llvm::IRBuilder<> b(entry);
    llvm::Value* n = f->getArg(2);
    llvm::Value* v = b.CreateLoad(odd, f->getArg(1));
    b.CreateStore(b.CreateMul(b.CreateAdd(v, v), v), f->getArg(1));
    b.CreateCondBr(b.CreateICmpSGT(n, b.getInt64(0)), loop, done);
    b.SetInsertPoint(loop);
    llvm::PHINode* i = b.CreatePHI(i64, 2);
    i->addIncoming(b.getInt64(0), entry);
    llvm::Value* at = b.CreateGEP(f32, f->getArg(0), i);
    llvm::Value* x = b.CreateLoad(f32, at);
    llvm::Value* y = b.CreateFAdd(b.CreateFMul(x, llvm::ConstantFP::get(f32, 2.0)),
                                  llvm::ConstantFP::get(f32, 1.0));
    b.CreateStore(b.CreateSelect(b.CreateFCmpOLT(y, x), x, y), at);
    llvm::Value* next = b.CreateAdd(i, b.getInt64(1));
    i->addIncoming(next, loop);
    b.CreateCondBr(b.CreateICmpSLT(next, n), loop, done);
    b.SetInsertPoint(done);
    b.CreateRetVoid();
    bool unused;
    PhaseTimes times;
    // (Its object is not loaded; a failure here fails the real compiles the same way.)
    CompileShard(module, KernelTier::kOptimized, jit, /*cache_dir=*/"", /*dump_dir=*/"", &unused,
                 &times, /*counted=*/false)
        .IgnoreError();
  });
}

}  // namespace

absl::Status HostKernelCompiler::Compile() {
  if (impl_->compiled || impl_->function_names.empty()) {
    impl_->compiled = true;
    return absl::OkStatus();
  }
  const auto start = Clock::now();
  EMBER_ASSIGN_OR_RETURN(HostJit * jit, HostJit::Get());
  const std::string& cache_dir = impl_->cache_dir;
  for (std::unique_ptr<Shard>& quick : impl_->quick_shards) impl_->shards.push_back(std::move(quick));
  impl_->quick_shards.clear();
  // Shards whose every function was found in the process-wide cache have nothing to compile.
  std::erase_if(impl_->shards, [](const std::unique_ptr<Shard>& s) { return s->functions.empty(); });
  // Every shard but the first on a thread of its own, the first on this one. The shards'
  // modules are independent (own contexts), and the threads end before anything is linked.
  const size_t n = impl_->shards.size();
  std::vector<absl::StatusOr<std::string>> objects(n, absl::UnknownError("not compiled"));
  std::unique_ptr<bool[]> cached(new bool[n]());
  std::vector<PhaseTimes> times(n);
  {
    std::vector<std::thread> threads;
    for (size_t i = 1; i < n; ++i) {
      threads.emplace_back([&, i] {
        objects[i] = CompileShard(*impl_->shards[i]->module, impl_->shards[i]->tier, *jit,
                                  cache_dir, impl_->dump_dir, &cached[i], &times[i]);
      });
    }
    if (n > 0) {
      objects[0] = CompileShard(*impl_->shards[0]->module, impl_->shards[0]->tier, *jit,
                                cache_dir, impl_->dump_dir, &cached[0], &times[0]);
    }
    for (std::thread& t : threads) t.join();
  }
  for (const PhaseTimes& t : times) {
    impl_->phases.optimize += t.optimize;
    impl_->phases.codegen += t.codegen;
  }
  const auto link_start = Clock::now();
  auto owners = std::make_shared<std::vector<std::shared_ptr<const void>>>();
  impl_->functions.assign(impl_->function_names.size(), nullptr);
  for (auto& [function, entry] : impl_->reused) {
    impl_->functions[function] = entry.address;
    owners->push_back(std::move(entry.owner));
  }
  for (size_t i = 0; i < n; ++i) {
    if (!objects[i].ok()) return objects[i].status();
    Shard& shard = *impl_->shards[i];
    const std::vector<std::string>& names = shard.symbols;
    std::vector<void*> addresses;
    absl::StatusOr<std::shared_ptr<const void>> code = jit->Load(*objects[i], names, addresses);
    if (!code.ok() && cached[i]) {
      // A cache entry that passed its checks but does not link (written by a different build,
      // say) is replaced by a fresh compile.
      bool unused;
      EMBER_ASSIGN_OR_RETURN(std::string object,
                             CompileShard(*shard.module, shard.tier, *jit, /*cache_dir=*/"",
                                          /*dump_dir=*/"", &unused, &impl_->phases));
      code = jit->Load(object, names, addresses);
    }
    if (!code.ok()) return code.status();
    for (size_t k = 0; k < names.size(); ++k) {
      const int f = shard.functions[k];
      impl_->functions[f] = addresses[k];
      if (const std::shared_ptr<TieredCode>& tiered = impl_->tiered_code[f]; tiered != nullptr) {
        tiered->fn.store(reinterpret_cast<HostLoopFn>(addresses[k]), std::memory_order_release);
        continue;  // a quick twin: the cache gets the optimized code
      }
      CompiledKernelCache::Get().Insert(impl_->keys[f], addresses[k], *code);
    }
    owners->push_back(*std::move(code));
  }
  impl_->code = std::shared_ptr<const void>(owners, owners.get());
  impl_->shards.clear();  // the modules and contexts
  if (!impl_->background_shards.empty() || !impl_->tiered_shards.empty()) {
    PrimeOptimizedCodeGenerator(*jit);
  }
  // A task per shard, the waited-for code first: the queue's workers compile them side by side,
  // in this order.
  for (auto* shards : {&impl_->background_shards, &impl_->tiered_shards}) {
    for (std::unique_ptr<Shard>& shard : *shards) {
      if (shard->functions.empty()) continue;
      auto task = std::make_shared<TieredShard>();
      for (int f : shard->functions) {
        task->code.push_back(impl_->tiered_code[f]);
        task->keys.push_back(impl_->keys[f]);
      }
      task->shard = std::move(shard);
      BackgroundCompiler::Get().Submit([task = std::move(task)] { task->Run(); });
    }
    shards->clear();
  }
  impl_->compiled = true;
  impl_->phases.link += MsSince(link_start);
  impl_->ms += MsSince(start);
  return absl::OkStatus();
}

void TieredShard::Run() {
  // Wanted while a kernel holds its code beside this task.
  const bool wanted =
      std::any_of(code.begin(), code.end(), [](const auto& c) { return c.use_count() > 1; });
  if (!wanted) return;
  absl::StatusOr<HostJit*> jit = HostJit::Get();
  if (!jit.ok()) {
    Settle(jit.status());
    return;
  }
  bool unused;
  PhaseTimes times;
  absl::StatusOr<std::string> object =
      CompileShard(*shard->module, KernelTier::kOptimized, **jit, /*cache_dir=*/"",
                   /*dump_dir=*/"", &unused, &times);
  std::vector<void*> addresses;
  absl::StatusOr<std::shared_ptr<const void>> loaded =
      object.ok() ? (*jit)->Load(*object, shard->symbols, addresses) : object.status();
  shard.reset();  // the module and its context
  if (!loaded.ok()) {
    // The quick code stays (it computes the same); a kernel without one fails its launches.
    Settle(absl::Status(loaded.status().code(),
                        absl::StrCat("the background compile of its optimized code failed: ",
                                     loaded.status().message())));
    return;
  }
  for (size_t k = 0; k < addresses.size(); ++k) {
    code[k]->optimized_owner = *loaded;
    code[k]->fn.store(reinterpret_cast<HostLoopFn>(addresses[k]), std::memory_order_release);
    code[k]->settled.Notify();
    CompiledKernelCache::Get().Insert(keys[k], addresses[k], *loaded);
  }
}

HostLoopKernel HostKernelCompiler::Get(int id) const {
  if (!impl_->compiled || id < 0 || static_cast<size_t>(id) >= impl_->function_of_kernel.size() ||
      impl_->functions.empty()) {
    return {};
  }
  const int f = impl_->function_of_kernel[id];
  return HostLoopKernel{reinterpret_cast<HostLoopFn>(impl_->functions[f]), impl_->code,
                        impl_->tiered_code[f]};
}

void HostKernelCompiler::WaitForOptimizedCode() const {
  if (impl_->tiered + impl_->background > 0) BackgroundCompiler::Get().WaitIdle();
}

int HostKernelCompiler::tiered_kernels() const { return impl_->tiered; }
int HostKernelCompiler::background_kernels() const { return impl_->background; }

int HostKernelCompiler::kernels() const {
  return static_cast<int>(impl_->function_of_kernel.size());
}
int HostKernelCompiler::unique_kernels() const {
  return static_cast<int>(impl_->function_names.size());
}
int HostKernelCompiler::reused_kernels() const { return static_cast<int>(impl_->reused.size()); }
double HostKernelCompiler::compile_ms() const { return impl_->ms; }
std::string HostKernelCompiler::phase_report() const {
  const PhaseTimes& t = impl_->phases;
  return absl::StrFormat("emit %.1f, optimize %.1f, codegen %.1f, link %.1f ms", t.emit,
                         t.optimize, t.codegen, t.link);
}

}  // namespace ember::codegen
