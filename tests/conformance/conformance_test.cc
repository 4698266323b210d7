// StableHLO conformance: every case of the upstream interpret/ and testdata/ folders runs through
// the same path as a JAX program (parse -> import -> verify -> CompiledProgram ->
// runtime::Executable on a host client -> Execute -> await). A case passes iff nothing errors;
// failed check.* custom calls surface as execution errors. expected_failures.txt lists every
// failing case with a reason; the test fails when an unlisted case fails or a listed case passes.
//
// Round-trip cases: testdata files whose @main takes arguments and that have no check ops are
// upstream serialization round-trip tests (JAX shape-polymorphic exports: leading scalar integer
// arguments are the dimension variables, other arguments have `?` dims). They carry no expected
// values, so their criterion is differential: import + verify; specialize (every dimension
// variable = kRoundTripDimSize, every `?` of an argument = kRoundTripDimSize, which is what a
// program whose argument dims are single variables needs); run passes::RefineShapes; compile
// through the same runtime::Executable path and execute on random inputs (floats in [-2, 2],
// integers in [0, 4]); execute the refined program on the reference evaluator too; results must
// have the same types and be equal (floats within a relative/absolute 1e-5 f32, 1e-12 f64,
// 1e-2 for 16-bit floats: the compiled path fuses and may reassociate). A case whose dims are
// expressions of several variables (2*b, b+c) cannot be specialized this way and fails in
// refine_shapes with the op that contradicts the guess; those are listed with that reason.
//
// Environment: EMBER_CONFORMANCE_WRITE=<path> writes the observed failures as a new list;
// EMBER_CONFORMANCE_FILTER=<substring> runs only matching case ids (the list check is then
// limited to those cases).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/frontend/import/import.h"
#include "compiler/frontend/text/mlir_text_parser.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/refine_shapes.h"
#include "gtest/gtest.h"
#include "runtime/client.h"
#include "runtime/executable.h"
#include "tests/conformance/conformance_program.h"

namespace ember::conformance {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::string id;      // "interpret/add.mlir#3" or "testdata/foo.mlir"
  std::string folder;  // "interpret" or "testdata"
  std::string text;
  std::string filename;
  std::string entry;  // "main" for testdata, empty (module entry) for interpret
  bool disabled = false;
};

struct Outcome {
  bool passed = false;
  bool round_trip = false;
  std::string error;
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The file's RUN line is `// RUN-DISABLED...` (disabled upstream as well).
bool IsDisabled(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("// RUN-DISABLED", 0) == 0) return true;
    if (line.rfind("// RUN:", 0) == 0) return false;
  }
  return false;
}

std::vector<fs::path> MlirFiles(const fs::path& dir) {
  std::vector<fs::path> files;
  if (!fs::is_directory(dir)) return files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".mlir") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<Case> CollectCases(const fs::path& root) {
  std::vector<Case> cases;
  for (const fs::path& file : MlirFiles(root / "interpret")) {
    const std::string text = ReadFile(file);
    const std::string rel = fs::relative(file, root).generic_string();
    const bool disabled = IsDisabled(text);
    std::vector<frontend::MlirTextChunk> chunks = frontend::SplitMlirInput(text);
    int index = 0;
    for (auto& chunk : chunks) {
      ++index;
      Case c;
      c.id = absl::StrCat(rel, "#", index);
      c.folder = "interpret";
      c.text = std::move(chunk.text);
      c.filename = rel;
      c.disabled = disabled;
      cases.push_back(std::move(c));
    }
  }
  for (const fs::path& file : MlirFiles(root / "testdata")) {
    std::string text = ReadFile(file);
    if (text.find("-split-input-file") != std::string::npos) {
      // Interpreter-style files (no @main; `// -----` between modules): one case per module,
      // run like the interpret/ cases.
      const std::string rel = fs::relative(file, root).generic_string();
      const bool disabled = IsDisabled(text);
      int index = 0;
      for (auto& chunk : frontend::SplitMlirInput(text)) {
        Case c;
        c.id = absl::StrCat(rel, "#", ++index);
        c.folder = "testdata";
        c.text = std::move(chunk.text);
        c.filename = rel;
        c.disabled = disabled;
        cases.push_back(std::move(c));
      }
      continue;
    }
    Case c;
    c.text = std::move(text);
    c.id = fs::relative(file, root).generic_string();
    c.folder = "testdata";
    c.filename = c.id;
    c.entry = "main";
    c.disabled = IsDisabled(c.text);
    cases.push_back(std::move(c));
  }
  return cases;
}

// ---- interpreter.run_parallel ---------------------------------------------------------------
// `%r:N = interpreter.run_parallel(%inputs...) {programs = [[@f, ...], ...]}` runs programs[i][j]
// as replica i, partition j, device i * P + j taking its share of the inputs in order. The case
// is cut in three: the instructions before run_parallel (evaluated to get the inputs), the
// multi-device launch itself (one runtime::Executable over R x P devices of the client, like a
// JAX program), and the instructions after it (the checks), evaluated with the launch's results.

