#include "tests/virtual_gpu/ptx/instr_builder.h"

#include <bit>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "tests/virtual_gpu/ptx/float_format.h"
#include "tests/virtual_gpu/ptx/kernel_compiler.h"

namespace ember::vgpu::ptx {
namespace {

struct SpecialInfo {
  const char* name;
  int32_t slot;
};
constexpr SpecialInfo kSpecials[] = {
    {"%tid.x", kSlotTidX},         {"%tid.y", kSlotTidY},         {"%tid.z", kSlotTidZ},
    {"%ntid.x", kSlotNtidX},       {"%ntid.y", kSlotNtidY},       {"%ntid.z", kSlotNtidZ},
    {"%ctaid.x", kSlotCtaidX},     {"%ctaid.y", kSlotCtaidY},     {"%ctaid.z", kSlotCtaidZ},
    {"%nctaid.x", kSlotNctaidX},   {"%nctaid.y", kSlotNctaidY},   {"%nctaid.z", kSlotNctaidZ},
    {"%laneid", kSlotLaneId},      {"%warpid", kSlotWarpId},      {"%nwarpid", kSlotNwarpId},
    {"%smid", kSlotSmId},          {"%nsmid", kSlotNsmId},        {"%gridid", kSlotGridId},
    {"%lanemask_eq", kSlotLanemaskEq}, {"%lanemask_le", kSlotLanemaskLe},
    {"%lanemask_lt", kSlotLanemaskLt}, {"%lanemask_ge", kSlotLanemaskGe},
    {"%lanemask_gt", kSlotLanemaskGt}, {"%dynamic_smem_size", kSlotDynamicSmem},
    {"%total_smem_size", kSlotTotalSmem},
};

uint64_t TruncateBits(uint64_t bits, int bytes) {
  return bytes >= 8 ? bits : bits & ((uint64_t{1} << (8 * bytes)) - 1);
}

}  // namespace

const InstructionTable& Instructions() {
  static const InstructionTable table = [] {
    InstructionTable t;
    RegisterIntegerInstructions(t);
    RegisterFloatInstructions(t);
    RegisterLogicInstructions(t);
    RegisterCompareInstructions(t);
    RegisterMoveInstructions(t);
    RegisterConvertInstructions(t);
    RegisterMemoryInstructions(t);
    RegisterAtomicInstructions(t);
    RegisterControlInstructions(t);
    RegisterWarpInstructions(t);
    return t;
  }();
  return table;
}

InstrBuilder::InstrBuilder(KernelCompiler& compiler, const Instruction& ast, Instr& out,
                           int function_index)
    : compiler_(compiler), ast_(ast), out_(out), function_(function_index),
      taken_(ast.mods.size(), false) {}

absl::Status InstrBuilder::Error(const std::string& message) const {
  return absl::InvalidArgumentError(
      absl::StrCat("line ", ast_.line, ": ", ast_.text, ": ", message));
}

std::string_view InstrBuilder::target_name() const { return compiler_.module().target; }
int InstrBuilder::target_sm() const { return compiler_.program().target_sm; }

bool InstrBuilder::Take(std::string_view mod) {
  for (size_t i = 0; i < ast_.mods.size(); ++i) {
    if (!taken_[i] && ast_.mods[i] == mod) {
      taken_[i] = true;
      return true;
    }
  }
  return false;
}

std::optional<std::string> InstrBuilder::TakeOneOf(std::initializer_list<std::string_view> mods) {
  for (size_t i = 0; i < ast_.mods.size(); ++i) {
    if (taken_[i]) continue;
    for (std::string_view m : mods) {
      if (ast_.mods[i] == m) {
        taken_[i] = true;
        return ast_.mods[i];
      }
    }
  }
  return std::nullopt;
}

std::vector<Type> InstrBuilder::TakeTypes() {
  std::vector<Type> types;
  for (size_t i = 0; i < ast_.mods.size(); ++i) {
    if (taken_[i]) continue;
    if (std::optional<Type> t = ParseType(ast_.mods[i])) {
      types.push_back(*t);
      taken_[i] = true;
    }
  }
  return types;
}

void InstrBuilder::TakePerformanceHints() {
  static constexpr std::string_view kHints[] = {"nc", "ca", "cg", "cs", "lu", "cv", "wb", "wt",
                                                "aligned", "uni", "volatile", "weak", "relaxed",
                                                "acquire", "release", "acq_rel", "sc", "cta",
                                                "gpu", "sys", "cluster", "L2::cache_hint"};
  for (size_t i = 0; i < ast_.mods.size(); ++i) {
    if (taken_[i]) continue;
    const std::string& m = ast_.mods[i];
    if (m.rfind("L1::", 0) == 0 || m.rfind("L2::", 0) == 0) {
      taken_[i] = true;
      continue;
    }
    for (std::string_view h : kHints) {
      if (m == h) taken_[i] = true;
    }
  }
}

absl::Status InstrBuilder::CheckAllTaken() {
  for (size_t i = 0; i < ast_.mods.size(); ++i) {
    if (!taken_[i]) {
      return Error(absl::StrCat("unsupported modifier .", ast_.mods[i], " for ", ast_.opcode,
                                " (the virtual GPU does not implement this form)"));
    }
  }
  return absl::OkStatus();
}

std::optional<Rounding> InstrBuilder::TakeRounding(bool integral) {
  if (integral) {
    if (Take("rni")) return Rounding::kNearest;
    if (Take("rzi")) return Rounding::kZero;
    if (Take("rmi")) return Rounding::kDown;
    if (Take("rpi")) return Rounding::kUp;
    return std::nullopt;
  }
  if (Take("rn")) return Rounding::kNearest;
  if (Take("rz")) return Rounding::kZero;
  if (Take("rm")) return Rounding::kDown;
  if (Take("rp")) return Rounding::kUp;
  if (Take("rna")) return Rounding::kNearestAway;
  return std::nullopt;
}

absl::Status InstrBuilder::ExpectOperands(int count) { return ExpectOperands(count, count); }

absl::Status InstrBuilder::ExpectOperands(int min_count, int max_count) {
  if (num_operands() < min_count || num_operands() > max_count) {
    return Error(min_count == max_count
                     ? absl::StrCat("expected ", min_count, " operands, got ", num_operands())
                     : absl::StrCat("expected ", min_count, " to ", max_count, " operands, got ",
                                    num_operands()));
  }
  return absl::OkStatus();
}

int InstrBuilder::RegisterBytes(const Operand& op) const {
  if (op.kind != Operand::Kind::kRegister) return 0;
  return TypeSize(RegisterType(op));
}

Type InstrBuilder::RegisterType(const Operand& op) const {
  if (op.kind != Operand::Kind::kRegister) return Type::kNone;
  return compiler_.layout(function_).function->registers[op.reg].type;
}

absl::StatusOr<int32_t> InstrBuilder::Dest(int i, Type type, bool allow_wider) {
  if (i >= num_operands()) return Error(absl::StrCat("missing operand ", i + 1));
  return DestOperand(operand(i), type, allow_wider);
}

absl::StatusOr<int32_t> InstrBuilder::DestOperand(const Operand& op, Type type, bool allow_wider) {
  if (op.kind == Operand::Kind::kSink) return compiler_.sink_slot();
  if (op.kind != Operand::Kind::kRegister) return Error("destination must be a register");
  if (op.negated) return Error("a destination cannot be negated");
  const Register& reg = compiler_.layout(function_).function->registers[op.reg];
  if (!RegisterFits(reg.type, type, allow_wider)) {
    return Error(absl::StrCat("register ", reg.name, " of type .", TypeName(reg.type),
                              " cannot hold a .", TypeName(type), " result"));
  }
  return compiler_.layout(function_).register_base + op.reg;
}

absl::StatusOr<int32_t> InstrBuilder::Source(int i, Type type, bool allow_wider) {
  if (i >= num_operands()) return Error(absl::StrCat("missing operand ", i + 1));
  return SourceOperand(operand(i), type, allow_wider);
}

int32_t InstrBuilder::Constant(uint64_t bits) { return compiler_.Constant(bits); }
int32_t InstrBuilder::compiler_carry_slot() { return compiler_.carry_slot(); }

absl::StatusOr<int32_t> InstrBuilder::SourceOperand(const Operand& op, Type type,
                                                    bool allow_wider) {
  const int size = TypeSize(type);
  switch (op.kind) {
    case Operand::Kind::kRegister: {
      const Register& reg = compiler_.layout(function_).function->registers[op.reg];
      if (op.negated) return Error("'!' is not allowed here");
      if (!RegisterFits(reg.type, type, allow_wider)) {
        return Error(absl::StrCat("register ", reg.name, " of type .", TypeName(reg.type),
                                  " used as a .", TypeName(type), " operand"));
      }
      return compiler_.layout(function_).register_base + op.reg;
    }
    case Operand::Kind::kSpecial: {
      if (!IsInteger(type)) {
        return Error(absl::StrCat("special register ", op.name, " used as .", TypeName(type)));
      }
      for (const SpecialInfo& s : kSpecials) {
        if (op.name == s.name) return s.slot;
      }
      if (op.name.rfind("%envreg", 0) == 0 || op.name == "%is_explicit_cluster") {
        return static_cast<int32_t>(kSlotZero);
      }
      return Error(absl::StrCat("special register ", op.name,
                                " is not available on the virtual GPU"));
    }
    case Operand::Kind::kInt: {
      if (type == Type::kF32) {
        return Constant(std::bit_cast<uint32_t>(static_cast<float>(op.int_value)));
      }
      if (type == Type::kF64) {
        return Constant(std::bit_cast<uint64_t>(static_cast<double>(op.int_value)));
      }
      if (type == Type::kPred) return Constant(op.int_value != 0 ? 1 : 0);
      if (IsFloat(type)) {
        return Error(absl::StrCat("integer immediate for a .", TypeName(type), " operand"));
      }
      return Constant(TruncateBits(static_cast<uint64_t>(op.int_value), size));
    }
    case Operand::Kind::kF32Bits:
    case Operand::Kind::kF64Bits: {
      const bool is32 = op.kind == Operand::Kind::kF32Bits;
      const double value = is32 ? std::bit_cast<float>(static_cast<uint32_t>(op.int_value))
                                : std::bit_cast<double>(static_cast<uint64_t>(op.int_value));
      if (type == Type::kF32) {
        if (is32) return Constant(static_cast<uint32_t>(op.int_value));
        return Constant(std::bit_cast<uint32_t>(static_cast<float>(value)));
      }
      if (type == Type::kF64) return Constant(std::bit_cast<uint64_t>(value));
      if (type == Type::kF16) return Constant(F32ToF16(static_cast<float>(value)));
      if (type == Type::kBF16) return Constant(F32ToBF16(static_cast<float>(value)));
      if (KindOf(type) == TypeKind::kBits && TypeSize(type) == (is32 ? 4 : 8)) {
        return Constant(static_cast<uint64_t>(op.int_value) & (is32 ? 0xffffffffull : ~0ull));
      }
      return Error(absl::StrCat("floating-point immediate for a .", TypeName(type), " operand"));
    }
    case Operand::Kind::kSymbol: {
      if (type != Type::kU64 && type != Type::kB64 && type != Type::kS64 && type != Type::kU32 &&
          type != Type::kB32) {
        return Error(absl::StrCat("symbol ", op.name, " used as a .", TypeName(type), " value"));
      }
      EMBER_ASSIGN_OR_RETURN(Address address, SymbolAddress(op));
      if (address.offset == 0) return address.slot;
      return Error(absl::StrCat("symbol ", op.name, " with an offset is not supported here"));
    }
    default:
      return Error("unsupported operand kind here");
  }
}

absl::StatusOr<int32_t> InstrBuilder::PredSource(int i, bool* negated) {
  if (i >= num_operands()) return Error(absl::StrCat("missing operand ", i + 1));
  const Operand& op = operand(i);
  if (op.kind == Operand::Kind::kInt) {
    if (negated) *negated = false;
    return Constant(op.int_value != 0 ? 1 : 0);
  }
  if (op.kind != Operand::Kind::kRegister) return Error("expected a predicate register");
  const Register& reg = compiler_.layout(function_).function->registers[op.reg];
  if (reg.type != Type::kPred) return Error(absl::StrCat(reg.name, " is not a predicate"));
  if (op.negated && negated == nullptr) return Error("'!' is not allowed here");
  if (negated) *negated = op.negated;
  return compiler_.layout(function_).register_base + op.reg;
}

absl::StatusOr<Address> InstrBuilder::SymbolAddress(const Operand& op) {
  Address a;
  a.offset = op.offset;
  FunctionLayout& layout = compiler_.layout(function_);
  if (op.var >= 0) {
    const Variable& var = layout.function->variables[op.var];
    const int64_t offset = layout.variable_offsets[op.var];
    a.symbol_space = var.space;
    switch (var.space) {
      case Space::kParam: {
        bool kernel_param = false;
        if (layout.function->is_entry) {
          for (int p : layout.function->params) kernel_param = kernel_param || p == op.var;
        }
        a.kind = kernel_param ? AddressKind::kKernelParam : AddressKind::kFuncParam;
        a.slot = Constant(kernel_param ? static_cast<uint64_t>(offset)
                                       : kFuncParamBase + static_cast<uint64_t>(offset));
        return a;
      }
      case Space::kLocal:
        a.kind = AddressKind::kLocal;
        a.slot = Constant(static_cast<uint64_t>(offset));
        return a;
      case Space::kShared:
        a.kind = AddressKind::kShared;
        a.slot = offset < 0 ? compiler_.Relocated("%dynamic_shared", 0)
                            : Constant(static_cast<uint64_t>(offset));
        return a;
      default:
        return Error(absl::StrCat("variable ", var.name, " has an unsupported state space"));
    }
  }
  if (const Variable* global = compiler_.module().FindGlobal(op.name)) {
    a.symbol_space = global->space;
    if (global->space == Space::kShared) {
      EMBER_ASSIGN_OR_RETURN(int64_t offset, compiler_.ModuleSharedOffset(*global));
      a.kind = AddressKind::kShared;
      a.slot = offset < 0 ? compiler_.Relocated("%dynamic_shared", 0)
                          : Constant(static_cast<uint64_t>(offset));
      return a;
    }
    a.kind = AddressKind::kGlobal;
    a.slot = compiler_.Relocated(global->name, 0);
    return a;
  }
  if (compiler_.module().FindFunction(op.name) != nullptr) {
    return Error(absl::StrCat("function addresses (", op.name, ") are not supported"));
  }
  return Error(absl::StrCat("undefined symbol ", op.name));
}

absl::StatusOr<Address> InstrBuilder::AddressOperand(int i) {
  if (i >= num_operands()) return Error(absl::StrCat("missing operand ", i + 1));
  const Operand& op = operand(i);
  if (op.kind != Operand::Kind::kAddress) return Error("expected an address [...]");
  const Operand& base = op.elements[0];
  Address a;
  if (base.kind == Operand::Kind::kRegister) {
    const Register& reg = compiler_.layout(function_).function->registers[base.reg];
    if (reg.type == Type::kPred || IsFloat(reg.type) || TypeSize(reg.type) < 4) {
      return Error(absl::StrCat("address register ", reg.name, " must be a 32- or 64-bit integer"));
    }
    a.kind = AddressKind::kRegister;
    a.slot = compiler_.layout(function_).register_base + base.reg;
    a.offset = op.offset;
    return a;
  }
  if (base.kind == Operand::Kind::kInt) {
    a.kind = AddressKind::kImmediate;
    a.slot = Constant(static_cast<uint64_t>(base.int_value));
    a.offset = op.offset;
    return a;
  }
  if (base.kind == Operand::Kind::kSymbol) {
    EMBER_ASSIGN_OR_RETURN(a, SymbolAddress(base));
    a.offset += op.offset;
    return a;
  }
  return Error("unsupported address form");
}

absl::Status InstrBuilder::BranchTarget(int i) {
  if (i >= num_operands() || operand(i).kind != Operand::Kind::kSymbol) {
    return Error("expected a label");
  }
  compiler_.AddBranchFixup(BranchFixup{static_cast<uint32_t>(compiler_.program().code.size()),
                                       function_, operand(i).name, ast_.scope, ast_.line});
  return absl::OkStatus();
}

absl::Status InstrBuilder::Call(int ret_operand, int callee_operand, int args_operand) {
  const Operand& callee_op = operand(callee_operand);
  const int callee = compiler_.FunctionIndex(callee_op.name);
  if (callee < 0) return Error(absl::StrCat("unknown function ", callee_op.name));
  const FunctionLayout& from = compiler_.layout(function_);
  const FunctionLayout& to = compiler_.layout(callee);
  CallSite site;
  auto bind = [&](int list_operand, const std::vector<int>& callee_vars, bool results) -> absl::Status {
    std::vector<const Operand*> items;
    if (list_operand >= 0) {
      for (const Operand& e : operand(list_operand).elements) items.push_back(&e);
    }
    if (items.size() != callee_vars.size()) {
      return Error(absl::StrCat("call passes ", items.size(), results ? " result" : " argument",
                                " parameters but ", callee_op.name, " declares ",
                                callee_vars.size()));
    }
    for (size_t k = 0; k < items.size(); ++k) {
      const Operand& item = *items[k];
      if (item.kind != Operand::Kind::kSymbol || item.var < 0 ||
          from.function->variables[item.var].space != Space::kParam) {
        return Error("call arguments and results must be .param variables");
      }
      const Variable& mine = from.function->variables[item.var];
      const Variable& theirs = to.function->variables[callee_vars[k]];
      if (mine.size_bytes() != theirs.size_bytes()) {
        return Error(absl::StrCat("parameter ", mine.name, " has ", mine.size_bytes(),
                                  " bytes but ", callee_op.name, "'s ", theirs.name, " has ",
                                  theirs.size_bytes()));
      }
      const uint32_t my_offset = static_cast<uint32_t>(from.variable_offsets[item.var]);
      const uint32_t their_offset = static_cast<uint32_t>(to.variable_offsets[callee_vars[k]]);
      const uint32_t bytes = static_cast<uint32_t>(mine.size_bytes());
      if (results) {
        site.results.push_back(ParamCopy{their_offset, my_offset, bytes});
      } else {
        site.arguments.push_back(ParamCopy{my_offset, their_offset, bytes});
      }
    }
    return absl::OkStatus();
  };
  EMBER_RETURN_IF_ERROR(bind(args_operand, to.function->params, false));
  EMBER_RETURN_IF_ERROR(bind(ret_operand, to.function->return_params, true));
  out_.flow = Flow::kCall;
  out_.aux = static_cast<uint32_t>(compiler_.program().calls.size());
  compiler_.program().calls.push_back(std::move(site));
  compiler_.AddCallFixup(CallFixup{static_cast<uint32_t>(compiler_.program().code.size()), callee});
  return absl::OkStatus();
}

}  // namespace ember::vgpu::ptx
