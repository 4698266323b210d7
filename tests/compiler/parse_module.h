// Test helpers shared by the compiler tests: MLIR text -> imported, verified ir::Module (failures
// are reported as test failures, with the status, and give null); ops of one kind counted.
#ifndef EMBER_TESTS_COMPILER_PARSE_MODULE_H_
#define EMBER_TESTS_COMPILER_PARSE_MODULE_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "compiler/frontend/import/import.h"
#include "compiler/frontend/text/mlir_text_parser.h"
#include "compiler/ir/verifier.h"

namespace ember::test_util {

inline std::unique_ptr<ir::Module> Parse(const std::string& text) {
  auto tree = frontend::ParseMlirText(text, "test.mlir");
  EXPECT_TRUE(tree.ok()) << tree.status() << "\n" << text;
  if (!tree.ok()) return nullptr;
  auto module = frontend::ImportModule(**tree);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return nullptr;
  const absl::Status verified = ir::Verify(**module);
  EXPECT_TRUE(verified.ok()) << verified << "\n" << text;
  return *std::move(module);
}

// How many instructions of `c` (not of its regions) are `op`.
inline int CountOps(const ir::Computation& c, ir::Opcode op) {
  int n = 0;
  for (const auto& inst : c.instructions()) n += inst->opcode() == op;
  return n;
}

}  // namespace ember::test_util

#endif  // EMBER_TESTS_COMPILER_PARSE_MODULE_H_