std::string SymbolName(const ir::Attribute& a) {
  std::string name = a.s;
  if (!name.empty() && name[0] == '@') name = name.substr(1);
  return name;
}

// programs = [[@f, @g], ...] as rows of function names.
absl::StatusOr<std::vector<std::vector<std::string>>> ProgramGrid(const ir::Instruction& inst) {
  const ir::Attribute* programs = inst.attribute("programs");
  if (programs == nullptr || programs->kind != ir::Attribute::Kind::kList) {
    return absl::InvalidArgumentError("interpreter.run_parallel without a `programs` list");
  }
  std::vector<std::vector<std::string>> grid;
  for (const ir::Attribute& row : programs->list) {
    std::vector<std::string> names;
    if (row.kind == ir::Attribute::Kind::kList) {
      for (const ir::Attribute& e : row.list) names.push_back(SymbolName(e));
    } else {
      names.push_back(SymbolName(row));
    }
    grid.push_back(std::move(names));
  }
  if (grid.empty() || grid[0].empty()) return absl::InvalidArgumentError("empty `programs`");
  for (const auto& row : grid) {
    if (row.size() != grid[0].size()) return absl::InvalidArgumentError("ragged `programs`");
    for (const std::string& name : row) {
      if (name != grid[0][0]) {
        return absl::UnimplementedError(
            "different programs per device (an executable runs one program on all its devices)");
      }
    }
  }
  return grid;
}

// Copies `instructions` of `from` into a new function that takes the values they read from
// outside as parameters (returned in `inputs`) and returns `outputs`.
absl::StatusOr<ir::Computation*> Outline(ir::Module& module, const std::string& name,
                                         const std::vector<const ir::Instruction*>& instructions,
                                         const std::vector<const ir::Value*>& outputs,
                                         std::vector<const ir::Value*>* inputs) {
  absl::StatusOr<ir::Computation*> fn = module.AddFunction(name);
  if (!fn.ok()) return fn.status();
  std::map<const ir::Value*, ir::Value*> map;
  auto lookup = [&](const ir::Value* v) {
    auto it = map.find(v);
    if (it == map.end()) {
      inputs->push_back(v);
      it = map.emplace(v, (*fn)->AddParameter(v->type())).first;
    }
    return it->second;
  };
  for (const ir::Instruction* inst : instructions) {
    std::vector<ir::Value*> operands;
    for (const ir::Value* v : inst->operands()) operands.push_back(lookup(v));
    std::vector<ir::ValueType> types;
    for (size_t r = 0; r < inst->num_results(); ++r) types.push_back(inst->result(r)->type());
    ir::Instruction* copy = (*fn)->AddInstruction(inst->opcode(), std::move(operands),
                                                  std::move(types), inst->attributes(),
                                                  inst->regions(), inst->location());
    copy->set_callee(inst->callee());
    for (size_t r = 0; r < inst->num_results(); ++r) map[inst->result(r)] = copy->result(r);
  }
  std::vector<ir::Value*> returned;
  for (const ir::Value* v : outputs) returned.push_back(lookup(v));
  (*fn)->AddInstruction(ir::Opcode::kReturn, std::move(returned), {});
  return *fn;
}

absl::StatusOr<std::vector<eval::EvalValue>> Evaluate(const ir::Computation& fn,
                                                      std::vector<eval::EvalValue> args) {
  eval::Evaluator evaluator;
  return evaluator.Run(fn, std::move(args));
}

