// What both fuzz targets do with a parsed tree: import it and verify it, as PJRT_Client_Compile
// does. Any outcome is fine except a crash, a hang, a leak or a sanitizer report.
#ifndef EMBER_TESTS_FUZZ_FUZZ_PROGRAM_H_
#define EMBER_TESTS_FUZZ_FUZZ_PROGRAM_H_

#include <memory>

#include "absl/status/statusor.h"
#include "compiler/frontend/import/import.h"
#include "compiler/frontend/mlir_ast.h"
#include "compiler/ir/verifier.h"

namespace ember::fuzz {

inline void ImportAndVerify(const absl::StatusOr<std::unique_ptr<frontend::Operation>>& tree) {
  if (!tree.ok()) return;
  absl::StatusOr<std::unique_ptr<ir::Module>> module = frontend::ImportModule(**tree);
  if (!module.ok()) return;
  (void)ir::Verify(**module);
  (void)(*module)->ToString();
}

}  // namespace ember::fuzz

#endif  // EMBER_TESTS_FUZZ_FUZZ_PROGRAM_H_
