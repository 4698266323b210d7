// Pieces of the MLIR -> ir::Module importer shared by its files: reading attribute values in
// any of their spellings (builtin, stablehlo dialect, VHLO), types, dense data, locations, and
// the normalized view of one op that the per-op attribute tables consume.
#ifndef EMBER_COMPILER_FRONTEND_IMPORT_IMPORT_INTERNAL_H_
#define EMBER_COMPILER_FRONTEND_IMPORT_IMPORT_INTERNAL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/frontend/mlir_ast.h"
#include "compiler/ir/attribute.h"
#include "compiler/ir/literal.h"
#include "compiler/ir/module.h"
#include "compiler/ir/opcode.h"
#include "compiler/ir/value_type.h"

namespace ember::frontend::importer {

// How builtin dense i1 data is laid out: the text parser keeps one byte per element (a splat
// is one 0/1 byte); bytecode keeps the wire form (bit-packed, a true splat is 0xFF). VHLO
// tensors are always in wire form.
enum class I1Layout { kBytes, kWire };

struct ImportContext {
  I1Layout builtin_i1 = I1Layout::kBytes;
};

// ---- Locations -------------------------------------------------------------------------------

// The user's file:line:col (innermost file location of a call-site chain) and the outermost
// NameLoc's name.
ir::Location ConvertLocation(const AttrPtr& loc);
// "stablehlo.add at model.py:41:7" (the op's MLIR name, its location when known).
std::string DescribeOp(const Operation& op);
std::string DescribeOp(const std::string& name, const ir::Location& loc);

// ---- Types -----------------------------------------------------------------------------------

// MLIR spelling of a builtin or VHLO element type ("i1", "ui8", "tf32", "complex<f32>").
absl::StatusOr<std::string> ElementSpelling(const Type& type);
// Builtin or VHLO element type -> ElementType (index is s64, as in XLA; errors for quantized,
// tf32, ...).
absl::StatusOr<ir::ElementType> ConvertElementType(const Type& type);
// Ranked static tensor, token or tuple, builtin or VHLO.
absl::StatusOr<ir::ValueType> ConvertType(const Type& type);
// A function type (builtin or VHLO, also wrapped in a TypeAttr / #vhlo.type_v1).
struct FunctionSignature {
  std::vector<TypePtr> inputs;
  std::vector<TypePtr> results;
};
absl::StatusOr<FunctionSignature> ReadFunctionType(const Attribute& attr);

// ---- Attribute values ------------------------------------------------------------------------

// The value of a single-"value" dialect attribute (#stablehlo<...>, #vhlo.*_v1 enums), or null.
const DialectParam* DialectValueParam(const Attribute& attr);
bool IsVhlo(const Attribute& attr, const char* name);

absl::StatusOr<int64_t> ReadInt(const Attribute& attr);
absl::StatusOr<bool> ReadBool(const Attribute& attr);
absl::StatusOr<double> ReadFloat(const Attribute& attr);
// Strings, symbol references and enum values.
absl::StatusOr<std::string> ReadString(const Attribute& attr);
// array<i64: ...>, dense<...> : tensor<...xi64> (any rank, row-major), #vhlo.tensor_v1, [1, 2].
absl::StatusOr<std::vector<int64_t>> ReadInts(const Attribute& attr, const ImportContext& ctx);
absl::StatusOr<std::vector<bool>> ReadBools(const Attribute& attr, const ImportContext& ctx);
// Elements of an array attribute (builtin [..] or #vhlo.array_v1).
absl::StatusOr<std::vector<AttrPtr>> ReadArray(const Attribute& attr);
// Entries of a dictionary attribute (builtin or #vhlo.dict_v1), keys as strings.
absl::StatusOr<std::vector<std::pair<std::string, AttrPtr>>> ReadDict(const Attribute& attr);
// Dense elements (builtin dense<>, dense_resource<>, #vhlo.tensor_v1) -> Literal.
absl::StatusOr<ir::Literal> ReadLiteral(const Attribute& attr, const ImportContext& ctx);
// The value of a splat dense attribute (one value stored for every element) of at least
// `min_elements` elements, as a scalar literal; nullopt for any other dense attribute. Large
// splats import as broadcasts of that scalar instead of literals of every element.
absl::StatusOr<std::optional<ir::Literal>> ReadSplatValue(const Attribute& attr,
                                                           const ImportContext& ctx,
                                                           int64_t min_elements);
// Any attribute by its shape: bool, int, float, string, enum, dense (-> literal), array (->
// list, or ints when all elements are integers), dict, type; dialect attributes we do not model
// (sdy shardings, ...) become their printed text so they are kept, not dropped.
absl::StatusOr<ir::Attribute> ConvertGeneric(const Attribute& attr, const ImportContext& ctx);
// Sorted, converted discardable attributes (func arg/result dictionaries, module attributes).
absl::StatusOr<ir::AttributeMap> ConvertDictionary(const Attribute& attr, const ImportContext& ctx);

// ---- One op, normalized to StableHLO names ---------------------------------------------------

struct OpView {
  std::string name;  // "stablehlo.add", "func.call", ... after dialect mapping
  // Inherent (or not yet classified) attributes by their StableHLO name.
  std::vector<std::pair<std::string, AttrPtr>> attrs;
  // Attributes a dialect mapping already converted (flattened dimension numbers, ...).
  ir::AttributeMap preset;
  // Names a dialect mapping consumed and intentionally left out (VHLO defaults that mean
  // "absent").
  std::vector<std::string> consumed;
};

// Splits the op's attributes into inherent ones (names without a dialect prefix) and
// discardable ones (dialect-prefixed, e.g. `mhlo.sharding`), which are returned converted.
absl::StatusOr<ir::AttributeMap> SplitAttributes(const Operation& op, OpView* view,
                                                 const ImportContext& ctx);

// stablehlo.* (text or plain bytecode): flattens #stablehlo.dot/conv/gather/scatter,
// channel_handle, dot_algorithm and result_accuracy into spec-named attributes.
absl::Status NormalizeStablehloOp(const Operation& op, OpView* view, const ImportContext& ctx);
// vhlo.*_vN: maps the op to its StableHLO name and its attributes to the StableHLO set
// (vhlo_mapping.cc). Func-level ops map to func.func / func.call / stablehlo.return.
absl::Status NormalizeVhloOp(const Operation& op, OpView* view, const ImportContext& ctx);
// True when `name` is a VHLO op this importer knows.
bool IsKnownVhloOp(const std::string& name);

// `algorithm` of dot_general as one dictionary (precision types by their MLIR spelling).
struct DotAlgorithm {
  std::string lhs_precision_type, rhs_precision_type, accumulation_type;
  int64_t lhs_component_count = 0, rhs_component_count = 0, num_primitive_operations = 0;
  bool allow_imprecise_accumulation = false;
};
ir::Attribute DotAlgorithmAttribute(const DotAlgorithm& algorithm);
// #stablehlo.result_accuracy / #vhlo.result_accuracy_v1 -> {atol, rtol, ulps, mode}.
absl::StatusOr<ir::Attribute> ResultAccuracyAttribute(const Attribute& attr);

// Builds the IR attributes of a StableHLO op from its view: per-op table of spec attributes with
// their value kinds and defaults (stablehlo_op_specs.cc). Unknown attributes are errors.
absl::StatusOr<ir::AttributeMap> ConvertOpAttributes(ir::Opcode opcode, const OpView& view,
                                                     const std::vector<ir::ValueType>& operands,
                                                     const std::vector<ir::ValueType>& results,
                                                     const std::string& where,
                                                     const ImportContext& ctx);

}  // namespace ember::frontend::importer

#endif  // EMBER_COMPILER_FRONTEND_IMPORT_IMPORT_INTERNAL_H_