absl::Status RunParallelCase(const std::shared_ptr<runtime::Client>& client, const Case& c) {
  absl::StatusOr<std::unique_ptr<frontend::Operation>> op = frontend::ParseMlirText(c.text, c.filename);
  if (!op.ok()) return absl::Status(op.status().code(), absl::StrCat("parse: ", std::string(op.status().message())));
  absl::StatusOr<std::unique_ptr<ir::Module>> module = frontend::ImportModule(**op);
  if (!module.ok()) {
    return absl::Status(module.status().code(),
                        absl::StrCat("import: ", std::string(module.status().message())));
  }
  ir::Computation* main = (*module)->FindFunction("main");
  if (main == nullptr) return absl::InvalidArgumentError("entry: no @main");
  const ir::Instruction* parallel = nullptr;
  std::vector<const ir::Instruction*> before, after;
  for (const auto& inst : main->instructions()) {
    const ir::Attribute* target = inst->attribute("call_target_name");
    const bool is_parallel = target != nullptr && target->kind == ir::Attribute::Kind::kString &&
                             target->s == "interpreter.run_parallel";
    if (is_parallel) {
      if (parallel != nullptr) return absl::UnimplementedError("two run_parallel ops in one case");
      parallel = inst.get();
    } else if (inst->opcode() != ir::Opcode::kReturn) {
      (parallel == nullptr ? before : after).push_back(inst.get());
    }
  }
  if (parallel == nullptr) return absl::InvalidArgumentError("no interpreter.run_parallel in @main");
  absl::StatusOr<std::vector<std::vector<std::string>>> programs = ProgramGrid(*parallel);
  if (!programs.ok()) {
    return absl::Status(programs.status().code(),
                        absl::StrCat("run_parallel: ", std::string(programs.status().message())));
  }
  const std::vector<std::vector<std::string>>& grid = *programs;
  const int64_t replicas = static_cast<int64_t>(grid.size());
  const int64_t partitions = static_cast<int64_t>(grid[0].size());
  const int64_t devices = replicas * partitions;

  // 1. The inputs, and every earlier value the checks read.
  std::vector<const ir::Value*> check_inputs;
  std::vector<const ir::Value*> results_of_parallel;
  for (size_t r = 0; r < parallel->num_results(); ++r) results_of_parallel.push_back(parallel->result(r));
  std::vector<const ir::Value*> wanted(parallel->operands().begin(), parallel->operands().end());
  EMBER_ASSIGN_OR_RETURN(ir::Computation * checks,
                         Outline(**module, "__checks", after, {}, &check_inputs));
  for (const ir::Value* v : check_inputs) {
    if (std::find(results_of_parallel.begin(), results_of_parallel.end(), v) ==
        results_of_parallel.end()) {
      wanted.push_back(v);
    }
  }
  std::vector<const ir::Value*> no_inputs;
  EMBER_ASSIGN_OR_RETURN(ir::Computation * inputs_fn,
                         Outline(**module, "__inputs", before, wanted, &no_inputs));
  if (!no_inputs.empty()) return absl::InvalidArgumentError("@main reads values it does not define");
  EMBER_ASSIGN_OR_RETURN(std::vector<eval::EvalValue> input_values, Evaluate(*inputs_fn, {}));
  std::map<const ir::Value*, eval::EvalValue*> known;
  for (size_t i = 0; i < wanted.size(); ++i) known[wanted[i]] = &input_values[i];

  // 2. The launch, through a fresh module so the program is what a frontend would produce.
  frontend::CompileOptions options;
  options.num_replicas = replicas;
  options.num_partitions = partitions;
  for (int64_t r = 0; r < replicas; ++r) {
    options.device_assignment.emplace_back();
    for (int64_t p = 0; p < partitions; ++p) options.device_assignment.back().push_back(r * partitions + p);
  }
  absl::StatusOr<std::unique_ptr<frontend::Operation>> op2 = frontend::ParseMlirText(c.text, c.filename);
  if (!op2.ok()) return op2.status();
  absl::StatusOr<std::unique_ptr<ir::Module>> module2 = frontend::ImportModule(**op2);
  if (!module2.ok()) return module2.status();
  absl::StatusOr<std::unique_ptr<compiler::CompiledProgram>> program =
      ProgramFromModule(*std::move(module2), grid[0][0], c.text, options);
  if (!program.ok()) return program.status();
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      runtime::Executable::Create(client, *std::move(program));
  if (!executable.ok()) {
    return absl::Status(executable.status().code(),
                        absl::StrCat("compile: ", std::string(executable.status().message())));
  }
  const size_t num_args = (*executable)->program().parameter_types.size();
  const size_t num_results = (*executable)->program().result_types.size();
  if (parallel->operands().size() != num_args * devices ||
      parallel->num_results() != num_results * devices) {
    return absl::InvalidArgumentError(absl::StrCat(
        "run_parallel passes ", parallel->operands().size(), " inputs and takes ",
        parallel->num_results(), " results for ", devices, " devices of @", grid[0][0]));
  }
  std::vector<std::unique_ptr<runtime::Buffer>> owned;
  std::vector<std::vector<runtime::Buffer*>> arguments(devices);
  for (int64_t d = 0; d < devices; ++d) {
    runtime::Device* device = (*executable)->devices()[d];
    for (size_t i = 0; i < num_args; ++i) {
      const eval::EvalValue& value = *known.at(parallel->operand(d * num_args + i));
      if (value.kind != eval::EvalValue::Kind::kArray) {
        return absl::UnimplementedError("run_parallel inputs other than arrays");
      }
      AsyncEventRef done_with_host;
      absl::StatusOr<std::unique_ptr<runtime::Buffer>> buffer = client->BufferFromHostBuffer(
          value.array.bytes().data(), value.array.element_type(), value.array.shape().dims(), {},
          runtime::HostBufferSemantics::kImmutableOnlyDuringCall, device->default_memory(),
          &done_with_host);
      if (!buffer.ok()) return buffer.status();
      arguments[d].push_back(buffer->get());
      owned.push_back(*std::move(buffer));
    }
  }
  absl::StatusOr<runtime::Executable::Launch> launch = (*executable)->Execute(arguments, {}, nullptr);
  if (!launch.ok()) {
    return absl::Status(launch.status().code(),
                        absl::StrCat("execute: ", std::string(launch.status().message())));
  }
  for (const AsyncEventRef& done : launch->done) {
    if (absl::Status s = done->Await(); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("execute: ", std::string(s.message())));
    }
  }
  std::vector<eval::EvalValue> parallel_results;
  for (int64_t d = 0; d < devices; ++d) {
    for (size_t r = 0; r < num_results; ++r) {
      runtime::Buffer& buffer = *launch->outputs[d][r];
      absl::StatusOr<ir::Shape> shape = ir::Shape::Make(buffer.element_type(), buffer.dims());
      if (!shape.ok()) return shape.status();
      absl::StatusOr<ir::Literal> literal = ir::Literal::Create(*shape);
      if (!literal.ok()) return literal.status();
      absl::StatusOr<AsyncEventRef> copied =
          buffer.ToHost(literal->mutable_bytes().data(), {});
      if (!copied.ok()) return copied.status();
      if (absl::Status s = (*copied)->Await(); !s.ok()) return s;
      parallel_results.push_back(eval::EvalValue::Array(*std::move(literal)));
    }
  }

  // 3. The checks.
  std::vector<eval::EvalValue> check_args;
  for (const ir::Value* v : check_inputs) {
    auto it = std::find(results_of_parallel.begin(), results_of_parallel.end(), v);
    if (it != results_of_parallel.end()) {
      check_args.push_back(parallel_results[it - results_of_parallel.begin()].Clone());
    } else {
      check_args.push_back(known.at(v)->Clone());
    }
  }
  absl::StatusOr<std::vector<eval::EvalValue>> checked = Evaluate(*checks, std::move(check_args));
  if (!checked.ok()) {
    return absl::Status(checked.status().code(),
                        absl::StrCat("execute: ", std::string(checked.status().message())));
  }
  return absl::OkStatus();
}

