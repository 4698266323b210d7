#include "compiler/evaluator/scalar_program.h"

#include <type_traits>
#include <unordered_map>

namespace ember::eval {
namespace {

template <typename T>
bool CompareBits(Direction direction, CompareType type, uint64_t a, uint64_t b) {
  T x{}, y{};
  std::memcpy(static_cast<void*>(&x), &a, sizeof(T));  // the element's bytes, little-endian
  std::memcpy(static_cast<void*>(&y), &b, sizeof(T));
  return CompareElements(direction, type, x, y);
}

// Scalar element types a register holds: at most 8 bytes, not complex.
bool RegisterType(ir::ElementType type) {
  return ir::VisitElementType(type, [](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_void_v<T>) {
      return false;
    } else {
      return sizeof(T) <= 8 && !kIsComplex<T>;
    }
  });
}

const ir::ValueType* ScalarType(const ir::Value* v) {
  const ir::ValueType& type = v->type();
  if (!type.is_tensor() || type.shape().rank() != 0 || !RegisterType(type.shape().element_type())) {
    return nullptr;
  }
  return &type;
}

}  // namespace

std::optional<ScalarProgram> ScalarProgram::Compile(const ir::Computation& region) {
  ScalarProgram program;
  std::unordered_map<const ir::Value*, int> reg;
  auto add = [&](const ir::Value* v, uint64_t initial) {
    reg[v] = static_cast<int>(program.initial_.size());
    program.initial_.push_back(initial);
  };
  for (const auto& p : region.parameters()) {
    if (ScalarType(p.get()) == nullptr) return std::nullopt;
    program.parameter_types_.push_back(p->type().shape().element_type());
    add(p.get(), 0);
  }
  // A constant's bits, or nullopt when `inst` is not a scalar constant of its result type.
  auto constant_bits = [](const ir::Instruction& inst) -> std::optional<uint64_t> {
    const ir::Attribute* a = inst.attribute("value");
    if (inst.opcode() != ir::Opcode::kConstant || a == nullptr ||
        a->kind != ir::Attribute::Kind::kLiteral || a->literal == nullptr ||
        ScalarType(inst.result()) == nullptr ||
        !(a->literal->shape() == inst.result()->type().shape())) {
      return std::nullopt;
    }
    return Load(a->literal->bytes().data(), static_cast<int>(a->literal->bytes().size()));
  };
  // The register of operand i; constants of the enclosing computations (passes share and hoist
  // them) get one on first use. -1: the region reads another value from outside.
  auto operand = [&](const ir::Instruction& inst, size_t i) -> int {
    const ir::Value* v = inst.operand(i);
    if (auto it = reg.find(v); it != reg.end()) return it->second;
    if (v->producer() == nullptr) return -1;
    std::optional<uint64_t> bits = constant_bits(*v->producer());
    if (!bits.has_value()) return -1;
    add(v, *bits);
    return reg[v];
  };
  bool returned = false;
  for (const auto& inst : region.instructions()) {
    if (returned) return std::nullopt;
    if (inst->opcode() == ir::Opcode::kReturn) {
      if (inst->operands().empty()) return std::nullopt;
      program.result_ = operand(*inst, 0);
      if (program.result_ < 0) return std::nullopt;
      returned = true;
      continue;
    }
    if (inst->num_results() != 1 || !inst->regions().empty()) return std::nullopt;
    const ir::ValueType* type = ScalarType(inst->result());
    if (type == nullptr) return std::nullopt;
    for (size_t i = 0; i < inst->operands().size(); ++i) {
      if (operand(*inst, i) < 0 || ScalarType(inst->operand(i)) == nullptr) return std::nullopt;
    }
    const ir::ElementType result_type = type->shape().element_type();
    Step step;
    switch (inst->opcode()) {
      case ir::Opcode::kConstant: {
        std::optional<uint64_t> bits = constant_bits(*inst);
        if (!bits.has_value()) return std::nullopt;
        add(inst->result(), *bits);
        continue;
      }
      case ir::Opcode::kCompare: {
        if (inst->operands().size() != 2 || result_type != ir::ElementType::kPred) {
          return std::nullopt;
        }
        const ir::ElementType in = inst->operand(0)->type().shape().element_type();
        if (inst->operand(1)->type().shape().element_type() != in) return std::nullopt;
        absl::StatusOr<Direction> direction = ParseDirection(*inst);
        absl::StatusOr<CompareType> compare_type = ParseCompareType(*inst, in);
        if (!direction.ok() || !compare_type.ok()) return std::nullopt;  // the evaluator says why
        step.kind = Step::Kind::kCompare;
        step.direction = *direction;
        step.compare_type = *compare_type;
        step.compare = ir::VisitElementType(in, [](auto tag) -> CompareFn {
          using T = typename decltype(tag)::type;
          if constexpr (std::is_void_v<T>) {
            return nullptr;
          } else if constexpr (sizeof(T) > 8 || kIsComplex<T>) {
            return nullptr;
          } else {
            return &CompareBits<T>;
          }
        });
        if (step.compare == nullptr) return std::nullopt;
        break;
      }
      case ir::Opcode::kSelect:
        if (inst->operands().size() != 3 ||
            inst->operand(0)->type().shape().element_type() != ir::ElementType::kPred ||
            inst->operand(1)->type().shape().element_type() != result_type ||
            inst->operand(2)->type().shape().element_type() != result_type) {
          return std::nullopt;
        }
        step.kind = Step::Kind::kSelect;
        break;
      case ir::Opcode::kAnd:
      case ir::Opcode::kOr:
      case ir::Opcode::kXor:
      case ir::Opcode::kNot: {
        const bool unary = inst->opcode() == ir::Opcode::kNot;
        if (inst->operands().size() != (unary ? 1u : 2u)) return std::nullopt;
        for (const ir::Value* v : inst->operands()) {
          if (v->type().shape().element_type() != result_type) return std::nullopt;
        }
        // Zero-extended bits stay zero-extended under and / or / xor; not flips the value bits.
        const int bits = ir::VisitElementType(result_type, [](auto tag) -> int {
          using T = typename decltype(tag)::type;
          if constexpr (std::is_void_v<T>) {
            return 0;
          } else if constexpr (kIsPred<T>) {
            return 1;
          } else if constexpr (kIsInt<T>) {
            return BitWidthOf<T>();
          } else {
            return 0;
          }
        });
        if (bits == 0) return std::nullopt;
        step.mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
        step.kind = inst->opcode() == ir::Opcode::kAnd  ? Step::Kind::kAnd
                    : inst->opcode() == ir::Opcode::kOr ? Step::Kind::kOr
                    : inst->opcode() == ir::Opcode::kXor ? Step::Kind::kXor
                                                         : Step::Kind::kNot;
        break;
      }
      default:
        return std::nullopt;
    }
    step.a = operand(*inst, 0);
    if (inst->operands().size() > 1) step.b = operand(*inst, 1);
    if (inst->operands().size() > 2) step.c = operand(*inst, 2);
    add(inst->result(), 0);
    step.dst = reg[inst->result()];
    program.steps_.push_back(step);
  }
  if (!returned) return std::nullopt;
  return program;
}

uint64_t ScalarProgram::Run(std::vector<uint64_t>& r) const {
  for (const Step& s : steps_) {
    switch (s.kind) {
      case Step::Kind::kCompare:
        r[s.dst] = s.compare(s.direction, s.compare_type, r[s.a], r[s.b]) ? 1 : 0;
        break;
      case Step::Kind::kSelect:
        r[s.dst] = r[s.a] != 0 ? r[s.b] : r[s.c];
        break;
      case Step::Kind::kAnd:
        r[s.dst] = r[s.a] & r[s.b];
        break;
      case Step::Kind::kOr:
        r[s.dst] = r[s.a] | r[s.b];
        break;
      case Step::Kind::kXor:
        r[s.dst] = r[s.a] ^ r[s.b];
        break;
      case Step::Kind::kNot:
        r[s.dst] = ~r[s.a] & s.mask;
        break;
    }
  }
  return r[result_];
}

}  // namespace ember::eval
