// libFuzzer target: MLIR text (generic and pretty forms) through the parser, the importer and
// the verifier.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "compiler/frontend/text/mlir_text_parser.h"
#include "tests/fuzz/fuzz_program.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ember::fuzz::ImportAndVerify(ember::frontend::ParseMlirText(text, "<fuzz>"));
  return 0;
}