// ---- Round-trip cases (see the header comment) ------------------------------------------------

constexpr int64_t kRoundTripDimSize = 3;

absl::Status Stage(const char* stage, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(stage, ": ", std::string(s.message())));
}

// The entry of a round-trip case: @main with parameters, and no check ops in the file.
bool IsRoundTripCase(const Case& c) {
  if (c.folder != "testdata" || c.text.find("check.") != std::string::npos) return false;
  const size_t main = c.text.find("@main(");
  return main != std::string::npos && c.text.compare(main + 6, 1, ")") != 0;
}

// Leading scalar integer parameters of an entry that has dynamic dims are dimension variables.
size_t DimensionVariableCount(const ir::Computation& entry) {
  bool dynamic = false;
  for (const auto& p : entry.parameters()) dynamic = dynamic || !p->type().is_static();
  if (!dynamic) return 0;
  size_t n = 0;
  for (const auto& p : entry.parameters()) {
    const ir::ValueType& t = p->type();
    if (!t.is_tensor() || !t.dims().empty() || !ir::IsInteger(t.element_type())) break;
    ++n;
  }
  return n;
}

// Converts f64 values to `type` with the evaluator's own convert (every element type at once).
absl::StatusOr<ir::Literal> ConvertTo(ir::Literal f64, ir::ElementType type) {
  ir::Module module("convert");
  EMBER_ASSIGN_OR_RETURN(ir::Computation * fn, module.AddFunction("convert"));
  ir::Value* in = fn->AddParameter(ir::ValueType::Tensor(f64.shape()));
  EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ir::Shape::Make(type, f64.shape().dims()));
  ir::Instruction* convert =
      fn->AddInstruction(ir::Opcode::kConvert, {in}, {ir::ValueType::Tensor(shape)});
  fn->AddInstruction(ir::Opcode::kReturn, {convert->result()}, {});
  std::vector<eval::EvalValue> args;
  args.push_back(eval::EvalValue::Array(std::move(f64)));
  EMBER_ASSIGN_OR_RETURN(std::vector<eval::EvalValue> out, Evaluate(*fn, std::move(args)));
  return std::move(out[0].array);
}

absl::StatusOr<ir::Literal> RandomLiteral(const ir::ValueType& type, std::mt19937& rng) {
  if (!type.is_tensor()) return absl::UnimplementedError("round-trip: non-tensor argument");
  EMBER_ASSIGN_OR_RETURN(ir::Shape f64_shape, ir::Shape::Make(ir::ElementType::kF64, type.dims()));
  EMBER_ASSIGN_OR_RETURN(ir::Literal f64, ir::Literal::Create(f64_shape));
  EMBER_ASSIGN_OR_RETURN(absl::Span<double> data, f64.mutable_data<double>());
  const bool integer = ir::IsInteger(type.element_type());
  std::uniform_real_distribution<double> real(-2, 2);
  std::uniform_int_distribution<int> small(0, 4);
  for (double& x : data) x = integer ? small(rng) : real(rng);
  if (type.element_type() == ir::ElementType::kF64) return f64;
  return ConvertTo(std::move(f64), type.element_type());
}

