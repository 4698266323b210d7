// HostJit: the LLJIT shared by every executable (host_jit.h). It links object files the host
// kernel compiler produced itself (so that it can time, cache and reuse them), one JITDylib each.
#include "compiler/codegen/host_jit.h"

#include <atomic>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

// The compiler runtime's complex multiplication and division (libgcc), which kernels over
// complex numbers call (elemental_complex.cc). They are not looked up in the process: where the
// plugin was opened with local symbols (Python's extension modules are), its libgcc_s is not in
// the global scope that the JIT searches, so the JIT is given this library's own addresses.
extern "C" {
__complex__ double __muldc3(double, double, double, double);
__complex__ double __divdc3(double, double, double, double);
}

namespace ember::codegen {
namespace {

absl::Status ToStatus(llvm::Error error, const char* what) {
  if (!error) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("LLVM ", what, ": ", llvm::toString(std::move(error))));
}

}  // namespace

struct HostJit::State {
  explicit State(llvm::orc::JITTargetMachineBuilder builder) : jtmb(std::move(builder)) {}
  llvm::orc::JITTargetMachineBuilder jtmb;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::unique_ptr<llvm::DataLayout> data_layout;
  std::atomic<uint64_t> next_dylib{0};
  std::mutex pool_mutex;
  std::vector<std::unique_ptr<llvm::TargetMachine>> pool;  // idle target machines
};

HostJit::HostJit(std::unique_ptr<State> state) : state_(std::move(state)) {}

const llvm::DataLayout& HostJit::data_layout() const { return *state_->data_layout; }

absl::StatusOr<HostJit*> HostJit::Get() {
  // Never destroyed: executables may release their kernels during static destruction.
  static absl::StatusOr<HostJit*>* const jit = [] {
    auto make = []() -> absl::StatusOr<HostJit*> {
      llvm::InitializeNativeTarget();
      llvm::InitializeNativeTargetAsmPrinter();
      {
        // Loop strength reduction was a third of native code generation time (it rewrites the
        // vectorized loops' addressing), and turning it off did not slow any benchmarked kernel.
        // Codegen options exist only as LLVM command-line options; this LLVM is linked into
        // the plugin alone, so they change nobody else's.
        const char* args[] = {"ember", "-disable-lsr"};
        std::string errors;
        llvm::raw_string_ostream os(errors);
        if (!llvm::cl::ParseCommandLineOptions(2, args, "", &os)) {
          return absl::InternalError(absl::StrCat("LLVM options: ", errors));
        }
      }
      llvm::Expected<llvm::orc::JITTargetMachineBuilder> jtmb =
          llvm::orc::JITTargetMachineBuilder::detectHost();
      if (!jtmb) return ToStatus(jtmb.takeError(), "host detection");
      // Less was no faster than Default for these kernels (instruction selection and register
      // allocation dominate either way).
      jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
      auto state = std::make_unique<State>(*jtmb);
      // No platform: the kernels have no initializers, and its set-up code costs time per dylib.
      llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> lljit =
          llvm::orc::LLJITBuilder()
              .setJITTargetMachineBuilder(*jtmb)
              .setPlatformSetUp(llvm::orc::setUpInactivePlatform)
              .create();
      if (!lljit) return ToStatus(lljit.takeError(), "JIT creation");
      state->jit = std::move(*lljit);
      {
        llvm::orc::LLJIT& jit = *state->jit;
        const llvm::JITSymbolFlags flags =
            llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable;
        llvm::orc::SymbolMap runtime;
        runtime[jit.mangleAndIntern("__muldc3")] = {
            llvm::orc::ExecutorAddr::fromPtr(&__muldc3), flags};
        runtime[jit.mangleAndIntern("__divdc3")] = {
            llvm::orc::ExecutorAddr::fromPtr(&__divdc3), flags};
        llvm::orc::JITDylibSP process = jit.getProcessSymbolsJITDylib();
        if (process == nullptr) return absl::InternalError("LLVM JIT: no process symbols dylib");
        if (absl::Status defined = ToStatus(
                process->define(llvm::orc::absoluteSymbols(std::move(runtime))),
                "compiler runtime symbols");
            !defined.ok()) {
          return defined;
        }
      }
      state->data_layout = std::make_unique<llvm::DataLayout>(state->jit->getDataLayout());
      std::string features;
      for (const std::string& f : jtmb->getFeatures().getFeatures()) {
        absl::StrAppend(&features, f, ",");
      }
      auto* result = new HostJit(std::move(state));
      result->triple_ = jtmb->getTargetTriple().str();
      result->target_id_ = absl::StrCat("llvm ", LLVM_VERSION_STRING, "; ", result->triple_, "; ",
                                        jtmb->getCPU(), "; ", features);
      return result;
    };
    return new absl::StatusOr<HostJit*>(make());
  }();
  return *jit;
}

