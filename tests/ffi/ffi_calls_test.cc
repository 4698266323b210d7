// Ember's XLA FFI (ffi/): handlers written against the C ABI receive the call frame XLA would
// give them (argument and result buffers, typed and name-sorted attributes, the API table, user
// data), run from the evaluator's custom-call path; errors, asynchronous completion, tokens and
// bad registrations behave as in XLA.
#include "ffi/ffi_calls.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>

#include "compiler/evaluator/evaluator.h"
#include "ffi/ffi_api.h"
#include "ffi/registry.h"
#include "tests/compiler/parse_module.h"

namespace ember::ffi {
namespace {

using test_util::Parse;

std::string Str(const XLA_FFI_ByteSpan* s) { return std::string(s->ptr, s->len); }

XLA_FFI_Error* Fail(XLA_FFI_CallFrame* frame, const char* message, XLA_FFI_Error_Code code) {
  XLA_FFI_Error_Create_Args args{sizeof(args), nullptr, message, code};
  return frame->api->XLA_FFI_Error_Create(&args);
}

// Records what it saw (for the test to check) and writes out = x * scale + n.
struct Seen {
  std::vector<std::string> names;
  std::vector<int> types;
  int32_t scalar_dtype = 0;
  uint64_t n = 0;
  float scale = 0;
  std::string tag;
  std::vector<int32_t> arr;
  std::string nested_key;
  int32_t device = -1;
};
Seen seen;

XLA_FFI_Error* Affine(XLA_FFI_CallFrame* frame) {
  seen = Seen();
  const XLA_FFI_Attrs& attrs = frame->attrs;
  for (int64_t i = 0; i < attrs.size; ++i) {
    const std::string name = Str(attrs.names[i]);
    seen.names.push_back(name);
    seen.types.push_back(attrs.types[i]);
    if (name == "n") {
      auto* s = static_cast<XLA_FFI_Scalar*>(attrs.attrs[i]);
      seen.scalar_dtype = s->dtype;
      seen.n = *static_cast<uint64_t*>(s->value);
    } else if (name == "scale") {
      seen.scale = *static_cast<float*>(static_cast<XLA_FFI_Scalar*>(attrs.attrs[i])->value);
    } else if (name == "tag") {
      seen.tag = Str(static_cast<XLA_FFI_ByteSpan*>(attrs.attrs[i]));
    } else if (name == "arr") {
      auto* a = static_cast<XLA_FFI_Array*>(attrs.attrs[i]);
      if (a->dtype != XLA_FFI_DataType_S32)
        return Fail(frame, "arr is not s32", XLA_FFI_Error_Code_INTERNAL);
      const auto* d = static_cast<int32_t*>(a->data);
      seen.arr.assign(d, d + a->size);
    } else if (name == "nested") {
      auto* d = static_cast<XLA_FFI_Attrs*>(attrs.attrs[i]);
      if (d->size == 1) seen.nested_key = Str(d->names[0]);
    }
  }
  XLA_FFI_DeviceOrdinal_Get_Args ordinal{sizeof(ordinal), nullptr, frame->ctx, -1};
  if (XLA_FFI_Error* e = frame->api->XLA_FFI_DeviceOrdinal_Get(&ordinal)) return e;
  seen.device = ordinal.device_ordinal;
  if (frame->args.size != 1 || frame->rets.size != 1) {
    return Fail(frame, "expects one argument and one result", XLA_FFI_Error_Code_INVALID_ARGUMENT);
  }
  auto* x = static_cast<XLA_FFI_Buffer*>(frame->args.args[0]);
  auto* out = static_cast<XLA_FFI_Buffer*>(frame->rets.rets[0]);
  if (x->dtype != XLA_FFI_DataType_F32 || x->rank != 2 || x->dims[0] != 2 || x->dims[1] != 3) {
    return Fail(frame, "x is not f32[2,3]", XLA_FFI_Error_Code_INVALID_ARGUMENT);
  }
  if (seen.scale < 0) return Fail(frame, "negative scale", XLA_FFI_Error_Code_OUT_OF_RANGE);
  for (int i = 0; i < 6; ++i) {
    static_cast<float*>(out->data)[i] =
        static_cast<float*>(x->data)[i] * seen.scale + static_cast<float>(seen.n);
  }
  return nullptr;
}

// Reads user data of type id 77 (an int) and writes it; completes asynchronously.
XLA_FFI_Error* FromUserData(XLA_FFI_CallFrame* frame) {
  XLA_FFI_TypeId id{77};
  XLA_FFI_ExecutionContext_Get_Args get{sizeof(get), nullptr, frame->ctx, &id, nullptr};
  if (XLA_FFI_Error* e = frame->api->XLA_FFI_ExecutionContext_Get(&get)) return e;
  const int value = *static_cast<int*>(get.data);
  XLA_FFI_Future_Create_Args create{sizeof(create), nullptr, nullptr};
  if (XLA_FFI_Error* e = frame->api->XLA_FFI_Future_Create(&create)) return e;
  auto* out = static_cast<XLA_FFI_Buffer*>(frame->rets.rets[0]);
  const XLA_FFI_Api* api = frame->api;
  std::thread([api, future = create.future, out, value] {
    static_cast<int32_t*>(out->data)[0] = value;
    XLA_FFI_Future_SetAvailable_Args done{sizeof(done), nullptr, future};
    (void)api->XLA_FFI_Future_SetAvailable(&done);
  }).detach();
  frame->future = create.future;
  return nullptr;
}

// Passes a token through and counts its calls.
int token_calls = 0;
XLA_FFI_Error* TokenPass(XLA_FFI_CallFrame* frame) {
  auto* in = static_cast<XLA_FFI_Buffer*>(frame->args.args[0]);
  auto* out = static_cast<XLA_FFI_Buffer*>(frame->rets.rets[0]);
  if (in->dtype != XLA_FFI_DataType_TOKEN || out->dtype != XLA_FFI_DataType_TOKEN) {
    return Fail(frame, "expects a token", XLA_FFI_Error_Code_INVALID_ARGUMENT);
  }
  ++token_calls;
  return nullptr;
}

void Register(const char* name, XLA_FFI_Handler* handler) {
  XLA_FFI_Handler_Register_Args args{};
  args.struct_size = sizeof(args);
  args.name = {name, std::strlen(name)};
  args.platform = {"EMBER", 5};
  args.bundle.execute = handler;
  ASSERT_EQ(ConsumeError(GetXlaFfiApi()->XLA_FFI_Handler_Register(&args)), absl::OkStatus());
}

absl::StatusOr<std::vector<eval::EvalValue>> RunWithFfi(
    const ir::Module& module, std::vector<eval::EvalValue> args,
    std::shared_ptr<const ExecutionContext> data = {}) {
  FfiCalls calls(3, FfiCalls::NewRunId(), std::move(data));
  eval::EvalOptions options;
  options.external_calls = &calls;
  eval::Evaluator evaluator(options);
  return evaluator.Run(*module.entry(), std::move(args));
}

eval::EvalValue F32(std::vector<float> values, std::vector<int64_t> dims) {
  ir::Literal l = ir::Literal::Create(ir::Shape::Make(ir::ElementType::kF32, dims).value()).value();
  std::memcpy(l.mutable_bytes().data(), values.data(), values.size() * 4);
  return eval::EvalValue::Array(std::move(l));
}

std::vector<eval::EvalValue> One(eval::EvalValue v) {
  std::vector<eval::EvalValue> out;
  out.push_back(std::move(v));
  return out;
}

constexpr char kAffine[] = R"(
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = stablehlo.custom_call @ember_ffi_test_affine(%x) {api_version = 4 : i32, backend_config = {tag = "hi", n = 7 : ui64, scale = 0.5 : f32, arr = array<i32: 4, 5>, nested = {k = 1 : i8}}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
})";

TEST(FfiCallsTest, HandlerGetsBuffersTypedSortedAttributesAndDevice) {
  Register("ember_ffi_test_affine", &Affine);
  auto module = Parse(kAffine);
  ASSERT_NE(module, nullptr);
  auto out = RunWithFfi(*module, One(F32({1, 2, 3, 4, 5, -6}, {2, 3})));
  ASSERT_TRUE(out.ok()) << out.status();
  const float* y = reinterpret_cast<const float*>((*out)[0].array.bytes().data());
  EXPECT_EQ(std::vector<float>(y, y + 6), (std::vector<float>{7.5, 8, 8.5, 9, 9.5, 4}));
  EXPECT_EQ(seen.names, (std::vector<std::string>{"arr", "n", "nested", "scale", "tag"}));
  EXPECT_EQ(seen.types, (std::vector<int>{XLA_FFI_AttrType_ARRAY, XLA_FFI_AttrType_SCALAR,
                                          XLA_FFI_AttrType_DICTIONARY, XLA_FFI_AttrType_SCALAR,
                                          XLA_FFI_AttrType_STRING}));
  EXPECT_EQ(seen.scalar_dtype, XLA_FFI_DataType_U64);
  EXPECT_EQ(seen.tag, "hi");
  EXPECT_EQ(seen.arr, (std::vector<int32_t>{4, 5}));
  EXPECT_EQ(seen.nested_key, "k");
  EXPECT_EQ(seen.device, 3);
}

TEST(FfiCallsTest, HandlerErrorsKeepCodeAndMessage) {
  Register("ember_ffi_test_affine", &Affine);
  std::string text = kAffine;
  text.replace(text.find("0.5 : f32"), 9, "-1.0 : f32");
  auto module = Parse(text);
  ASSERT_NE(module, nullptr);
  auto out = RunWithFfi(*module, One(F32({1, 2, 3, 4, 5, 6}, {2, 3})));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(out.status().message().find("negative scale"), std::string::npos) << out.status();
  EXPECT_NE(out.status().message().find("ember_ffi_test_affine"), std::string::npos);
}

TEST(FfiCallsTest, UserDataAndAsynchronousCompletion) {
  Register("ember_ffi_test_user_data", &FromUserData);
  auto module = Parse(R"(
func.func @main() -> tensor<i32> {
  %y = stablehlo.custom_call @ember_ffi_test_user_data() {api_version = 4 : i32} : () -> tensor<i32>
  return %y : tensor<i32>
})");
  ASSERT_NE(module, nullptr);
  auto missing = RunWithFfi(*module, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("user data"), std::string::npos) << missing.status();
  auto context = std::make_shared<ExecutionContext>();
  static int value = 1234;
  ASSERT_TRUE(context->Insert(77, &value, nullptr).ok());
  EXPECT_FALSE(context->Insert(77, &value, nullptr).ok());
  auto out = RunWithFfi(*module, {}, context);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*reinterpret_cast<const int32_t*>((*out)[0].array.bytes().data()), 1234);
}