absl::StatusOr<ir::Literal> Scalar(ir::ElementType type, int64_t v) {
  EMBER_ASSIGN_OR_RETURN(ir::Literal f64, ir::Literal::Scalar<double>(static_cast<double>(v)));
  return ConvertTo(std::move(f64), type);
}

double Tolerance(ir::ElementType type) {
  switch (type) {
    case ir::ElementType::kF64:
    case ir::ElementType::kC128:
      return 1e-12;
    case ir::ElementType::kF32:
    case ir::ElementType::kC64:
      return 1e-5;
    default:
      return 1e-2;
  }
}

// Equal bytes, or (floats) values within the type's tolerance; NaNs match NaNs.
absl::Status CompareResults(const ir::Literal& compiled, const ir::Literal& reference, size_t i) {
  if (!compiled.shape().EqualsIgnoringLayout(reference.shape())) {
    return absl::InternalError(absl::StrCat("result ", i, ": compiled ", compiled.shape().ToString(),
                                            " vs evaluator ", reference.shape().ToString()));
  }
  if (compiled == reference) return absl::OkStatus();
  const ir::ElementType type = reference.element_type();
  if (!ir::IsFloat(type) && !ir::IsComplex(type)) {
    return absl::InternalError(absl::StrCat("result ", i, " of type ", reference.shape().ToString(),
                                            " differs between the compiled path and the evaluator"));
  }
  const ir::ElementType wide = ir::IsComplex(type) ? ir::ElementType::kC128 : ir::ElementType::kF64;
  EMBER_ASSIGN_OR_RETURN(ir::Literal a_copy, compiled.Clone());
  EMBER_ASSIGN_OR_RETURN(ir::Literal b_copy, reference.Clone());
  EMBER_ASSIGN_OR_RETURN(ir::Literal a, ConvertTo(std::move(a_copy), wide));
  EMBER_ASSIGN_OR_RETURN(ir::Literal b, ConvertTo(std::move(b_copy), wide));
  const size_t n = static_cast<size_t>(a.size_bytes() / sizeof(double));
  const double* x = reinterpret_cast<const double*>(a.bytes().data());
  const double* y = reinterpret_cast<const double*>(b.bytes().data());
  const double tol = Tolerance(type);
  for (size_t k = 0; k < n; ++k) {
    if (std::isnan(x[k]) && std::isnan(y[k])) continue;
    if (x[k] == y[k]) continue;
    if (std::fabs(x[k] - y[k]) <= tol * std::max(1.0, std::fabs(y[k]))) continue;
    return absl::InternalError(absl::StrCat("result ", i, " (", reference.shape().ToString(),
                                            ") element ", k, ": compiled ", x[k], " vs evaluator ",
                                            y[k]));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ir::Module>> ImportRefined(const Case& c,
                                                          const passes::ShapeRefinement** r,
                                                          passes::ShapeRefinement* storage) {
  absl::StatusOr<std::unique_ptr<frontend::Operation>> op = frontend::ParseMlirText(c.text, c.filename);
  if (!op.ok()) return Stage("parse", op.status());
  absl::StatusOr<std::unique_ptr<ir::Module>> module = frontend::ImportModule(**op);
  if (!module.ok()) return Stage("import", module.status());
  if (absl::Status s = ir::Verify(**module); !s.ok()) return Stage("verify", s);
  ir::Computation* main = (*module)->FindFunction("main");
  if (main == nullptr) return absl::InvalidArgumentError("entry: no @main");
  if (*r == nullptr) {
    const size_t vars = DimensionVariableCount(*main);
    for (size_t i = 0; i < main->parameters().size(); ++i) {
      const ir::ValueType& t = main->parameter(i)->type();
      if (!t.is_tensor()) {
        return absl::UnimplementedError("round-trip: an argument that is not a tensor");
      }
      std::vector<int64_t> dims = t.dims();
      for (int64_t& d : dims) {
        if (d == ir::kDynamicDim) d = kRoundTripDimSize;
      }
      absl::StatusOr<ir::Shape> shape = ir::Shape::Make(t.element_type(), dims);
      if (!shape.ok()) return shape.status();
      storage->arg_types.push_back(ir::ValueType::Tensor(*shape));
      if (i < vars) storage->dim_values[static_cast<int64_t>(i)] = kRoundTripDimSize;
    }
    *r = storage;
  }
  if (absl::Status s = passes::RefineShapes(**module, *main, **r); !s.ok()) {
    return Stage("round-trip", s);
  }
  if (absl::Status s = ir::Verify(**module); !s.ok()) return Stage("round-trip: verify refined", s);
  return module;
}

absl::Status RunRoundTripCase(const std::shared_ptr<runtime::Client>& client, const Case& c) {
  passes::ShapeRefinement refinement;
  const passes::ShapeRefinement* r = nullptr;
  EMBER_ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> compiled_module, ImportRefined(c, &r, &refinement));
  EMBER_ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> reference_module, ImportRefined(c, &r, &refinement));

  // Inputs: the dimension variables' values, random data for the rest.
  std::mt19937 rng(static_cast<uint32_t>(std::hash<std::string>()(c.id)));
  std::vector<ir::Literal> inputs;
  for (size_t i = 0; i < refinement.arg_types.size(); ++i) {
    const ir::ValueType& t = refinement.arg_types[i];
    auto var = refinement.dim_values.find(static_cast<int64_t>(i));
    absl::StatusOr<ir::Literal> lit = var != refinement.dim_values.end()
                                          ? Scalar(t.element_type(), var->second)
                                          : RandomLiteral(t, rng);
    if (!lit.ok()) return Stage("round-trip: inputs", lit.status());
    inputs.push_back(*std::move(lit));
  }

  // The compiled path, as a JAX program would take it.
  absl::StatusOr<std::unique_ptr<compiler::CompiledProgram>> program =
      ProgramFromModule(std::move(compiled_module), "main", c.text, frontend::CompileOptions{});
  if (!program.ok()) return Stage("round-trip: compile", program.status());
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      runtime::Executable::Create(client, *std::move(program));
  if (!executable.ok()) return Stage("round-trip: compile", executable.status());
  runtime::Device* device = (*executable)->devices()[0];
  std::vector<std::unique_ptr<runtime::Buffer>> owned;
  std::vector<std::vector<runtime::Buffer*>> arguments(1);
  for (const ir::Literal& lit : inputs) {
    AsyncEventRef done_with_host;
    absl::StatusOr<std::unique_ptr<runtime::Buffer>> buffer = client->BufferFromHostBuffer(
        lit.bytes().data(), lit.element_type(), lit.shape().dims(), {},
        runtime::HostBufferSemantics::kImmutableOnlyDuringCall, device->default_memory(),
        &done_with_host);
    if (!buffer.ok()) return Stage("round-trip: execute", buffer.status());
    arguments[0].push_back(buffer->get());
    owned.push_back(*std::move(buffer));
  }
  absl::StatusOr<runtime::Executable::Launch> launch = (*executable)->Execute(arguments, {}, nullptr);
  if (!launch.ok()) return Stage("round-trip: execute", launch.status());
  for (const AsyncEventRef& done : launch->done) {
    if (absl::Status s = done->Await(); !s.ok()) return Stage("round-trip: execute", s);
  }
  std::vector<ir::Literal> compiled_results;
  for (const auto& out : launch->outputs[0]) {
    absl::StatusOr<ir::Shape> shape = ir::Shape::Make(out->element_type(), out->dims());
    if (!shape.ok()) return shape.status();
    absl::StatusOr<ir::Literal> literal = ir::Literal::Create(*shape);
    if (!literal.ok()) return literal.status();
    absl::StatusOr<AsyncEventRef> copied = out->ToHost(literal->mutable_bytes().data(), {});
    if (!copied.ok()) return copied.status();
    if (absl::Status s = (*copied)->Await(); !s.ok()) return s;
    compiled_results.push_back(*std::move(literal));
  }

  // The reference evaluator on the refined (unoptimized) program.
  std::vector<eval::EvalValue> args;
  for (const ir::Literal& lit : inputs) {
    absl::StatusOr<ir::Literal> copy = lit.Clone();
    if (!copy.ok()) return copy.status();
    args.push_back(eval::EvalValue::Array(*std::move(copy)));
  }
  absl::StatusOr<std::vector<eval::EvalValue>> reference =
      Evaluate(*reference_module->FindFunction("main"), std::move(args));
  if (!reference.ok()) return Stage("round-trip: evaluator", reference.status());
  if (reference->size() != compiled_results.size()) {
    return absl::InternalError(absl::StrCat("round-trip: compare: ", compiled_results.size(),
                                            " compiled results vs ", reference->size()));
  }
  for (size_t i = 0; i < compiled_results.size(); ++i) {
    if ((*reference)[i].kind != eval::EvalValue::Kind::kArray) {
      return absl::UnimplementedError("round-trip: compare: a result that is not an array");
    }
    if (absl::Status s = CompareResults(compiled_results[i], (*reference)[i].array, i); !s.ok()) {
      return Stage("round-trip: compare", s);
    }
  }
  return absl::OkStatus();
}

