// Implementation limits checked at compile time. Upstream's verifier (and its test files) let
// rng_bit_generator take a state of any type; the spec and Ember's generators want a 1-D ui64
// state of the algorithm's size and fill outputs of 8 to 64-bit elements.
#include "compiler/driver/implementation_limits.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace ember::compiler {
namespace {

absl::Status RngBitGenerator(const ir::Instruction& inst) {
  auto error = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(inst.Describe(), ": ", what));
  };
  if (inst.operands().size() != 1 || inst.num_results() != 2) return absl::OkStatus();
  const ir::ValueType& state = inst.operand(0)->type();
  const ir::ValueType& output = inst.result(1)->type();
  if (!state.is_tensor() || !output.is_tensor()) return absl::OkStatus();  // the verifier's
  if (state.element_type() != ir::ElementType::kU64 || state.dims().size() != 1) {
    return error(absl::StrCat("initial_state must be a 1-D ui64 tensor, got ", state.ToString()));
  }
  const ir::Attribute* a = inst.attribute("rng_algorithm");
  const std::string algorithm =
      a != nullptr && a->kind == ir::Attribute::Kind::kString ? a->s : "DEFAULT";
  const int64_t n = state.dims()[0];
  if (algorithm == "THREE_FRY" && n != 2) {
    return error(absl::StrCat("THREE_FRY takes a state of 2 ui64, got ", n));
  }
  if (algorithm != "THREE_FRY" && n != 2 && n != 3) {
    return error(absl::StrCat(algorithm == "PHILOX" ? "PHILOX" : "DEFAULT (PHILOX here)",
                              " takes a state of 2 or 3 ui64, got ", n));
  }
  const int bits = ir::BitWidth(output.element_type());
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64) {
    return error(absl::StrCat("output elements of ", bits, " bits are not generated (8, 16, 32 ",
                              "or 64-bit integers or floats are): ", output.ToString()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckImplementationLimits(const ir::Module& module) {
  for (const auto& computation : module.computations()) {
    for (const auto& inst : computation->instructions()) {
      if (inst->opcode() == ir::Opcode::kRngBitGenerator) {
        if (absl::Status s = RngBitGenerator(*inst); !s.ok()) return s;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace ember::compiler
