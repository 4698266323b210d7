// A fuzzer of the compile-and-execute path: small random StableHLO programs (elementwise ops,
// compare/select, converts, transposes, reshapes, slices, broadcasts, concatenations, reverses,
// pads, iotas, s32 matrix products and reductions over random shapes of f32 and s32) are
// compiled by the host backend (the default pass pipeline, fused and LLVM-compiled kernels) and
// by the reference evaluator and run on random inputs; the results must agree bit for bit (NaNs
// of any payload agree). Every op kept here is exact, so any difference is a bug. A crash fails
// the test binary (ASan/UBSan builds catch memory and undefined-behaviour errors). The run is
// bounded: EMBER_PROGRAM_FUZZ_RUNS programs (default 500 in CI: each is JIT-compiled, some
// 10 ms), starting at seed EMBER_PROGRAM_FUZZ_SEED; a finding prints its seed and program.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/passes/pass.h"
#include "tests/compiler/host/host_test_util.h"
#include "tests/compiler/parse_module.h"

namespace ember::host {
namespace {

using ::ember::test_util::Parse;

struct Val {
  std::string name;
  bool is_float = true;  // f32, else s32
  std::vector<int64_t> dims;
};

std::string TypeOf(const std::vector<int64_t>& dims, const char* element) {
  std::string t = "tensor<";
  for (int64_t d : dims) absl::StrAppend(&t, d, "x");
  return absl::StrCat(t, element, ">");
}
std::string TypeOf(const Val& v) { return TypeOf(v.dims, v.is_float ? "f32" : "i32"); }
std::string Ints(const std::vector<int64_t>& v) { return absl::StrJoin(v, ", "); }

// Builds one random program from a seed.
class ProgramGenerator {
 public:
  explicit ProgramGenerator(uint32_t seed) : rng_(seed) {}

  std::string Generate() {
    std::vector<std::string> params;
    const int num_params = Pick(1, 3);
    for (int i = 0; i < num_params; ++i) {
      Val v{absl::StrCat("%p", i), Coin(), RandomDims()};
      params.push_back(absl::StrCat(v.name, ": ", TypeOf(v)));
      values_.push_back(v);
    }
    const int ops = Pick(3, 16);
    for (int i = 0; i < ops; ++i) AddOp();
    std::vector<std::string> names, types;
    // The newest value, and sometimes one more of any age.
    const Val* newest = &values_.back();
    for (const Val* v : {newest, Coin() ? &Any() : nullptr}) {
      if (v == nullptr) continue;
      names.push_back(v->name);
      types.push_back(TypeOf(*v));
    }
    return absl::StrCat("func.func @main(", absl::StrJoin(params, ", "), ") -> (",
                        absl::StrJoin(types, ", "), ") {\n", body_, "  return ",
                        absl::StrJoin(names, ", "), " : ", absl::StrJoin(types, ", "), "\n}\n");
  }

 private:
  int Pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Coin() { return Pick(0, 1) == 1; }
  std::vector<int64_t> RandomDims() {
    static const int64_t kSizes[] = {1, 2, 3, 5, 8, 17, 33};
    std::vector<int64_t> dims(static_cast<size_t>(Pick(0, 3)));
    for (int64_t& d : dims) d = kSizes[Pick(0, 6)];
    return dims;
  }
  // Mostly one of the newest values, so ops build on each other (chains that fuse) rather than
  // on the parameters only (dead code the passes remove).
  const Val& Any() {
    const int n = static_cast<int>(values_.size());
    const int lo = Pick(0, 3) > 0 ? std::max(0, n - 3) : 0;
    return values_[static_cast<size_t>(Pick(lo, n - 1))];
  }
  std::string Fresh() { return absl::StrCat("%v", next_++); }
  Val Emit(const std::string& text, Val result) {
    absl::StrAppend(&body_, "  ", result.name, " = ", text, "\n");
    values_.push_back(result);
    return result;
  }
  // A value of `like`'s type: another value of that type, or a splat constant.
  std::string Partner(const Val& like) {
    std::vector<const Val*> same;
    for (const Val& v : values_) {
      if (v.is_float == like.is_float && v.dims == like.dims) same.push_back(&v);
    }
    if (!same.empty() && Pick(0, 3) > 0) {
      return same[static_cast<size_t>(Pick(0, static_cast<int>(same.size()) - 1))]->name;
    }
    static const char* kFloats[] = {"0.0", "-0.0", "1.5", "-3.0", "0x7FC00000", "0x7F800000"};
    static const char* kInts[] = {"0", "1", "-7", "2147483647", "-2147483648"};
    const std::string c = Fresh();
    absl::StrAppend(&body_, "  ", c, " = stablehlo.constant dense<",
                    like.is_float ? kFloats[Pick(0, 5)] : kInts[Pick(0, 4)], "> : ",
                    TypeOf(like), "\n");
    return c;
  }

