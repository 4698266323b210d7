// Shared by the differential tests of ops the host backend runs natively in host thunks (top_k,
// cumulative scans): one program compiled by the host backend (after the default passes) and by
// the evaluator backend, run on the same inputs, results compared bit for bit (any NaN matching
// any NaN); inputs mix
// special values, random bit patterns and small integers (ties).
#ifndef EMBER_TESTS_COMPILER_HOST_NATIVE_OP_DIFFERENTIAL_H_
#define EMBER_TESTS_COMPILER_HOST_NATIVE_OP_DIFFERENTIAL_H_

#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/passes/pass.h"
#include "tests/compiler/codegen/differential_inputs.h"
#include "tests/compiler/host/host_test_util.h"
#include "tests/compiler/parse_module.h"

namespace ember::host::testing {

// "tensor<2x3xf32>" ("tensor<f32>" for a scalar).
inline std::string TensorType(const std::vector<int64_t>& dims, const char* type) {
  if (dims.empty()) return absl::StrCat("tensor<", type, ">");
  return absl::StrCat("tensor<", absl::StrJoin(dims, "x"), "x", type, ">");
}

// An array of `dims` whose elements are, in about equal shares, special values of the type,
// random bit patterns, and small integers in [-4, 4] (many ties); without `specials`, finite
// values in [-4, 4] and small integers only (long scans then stay clear of NaN and inf).
inline ir::Literal MixedArray(ir::ElementType type, const std::vector<int64_t>& dims,
                              std::mt19937_64& rng, bool specials = true) {
  namespace ti = codegen::test_inputs;
  ir::Literal lit = ir::Literal::Create(ir::Shape::Make(type, dims).value()).value();
  const std::vector<uint64_t> special_values = ti::Specials(type);
  const int bytes = ir::StorageBytes(type);
  const int w = ti::Width(type);
  const uint64_t mask = w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
  for (int64_t i = 0; i < lit.shape().element_count(); ++i) {
    uint64_t bits = 0;
    const uint64_t pick = rng() % 4;
    if (pick == 0 && specials) {
      bits = special_values[rng() % special_values.size()];
    } else if (pick == 1 && specials) {
      bits = ti::RandomBits(type, rng);
    } else {
      const bool fraction = pick < 2 && ir::IsFloat(type);
      const double v = fraction ? std::uniform_real_distribution<double>(-4, 4)(rng)
                                : static_cast<double>(static_cast<int64_t>(rng() % 9) - 4);
      switch (type) {
        case ir::ElementType::kF64:
          std::memcpy(&bits, &v, 8);
          break;
        case ir::ElementType::kF32: {
          const float f = static_cast<float>(v);
          uint32_t b;
          std::memcpy(&b, &f, 4);
          bits = b;
          break;
        }
        case ir::ElementType::kBF16:
          bits = ir::BF16::FromDouble(v).bits;
          break;
        case ir::ElementType::kF16:
          bits = ir::F16::FromDouble(v).bits;
          break;
        default:
          bits = static_cast<uint64_t>(static_cast<int64_t>(v)) & mask;
          break;
      }
    }
    std::memcpy(lit.mutable_bytes().data() + i * bytes, &bits, bytes);
  }
  return lit;
}

// An array of `dims` of `type` (a float, complex or s32 type) holding `values`, each rounded
// once into the type (real types keep the real parts).
inline ir::Literal ComplexLiteral(ir::ElementType type, const std::vector<int64_t>& dims,
                                  const std::vector<std::complex<double>>& values) {
  ir::Literal lit = ir::Literal::Create(ir::Shape::Make(type, dims).value()).value();
  ir::VisitElementType(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, ir::BF16> || std::is_same_v<T, ir::F16>) {
      T* out = lit.mutable_data<T>().value().data();
      for (size_t i = 0; i < values.size(); ++i) out[i] = T::FromDouble(values[i].real());
    } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                         std::is_same_v<T, std::complex<double>>) {
      using Part = typename T::value_type;
      T* out = lit.mutable_data<T>().value().data();
      for (size_t i = 0; i < values.size(); ++i) {
        out[i] = T(static_cast<Part>(values[i].real()), static_cast<Part>(values[i].imag()));
      }
    } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                         std::is_same_v<T, int32_t>) {
      T* out = lit.mutable_data<T>().value().data();
      for (size_t i = 0; i < values.size(); ++i) out[i] = static_cast<T>(values[i].real());
    } else {
      ADD_FAILURE() << "ComplexLiteral: unexpected type";
    }
  });
  return lit;
}

