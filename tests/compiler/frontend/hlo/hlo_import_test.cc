// Tests of the HloModuleProto importer: every module in testdata/ (JAX functions lowered to HLO by
// gen_testdata.py) is imported, verified, run on the reference evaluator and compared with the
// outputs XLA:CPU computed for the same inputs; plus donation, locations, and malformed input.
#include "compiler/frontend/hlo/hlo_import.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/ir/float_conversions.h"
#include "compiler/ir/native_types.h"
#include "compiler/ir/verifier.h"
#include "compiler/ir/sharding.h"
#include "gtest/gtest.h"
#include "hlo_module.pb.h"

namespace ember::frontend {
namespace {

using ir::ElementType;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

absl::Span<const uint8_t> Bytes(const std::string& s) {
  return absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

struct Case {
  std::string name;
  double rtol = 0, atol = 0;
};

std::vector<Case> Cases() {
  std::vector<Case> out;
  std::ifstream in(std::string(EMBER_HLO_TESTDATA) + "/cases.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    Case c;
    fields >> c.name >> c.rtol >> c.atol;
    out.push_back(c);
  }
  return out;
}

// name -> reason
std::map<std::string, std::string> ExpectedFailures() {
  std::map<std::string, std::string> out;
  std::ifstream in(EMBER_HLO_EXPECTED_FAILURES);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t colon = line.find(':');
    out[line.substr(0, colon)] = colon == std::string::npos ? "" : line.substr(colon + 1);
  }
  return out;
}

absl::StatusOr<ElementType> NumpyType(const std::string& name) {
  static const std::map<std::string, ElementType> kTypes = {
      {"bool", ElementType::kPred},          {"int8", ElementType::kS8},
      {"int16", ElementType::kS16},          {"int32", ElementType::kS32},
      {"int64", ElementType::kS64},          {"uint8", ElementType::kU8},
      {"uint16", ElementType::kU16},         {"uint32", ElementType::kU32},
      {"uint64", ElementType::kU64},         {"float16", ElementType::kF16},
      {"bfloat16", ElementType::kBF16},      {"float32", ElementType::kF32},
      {"float64", ElementType::kF64},        {"complex64", ElementType::kC64},
      {"complex128", ElementType::kC128},    {"int4", ElementType::kS4},
      {"uint4", ElementType::kU4},           {"float8_e4m3fn", ElementType::kF8E4M3FN},
      {"float8_e5m2", ElementType::kF8E5M2},
  };
  auto it = kTypes.find(name);
  if (it == kTypes.end()) return absl::InvalidArgumentError("unknown dtype " + name);
  return it->second;
}

// Reads the .io file: inputs then outputs.
absl::Status ReadIo(const std::string& path, std::vector<ir::Literal>* inputs,
                    std::vector<ir::Literal>* outputs) {
  const std::string data = ReadFile(path);
  size_t pos = 0;
  auto take = [&](void* dst, size_t n) -> absl::Status {
    if (pos + n > data.size()) return absl::InvalidArgumentError("truncated .io file");
    std::memcpy(dst, data.data() + pos, n);
    pos += n;
    return absl::OkStatus();
  };
  char magic[8];
  EMBER_RETURN_IF_ERROR(take(magic, 8));
  if (std::memcmp(magic, "EMBERIO1", 8) != 0) return absl::InvalidArgumentError("bad magic");
  uint32_t n_in = 0, n_out = 0;
  EMBER_RETURN_IF_ERROR(take(&n_in, 4));
  EMBER_RETURN_IF_ERROR(take(&n_out, 4));
  for (uint32_t i = 0; i < n_in + n_out; ++i) {
    uint32_t len = 0, rank = 0;
    EMBER_RETURN_IF_ERROR(take(&len, 4));
    std::string name(len, '\0');
    EMBER_RETURN_IF_ERROR(take(name.data(), len));
    EMBER_RETURN_IF_ERROR(take(&rank, 4));
    std::vector<int64_t> dims(rank);
    for (auto& d : dims) EMBER_RETURN_IF_ERROR(take(&d, 8));
    uint64_t nbytes = 0;
    EMBER_RETURN_IF_ERROR(take(&nbytes, 8));
    std::vector<uint8_t> bytes(nbytes);
    EMBER_RETURN_IF_ERROR(take(bytes.data(), nbytes));
    EMBER_ASSIGN_OR_RETURN(ElementType type, NumpyType(name));
    EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ir::Shape::Make(type, dims));
    EMBER_ASSIGN_OR_RETURN(ir::Literal lit, ir::Literal::FromBytes(shape, bytes));
    (i < n_in ? inputs : outputs)->push_back(std::move(lit));
  }
  return absl::OkStatus();
}

// Element i of a floating-point (or complex: part 0/1) literal as double.
double FloatAt(const ir::Literal& l, int64_t i, int part) {
  const uint8_t* p = l.bytes().data();
  switch (l.element_type()) {
    case ElementType::kF32: {
      float v;
      std::memcpy(&v, p + 4 * i, 4);
      return v;
    }
    case ElementType::kF64: {
      double v;
      std::memcpy(&v, p + 8 * i, 8);
      return v;
    }
    case ElementType::kBF16: {
      uint16_t b;
      std::memcpy(&b, p + 2 * i, 2);
      return BF16ToFloat(b);
    }
    case ElementType::kF16: {
      uint16_t b;
      std::memcpy(&b, p + 2 * i, 2);
      return ir::F16::FromBits(b).ToFloat();
    }
    case ElementType::kC64: {
      float v;
      std::memcpy(&v, p + 8 * i + 4 * part, 4);
      return v;
    }
    case ElementType::kC128: {
      double v;
      std::memcpy(&v, p + 16 * i + 8 * part, 8);
      return v;
    }
    default:
      return 0;
  }
}

// Empty when equal within tolerance; otherwise where and how they differ.
std::string Compare(const ir::Literal& got, const ir::Literal& want, double rtol, double atol) {
  if (!got.shape().EqualsIgnoringLayout(want.shape())) {
    return absl::StrCat("shape ", got.shape().ToString(), " != expected ", want.shape().ToString());
  }
  const ElementType t = want.element_type();
  const bool is_float = t == ElementType::kF32 || t == ElementType::kF64 ||
                        t == ElementType::kBF16 || t == ElementType::kF16 ||
                        t == ElementType::kC64 || t == ElementType::kC128;
  if (!is_float) {
    if (got.bytes().size() == want.bytes().size() &&
        std::memcmp(got.bytes().data(), want.bytes().data(), got.bytes().size()) == 0) {
      return "";
    }
    return absl::StrCat("values differ: got ", got.ToString(), " expected ", want.ToString());
  }
  // Narrow types are compared at their own precision (bf16: 8 bits of mantissa).
  if (t == ElementType::kBF16) rtol = std::max(rtol, 1e-2), atol = std::max(atol, 1e-2);
  if (t == ElementType::kF16) rtol = std::max(rtol, 1e-3), atol = std::max(atol, 1e-3);
  const int parts = (t == ElementType::kC64 || t == ElementType::kC128) ? 2 : 1;
  for (int64_t i = 0; i < want.shape().element_count(); ++i) {
    for (int part = 0; part < parts; ++part) {
      const double g = FloatAt(got, i, part), w = FloatAt(want, i, part);
      if (std::isnan(w) && std::isnan(g)) continue;
      if (std::isinf(w) && g == w) continue;
      if (!(std::abs(g - w) <= atol + rtol * std::abs(w))) {
        return absl::StrCat("element ", i, (parts == 2 ? (part ? ".imag" : ".real") : ""), ": got ",
                            g, " expected ", w, " (rtol ", rtol, ", atol ", atol,
                            ")\n  got:      ", got.ToString(), "\n  expected: ", want.ToString());
      }
    }
  }
  return "";
}

// Import + verify + evaluate + compare; OK or the first failure.
absl::Status RunCase(const Case& c) {
  const std::string dir = EMBER_HLO_TESTDATA;
  const std::string hlo = ReadFile(dir + "/" + c.name + ".hlo.pb");
  if (hlo.empty()) return absl::NotFoundError("missing " + c.name + ".hlo.pb");
  EMBER_ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> module, ImportHloModuleProto(Bytes(hlo)));
  EMBER_RETURN_IF_ERROR(ir::Verify(*module));
  std::vector<ir::Literal> inputs, outputs;
  EMBER_RETURN_IF_ERROR(ReadIo(dir + "/" + c.name + ".io", &inputs, &outputs));
  ir::Computation* entry = module->entry();
  if (entry == nullptr) return absl::InternalError("no entry function");
  std::vector<eval::EvalValue> args;
  for (ir::Literal& l : inputs) args.push_back(eval::EvalValue::Array(std::move(l)));
  eval::EvalOptions options;
  options.max_loop_iterations = 1 << 20;
  eval::Evaluator evaluator(options);
  EMBER_ASSIGN_OR_RETURN(std::vector<eval::EvalValue> results,
                         evaluator.Run(*entry, std::move(args)));
  if (results.size() != outputs.size()) {
    return absl::InternalError(absl::StrCat(results.size(), " results, expected ", outputs.size()));
  }
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].kind != eval::EvalValue::Kind::kArray) {
      return absl::InternalError(absl::StrCat("result ", i, " is not an array"));
    }
    const std::string diff = Compare(results[i].array, outputs[i], c.rtol, c.atol);
    if (!diff.empty()) return absl::InternalError(absl::StrCat("result ", i, ": ", diff));
  }
  return absl::OkStatus();
}

