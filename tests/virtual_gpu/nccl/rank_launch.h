// What one rank runs when its stream reaches an NCCL call (or a whole ncclGroupStart/End group):
// its point-to-point sends and receives (progressed together, so matched pairs in a group never
// deadlock), then its collectives in order, each a rendezvous of all ranks in the clique. Data
// moves through the clique's shared memory, so ranks may be in different processes; every
// reduction folds in rank order, each step rounded to the element type.
#ifndef EMBER_TESTS_VIRTUAL_GPU_NCCL_RANK_LAUNCH_H_
#define EMBER_TESTS_VIRTUAL_GPU_NCCL_RANK_LAUNCH_H_

#include <nccl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tests/virtual_gpu/nccl/clique.h"

namespace ember::vgpu::nccl {

enum OpKind : int32_t {
  kAllReduce, kBroadcast, kReduce, kAllGather, kReduceScatter, kAlltoAll, kGather, kScatter,
  kSend = 100, kRecv = 101,
};

struct PendingOp {
  OpDescriptor desc;  // kind, datatype, redop, root (or peer for send/recv), count
  uint64_t send = 0;  // device addresses
  uint64_t recv = 0;
  // ncclRedOpCreatePreMulSum: the scalar (host immediate bytes, or a device address).
  bool premul = false;
  bool premul_on_device = false;
  uint8_t premul_scalar[8] = {};
  uint64_t premul_address = 0;
};

struct RankLaunch {
  std::shared_ptr<Clique> clique;
  int rank = 0;
  int device = 0;
  uint64_t first_collective = 0;  // the clique-wide number of the first collective here
  std::vector<uint64_t> send_numbers;  // per send op: the message number to that peer
  std::vector<uint64_t> recv_numbers;
  std::vector<PendingOp> ops;
};

int DatatypeSize(int32_t datatype);

// Runs the launch; on failure returns the error text (the clique is aborted when the failure
// concerns other ranks: a mismatch or a timeout).
bool RunRankLaunch(RankLaunch& launch, std::string* error);

}  // namespace ember::vgpu::nccl

#endif  // EMBER_TESTS_VIRTUAL_GPU_NCCL_RANK_LAUNCH_H_
