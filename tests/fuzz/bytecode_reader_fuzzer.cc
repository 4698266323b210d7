// libFuzzer target: MLIR bytecode (the StableHLO portable artifacts JAX sends) through the
// reader, the importer and the verifier.
#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"
#include "compiler/frontend/bytecode_reader.h"
#include "tests/fuzz/fuzz_program.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ember::fuzz::ImportAndVerify(
      ember::frontend::ReadMlirBytecode(absl::Span<const uint8_t>(data, size)));
  return 0;
}