TEST(HloImportTest, JaxBatteryMatchesXlaCpu) {
  const std::vector<Case> cases = Cases();
  ASSERT_GE(cases.size(), 15u) << "cases.txt missing or short: run gen_testdata.py";
  const auto expected_failures = ExpectedFailures();
  int passed = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    absl::Status s = RunCase(c);
    auto xf = expected_failures.find(c.name);
    if (xf != expected_failures.end()) {
      EXPECT_FALSE(s.ok()) << c.name << " passes now: remove it from expected_failures.txt";
      std::cout << "[ XFAIL    ] " << c.name << ":" << xf->second << "\n  " << s.message() << "\n";
      continue;
    }
    EXPECT_TRUE(s.ok()) << c.name << ": " << s.message();
    if (s.ok()) {
      ++passed;
      std::cout << "[ PASS     ] " << c.name << "\n";
    }
  }
  std::cout << passed << " of " << cases.size() << " HLO cases match XLA:CPU\n";
}

std::unique_ptr<ir::Module> Import(const std::string& name) {
  const std::string hlo = ReadFile(std::string(EMBER_HLO_TESTDATA) + "/" + name + ".hlo.pb");
  auto module = ImportHloModuleProto(Bytes(hlo));
  EXPECT_TRUE(module.ok()) << module.status().message();
  return module.ok() ? *std::move(module) : nullptr;
}

