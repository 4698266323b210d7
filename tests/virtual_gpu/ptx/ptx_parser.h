// Parses PTX text (what cuModuleLoadData receives) into a Module. Errors name the line and what
// was expected; instruction semantics are not checked here (see ptx_compiler.h).
#ifndef EMBER_TESTS_VIRTUAL_GPU_PTX_PTX_PARSER_H_
#define EMBER_TESTS_VIRTUAL_GPU_PTX_PTX_PARSER_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "tests/virtual_gpu/ptx/ptx_ast.h"

namespace ember::vgpu::ptx {

absl::StatusOr<Module> ParseModule(std::string_view text);

}  // namespace ember::vgpu::ptx

#endif  // EMBER_TESTS_VIRTUAL_GPU_PTX_PTX_PARSER_H_
