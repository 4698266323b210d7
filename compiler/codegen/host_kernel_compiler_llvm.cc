// HostKernelCompiler with LLVM: emission into one module, a lean optimization pipeline for the
// host CPU, native code generation to an object file (or the persistent cache's copy of it), and
// the process-wide JIT (host_jit.h) that links it into a JITDylib of its own.
#include <chrono>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/codegen/host_jit.h"
#include "compiler/codegen/host_kernel_compiler.h"
#include "compiler/codegen/kernel_disk_cache.h"
#include "compiler/codegen/loop_emitter.h"
#include "compiler/codegen/reduce_emitter.h"
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

// The optimizations these kernels need, at a third of O2's cost: clean up the emitted code,
// put the loops in the shape the vectorizer wants (rotated, invariants hoisted, canonical
// induction variables), vectorize the innermost loops for the host's vector width (with
// interleaving and a vectorized remainder, as O2 does), and clean up again. O2's other passes
// (inlining, interprocedural and loop-unrolling passes, SLP) found nothing to do in these single-
// function loop nests, but cost two thirds of the time. Any change here must bump kPipelineTag.
constexpr char kPipelineTag[] = "pipeline 1: ecse,ic,scfg,loop(rotate,licm,indvars),lv,ic,scfg";

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
  llvm::ModulePassManager mpm;
  mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
  mpm.run(module, mam);
}

}  // namespace

struct HostKernelCompiler::Impl {
  std::unique_ptr<llvm::LLVMContext> context = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> module =
      std::make_unique<llvm::Module>("ember_host_kernels", *context);
  std::unordered_map<std::string, int> by_text;  // function text (name elided) -> function
  std::vector<std::string> function_names;
  std::vector<int> function_of_kernel;
  std::vector<void*> functions;
  std::shared_ptr<const void> code;  // the JITDylib holding `functions`
  bool compiled = false;
  double ms = 0;
};

bool HostCodegenBuilt() { return true; }

HostKernelCompiler::HostKernelCompiler() : impl_(std::make_unique<Impl>()) {}

HostKernelCompiler::~HostKernelCompiler() = default;

absl::StatusOr<int> HostKernelCompiler::AddKernel(const passes::Kernel& kernel) {
  if (impl_->compiled) return absl::FailedPreconditionError("kernels added after Compile");
  // f16 <-> f32 conversions without F16C would be library calls the JIT does not provide.
  if (!HostHasF16c() && UsesF16(kernel)) {
    return absl::UnimplementedError("f16 kernels need a CPU with F16C");
  }
  const auto start = Clock::now();
  const std::string name = absl::StrCat("ember_loop_", impl_->function_names.size());
  absl::Status emitted = kernel.kind == passes::KernelKind::kReduce
                             ? EmitReduceKernel(kernel, name, *impl_->module)
                             : EmitLoopKernel(kernel, name, *impl_->module);
  llvm::Function* fn = impl_->module->getFunction(name);
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
  int function;
  if (auto it = impl_->by_text.find(text); it != impl_->by_text.end()) {
    fn->eraseFromParent();
    function = it->second;
  } else {
    function = static_cast<int>(impl_->function_names.size());
    impl_->function_names.push_back(name);
    impl_->by_text.emplace(std::move(text), function);
  }
  impl_->function_of_kernel.push_back(function);
  impl_->ms += MsSince(start);
  return static_cast<int>(impl_->function_of_kernel.size()) - 1;
}

absl::Status HostKernelCompiler::Compile() {
  if (impl_->compiled || impl_->function_names.empty()) {
    impl_->compiled = true;
    return absl::OkStatus();
  }
  const auto start = Clock::now();
  // LLVM aborts the process on invalid IR in codegen: verify first.
  std::string problems;
  llvm::raw_string_ostream problems_os(problems);
  if (llvm::verifyModule(*impl_->module, &problems_os)) {
    problems_os.flush();
    return absl::InternalError(absl::StrCat("code generator: invalid LLVM IR: ", problems));
  }
  EMBER_ASSIGN_OR_RETURN(HostJit * jit, HostJit::Get());
  llvm::Module& module = *impl_->module;
  module.setDataLayout(jit->data_layout());
  module.setTargetTriple(jit->triple());

  // The persistent cache's key: the unoptimized IR, the host and LLVM (target_id), and the
  // pipeline below (its version tag changes whenever it does).
  const std::string cache_dir = KernelCacheDir();
  std::string key;
  std::optional<std::string> object;
  if (!cache_dir.empty()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module.print(os, nullptr);
    os.flush();
    absl::StrAppend(&text, "\n; ", jit->target_id(), "; ", kPipelineTag);
    const llvm::XXH128_hash_t hash = llvm::xxh3_128bits(
        llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
    key = absl::StrFormat("%016x%016x", hash.high64, hash.low64);
    object = ReadCachedKernels(cache_dir, key);
  }
  // Optimizes and compiles the module (once: the passes change it).
  auto compile = [&]() -> absl::StatusOr<std::string> {
    EMBER_ASSIGN_OR_RETURN(HostJit::TargetMachinePtr tm, jit->AcquireTargetMachine());
    Optimize(module, *tm);
    llvm::SmallVector<char, 0> buffer;
    {
      llvm::raw_svector_ostream os(buffer);
      llvm::legacy::PassManager codegen;
      if (tm->addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::ObjectFile)) {
        return absl::InternalError("LLVM: the host target cannot emit object files");
      }
      codegen.run(module);
    }
    CountKernelCompile();
    std::string result(buffer.data(), buffer.size());
    if (!cache_dir.empty()) {
      // A cache that cannot be written only costs the next process a compile.
      WriteCachedKernels(cache_dir, key, result).IgnoreError();
    }
    return result;
  };
  if (object.has_value()) {
    absl::StatusOr<std::shared_ptr<const void>> code =
        jit->Load(*object, impl_->function_names, impl_->functions);
    // An entry that passed its checks but does not link (written by a different build, say)
    // is replaced by a fresh compile.
    if (code.ok()) impl_->code = *std::move(code);
  }
  if (impl_->code == nullptr) {
    EMBER_ASSIGN_OR_RETURN(std::string compiled, compile());
    EMBER_ASSIGN_OR_RETURN(impl_->code,
                           jit->Load(compiled, impl_->function_names, impl_->functions));
  }
  impl_->module.reset();
  impl_->context.reset();
  impl_->compiled = true;
  impl_->ms += MsSince(start);
  return absl::OkStatus();
}

HostLoopKernel HostKernelCompiler::Get(int id) const {
  if (!impl_->compiled || id < 0 || static_cast<size_t>(id) >= impl_->function_of_kernel.size() ||
      impl_->functions.empty()) {
    return {};
  }
  return HostLoopKernel{
      reinterpret_cast<HostLoopFn>(impl_->functions[impl_->function_of_kernel[id]]), impl_->code};
}

int HostKernelCompiler::kernels() const {
  return static_cast<int>(impl_->function_of_kernel.size());
}
int HostKernelCompiler::unique_kernels() const {
  return static_cast<int>(impl_->function_names.size());
}
double HostKernelCompiler::compile_ms() const { return impl_->ms; }

}  // namespace ember::codegen