TEST(HloImportTest, DonationBecomesAliasingOutput) {
  // jax.jit(f, donate_argnums=(0,)): parameter 0 aliases an output; parameter 1 does not.
  std::unique_ptr<ir::Module> m = Import("donate");
  ASSERT_NE(m, nullptr);
  const ir::Computation* main = m->entry();
  ASSERT_NE(main, nullptr);
  ASSERT_EQ(main->arg_attributes().size(), 2u);
  const ir::Attribute* alias = main->arg_attributes()[0].Find("tf.aliasing_output");
  ASSERT_NE(alias, nullptr);
  EXPECT_EQ(alias->kind, ir::Attribute::Kind::kInt);
  EXPECT_GE(alias->i, 0);
  EXPECT_LT(alias->i, 2);
  EXPECT_EQ(main->arg_attributes()[1].Find("tf.aliasing_output"), nullptr);
}

TEST(HloImportTest, MetadataBecomesLocation) {
  std::unique_ptr<ir::Module> m = Import("elementwise_f32");
  ASSERT_NE(m, nullptr);
  bool found = false;
  for (const auto& inst : m->entry()->instructions()) {
    const ir::Location& loc = inst->location();
    if (absl::StrContains(loc.file, "gen_testdata.py") && loc.line > 0 &&
        absl::StrContains(loc.name, "sin")) {
      found = true;
    }
  }
  EXPECT_TRUE(found) << m->ToString();
}

TEST(HloImportTest, TuplesAreFlattened) {
  // The while loop of control_flow carries a (s64/s32, f32[3]) tuple: no IR value is a tuple.
  std::unique_ptr<ir::Module> m = Import("control_flow");
  ASSERT_NE(m, nullptr);
  int whiles = 0;
  for (const auto& c : m->computations()) {
    for (const auto& p : c->parameters()) EXPECT_FALSE(p->type().is_tuple());
    for (const auto& inst : c->instructions()) {
      for (size_t i = 0; i < inst->num_results(); ++i) {
        EXPECT_FALSE(inst->result(i)->type().is_tuple()) << inst->Describe();
      }
      if (inst->opcode() == ir::Opcode::kWhile) {
        ++whiles;
        EXPECT_GE(inst->operands().size(), 2u);
      }
    }
  }
  EXPECT_GE(whiles, 2);
}

