// StableHLO text from Ember's IR. Ops are written in MLIR's generic form ("stablehlo.add"(...)
// {attributes} : (operand types) -> result types), so one writer serves every op; what differs
// per op is how the IR's flattened attributes fold back into StableHLO's structured ones (dot,
// convolution, gather and scatter dimension numbers, channel handles, enums).
#include "compiler/export/stablehlo_text.h"

#include <bit>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "compiler/ir/attribute.h"
#include "compiler/ir/element_type.h"
#include "compiler/ir/literal.h"
#include "compiler/ir/opcode.h"

namespace ember::compiler {
namespace {

using ir::Attribute;
using ir::Opcode;
using Kind = ir::Attribute::Kind;

// An MLIR string literal: printable ASCII as it is, everything else as \XX.
std::string Quoted(absl::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      absl::StrAppend(&out, "\\", absl::Hex(c, absl::kZeroPad2));
    }
  }
  return out + "\"";
}

// @name, quoted where the name is not a bare identifier (JAX names functions "<lambda>").
std::string Symbol(absl::string_view name) {
  // MLIR's bare-id: (letter | _) (letter | digit | [_$.])*. A '-' (JAX names jit(scatter-add)'s
  // module jit_scatter-add) needs the quoted form: the parser stops at it.
  bool bare =
      !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name) {
    bare &= std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.';
  }
  return absl::StrCat("@", bare ? std::string(name) : Quoted(name));
}

std::string TensorTypeOf(const ir::Shape& shape) {
  std::string text = "tensor<";
  for (int64_t d : shape.dims()) absl::StrAppend(&text, d, "x");
  return absl::StrCat(text, std::string(ir::ElementTypeName(shape.element_type())), ">");
}

// Nested lists of `element(i)` in the shape's row-major order: [[a, b], [c, d]].
template <typename Fn>
void AppendNested(const std::vector<int64_t>& dims, size_t dim, int64_t& next, Fn element,
                  std::string* out) {
  if (dim == dims.size()) {
    absl::StrAppend(out, element(next++));
    return;
  }
  absl::StrAppend(out, "[");
  for (int64_t i = 0; i < dims[dim]; ++i) {
    if (i > 0) absl::StrAppend(out, ", ");
    AppendNested(dims, dim + 1, next, element, out);
  }
  absl::StrAppend(out, "]");
}

// dense<...> : tensor<...>. Pred is written as true/false lists (MLIR packs i1 hex data in its
// own way); everything else of whole bytes as hex of the row-major bytes, one element's bytes
// for a splat.
absl::StatusOr<std::string> DenseText(const ir::Literal& literal) {
  const ir::Shape& shape = literal.shape();
  const std::string type = TensorTypeOf(shape);
  if (!shape.layout().IsRowMajor()) {
    return absl::UnimplementedError(
        absl::StrCat("a constant of ", shape.ToString(), " in a layout that is not row-major"));
  }
  const int64_t count = shape.element_count();
  if (count == 0) return absl::StrCat("dense<> : ", type);
  const absl::Span<const uint8_t> bytes = literal.bytes();
  const ir::ElementType et = shape.element_type();
  if (et == ir::ElementType::kPred) {
    bool splat = true;
    for (uint8_t b : bytes) splat &= b == bytes[0];
    if (splat) return absl::StrCat("dense<", bytes[0] ? "true" : "false", "> : ", type);
    std::string text = "dense<";
    int64_t next = 0;
    std::vector<int64_t> dims(shape.dims().begin(), shape.dims().end());
    AppendNested(
        dims, 0, next, [&](int64_t i) { return bytes[i] ? "true" : "false"; }, &text);
    return absl::StrCat(text, "> : ", type);
  }
  if (ir::IsSubByte(et) || static_cast<int64_t>(bytes.size()) % count != 0) {
    return absl::UnimplementedError(
        absl::StrCat("a constant of the sub-byte type ", std::string(ir::ElementTypeName(et))));
  }
  const size_t width = bytes.size() / count;
  bool splat = true;
  for (size_t i = width; i < bytes.size() && splat; i += width) {
    splat = std::memcmp(bytes.data(), bytes.data() + i, width) == 0;
  }
  std::string text = "dense<\"0x";
  for (size_t i = 0; i < (splat ? width : bytes.size()); ++i) {
    absl::StrAppend(&text, absl::Hex(bytes[i], absl::kZeroPad2));
  }
  return absl::StrCat(text, "\"> : ", type);
}