  void AddOp() {
    const Val x = Any();
    const std::string t = TypeOf(x);
    const int rank = static_cast<int>(x.dims.size());
    switch (Pick(0, 15)) {
      case 0:
      case 1: {  // elementwise binary
        static const char* kOps[] = {"add", "subtract", "multiply", "maximum", "minimum"};
        const std::string y = Partner(x);
        Emit(absl::StrCat("stablehlo.", kOps[Pick(0, 4)], " ", x.name, ", ", y, " : ", t),
             Val{Fresh(), x.is_float, x.dims});
        return;
      }
      case 2: {  // unary
        Emit(absl::StrCat("stablehlo.", Coin() ? "negate" : "abs", " ", x.name, " : ", t),
             Val{Fresh(), x.is_float, x.dims});
        return;
      }
      case 3: {  // compare + select
        static const char* kDirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
        const std::string y = Partner(x);
        const std::string p = Fresh();
        absl::StrAppend(&body_, "  ", p, " = stablehlo.compare ", kDirs[Pick(0, 5)], ", ", x.name,
                        ", ", y, " : (", t, ", ", t, ") -> ", TypeOf(x.dims, "i1"), "\n");
        Emit(absl::StrCat("stablehlo.select ", p, ", ", x.name, ", ", y, " : ",
                          TypeOf(x.dims, "i1"), ", ", t),
             Val{Fresh(), x.is_float, x.dims});
        return;
      }
      case 4: {  // convert between f32 and s32
        Val r{Fresh(), !x.is_float, x.dims};
        Emit(absl::StrCat("stablehlo.convert ", x.name, " : (", t, ") -> ", TypeOf(r)), r);
        return;
      }
      case 5: {  // transpose
        if (rank < 2) return;
        std::vector<int64_t> perm(static_cast<size_t>(rank));
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng_);
        Val r{Fresh(), x.is_float, {}};
        for (int64_t p : perm) r.dims.push_back(x.dims[static_cast<size_t>(p)]);
        Emit(absl::StrCat("stablehlo.transpose ", x.name, ", dims = [", Ints(perm), "] : (", t,
                          ") -> ", TypeOf(r)),
             r);
        return;
      }
      case 6: {  // reshape: reversed dims, or flattened
        Val r{Fresh(), x.is_float, x.dims};
        if (Coin()) {
          std::reverse(r.dims.begin(), r.dims.end());
        } else {
          int64_t n = 1;
          for (int64_t d : x.dims) n *= d;
          r.dims = {n};
        }
        Emit(absl::StrCat("stablehlo.reshape ", x.name, " : (", t, ") -> ", TypeOf(r)), r);
        return;
      }
      case 7: {  // slice
        if (rank == 0) return;
        std::vector<std::string> parts;
        Val r{Fresh(), x.is_float, {}};
        for (int64_t d : x.dims) {
          const int64_t start = Pick(0, static_cast<int>(d) - 1);
          const int64_t limit = Pick(static_cast<int>(start) + 1, static_cast<int>(d));
          const int64_t stride = Pick(1, 3);
          parts.push_back(absl::StrCat(start, ":", limit, ":", stride));
          r.dims.push_back((limit - start + stride - 1) / stride);
        }
        Emit(absl::StrCat("stablehlo.slice ", x.name, " [", absl::StrJoin(parts, ", "), "] : (", t,
                          ") -> ", TypeOf(r)),
             r);
        return;
      }
      case 8: {  // broadcast_in_dim: a new leading dim
        if (rank >= 4) return;
        Val r{Fresh(), x.is_float, x.dims};
        r.dims.insert(r.dims.begin(), Pick(2, 3));
        std::vector<int64_t> map(static_cast<size_t>(rank));
        std::iota(map.begin(), map.end(), 1);
        Emit(absl::StrCat("stablehlo.broadcast_in_dim ", x.name, ", dims = [", Ints(map), "] : (",
                          t, ") -> ", TypeOf(r)),
             r);
        return;
      }
      case 9: {  // concatenate with a partner along a random dim
        if (rank == 0) return;
        const int64_t dim = Pick(0, rank - 1);
        const std::string y = Partner(x);
        Val r{Fresh(), x.is_float, x.dims};
        r.dims[static_cast<size_t>(dim)] *= 2;
        Emit(absl::StrCat("stablehlo.concatenate ", x.name, ", ", y, ", dim = ", dim, " : (", t,
                          ", ", t, ") -> ", TypeOf(r)),
             r);
        return;
      }
      case 12: {  // reverse some dims
        if (rank == 0) return;
        std::vector<int64_t> dims;
        for (int d = 0; d < rank; ++d) {
          if (Coin()) dims.push_back(d);
        }
        if (dims.empty()) dims.push_back(rank - 1);
        Emit(absl::StrCat("stablehlo.reverse ", x.name, ", dims = [", Ints(dims), "] : ", t),
             Val{Fresh(), x.is_float, x.dims});
        return;
      }
      case 13: {  // pad with edge and interior padding
        if (rank == 0) return;
        std::vector<int64_t> low, high, interior;
        Val r{Fresh(), x.is_float, {}};
        for (int64_t d : x.dims) {
          low.push_back(Pick(0, 2));
          high.push_back(Pick(0, 2));
          interior.push_back(Pick(0, 1));
          r.dims.push_back(low.back() + high.back() + d + (d - 1) * interior.back());
        }
        const std::string scalar = TypeOf({}, x.is_float ? "f32" : "i32");
        const std::string value = Fresh();
        absl::StrAppend(&body_, "  ", value, " = stablehlo.constant dense<",
                        x.is_float ? "-2.5" : "9", "> : ", scalar, "\n");
        Emit(absl::StrCat("stablehlo.pad ", x.name, ", ", value, ", low = [", Ints(low),
                          "], high = [", Ints(high), "], interior = [", Ints(interior), "] : (", t,
                          ", ", scalar, ") -> ", TypeOf(r)),
             r);
        return;
      }
      case 14: {  // plus an iota along a random dim (values that depend on the index)
        if (rank == 0) return;
        const std::string iota = Fresh();
        absl::StrAppend(&body_, "  ", iota, " = stablehlo.iota dim = ", Pick(0, rank - 1), " : ",
                        t, "\n");
        Emit(absl::StrCat("stablehlo.add ", x.name, ", ", iota, " : ", t),
             Val{Fresh(), x.is_float, x.dims});
        return;
      }
      case 15: {  // x . x^T over s32 (exact; f32 products round differently by design)
        if (rank != 2 || x.is_float) return;
        Val r{Fresh(), false, {x.dims[0], x.dims[0]}};
        Emit(absl::StrCat("stablehlo.dot_general ", x.name, ", ", x.name,
                          ", contracting_dims = [1] x [1] : (", t, ", ", t, ") -> ", TypeOf(r)),
             r);
        return;
      }
      default: {  // reduce: s32 add (exact in any order) or f32 maximum
        if (rank == 0) return;
        std::vector<int64_t> dims;
        Val r{Fresh(), x.is_float, {}};
        for (int d = 0; d < rank; ++d) {
          if (Coin() || (d == rank - 1 && dims.empty())) {
            dims.push_back(d);
          } else {
            r.dims.push_back(x.dims[static_cast<size_t>(d)]);
          }
        }
        const std::string init = Fresh();
        const std::string scalar = TypeOf({}, x.is_float ? "f32" : "i32");
        absl::StrAppend(&body_, "  ", init, " = stablehlo.constant dense<",
                        x.is_float ? "0xFF800000" : "0", "> : ", scalar, "\n");
        Emit(absl::StrCat("stablehlo.reduce(", x.name, " init: ", init, ") applies stablehlo.",
                          x.is_float ? "maximum" : "add", " across dimensions = [", Ints(dims),
                          "] : (", t, ", ", scalar, ") -> ", TypeOf(r)),
             r);
        return;
      }
    }
  }

