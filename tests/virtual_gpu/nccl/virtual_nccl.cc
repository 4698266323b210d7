// The virtual libnccl.so.2: unique ids, communicators (ncclCommInitRank across threads or
// processes, ncclCommInitAll, configs), groups, every collective of NCCL 2.28 plus Send/Recv and
// PreMulSum, async errors and abort. Calls are checked as a real NCCL would use them, strictly:
// one thread driving several ranks of a communicator outside a group (which deadlocks real NCCL)
// is an error, and ranks whose operation sequences differ fail with a message naming both calls.
// Each rank's work runs on its stream of the virtual GPU (rank_launch.h).
#include <nccl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "tests/virtual_gpu/driver/virtual_gpu_hooks.h"
#include "tests/virtual_gpu/nccl/clique.h"
#include "tests/virtual_gpu/nccl/rank_launch.h"

using ember::vgpu::nccl::Clique;
using ember::vgpu::nccl::OpDescriptor;
using ember::vgpu::nccl::PendingOp;
using ember::vgpu::nccl::RankLaunch;
namespace vn = ember::vgpu::nccl;

// The error state of a communicator, shared with the work its ranks have queued on streams (which
// may still run after ncclCommDestroy returned).
struct CommErrors {
  absl::Mutex mu;
  ncclResult_t async_error = ncclSuccess;  // guarded by mu
  std::string last_error;                  // guarded by mu
};

struct ncclComm {
  std::shared_ptr<Clique> clique;
  std::shared_ptr<CommErrors> errors = std::make_shared<CommErrors>();
  int rank = 0;
  int nranks = 0;
  int device = 0;
  bool blocking = true;
  bool joined_all = false;  // every rank has joined (InitRank waits for it)
  uint64_t collectives_issued = 0;
  std::vector<uint64_t> sent_to, received_from;  // messages per peer
  absl::Mutex mu;
  struct PreMul {
    int32_t datatype;
    bool on_device;
    uint8_t scalar[8];
    uint64_t address;
  };
  std::map<int32_t, PreMul> premul_ops;  // guarded by mu
  int32_t next_op = ncclNumOps;
};