// Hand-built modules for error paths.
hloproto::HloModuleProto OneOpModule(const std::string& opcode) {
  hloproto::HloModuleProto m;
  m.set_name("m");
  m.set_entry_computation_name("main");
  m.set_entry_computation_id(1);
  hloproto::HloComputationProto* c = m.add_computations();
  c->set_name("main");
  c->set_id(1);
  c->set_root_id(2);
  hloproto::HloInstructionProto* p = c->add_instructions();
  p->set_name("x");
  p->set_opcode("parameter");
  p->set_id(1);
  p->mutable_shape()->set_element_type(11);  // F32
  p->mutable_shape()->add_dimensions(4);
  hloproto::HloInstructionProto* op = c->add_instructions();
  op->set_name("weird.7");
  op->set_opcode(opcode);
  op->set_id(2);
  op->add_operand_ids(1);
  *op->mutable_shape() = p->shape();
  return m;
}

// Appends instruction `name` = `opcode`(operand ids) with id `id` and shape `shape` to `c`.
hloproto::HloInstructionProto* AddInstruction(hloproto::HloComputationProto* c,
                                              const std::string& name, const std::string& opcode,
                                              int64_t id, const std::vector<int64_t>& operands,
                                              const hloproto::ShapeProto& shape) {
  hloproto::HloInstructionProto* inst = c->add_instructions();
  inst->set_name(name);
  inst->set_opcode(opcode);
  inst->set_id(id);
  for (int64_t operand : operands) inst->add_operand_ids(operand);
  *inst->mutable_shape() = shape;
  return inst;
}

absl::StatusOr<std::unique_ptr<ir::Module>> ImportProto(const hloproto::HloModuleProto& m) {
  const std::string bytes = m.SerializeAsString();
  return ImportHloModuleProto(Bytes(bytes));
}

// Imports and verifies `m`, then runs its entry on the reference evaluator with the f32[4]
// argument x = {1.5, -2, 0.25, 8}; the first result's values.
absl::StatusOr<std::vector<float>> RunOnX(const hloproto::HloModuleProto& m) {
  EMBER_ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> module, ImportProto(m));
  EMBER_RETURN_IF_ERROR(ir::Verify(*module));
  EMBER_ASSIGN_OR_RETURN(ir::Literal x,
                         ir::Literal::FromValues<float>({4}, std::vector<float>{1.5f, -2, 0.25f, 8}));
  eval::Evaluator evaluator;
  std::vector<eval::EvalValue> args;
  args.push_back(eval::EvalValue::Array(std::move(x)));
  EMBER_ASSIGN_OR_RETURN(std::vector<eval::EvalValue> out,
                         evaluator.Run(*module->entry(), std::move(args)));
  EMBER_ASSIGN_OR_RETURN(auto values, out.at(0).array.data<float>());
  return std::vector<float>(values.begin(), values.end());
}

TEST(HloImportTest, HandBuiltModuleImportsAndRuns) {
  absl::StatusOr<std::vector<float>> values = RunOnX(OneOpModule("negate"));
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ(*values, (std::vector<float>{-1.5f, 2, -0.25f, -8}));
}

// TensorFlow 2.21's XLA writes instruction ids as (computation id << 32 | own id), operand ids as
// own ids and the root id in the long form.
TEST(HloImportTest, LongInstructionIdsWithShortOperandIds) {
  hloproto::HloModuleProto m = OneOpModule("subtract");
  hloproto::HloComputationProto* c = m.mutable_computations(0);
  const int64_t high = int64_t{1} << 32;
  c->mutable_instructions(0)->set_id(high | 1);
  hloproto::HloInstructionProto* op = c->mutable_instructions(1);
  op->set_id(high | 2);
  op->add_operand_ids(1);  // x - x
  hloproto::HloInstructionProto* neg =
      AddInstruction(c, "sum.3", "add", high | 3, {2, 1}, op->shape());
  c->set_root_id(high | 3);
  absl::StatusOr<std::vector<float>> values = RunOnX(m);
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ(*values, (std::vector<float>{1.5f, -2, 0.25f, 8}));  // (x - x) + x

  // Two instructions whose own ids agree are one id reused, whatever their high bits.
  neg->set_id((int64_t{7} << 32) | 2);
  c->set_root_id(neg->id());
  auto reused = ImportProto(m);
  ASSERT_FALSE(reused.ok());
  EXPECT_TRUE(absl::StrContains(reused.status().message(), "is reused")) << reused.status();
}

