// Core of the MLIR text parser: token cursor, errors, SSA scopes, generic-form operations,
// regions and blocks, top-level aliases and file metadata (dialect resources).
#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/frontend/text/mlir_text_parser.h"
#include "compiler/frontend/text/text_parser_internal.h"

namespace ember::frontend::text {
namespace {

using OpTable = absl::flat_hash_map<std::string, OpInfo>;

const OpTable& AllOps() {
  static const OpTable* table = [] {
    auto* t = new OpTable;
    RegisterFuncOps(*t);
    RegisterStablehloOps(*t);
    RegisterChloOps(*t);
    RegisterSdyOps(*t);
    RegisterCheckOps(*t);
    return t;
  }();
  return *table;
}

std::string S(std::string_view v) { return std::string(v); }

}  // namespace

const OpInfo* FindOpInfo(std::string_view name) {
  const OpTable& t = AllOps();
  auto it = t.find(S(name));
  return it == t.end() ? nullptr : &it->second;
}

Parser::Parser(std::string_view text, std::string_view filename)
    : filename_(filename), lexer_(text) {
  tok_ = lexer_.LexAt(0);
}

// ---------------------------------------------------------------------------------------------
// Token cursor and errors

void Parser::Advance() {
  if (tok_.kind == TokKind::kEof) return;
  tok_ = lexer_.LexAt(tok_.offset + tok_.text.size());
}

Token Parser::Peek() const {
  if (tok_.kind == TokKind::kEof) return tok_;
  return lexer_.LexAt(tok_.offset + tok_.text.size());
}

void Parser::ResetTo(size_t offset) { tok_ = lexer_.LexAt(offset); }

bool Parser::ConsumeIf(TokKind k) {
  if (tok_.kind != k) return false;
  Advance();
  return true;
}

bool Parser::ConsumeKeyword(std::string_view kw) {
  if (!IsKeyword(kw)) return false;
  Advance();
  return true;
}

absl::Status Parser::ErrorAt(size_t offset, std::string_view message) const {
  uint32_t line = 0, col = 0;
  lexer_.LineCol(offset, &line, &col);
  return absl::InvalidArgumentError(absl::StrCat(filename_, ":", line, ":", col, ": ", S(message)));
}

absl::Status Parser::Error(std::string_view message) const { return ErrorAt(tok_.offset, message); }

absl::Status Parser::ExpectedError(std::string_view what) const {
  std::string found;
  if (tok_.kind == TokKind::kEof) {
    found = "end of input";
  } else {
    std::string_view text = tok_.text.substr(0, 40);
    found = absl::StrCat("'", S(text), "'");
  }
  return Error(absl::StrCat("expected ", S(what), ", found ", found));
}

absl::Status Parser::Expect(TokKind k, std::string_view context) {
  if (tok_.kind == k) {
    Advance();
    return absl::OkStatus();
  }
  return ExpectedError(context.empty() ? std::string(TokKindName(k))
                                       : absl::StrCat(TokKindName(k), " ", S(context)));
}

absl::Status Parser::ExpectKeyword(std::string_view kw, std::string_view context) {
  if (ConsumeKeyword(kw)) return absl::OkStatus();
  return ExpectedError(absl::StrCat("'", S(kw), "'", context.empty() ? "" : " ", S(context)));
}

AttrPtr Parser::FileLoc(size_t offset) const {
  uint32_t line = 0, col = 0;
  lexer_.LineCol(offset, &line, &col);
  auto a = std::make_shared<Attribute>();
  a->kind = AttrKind::kFileLineColLoc;
  a->str = filename_;
  a->line = line;
  a->column = col;
  a->loc_fields = 2;
  return a;
}

absl::Status Parser::EnterNested() {
  if (++depth_ > kMaxNestingDepth) {
    --depth_;
    return Error(absl::StrCat("nesting deeper than ", kMaxNestingDepth, " levels"));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Numbers and simple lists

absl::StatusOr<uint64_t> Parser::ParseUInt64() {
  if (!Is(TokKind::kInteger)) return ExpectedError("integer");
  uint64_t v = 0;
  std::string_view t = tok_.text;
  bool ok = false;
  if (t.size() > 2 && t[1] == 'x') {
    ok = t.size() <= 18 && absl::SimpleHexAtoi(std::string(t.substr(2)), &v);
  } else {
    ok = absl::SimpleAtoi(std::string(t), &v);
  }
  if (!ok) return Error(absl::StrCat("integer '", S(t.substr(0, 40)), "' out of range"));
  Advance();
  return v;
}

absl::StatusOr<int64_t> Parser::ParseInt64() {
  const bool negative = ConsumeIf(TokKind::kMinus);
  const size_t at = tok_.offset;
  EMBER_ASSIGN_OR_RETURN(uint64_t v, ParseUInt64());
  if (negative) {
    if (v > uint64_t{1} << 63) return ErrorAt(at, "integer out of int64 range");
    return static_cast<int64_t>(~v + 1);
  }
  if (v > static_cast<uint64_t>(INT64_MAX)) return ErrorAt(at, "integer out of int64 range");
  return static_cast<int64_t>(v);
}

absl::StatusOr<bool> Parser::ParseBoolKeyword() {
  if (ConsumeKeyword("true")) return true;
  if (ConsumeKeyword("false")) return false;
  return ExpectedError("'true' or 'false'");
}

absl::StatusOr<std::vector<int64_t>> Parser::ParseIntList(bool allow_dynamic) {
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kLSquare, "to start an integer list"));
  std::vector<int64_t> out;
  if (ConsumeIf(TokKind::kRSquare)) return out;
  while (true) {
    if (allow_dynamic && ConsumeIf(TokKind::kQuestion)) {
      out.push_back(kDynamicDim);
    } else {
      EMBER_ASSIGN_OR_RETURN(int64_t v, ParseInt64());
      out.push_back(v);
    }
    if (ConsumeIf(TokKind::kRSquare)) return out;
    EMBER_RETURN_IF_ERROR(Expect(TokKind::kComma, "or ']' in integer list"));
  }
}

absl::StatusOr<std::string> Parser::ParseStringLiteral() {
  if (!Is(TokKind::kString)) return ExpectedError("string literal");
  std::string out;
  if (!DecodeStringToken(tok_.text, &out)) return Error("malformed escape in string literal");
  Advance();
  return out;
}

absl::StatusOr<std::string> Parser::ParseKeyword(std::string_view what) {
  if (!Is(TokKind::kBareIdent)) return ExpectedError(what);
  std::string out(tok_.text);
  Advance();
  return out;
}

absl::StatusOr<std::string> Parser::ParseSymbolName() {
  if (!Is(TokKind::kAtIdent)) return ExpectedError("symbol name (@name)");
  std::string_view t = tok_.text.substr(1);
  std::string out;
  if (!t.empty() && t.front() == '"') {
    if (!DecodeStringToken(t, &out)) return Error("malformed escape in symbol name");
  } else {
    out = std::string(t);
  }
  Advance();
  return out;
}

// ---------------------------------------------------------------------------------------------
// SSA values

void Parser::PushScope(bool isolated) {
  scopes_.emplace_back();
  scopes_.back().isolated = isolated;
}

absl::Status Parser::PopScope() {
  Scope scope = std::move(scopes_.back());
  scopes_.pop_back();
  if (scope.pending.empty()) return absl::OkStatus();
  if (scope.isolated || scopes_.empty()) {
    const ForwardUse& u = scope.pending.front();
    return ErrorAt(u.use.offset, absl::StrCat("use of undefined value %", u.use.name));
  }
  for (ForwardUse& u : scope.pending) scopes_.back().pending.push_back(std::move(u));
  return absl::OkStatus();
}

const Parser::ValueDef* Parser::LookupValue(const std::string& name) const {
  for (size_t i = scopes_.size(); i-- > 0;) {
    auto it = scopes_[i].values.find(name);
    if (it != scopes_[i].values.end()) return &it->second;
    if (scopes_[i].isolated) break;
  }
  return nullptr;
}

absl::Status Parser::DefineValue(const std::string& name, ValueDef def, size_t offset) {
  Scope& scope = scopes_.back();
  if (!scope.values.emplace(name, def).second) {
    return ErrorAt(offset, absl::StrCat("redefinition of SSA value %", name));
  }
  // Bind the forward uses of this name made in this scope.
  auto& pending = scope.pending;
  for (size_t i = 0; i < pending.size();) {
    ForwardUse& u = pending[i];
    if (u.use.name != name) {
      ++i;
      continue;
    }
    if (u.use.number >= def.count) {
      return ErrorAt(u.use.offset, absl::StrCat("result number ", u.use.number, " of %", name,
                                                " out of range (", def.count, " results)"));
    }
    ValueRef& ref = u.op->operands[u.operand_index];
    ref.op = def.op;
    ref.block = def.block;
    ref.index = def.base + u.use.number;
    pending[i] = std::move(pending.back());
    pending.pop_back();
  }
  return absl::OkStatus();
}

absl::StatusOr<UnresolvedOperand> Parser::ParseOperandName() {
  if (!Is(TokKind::kPercentIdent)) return ExpectedError("SSA operand (%name)");
  UnresolvedOperand u;
  u.name = std::string(tok_.text.substr(1));
  u.offset = tok_.offset;
  const size_t end = EndOfToken();
  Advance();
  // `%r#2` picks one result of a multi-result definition; the '#' must follow directly.
  if (Is(TokKind::kHashIdent) && tok_.offset == end) {
    std::string_view digits = tok_.text.substr(1);
    if (digits.empty() || !std::all_of(digits.begin(), digits.end(), absl::ascii_isdigit) ||
        !absl::SimpleAtoi(std::string(digits), &u.number)) {
      return Error("expected result number after '#'");
    }
    Advance();
  }
  return u;
}

absl::StatusOr<std::vector<UnresolvedOperand>> Parser::ParseOperandList() {
  std::vector<UnresolvedOperand> out;
  if (!AtOperand()) return out;
  while (true) {
    EMBER_ASSIGN_OR_RETURN(UnresolvedOperand u, ParseOperandName());
    out.push_back(std::move(u));
    if (!Is(TokKind::kComma) || Peek().kind != TokKind::kPercentIdent) break;
    Advance();
  }
  return out;
}

absl::Status Parser::AddOperands(Operation& op, const std::vector<UnresolvedOperand>& operands) {
  for (const UnresolvedOperand& u : operands) {
    const ValueDef* def = LookupValue(u.name);
    ValueRef ref;
    if (def != nullptr) {
      if (u.number >= def->count) {
        return ErrorAt(u.offset, absl::StrCat("result number ", u.number, " of %", u.name,
                                              " out of range (", def->count, " results)"));
      }
      ref.op = def->op;
      ref.block = def->block;
      ref.index = def->base + u.number;
    } else {
      scopes_.back().pending.push_back({&op, op.operands.size(), u});
    }
    op.operands.push_back(ref);
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Attributes on ops

void Parser::AddAttr(Operation& op, std::string name, AttrPtr value) {
  op.attributes.push_back({std::move(name), std::move(value), true});
}

absl::Status Parser::ParseOptionalAttrDict(Operation& op) {
  if (!Is(TokKind::kLBrace)) return absl::OkStatus();
  EMBER_ASSIGN_OR_RETURN(std::vector<NamedAttribute> entries, ParseAttrDict());
  for (NamedAttribute& e : entries) {
    e.inherent = false;
    op.attributes.push_back(std::move(e));
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseOptionalAttrDictWithKeyword(Operation& op) {
  if (!ConsumeKeyword("attributes")) return absl::OkStatus();
  if (!Is(TokKind::kLBrace)) return ExpectedError("attribute dictionary after 'attributes'");
  return ParseOptionalAttrDict(op);
}

void Parser::NormalizeAttributes(Operation& op, const OpInfo* info) {
  for (NamedAttribute& a : op.attributes) {
    if (info != nullptr &&
        std::find(info->inherent.begin(), info->inherent.end(), a.name) != info->inherent.end()) {
      a.inherent = true;
    }
  }
  std::stable_sort(op.attributes.begin(), op.attributes.end(),
                   [](const NamedAttribute& a, const NamedAttribute& b) {
                     if (a.inherent != b.inherent) return a.inherent;
                     return a.name < b.name;
                   });
}

void Parser::FixParents(Operation& op) {
  for (Region& r : op.regions) {
    r.parent = &op;
    for (auto& b : r.blocks) {
      b->parent = &r;
      for (auto& o : b->operations) o->parent = b.get();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Types on ops

absl::Status Parser::ParseSameOperandsAndResultType(Operation& op, size_t num_operands) {
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kColon, "before the op's type"));
  const size_t at = tok_.offset;
  EMBER_ASSIGN_OR_RETURN(TypePtr t, ParseType());
  if (t->kind == TypeKind::kFunction) {
    if (t->types.size() != num_operands) {
      return ErrorAt(at, absl::StrCat(num_operands, " operands present, but the type names ",
                                      t->types.size()));
    }
    if (t->results.size() != 1) return ErrorAt(at, "expected a single result type");
    op.result_types = t->results;
    return absl::OkStatus();
  }
  op.result_types = {t};
  return absl::OkStatus();
}

absl::Status Parser::ParseColonFunctionalType(Operation& op, size_t num_operands) {
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kColon, "before the op's function type"));
  const size_t at = tok_.offset;
  EMBER_ASSIGN_OR_RETURN(TypePtr t, ParseFunctionType());
  if (t->types.size() != num_operands) {
    return ErrorAt(at, absl::StrCat(num_operands, " operands present, but the type names ",
                                    t->types.size()));
  }
  op.result_types = t->results;
  return absl::OkStatus();
}

absl::StatusOr<EntryArg> Parser::ParseArgumentDef(bool allow_attrs, AttrPtr* attrs) {
  EntryArg arg;
  EMBER_ASSIGN_OR_RETURN(arg.name, ParseOperandName());
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kColon, "after argument name"));
  EMBER_ASSIGN_OR_RETURN(arg.type, ParseType());
  if (allow_attrs && Is(TokKind::kLBrace)) {
    EMBER_ASSIGN_OR_RETURN(std::vector<NamedAttribute> entries, ParseAttrDict());
    if (attrs != nullptr) *attrs = MakeDictAttr(std::move(entries));
  }
  EMBER_ASSIGN_OR_RETURN(arg.loc, ParseOptionalLocation());
  return arg;
}

// ---------------------------------------------------------------------------------------------
// Operations

absl::Status Parser::ParseOperation(Block& block) {
  EMBER_RETURN_IF_ERROR(EnterNested());
  struct ResultName {
    std::string name;
    uint32_t count;
    size_t offset;
  };
  std::vector<ResultName> results;
  const size_t start = tok_.offset;
  if (Is(TokKind::kPercentIdent)) {
    while (true) {
      if (!Is(TokKind::kPercentIdent)) return ExpectedError("result name (%name)");
      ResultName r{std::string(tok_.text.substr(1)), 1, tok_.offset};
      Advance();
      if (ConsumeIf(TokKind::kColon)) {
        EMBER_ASSIGN_OR_RETURN(uint64_t n, ParseUInt64());
        if (n == 0 || n > (1u << 20)) return Error("invalid result count");
        r.count = static_cast<uint32_t>(n);
      }
      results.push_back(std::move(r));
      if (!ConsumeIf(TokKind::kComma)) break;
    }
    EMBER_RETURN_IF_ERROR(Expect(TokKind::kEqual, "after result names"));
  }
  auto op = std::make_unique<Operation>();
  op->parent = &block;
  op->loc = FileLoc(start);  // where MLIR locates an op without `loc(...)`: its first token
  const OpInfo* info = nullptr;
  if (Is(TokKind::kString)) {
    EMBER_RETURN_IF_ERROR(ParseGenericOperation(*op));
    info = FindOpInfo(op->name);
  } else if (Is(TokKind::kBareIdent)) {
    EMBER_RETURN_IF_ERROR(ParseCustomOperation(*op, &info));
  } else {
    return ExpectedError("operation");
  }
  if (IsKeyword("loc")) {
    EMBER_ASSIGN_OR_RETURN(op->loc, ParseOptionalLocation());
  }
  uint64_t named = 0;
  for (const ResultName& r : results) named += r.count;
  if (!results.empty() && named != op->result_types.size()) {
    return ErrorAt(start, absl::StrCat("operation '", op->name, "' defines ",
                                       op->result_types.size(), " results but ", named,
                                       " result names were given"));
  }
  uint32_t base = 0;
  for (const ResultName& r : results) {
    EMBER_RETURN_IF_ERROR(DefineValue(r.name, ValueDef{op.get(), nullptr, base, r.count},
                                      r.offset));
    base += r.count;
  }
  NormalizeAttributes(*op, info);
  FixParents(*op);
  block.operations.push_back(std::move(op));
  ExitNested();
  return absl::OkStatus();
}

absl::Status Parser::ParseGenericOperation(Operation& op) {
  EMBER_ASSIGN_OR_RETURN(op.name, ParseStringLiteral());
  if (op.name.empty()) return Error("empty operation name");
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kLParen, "after the generic op name"));
  std::vector<UnresolvedOperand> operands;
  if (!Is(TokKind::kRParen)) {
    EMBER_ASSIGN_OR_RETURN(operands, ParseOperandList());
  }
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kRParen, "to close the operand list"));
  EMBER_RETURN_IF_ERROR(AddOperands(op, operands));
  if (Is(TokKind::kLSquare)) {
    return Error("successor lists (branch ops) are not supported");
  }
  if (ConsumeIf(TokKind::kLess)) {
    if (!Is(TokKind::kLBrace)) return ExpectedError("'{' to start the properties");
    EMBER_ASSIGN_OR_RETURN(std::vector<NamedAttribute> props, ParseAttrDict());
    for (NamedAttribute& p : props) {
      p.inherent = true;
      op.attributes.push_back(std::move(p));
    }
    EMBER_RETURN_IF_ERROR(Expect(TokKind::kGreater, "to close the properties"));
  }
  if (ConsumeIf(TokKind::kLParen)) {
    while (true) {
      EMBER_RETURN_IF_ERROR(ParseRegion(op, nullptr));
      if (ConsumeIf(TokKind::kRParen)) break;
      EMBER_RETURN_IF_ERROR(Expect(TokKind::kComma, "or ')' in the region list"));
    }
  }
  EMBER_RETURN_IF_ERROR(ParseOptionalAttrDict(op));
  return ParseColonFunctionalType(op, operands.size());
}