// Replica groups and source-target pairs: a 2-D i64 tensor, written in decimal.
absl::StatusOr<std::string> GroupsText(const Attribute& a, absl::string_view name) {
  if (a.kind != Kind::kLiteral || !a.literal) {
    return absl::UnimplementedError(
        absl::StrCat("'", name, "' given by mesh axes, not as a list of device groups"));
  }
  absl::StatusOr<absl::Span<const int64_t>> ids = a.literal->data<int64_t>();
  if (!ids.ok() || a.literal->shape().rank() != 2 || ids->empty()) return DenseText(*a.literal);
  std::string text = "dense<";
  int64_t next = 0;
  std::vector<int64_t> dims(a.literal->shape().dims().begin(), a.literal->shape().dims().end());
  AppendNested(
      dims, 0, next, [&](int64_t i) { return (*ids)[i]; }, &text);
  return absl::StrCat(text, "> : ", TensorTypeOf(a.literal->shape()));
}

std::string IntList(const std::vector<int64_t>& v) {
  return absl::StrCat("[", absl::StrJoin(v, ", "), "]");
}

std::string I64Array(const std::vector<int64_t>& v) {
  return v.empty() ? "array<i64>" : absl::StrCat("array<i64: ", absl::StrJoin(v, ", "), ">");
}

std::string FloatText(double v, ir::ElementType type) {
  if (type == ir::ElementType::kF64) {
    return absl::StrCat("0x", absl::Hex(std::bit_cast<uint64_t>(v), absl::kZeroPad16), " : f64");
  }
  return absl::StrCat(
      "0x", absl::Hex(std::bit_cast<uint32_t>(static_cast<float>(v)), absl::kZeroPad8), " : f32");
}

// An attribute with no op-specific spelling (custom-call backend configs, FFI dictionaries).
absl::StatusOr<std::string> GenericText(const Attribute& a) {
  auto scalar = [&](ir::ElementType fallback) {
    return std::string(
        ir::ElementTypeName(a.scalar_type == ir::ElementType::kInvalid ? fallback : a.scalar_type));
  };
  switch (a.kind) {
    case Kind::kBool:
      return std::string(a.b ? "true" : "false");
    case Kind::kInt:
      return absl::StrCat(a.i, " : ", scalar(ir::ElementType::kS64));
    case Kind::kFloat:
      return FloatText(
          a.f, a.scalar_type == ir::ElementType::kInvalid ? ir::ElementType::kF64 : a.scalar_type);
    case Kind::kString:
      return Quoted(a.s);
    case Kind::kInts:
      return a.ints.empty() ? absl::StrCat("array<", scalar(ir::ElementType::kS64), ">")
                            : absl::StrCat("array<", scalar(ir::ElementType::kS64), ": ",
                                           absl::StrJoin(a.ints, ", "), ">");
    case Kind::kLiteral:
      if (!a.literal) break;
      return DenseText(*a.literal);
    case Kind::kList: {
      std::vector<std::string> parts;
      for (const Attribute& e : a.list) {
        EMBER_ASSIGN_OR_RETURN(std::string p, GenericText(e));
        parts.push_back(std::move(p));
      }
      return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
    }
    case Kind::kDict: {
      std::vector<std::string> parts;
      for (const auto& [name, value] : a.dict) {
        EMBER_ASSIGN_OR_RETURN(std::string p, GenericText(value));
        parts.push_back(absl::StrCat(Quoted(name), " = ", p));
      }
      return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
    }
    default:
      break;
  }
  return absl::UnimplementedError(absl::StrCat("the attribute ", a.ToString()));
}

// The IR keeps StableHLO's structured attributes flattened (compiler/frontend/import): these
// name the fields of each, in StableHLO's order.
constexpr const char* kDotFields[] = {"lhs_batching_dimensions", "rhs_batching_dimensions",
                                      "lhs_contracting_dimensions", "rhs_contracting_dimensions"};
constexpr const char* kConvFields[] = {
    "input_batch_dimension",           "input_feature_dimension",
    "input_spatial_dimensions",        "kernel_input_feature_dimension",
    "kernel_output_feature_dimension", "kernel_spatial_dimensions",
    "output_batch_dimension",          "output_feature_dimension",
    "output_spatial_dimensions"};
