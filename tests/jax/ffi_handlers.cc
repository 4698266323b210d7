// XLA FFI handlers written as jax.ffi users write them (against the headers jaxlib ships,
// jax.ffi.include_dir()), compiled by test_callbacks.py at test time and registered for both
// "ember" and "cpu", so the same handler runs on Ember and on XLA:CPU.
#include <cstdint>
#include <string_view>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

// out = x * scale + offset + len(tag) + sum(bias); counts = the attributes it saw, for checking
// their decoding (f32 scale, i64 offset, string tag, i32 array bias).
static ffi::Error ScaleImpl(ffi::Buffer<ffi::F32> x, float scale, int64_t offset,
                            std::string_view tag, ffi::Span<const int32_t> bias,
                            ffi::ResultBuffer<ffi::F32> out) {
  if (scale < 0) return ffi::Error::InvalidArgument("scale must be non-negative");
  float extra = static_cast<float>(offset) + static_cast<float>(tag.size());
  for (int32_t b : bias) extra += static_cast<float>(b);
  const size_t n = x.element_count();
  for (size_t i = 0; i < n; ++i) out->typed_data()[i] = x.typed_data()[i] * scale + extra;
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(EmberTestScale, ScaleImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Attr<float>("scale")
                                  .Attr<int64_t>("offset")
                                  .Attr<std::string_view>("tag")
                                  .Attr<ffi::Span<const int32_t>>("bias")
                                  .Ret<ffi::Buffer<ffi::F32>>());

// s32 or f32 of any rank: the sums along the last dimension (AnyBuffer decoding).
static ffi::Error RowSumImpl(ffi::AnyBuffer x, ffi::ResultBuffer<ffi::F32> sums) {
  const auto dims = x.dimensions();
  const int64_t cols = dims.size() == 0 ? 1 : dims.back();
  const int64_t rows = cols == 0 ? 0 : static_cast<int64_t>(x.element_count()) / cols;
  if (x.element_type() != ffi::DataType::S32 && x.element_type() != ffi::DataType::F32) {
    return ffi::Error::InvalidArgument("RowSum takes s32 or f32");
  }
  for (int64_t r = 0; r < rows; ++r) {
    float acc = 0;
    for (int64_t c = 0; c < cols; ++c) {
      acc += x.element_type() == ffi::DataType::S32
                 ? static_cast<float>(static_cast<const int32_t*>(x.untyped_data())[r * cols + c])
                 : static_cast<const float*>(x.untyped_data())[r * cols + c];
    }
    sums->typed_data()[r] = acc;
  }
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(EmberTestRowSum, RowSumImpl,
                              ffi::Ffi::Bind().Arg<ffi::AnyBuffer>().Ret<ffi::Buffer<ffi::F32>>());
