// A loaded PTX image: the parsed module and every kernel compiled for the interpreter. Images are
// cached by their text, so loading the same PTX again (every test that builds a client loads the
// same kernels) costs a lookup, not a parse.
#ifndef EMBER_TESTS_VIRTUAL_GPU_DRIVER_MODULE_IMAGE_H_
#define EMBER_TESTS_VIRTUAL_GPU_DRIVER_MODULE_IMAGE_H_

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "tests/virtual_gpu/ptx/ptx_ast.h"
#include "tests/virtual_gpu/ptx/ptx_program.h"

namespace ember::vgpu {

struct ModuleImage {
  std::string text;
  ptx::Module ast;
  std::map<std::string, std::shared_ptr<const ptx::KernelProgram>> kernels;
  int target_sm = 0;            // 80 for sm_80 (and sm_80a)
  bool arch_specific = false;   // sm_90a: runs on sm_90 only
  int ptx_version = 0;          // major * 10 + minor
};

// Parses and compiles `text` (or returns the cached result). InvalidArgument "line N: ..." for
// PTX the virtual GPU cannot run; the message starts with the kernel's name when the error is
// inside one.
absl::StatusOr<std::shared_ptr<const ModuleImage>> LoadModuleImage(const std::string& text);

}  // namespace ember::vgpu

#endif  // EMBER_TESTS_VIRTUAL_GPU_DRIVER_MODULE_IMAGE_H_