constexpr const char* kGatherFields[] = {"offset_dims",           "collapsed_slice_dims",
                                         "operand_batching_dims", "start_indices_batching_dims",
                                         "start_index_map",       "index_vector_dim"};
constexpr const char* kScatterFields[] = {
    "update_window_dims",           "inserted_window_dims",
    "input_batching_dims",          "scatter_indices_batching_dims",
    "scatter_dims_to_operand_dims", "index_vector_dim"};

template <size_t N>
bool IsField(const char* const (&fields)[N], absl::string_view name) {
  for (const char* f : fields) {
    if (name == f) return true;
  }
  return false;
}

// `#stablehlo.<mnemonic><f = [..], g = n>` from the flattened fields present (empty lists left
// out, as StableHLO prints them; `raw` for convolution, whose compact form needs no such care).
template <size_t N>
std::string StructText(const ir::Instruction& inst, absl::string_view mnemonic,
                       const char* const (&fields)[N], bool raw = false) {
  std::vector<std::string> parts;
  for (const char* f : fields) {
    const Attribute* a = inst.attribute(f);
    if (a == nullptr) continue;
    if (a->kind == Kind::kInts) {
      if (!a->ints.empty() || raw) parts.push_back(absl::StrCat(f, " = ", IntList(a->ints)));
    } else if (a->kind == Kind::kInt) {
      parts.push_back(absl::StrCat(f, " = ", a->i));
    }
  }
  return absl::StrCat("#stablehlo.", mnemonic, "<", raw ? "raw " : "", absl::StrJoin(parts, ", "),
                      ">");
}

bool IsGather(Opcode op) { return op == Opcode::kGather || op == Opcode::kDynamicGather; }
bool IsConv(Opcode op) { return op == Opcode::kConvolution || op == Opcode::kDynamicConv; }

// StableHLO's enum attributes, by the attribute's name.
const char* EnumOf(absl::string_view name) {
  if (name == "comparison_direction") return "comparison_direction";
  if (name == "compare_type") return "comparison_type";
  if (name == "fft_type") return "fft_type";
  if (name == "rng_distribution") return "rng_distribution";
  if (name == "rng_algorithm") return "rng_algorithm";
  if (name == "transpose_a") return "transpose";
  return nullptr;
}

absl::Status Unsupported(const ir::Instruction& inst, absl::string_view what) {
  return absl::UnimplementedError(
      absl::StrCat(inst.Describe(), ": the text form does not write ", what, " yet"));
}

