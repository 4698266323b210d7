// ember-opt FILE [--no-verify]: reads a program in any format Ember accepts (MLIR text .mlir,
// MLIR bytecode / StableHLO portable artifact .mlirbc/.bc; a binary xla.HloModuleProto .pb /
// .hlo.pb, as jax's as_serialized_hlo_module_proto() and TensorFlow write it) and
// prints the imported module in Ember's readable form, then the verifier's verdict. Replays the
// files written by EMBER_FLAGS=--dump_to=DIR.
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "compiler/driver/compile_program.h"
#include "compiler/ir/verifier.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: ember-opt FILE [--no-verify]\n";
    return 2;
  }
  const std::string path = argv[1];
  const bool verify = !(argc > 2 && std::string(argv[2]) == "--no-verify");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "ember-opt: cannot read " << path << "\n";
    return 1;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const bool is_hlo = path.size() > 3 && path.substr(path.size() - 3) == ".pb";
  auto module = ember::compiler::ReadProgram(is_hlo ? "hlo" : "mlir", bytes);
  if (!module.ok()) {
    std::cerr << "ember-opt: " << path << ": " << module.status().message() << "\n";
    return 1;
  }
  std::cout << (*module)->ToString();
  if (verify) {
    absl::Status status = ember::ir::Verify(**module);
    if (!status.ok()) {
      std::cerr << "ember-opt: verifier: " << status.message() << "\n";
      return 1;
    }
    std::cerr << "ember-opt: verified\n";
  }
  return 0;
}
