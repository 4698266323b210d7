// ember-opt FILE [--no-verify] [--sharding-propagation | --spmd-partition=N] [--emit=stablehlo]:
// reads a program
// in any format Ember accepts (MLIR text .mlir, MLIR bytecode / StableHLO portable artifact
// .mlirbc/.bc; a binary xla.HloModuleProto .pb / .hlo.pb, as jax's
// as_serialized_hlo_module_proto() and TensorFlow write it) and prints the imported module in
// Ember's readable form, then the verifier's verdict. Replays the files written by
// EMBER_FLAGS=--dump_to=DIR. With --sharding-propagation, the module is printed after the
// sharding-propagation pass (each op's ember.shardings); with --spmd-partition=N, as the
// per-device program of N partitions (the pass the compiler runs on SPMD programs), with its
// report on stderr. With --emit=stablehlo, the module is printed as StableHLO text instead
// (compiler/export: what JAX's compiled.as_text() shows for SPMD programs).
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "compiler/driver/compile_program.h"
#include "compiler/export/stablehlo_text.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/sharding_propagation.h"

int main(int argc, char** argv) {
  bool verify = true, propagate = false, stablehlo = false, usage = argc < 2;
  int64_t partitions = 0;
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--no-verify") {
      verify = false;
    } else if (flag == "--emit=stablehlo") {
      stablehlo = true;
    } else if (flag == "--sharding-propagation") {
      propagate = true;
    } else if (flag.rfind("--spmd-partition=", 0) == 0) {
      partitions = std::atoll(flag.c_str() + 17);
      usage |= partitions < 1;
    } else {
      usage = true;
    }
  }
  if (usage) {
    std::cerr << "usage: ember-opt FILE [--no-verify] [--sharding-propagation | "
                 "--spmd-partition=N] [--emit=stablehlo]\n";
    return 2;
  }
  const std::string path = argv[1];
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
  if (propagate) {
    absl::StatusOr<bool> changed = ember::passes::CreateShardingPropagationPass()->Run(**module);
    if (!changed.ok()) {
      std::cerr << "ember-opt: sharding propagation: " << changed.status().message() << "\n";
      return 1;
    }
  }
  if (partitions > 0) {
    absl::StatusOr<bool> changed = ember::passes::CreateSpmdPartitionPass(partitions)->Run(**module);
    if (!changed.ok()) {
      std::cerr << "ember-opt: spmd-partition: " << changed.status().message() << "\n";
      return 1;
    }
    if (const ember::ir::Attribute* report =
            (*module)->attributes().Find(ember::passes::kSpmdReportAttribute)) {
      std::cerr << report->s << "\n";
    }
  }
  if (stablehlo) {
    const ember::ir::Computation* entry = (*module)->entry();
    if (entry == nullptr) {
      std::cerr << "ember-opt: the module has no entry function\n";
      return 1;
    }
    ember::compiler::StablehloModuleHeader header;
    header.name = (*module)->name();
    absl::StatusOr<std::string> text = ember::compiler::ExportStablehloText(**module, *entry, header);
    if (!text.ok()) {
      std::cerr << "ember-opt: export: " << text.status().message() << "\n";
      return 1;
    }
    std::cout << *text;
  } else {
    std::cout << (*module)->ToString();
  }
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