absl::Status Parser::ParseCustomOperation(Operation& op, const OpInfo** info) {
  std::string name(tok_.text);
  const size_t at = tok_.offset;
  Advance();
  if (name.find('.') == std::string::npos) {
    if (!default_dialects_.empty() && !default_dialects_.back().empty() &&
        FindOpInfo(default_dialects_.back() + "." + name) != nullptr) {
      name = default_dialects_.back() + "." + name;
    } else {
      name = "builtin." + name;
    }
  }
  op.name = name;
  *info = FindOpInfo(name);
  if (*info == nullptr || (*info)->parse == nullptr) {
    return ErrorAt(at, absl::StrCat("custom assembly form of '", name,
                                    "' is not supported (write it in the generic form)"));
  }
  default_dialects_.push_back((*info)->default_dialect);
  absl::Status s = (*info)->parse(*this, op);
  default_dialects_.pop_back();
  return s;
}

// ---------------------------------------------------------------------------------------------
// Regions and blocks

absl::Status Parser::ParseRegion(Operation& op, const std::vector<EntryArg>* entry_args) {
  const OpInfo* info = FindOpInfo(op.name);
  Region region;
  EMBER_RETURN_IF_ERROR(ParseRegionBody(region, entry_args, info != nullptr && info->isolated));
  op.regions.push_back(std::move(region));
  return absl::OkStatus();
}

