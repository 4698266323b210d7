// Custom calls to registered XLA FFI handlers on the host backend's FfiCallThunk
// (ffi_call_thunk.h) against the evaluator backend, which runs the same handlers on copies: the
// results agree bit for bit; the handler gets an operand and results that do not overlap, between
// compiled kernels, with no op of the evaluator's left in the program; tokens
// pass as XLA passes them; a result nothing reads still gets a buffer; a handler's error names
// the op and the handler; a handler registered only after the program compiled runs through the
// evaluator's op table, with the reason in the cost report.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ffi/ffi_api.h"
#include "ffi/registry.h"
#include "tests/compiler/host/native_op_differential.h"

namespace ember::host {
namespace {

using namespace testing;  // NOLINT: the shared differential helpers

XLA_FFI_Error* Fail(XLA_FFI_CallFrame* frame, const char* message) {
  XLA_FFI_Error_Create_Args args{sizeof(args), nullptr, message, XLA_FFI_Error_Code_OUT_OF_RANGE};
  return frame->api->XLA_FFI_Error_Create(&args);
}

// What the last call saw.
struct Seen {
  std::vector<void*> args, rets;
  std::vector<int> arg_types;
};
Seen seen;

// rets[r] = args[0] * (r + 2) for every f32 result; tokens untouched; a negative first element
// is an error.
XLA_FFI_Error* Scale(XLA_FFI_CallFrame* frame) {
  seen = Seen();
  for (int64_t i = 0; i < frame->args.size; ++i) {
    auto* b = static_cast<XLA_FFI_Buffer*>(frame->args.args[i]);
    seen.args.push_back(b->data);
    seen.arg_types.push_back(b->dtype);
  }
  auto* x = static_cast<XLA_FFI_Buffer*>(frame->args.args[0]);
  int64_t n = 1;
  for (int64_t d = 0; d < x->rank; ++d) n *= x->dims[d];
  const float* in = static_cast<const float*>(x->data);
  if (n > 0 && in[0] < 0) return Fail(frame, "a negative first element");
  for (int64_t r = 0; r < frame->rets.size; ++r) {
    auto* out = static_cast<XLA_FFI_Buffer*>(frame->rets.rets[r]);
    seen.rets.push_back(out->data);
    if (out->dtype != XLA_FFI_DataType_F32) continue;
    for (int64_t i = 0; i < n; ++i) {
      static_cast<float*>(out->data)[i] = in[i] * static_cast<float>(r + 2);
    }
  }
  return nullptr;
}

void Register(const char* name) {
  XLA_FFI_Handler_Register_Args args{};
  args.struct_size = sizeof(args);
  args.name = {name, std::strlen(name)};
  args.platform = {"EMBER", 5};
  args.bundle.execute = &Scale;
  ASSERT_EQ(ffi::ConsumeError(ffi::GetXlaFfiApi()->XLA_FFI_Handler_Register(&args)),
            absl::OkStatus());
}

ir::Literal F32(const std::vector<float>& values, const std::vector<int64_t>& dims) {
  ir::Literal l = ir::Literal::Create(ir::Shape::Make(ir::ElementType::kF32, dims).value()).value();
  std::memcpy(l.mutable_bytes().data(), values.data(), values.size() * 4);
  return l;
}

// x + 1 -> the handler -> its results times 3 (the handler's operand and results are
// temporaries of the launch, between two compiled kernels).
constexpr char kChain[] = R"(
func.func @main(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %one = stablehlo.constant dense<1.0> : tensor<4x8xf32>
  %a = stablehlo.add %x, %one : tensor<4x8xf32>
  %r:2 = stablehlo.custom_call @ember_thunk_test_scale(%a) {api_version = 4 : i32} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %three = stablehlo.constant dense<3.0> : tensor<4x8xf32>
  %b = stablehlo.multiply %r#0, %three : tensor<4x8xf32>
  %c = stablehlo.multiply %r#1, %three : tensor<4x8xf32>
  return %b, %c : tensor<4x8xf32>, tensor<4x8xf32>
})";

std::vector<float> Ramp(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[i] = 0.25f * static_cast<float>(i);
  return v;
}

TEST(FfiCallThunkTest, HandlersRunOnTheLaunchsBuffers) {
  Register("ember_thunk_test_scale");
  NativeRun run = RunBothBackends(kChain, F32(Ramp(32), {4, 8}));
  EXPECT_EQ(CompareResults(run), 0);
  EXPECT_EQ(run.cost_report.find("  evaluator "), std::string::npos) << run.cost_report;
  // The last call was the evaluator backend's; run the host backend's again and look.
  std::unique_ptr<ir::Module> module = test_util::Parse(kChain);
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(passes::CreateDefaultPipeline().Run(*module).ok());
  auto exe = Compile(*module->entry(), HostBackend::kCompiled);
  ASSERT_TRUE(exe.ok()) << exe.status();
  std::vector<eval::EvalValue> in;
  in.push_back(eval::EvalValue::Array(F32(Ramp(32), {4, 8})));
  auto out = (*exe)->Run(std::move(in));
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(seen.args.size(), 1u);
  ASSERT_EQ(seen.rets.size(), 2u);
  for (void* p : {seen.args[0], seen.rets[0], seen.rets[1]}) EXPECT_NE(p, nullptr);
  // Three distinct buffers of the launch: none overlaps another.
  const auto* a = static_cast<const uint8_t*>(seen.args[0]);
  for (void* r : seen.rets) {
    const auto* b = static_cast<const uint8_t*>(r);
    EXPECT_TRUE(a + 128 <= b || b + 128 <= a);
  }
  const float* b = reinterpret_cast<const float*>((*out)[1].array.bytes().data());
  EXPECT_EQ(b[5], (0.25f * 5 + 1) * 3 * 3);
}

TEST(FfiCallThunkTest, TokensAndResultsNothingReads) {
  Register("ember_thunk_test_scale");
  // A token through the handler beside an array; of two array results only the second is read.
  const std::string text = R"(
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %t = stablehlo.create_token : !stablehlo.token
  %r:3 = stablehlo.custom_call @ember_thunk_test_scale(%x, %t) {api_version = 4 : i32, has_side_effect = true} : (tensor<3xf32>, !stablehlo.token) -> (tensor<3xf32>, tensor<3xf32>, !stablehlo.token)
  return %r#1 : tensor<3xf32>
})";
  std::unique_ptr<ir::Module> module = test_util::Parse(text);
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(passes::CreateDefaultPipeline().Run(*module).ok());
  auto exe = Compile(*module->entry(), HostBackend::kCompiled);
  ASSERT_TRUE(exe.ok()) << exe.status();
  // (create_token's after_all stays on the evaluator's op table: JAX threads tokens through
  // parameters instead.)
  const std::string& report = (*exe)->cost_report();
  EXPECT_EQ(report.find("evaluator op.1: stablehlo.custom_call"), std::string::npos) << report;
  EXPECT_NE(report.find("evaluator op.0: stablehlo.after_all"), std::string::npos) << report;
  std::vector<eval::EvalValue> args;
  args.push_back(eval::EvalValue::Array(F32({1, 2, 3}, {3})));
  seen = Seen();
  auto out = (*exe)->Run(std::move(args));
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  const float* y = reinterpret_cast<const float*>((*out)[0].array.bytes().data());
  EXPECT_EQ(std::vector<float>(y, y + 3), (std::vector<float>{3, 6, 9}));
  ASSERT_EQ(seen.arg_types.size(), 2u);
  EXPECT_EQ(seen.arg_types[1], XLA_FFI_DataType_TOKEN);
  EXPECT_EQ(seen.args[1], nullptr);
  EXPECT_NE(seen.rets[0], nullptr);  // (read by nothing: scratch)
}

