// HostKernelCompiler with LLVM: emission into one module, the O2 pipeline for the host CPU, and
// ORC's LLJIT. The only file that includes LLJIT (a slow header to compile).
#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/codegen/host_kernel_compiler.h"
#include "compiler/codegen/loop_emitter.h"
#include "compiler/codegen/reduce_emitter.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

namespace ember::codegen {
namespace {

absl::Status ToStatus(llvm::Error error, const char* what) {
  if (!error) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("LLVM ", what, ": ", llvm::toString(std::move(error))));
}

void InitializeLlvmOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
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

}  // namespace

struct HostKernelCompiler::Impl {
  std::unique_ptr<llvm::LLVMContext> context = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> module =
      std::make_unique<llvm::Module>("ember_host_kernels", *context);
  std::unordered_map<std::string, int> by_text;  // function text (name elided) -> function
  std::vector<std::string> function_names;
  std::vector<int> function_of_kernel;
  std::vector<HostLoopFn> functions;
  std::shared_ptr<llvm::orc::LLJIT> jit;
  bool host_has_f16c = false;
  bool compiled = false;
  double ms = 0;
};

bool HostCodegenBuilt() { return true; }

HostKernelCompiler::HostKernelCompiler() : impl_(std::make_unique<Impl>()) {
  InitializeLlvmOnce();
  impl_->host_has_f16c = llvm::sys::getHostCPUFeatures().lookup("f16c");
}

HostKernelCompiler::~HostKernelCompiler() = default;

absl::StatusOr<int> HostKernelCompiler::AddLoopKernel(const passes::Kernel& kernel) {
  if (impl_->compiled) return absl::FailedPreconditionError("kernels added after Compile");
  // f16 <-> f32 conversions without F16C would be library calls the JIT does not provide.
  if (!impl_->host_has_f16c && UsesF16(kernel)) {
    return absl::UnimplementedError("f16 kernels need a CPU with F16C");
  }
  const auto start = std::chrono::steady_clock::now();
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
  impl_->ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                   .count();
  return static_cast<int>(impl_->function_of_kernel.size()) - 1;
}

absl::Status HostKernelCompiler::Compile() {
  if (impl_->compiled || impl_->function_names.empty()) {
    impl_->compiled = true;
    return absl::OkStatus();
  }
  const auto start = std::chrono::steady_clock::now();
  // LLVM aborts the process on invalid IR in codegen: verify first.
  std::string problems;
  llvm::raw_string_ostream problems_os(problems);
  if (llvm::verifyModule(*impl_->module, &problems_os)) {
    problems_os.flush();
    return absl::InternalError(absl::StrCat("code generator: invalid LLVM IR: ", problems));
  }
  llvm::Expected<llvm::orc::JITTargetMachineBuilder> jtmb =
      llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) return ToStatus(jtmb.takeError(), "host detection");
  jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> tm = jtmb->createTargetMachine();
  if (!tm) return ToStatus(tm.takeError(), "target machine");
  impl_->module->setDataLayout((*tm)->createDataLayout());
  impl_->module->setTargetTriple((*tm)->getTargetTriple().str());
  {
    // The O2 pipeline with the target's cost model: the loops vectorize to its vector width.
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(tm->get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
    mpm.run(*impl_->module, mam);
  }
  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> jit =
      llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).create();
  if (!jit) return ToStatus(jit.takeError(), "JIT creation");
  std::shared_ptr<llvm::orc::LLJIT> owner(std::move(*jit));
  // libm (fmodf, ...) from the process; the plugin's own symbols are hidden and never needed.
  llvm::Expected<std::unique_ptr<llvm::orc::DynamicLibrarySearchGenerator>> process =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
          owner->getDataLayout().getGlobalPrefix());
  if (!process) return ToStatus(process.takeError(), "process symbols");
  owner->getMainJITDylib().addGenerator(std::move(*process));
  EMBER_RETURN_IF_ERROR(ToStatus(
      owner->addIRModule(llvm::orc::ThreadSafeModule(std::move(impl_->module),
                                                     std::move(impl_->context))),
      "adding the module"));
  for (const std::string& name : impl_->function_names) {
    llvm::Expected<llvm::orc::ExecutorAddr> address = owner->lookup(name);
    if (!address) return ToStatus(address.takeError(), "symbol lookup");
    impl_->functions.push_back(address->toPtr<HostLoopFn>());
  }
  impl_->jit = std::move(owner);
  impl_->compiled = true;
  impl_->ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                   .count();
  return absl::OkStatus();
}

HostLoopKernel HostKernelCompiler::Get(int id) const {
  if (!impl_->compiled || id < 0 || static_cast<size_t>(id) >= impl_->function_of_kernel.size() ||
      impl_->functions.empty()) {
    return {};
  }
  return HostLoopKernel{impl_->functions[impl_->function_of_kernel[id]], impl_->jit};
}

int HostKernelCompiler::kernels() const {
  return static_cast<int>(impl_->function_of_kernel.size());
}
int HostKernelCompiler::unique_kernels() const {
  return static_cast<int>(impl_->function_names.size());
}
double HostKernelCompiler::compile_ms() const { return impl_->ms; }

}  // namespace ember::codegen
