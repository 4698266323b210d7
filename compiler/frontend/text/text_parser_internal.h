// The MLIR text parser's shared machinery: token cursor, error reporting, SSA scopes, and the
// entry points that the per-dialect pretty-form parsers (func, stablehlo, chlo, sdy, check) use.
// Not a public interface: callers use mlir_text_parser.h.
#ifndef EMBER_COMPILER_FRONTEND_TEXT_TEXT_PARSER_INTERNAL_H_
#define EMBER_COMPILER_FRONTEND_TEXT_TEXT_PARSER_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/frontend/mlir_ast.h"
#include "compiler/frontend/text/mlir_lexer.h"

namespace ember::frontend::text {

// Nesting limit for regions, types, attributes and dense literals: malformed input must not be
// able to exhaust the stack.
inline constexpr int kMaxNestingDepth = 200;

// An SSA use not yet bound to its definition: `%name` or `%name#number`.
struct UnresolvedOperand {
  std::string name;
  uint32_t number = 0;
  size_t offset = 0;
};

// An argument that a pretty form defines for a region's entry block (func args, while iteration
// values, the reduce reducer's arguments).
struct EntryArg {
  UnresolvedOperand name;
  TypePtr type;
  AttrPtr loc;
};

class Parser;
// A pretty-form parser: the op name has been consumed and `op` has its name and location; it
// parses the rest of the op (operands, attributes, regions, types) and sets result types.
using CustomOpParser = absl::Status (*)(Parser& p, Operation& op);

struct OpInfo {
  CustomOpParser parse = nullptr;
  // Inherent attribute names (ODS arguments / properties). They sort before discardable ones,
  // which is the order MLIR's printer and bytecode writer use (properties, then attr dict).
  std::vector<std::string> inherent;
  // Ops whose regions start a new SSA scope (IsolatedFromAbove).
  bool isolated = false;
  // Dialect whose prefix may be omitted inside this op's regions (`return` in func.func).
  std::string default_dialect;
};

// Per-dialect registration (each in its own file).
void RegisterFuncOps(absl::flat_hash_map<std::string, OpInfo>& ops);
void RegisterStablehloOps(absl::flat_hash_map<std::string, OpInfo>& ops);
void RegisterChloOps(absl::flat_hash_map<std::string, OpInfo>& ops);
void RegisterSdyOps(absl::flat_hash_map<std::string, OpInfo>& ops);
void RegisterCheckOps(absl::flat_hash_map<std::string, OpInfo>& ops);
const OpInfo* FindOpInfo(std::string_view name);

// ---- Attribute and type constructors shared by the pretty-form parsers ----
TypePtr MakeIntegerType(unsigned width, Signedness s = Signedness::kSignless);
TypePtr MakeFloatType(FloatKind kind);
TypePtr MakeTensorType(std::vector<int64_t> shape, TypePtr element);
AttrPtr MakeIntAttr(int64_t v, unsigned width, Signedness s = Signedness::kSignless);
AttrPtr MakeI64Attr(int64_t v);
AttrPtr MakeI32Attr(int64_t v);
AttrPtr MakeBoolAttr(bool v);
AttrPtr MakeF64Attr(double v);
AttrPtr MakeStringAttr(std::string s);
AttrPtr MakeTypeAttr(TypePtr t);
AttrPtr MakeUnitAttr();
AttrPtr MakeSymbolRefAttr(std::string root, std::vector<std::string> nested = {});
AttrPtr MakeArrayAttr(std::vector<AttrPtr> elements);
AttrPtr MakeDictAttr(std::vector<NamedAttribute> entries);  // sorts by name
AttrPtr MakeDenseI64Array(const std::vector<int64_t>& values);
AttrPtr MakeDenseI32Array(const std::vector<int64_t>& values);
AttrPtr MakeDenseBoolArray(const std::vector<bool>& values);
// Dense i64 elements of the given shape (padding, replica groups in pretty forms).
AttrPtr MakeDenseI64Elements(const std::vector<int64_t>& shape, const std::vector<int64_t>& v);
// `#dialect<mnemonic VALUE>` enum attributes: kDialect with one string param "value".
AttrPtr MakeEnumAttr(std::string dialect, std::string mnemonic, std::string value);
AttrPtr MakeDialectAttr(std::string dialect, std::string name, std::vector<DialectParam> params);
DialectParam IntParam(std::string name, int64_t v);
DialectParam BoolParam(std::string name, bool v);
DialectParam StringParam(std::string name, std::string v);
DialectParam TypeParam(std::string name, TypePtr t);
DialectParam AttrParam(std::string name, AttrPtr a);
DialectParam IntListParam(std::string name, const std::vector<int64_t>& v);
DialectParam AttrListParam(std::string name, const std::vector<AttrPtr>& v);
DialectParam FloatBitsParam(std::string name, uint64_t bits);
// Bit pattern of `value` rounded to the float format (round to nearest even).
uint64_t EncodeFloat(double value, FloatKind kind);
// Bytes one element of `element` occupies in dense data (0 for i1, which uses one byte).
absl::StatusOr<uint64_t> DenseElementBytes(const Type& element);

class Parser {
 public:
  Parser(std::string_view text, std::string_view filename);