// The attribute dictionary of `inst` ("" when it has none).
absl::StatusOr<std::string> AttributesText(const ir::Instruction& inst) {
  const Opcode op = inst.opcode();
  std::vector<std::string> parts;
  bool wrote_dot = false, wrote_conv = false, wrote_gather = false, wrote_scatter = false;
  for (const auto& [name, a] : inst.attributes().entries()) {
    // Discardable attributes: those a converter reads (mhlo.backend_config of custom calls,
    // mhlo.frontend_attributes) as they are; shardings (the program runs on its blocks now) and
    // Ember's own annotations not at all.
    if (name.find('.') != std::string::npos) {
      if (absl::StartsWith(name, "ember.") || absl::StartsWith(name, "sdy.") ||
          name == "mhlo.sharding") {
        continue;
      }
      if (absl::StatusOr<std::string> text = GenericText(a); text.ok()) {
        parts.push_back(absl::StrCat(name, " = ", *text));
      }
      continue;
    }
    if (op == Opcode::kDotGeneral && IsField(kDotFields, name)) {
      if (!wrote_dot)
        parts.push_back("dot_dimension_numbers = " + StructText(inst, "dot", kDotFields));
      wrote_dot = true;
      continue;
    }
    if (IsConv(op) && IsField(kConvFields, name)) {
      if (!wrote_conv) {
        parts.push_back("dimension_numbers = " + StructText(inst, "conv", kConvFields, true));
      }
      wrote_conv = true;
      continue;
    }
    if (IsGather(op) && IsField(kGatherFields, name)) {
      if (!wrote_gather) {
        parts.push_back("dimension_numbers = " + StructText(inst, "gather", kGatherFields));
      }
      wrote_gather = true;
      continue;
    }
    if (op == Opcode::kScatter && IsField(kScatterFields, name)) {
      if (!wrote_scatter) {
        parts.push_back("scatter_dimension_numbers = " +
                        StructText(inst, "scatter", kScatterFields));
      }
      wrote_scatter = true;
      continue;
    }
    if (const char* e = EnumOf(name); e != nullptr && a.kind == Kind::kString) {
      parts.push_back(absl::StrCat(name, " = #stablehlo<", e, " ", a.s, ">"));
      continue;
    }
    if (name == "precision_config" && a.kind == Kind::kList) {
      std::vector<std::string> p;
      for (const Attribute& e : a.list)
        p.push_back(absl::StrCat("#stablehlo<precision ", e.s, ">"));
      parts.push_back(absl::StrCat(name, " = [", absl::StrJoin(p, ", "), "]"));
      continue;
    }
    if (name == "channel_id" && a.kind == Kind::kInt) {
      if (a.i == 0) continue;
      const Attribute* type = inst.attribute("channel_type");
      parts.push_back(absl::StrCat("channel_handle = #stablehlo.channel_handle<handle = ", a.i,
                                   ", type = ", type != nullptr ? type->i : 1, ">"));
      continue;
    }
    if (name == "channel_type") continue;  // in the channel handle
    if (name == "use_global_device_ids" && a.kind == Kind::kBool) {
      if (a.b) parts.push_back(name);
      continue;
    }
    if (name == "replica_groups" || name == "source_target_pairs") {
      absl::StatusOr<std::string> groups = GroupsText(a, name);
      if (!groups.ok()) return Unsupported(inst, groups.status().message());
      parts.push_back(absl::StrCat(name, " = ", *groups));
      continue;
    }
    if (name == "padding" && a.kind == Kind::kInts && a.ints.size() % 2 == 0) {
      std::vector<std::string> pairs;
      for (size_t i = 0; i < a.ints.size(); i += 2) {
        pairs.push_back(absl::StrCat("[", a.ints[i], ", ", a.ints[i + 1], "]"));
      }
      parts.push_back(absl::StrCat(
          name, " = ",
          pairs.empty() ? "dense<>" : absl::StrCat("dense<[", absl::StrJoin(pairs, ", "), "]>"),
          " : tensor<", a.ints.size() / 2, "x2xi64>"));
      continue;
    }
    if (a.kind == Kind::kBools) {
      std::vector<std::string> v;
      for (bool b : a.bools) v.push_back(b ? "true" : "false");
      parts.push_back(
          absl::StrCat(name, " = array<i1", v.empty() ? "" : ": ", absl::StrJoin(v, ", "), ">"));
      continue;
    }
    if (op == Opcode::kCustomCall) {
      if (name == "api_version" && a.kind == Kind::kInt) {
        parts.push_back(absl::StrCat(name, " = ", a.i, " : i32"));
      } else if (name == "called_computations" && a.kind == Kind::kList) {
        std::vector<std::string> names;
        for (const Attribute& e : a.list) names.push_back(Symbol(e.s));
        parts.push_back(absl::StrCat(name, " = [", absl::StrJoin(names, ", "), "]"));
      } else if ((name == "operand_layouts" || name == "result_layouts") && a.kind == Kind::kList) {
        std::vector<std::string> layouts;
        for (const Attribute& e : a.list) {
          layouts.push_back(absl::StrCat(
              e.ints.empty() ? "dense<>" : absl::StrCat("dense<", IntList(e.ints), ">"),
              " : tensor<", e.ints.size(), "xindex>"));
        }
        parts.push_back(absl::StrCat(name, " = [", absl::StrJoin(layouts, ", "), "]"));
      } else if (name == "call_target_name" || name == "has_side_effect" ||
                 name == "backend_config" || name == "error_message") {
        absl::StatusOr<std::string> text = GenericText(a);
        if (!text.ok()) return Unsupported(inst, absl::StrCat("its '", name, "'"));
        parts.push_back(absl::StrCat(name, " = ", *text));
      } else {
        return Unsupported(inst, absl::StrCat("its '", name, "'"));
      }
      continue;
    }
    if (name == "index" || name == "exponent_bits" || name == "mantissa_bits") {
      parts.push_back(absl::StrCat(name, " = ", a.i, " : i32"));
      continue;
    }
    switch (a.kind) {
      case Kind::kInt:
        parts.push_back(absl::StrCat(name, " = ", a.i, " : i64"));
        continue;
      case Kind::kInts:
        parts.push_back(absl::StrCat(name, " = ", I64Array(a.ints)));
        continue;
      case Kind::kBool:
        parts.push_back(absl::StrCat(name, " = ", a.b ? "true" : "false"));
        continue;
      case Kind::kFloat:
        parts.push_back(absl::StrCat(name, " = ", FloatText(a.f, ir::ElementType::kF32)));
        continue;
      case Kind::kString:
        parts.push_back(absl::StrCat(name, " = ", Quoted(a.s)));
        continue;
      case Kind::kLiteral: {
        if (!a.literal) break;
        absl::StatusOr<std::string> dense = DenseText(*a.literal);
        if (!dense.ok()) return Unsupported(inst, dense.status().message());
        parts.push_back(absl::StrCat(name, " = ", *dense));
        continue;
      }
      default:
        break;
    }
    // result_accuracy, dot algorithms, composite attributes, infeed layouts, ...
    return Unsupported(inst, absl::StrCat("its '", name, "'"));
  }
  if (parts.empty()) return std::string();
  return absl::StrCat(" {", absl::StrJoin(parts, ", "), "}");
}