// The elements of an array made by ComplexLiteral's types, each exactly.
inline std::vector<std::complex<double>> ComplexValues(const ir::Literal& lit) {
  std::vector<std::complex<double>> v;
  ir::VisitElementType(lit.element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, ir::BF16> || std::is_same_v<T, ir::F16>) {
      const absl::Span<const T> data = lit.data<T>().value();
      for (const T& x : data) v.emplace_back(x.ToFloat(), 0);
    } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                         std::is_same_v<T, std::complex<double>>) {
      const absl::Span<const T> data = lit.data<T>().value();
      for (const T& x : data) v.emplace_back(x.real(), x.imag());
    } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                         std::is_same_v<T, int32_t>) {
      const absl::Span<const T> data = lit.data<T>().value();
      for (const T& x : data) v.emplace_back(static_cast<double>(x), 0);
    } else {
      ADD_FAILURE() << "ComplexValues: unexpected type";
    }
  });
  return v;
}

struct NativeRun {
  std::string cost_report;  // the host backend's
  std::vector<eval::EvalValue> host, evaluator;
};

// Compiles `text` with both backends and runs each on copies of `args` (one per parameter).
inline NativeRun RunBothBackends(const std::string& text, const std::vector<ir::Literal>& args) {
  NativeRun run;
  for (HostBackend backend : {HostBackend::kCompiled, HostBackend::kEvaluator}) {
    std::unique_ptr<ir::Module> module = test_util::Parse(text);
    if (module == nullptr) return run;
    if (backend == HostBackend::kCompiled) {
      passes::PassPipeline pipeline = passes::CreateDefaultPipeline();
      auto changed = pipeline.Run(*module);
      EXPECT_TRUE(changed.ok()) << changed.status();
    }
    auto exe = Compile(*module->entry(), backend);
    EXPECT_TRUE(exe.ok()) << exe.status();
    if (!exe.ok()) return run;
    std::vector<eval::EvalValue> in;
    for (const ir::Literal& arg : args) in.push_back(eval::EvalValue::Array(arg.Clone().value()));
    auto out = (*exe)->Run(std::move(in));
    EXPECT_TRUE(out.ok()) << out.status() << "\n" << text;
    if (!out.ok()) return run;
    if (backend == HostBackend::kCompiled) {
      run.cost_report = (*exe)->cost_report();
      run.host = *std::move(out);
    } else {
      run.evaluator = *std::move(out);
    }
  }
  return run;
}

// `text` compiles on the host backend with its op left to the evaluator's op table, and the
// cost report says so with `reason`.
inline void ExpectTheEvaluatorRunsIt(const std::string& text, const std::string& reason) {
  SCOPED_TRACE(reason);
  std::unique_ptr<ir::Module> module = test_util::Parse(text);
  ASSERT_NE(module, nullptr) << text;
  auto exe = Compile(*module->entry(), HostBackend::kCompiled);
  ASSERT_TRUE(exe.ok()) << exe.status();
  const std::string& report = (*exe)->cost_report();
  EXPECT_NE(report.find("  evaluator "), std::string::npos) << report;
  EXPECT_NE(report.find(reason), std::string::npos) << report;
}

// The same for a program of one parameter.
inline NativeRun RunBothBackends(const std::string& text, const ir::Literal& arg) {
  std::vector<ir::Literal> args;
  args.push_back(arg.Clone().value());
  return RunBothBackends(text, args);
}

// Elements that differ between two arrays of one float or integer type: bit patterns differ
// and, for floats, not both are NaN (which NaN an operation on NaNs gives depends on the
// compiler's operand order, as in the code generator's differential tests).
inline int64_t DifferingElements(const ir::Literal& a, const ir::Literal& b) {
  namespace ti = codegen::test_inputs;
  const ir::ElementType type = a.element_type();
  const int bytes = ir::StorageBytes(type);
  int64_t differing = 0;
  for (int64_t i = 0; i < a.shape().element_count(); ++i) {
    uint64_t x = 0, y = 0;
    std::memcpy(&x, a.bytes().data() + i * bytes, bytes);
    std::memcpy(&y, b.bytes().data() + i * bytes, bytes);
    if (x != y && !(ti::IsNan(type, x) && ti::IsNan(type, y))) ++differing;
  }
  return differing;
}

// The results of both backends agree (see DifferingElements); returns the number of differing
// results.
inline int CompareResults(const NativeRun& run) {
  int differing = 0;
  EXPECT_FALSE(run.host.empty()) << "the host backend gave no results";
  EXPECT_EQ(run.host.size(), run.evaluator.size());
  for (size_t r = 0; r < run.host.size() && r < run.evaluator.size(); ++r) {
    const ir::Literal& a = run.evaluator[r].array;
    const ir::Literal& b = run.host[r].array;
    if (!(a.shape() == b.shape()) || DifferingElements(a, b) != 0) {
      ++differing;
      ADD_FAILURE() << "result " << r << " differs\nevaluator: " << a.ToString()
                    << "\nhost:      " << b.ToString();
    }
  }
  return differing;
}

}  // namespace ember::host::testing

#endif  // EMBER_TESTS_COMPILER_HOST_NATIVE_OP_DIFFERENTIAL_H_