  std::mt19937 rng_;
  std::vector<Val> values_;
  std::string body_;
  int next_ = 0;
};

// Random inputs with special values mixed in.
std::vector<eval::EvalValue> Inputs(const ir::Computation& entry, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<eval::EvalValue> args;
  for (const auto& p : entry.parameters()) {
    ir::Literal lit = ir::Literal::Create(p->type().shape()).value();
    if (p->type().element_type() == ir::ElementType::kF32) {
      static const float kSpecial[] = {0.0f, -0.0f, NAN, INFINITY, -INFINITY, 3e38f, 1e-45f};
      const absl::Span<float> values = lit.mutable_data<float>().value();
      for (float& x : values) {
        x = std::uniform_int_distribution<int>(0, 9)(rng) == 0
                ? kSpecial[std::uniform_int_distribution<int>(0, 6)(rng)]
                : std::uniform_real_distribution<float>(-100, 100)(rng);
      }
    } else {
      static const int32_t kSpecial[] = {0, -1, 2147483647, -2147483647 - 1};
      const absl::Span<int32_t> values = lit.mutable_data<int32_t>().value();
      for (int32_t& x : values) {
        x = std::uniform_int_distribution<int>(0, 9)(rng) == 0
                ? kSpecial[std::uniform_int_distribution<int>(0, 3)(rng)]
                : std::uniform_int_distribution<int32_t>(-1000, 1000)(rng);
      }
    }
    args.push_back(eval::EvalValue::Array(std::move(lit)));
  }
  return args;
}

bool SameResult(const ir::Literal& a, const ir::Literal& b) {
  if (!(a.shape() == b.shape())) return false;
  if (a == b) return true;
  if (a.element_type() != ir::ElementType::kF32) return false;
  auto x = a.data<float>().value();
  auto y = b.data<float>().value();
  for (size_t i = 0; i < x.size(); ++i) {
    const bool same = std::memcmp(&x[i], &y[i], 4) == 0 || (std::isnan(x[i]) && std::isnan(y[i]));
    if (!same) return false;
  }
  return true;
}

// Runs one program both ways; an empty string when they agree, else what differs.
std::string Differential(const std::string& text, uint32_t seed) {
  std::unique_ptr<ir::Module> reference = Parse(text);
  std::unique_ptr<ir::Module> optimized = Parse(text);
  if (reference == nullptr || optimized == nullptr) return "the generated program did not parse";
  passes::PassPipeline pipeline = passes::CreateDefaultPipeline();
  if (auto changed = pipeline.Run(*optimized); !changed.ok()) {
    return absl::StrCat("the pass pipeline failed: ", changed.status().ToString());
  }
  auto want_exe = testing::Compile(*reference->entry(), testing::HostBackend::kEvaluator);
  auto got_exe = testing::Compile(*optimized->entry(), testing::HostBackend::kCompiled);
  if (!want_exe.ok() || !got_exe.ok()) {
    return absl::StrCat("compile: evaluator ", want_exe.status().ToString(), ", host ",
                        got_exe.status().ToString());
  }
  auto want = (*want_exe)->Run(Inputs(*reference->entry(), seed));
  auto got = (*got_exe)->Run(Inputs(*optimized->entry(), seed));
  if (!want.ok() || !got.ok()) {
    return absl::StrCat("run: evaluator ", want.status().ToString(), ", host ",
                        got.status().ToString());
  }
  if (want->size() != got->size()) return "different numbers of results";
  for (size_t i = 0; i < want->size(); ++i) {
    if (!SameResult((*want)[i].array, (*got)[i].array)) {
      return absl::StrCat("result ", i, " differs\nevaluator: ", (*want)[i].array.ToString(),
                          "\nhost:      ", (*got)[i].array.ToString());
    }
  }
  return "";
}

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

TEST(ProgramFuzz, RandomProgramsAgreeOnTheHostBackendAndTheEvaluator) {
  const int runs = EnvInt("EMBER_PROGRAM_FUZZ_RUNS", 500);
  const uint32_t first = static_cast<uint32_t>(EnvInt("EMBER_PROGRAM_FUZZ_SEED", 1));
  int findings = 0;
  for (int i = 0; i < runs; ++i) {
    const uint32_t seed = first + static_cast<uint32_t>(i);
    const std::string text = ProgramGenerator(seed).Generate();
    const std::string difference = Differential(text, seed);
    if (!difference.empty()) {
      ++findings;
      ADD_FAILURE() << "seed " << seed << ": " << difference << "\nprogram:\n" << text;
    }
  }
  std::printf("program fuzz: %d programs compiled and run both ways, %d findings\n", runs,
              findings);
}

}  // namespace
}  // namespace ember::host
