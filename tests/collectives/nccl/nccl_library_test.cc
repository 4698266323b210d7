// NcclLibrary: opening libnccl.so.2 (the virtual GPU's stand-in), the errors when it is missing or
// is not NCCL, and the status choke point's wording and codes.
#include "collectives/nccl/nccl_library.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ember::collectives::nccl {
namespace {

using ::testing::HasSubstr;

TEST(NcclLibraryTest, OpensFromTheLibraryDirectoryFirst) {
  auto nccl = NcclLibrary::Open(EMBER_VIRTUAL_GPU_LIB_DIR);
  ASSERT_TRUE(nccl.ok()) << nccl.status();
  EXPECT_EQ((*nccl)->path(), EMBER_VIRTUAL_GPU_LIB_DIR "/libnccl.so.2");
  int version = 0;
  EXPECT_TRUE((*nccl)->Check((*nccl)->GetVersion(&version), "ncclGetVersion", nullptr).ok());
  EXPECT_GT(version, 0);
}

TEST(NcclLibraryTest, AMissingLibraryOrOneWithoutNcclIsAClearError) {
  auto missing = NcclLibrary::Open("/nonexistent", "/nonexistent/libnccl.so.2");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(missing.status().message(), HasSubstr("no NCCL library found"));

  auto not_nccl = NcclLibrary::Open("", EMBER_VIRTUAL_CUDA_DRIVER);
  EXPECT_EQ(not_nccl.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(not_nccl.status().message(), HasSubstr("lacks ncclGetVersion"));
}

TEST(NcclLibraryTest, CheckNamesTheCallAndNcclsExplanation) {
  auto nccl = NcclLibrary::Open(EMBER_VIRTUAL_GPU_LIB_DIR);
  ASSERT_TRUE(nccl.ok()) << nccl.status();
  const NcclLibrary& lib = **nccl;
  EXPECT_TRUE(lib.Check(ncclSuccess, "ncclAllReduce", nullptr).ok());
  // A real failing call, so that ncclGetLastError has something to say.
  const absl::Status status = lib.Check(lib.GroupEnd(), "ncclGroupEnd", nullptr);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("ncclGroupEnd: invalid usage"));
  EXPECT_THAT(status.message(), HasSubstr("ncclGroupEnd without ncclGroupStart"));
  EXPECT_EQ(lib.Check(ncclRemoteError, "ncclSend", nullptr).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(lib.Check(ncclInternalError, "ncclRecv", nullptr).code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace ember::collectives::nccl
