// Reference evaluation of the random-number ops: rng_bit_generator, bit-exact with XLA, and the
// (deprecated) rng op.
//
// rng_bit_generator reproduces XLA's RngBitGeneratorExpander + xla/hlo/builder/lib/prng.cc:
// - DEFAULT is PHILOX (what XLA:CPU and XLA:GPU pass to RngBitGeneratorExpander).
// - THREE_FRY: state u64[2] = [key, counter]. Threefry-2x32 with 20 rounds, key split into
//   (low, high) 32-bit words. 64-bit outputs: element i (row-major) encrypts counter + i and is
//   x0 | x1 << 32; the counter advances by the element count. 32-bit and narrower outputs: the
//   shape is split in two halves along its first even dimension (or the largest one when none
//   is even; scalars use [1]); half element j encrypts counter + j, x0 fills index 2*j and x1
//   index 2*j+1 of the split dimension; the counter advances by the half's element count.
//   Narrower outputs keep the low bits of each 32-bit word.
// - PHILOX: state u64[2] = [key, counter] or u64[3] = [key, counter_low, counter_high]; for
//   u64[2] the 128-bit counter is (low = state[1], high = state[0]) and only its low word is
//   written back. Philox-4x32 with 10 rounds; 32-bit outputs take 4 words per counter value
//   (element 4i+k is word k of counter + i), 64-bit outputs 2 per value (w0 | w1 << 32,
//   w2 | w3 << 32); the counter advances by the number of 128-bit blocks used.
// Float outputs receive the raw bits of the generated words. 1-bit and sub-byte outputs are
// rejected (XLA rejects them too).
//
// rng: UNIFORM on [a, b) (floats: a + (b - a) * u with u from the top mantissa-width bits;
// integers: a + bits mod (b - a); pred: one bit) and NORMAL (Box-Muller, mean a, stddev b), from a
// Philox stream keyed by the op's position in its computation, so every rng op is deterministic
// and different ops differ.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numbers>
#include <string>
#include <vector>

#include "compiler/evaluator/eval_family_support.h"
#include "compiler/evaluator/evaluator.h"

namespace ember::eval {
namespace {

namespace fs = family_support;

uint32_t Lo32(uint64_t v) { return static_cast<uint32_t>(v); }
uint32_t Hi32(uint64_t v) { return static_cast<uint32_t>(v >> 32); }
uint32_t RotL(uint32_t v, int d) { return (v << d) | (v >> (32 - d)); }

std::array<uint32_t, 2> ThreeFry2x32(std::array<uint32_t, 2> x, std::array<uint32_t, 2> key) {
  static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {key[0], key[1], 0x1BD11BDAu ^ key[0] ^ key[1]};
  x[0] += ks[0];
  x[1] += ks[1];
  auto rounds = [&](int first) {
    for (int r = first; r < first + 4; ++r) {
      x[0] += x[1];
      x[1] = RotL(x[1], kRotations[r]);
      x[1] ^= x[0];
    }
  };
  for (uint32_t i = 1; i <= 5; ++i) {
    rounds((i % 2 == 1) ? 0 : 4);
    x[0] += ks[i % 3];
    x[1] += ks[(i + 1) % 3] + i;
  }
  return x;
}

std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> x, std::array<uint32_t, 2> key) {
  constexpr uint32_t kW32A = 0x9E3779B9u, kW32B = 0xBB67AE85u;
  constexpr uint64_t kM4x32A = 0xD2511F53u, kM4x32B = 0xCD9E8D57u;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = kM4x32A * x[0];
    const uint64_t p1 = kM4x32B * x[2];
    x = {Hi32(p1) ^ x[1] ^ key[0], Lo32(p1), Hi32(p0) ^ x[3] ^ key[1], Lo32(p0)};
    key[0] += kW32A;
    key[1] += kW32B;
  }
  return x;
}

struct U128 {
  uint64_t low = 0, high = 0;
  U128 Plus(uint64_t v) const {
    U128 r{low + v, high};
    if (r.low < low) ++r.high;
    return r;
  }
};