TEST(FfiCallsTest, TokensPassThrough) {
  Register("ember_ffi_test_token", &TokenPass);
  auto module = Parse(R"(
func.func @main(%t: !stablehlo.token) -> !stablehlo.token {
  %u = stablehlo.custom_call @ember_ffi_test_token(%t) {api_version = 4 : i32, has_side_effect = true} : (!stablehlo.token) -> !stablehlo.token
  return %u : !stablehlo.token
})");
  ASSERT_NE(module, nullptr);
  token_calls = 0;
  auto out = RunWithFfi(*module, One(eval::EvalValue::Token()));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].kind, eval::EvalValue::Kind::kToken);
  EXPECT_EQ(token_calls, 1);
}

TEST(FfiCallsTest, UnknownTargetsAndOpaqueConfigsAreCleanErrors) {
  auto module = Parse(R"(
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = stablehlo.custom_call @ember_ffi_test_nobody(%x) {api_version = 4 : i32} : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
})");
  ASSERT_NE(module, nullptr);
  auto out = RunWithFfi(*module, One(F32({1, 2}, {2})));
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("ember_ffi_test_nobody"), std::string::npos);
  Register("ember_ffi_test_affine", &Affine);
  auto opaque = Parse(R"(
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = stablehlo.custom_call @ember_ffi_test_affine(%x) {backend_config = "scale=2"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
})");
  ASSERT_NE(opaque, nullptr);
  out = RunWithFfi(*opaque, One(F32({1, 2, 3, 4, 5, 6}, {2, 3})));
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("opaque string"), std::string::npos) << out.status();
}