namespace {

constexpr uint64_t kIdMagic = 0x44494c43434e5645ull;  // "EVNCCLID"

thread_local std::string t_last_error;

ncclResult_t Fail(ncclComm* comm, ncclResult_t result, const std::string& why) {
  t_last_error = why;
  std::fprintf(stderr, "ember virtual NCCL: %s\n", why.c_str());
  if (comm != nullptr) {
    absl::MutexLock lock(&comm->errors->mu);
    comm->errors->last_error = why;
  }
  return result;
}

uint64_t SlotBytes() {
  uint64_t bytes = 16ull << 20;
  if (const char* text = std::getenv("EMBER_VIRTUAL_NCCL_SLOT_BYTES")) {
    if (!absl::SimpleAtoi(text, &bytes) || bytes == 0) bytes = 16ull << 20;
  }
  return bytes;
}

struct IdContents {
  uint64_t magic;
  char name[96];
};
static_assert(sizeof(IdContents) <= sizeof(ncclUniqueId));

// Per thread: the open group (depth and queued operations), and which ranks of which clique this
// thread has issued ungrouped operations for.
struct QueuedOp {
  ncclComm* comm;
  CUstream stream;
  PendingOp op;
};
struct ThreadState {
  int group_depth = 0;
  std::vector<QueuedOp> queued;
  std::vector<ncclComm*> pending_inits;
  std::map<std::string, int> ungrouped_rank;  // clique name -> rank this thread drove outside groups
};
thread_local ThreadState t_state;

struct Job {
  std::shared_ptr<CommErrors> errors;
  RankLaunch launch;
};

void RunLaunchWork(void* arg, int run) {
  std::unique_ptr<Job> job(static_cast<Job*>(arg));
  if (!run) return;
  std::string error;
  if (!vn::RunRankLaunch(job->launch, &error)) {
    {
      absl::MutexLock lock(&job->errors->mu);
      if (job->errors->async_error == ncclSuccess) job->errors->async_error = ncclInvalidUsage;
      job->errors->last_error = error;
    }
    const int rank = job->launch.rank;
    std::fprintf(stderr, "ember virtual NCCL: rank %d: %s\n", rank, error.c_str());
    ember_vgpu_fault(job->launch.device, CUDA_ERROR_LAUNCH_FAILED,
                     absl::StrCat("NCCL rank ", rank, ": ", error).c_str());
  }
}

// Enqueues one rank's operations (in issue order) on `stream`.
ncclResult_t Launch(ncclComm* comm, CUstream stream, std::vector<PendingOp> ops) {
  auto job = std::make_unique<Job>();
  job->errors = comm->errors;
  RankLaunch& launch = job->launch;
  launch.clique = comm->clique;
  launch.rank = comm->rank;
  launch.device = comm->device;
  launch.first_collective = comm->collectives_issued + 1;
  for (const PendingOp& op : ops) {
    if (op.desc.kind == vn::kSend) launch.send_numbers.push_back(++comm->sent_to[op.desc.root]);
    else if (op.desc.kind == vn::kRecv) launch.recv_numbers.push_back(++comm->received_from[op.desc.root]);
    else ++comm->collectives_issued;
  }
  launch.ops = std::move(ops);
  Job* raw = job.release();  // RunLaunchWork owns it
  if (ember_vgpu_stream_enqueue(stream, &RunLaunchWork, raw) != CUDA_SUCCESS) {
    std::unique_ptr<Job> reclaimed(raw);
    return Fail(comm, ncclUnhandledCudaError, "the stream refused the work (wrong current context, or it faulted)");
  }
  return ncclSuccess;
}

ncclResult_t CheckComm(ncclComm* comm, const char* call) {
  if (comm == nullptr || comm->clique == nullptr) return Fail(nullptr, ncclInvalidArgument, absl::StrCat(call, ": null communicator"));
  absl::MutexLock lock(&comm->errors->mu);
  if (comm->errors->async_error != ncclSuccess) {
    t_last_error = comm->errors->last_error;
    return comm->errors->async_error;
  }
  return ncclSuccess;
}

// Waits until every rank of `comm`'s clique has joined.
ncclResult_t WaitForAllRanks(ncclComm* comm) {
  Clique& clique = *comm->clique;
  const bool ok = clique.Wait(
      [&] { return clique.header().joined.load() >= comm->nranks; },
      [&] {
        std::string missing;
        for (int r = 0; r < comm->nranks; ++r) {
          if (clique.header().present[r].load() == 0) absl::StrAppend(&missing, missing.empty() ? "" : ", ", r);
        }
        return absl::StrCat("ncclCommInitRank: ranks ", missing, " never joined (timeout ", vn::TimeoutMs() / 1000, " s)");
      },
      vn::TimeoutMs());
  if (!ok) return Fail(comm, ncclSystemError, clique.abort_reason());
  comm->joined_all = true;
  return ncclSuccess;
}

ncclResult_t Issue(const char* call, ncclComm* comm, CUstream stream, PendingOp op) {
  if (ncclResult_t r = CheckComm(comm, call); r != ncclSuccess) return r;
  if (vn::DatatypeSize(op.desc.datatype) == 0 || op.desc.datatype == ncclFloat8e4m3 || op.desc.datatype == ncclFloat8e5m2) {
    return Fail(comm, ncclInvalidArgument, absl::StrCat(call, ": unsupported datatype ", op.desc.datatype));
  }
  const bool reduces = op.desc.kind == vn::kAllReduce || op.desc.kind == vn::kReduce || op.desc.kind == vn::kReduceScatter;
  if (reduces) {
    if (op.desc.redop >= ncclNumOps) {
      absl::MutexLock lock(&comm->mu);
      auto it = comm->premul_ops.find(op.desc.redop);
      if (it == comm->premul_ops.end()) return Fail(nullptr, ncclInvalidArgument, absl::StrCat(call, ": unknown reduction op ", op.desc.redop));
      if (it->second.datatype != op.desc.datatype) {
        return Fail(nullptr, ncclInvalidArgument, absl::StrCat(call, ": the PreMulSum op was made for another datatype"));
      }
      op.premul = true;
      op.premul_on_device = it->second.on_device;
      std::memcpy(op.premul_scalar, it->second.scalar, 8);
      op.premul_address = it->second.address;
    } else if (op.desc.redop < 0) {
      return Fail(comm, ncclInvalidArgument, absl::StrCat(call, ": bad reduction op"));
    }
  }
  if (op.desc.root >= comm->nranks || ((op.desc.kind == vn::kBroadcast || op.desc.kind == vn::kReduce ||
                                        op.desc.kind == vn::kGather || op.desc.kind == vn::kScatter ||
                                        op.desc.kind == vn::kSend || op.desc.kind == vn::kRecv) && op.desc.root < 0)) {
    return Fail(comm, ncclInvalidArgument, absl::StrCat(call, ": root/peer ", op.desc.root, " is outside [0, ", comm->nranks, ")"));
  }
  if ((op.desc.kind == vn::kSend || op.desc.kind == vn::kRecv) && op.desc.root == comm->rank) {
    return Fail(comm, ncclInvalidArgument, absl::StrCat(call, ": a rank cannot send to or receive from itself"));
  }
  int stream_device = -1;
  if (ember_vgpu_stream_device(stream, &stream_device) != CUDA_SUCCESS) {
    return Fail(comm, ncclInvalidArgument, absl::StrCat(call, ": not a stream of the virtual GPU (or no current context)"));
  }
  if (stream_device != comm->device) {
    return Fail(comm, ncclInvalidArgument, absl::StrCat(call, ": a stream of device ", stream_device,
                                                        " with rank ", comm->rank, "'s communicator on device ", comm->device));
  }
  if (t_state.group_depth > 0) {
    t_state.queued.push_back(QueuedOp{comm, stream, op});
    return ncclSuccess;
  }
  // Outside a group: this thread may drive only one rank of a communicator.
  auto [it, inserted] = t_state.ungrouped_rank.emplace(comm->clique->name(), comm->rank);
  if (!inserted && it->second != comm->rank) {
    return Fail(comm, ncclInvalidUsage,
                absl::StrCat(call, ": this thread issues operations for ranks ", it->second, " and ", comm->rank,
                             " of one communicator outside ncclGroupStart/ncclGroupEnd; real NCCL deadlocks "
                             "here (each call waits for the other ranks): put the calls in a group"));
  }
  if (!comm->joined_all) {
    if (ncclResult_t r = WaitForAllRanks(comm); r != ncclSuccess) return r;
  }
  return Launch(comm, stream, {op});
}

PendingOp Op(int32_t kind, const void* send, void* recv, size_t count, ncclDataType_t type, int32_t redop, int root) {
  PendingOp op;
  op.desc.kind = kind;
  op.desc.count = count;
  op.desc.datatype = type;
  op.desc.redop = redop;
  op.desc.root = root;
  op.send = reinterpret_cast<uintptr_t>(send);
  op.recv = reinterpret_cast<uintptr_t>(recv);
  return op;
}

ncclResult_t InitRank(ncclComm_t* out, int nranks, ncclUniqueId id, int rank, int device, bool blocking) {
  if (out == nullptr) return Fail(nullptr, ncclInvalidArgument, "ncclCommInitRank: null communicator pointer");
  IdContents contents;
  std::memcpy(&contents, id.internal, sizeof(contents));
  if (contents.magic != kIdMagic) {
    return Fail(nullptr, ncclInvalidArgument, "ncclCommInitRank: the unique id does not come from ncclGetUniqueId");
  }
  contents.name[sizeof(contents.name) - 1] = '\0';
  absl::StatusOr<std::shared_ptr<Clique>> clique = Clique::Join(contents.name, nranks, rank, device);
  if (!clique.ok()) return Fail(nullptr, ncclInvalidArgument, absl::StrCat("ncclCommInitRank: ", clique.status().message()));
  auto comm = std::make_unique<ncclComm>();
  comm->clique = *std::move(clique);
  comm->rank = rank;
  comm->nranks = nranks;
  comm->device = device;
  comm->blocking = blocking;
  comm->sent_to.assign(nranks, 0);
  comm->received_from.assign(nranks, 0);
  ncclComm* raw = comm.release();  // ncclCommDestroy / ncclCommAbort take it back
  *out = raw;
  if (t_state.group_depth > 0) {
    t_state.pending_inits.push_back(raw);  // joined at ncclGroupEnd
    return ncclSuccess;
  }
  // Outside a group a thread may initialize only one rank of a communicator: real NCCL blocks here
  // until every rank joined.
  auto [it, inserted] = t_state.ungrouped_rank.emplace(raw->clique->name(), rank);
  if (!inserted && it->second != rank) {
    std::unique_ptr<ncclComm> reclaimed(raw);
    *out = nullptr;
    return Fail(nullptr, ncclInvalidUsage,
                absl::StrCat("ncclCommInitRank: this thread initializes ranks ", it->second, " and ", rank,
                             " of one communicator outside ncclGroupStart/ncclGroupEnd; real NCCL deadlocks "
                             "here (each call waits for the others): put them in a group"));
  }
  if (ncclResult_t r = WaitForAllRanks(raw); r != ncclSuccess) {
    std::unique_ptr<ncclComm> reclaimed(raw);
    *out = nullptr;
    return r;
  }
  return ncclSuccess;
}

ncclResult_t Release(ncclComm_t comm, bool abort) {
  if (comm == nullptr) return Fail(nullptr, ncclInvalidArgument, "null communicator");
  std::unique_ptr<ncclComm> owned(comm);
  if (abort) {
    owned->clique->Abort(absl::StrCat("rank ", owned->rank, " aborted the communicator"));
  }
  if (owned->clique->header().left.fetch_add(1) + 1 == owned->nranks) owned->clique->Unlink();
  for (auto it = t_state.ungrouped_rank.begin(); it != t_state.ungrouped_rank.end();) {
    it = it->first == owned->clique->name() && it->second == owned->rank ? t_state.ungrouped_rank.erase(it) : std::next(it);
  }
  return ncclSuccess;
}

}  // namespace