absl::Status RunCase(const std::shared_ptr<runtime::Client>& client, const Case& c) {
  if (c.text.find("interpreter.run_parallel") != std::string::npos) return RunParallelCase(client, c);
  if (c.text.find("func.func") == std::string::npos) {
    // A module without functions (e.g. probe.mlir's "empty module" case): it must read and
    // import; there is nothing to run.
    absl::StatusOr<std::unique_ptr<frontend::Operation>> op = frontend::ParseMlirText(c.text, c.filename);
    if (!op.ok()) {
      return absl::Status(op.status().code(),
                          absl::StrCat("parse: ", std::string(op.status().message())));
    }
    absl::StatusOr<std::unique_ptr<ir::Module>> module = frontend::ImportModule(**op);
    if (!module.ok()) {
      return absl::Status(module.status().code(),
                          absl::StrCat("import: ", std::string(module.status().message())));
    }
    if (!(*module)->functions().empty()) return absl::InternalError("expected an empty module");
    return absl::OkStatus();
  }
  if (IsRoundTripCase(c)) return RunRoundTripCase(client, c);
  absl::StatusOr<std::unique_ptr<compiler::CompiledProgram>> program =
      ProgramFromText(c.text, c.filename, c.entry);
  if (!program.ok()) return program.status();
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      runtime::Executable::Create(client, *std::move(program));
  if (!executable.ok()) {
    return absl::Status(executable.status().code(),
                        absl::StrCat("compile: ", std::string(executable.status().message())));
  }
  std::vector<std::vector<runtime::Buffer*>> arguments((*executable)->devices().size());
  absl::StatusOr<runtime::Executable::Launch> launch =
      (*executable)->Execute(arguments, {}, nullptr);
  if (!launch.ok()) {
    return absl::Status(launch.status().code(),
                        absl::StrCat("execute: ", std::string(launch.status().message())));
  }
  for (const AsyncEventRef& done : launch->done) {
    if (absl::Status s = done->Await(); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("execute: ", std::string(s.message())));
    }
  }
  return absl::OkStatus();
}