absl::Status Parser::ParseBlockOps(Block& block) {
  while (!Is(TokKind::kRBrace) && !Is(TokKind::kCaretIdent)) {
    if (Is(TokKind::kEof)) return ExpectedError("'}' to close the region");
    EMBER_RETURN_IF_ERROR(ParseOperation(block));
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseRegionBody(Region& region, const std::vector<EntryArg>* entry_args,
                                     bool isolated) {
  EMBER_RETURN_IF_ERROR(EnterNested());
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kLBrace, "to start a region"));
  PushScope(isolated);
  auto define_entry_args = [&](Block& b) -> absl::Status {
    if (entry_args == nullptr) return absl::OkStatus();
    for (const EntryArg& a : *entry_args) {
      const uint32_t index = static_cast<uint32_t>(b.arguments.size());
      b.arguments.push_back({a.type, a.loc});
      EMBER_RETURN_IF_ERROR(DefineValue(a.name.name, ValueDef{nullptr, &b, index, 1}, a.name.offset));
    }
    return absl::OkStatus();
  };
  struct BlockSlot {
    std::unique_ptr<Block> owned;  // referenced before its label was seen
    Block* block = nullptr;
    bool defined = false;
    size_t first_use = 0;
  };
  absl::flat_hash_map<std::string, BlockSlot> labels;
  if (ConsumeIf(TokKind::kRBrace)) {
    if (entry_args != nullptr) {
      region.blocks.push_back(std::make_unique<Block>());
      EMBER_RETURN_IF_ERROR(define_entry_args(*region.blocks.back()));
    }
    EMBER_RETURN_IF_ERROR(PopScope());
    ExitNested();
    return absl::OkStatus();
  }
  if (!Is(TokKind::kCaretIdent)) {
    region.blocks.push_back(std::make_unique<Block>());
    Block& entry = *region.blocks.back();
    EMBER_RETURN_IF_ERROR(define_entry_args(entry));
    EMBER_RETURN_IF_ERROR(ParseBlockOps(entry));
  }
  while (Is(TokKind::kCaretIdent)) {
    const std::string label(tok_.text.substr(1));
    const size_t label_at = tok_.offset;
    Advance();
    BlockSlot& slot = labels[label];
    if (slot.defined) return ErrorAt(label_at, absl::StrCat("redefinition of block ^", label));
    slot.defined = true;
    std::unique_ptr<Block> block = slot.owned ? std::move(slot.owned) : std::make_unique<Block>();
    slot.block = block.get();
    const bool is_entry = region.blocks.empty();
    if (is_entry) EMBER_RETURN_IF_ERROR(define_entry_args(*block));
    if (ConsumeIf(TokKind::kLParen)) {
      if (is_entry && entry_args != nullptr && !entry_args->empty()) {
        return ErrorAt(label_at, "entry block arguments were already defined by the op");
      }
      if (!ConsumeIf(TokKind::kRParen)) {
        while (true) {
          EMBER_ASSIGN_OR_RETURN(EntryArg a, ParseArgumentDef(false, nullptr));
          const uint32_t index = static_cast<uint32_t>(block->arguments.size());
          block->arguments.push_back({a.type, a.loc});
          EMBER_RETURN_IF_ERROR(
              DefineValue(a.name.name, ValueDef{nullptr, block.get(), index, 1}, a.name.offset));
          if (ConsumeIf(TokKind::kRParen)) break;
          EMBER_RETURN_IF_ERROR(Expect(TokKind::kComma, "or ')' in block arguments"));
        }
      }
    }
    EMBER_RETURN_IF_ERROR(Expect(TokKind::kColon, "after block label"));
    region.blocks.push_back(std::move(block));
    EMBER_RETURN_IF_ERROR(ParseBlockOps(*region.blocks.back()));
  }
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kRBrace, "to close the region"));
  for (auto& [name, slot] : labels) {
    if (!slot.defined) return ErrorAt(slot.first_use, absl::StrCat("reference to undefined block ^", name));
  }
  EMBER_RETURN_IF_ERROR(PopScope());
  ExitNested();
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Top level

