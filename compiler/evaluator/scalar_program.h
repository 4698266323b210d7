// ScalarProgram: a region of scalar ops (a sort comparator) compiled once into a list of steps
// over the raw bits of its elements, so calling it once per element pair allocates nothing. It
// covers what comparators are made of (compare, select, constant, and / or / xor / not); for any
// other region Compile says no and the caller runs the region through the evaluator. Every step
// uses the evaluator's own element semantics (compare_semantics.h), so results are identical.
#ifndef EMBER_COMPILER_EVALUATOR_SCALAR_PROGRAM_H_
#define EMBER_COMPILER_EVALUATOR_SCALAR_PROGRAM_H_

#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "compiler/evaluator/compare_semantics.h"
#include "compiler/ir/module.h"

namespace ember::eval {

class ScalarProgram {
 public:
  // The program of `region`, whose parameters and values must all be rank-0 tensors of element
  // types of at most 8 bytes (no complex); nullopt when the region uses anything else.
  static std::optional<ScalarProgram> Compile(const ir::Computation& region);

  int num_parameters() const { return static_cast<int>(parameter_types_.size()); }
  ir::ElementType parameter_type(int i) const { return parameter_types_[i]; }

  // A register file with the constants loaded; the caller sets the parameters (registers 0 ..
  // num_parameters - 1, zero-extended element bits, see Load) and passes it to Run.
  std::vector<uint64_t> NewRegisters() const { return initial_; }
  // The bits of one element of `bytes_per_element` bytes (little-endian, zero-extended).
  static uint64_t Load(const uint8_t* element, int bytes_per_element) {
    uint64_t bits = 0;
    std::memcpy(&bits, element, static_cast<size_t>(bytes_per_element));
    return bits;
  }
  // Runs the steps and returns the bits of the region's first result (a pred is 0 or 1).
  uint64_t Run(std::vector<uint64_t>& registers) const;

 private:
  using CompareFn = bool (*)(Direction, CompareType, uint64_t, uint64_t);
  struct Step {
    enum class Kind { kCompare, kSelect, kAnd, kOr, kXor, kNot } kind;
    int dst = 0, a = 0, b = 0, c = 0;
    Direction direction = Direction::kEq;
    CompareType compare_type = CompareType::kFloat;
    CompareFn compare = nullptr;
    uint64_t mask = 0;  // the value bits of the element type (not flips only these)
  };

  std::vector<ir::ElementType> parameter_types_;
  std::vector<uint64_t> initial_;
  std::vector<Step> steps_;
  int result_ = 0;
};

}  // namespace ember::eval

#endif  // EMBER_COMPILER_EVALUATOR_SCALAR_PROGRAM_H_