// Philox words for `count` 128-bit blocks starting at `counter`.
std::vector<std::array<uint32_t, 4>> PhiloxBlocks(U128 counter, uint64_t key, int64_t count) {
  std::vector<std::array<uint32_t, 4>> blocks(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const U128 c = counter.Plus(static_cast<uint64_t>(i));
    blocks[i] =
        Philox4x32({Lo32(c.low), Hi32(c.low), Lo32(c.high), Hi32(c.high)}, {Lo32(key), Hi32(key)});
  }
  return blocks;
}

// XLA's SplitShapeIntoHalves: the split dimension for 32-bit ThreeFry (-1 for scalars).
int64_t SplitDim(const std::vector<int64_t>& dims) {
  if (dims.empty()) return -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] % 2 == 0) return static_cast<int64_t>(i);
  }
  int64_t best = 0;
  for (size_t i = 1; i < dims.size(); ++i) {
    if (dims[i] > dims[best]) best = static_cast<int64_t>(i);
  }
  return best;
}

// Writes the low `bytes` bytes of each word into `out` (little-endian host).
void StoreWords(const std::vector<uint64_t>& words, int bytes, ir::Literal& out) {
  uint8_t* dst = out.mutable_bytes().data();
  for (size_t i = 0; i < words.size(); ++i) {
    std::memcpy(dst + i * static_cast<size_t>(bytes), &words[i], static_cast<size_t>(bytes));
  }
}

}  // namespace

namespace family_support {

absl::StatusOr<std::vector<EvalValue>> RngBitGeneratorCore(const ir::Instruction& inst,
                                                           const ir::Literal& state,
                                                           const std::string& algorithm_in,
                                                           const ir::Shape& output_shape) {
  const std::string algorithm = algorithm_in == "DEFAULT" ? "PHILOX" : algorithm_in;
  if (state.element_type() != ir::ElementType::kU64 || state.shape().rank() != 1) {
    return OpError(inst, absl::StrCat("initial_state must be a rank-1 ui64 tensor, got ",
                                      state.shape().ToString()));
  }
  EMBER_ASSIGN_OR_RETURN(absl::Span<const uint64_t> s, state.data<uint64_t>());
  const int bits = ir::BitWidth(output_shape.element_type());
  if ((bits != 8 && bits != 16 && bits != 32 && bits != 64) ||
      ir::IsComplex(output_shape.element_type())) {
    return OpError(inst, absl::StrCat("output element type ",
                                      std::string(ir::ElementTypeName(output_shape.element_type())),
                                      " is not 8, 16, 32 or 64 bits wide"));
  }
  const std::vector<int64_t>& dims = output_shape.dims();
  const int64_t n = output_shape.element_count();
  std::vector<uint64_t> words(static_cast<size_t>(n));
  std::vector<uint64_t> new_state(s.begin(), s.end());
  if (algorithm == "THREE_FRY") {
    if (s.size() != 2) {
      return OpError(inst, absl::StrCat("THREE_FRY needs a state of 2 ui64, got ", s.size()));
    }
    const std::array<uint32_t, 2> key = {Lo32(s[0]), Hi32(s[0])};
    const uint64_t counter = s[1];
    if (bits == 64) {
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t c = counter + static_cast<uint64_t>(i);
        const auto x = ThreeFry2x32({Lo32(c), Hi32(c)}, key);
        words[i] = static_cast<uint64_t>(x[0]) | (static_cast<uint64_t>(x[1]) << 32);
      }
      new_state[1] = counter + static_cast<uint64_t>(n);
    } else {
      const int64_t split = SplitDim(dims);
      std::vector<int64_t> half = dims;
      if (split < 0) {
        half = {1};
      } else {
        half[split] = (dims[split] + 1) / 2;
      }
      const int64_t half_count = Product(half);
      std::vector<std::array<uint32_t, 2>> pairs(static_cast<size_t>(half_count));
      for (int64_t j = 0; j < half_count; ++j) {
        const uint64_t c = counter + static_cast<uint64_t>(j);
        pairs[j] = ThreeFry2x32({Lo32(c), Hi32(c)}, key);
      }
      if (split < 0) {
        if (n == 1) words[0] = pairs[0][0];
      } else if (n > 0) {
        const std::vector<int64_t> half_strides = RowMajorStrides(half);
        std::vector<int64_t> index(dims.size(), 0);
        int64_t linear = 0;
        do {
          int64_t h = 0;
          for (size_t d = 0; d < dims.size(); ++d) {
            const int64_t coordinate = static_cast<int64_t>(d) == split ? index[d] / 2 : index[d];
            h += coordinate * half_strides[d];
          }
          words[linear++] = pairs[h][index[split] % 2];
        } while (NextIndex(index, dims));
      }
      new_state[1] = counter + static_cast<uint64_t>(half_count);
    }
  } else if (algorithm == "PHILOX") {
    if (s.size() != 2 && s.size() != 3) {
      return OpError(inst, absl::StrCat("PHILOX needs a state of 2 or 3 ui64, got ", s.size()));
    }
    const U128 counter = s.size() >= 3 ? U128{s[1], s[2]} : U128{s[1], s[0]};
    const int64_t blocks_needed = bits == 64 ? (2 * n + 3) / 4 : (n + 3) / 4;
    const auto blocks = PhiloxBlocks(counter, s[0], blocks_needed);
    for (int64_t i = 0; i < n; ++i) {
      if (bits == 64) {
        const auto& b = blocks[i / 2];
        const int64_t k = i % 2;
        words[i] = static_cast<uint64_t>(b[2 * k]) | (static_cast<uint64_t>(b[2 * k + 1]) << 32);
      } else {
        words[i] = blocks[i / 4][i % 4];
      }
    }
    const U128 next = counter.Plus(static_cast<uint64_t>(blocks_needed));
    new_state[1] = next.low;
    if (s.size() >= 3) new_state[2] = next.high;
  } else {
    return OpError(inst, absl::StrCat("unknown rng_algorithm '", algorithm_in, "'"));
  }
  EMBER_ASSIGN_OR_RETURN(ir::Shape row_major,
                         ir::Shape::Make(output_shape.element_type(), output_shape.dims()));
  EMBER_ASSIGN_OR_RETURN(ir::Literal output, ir::Literal::Create(row_major));
  StoreWords(words, bits / 8, output);
  EMBER_ASSIGN_OR_RETURN(ir::Literal state_out,
                         ir::Literal::FromValues<uint64_t>(
                             {static_cast<int64_t>(new_state.size())},
                             absl::Span<const uint64_t>(new_state.data(), new_state.size())));
  std::vector<EvalValue> results;
  results.push_back(EvalValue::Array(std::move(state_out)));
  results.push_back(EvalValue::Array(std::move(output)));
  return results;
}

}  // namespace family_support