absl::Status Parser::ParseAliasDefinition() {
  const bool is_type = Is(TokKind::kBangIdent);
  const std::string name(tok_.text.substr(1));
  const size_t at = tok_.offset;
  Advance();
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kEqual, "in alias definition"));
  if (is_type) {
    if (type_aliases_.contains(name)) return ErrorAt(at, "redefinition of type alias !" + name);
    EMBER_ASSIGN_OR_RETURN(TypePtr t, ParseType());
    type_aliases_[name] = std::move(t);
    return absl::OkStatus();
  }
  if (attr_aliases_.contains(name)) return ErrorAt(at, "redefinition of attribute alias #" + name);
  EMBER_ASSIGN_OR_RETURN(AttrPtr a, ParseAttribute());
  attr_aliases_[name] = std::move(a);
  return absl::OkStatus();
}

// {-# dialect_resources: { builtin: { key: "0x<align><data>", ... } }, external_resources: ... #-}
absl::Status Parser::ParseFileMetadata() {
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kFileMetadataBegin, ""));
  while (!ConsumeIf(TokKind::kFileMetadataEnd)) {
    EMBER_ASSIGN_OR_RETURN(std::string section, ParseKeyword("metadata section name"));
    EMBER_RETURN_IF_ERROR(Expect(TokKind::kColon, "after metadata section name"));
    EMBER_RETURN_IF_ERROR(Expect(TokKind::kLBrace, "to start the metadata section"));
    while (!ConsumeIf(TokKind::kRBrace)) {
      EMBER_ASSIGN_OR_RETURN(std::string dialect, ParseKeyword("resource dialect name"));
      EMBER_RETURN_IF_ERROR(Expect(TokKind::kColon, "after resource dialect name"));
      EMBER_RETURN_IF_ERROR(Expect(TokKind::kLBrace, "to start the resource entries"));
      while (!ConsumeIf(TokKind::kRBrace)) {
        std::string key;
        if (Is(TokKind::kString)) {
          EMBER_ASSIGN_OR_RETURN(key, ParseStringLiteral());
        } else {
          EMBER_ASSIGN_OR_RETURN(key, ParseKeyword("resource key"));
        }
        EMBER_RETURN_IF_ERROR(Expect(TokKind::kColon, "after resource key"));
        if (Is(TokKind::kString)) {
          const size_t at = tok_.offset;
          EMBER_ASSIGN_OR_RETURN(std::string value, ParseStringLiteral());
          if (section == "dialect_resources" && value.size() >= 2 && value[0] == '0' &&
              value[1] == 'x') {
            std::string hex = value.substr(2);
            if (hex.size() % 2 != 0 || hex.size() < 8) {
              return ErrorAt(at, "resource blob hex must hold a 4-byte alignment and whole bytes");
            }
            std::vector<uint8_t> bytes;
            bytes.reserve(hex.size() / 2);
            for (size_t i = 0; i < hex.size(); i += 2) {
              int v = 0;
              for (int k = 0; k < 2; ++k) {
                const char c = hex[i + k];
                int d = absl::ascii_isdigit(c) ? c - '0'
                        : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                        : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                                 : -1;
                if (d < 0) return ErrorAt(at, "invalid hex digit in resource blob");
                v = v * 16 + d;
              }
              bytes.push_back(static_cast<uint8_t>(v));
            }
            // The first four bytes are the blob's alignment, not data.
            resources_[key] = std::vector<uint8_t>(bytes.begin() + 4, bytes.end());
          }
        } else if (IsKeyword("true") || IsKeyword("false")) {
          Advance();
        } else {
          return ExpectedError("resource value (string or bool)");
        }
        if (!ConsumeIf(TokKind::kComma) && !Is(TokKind::kRBrace)) {
          return ExpectedError("',' or '}' after resource entry");
        }
      }
      if (!ConsumeIf(TokKind::kComma) && !Is(TokKind::kRBrace)) {
        return ExpectedError("',' or '}' after resource dialect");
      }
    }
    if (!ConsumeIf(TokKind::kComma) && !Is(TokKind::kFileMetadataEnd)) {
      return ExpectedError("',' or '#-}' after metadata section");
    }
  }
  return absl::OkStatus();
}