std::string TypeList(const std::vector<ir::ValueType>& types) {
  std::vector<std::string> t;
  for (const ir::ValueType& v : types) t.push_back(v.ToString());
  return absl::StrJoin(t, ", ");
}

// The op's source location (HLO metadata's op_name and source file and line): a NameLoc around
// a FileLineColLoc, as JAX writes them.
std::string LocationText(const ir::Location& location) {
  if (!location.known()) return "";
  std::string file_line;
  if (!location.file.empty()) {
    file_line = absl::StrCat(Quoted(location.file), ":", location.line, ":", location.column);
  }
  if (location.name.empty()) return absl::StrCat(" loc(", file_line, ")");
  return absl::StrCat(" loc(", Quoted(location.name),
                      file_line.empty() ? "" : absl::StrCat("(", file_line, ")"), ")");
}

// Writes one function: its values are named %0, %1, ... in definition order across the
// function and the regions inside it (regions may read enclosing values).
class FunctionWriter {
 public:
  explicit FunctionWriter(std::set<const ir::Computation*>* callees) : callees_(callees) {}

  absl::StatusOr<std::string> Function(const ir::Computation& f, absl::string_view name,
                                       bool is_entry, std::string opening) {
    std::string out;
    if (is_entry) {
      out = std::move(opening);
      for (size_t i = 0; i < f.parameters().size(); ++i) {
        names_[f.parameter(i)] = absl::StrCat("%arg", i);
      }
    } else {
      std::vector<std::string> params;
      for (const auto& p : f.parameters()) {
        params.push_back(absl::StrCat(Define(p.get()), ": ", p->type().ToString()));
      }
      absl::StrAppend(&out, "  func.func private ", Symbol(name), "(", absl::StrJoin(params, ", "),
                      ") -> (", TypeList(f.result_types()), ") {\n");
    }
    EMBER_RETURN_IF_ERROR(Body(f, /*in_function=*/true, "    ", &out));
    absl::StrAppend(&out, "  }\n");
    return out;
  }

 private:
  std::string Define(const ir::Value* v) {
    std::string name = absl::StrCat("%", next_++);
    names_[v] = name;
    return name;
  }

  absl::StatusOr<std::string> Use(const ir::Value* v, const ir::Instruction& inst) {
    auto it = names_.find(v);
    if (it == names_.end()) {
      return absl::InternalError(absl::StrCat(inst.Describe(), " reads a value defined nowhere"));
    }
    return it->second;
  }

  absl::Status Body(const ir::Computation& c, bool in_function, const std::string& indent,
                    std::string* out) {
    for (const auto& inst : c.instructions()) {
      EMBER_RETURN_IF_ERROR(Instruction(*inst, in_function, indent, out));
    }
    return absl::OkStatus();
  }

