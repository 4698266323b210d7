// Host -> device -> host round trip for every array PJRT_Buffer_Type over several shapes (scalar,
// odd sizes that straddle a packing boundary, empty), with valid random elements and byte-exact
// comparison; also checks the element type, dims and sizes the plugin reports for each.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tests/capi/capi_test_util.h"
#include "tests/capi/element_types.h"

namespace ember::capi_test {
namespace {

const std::vector<std::vector<int64_t>>& Shapes() {
  static const std::vector<std::vector<int64_t>> kShapes = {{},     {1},       {7}, {129},
                                                            {3, 5}, {2, 3, 4}, {0}, {4, 0, 2}};
  return kShapes;
}

int64_t NumElements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

class CapiElementTypeTest : public CapiTest,
                            public ::testing::WithParamInterface<ElementTypeInfo> {};

TEST_P(CapiElementTypeTest, RoundTripsEveryShapeByteForByte) {
  const ElementTypeInfo& info = GetParam();
  std::mt19937 rng(1000 + static_cast<uint32_t>(info.type));
  for (const std::vector<int64_t>& dims : Shapes()) {
    SCOPED_TRACE(std::string(info.name) + " " + ::testing::PrintToString(dims));
    const int64_t n = NumElements(dims);
    std::vector<uint8_t> host = RandomElements(info, n, rng);
    host.push_back(0);  // keep data() non-null for empty arrays
    UploadSpec spec;
    spec.type = info.type;
    spec.dims = dims;
    spec.data = host.data();
    spec.device = FirstDevice();
    Upload upload = FromHost(client_.get(), spec);
    ASSERT_TRUE(upload.status.ok()) << upload.status;
    host.pop_back();

    EXPECT_EQ(ElementType(upload.buffer.get()), info.type);
    EXPECT_EQ(Dimensions(upload.buffer.get()), dims);

    auto size = EMBER_ARGS(PJRT_Buffer_OnDeviceSizeInBytes_Args);
    size.buffer = upload.buffer.get();
    ASSERT_TRUE(IsOk(api_->PJRT_Buffer_OnDeviceSizeInBytes(&size)));
    if (info.bits == 8 * info.host_bytes) {
      EXPECT_EQ(size.on_device_size_in_bytes, static_cast<size_t>(n * info.host_bytes));
    } else {  // PRED and sub-byte types: packed or one byte per element
      EXPECT_GE(size.on_device_size_in_bytes, static_cast<size_t>((n * info.bits + 7) / 8));
      EXPECT_LE(size.on_device_size_in_bytes, static_cast<size_t>(n));
    }

    Readback readback = ToHost(upload.buffer.get());
    ASSERT_TRUE(readback.status.ok()) << readback.status;
    ASSERT_EQ(readback.bytes.size(), host.size()) << "host size is one element per byte";
    EXPECT_EQ(readback.bytes, host);
  }
}

INSTANTIATE_TEST_SUITE_P(AllArrayTypes, CapiElementTypeTest,
                         ::testing::ValuesIn(ArrayElementTypes()),
                         [](const ::testing::TestParamInfo<ElementTypeInfo>& param) {
                           return std::string(param.param.name);
                         });

// The same bytes uploaded as one type and read back as itself must not depend on the other
// buffers alive: interleave several types on one device and read them all at the end.
using CapiMixedTypesTest = CapiTest;

TEST_F(CapiMixedTypesTest, ManyTypesAliveAtOnceKeepTheirOwnData) {
  std::mt19937 rng(77);
  std::vector<std::vector<uint8_t>> expected;
  std::vector<BufferPtr> buffers;
  for (const ElementTypeInfo& info : ArrayElementTypes()) {
    std::vector<uint8_t> host = RandomElements(info, 37, rng);
    UploadSpec spec;
    spec.type = info.type;
    spec.dims = {37};
    spec.data = host.data();
    spec.device = FirstDevice();
    Upload upload = FromHost(client_.get(), spec);
    ASSERT_TRUE(upload.status.ok()) << info.name << ": " << upload.status;
    buffers.push_back(std::move(upload.buffer));
    expected.push_back(std::move(host));
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    Readback readback = ToHost(buffers[i].get());
    ASSERT_TRUE(readback.status.ok()) << ArrayElementTypes()[i].name << ": " << readback.status;
    EXPECT_EQ(readback.bytes, expected[i]) << ArrayElementTypes()[i].name;
  }
}

}  // namespace
}  // namespace ember::capi_test
