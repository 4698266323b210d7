// HostKernelCompiler in a build without LLVM (EMBER_LLVM=OFF or llvm-19-dev absent): the host
// backend then runs every kernel the fusion plan would have fused through the evaluator's op table.
#include "compiler/codegen/host_kernel_compiler.h"

namespace ember::codegen {

struct HostKernelCompiler::Impl {};

bool HostCodegenBuilt() { return false; }
HostKernelCompiler::HostKernelCompiler(std::string, std::string) {}
HostKernelCompiler::~HostKernelCompiler() = default;
absl::StatusOr<int> HostKernelCompiler::AddKernel(const passes::Kernel&, KernelTier) {
  return absl::UnimplementedError("Ember was built without the LLVM code generator");
}
absl::Status HostKernelCompiler::Compile() { return absl::OkStatus(); }
HostLoopKernel HostKernelCompiler::Get(int) const { return {}; }
void HostKernelCompiler::WaitForOptimizedCode() const {}
int HostKernelCompiler::kernels() const { return 0; }
int HostKernelCompiler::tiered_kernels() const { return 0; }
int HostKernelCompiler::background_kernels() const { return 0; }
int HostKernelCompiler::unique_kernels() const { return 0; }
int HostKernelCompiler::reused_kernels() const { return 0; }
double HostKernelCompiler::compile_ms() const { return 0; }
std::string HostKernelCompiler::phase_report() const { return ""; }

}  // namespace ember::codegen