// Drops a leading "file:line:col: " location.
std::string StripLocation(std::string s) {
  for (int k = 0; k < 3; ++k) {
    const size_t colon = s.find(": ");
    if (colon == std::string::npos) break;
    const std::string head = s.substr(0, colon);
    if (head.find(".mlir") != std::string::npos || head.find("<program>") != std::string::npos) {
      s = s.substr(colon + 2);
    } else {
      break;
    }
  }
  return s;
}

std::string OneLine(std::string s, size_t max) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (s.size() > max) s = s.substr(0, max);
  while (!s.empty() && (s.back() == ' ' || s.back() == ':' || s.back() == ',')) s.pop_back();
  return s;
}

std::string Reason(const Case& c, const std::string& error) {
  auto between = [&](std::string_view before, std::string_view after) -> std::string {
    const size_t b = error.find(before);
    if (b == std::string::npos) return "";
    const size_t from = b + before.size();
    const size_t e = error.find(after, from);
    return e == std::string::npos ? "" : error.substr(from, e - from);
  };
  if (error.find("has a dynamic dimension") != std::string::npos) return "import: dynamic shapes";
  if (error.rfind("round-trip: ", 0) == 0) {
    // The op's location inside the case's own file says nothing the case id does not.
    std::string e = error;
    const std::string at = absl::StrCat(" at ", c.id, ":");
    if (const size_t b = e.find(at); b != std::string::npos) {
      const size_t end = e.find(": ", b + at.size());
      if (end != std::string::npos) e.erase(b, end - b);
    }
    return OneLine(e, 200);
  }
  // Quantized programs that fail now fail for a specific reason, kept in full below.
  if (error.find("!quant.") != std::string::npos && error.find("is not supported") != std::string::npos &&
      error.find("import") == 0) {
    return "import: quantized types";
  }
  if (const size_t e = error.find(" is not supported by the importer"); e != std::string::npos) {
    const size_t b = error.rfind("chlo.", e);
    if (b != std::string::npos) {
      return absl::StrCat("import: chlo op ", error.substr(b + 5, e - b - 5));
    }
  }
  if (std::string target = between("custom_call target '", "' is not supported by the evaluator");
      !target.empty()) {
    return absl::StrCat("evaluator: custom_call ", target, " not supported");
  }
  for (const char* check : {"check.expect_close", "check.expect_almost_eq", "check.expect_eq"}) {
    if (error.find(absl::StrCat(check, " failed")) != std::string::npos &&
        c.id.find("_chlo.mlir") != std::string::npos) {
      // Checked with numpy: these differ from the expected values by a few ulp (relative
      // error 1e-7 in f32, 3e-16 in f64), and Ember's result is the correctly rounded one.
      return absl::StrCat("evaluator: result mismatch (", check,
                          "): Ember computes the chlo op correctly rounded, the expected values "
                          "are XLA's decomposition, a few ulp away");
    }
    if (error.find(absl::StrCat(check, " failed")) != std::string::npos) {
      return absl::StrCat("evaluator: result mismatch (", check, ")");
    }
  }
  const size_t colon = error.find(": ");
  const std::string stage = colon == std::string::npos ? "error" : error.substr(0, colon);
  std::string rest = colon == std::string::npos ? error : error.substr(colon + 2);
  rest = StripLocation(rest);
  return OneLine(absl::StrCat(stage, ": ", rest), 160);
}