// A TensorFlow 2.21 train step's shape: a tuple root and a called computation, every id in the long
// form (its computation's id in the high 32 bits, over 2^32 in both), and an input/output alias
// into the root tuple, which must still find the root's shape.
TEST(HloImportTest, LongIdsInCalledComputationsAndAliasIntoTupleRoot) {
  hloproto::HloModuleProto m = OneOpModule("negate");
  hloproto::HloComputationProto* main = m.mutable_computations(0);
  const int64_t main_high = int64_t{5} << 32;
  const int64_t sq_high = int64_t{6} << 32;
  const hloproto::ShapeProto f32x4 = main->instructions(0).shape();
  // %square(y) = y * y, called from main.
  hloproto::HloComputationProto* sq = m.add_computations();
  sq->set_name("square");
  sq->set_id(6);
  AddInstruction(sq, "y", "parameter", sq_high | 1, {}, f32x4);
  AddInstruction(sq, "yy", "multiply", sq_high | 2, {1, 1}, f32x4);
  sq->set_root_id(sq_high | 2);
  // main(x) = (-x, square(x)), with x aliased to result {1}.
  m.set_entry_computation_id(5);
  main->set_id(5);
  main->mutable_instructions(0)->set_id(main_high | 1);
  main->mutable_instructions(1)->set_id(main_high | 2);
  AddInstruction(main, "call.3", "call", main_high | 3, {1}, f32x4)->add_called_computation_ids(6);
  hloproto::ShapeProto pair;
  pair.set_element_type(13);  // TUPLE
  *pair.add_tuple_shapes() = f32x4;
  *pair.add_tuple_shapes() = f32x4;
  AddInstruction(main, "tuple.4", "tuple", main_high | 4, {2, 3}, pair);
  main->set_root_id(main_high | 4);
  auto* alias = m.mutable_input_output_alias()->add_entries();
  alias->add_output_shape_index(1);
  alias->set_parameter_number(0);
  alias->set_kind(1);  // MAY_ALIAS

  absl::StatusOr<std::unique_ptr<ir::Module>> module = ImportProto(m);
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_TRUE(ir::Verify(**module).ok());
  const ir::Attribute* aliased = (*module)->entry()->arg_attributes()[0].Find("tf.aliasing_output");
  ASSERT_NE(aliased, nullptr);
  EXPECT_EQ(aliased->i, 1);
  auto x = ir::Literal::FromValues<float>({4}, std::vector<float>{1.5f, -2, 0.25f, 8});
  ASSERT_TRUE(x.ok());
  eval::Evaluator evaluator;
  std::vector<eval::EvalValue> args;
  args.push_back(eval::EvalValue::Array(*std::move(x)));
  auto out = evaluator.Run(*(*module)->entry(), std::move(args));
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  auto negated = (*out)[0].array.data<float>();
  auto squared = (*out)[1].array.data<float>();
  ASSERT_TRUE(negated.ok() && squared.ok());
  EXPECT_EQ(std::vector<float>(negated->begin(), negated->end()),
            (std::vector<float>{-1.5f, 2, -0.25f, -8}));
  EXPECT_EQ(std::vector<float>(squared->begin(), squared->end()),
            (std::vector<float>{2.25f, 4, 0.0625f, 64}));

  // An alias into a result the tuple does not have is an error naming the parameter.
  alias->set_output_shape_index(0, 2);
  absl::StatusOr<std::unique_ptr<ir::Module>> bad = ImportProto(m);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "input_output_alias entry for parameter 0"))
      << bad.status();
}

// XLA's dynamic dimensions are bounded `?` dims: set-dimension-size makes one, get-dimension-size
// reads it, and the ops between keep it.
TEST(HloImportTest, DynamicDimensionsAreBounded) {
  hloproto::HloModuleProto m = OneOpModule("negate");
  hloproto::HloComputationProto* c = m.mutable_computations(0);
  hloproto::HloInstructionProto* n = c->add_instructions();
  n->set_name("n");
  n->set_opcode("parameter");
  n->set_id(3);
  n->set_parameter_number(1);
  n->mutable_shape()->set_element_type(4);  // S32
  hloproto::HloInstructionProto* sds = c->add_instructions();
  sds->set_name("sds");
  sds->set_opcode("set-dimension-size");
  sds->set_id(4);
  sds->add_operand_ids(1);
  sds->add_operand_ids(3);
  sds->add_dimensions(0);
  *sds->mutable_shape() = c->instructions(0).shape();
  sds->mutable_shape()->add_is_dynamic_dimension(true);
  // The negate (id 2) now reads the dynamic value and is dynamic too.
  hloproto::HloInstructionProto* neg = c->mutable_instructions(1);
  neg->clear_operand_ids();
  neg->add_operand_ids(4);
  *neg->mutable_shape() = sds->shape();
  // Instructions in definition order: x, n, sds, negate.
  std::swap(*c->mutable_instructions(1), *c->mutable_instructions(3));
  std::swap(*c->mutable_instructions(1), *c->mutable_instructions(2));
  auto module = ImportProto(m);
  ASSERT_TRUE(module.ok()) << module.status().message();
  ASSERT_TRUE(ir::Verify(**module).ok()) << ir::Verify(**module);
  const std::string text = (*module)->ToString();
  EXPECT_TRUE(absl::StrContains(text, "set_dimension_size(%0, %1) {dimension = 0} : "
                                      "tensor<?xf32, #stablehlo.bounds<4>>"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "negate(%2) : tensor<?xf32, #stablehlo.bounds<4>>")) << text;
}