TEST(FfiCallThunkTest, HandlerErrorsNameTheOpAndTheHandler) {
  Register("ember_thunk_test_scale");
  std::unique_ptr<ir::Module> module = test_util::Parse(kChain);
  ASSERT_NE(module, nullptr);
  auto exe = Compile(*module->entry(), HostBackend::kCompiled);
  ASSERT_TRUE(exe.ok()) << exe.status();
  std::vector<eval::EvalValue> in;
  std::vector<float> x = Ramp(32);
  x[0] = -5;  // -4 after the add
  in.push_back(eval::EvalValue::Array(F32(x, {4, 8})));
  auto out = (*exe)->Run(std::move(in));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kOutOfRange) << out.status();
  EXPECT_NE(out.status().message().find("a negative first element"), std::string::npos)
      << out.status();
  EXPECT_NE(out.status().message().find("ember_thunk_test_scale"), std::string::npos)
      << out.status();
}

TEST(FfiCallThunkTest, AHandlerRegisteredAfterCompilingRunsOnTheEvaluator) {
  std::string text = kChain;
  text.replace(text.find("ember_thunk_test_scale"), 22, "ember_thunk_test_later");
  std::unique_ptr<ir::Module> module = test_util::Parse(text);
  ASSERT_NE(module, nullptr);
  auto exe = Compile(*module->entry(), HostBackend::kCompiled);
  ASSERT_TRUE(exe.ok()) << exe.status();
  const std::string& report = (*exe)->cost_report();
  EXPECT_NE(report.find("no FFI handler is registered for 'ember_thunk_test_later'"),
            std::string::npos)
      << report;
  Register("ember_thunk_test_later");
  std::vector<eval::EvalValue> in;
  in.push_back(eval::EvalValue::Array(F32(Ramp(32), {4, 8})));
  auto out = (*exe)->Run(std::move(in));
  ASSERT_TRUE(out.ok()) << out.status();
  const float* b = reinterpret_cast<const float*>((*out)[0].array.bytes().data());
  EXPECT_EQ(b[3], (0.25f * 3 + 1) * 2 * 3);
}

}  // namespace
}  // namespace ember::host