std::map<std::string, std::string> ReadExpectedFailures(const fs::path& path) {
  std::map<std::string, std::string> expected;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t colon = line.find(": ");
    if (colon == std::string::npos) {
      expected[line] = "";
    } else {
      expected[line.substr(0, colon)] = line.substr(colon + 2);
    }
  }
  return expected;
}

TEST(ConformanceTest, StablehloInterpretAndTestdata) {
  const fs::path root = EMBER_CONFORMANCE_DATA_DIR;
  if (!fs::is_directory(root / "interpret") && !fs::is_directory(root / "testdata")) {
    std::cout << "StableHLO test data not found at " << root.string() << "; skipping\n";
    GTEST_SKIP() << "no test data at " << root.string();
  }
  std::vector<Case> cases = CollectCases(root);
  if (const char* filter = std::getenv("EMBER_CONFORMANCE_FILTER")) {
    std::erase_if(cases, [&](const Case& c) { return c.id.find(filter) == std::string::npos; });
  }
  const std::map<std::string, std::string> expected =
      ReadExpectedFailures(fs::path(EMBER_CONFORMANCE_SOURCE_DIR) / "expected_failures.txt");

  const auto start = std::chrono::steady_clock::now();
  std::vector<Outcome> outcomes(cases.size());
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    DeviceOptions options;
    options.platform = "host";
    options.host_device_count = 8;  // run_parallel cases use up to 5 devices
    absl::StatusOr<std::shared_ptr<runtime::Client>> client = runtime::Client::Create(options);
    for (size_t i = next++; i < cases.size(); i = next++) {
      if (cases[i].disabled) continue;
      if (!client.ok()) {
        outcomes[i].error = absl::StrCat("client: ", std::string(client.status().message()));
        continue;
      }
      outcomes[i].round_trip = IsRoundTripCase(cases[i]);
      absl::Status s = RunCase(*client, cases[i]);
      outcomes[i].passed = s.ok();
      if (!s.ok()) outcomes[i].error = std::string(s.message());
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  struct Counts {
    int passed = 0, expected_fail = 0, disabled = 0, total = 0;
  };
  std::map<std::string, Counts> counts;
  int round_trip_total = 0, round_trip_passed = 0;
  std::map<std::string, int> reasons;
  std::vector<std::string> unexpected_failures, unexpected_passes;
  std::ostringstream observed;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    Counts& n = counts[c.folder];
    ++n.total;
    if (c.disabled) {
      ++n.disabled;
      continue;
    }
    const bool listed = expected.count(c.id) > 0;
    round_trip_total += outcomes[i].round_trip;
    round_trip_passed += outcomes[i].round_trip && outcomes[i].passed;
    if (outcomes[i].passed) {
      ++n.passed;
      if (listed) unexpected_passes.push_back(c.id);
      continue;
    }
    const std::string reason = Reason(c, outcomes[i].error);
    ++reasons[reason];
    observed << c.id << ": " << reason << "\n";
    if (listed) {
      ++n.expected_fail;
    } else {
      unexpected_failures.push_back(absl::StrCat(c.id, ": ", OneLine(outcomes[i].error, 400)));
    }
  }

  std::cout << "StableHLO conformance (" << cases.size() << " cases, " << seconds << " s)\n";
  for (const auto& [folder, n] : counts) {
    const int enabled = n.total - n.disabled;
    std::cout << "  " << folder << ": passed " << n.passed << " / failed-as-expected "
              << n.expected_fail << " / disabled " << n.disabled << " / total " << n.total
              << "  (" << (enabled ? 100.0 * n.passed / enabled : 0.0) << "% of enabled)\n";
  }
  std::cout << "  round-trip cases (no checks; refine_shapes, then compiled path vs evaluator): "
            << "passed " << round_trip_passed << " / failed " << round_trip_total - round_trip_passed
            << " / total " << round_trip_total << "\n";
  std::vector<std::pair<int, std::string>> by_count;
  for (const auto& [reason, count] : reasons) by_count.emplace_back(count, reason);
  std::sort(by_count.rbegin(), by_count.rend());
  std::cout << "  failure reasons:\n";
  for (size_t i = 0; i < by_count.size() && i < 25; ++i) {
    std::cout << "    " << by_count[i].first << "  " << by_count[i].second << "\n";
  }

  if (const char* out = std::getenv("EMBER_CONFORMANCE_WRITE")) {
    std::ofstream file(out);
    file << "# StableHLO conformance cases that fail today: `case_id: reason`.\n"
         << "# Regenerate with EMBER_CONFORMANCE_WRITE=<path> ember_conformance_test.\n"
         << observed.str();
    std::cout << "  wrote observed failures to " << out << "\n";
  }

  for (const std::string& f : unexpected_failures) ADD_FAILURE() << "unexpected failure: " << f;
  for (const std::string& p : unexpected_passes) {
    ADD_FAILURE() << "listed in expected_failures.txt but passes (remove it): " << p;
  }
}

}  // namespace
}  // namespace ember::conformance
