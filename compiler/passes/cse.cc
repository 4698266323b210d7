// Common subexpression elimination: within one computation, a pure instruction equal to an
// earlier one (opcode, operands, attributes, regions, callee, result types) reuses its results.
#include <unordered_map>
#include <vector>

#include "compiler/passes/pass.h"
#include "compiler/passes/rewrite.h"

namespace ember::passes {
namespace {

size_t HashInstruction(const ir::Instruction& inst) {
  size_t h = static_cast<size_t>(inst.opcode()) * 0x9E3779B97F4A7C15ull;
  auto mix = [&h](size_t v) { h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2); };
  for (const ir::Value* v : inst.operands()) mix(std::hash<const void*>()(v));
  for (const auto& [name, attr] : inst.attributes().entries()) {
    mix(std::hash<std::string>()(name));
    if (attr.kind == ir::Attribute::Kind::kLiteral && attr.literal != nullptr) {
      // Hash a bounded prefix of the bytes: equality below compares everything.
      absl::Span<const uint8_t> bytes = attr.literal->bytes();
      size_t n = std::min<size_t>(bytes.size(), 256);
      mix(std::hash<std::string_view>()(
          std::string_view(reinterpret_cast<const char*>(bytes.data()), n)));
    } else if (attr.kind == ir::Attribute::Kind::kInts) {
      for (int64_t x : attr.ints) mix(static_cast<size_t>(x));
    }
  }
  return h;
}

bool SameInstruction(const ir::Instruction& a, const ir::Instruction& b) {
  if (a.opcode() != b.opcode() || a.operands() != b.operands() || a.regions() != b.regions() ||
      a.callee() != b.callee() || a.num_results() != b.num_results()) {
    return false;
  }
  for (size_t i = 0; i < a.num_results(); ++i) {
    if (a.result(i)->type() != b.result(i)->type()) return false;
  }
  const auto& ea = a.attributes().entries();
  const auto& eb = b.attributes().entries();
  if (ea.size() != eb.size()) return false;
  for (size_t i = 0; i < ea.size(); ++i) {
    if (ea[i].first != eb[i].first || !(ea[i].second == eb[i].second)) return false;
  }
  return true;
}

class CsePass : public Pass {
 public:
  std::string name() const override { return "cse"; }

  absl::StatusOr<bool> Run(ir::Module& module) override {
    ValueMap replacements;
    for (const auto& computation : module.computations()) {
      std::unordered_map<size_t, std::vector<const ir::Instruction*>> seen;
      for (const auto& instruction : computation->instructions()) {
        ir::Instruction& inst = *instruction;
        // Operands first: earlier merges in this computation feed later keys.
        for (size_t i = 0; i < inst.operands().size(); ++i) {
          auto it = replacements.find(inst.operand(i));
          if (it != replacements.end()) inst.set_operand(i, it->second);
        }
        if (HasSideEffects(inst)) continue;
        std::vector<const ir::Instruction*>& bucket = seen[HashInstruction(inst)];
        const ir::Instruction* match = nullptr;
        for (const ir::Instruction* other : bucket) {
          if (SameInstruction(*other, inst)) {
            match = other;
            break;
          }
        }
        if (match == nullptr) {
          bucket.push_back(&inst);
          continue;
        }
        for (size_t i = 0; i < inst.num_results(); ++i) replacements[inst.result(i)] = match->result(i);
      }
    }
    if (replacements.empty()) return false;
    ReplaceUses(module, replacements);  // captures in regions
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateCsePass() { return std::make_unique<CsePass>(); }

}  // namespace ember::passes