  absl::StatusOr<std::unique_ptr<Operation>> ParseTopLevel();

  // ---- Token cursor ----
  const Token& tok() const { return tok_; }
  bool Is(TokKind k) const { return tok_.kind == k; }
  bool IsKeyword(std::string_view kw) const {
    return tok_.kind == TokKind::kBareIdent && tok_.text == kw;
  }
  void Advance();
  Token Peek() const;  // the token after the current one
  bool ConsumeIf(TokKind k);
  bool ConsumeKeyword(std::string_view kw);
  absl::Status Expect(TokKind k, std::string_view context);
  absl::Status ExpectKeyword(std::string_view kw, std::string_view context);
  // Re-lexes from a raw byte offset (used after scanning characters directly).
  void ResetTo(size_t offset);
  size_t EndOfToken() const { return tok_.offset + tok_.text.size(); }
  std::string_view source() const { return lexer_.source(); }
  const Lexer& lexer() const { return lexer_; }

  // "file:line:col: message" at the current token / an offset.
  absl::Status Error(std::string_view message) const;
  absl::Status ErrorAt(size_t offset, std::string_view message) const;
  // "expected X, found 'tok'".
  absl::Status ExpectedError(std::string_view what) const;
  // A FileLineColLoc naming this input file at `offset`.
  AttrPtr FileLoc(size_t offset) const;

  // Recursion guard: EnterNested() fails once kMaxNestingDepth is exceeded.
  absl::Status EnterNested();
  void ExitNested() { --depth_; }

  // ---- Numbers and simple lists ----
  absl::StatusOr<int64_t> ParseInt64();     // optional '-', decimal or hex
  absl::StatusOr<uint64_t> ParseUInt64();
  absl::StatusOr<bool> ParseBoolKeyword();  // true | false
  // `[1, 2, 3]`; with allow_dynamic, `?` is kDynamicDim.
  absl::StatusOr<std::vector<int64_t>> ParseIntList(bool allow_dynamic = false);
  absl::StatusOr<std::string> ParseStringLiteral();
  absl::StatusOr<std::string> ParseKeyword(std::string_view what);  // a bare identifier
  absl::StatusOr<std::string> ParseSymbolName();                    // @name -> name

  // ---- Types (text_types.cc) ----
  absl::StatusOr<TypePtr> ParseType();
  absl::StatusOr<std::vector<TypePtr>> ParseTypeList();  // T (, T)*
  absl::StatusOr<std::vector<TypePtr>> ParseFunctionResultTypes();  // T or (T, ...)
  absl::StatusOr<TypePtr> ParseFunctionType();
  bool AtTypeStart() const;

  // ---- Attributes (text_attributes.cc, text_dense.cc) ----
  absl::StatusOr<AttrPtr> ParseAttribute(const TypePtr& type_hint = nullptr);
  // `{a = 1, b}` -> entries in written order (the caller sorts where MLIR would).
  absl::StatusOr<std::vector<NamedAttribute>> ParseAttrDict();
  absl::StatusOr<AttrPtr> ParseDenseElements(const TypePtr& type_hint);
  absl::StatusOr<AttrPtr> ParseDenseArray();
  // The contents of `loc(...)` (without the keyword and parentheses).
  absl::StatusOr<AttrPtr> ParseLocationBody();
  // `loc(...)` if present, else null.
  absl::StatusOr<AttrPtr> ParseOptionalLocation();
  // Stablehlo / chlo dialect attributes after `#stablehlo.` / `#stablehlo<`: the mnemonic has
  // been consumed (stablehlo_attrs_text.cc).
  absl::StatusOr<AttrPtr> ParseStablehloAttr(std::string_view dialect, std::string_view mnemonic,
                                             size_t start);
  // Shardy attributes (sdy_text.cc): mnemonic consumed.
  absl::StatusOr<AttrPtr> ParseSdyAttr(std::string_view mnemonic, size_t start);
  // Sdy pretty pieces used by sdy ops (sdy_text.cc).
  absl::StatusOr<AttrPtr> ParseSdyTensorSharding();  // <@mesh, [{"x"}, {}], replicated={...}>
  absl::StatusOr<AttrPtr> ParseSdyMeshBody();        // <["x"=2, "y"=4], device_ids=[...]>
  // Keeps an unknown dialect attribute/type verbatim: scans the balanced `<...>` after `start`.
  absl::StatusOr<std::string> ScanVerbatim(size_t start);

