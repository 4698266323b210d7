// Internal to compiler/host: what the library thunks (linalg_thunk.h, decomposition_thunk.h,
// fft_thunk.h) read of an op before they take it: a custom call's target and the boolean entries
// of its backend_config dictionary, and whether a value is a dense row-major array.
#ifndef EMBER_COMPILER_HOST_OP_ATTRIBUTES_H_
#define EMBER_COMPILER_HOST_OP_ATTRIBUTES_H_

#include <optional>
#include <string>

#include "compiler/ir/module.h"

namespace ember::host {

// The custom call's target: "" for other ops, and for a target that is not a string.
std::string CustomCallTarget(const ir::Instruction& instruction);

// The boolean entry `key` of a custom call's backend_config dictionary (mhlo.backend_config where
// backend_config is not a dictionary), a bool or an integer as producers write it: `fallback`
// when absent, nullopt when it is something else (the thunk then refuses the op, and the
// evaluator's op table, which stays the oracle, reports it).
std::optional<bool> BackendConfigFlag(const ir::Instruction& instruction, const char* key,
                                      bool fallback);

// A static array dense in C order (the layout the library kernels index by).
bool IsRowMajor(const ir::ValueType& type);

}  // namespace ember::host

#endif  // EMBER_COMPILER_HOST_OP_ATTRIBUTES_H_