TEST(HloImportTest, UnknownOpcodeNamesOpcodeAndInstruction) {
  auto m = ImportProto(OneOpModule("frobnicate"));
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(absl::StrContains(m.status().message(), "frobnicate")) << m.status().message();
  EXPECT_TRUE(absl::StrContains(m.status().message(), "weird.7")) << m.status().message();
}

TEST(HloImportTest, BadReferencesAreErrors) {
  hloproto::HloModuleProto undefined = OneOpModule("negate");
  undefined.mutable_computations(0)->mutable_instructions(1)->set_operand_ids(0, 99);
  auto a = ImportProto(undefined);
  ASSERT_FALSE(a.ok());
  EXPECT_TRUE(absl::StrContains(a.status().message(), "not defined")) << a.status().message();

  hloproto::HloModuleProto bad_root = OneOpModule("negate");
  bad_root.mutable_computations(0)->set_root_id(42);
  EXPECT_FALSE(ImportProto(bad_root).ok());

  hloproto::HloModuleProto self_call = OneOpModule("call");
  self_call.mutable_computations(0)->mutable_instructions(1)->add_called_computation_ids(1);
  auto c = ImportProto(self_call);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::StrContains(c.status().message(), "calls itself")) << c.status().message();

  // A dynamic-dimension flag per dimension, or none.
  hloproto::HloModuleProto dynamic = OneOpModule("negate");
  dynamic.mutable_computations(0)
      ->mutable_instructions(0)
      ->mutable_shape()
      ->add_is_dynamic_dimension(true);
  dynamic.mutable_computations(0)
      ->mutable_instructions(0)
      ->mutable_shape()
      ->add_is_dynamic_dimension(false);
  auto d = ImportProto(dynamic);
  ASSERT_FALSE(d.ok());
  EXPECT_TRUE(absl::StrContains(d.status().message(), "2 dynamic-dimension flags for 1"))
      << d.status().message();

  hloproto::HloModuleProto bad_literal = OneOpModule("negate");
  auto* k = bad_literal.mutable_computations(0)->mutable_instructions(1);
  k->set_opcode("constant");
  k->clear_operand_ids();
  *k->mutable_literal()->mutable_shape() = k->shape();
  k->mutable_literal()->add_f32s(1.0f);  // 1 value for f32[4]
  auto b = ImportProto(bad_literal);
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(absl::StrContains(b.status().message(), "f32s")) << b.status().message();

  EXPECT_FALSE(ImportHloModuleProto({}).ok());  // no computations
}

TEST(HloImportTest, MalformedAndTruncatedProtosAreCleanErrors) {
  const std::string garbage = "\xff\xff\xff\xff\x0f garbage";
  auto g = ImportHloModuleProto(Bytes(garbage));
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(absl::StrContains(g.status().message(), "HloModuleProto")) << g.status().message();
  // Every prefix (at a stride) and byte flips of a real module: an error or a module, never a
  // crash; a strict prefix that cuts a field must fail.
  const std::string hlo = ReadFile(std::string(EMBER_HLO_TESTDATA) + "/control_flow.hlo.pb");
  ASSERT_FALSE(hlo.empty());
  int errors = 0;
  for (size_t n = 0; n < hlo.size(); n += 7) {
    auto m = ImportHloModuleProto(Bytes(hlo.substr(0, n)));
    if (!m.ok()) {
      ++errors;
      EXPECT_FALSE(m.status().message().empty());
    } else {
      (void)ir::Verify(**m);
    }
  }
  EXPECT_GT(errors, static_cast<int>(hlo.size() / 7) / 2);
  for (size_t i = 0; i < hlo.size(); i += 13) {
    std::string flipped = hlo;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x5a);
    auto m = ImportHloModuleProto(Bytes(flipped));
    if (m.ok()) (void)ir::Verify(**m);
  }
}