extern "C" {

const char* ember_vgpu_nccl_last_error(void) { return t_last_error.c_str(); }
void ember_vgpu_nccl_set_timeout_ms(int64_t ms) { vn::SetTimeoutMs(ms); }

ncclResult_t ncclGetVersion(int* version) {
  if (version == nullptr) return ncclInvalidArgument;
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  if (id == nullptr) return Fail(nullptr, ncclInvalidArgument, "ncclGetUniqueId: null id");
  absl::StatusOr<std::string> name = Clique::Create(SlotBytes());
  if (!name.ok()) return Fail(nullptr, ncclSystemError, absl::StrCat("ncclGetUniqueId: ", name.status().message()));
  IdContents contents = {};
  contents.magic = kIdMagic;
  std::snprintf(contents.name, sizeof(contents.name), "%s", name->c_str());
  std::memset(id->internal, 0, sizeof(id->internal));
  std::memcpy(id->internal, &contents, sizeof(contents));
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  int device = 0;
  if (ember_vgpu_stream_device(nullptr, &device) != CUDA_SUCCESS) {
    return Fail(nullptr, ncclUnhandledCudaError, "ncclCommInitRank: no current CUDA context (the rank's device)");
  }
  return InitRank(comm, nranks, id, rank, device, true);
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank, ncclConfig_t* config) {
  if (config != nullptr && config->magic != 0xcafebeef) {
    return Fail(nullptr, ncclInvalidArgument, "ncclCommInitRankConfig: the config was not set up with NCCL_CONFIG_INITIALIZER");
  }
  if (config != nullptr && config->blocking == 0) {
    return Fail(nullptr, ncclInvalidArgument, "non-blocking communicators are not modelled by the virtual NCCL");
  }
  return ncclCommInitRank(comm, nranks, id, rank);
}

ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  if (comms == nullptr || ndev <= 0) return Fail(nullptr, ncclInvalidArgument, "ncclCommInitAll: bad arguments");
  ncclUniqueId id;
  if (ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess) return r;
  if (ncclResult_t r = ncclGroupStart(); r != ncclSuccess) return r;
  for (int i = 0; i < ndev; ++i) {
    const int device = devlist != nullptr ? devlist[i] : i;
    if (ncclResult_t r = InitRank(&comms[i], ndev, id, i, device, true); r != ncclSuccess) {
      ncclGroupEnd();
      return r;
    }
  }
  return ncclGroupEnd();
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) { return CheckComm(comm, "ncclCommFinalize"); }
ncclResult_t ncclCommDestroy(ncclComm_t comm) { return Release(comm, false); }
ncclResult_t ncclCommAbort(ncclComm_t comm) { return Release(comm, true); }

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* error) {
  if (comm == nullptr || error == nullptr) return ncclInvalidArgument;
  absl::MutexLock lock(&comm->errors->mu);
  *error = comm->errors->async_error;
  if (*error == ncclSuccess && comm->clique->aborted()) *error = ncclRemoteError;
  return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  if (comm == nullptr || count == nullptr) return ncclInvalidArgument;
  *count = comm->nranks;
  return ncclSuccess;
}
ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  if (comm == nullptr || device == nullptr) return ncclInvalidArgument;
  *device = comm->device;
  return ncclSuccess;
}
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (comm == nullptr || rank == nullptr) return ncclInvalidArgument;
  *rank = comm->rank;
  return ncclSuccess;
}