TEST(FfiRegistryTest, BadRegistrationsAreRejected) {
  Registry& r = Registry::Global();
  XLA_FFI_Handler_Bundle bundle{};
  EXPECT_EQ(r.RegisterHandler("x", "ember", bundle, 0).code(), absl::StatusCode::kInvalidArgument);
  bundle.execute = &Affine;
  EXPECT_EQ(r.RegisterHandler("x", "cuda", bundle, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.RegisterHandler("", "ember", bundle, 0).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(r.RegisterHandler("ember_ffi_test_twice", "ember", bundle, 0).ok());
  EXPECT_TRUE(r.RegisterHandler("ember_ffi_test_twice", "ember", bundle, 0).ok());
  bundle.execute = &TokenPass;
  EXPECT_EQ(r.RegisterHandler("ember_ffi_test_twice", "ember", bundle, 0).code(),
            absl::StatusCode::kAlreadyExists);
  bundle.instantiate = &TokenPass;
  EXPECT_EQ(r.RegisterHandler("ember_ffi_test_stateful", "ember", bundle, 0).code(),
            absl::StatusCode::kUnimplemented);
  int64_t a = 0, b = 0;
  ASSERT_TRUE(r.RegisterType("ember_ffi_test_type_a", &a).ok());
  ASSERT_TRUE(r.RegisterType("ember_ffi_test_type_b", &b).ok());
  EXPECT_NE(a, 0);
  EXPECT_NE(a, b);
  int64_t again = 0;
  ASSERT_TRUE(r.RegisterType("ember_ffi_test_type_a", &again).ok());
  EXPECT_EQ(again, a);
  int64_t wrong = b;
  EXPECT_FALSE(r.RegisterType("ember_ffi_test_type_a", &wrong).ok());
  EXPECT_FALSE(r.RegisterType("ember_ffi_test_type_c", &wrong).ok());  // b's id is taken
}

TEST(FfiApiTest, ApiTableAnswersBadCallsWithErrors) {
  const XLA_FFI_Api* api = GetXlaFfiApi();
  EXPECT_EQ(api->api_version.major_version, 0);
  EXPECT_EQ(api->api_version.minor_version, 3);
  EXPECT_FALSE(ConsumeError(api->XLA_FFI_Stream_Get(nullptr)).ok());
  XLA_FFI_ExecutionContext ctx;
  XLA_FFI_Stream_Get_Args stream{sizeof(stream), nullptr, &ctx, nullptr};
  EXPECT_EQ(ConsumeError(api->XLA_FFI_Stream_Get(&stream)).code(),
            absl::StatusCode::kUnimplemented);
  XLA_FFI_DeviceMemory_Allocate_Args alloc{sizeof(alloc), nullptr, &ctx, 100, 3, nullptr};
  EXPECT_FALSE(ConsumeError(api->XLA_FFI_DeviceMemory_Allocate(&alloc)).ok());  // alignment 3
  alloc.alignment = 128;
  ASSERT_TRUE(ConsumeError(api->XLA_FFI_DeviceMemory_Allocate(&alloc)).ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(alloc.data) % 128, 0u);
  XLA_FFI_DeviceMemory_Free_Args release{sizeof(release), nullptr, &ctx, 100, alloc.data};
  EXPECT_TRUE(ConsumeError(api->XLA_FFI_DeviceMemory_Free(&release)).ok());
  XLA_FFI_Error_Create_Args make{sizeof(make), nullptr, "boom", XLA_FFI_Error_Code_ABORTED};
  XLA_FFI_Error* error = api->XLA_FFI_Error_Create(&make);
  XLA_FFI_Error_GetMessage_Args message{sizeof(message), nullptr, error, nullptr};
  api->XLA_FFI_Error_GetMessage(&message);
  EXPECT_STREQ(message.message, "boom");
  EXPECT_EQ(ConsumeError(error).code(), absl::StatusCode::kAborted);
}

}  // namespace
}  // namespace ember::ffi