  absl::Status Instruction(const ir::Instruction& inst, bool in_function, const std::string& indent,
                           std::string* out) {
    const Opcode op = inst.opcode();
    if (op == Opcode::kAsyncStart || op == Opcode::kAsyncDone || op == Opcode::kComposite) {
      return Unsupported(inst, "asynchronous or composite ops");
    }
    std::vector<std::string> operands;
    std::vector<ir::ValueType> operand_types;
    for (const ir::Value* v : inst.operands()) {
      EMBER_ASSIGN_OR_RETURN(std::string name, Use(v, inst));
      operands.push_back(std::move(name));
      operand_types.push_back(v->type());
    }
    std::string attributes;
    std::string op_name;
    if (op == Opcode::kReturn) {
      op_name = in_function ? "func.return" : "stablehlo.return";
    } else if (op == Opcode::kCall) {
      if (inst.callee() == nullptr) return Unsupported(inst, "a call without a callee");
      callees_->insert(inst.callee());
      op_name = "func.call";
      attributes = absl::StrCat(" {callee = ", Symbol(inst.callee()->name()), "}");
    } else if (const Attribute* target = inst.attribute("call_target_name");
               op == Opcode::kCustomCall && target != nullptr && target->kind == Kind::kString &&
               absl::StartsWith(target->s, "chlo.")) {
      // CHLO ops Ember keeps as custom calls (compiler/frontend/import) go back to being CHLO
      // ops, with their own attributes.
      op_name = target->s;
      std::vector<std::string> parts;
      for (const auto& [name, a] : inst.attributes().entries()) {
        if (name == "call_target_name" || name == "has_side_effect" || name == "api_version") {
          continue;
        }
        absl::StatusOr<std::string> text = GenericText(a);
        if (!text.ok()) return Unsupported(inst, absl::StrCat("its '", name, "'"));
        parts.push_back(absl::StrCat(name, " = ", *text));
      }
      if (!parts.empty()) attributes = absl::StrCat(" {", absl::StrJoin(parts, ", "), "}");
    } else {
      op_name = absl::StrCat("stablehlo.", std::string(ir::OpcodeName(op)));
      EMBER_ASSIGN_OR_RETURN(attributes, AttributesText(inst));
      if (inst.callee() != nullptr) callees_->insert(inst.callee());
      // Every function a custom call names is written too: a reader that meets a dangling
      // symbol may not say so gracefully (jaxlib's HLO converter crashes).
      if (const Attribute* called = inst.attribute("called_computations");
          called != nullptr && called->kind == Kind::kList) {
        for (const Attribute& name : called->list) {
          const ir::Computation* f =
              inst.parent() == nullptr ? nullptr : inst.parent()->module()->FindFunction(name.s);
          if (f == nullptr) return Unsupported(inst, absl::StrCat("a call of @", name.s, ", which the module lacks,"));
          callees_->insert(f);
        }
      }
    }
    // Regions first: their values are named before the op's results, as MLIR's printer does
    // not require, but a reader expects definitions to come first.
    std::vector<std::string> regions;
    for (const ir::Computation* r : inst.regions()) {
      std::string text = "{\n";
      if (!r->parameters().empty()) {
        std::vector<std::string> params;
        for (const auto& p : r->parameters()) {
          params.push_back(absl::StrCat(Define(p.get()), ": ", p->type().ToString()));
        }
        absl::StrAppend(&text, indent, "^bb0(", absl::StrJoin(params, ", "), "):\n");
      }
      EMBER_RETURN_IF_ERROR(Body(*r, /*in_function=*/false, indent + "  ", &text));
      absl::StrAppend(&text, indent, "}");
      regions.push_back(std::move(text));
    }
    std::vector<std::string> results;
    std::vector<ir::ValueType> result_types;
    for (size_t i = 0; i < inst.num_results(); ++i) {
      results.push_back(Define(inst.result(i)));
      result_types.push_back(inst.result(i)->type());
    }
    absl::StrAppend(out, indent);
    if (!results.empty()) absl::StrAppend(out, absl::StrJoin(results, ", "), " = ");
    absl::StrAppend(out, "\"", op_name, "\"(", absl::StrJoin(operands, ", "), ")");
    if (!regions.empty()) absl::StrAppend(out, " (", absl::StrJoin(regions, ", "), ")");
    absl::StrAppend(out, attributes, " : (", TypeList(operand_types), ") -> ");
    if (result_types.size() == 1) {
      absl::StrAppend(out, result_types[0].ToString());
    } else {
      absl::StrAppend(out, "(", TypeList(result_types), ")");
    }
    absl::StrAppend(out, LocationText(inst.location()), "\n");
    return absl::OkStatus();
  }