namespace {

absl::StatusOr<std::vector<EvalValue>> EvalRngBitGenerator(const ir::Instruction& inst,
                                                           std::vector<EvalValue>& operands,
                                                           Evaluator&) {
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 1));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* state, fs::ArrayOperand(inst, operands, 0));
  EMBER_ASSIGN_OR_RETURN(std::string algorithm,
                         fs::StringAttr(inst, "rng_algorithm", std::string("DEFAULT")));
  if (inst.num_results() != 2) return fs::OpError(inst, "expects two results (state, output)");
  EMBER_ASSIGN_OR_RETURN(ir::Shape state_shape, fs::ResultShape(inst, 0));
  if (state_shape.dims() != state->shape().dims()) {
    return fs::OpError(inst, "output_state must have the initial state's type");
  }
  EMBER_ASSIGN_OR_RETURN(ir::Shape output_shape, fs::ResultShape(inst, 1));
  return fs::RngBitGeneratorCore(inst, *state, algorithm, output_shape);
}

// A key that differs between rng ops but not between runs: the op's computation and position.
uint64_t RngKey(const ir::Instruction& inst) {
  uint64_t position = 0;
  if (inst.parent() != nullptr) {
    for (const auto& other : inst.parent()->instructions()) {
      if (other.get() == &inst) break;
      ++position;
    }
    return std::hash<std::string>{}(inst.parent()->name()) ^ (position * 0x9E3779B97F4A7C15ull);
  }
  return position;
}