TEST(HloImportTest, IotaReplicaGroupsAndShardings) {
  // all-reduce over groups given as iota(4).reshape(2, 2).T = {{0, 2}, {1, 3}}, on a parameter
  // sharded {devices=[2]<=[2]}.
  hloproto::HloModuleProto m = OneOpModule("all-reduce");
  hloproto::HloComputationProto* add = m.add_computations();
  add->set_name("sum");
  add->set_id(7);
  add->set_root_id(3);
  for (int i = 0; i < 2; ++i) {
    hloproto::HloInstructionProto* p = add->add_instructions();
    p->set_name(absl::StrCat("p", i));
    p->set_opcode("parameter");
    p->set_id(i + 1);
    p->set_parameter_number(i);
    p->mutable_shape()->set_element_type(11);
  }
  hloproto::HloInstructionProto* sum = add->add_instructions();
  sum->set_name("s");
  sum->set_opcode("add");
  sum->set_id(3);
  sum->add_operand_ids(1);
  sum->add_operand_ids(2);
  sum->mutable_shape()->set_element_type(11);
  auto* ar = m.mutable_computations(0)->mutable_instructions(1);
  ar->add_called_computation_ids(7);
  auto* iota = ar->mutable_collective_device_list()->mutable_iota_replica_group_list();
  iota->set_num_replica_groups(2);
  iota->set_num_devices_per_group(2);
  iota->add_iota_reshape_dims(2);
  iota->add_iota_reshape_dims(2);
  iota->add_iota_transpose_perm(1);
  iota->add_iota_transpose_perm(0);
  auto* sharding = m.mutable_computations(0)->mutable_instructions(0)->mutable_sharding();
  sharding->set_type(3);  // OTHER
  sharding->add_tile_assignment_dimensions(2);
  sharding->add_iota_reshape_dims(2);
  sharding->add_iota_transpose_perm(0);
  auto module = ImportProto(m);
  ASSERT_TRUE(module.ok()) << module.status().message();
  ASSERT_TRUE(ir::Verify(**module).ok()) << ir::Verify(**module).message();
  const ir::Computation* main = (*module)->entry();
  const ir::Attribute* s = main->arg_attributes()[0].Find("mhlo.sharding");
  ASSERT_NE(s, nullptr);
  // Typed: a split over an inline mesh of the tile assignment (iota 0, 1).
  ASSERT_EQ(s->kind, ir::Attribute::Kind::kSharding);
  ASSERT_TRUE(s->sharding->inline_mesh.has_value());
  EXPECT_EQ(ir::GspmdString(*s->sharding, &*s->sharding->inline_mesh, 1), "{devices=[2]0,1}");
  const ir::Instruction* all_reduce = nullptr;
  for (const auto& inst : main->instructions()) {
    if (inst->opcode() == ir::Opcode::kAllReduce) all_reduce = inst.get();
  }
  ASSERT_NE(all_reduce, nullptr);
  const ir::Attribute* groups = all_reduce->attribute("replica_groups");
  ASSERT_NE(groups, nullptr);
  ASSERT_NE(groups->literal, nullptr);
  auto values = groups->literal->data<int64_t>();
  ASSERT_TRUE(values.ok());
  EXPECT_EQ(groups->literal->shape().dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(std::vector<int64_t>(values->begin(), values->end()),
            (std::vector<int64_t>{0, 2, 1, 3}));

  // An inconsistent iota list is an error, not a crash.
  iota->set_num_replica_groups(int64_t{1} << 62);
  EXPECT_FALSE(ImportProto(m).ok());
}

// Small builder for hand-written computations: f32[4] values unless a shape is given.
struct CompBuilder {
  hloproto::HloComputationProto* c;
  int64_t next_id;
  hloproto::HloInstructionProto* Add(const std::string& name, const std::string& opcode,
                                     std::vector<int64_t> operands, int32_t type = 11,
                                     std::vector<int64_t> dims = {4}) {
    hloproto::HloInstructionProto* i = c->add_instructions();
    i->set_name(name);
    i->set_opcode(opcode);
    i->set_id(next_id++);
    for (int64_t o : operands) i->add_operand_ids(o);
    i->mutable_shape()->set_element_type(type);
    for (int64_t d : dims) i->mutable_shape()->add_dimensions(d);
    c->set_root_id(i->id());
    return i;
  }
};

TEST(HloImportTest, PredicatedConditionalWithTupleOperand) {
  // TensorFlow's form: conditional(pred, tuple(x, y), x) with a tuple-taking true branch.
  hloproto::HloModuleProto m;
  m.set_name("cond");
  auto* t = m.add_computations();
  t->set_name("true_branch");
  t->set_id(1);
  CompBuilder tb{t, 100};
  auto* tp = tb.Add("tp", "parameter", {}, 13, {});
  for (int k = 0; k < 2; ++k) {
    auto* e = tp->mutable_shape()->add_tuple_shapes();
    e->set_element_type(11);
    e->add_dimensions(4);
  }
  auto* g0 = tb.Add("g0", "get-tuple-element", {tp->id()});
  auto* g1 = tb.Add("g1", "get-tuple-element", {tp->id()});
  g1->set_tuple_index(1);
  tb.Add("mul", "multiply", {g0->id(), g1->id()});
  auto* f = m.add_computations();
  f->set_name("false_branch");
  f->set_id(2);
  CompBuilder fb{f, 200};
  auto* fp = fb.Add("fp", "parameter", {});
  fb.Add("neg", "negate", {fp->id()});
  auto* e = m.add_computations();
  e->set_name("main");
  e->set_id(3);
  m.set_entry_computation_id(3);
  CompBuilder eb{e, 300};
  auto* p = eb.Add("p", "parameter", {}, 1, {});
  auto* x = eb.Add("x", "parameter", {});
  x->set_parameter_number(1);
  auto* y = eb.Add("y", "parameter", {});
  y->set_parameter_number(2);
  auto* tup = eb.Add("t", "tuple", {x->id(), y->id()}, 13, {});
  *tup->mutable_shape() = tp->shape();
  auto* cond = eb.Add("c", "conditional", {p->id(), tup->id(), x->id()});
  cond->add_called_computation_ids(1);
  cond->add_called_computation_ids(2);
  auto module = ImportProto(m);
  ASSERT_TRUE(module.ok()) << module.status().message();
  ASSERT_TRUE(ir::Verify(**module).ok()) << ir::Verify(**module).message();
  for (bool pred : {true, false}) {
    eval::Evaluator evaluator;
    std::vector<eval::EvalValue> args;
    args.push_back(eval::EvalValue::Array(*ir::Literal::Scalar<bool>(pred)));
    args.push_back(eval::EvalValue::Array(
        *ir::Literal::FromValues<float>({4}, std::vector<float>{1, 2, 3, 4})));
    args.push_back(eval::EvalValue::Array(
        *ir::Literal::FromValues<float>({4}, std::vector<float>{0.5f, -1, 2, 10})));
    auto out = evaluator.Run(*(*module)->entry(), std::move(args));
    ASSERT_TRUE(out.ok()) << out.status().message();
    auto v = (*out)[0].array.data<float>();
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(std::vector<float>(v->begin(), v->end()),
              pred ? std::vector<float>({0.5f, -2, 6, 40}) : std::vector<float>({-1, -2, -3, -4}));
  }
}

TEST(HloImportTest, ExponentialFusionNestingIsAnError) {
  // Computation k fuses computation k+1 twice: 2^40 inlined copies if nothing stopped it.
  constexpr int kDepth = 40;
  hloproto::HloModuleProto m;
  m.set_name("bomb");
  for (int k = kDepth; k >= 0; --k) {
    auto* c = m.add_computations();
    c->set_name(absl::StrCat("c", k));
    c->set_id(k + 1);
    CompBuilder b{c, 1000 * (k + 1)};
    auto* p = b.Add("p", "parameter", {});
    if (k == kDepth) {
      b.Add("n", "negate", {p->id()});
      continue;
    }
    auto* f1 = b.Add("f1", "fusion", {p->id()});
    f1->add_called_computation_ids(k + 2);
    auto* f2 = b.Add("f2", "fusion", {p->id()});
    f2->add_called_computation_ids(k + 2);
    b.Add("s", "add", {f1->id(), f2->id()});
  }
  m.set_entry_computation_id(1);  // c0
  auto module = ImportProto(m);
  ASSERT_FALSE(module.ok());
  EXPECT_TRUE(absl::StrContains(module.status().message(), "expands")) << module.status().message();
}

TEST(HloImportTest, WithConfigWrapper) {
  hloproto::HloModuleProtoWithConfig wrapper;
  *wrapper.mutable_hlo_module() = OneOpModule("abs");
  const std::string bytes = wrapper.SerializeAsString();
  auto m = ImportHloModuleProtoWithConfig(Bytes(bytes));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_TRUE(ir::Verify(**m).ok());
}

}  // namespace
}  // namespace ember::frontend
