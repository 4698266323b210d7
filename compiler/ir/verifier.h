// Checks an ir::Module against the StableHLO specification's constraints: operand and result
// counts, element types, shapes inferred and compared, dimension-number ranges, region
// signatures. Errors name the op, its location and the broken constraint, e.g.
// "stablehlo.dot_general at model.py:41:7: lhs_contracting_dimensions[0] = 2 is out of range
// for rank 2".
#ifndef EMBER_COMPILER_IR_VERIFIER_H_
#define EMBER_COMPILER_IR_VERIFIER_H_

#include "absl/status/status.h"
#include "compiler/ir/module.h"

namespace ember::ir {

// The whole module: every computation, every instruction (the first error found).
absl::Status Verify(const Module& module);

// One instruction alone (its regions' signatures included, not their bodies).
absl::Status VerifyInstruction(const Instruction& instruction);

}  // namespace ember::ir

#endif  // EMBER_COMPILER_IR_VERIFIER_H_