absl::StatusOr<HostJit::TargetMachinePtr> HostJit::AcquireTargetMachine() {
  auto release = [](llvm::TargetMachine* tm) {
    HostJit* jit = *Get();  // a target machine exists only when Get() succeeded
    std::lock_guard<std::mutex> lock(jit->state_->pool_mutex);
    jit->state_->pool.emplace_back(tm);
  };
  {
    std::lock_guard<std::mutex> lock(state_->pool_mutex);
    if (!state_->pool.empty()) {
      llvm::TargetMachine* tm = state_->pool.back().release();
      state_->pool.pop_back();
      return TargetMachinePtr(tm, release);
    }
  }
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> tm = state_->jtmb.createTargetMachine();
  if (!tm) return ToStatus(tm.takeError(), "target machine");
  return TargetMachinePtr(tm->release(), release);
}

absl::StatusOr<std::shared_ptr<const void>> HostJit::Load(std::string_view object,
                                                          const std::vector<std::string>& names,
                                                          std::vector<void*>& addresses) {
  llvm::orc::LLJIT& jit = *state_->jit;
  llvm::orc::ExecutionSession& session = jit.getExecutionSession();
  const std::string dylib_name = absl::StrCat("ember_kernels_", state_->next_dylib++);
  llvm::Expected<llvm::orc::JITDylib&> dylib = jit.createJITDylib(dylib_name);
  if (!dylib) return ToStatus(dylib.takeError(), "JITDylib creation");
  llvm::orc::JITDylib* jd = &*dylib;
  // From here on the dylib goes away with the owner, also when linking fails.
  std::shared_ptr<const void> owner(jd, [&session](const void* p) {
    auto* jd = const_cast<llvm::orc::JITDylib*>(static_cast<const llvm::orc::JITDylib*>(p));
    llvm::consumeError(session.removeJITDylib(*jd));
  });
  std::unique_ptr<llvm::MemoryBuffer> buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(object.data(), object.size()), dylib_name);
  if (absl::Status added = ToStatus(jit.addObjectFile(*jd, std::move(buffer)), "adding kernels");
      !added.ok()) {
    return added;
  }
  llvm::orc::SymbolLookupSet lookup;
  std::vector<llvm::orc::SymbolStringPtr> interned;
  interned.reserve(names.size());
  for (const std::string& name : names) {
    interned.push_back(jit.mangleAndIntern(name));
    lookup.add(interned.back());
  }
  // One lookup for all kernels: a lookup per name would materialize in several rounds.
  llvm::Expected<llvm::orc::SymbolMap> symbols =
      session.lookup(llvm::orc::makeJITDylibSearchOrder(jd), std::move(lookup));
  if (!symbols) return ToStatus(symbols.takeError(), "linking kernels");
  addresses.clear();
  for (const llvm::orc::SymbolStringPtr& name : interned) {
    auto it = symbols->find(name);
    if (it == symbols->end()) {
      return absl::InternalError(absl::StrCat("LLVM linking kernels: no symbol ", (*name).str()));
    }
    addresses.push_back(it->second.getAddress().toPtr<void*>());
  }
  return owner;
}

}  // namespace ember::codegen