const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
  }
}

const char* ncclGetLastError(ncclComm_t comm) {
  if (comm != nullptr) {
    absl::MutexLock lock(&comm->errors->mu);
    if (!comm->errors->last_error.empty()) t_last_error = comm->errors->last_error;
  }
  return t_last_error.c_str();
}

ncclResult_t ncclGroupStart() {
  ++t_state.group_depth;
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  if (t_state.group_depth == 0) return Fail(nullptr, ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
  if (--t_state.group_depth > 0) return ncclSuccess;
  std::vector<ncclComm*> inits = std::move(t_state.pending_inits);
  std::vector<QueuedOp> queued = std::move(t_state.queued);
  t_state.pending_inits.clear();
  t_state.queued.clear();
  for (ncclComm* comm : inits) {
    if (ncclResult_t r = WaitForAllRanks(comm); r != ncclSuccess) return r;
  }
  // One launch per communicator, its operations in issue order, on its one stream.
  std::vector<ncclComm*> order;
  std::map<ncclComm*, std::pair<CUstream, std::vector<PendingOp>>> per_comm;
  for (QueuedOp& q : queued) {
    auto [it, inserted] = per_comm.try_emplace(q.comm, q.stream, std::vector<PendingOp>());
    if (inserted) order.push_back(q.comm);
    if (it->second.first != q.stream) {
      return Fail(q.comm, ncclInvalidUsage, "one group uses two streams for the same communicator");
    }
    it->second.second.push_back(q.op);
  }
  for (ncclComm* comm : order) {
    if (!comm->joined_all) {
      if (ncclResult_t r = WaitForAllRanks(comm); r != ncclSuccess) return r;
    }
    auto& [stream, ops] = per_comm[comm];
    if (ncclResult_t r = Launch(comm, stream, std::move(ops)); r != ncclSuccess) return r;
  }
  return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  return Issue("ncclAllReduce", comm, stream, Op(vn::kAllReduce, send, recv, count, type, op, -1));
}
ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                           ncclComm_t comm, cudaStream_t stream) {
  return Issue("ncclBroadcast", comm, stream, Op(vn::kBroadcast, send, recv, count, type, 0, root));
}
ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t type, int root, ncclComm_t comm, cudaStream_t stream) {
  return Issue("ncclBcast", comm, stream, Op(vn::kBroadcast, buff, buff, count, type, 0, root));
}
ncclResult_t ncclReduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  return Issue("ncclReduce", comm, stream, Op(vn::kReduce, send, recv, count, type, op, root));
}
ncclResult_t ncclAllGather(const void* send, void* recv, size_t count, ncclDataType_t type, ncclComm_t comm,
                           cudaStream_t stream) {
  return Issue("ncclAllGather", comm, stream, Op(vn::kAllGather, send, recv, count, type, 0, -1));
}
ncclResult_t ncclReduceScatter(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                               ncclComm_t comm, cudaStream_t stream) {
  return Issue("ncclReduceScatter", comm, stream, Op(vn::kReduceScatter, send, recv, count, type, op, -1));
}
ncclResult_t ncclAlltoAll(const void* send, void* recv, size_t count, ncclDataType_t type, ncclComm_t comm,
                          cudaStream_t stream) {
  return Issue("ncclAlltoAll", comm, stream, Op(vn::kAlltoAll, send, recv, count, type, 0, -1));
}
ncclResult_t ncclGather(const void* send, void* recv, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                        cudaStream_t stream) {
  return Issue("ncclGather", comm, stream, Op(vn::kGather, send, recv, count, type, 0, root));
}
ncclResult_t ncclScatter(const void* send, void* recv, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                         cudaStream_t stream) {
  return Issue("ncclScatter", comm, stream, Op(vn::kScatter, send, recv, count, type, 0, root));
}
ncclResult_t ncclSend(const void* send, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return Issue("ncclSend", comm, stream, Op(vn::kSend, send, nullptr, count, type, 0, peer));
}
ncclResult_t ncclRecv(void* recv, size_t count, ncclDataType_t type, int peer, ncclComm_t comm, cudaStream_t stream) {
  return Issue("ncclRecv", comm, stream, Op(vn::kRecv, nullptr, recv, count, type, 0, peer));
}

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t type,
                                      ncclScalarResidence_t residence, ncclComm_t comm) {
  if (op == nullptr || scalar == nullptr || comm == nullptr) return Fail(comm, ncclInvalidArgument, "ncclRedOpCreatePreMulSum: null argument");
  ncclComm::PreMul premul = {};
  premul.datatype = type;
  premul.on_device = residence == ncclScalarDevice;
  if (premul.on_device) {
    premul.address = reinterpret_cast<uintptr_t>(scalar);
  } else {
    std::memcpy(premul.scalar, scalar, vn::DatatypeSize(type));
  }
  absl::MutexLock lock(&comm->mu);
  const int32_t id = comm->next_op++;
  comm->premul_ops[id] = premul;
  *op = static_cast<ncclRedOp_t>(id);
  return ncclSuccess;
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  if (comm == nullptr) return ncclInvalidArgument;
  absl::MutexLock lock(&comm->mu);
  if (comm->premul_ops.erase(op) == 0) return Fail(nullptr, ncclInvalidArgument, "ncclRedOpDestroy: unknown op");
  return ncclSuccess;
}

}  // extern "C"