absl::Status Parser::ResolveDeferred() {
  for (PendingLoc& p : pending_locs_) {
    std::string name = p.alias;
    AttrPtr target;
    // Follow alias chains (`#loc2 = loc(#loc1)`) with a bound.
    for (int hops = 0; hops < 64; ++hops) {
      auto it = attr_aliases_.find(name);
      if (it == attr_aliases_.end()) {
        return ErrorAt(p.offset, absl::StrCat("undefined location alias #", name));
      }
      target = it->second;
      auto same = std::find_if(pending_locs_.begin(), pending_locs_.end(),
                               [&](const PendingLoc& q) { return q.placeholder == target; });
      if (same == pending_locs_.end()) break;
      name = same->alias;
      target = nullptr;
    }
    if (!target) return ErrorAt(p.offset, "location alias cycle");
    switch (target->kind) {
      case AttrKind::kUnknownLoc: case AttrKind::kFileLineColLoc: case AttrKind::kNameLoc:
      case AttrKind::kCallSiteLoc: case AttrKind::kFusedLoc:
        break;
      default:
        return ErrorAt(p.offset, absl::StrCat("#", p.alias, " is not a location"));
    }
    *p.placeholder = *target;
  }
  for (PendingResource& r : pending_resources_) {
    auto it = resources_.find(r.attr->str);
    if (it == resources_.end()) continue;  // an external resource: keep the key only
    r.attr->data = it->second;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Operation>> Parser::ParseTopLevel() {
  auto top = std::make_unique<Block>();
  PushScope(true);
  while (!Is(TokKind::kEof)) {
    if ((Is(TokKind::kHashIdent) || Is(TokKind::kBangIdent)) && Peek().kind == TokKind::kEqual) {
      EMBER_RETURN_IF_ERROR(ParseAliasDefinition());
    } else if (Is(TokKind::kFileMetadataBegin)) {
      EMBER_RETURN_IF_ERROR(ParseFileMetadata());
    } else if (Is(TokKind::kError)) {
      return Error(absl::StrCat("invalid token '", S(tok_.text.substr(0, 40)), "'"));
    } else {
      EMBER_RETURN_IF_ERROR(ParseOperation(*top));
    }
  }
  EMBER_RETURN_IF_ERROR(PopScope());
  EMBER_RETURN_IF_ERROR(ResolveDeferred());
  if (top->operations.size() == 1 && top->operations[0]->name == "builtin.module") {
    std::unique_ptr<Operation> module = std::move(top->operations[0]);
    module->parent = nullptr;
    return module;
  }
  auto module = std::make_unique<Operation>();
  module->name = "builtin.module";
  module->loc = FileLoc(0);
  Region r;
  r.blocks.push_back(std::move(top));
  module->regions.push_back(std::move(r));
  FixParents(*module);
  return module;
}

}  // namespace ember::frontend::text

namespace ember::frontend {

absl::StatusOr<std::unique_ptr<Operation>> ParseMlirText(std::string_view text,
                                                         std::string_view filename) {
  text::Parser parser(text, filename);
  return parser.ParseTopLevel();
}

absl::StatusOr<AttrPtr> ParseMlirAttribute(std::string_view text) {
  text::Parser parser(text, "<attribute>");
  EMBER_ASSIGN_OR_RETURN(AttrPtr attr, parser.ParseAttribute());
  if (!parser.Is(text::TokKind::kEof)) return parser.Error("unexpected text after the attribute");
  return attr;
}

std::vector<MlirTextChunk> SplitMlirInput(std::string_view text) {
  std::vector<MlirTextChunk> chunks;
  std::string current;
  int line = 1;
  int chunk_first = 1;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(pos, end - pos);
    size_t first = 0;
    while (first < l.size() && (l[first] == ' ' || l[first] == '\t')) ++first;
    if (l.substr(first, 8) == "// -----") {
      chunks.push_back({std::move(current), chunk_first});
      current = std::string(static_cast<size_t>(line), '\n');
      chunk_first = line + 1;
    } else {
      current.append(l);
      current.push_back('\n');
    }
    pos = end + 1;
    ++line;
  }
  chunks.push_back({std::move(current), chunk_first});
  return chunks;
}

}  // namespace ember::frontend
