// frontend_read_bench FILE...: how fast Ember's frontends read a program: the MLIR bytecode
// reader (.mlirbc, StableHLO portable artifacts), the MLIR text parser (.mlir) and the
// HloModuleProto importer (.pb), each to the generic tree ("read") and on to ir::Module
// ("import"). Prints one line per file: sizes, median times, MB/s of read + import and the IR
// instructions imported per second (bytecode is ~7x denser than text, so MB/s alone misleads). Not
// a test: nothing asserts a speed. bench/frontend_read.py builds the inputs and compares with
// jaxlib's own readers in the same run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "compiler/frontend/bytecode_reader.h"
#include "compiler/frontend/hlo/hlo_import.h"
#include "compiler/frontend/import/import.h"
#include "compiler/frontend/text/mlir_text_parser.h"
#include "google/protobuf/arena.h"
#include "hlo_module.pb.h"  // generated into the build tree

namespace {

using Clock = std::chrono::steady_clock;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 5;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--repeats=", 0) == 0) {
      repeats = std::max(1, std::atoi(a.c_str() + 10));
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr,
                 "usage: frontend_read_bench [--repeats=N] FILE.mlirbc|FILE.mlir|FILE.pb...\n");
    return 2;
  }
  std::printf("%-28s %-10s %10s %10s %10s %10s %9s %9s %9s\n", "file", "reader", "MB", "read ms",
              "import ms", "total ms", "MB/s", "ops", "Mops/s");
  for (const std::string& path : files) {
    std::ifstream in(path, std::ios::binary);
    const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const absl::Span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(data.data()),
                                          data.size());
    const bool hlo = EndsWith(path, ".pb");
    const bool bytecode = EndsWith(path, ".mlirbc") || EndsWith(path, ".bc");
    std::vector<double> read_ms, import_ms;
    size_t ops = 0;  // IR instructions imported, over all computations
    auto count = [&ops](const ember::ir::Module& m) {
      ops = 0;
      for (const auto& c : m.computations()) ops += c->instructions().size();
    };
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = Clock::now();
      if (hlo) {
        // The importer parses and imports in one call; the protobuf parse alone is timed first
        // and reported as "read", the rest of the call as "import".
        google::protobuf::Arena arena;  // as the importer parses
        auto* parsed =
            google::protobuf::Arena::CreateMessage<ember::hloproto::HloModuleProto>(&arena);
        const bool parsed_ok = parsed->ParseFromArray(data.data(), static_cast<int>(data.size()));
        const auto tp = Clock::now();
        auto m = ember::frontend::ImportHloModuleProto(bytes);
        const auto t1 = Clock::now();
        const double parse = std::chrono::duration<double, std::milli>(tp - t0).count();
        const double full = std::chrono::duration<double, std::milli>(t1 - tp).count();
        if (!m.ok()) {
          std::fprintf(stderr, "%s: %s\n", path.c_str(), std::string(m.status().message()).c_str());
          return 1;
        }
        if (!parsed_ok) {
          std::fprintf(stderr, "%s: not a valid HloModuleProto\n", path.c_str());
          return 1;
        }
        count(**m);
        read_ms.push_back(parse);
        import_ms.push_back(std::max(0.0, full - parse));
        continue;
      }
      auto op = bytecode ? ember::frontend::ReadMlirBytecode(bytes)
                         : ember::frontend::ParseMlirText(data, path);
      const auto t1 = Clock::now();
      if (!op.ok()) {
        std::fprintf(stderr, "%s: %s\n", path.c_str(), std::string(op.status().message()).c_str());
        return 1;
      }
      auto m = ember::frontend::ImportModule(**op);
      const auto t2 = Clock::now();
      if (!m.ok()) {
        std::fprintf(stderr, "%s: %s\n", path.c_str(), std::string(m.status().message()).c_str());
        return 1;
      }
      count(**m);
      read_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      import_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    }
    const double mb = data.size() / 1e6;
    const double read = Median(read_ms), imp = Median(import_ms);
    const std::string name = path.substr(path.find_last_of('/') + 1);
    std::printf("%-28s %-10s %10.2f %10.2f %10.2f %10.2f %9.1f %9zu %9.2f\n", name.c_str(),
                hlo        ? "hlo"
                : bytecode ? "bytecode"
                           : "text",
                mb, read, imp, read + imp, mb / ((read + imp) / 1e3), ops,
                ops / ((read + imp) / 1e3) / 1e6);
  }
  return 0;
}
