// NcclLibrary: libnccl.so.2 opened with dlopen (never linked, so Ember loads where NCCL is absent),
// as a table of the entry points Ember calls, plus the one place where an ncclResult_t becomes an
// absl::Status naming the call and NCCL's own explanation of it.
#ifndef EMBER_COLLECTIVES_NCCL_NCCL_LIBRARY_H_
#define EMBER_COLLECTIVES_NCCL_NCCL_LIBRARY_H_

#include <nccl.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "stream_executor/cuda/cuda_library.h"

namespace ember::collectives::nccl {

class NcclLibrary {
  struct PrivateTag {
    explicit PrivateTag() = default;
  };

 public:
  // Opens libnccl.so.2 from `directory` first (the CUDA library directory: EMBER_CUDA_LIBRARY_PATH
  // or the cuda_library_path client option, as for the driver), else through the loader's search
  // path; `library` may also be a path of its own. FailedPrecondition "no NCCL library found" when
  // it cannot be opened, or naming the entry point it lacks.
  static absl::StatusOr<std::shared_ptr<const NcclLibrary>> Open(
      const std::string& directory, const std::string& library = "libnccl.so.2");
  // Public for std::make_shared only; use Open.
  NcclLibrary(PrivateTag, se::cuda::OpenedLibrary library) : library_(std::move(library)) {}

  // OK for ncclSuccess; otherwise an error "<call>: <ncclGetErrorString> (<ncclGetLastError>)",
  // its code from the kind of failure (bad arguments, a peer or the network, the rest internal).
  // `comm` (may be null) is the communicator whose last error is asked for.
  absl::Status Check(ncclResult_t result, const char* call, ncclComm_t comm) const;

  const std::string& path() const { return library_.path; }

  ncclResult_t (*GetVersion)(int*) = nullptr;
  ncclResult_t (*GetUniqueId)(ncclUniqueId*) = nullptr;
  ncclResult_t (*CommInitRank)(ncclComm_t*, int, ncclUniqueId, int) = nullptr;
  ncclResult_t (*CommDestroy)(ncclComm_t) = nullptr;
  ncclResult_t (*CommAbort)(ncclComm_t) = nullptr;
  ncclResult_t (*CommGetAsyncError)(ncclComm_t, ncclResult_t*) = nullptr;
  const char* (*GetErrorString)(ncclResult_t) = nullptr;
  const char* (*GetLastError)(ncclComm_t) = nullptr;
  ncclResult_t (*GroupStart)() = nullptr;
  ncclResult_t (*GroupEnd)() = nullptr;
  ncclResult_t (*AllReduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                            cudaStream_t) = nullptr;
  ncclResult_t (*AllGather)(const void*, void*, size_t, ncclDataType_t, ncclComm_t,
                            cudaStream_t) = nullptr;
  ncclResult_t (*ReduceScatter)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t,
                                ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*Broadcast)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t,
                            cudaStream_t) = nullptr;
  ncclResult_t (*Reduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, int,
                         ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*Send)(const void*, size_t, ncclDataType_t, int, ncclComm_t,
                       cudaStream_t) = nullptr;
  ncclResult_t (*Recv)(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;

 private:
  se::cuda::OpenedLibrary library_;
};

}  // namespace ember::collectives::nccl

#endif  // EMBER_COLLECTIVES_NCCL_NCCL_LIBRARY_H_