absl::StatusOr<std::vector<EvalValue>> EvalRng(const ir::Instruction& inst,
                                               std::vector<EvalValue>& operands, Evaluator&) {
  if (operands.size() < 2) return fs::OpError(inst, "expects operands a, b (and shape)");
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* a, fs::ArrayOperand(inst, operands, 0));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* b, fs::ArrayOperand(inst, operands, 1));
  EMBER_ASSIGN_OR_RETURN(std::string distribution,
                         fs::StringAttr(inst, "rng_distribution", std::string("UNIFORM")));
  EMBER_ASSIGN_OR_RETURN(ir::Shape shape, fs::ResultShape(inst, 0));
  const ir::ElementType type = shape.element_type();
  const int64_t n = shape.element_count();
  const auto blocks = PhiloxBlocks(U128{0, 0}, RngKey(inst), n + 1);  // 2n + 2 64-bit words
  auto word64 = [&](int64_t i) {                                      // two 64-bit words per block
    const auto& blk = blocks[i / 2];
    const int64_t k = i % 2;
    return static_cast<uint64_t>(blk[2 * k]) | (static_cast<uint64_t>(blk[2 * k + 1]) << 32);
  };
  auto unit = [&](int64_t i) {  // [0, 1) with 53 random bits
    return static_cast<double>(word64(i) >> 11) * 0x1.0p-53;
  };
  ir::Literal result;
  if (distribution == "NORMAL") {
    if (!ir::IsFloat(type)) return fs::OpError(inst, "NORMAL needs a floating-point type");
    EMBER_ASSIGN_OR_RETURN(std::vector<double> av, fs::LiteralTo<double>(*a));
    EMBER_ASSIGN_OR_RETURN(std::vector<double> bv, fs::LiteralTo<double>(*b));
    std::vector<double> values(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const double u1 = std::max(unit(2 * i), 1e-300);
      const double u2 = unit(2 * i + 1);
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
      values[i] = av[0] + bv[0] * z;
    }
    EMBER_ASSIGN_OR_RETURN(result, fs::LiteralFrom<double>(shape, absl::MakeConstSpan(values)));
  } else if (distribution == "UNIFORM") {
    if (ir::IsFloat(type)) {
      EMBER_ASSIGN_OR_RETURN(std::vector<double> av, fs::LiteralTo<double>(*a));
      EMBER_ASSIGN_OR_RETURN(std::vector<double> bv, fs::LiteralTo<double>(*b));
      std::vector<double> values(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        double v = av[0] + (bv[0] - av[0]) * unit(i);
        if (v >= bv[0] && bv[0] > av[0]) v = av[0];  // keep [a, b) after rounding
        values[i] = v;
      }
      EMBER_ASSIGN_OR_RETURN(result, fs::LiteralFrom<double>(shape, absl::MakeConstSpan(values)));
    } else if (ir::IsInteger(type) || type == ir::ElementType::kPred) {
      EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> av, fs::IntegerValues(*a));
      EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> bv, fs::IntegerValues(*b));
      const uint64_t range = static_cast<uint64_t>(bv[0]) - static_cast<uint64_t>(av[0]);
      std::vector<uint64_t> values(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t offset = range == 0 ? 0 : word64(i) % range;
        values[i] = static_cast<uint64_t>(av[0]) + offset;
      }
      EMBER_ASSIGN_OR_RETURN(result, fs::LiteralFrom<uint64_t>(shape, absl::MakeConstSpan(values)));
    } else {
      return fs::OpError(inst, "UNIFORM needs an integer, pred or floating-point type");
    }
  } else {
    return fs::OpError(inst, absl::StrCat("unknown rng_distribution '", distribution, "'"));
  }
  std::vector<EvalValue> out;
  out.push_back(EvalValue::Array(std::move(result)));
  return out;
}

}  // namespace

void RegisterRandomOps(OpTable& table) {
  table.Register(ir::Opcode::kRngBitGenerator, EvalRngBitGenerator);
  table.Register(ir::Opcode::kRng, EvalRng);
}

}  // namespace ember::eval
