// Turns a parsed PTX module into executable kernel programs: every instruction is checked
// (opcode, modifiers, operand types, state spaces) and bound to its handler. This is where
// "unknown instruction" and every other load-time error is raised, with the line it is on.
#ifndef EMBER_TESTS_VIRTUAL_GPU_PTX_PTX_COMPILER_H_
#define EMBER_TESTS_VIRTUAL_GPU_PTX_PTX_COMPILER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "tests/virtual_gpu/ptx/ptx_ast.h"
#include "tests/virtual_gpu/ptx/ptx_program.h"

namespace ember::vgpu::ptx {

// NotFound when `module` has no kernel (.entry) named `kernel`; InvalidArgument "line N: ..."
// for anything the interpreter cannot run faithfully.
absl::StatusOr<std::unique_ptr<KernelProgram>> CompileKernel(const Module& module,
                                                             const std::string& kernel);

}  // namespace ember::vgpu::ptx

#endif  // EMBER_TESTS_VIRTUAL_GPU_PTX_PTX_COMPILER_H_
