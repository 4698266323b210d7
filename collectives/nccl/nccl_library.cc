#include "collectives/nccl/nccl_library.h"

#include <dlfcn.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace ember::collectives::nccl {
namespace {

template <typename Fn>
absl::Status Bind(void* handle, const char* symbol, const std::string& path, Fn& out) {
  void* address = dlsym(handle, symbol);
  if (address == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("the NCCL library ", path, " lacks ", symbol, " (NCCL 2.13 or newer needed)"));
  }
  out = reinterpret_cast<Fn>(address);
  return absl::OkStatus();
}

absl::StatusCode CodeFor(ncclResult_t result) {
  switch (result) {
    case ncclInvalidArgument:
    case ncclInvalidUsage:
      return absl::StatusCode::kInvalidArgument;
    case ncclRemoteError:
    case ncclSystemError:
      return absl::StatusCode::kUnavailable;
    default:
      return absl::StatusCode::kInternal;
  }
}

}  // namespace

absl::StatusOr<std::shared_ptr<const NcclLibrary>> NcclLibrary::Open(const std::string& directory,
                                                                     const std::string& library) {
  absl::StatusOr<se::cuda::OpenedLibrary> opened =
      se::cuda::OpenCudaLibrary(library, directory, "NCCL library");
  if (!opened.ok()) return opened.status();
  void* handle = opened->handle.get();
  const std::string path = opened->path;
  auto nccl = std::make_shared<NcclLibrary>(PrivateTag(), *std::move(opened));
  for (absl::Status bound : {
           Bind(handle, "ncclGetVersion", path, nccl->GetVersion),
           Bind(handle, "ncclGetUniqueId", path, nccl->GetUniqueId),
           Bind(handle, "ncclCommInitRank", path, nccl->CommInitRank),
           Bind(handle, "ncclCommDestroy", path, nccl->CommDestroy),
           Bind(handle, "ncclCommAbort", path, nccl->CommAbort),
           Bind(handle, "ncclCommGetAsyncError", path, nccl->CommGetAsyncError),
           Bind(handle, "ncclGetErrorString", path, nccl->GetErrorString),
           Bind(handle, "ncclGetLastError", path, nccl->GetLastError),
           Bind(handle, "ncclGroupStart", path, nccl->GroupStart),
           Bind(handle, "ncclGroupEnd", path, nccl->GroupEnd),
           Bind(handle, "ncclAllReduce", path, nccl->AllReduce),
           Bind(handle, "ncclAllGather", path, nccl->AllGather),
           Bind(handle, "ncclReduceScatter", path, nccl->ReduceScatter),
           Bind(handle, "ncclBroadcast", path, nccl->Broadcast),
           Bind(handle, "ncclReduce", path, nccl->Reduce),
           Bind(handle, "ncclSend", path, nccl->Send),
           Bind(handle, "ncclRecv", path, nccl->Recv),
       }) {
    if (!bound.ok()) return bound;
  }
  return std::shared_ptr<const NcclLibrary>(std::move(nccl));
}

absl::Status NcclLibrary::Check(ncclResult_t result, const char* call, ncclComm_t comm) const {
  if (result == ncclSuccess) return absl::OkStatus();
  const char* text = GetErrorString(result);
  const char* last = GetLastError(comm);
  std::string message = absl::StrCat(call, ": ", text != nullptr ? text : "unknown NCCL error",
                                     " (NCCL result ", static_cast<int>(result), ")");
  if (last != nullptr && last[0] != '\0') absl::StrAppend(&message, ": ", last);
  return absl::Status(CodeFor(result), message);
}

}  // namespace ember::collectives::nccl