  std::set<const ir::Computation*>* callees_;
  std::unordered_map<const ir::Value*, std::string> names_;
  int64_t next_ = 0;
};

}  // namespace

std::string StablehloModuleOpening(const StablehloModuleHeader& header,
                                   const std::vector<ir::ValueType>& parameter_types,
                                   const std::vector<ir::ValueType>& result_types) {
  const std::vector<std::string>& params = header.parameter_shardings;
  const std::vector<std::string>& results = header.result_shardings;
  // The module attributes carry the shardings to the HloModule's spmd_parameters_shardings /
  // spmd_output_sharding (what the framework reads); the per-value attributes say the same.
  std::string attributes =
      absl::StrCat("mhlo.num_partitions = ", header.num_partitions,
                   " : i32, mhlo.num_replicas = ", header.num_replicas, " : i32");
  if (!results.empty()) {
    const std::string output =
        results.size() == 1 ? results[0] : absl::StrCat("{", absl::StrJoin(results, ", "), "}");
    absl::StrAppend(&attributes, ", mhlo.spmd_output_sharding = ", Quoted(output));
  }
  if (params.size() == parameter_types.size()) {  // XLA checks there is one per parameter
    std::vector<std::string> quoted;
    for (const std::string& p : params) quoted.push_back(Quoted(p));
    absl::StrAppend(&attributes, ", mhlo.spmd_parameters_shardings = [",
                    absl::StrJoin(quoted, ", "), "]");
  }
  std::string text = absl::StrCat("module ", Symbol(header.name.empty() ? "main" : header.name),
                                  " attributes {", attributes, "} {\n  func.func public @main(");
  for (size_t i = 0; i < parameter_types.size(); ++i) {
    absl::StrAppend(&text, i ? ", " : "", "%arg", i, ": ", parameter_types[i].ToString());
    if (i < params.size()) absl::StrAppend(&text, " {mhlo.sharding = ", Quoted(params[i]), "}");
  }
  absl::StrAppend(&text, ") -> (");
  for (size_t i = 0; i < result_types.size(); ++i) {
    absl::StrAppend(&text, i ? ", " : "", result_types[i].ToString());
    if (i < results.size()) absl::StrAppend(&text, " {mhlo.sharding = ", Quoted(results[i]), "}");
  }
  absl::StrAppend(&text, ") {\n");
  return text;
}

absl::StatusOr<std::string> ExportStablehloText(const ir::Module& module,
                                                const ir::Computation& entry,
                                                const StablehloModuleHeader& header) {
  std::vector<ir::ValueType> parameter_types;
  for (const auto& p : entry.parameters()) parameter_types.push_back(p->type());
  std::set<const ir::Computation*> callees;
  std::string text;
  {
    FunctionWriter writer(&callees);
    EMBER_ASSIGN_OR_RETURN(text, writer.Function(entry, "main", /*is_entry=*/true,
                                                 StablehloModuleOpening(header, parameter_types,
                                                                        entry.result_types())));
  }
  // Functions the entry reaches, each once, in the module's order.
  std::set<const ir::Computation*> written = {&entry};
  for (bool grew = true; grew;) {
    grew = false;
    for (const ir::Computation* f : module.functions()) {
      if (written.count(f) != 0 || callees.count(f) == 0) continue;
      if (f->name() == "main") {
        return absl::UnimplementedError("a function other than the entry is named @main");
      }
      FunctionWriter writer(&callees);
      EMBER_ASSIGN_OR_RETURN(std::string function,
                             writer.Function(*f, f->name(), /*is_entry=*/false, ""));
      absl::StrAppend(&text, function);
      written.insert(f);
      grew = true;
    }
  }
  for (const ir::Computation* f : callees) {
    if (written.count(f) == 0) {
      return absl::UnimplementedError(
          absl::StrCat("@", f->name(), " is called but is not a function of the module"));
    }
  }
  return absl::StrCat(text, "}\n");
}

}  // namespace ember::compiler
