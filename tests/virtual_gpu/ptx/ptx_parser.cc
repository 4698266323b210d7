#include "tests/virtual_gpu/ptx/ptx_parser.h"

#include <bit>
#include <cstring>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "tests/virtual_gpu/ptx/ptx_lexer.h"

namespace ember::vgpu::ptx {

const char* SpaceName(Space space) {
  switch (space) {
    case Space::kReg: return "reg";
    case Space::kGlobal: return "global";
    case Space::kShared: return "shared";
    case Space::kLocal: return "local";
    case Space::kConst: return "const";
    case Space::kParam: return "param";
    case Space::kGeneric: return "generic";
    default: return "none";
  }
}

Operand& Operand::operator=(const Operand& other) {
  if (this == &other) return *this;
  kind = other.kind;
  reg = other.reg;
  var = other.var;
  name = other.name;
  int_value = other.int_value;
  negated = other.negated;
  elements = other.elements;
  second = other.second ? std::make_unique<Operand>(*other.second) : nullptr;
  offset = other.offset;
  return *this;
}

const Function* Module::FindFunction(const std::string& name) const {
  for (const Function& f : functions) {
    if (f.name == name && !f.is_declaration) return &f;
  }
  for (const Function& f : functions) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

const Variable* Module::FindGlobal(const std::string& name) const {
  for (const Variable& v : globals) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

int Function::FindLabel(const std::string& label, int scope) const {
  for (int s = scope; s >= 0; s = scope_parent[s]) {
    for (size_t i = 0; i < labels.size(); ++i) {
      if (labels[i].scope == s && labels[i].name == label) return static_cast<int>(i);
    }
  }
  return -1;
}

namespace {

// Special registers (PTX ISA "Special Registers"); vector ones take .x/.y/.z.
bool IsSpecialRegisterBase(const std::string& name) {
  static const char* const kNames[] = {
      "%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid",
      "%gridid", "%lanemask_eq", "%lanemask_le", "%lanemask_lt", "%lanemask_ge", "%lanemask_gt",
      "%clock", "%clock_hi", "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi",
      "%dynamic_smem_size", "%total_smem_size", "%aggr_smem_size", "%cluster_ctarank",
      "%cluster_nctarank", "%clusterid", "%nclusterid", "%cluster_ctaid", "%cluster_nctaid",
      "%is_explicit_cluster", "%reserved_smem_offset_begin", "%reserved_smem_offset_end",
      "%reserved_smem_offset_cap", "%current_graph_exec"};
  for (const char* n : kNames) {
    if (name == n) return true;
  }
  if (name.rfind("%envreg", 0) == 0 || name.rfind("%pm", 0) == 0) return true;
  return false;
}

class Parser {
 public:
  Parser(std::vector<Token> tokens, std::string_view text) : tokens_(std::move(tokens)) {
    size_t start = 0;
    while (start <= text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      lines_.push_back(text.substr(start, end - start));
      start = end + 1;
    }
  }

  absl::StatusOr<Module> Parse() {
    while (!At(Token::Kind::kEnd)) {
      EMBER_RETURN_IF_ERROR(ParseTopLevel());
    }
    return std::move(module_);
  }

 private:
  // ---- token helpers
  const Token& Peek(int ahead = 0) const {
    size_t index = pos_ + static_cast<size_t>(ahead);
    return index < tokens_.size() ? tokens_[index] : tokens_.back();
  }
  bool At(Token::Kind kind) const { return Peek().kind == kind; }
  bool AtPunct(char c) const { return Peek().Is(c); }
  bool AtDirective(std::string_view d) const { return Peek().IsDirective(d); }
  const Token& Next() {
    const Token& t = Peek();
    if (pos_ < tokens_.size() - 1) ++pos_;
    return t;
  }
  absl::Status Error(const std::string& what) const {
    const Token& t = Peek();
    std::string near = t.kind == Token::Kind::kEnd ? "end of text" : absl::StrCat("'", t.text, "'");
    return absl::InvalidArgumentError(absl::StrCat("line ", t.line, ": ", what, " (at ", near, ")"));
  }
  absl::Status Expect(char c) {
    if (!AtPunct(c)) return Error(absl::StrCat("expected '", std::string(1, c), "'"));
    Next();
    return absl::OkStatus();
  }
  absl::StatusOr<int64_t> ExpectInt() {
    bool negative = false;
    if (AtPunct('-')) {
      Next();
      negative = true;
    }
    if (!At(Token::Kind::kInteger)) return Error("expected an integer");
    int64_t v = static_cast<int64_t>(Next().int_value);
    return negative ? -v : v;
  }
  absl::StatusOr<std::string> ExpectIdentifier(const char* what) {
    if (!At(Token::Kind::kIdentifier)) return Error(absl::StrCat("expected ", what));
    return Next().text;
  }
  // Skips the rest of a line-oriented directive (.loc, .file have no ';').
  void SkipLine() {
    const int line = Peek().line;
    Next();
    while (!At(Token::Kind::kEnd) && Peek().line == line) Next();
  }
  absl::Status SkipBalancedBraces() {
    EMBER_RETURN_IF_ERROR(Expect('{'));
    int depth = 1;
    while (depth > 0) {
      if (At(Token::Kind::kEnd)) return Error("unterminated section");
      if (AtPunct('{')) ++depth;
      if (AtPunct('}')) --depth;
      Next();
    }
    return absl::OkStatus();
  }
  absl::Status SkipToSemicolon() {
    while (!AtPunct(';')) {
      if (At(Token::Kind::kEnd)) return Error("expected ';'");
      Next();
    }
    Next();
    return absl::OkStatus();
  }

  // ---- module level
  absl::Status ParseTopLevel() {
    const Token& t = Peek();
    if (t.IsDirective(".version")) {
      Next();
      if (At(Token::Kind::kDecimal)) {
        std::string v = Next().text;
        size_t dot = v.find('.');
        module_.version_major = std::atoi(v.substr(0, dot).c_str());
        module_.version_minor = dot == std::string::npos ? 0 : std::atoi(v.substr(dot + 1).c_str());
      } else {
        EMBER_ASSIGN_OR_RETURN(int64_t major, ExpectInt());
        module_.version_major = static_cast<int>(major);
      }
      return absl::OkStatus();
    }
    if (t.IsDirective(".target")) {
      Next();
      EMBER_ASSIGN_OR_RETURN(module_.target, ExpectIdentifier("a target such as sm_80"));
      while (AtPunct(',')) {
        Next();
        EMBER_RETURN_IF_ERROR(ExpectIdentifier("a target option").status());
      }
      return absl::OkStatus();
    }
    if (t.IsDirective(".address_size")) {
      Next();
      EMBER_ASSIGN_OR_RETURN(int64_t size, ExpectInt());
      if (size != 64) return Error("only .address_size 64 is supported");
      module_.address_size = 64;
      return absl::OkStatus();
    }
    if (t.IsDirective(".file") || t.IsDirective(".loc")) {
      SkipLine();
      return absl::OkStatus();
    }
    if (t.IsDirective(".section")) {
      Next();
      Next();  // section name
      return SkipBalancedBraces();
    }
    if (t.IsDirective(".pragma")) return SkipToSemicolon();
    bool is_extern = false;
    while (AtDirective(".visible") || AtDirective(".extern") || AtDirective(".weak") ||
           AtDirective(".common")) {
      if (AtDirective(".extern")) is_extern = true;
      Next();
    }
    if (AtDirective(".entry") || AtDirective(".func")) return ParseFunction(is_extern);
    if (AtDirective(".global") || AtDirective(".const") || AtDirective(".shared")) {
      std::vector<Variable> vars;
      EMBER_RETURN_IF_ERROR(ParseVariableDeclaration(is_extern, &vars));
      for (Variable& v : vars) module_.globals.push_back(std::move(v));
      return absl::OkStatus();
    }
    return Error("unexpected token at module level");
  }

  static Space SpaceFromDirective(const std::string& d) {
    if (d == ".global") return Space::kGlobal;
    if (d == ".const") return Space::kConst;
    if (d == ".shared") return Space::kShared;
    if (d == ".local") return Space::kLocal;
    if (d == ".param") return Space::kParam;
    return Space::kNone;
  }

  // <space> [.align N] [.vN] [.ptr ...] .type name[dims] [= init] {, name...} ;
  absl::Status ParseVariableDeclaration(bool is_extern, std::vector<Variable>* out,
                                        bool in_parameter_list = false) {
    Variable base;
    base.line = Peek().line;
    base.space = SpaceFromDirective(Next().text);
    base.is_extern = is_extern;
    int vector = 1;
    while (At(Token::Kind::kDirective)) {
      const std::string d = Peek().text;
      if (d == ".align") {
        Next();
        EMBER_ASSIGN_OR_RETURN(int64_t align, ExpectInt());
        base.align = static_cast<int>(align);
      } else if (d == ".v2" || d == ".v4" || d == ".v8") {
        Next();
        vector = d == ".v2" ? 2 : d == ".v4" ? 4 : 8;
      } else if (d == ".ptr" || d == ".global" || d == ".shared" || d == ".const" ||
                 d == ".local") {
        Next();  // pointer attributes of kernel parameters: no effect on execution
      } else if (std::optional<Type> type = ParseType(d)) {
        Next();
        base.type = *type;
      } else {
        return Error(absl::StrCat("unsupported variable attribute ", d));
      }
    }
    if (base.type == Type::kNone) return Error("expected a variable type");
    while (true) {
      Variable v = base;
      EMBER_ASSIGN_OR_RETURN(v.name, ExpectIdentifier("a variable name"));
      if (AtPunct('<')) return Error("parameterized variable names are not supported");
      v.count = vector;
      while (AtPunct('[')) {
        Next();
        v.has_array = true;
        if (AtPunct(']')) {
          v.count = 0;
        } else {
          EMBER_ASSIGN_OR_RETURN(int64_t dim, ExpectInt());
          if (dim <= 0) return Error("array dimension must be positive");
          v.count *= dim;
        }
        EMBER_RETURN_IF_ERROR(Expect(']'));
      }
      if (v.align == 0) v.align = TypeSize(v.type) * vector;
      if (AtPunct('=')) {
        Next();
        EMBER_RETURN_IF_ERROR(ParseInitializer(&v));
      }
      out->push_back(std::move(v));
      if (in_parameter_list || !AtPunct(',')) break;
      Next();
    }
    if (!in_parameter_list) EMBER_RETURN_IF_ERROR(Expect(';'));
    return absl::OkStatus();
  }

  absl::Status AppendInitValue(Variable* v, const Token& t, bool negative) {
    const int size = TypeSize(v->type);
    uint64_t bits = 0;
    if (t.kind == Token::Kind::kInteger) {
      int64_t value = static_cast<int64_t>(t.int_value);
      if (negative) value = -value;
      if (v->type == Type::kF32) {
        bits = std::bit_cast<uint32_t>(static_cast<float>(value));
      } else if (v->type == Type::kF64) {
        bits = std::bit_cast<uint64_t>(static_cast<double>(value));
      } else {
        bits = static_cast<uint64_t>(value);
      }
    } else if (t.kind == Token::Kind::kF32Bits || t.kind == Token::Kind::kF64Bits ||
               t.kind == Token::Kind::kDecimal) {
      double value = t.kind == Token::Kind::kF32Bits
                         ? std::bit_cast<float>(static_cast<uint32_t>(t.int_value))
                     : t.kind == Token::Kind::kF64Bits ? std::bit_cast<double>(t.int_value)
                                                       : t.float_value;
      if (negative) value = -value;
      if (v->type == Type::kF32) {
        bits = std::bit_cast<uint32_t>(static_cast<float>(value));
      } else if (v->type == Type::kF64) {
        bits = std::bit_cast<uint64_t>(value);
      } else {
        return Error("floating-point initializer for an integer variable");
      }
    } else {
      return Error("unsupported initializer (only numeric constants are)");
    }
    for (int b = 0; b < size; ++b) v->init.push_back(static_cast<uint8_t>(bits >> (8 * b)));
    return absl::OkStatus();
  }

  absl::Status ParseInitializer(Variable* v) {
    if (AtPunct('{')) {
      Next();
      while (!AtPunct('}')) {
        if (AtPunct('{')) {
          EMBER_RETURN_IF_ERROR(ParseInitializer(v));
        } else {
          bool negative = false;
          if (AtPunct('-')) {
            Next();
            negative = true;
          }
          EMBER_RETURN_IF_ERROR(AppendInitValue(v, Next(), negative));
        }
        if (AtPunct(',')) Next();
        else if (!AtPunct('}')) return Error("expected ',' or '}' in initializer");
      }
      Next();
      return absl::OkStatus();
    }
    bool negative = false;
    if (AtPunct('-')) {
      Next();
      negative = true;
    }
    return AppendInitValue(v, Next(), negative);
  }

  absl::Status ParseParameterList(std::vector<int>* ids) {
    EMBER_RETURN_IF_ERROR(Expect('('));
    while (!AtPunct(')')) {
      if (!AtDirective(".param") && !AtDirective(".reg")) return Error("expected .param");
      if (AtDirective(".reg")) return Error(".reg parameters are not supported");
      std::vector<Variable> vars;
      EMBER_RETURN_IF_ERROR(ParseVariableDeclaration(false, &vars, /*in_parameter_list=*/true));
      for (Variable& v : vars) {
        ids->push_back(static_cast<int>(function_->variables.size()));
        scopes_.back()[v.name] = Binding{Binding::kVariable, static_cast<int>(function_->variables.size())};
        function_->variables.push_back(std::move(v));
      }
      if (AtPunct(',')) Next();
      else if (!AtPunct(')')) return Error("expected ',' or ')' in parameter list");
    }
    Next();
    return absl::OkStatus();
  }

  absl::Status ParseFunction(bool is_extern) {
    Function f;
    f.line = Peek().line;
    f.is_entry = Next().text == ".entry";
    function_ = &f;
    scopes_.assign(1, {});
    scope_ids_.assign(1, 0);
    if (!f.is_entry && AtPunct('(')) {
      EMBER_RETURN_IF_ERROR(ParseParameterList(&f.return_params));
    }
    EMBER_ASSIGN_OR_RETURN(f.name, ExpectIdentifier("a function name"));
    if (AtPunct('(')) EMBER_RETURN_IF_ERROR(ParseParameterList(&f.params));
    while (At(Token::Kind::kDirective)) {
      const std::string d = Next().text;
      if (d == ".maxntid" || d == ".reqntid") {
        int* dims = d == ".maxntid" ? f.maxntid : f.reqntid;
        dims[0] = dims[1] = dims[2] = 1;
        for (int i = 0; i < 3; ++i) {
          EMBER_ASSIGN_OR_RETURN(int64_t v, ExpectInt());
          dims[i] = static_cast<int>(v);
          if (!AtPunct(',')) break;
          Next();
        }
      } else if (d == ".minnctapersm" || d == ".maxnreg" || d == ".maxclusterrank" ||
                 d == ".reqnctapercluster" || d == ".maxnctapersm") {
        EMBER_RETURN_IF_ERROR(ExpectInt().status());
        while (AtPunct(',')) {
          Next();
          EMBER_RETURN_IF_ERROR(ExpectInt().status());
        }
      } else if (d == ".noreturn" || d == ".explicitcluster") {
      } else if (d == ".pragma") {
        Next();
        EMBER_RETURN_IF_ERROR(Expect(';'));
      } else {
        return Error(absl::StrCat("unsupported function directive ", d));
      }
    }
    if (AtPunct(';')) {
      Next();
      f.is_declaration = true;
      (void)is_extern;
    } else {
      EMBER_RETURN_IF_ERROR(Expect('{'));
      EMBER_RETURN_IF_ERROR(ParseBody());
    }
    function_ = nullptr;
    module_.functions.push_back(std::move(f));
    return absl::OkStatus();
  }

  // ---- function bodies
  struct Binding {
    enum Kind { kRegister, kVariable } kind;
    int id;
  };

  const Binding* Lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto found = it->find(name);
      if (found != it->end()) return &found->second;
    }
    return nullptr;
  }

  absl::Status DeclareRegister(const std::string& name, Type type) {
    if (scopes_.back().count(name)) return Error(absl::StrCat("duplicate declaration of ", name));
    if (IsSpecialRegisterBase(name)) {
      return Error(absl::StrCat(name, " is a special register and cannot be declared"));
    }
    scopes_.back()[name] = Binding{Binding::kRegister, static_cast<int>(function_->registers.size())};
    function_->registers.push_back(Register{name, type});
    return absl::OkStatus();
  }

  absl::Status ParseRegisterDeclaration() {
    Next();  // .reg
    Type type = Type::kNone;
    while (At(Token::Kind::kDirective)) {
      const std::string d = Next().text;
      if (d == ".v2" || d == ".v4" || d == ".v8") return Error("vector registers are not supported");
      std::optional<Type> t = ParseType(d);
      if (!t) return Error(absl::StrCat("unknown register type ", d));
      type = *t;
    }
    if (type == Type::kNone) return Error("expected a register type");
    while (true) {
      EMBER_ASSIGN_OR_RETURN(std::string name, ExpectIdentifier("a register name"));
      if (AtPunct('<')) {
        Next();
        EMBER_ASSIGN_OR_RETURN(int64_t count, ExpectInt());
        EMBER_RETURN_IF_ERROR(Expect('>'));
        if (count < 0 || count > (1 << 20)) return Error("register count out of range");
        for (int64_t i = 0; i < count; ++i) {
          EMBER_RETURN_IF_ERROR(DeclareRegister(absl::StrCat(name, i), type));
        }
      } else {
        EMBER_RETURN_IF_ERROR(DeclareRegister(name, type));
      }
      if (!AtPunct(',')) break;
      Next();
    }
    return Expect(';');
  }

  absl::Status ParseBody() {
    while (true) {
      if (At(Token::Kind::kEnd)) return Error("unterminated function body");
      if (AtPunct('}')) {
        Next();
        if (scopes_.size() == 1) return absl::OkStatus();
        scopes_.pop_back();
        scope_ids_.pop_back();
        continue;
      }
      if (AtPunct('{')) {
        Next();
        scopes_.emplace_back();
        scope_ids_.push_back(static_cast<int>(function_->scope_parent.size()));
        function_->scope_parent.push_back(scope_ids_[scope_ids_.size() - 2]);
        continue;
      }
      if (AtDirective(".reg")) {
        EMBER_RETURN_IF_ERROR(ParseRegisterDeclaration());
        continue;
      }
      if (AtDirective(".local") || AtDirective(".shared") || AtDirective(".param") ||
          AtDirective(".const") || AtDirective(".global")) {
        std::vector<Variable> vars;
        EMBER_RETURN_IF_ERROR(ParseVariableDeclaration(false, &vars));
        for (Variable& v : vars) {
          if (v.space == Space::kConst || v.space == Space::kGlobal) {
            return Error("function-scope .const/.global variables are not supported");
          }
          scopes_.back()[v.name] =
              Binding{Binding::kVariable, static_cast<int>(function_->variables.size())};
          function_->variables.push_back(std::move(v));
        }
        continue;
      }
      if (AtDirective(".loc") || AtDirective(".file")) {
        SkipLine();
        continue;
      }
      if (AtDirective(".pragma")) {
        EMBER_RETURN_IF_ERROR(SkipToSemicolon());
        continue;
      }
      if (At(Token::Kind::kDirective)) return Error(absl::StrCat("unsupported directive ", Peek().text));
      if (At(Token::Kind::kIdentifier) && Peek(1).Is(':')) {
        Label label;
        label.name = Next().text;
        Next();
        label.scope = scope_ids_.back();
        label.statement = static_cast<int>(function_->body.size());
        function_->labels.push_back(std::move(label));
        continue;
      }
      EMBER_RETURN_IF_ERROR(ParseInstruction());
    }
  }

  absl::Status ParseInstruction() {
    Instruction inst;
    const size_t first = pos_;
    inst.line = Peek().line;
    inst.scope = scope_ids_.back();
    if (AtPunct('@')) {
      Next();
      if (AtPunct('!')) {
        Next();
        inst.guard_negated = true;
      }
      EMBER_ASSIGN_OR_RETURN(std::string name, ExpectIdentifier("a guard predicate"));
      const Binding* b = Lookup(name);
      if (b == nullptr || b->kind != Binding::kRegister) {
        return Error(absl::StrCat("guard ", name, " is not a declared register"));
      }
      inst.guard = b->id;
    }
    EMBER_ASSIGN_OR_RETURN(inst.opcode, ExpectIdentifier("an instruction"));
    while (At(Token::Kind::kDirective)) inst.mods.push_back(Next().text.substr(1));
    while (!AtPunct(';')) {
      Operand op;
      EMBER_RETURN_IF_ERROR(ParseOperand(&op));
      if (AtPunct('|')) {
        Next();
        auto second = std::make_unique<Operand>();
        EMBER_RETURN_IF_ERROR(ParseOperand(second.get()));
        op.second = std::move(second);
      }
      inst.operands.push_back(std::move(op));
      if (AtPunct(',')) {
        Next();
      } else if (!AtPunct(';')) {
        return Error("expected ',' or ';' after an operand");
      }
    }
    Next();
    // The statement text for messages: its source line, without indentation and comments.
    (void)first;
    inst.text = SourceLine(inst.line);
    function_->body.push_back(std::move(inst));
    return absl::OkStatus();
  }

  absl::Status ResolveName(const std::string& name, Operand* op) {
    if (name == "_") {
      op->kind = Operand::Kind::kSink;
      return absl::OkStatus();
    }
    if (const Binding* b = Lookup(name)) {
      if (b->kind == Binding::kRegister) {
        op->kind = Operand::Kind::kRegister;
        op->reg = b->id;
      } else {
        op->kind = Operand::Kind::kSymbol;
        op->var = b->id;
        op->name = name;
      }
      return absl::OkStatus();
    }
    if (IsSpecialRegisterBase(name)) {
      op->kind = Operand::Kind::kSpecial;
      op->name = name;
      if (AtDirective(".x") || AtDirective(".y") || AtDirective(".z")) op->name += Next().text;
      return absl::OkStatus();
    }
    if (name[0] == '%') return Error(absl::StrCat("undeclared register ", name));
    op->kind = Operand::Kind::kSymbol;
    op->name = name;
    return absl::OkStatus();
  }

  absl::Status ParseOperand(Operand* op) {
    if (AtPunct('[')) {
      Next();
      op->kind = Operand::Kind::kAddress;
      Operand base;
      if (At(Token::Kind::kInteger)) {
        base.kind = Operand::Kind::kInt;
        base.int_value = static_cast<int64_t>(Next().int_value);
      } else {
        EMBER_ASSIGN_OR_RETURN(std::string name, ExpectIdentifier("an address"));
        EMBER_RETURN_IF_ERROR(ResolveName(name, &base));
      }
      op->elements.push_back(std::move(base));
      while (AtPunct('+') || AtPunct('-')) {
        const bool minus = Next().Is('-');
        EMBER_ASSIGN_OR_RETURN(int64_t offset, ExpectInt());
        op->offset += minus ? -offset : offset;
      }
      return Expect(']');
    }
    if (AtPunct('{') || AtPunct('(')) {
      const char close = AtPunct('{') ? '}' : ')';
      Next();
      op->kind = Operand::Kind::kVector;
      op->name = close == ')' ? "(" : "{";
      while (!AtPunct(close)) {
        Operand element;
        EMBER_RETURN_IF_ERROR(ParseOperand(&element));
        op->elements.push_back(std::move(element));
        if (AtPunct(',')) Next();
        else if (!AtPunct(close)) return Error("expected ',' in operand list");
      }
      Next();
      return absl::OkStatus();
    }
    if (AtPunct('!')) {
      Next();
      EMBER_RETURN_IF_ERROR(ParseOperand(op));
      if (op->kind != Operand::Kind::kRegister) return Error("'!' applies to predicates only");
      op->negated = true;
      return absl::OkStatus();
    }
    bool negative = false;
    if (AtPunct('-')) {
      Next();
      negative = true;
    }
    const Token& t = Peek();
    switch (t.kind) {
      case Token::Kind::kInteger:
        op->kind = Operand::Kind::kInt;
        op->int_value = static_cast<int64_t>(Next().int_value);
        if (negative) op->int_value = -op->int_value;
        return absl::OkStatus();
      case Token::Kind::kF32Bits: {
        op->kind = Operand::Kind::kF32Bits;
        uint32_t bits = static_cast<uint32_t>(Next().int_value);
        if (negative) bits ^= 0x80000000u;
        op->int_value = bits;
        return absl::OkStatus();
      }
      case Token::Kind::kF64Bits: {
        op->kind = Operand::Kind::kF64Bits;
        uint64_t bits = Next().int_value;
        if (negative) bits ^= 0x8000000000000000ull;
        op->int_value = static_cast<int64_t>(bits);
        return absl::OkStatus();
      }
      case Token::Kind::kDecimal: {
        op->kind = Operand::Kind::kF64Bits;
        double v = Next().float_value;
        op->int_value = static_cast<int64_t>(std::bit_cast<uint64_t>(negative ? -v : v));
        return absl::OkStatus();
      }
      case Token::Kind::kIdentifier: {
        if (negative) return Error("'-' before a name");
        std::string name = Next().text;
        return ResolveName(name, op);
      }
      default:
        return Error("expected an operand");
    }
  }

  std::string SourceLine(int line) const {
    if (line < 1 || static_cast<size_t>(line) > lines_.size()) return std::string();
    std::string_view l = lines_[line - 1];
    const size_t comment = l.find("//");
    if (comment != std::string_view::npos) l = l.substr(0, comment);
    while (!l.empty() && (l.front() == ' ' || l.front() == '\t' || l.front() == '{')) l.remove_prefix(1);
    while (!l.empty() && (l.back() == ' ' || l.back() == '\t' || l.back() == '\r' || l.back() == '}')) {
      l.remove_suffix(1);
    }
    std::string text;
    bool space = false;
    for (char c : l) {  // tabs and runs of blanks become one space
      if (c == ' ' || c == '\t') {
        space = !text.empty();
        continue;
      }
      if (space) text += ' ';
      space = false;
      text += c;
    }
    return text;
  }

  std::vector<Token> tokens_;
  std::vector<std::string_view> lines_;
  size_t pos_ = 0;
  Module module_;
  Function* function_ = nullptr;
  std::vector<std::map<std::string, Binding>> scopes_;
  std::vector<int> scope_ids_;
};

}  // namespace

absl::StatusOr<Module> ParseModule(std::string_view text) {
  EMBER_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(text));
  Parser parser(std::move(tokens), text);
  return parser.Parse();
}

}  // namespace ember::vgpu::ptx