  // ---- Operations (text_parser.cc) ----
  absl::Status ParseOperation(Block& block);
  absl::StatusOr<UnresolvedOperand> ParseOperandName();
  bool AtOperand() const { return Is(TokKind::kPercentIdent); }
  // `%a, %b, ...` (possibly empty when not at an operand).
  absl::StatusOr<std::vector<UnresolvedOperand>> ParseOperandList();
  // Appends the operands to `op`, binding them to their definitions (or later, for forward uses).
  absl::Status AddOperands(Operation& op, const std::vector<UnresolvedOperand>& operands);
  // Parses `{ ... }` into a new region of `op`. `entry_args` (may be null) define the entry
  // block's arguments (the pretty forms that name them outside the braces).
  absl::Status ParseRegion(Operation& op, const std::vector<EntryArg>* entry_args);
  // Optional `{...}` attribute dictionary, appended as discardable attributes.
  absl::Status ParseOptionalAttrDict(Operation& op);
  // Optional `attributes {...}`.
  absl::Status ParseOptionalAttrDictWithKeyword(Operation& op);
  // Adds an attribute set by a pretty form (inherent).
  static void AddAttr(Operation& op, std::string name, AttrPtr value);
  // `: T` where T is either one type for all operands and the result, or a function type.
  absl::Status ParseSameOperandsAndResultType(Operation& op, size_t num_operands);
  // `: (T, ...) -> R` sets the result types.
  absl::Status ParseColonFunctionalType(Operation& op, size_t num_operands);
  // Block argument `%name: type loc(...)?` as used by pretty forms.
  absl::StatusOr<EntryArg> ParseArgumentDef(bool allow_attrs, AttrPtr* attrs);

 private:
  friend class TopLevel;
  struct ValueDef {
    Operation* op = nullptr;
    Block* block = nullptr;
    uint32_t base = 0;
    uint32_t count = 1;
  };
  struct ForwardUse {
    Operation* op;
    size_t operand_index;
    UnresolvedOperand use;
  };
  struct Scope {
    absl::flat_hash_map<std::string, ValueDef> values;
    std::vector<ForwardUse> pending;
    bool isolated = false;
  };
  struct PendingLoc {
    std::shared_ptr<Attribute> placeholder;
    std::string alias;
    size_t offset;
  };
  struct PendingResource {
    std::shared_ptr<Attribute> attr;
    size_t offset;
  };

  absl::Status ParseGenericOperation(Operation& op);
  absl::Status ParseCustomOperation(Operation& op, const OpInfo** info);
  absl::Status ParseRegionBody(Region& region, const std::vector<EntryArg>* entry_args,
                               bool isolated);
  absl::Status ParseBlockOps(Block& block);
  absl::Status DefineValue(const std::string& name, ValueDef def, size_t offset);
  const ValueDef* LookupValue(const std::string& name) const;
  void PushScope(bool isolated);
  absl::Status PopScope();
  absl::Status ParseAliasDefinition();
  absl::Status ParseFileMetadata();
  absl::Status ResolveDeferred();
  absl::StatusOr<AttrPtr> ParseHashAttribute(bool in_location);
  absl::StatusOr<TypePtr> ParseShapedType(TypeKind kind);
  absl::StatusOr<AttrPtr> ParseNumberAttribute(const TypePtr& type_hint);
  absl::StatusOr<AttrPtr> ParseAffineLike(AttrKind kind);
  static void NormalizeAttributes(Operation& op, const OpInfo* info);
  static void FixParents(Operation& op);

  std::string filename_;
  Lexer lexer_;
  Token tok_;
  int depth_ = 0;
  std::vector<Scope> scopes_;
  std::vector<std::string> default_dialects_;
  absl::flat_hash_map<std::string, AttrPtr> attr_aliases_;
  absl::flat_hash_map<std::string, TypePtr> type_aliases_;
  std::vector<PendingLoc> pending_locs_;
  std::vector<PendingResource> pending_resources_;
  absl::flat_hash_map<std::string, std::vector<uint8_t>> resources_;
  AttrPtr file_loc_template_;
};

}  // namespace ember::frontend::text

#endif  // EMBER_COMPILER_FRONTEND_TEXT_TEXT_PARSER_INTERNAL_H_
