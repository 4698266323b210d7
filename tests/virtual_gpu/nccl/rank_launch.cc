#include "tests/virtual_gpu/nccl/rank_launch.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "tests/virtual_gpu/driver/virtual_gpu_hooks.h"
#include "tests/virtual_gpu/ptx/float_format.h"

namespace ember::vgpu::nccl {
namespace {

namespace ptx = ember::vgpu::ptx;

double LoadFloat(int32_t type, const uint8_t* p) {
  switch (type) {
    case ncclFloat16: { uint16_t h; std::memcpy(&h, p, 2); return ptx::F16ToF32(h); }
    case ncclBfloat16: { uint16_t h; std::memcpy(&h, p, 2); return ptx::BF16ToF32(h); }
    case ncclFloat32: { float f; std::memcpy(&f, p, 4); return f; }
    default: { double d; std::memcpy(&d, p, 8); return d; }
  }
}

void StoreFloat(int32_t type, uint8_t* p, double v) {
  switch (type) {
    case ncclFloat16: {
      uint16_t h = static_cast<uint16_t>(ptx::RoundToFormat(v, ptx::kF16Format, ptx::Rounding::kNearest));
      std::memcpy(p, &h, 2);
      break;
    }
    case ncclBfloat16: {
      uint16_t h = static_cast<uint16_t>(ptx::RoundToFormat(v, ptx::kBF16Format, ptx::Rounding::kNearest));
      std::memcpy(p, &h, 2);
      break;
    }
    case ncclFloat32: { float f = static_cast<float>(v); std::memcpy(p, &f, 4); break; }
    default: std::memcpy(p, &v, 8); break;
  }
}

bool IsFloat(int32_t type) {
  return type == ncclFloat16 || type == ncclBfloat16 || type == ncclFloat32 || type == ncclFloat64;
}

int64_t LoadInt(int32_t type, const uint8_t* p, uint64_t* as_unsigned) {
  switch (type) {
    case ncclInt8: { int8_t v; std::memcpy(&v, p, 1); *as_unsigned = static_cast<uint64_t>(v); return v; }
    case ncclUint8: { uint8_t v = *p; *as_unsigned = v; return v; }
    case ncclInt32: { int32_t v; std::memcpy(&v, p, 4); *as_unsigned = static_cast<uint64_t>(v); return v; }
    case ncclUint32: { uint32_t v; std::memcpy(&v, p, 4); *as_unsigned = v; return v; }
    case ncclInt64: { int64_t v; std::memcpy(&v, p, 8); *as_unsigned = static_cast<uint64_t>(v); return v; }
    default: { uint64_t v; std::memcpy(&v, p, 8); *as_unsigned = v; return static_cast<int64_t>(v); }
  }
}

bool IsUnsigned(int32_t type) { return type == ncclUint8 || type == ncclUint32 || type == ncclUint64; }

// `v` rounded to the element type (NCCL reduces in the element's own type, one step at a time).
double RoundToType(int32_t type, double v) {
  uint8_t bytes[8];
  StoreFloat(type, bytes, v);
  return LoadFloat(type, bytes);
}

// Reduces one element of the ranks' payloads into `out`: a fold in rank order, each step computed
// exactly and rounded to the element type (as the in-process collectives and the evaluator do;
// a real NCCL folds in ring order, so its float results may differ in the last place).
// ncclAvg divides the sum by the rank count at the end; PreMulSum rounds each scaled input first.
void ReduceElement(const PendingOp& op, double premul, Clique& clique, uint64_t offset_bytes,
                   uint8_t* out) {
  const int32_t type = op.desc.datatype;
  const int n = clique.nranks();
  if (IsFloat(type)) {
    double acc = 0;
    for (int r = 0; r < n; ++r) {
      double v = LoadFloat(type, clique.SlotPayload(r) + offset_bytes);
      if (op.premul) v = RoundToType(type, v * premul);
      if (r == 0) {
        acc = v;
        continue;
      }
      switch (op.desc.redop) {
        case ncclProd: acc = RoundToType(type, acc * v); break;
        case ncclMax: acc = std::fmax(acc, v); break;
        case ncclMin: acc = std::fmin(acc, v); break;
        default: acc = RoundToType(type, acc + v); break;  // sum, avg, premulsum
      }
    }
    if (op.desc.redop == ncclAvg) acc /= n;
    StoreFloat(type, out, acc);
    return;
  }
  // Integers wrap (computed on 64 bits; the store keeps the element's low bytes).
  const bool is_unsigned = IsUnsigned(type);
  uint64_t uacc = 0;
  int64_t sacc = 0;
  for (int r = 0; r < n; ++r) {
    uint64_t u = 0;
    int64_t s = LoadInt(type, clique.SlotPayload(r) + offset_bytes, &u);
    if (op.premul) {
      u *= static_cast<uint64_t>(premul);
      s = static_cast<int64_t>(static_cast<uint64_t>(s) * static_cast<uint64_t>(static_cast<int64_t>(premul)));
    }
    if (r == 0) {
      uacc = u;
      sacc = s;
      continue;
    }
    switch (op.desc.redop) {
      case ncclProd: uacc *= u; sacc = static_cast<int64_t>(static_cast<uint64_t>(sacc) * static_cast<uint64_t>(s)); break;
      case ncclMax: uacc = std::max(uacc, u); sacc = std::max(sacc, s); break;
      case ncclMin: uacc = std::min(uacc, u); sacc = std::min(sacc, s); break;
      default: uacc += u; sacc = static_cast<int64_t>(static_cast<uint64_t>(sacc) + static_cast<uint64_t>(s)); break;
    }
  }
  uint64_t result = is_unsigned ? uacc : static_cast<uint64_t>(sacc);
  if (op.desc.redop == ncclAvg) {
    result = is_unsigned ? uacc / static_cast<uint64_t>(n) : static_cast<uint64_t>(sacc / n);
  }
  std::memcpy(out, &result, DatatypeSize(type));  // little endian: the low bytes
}

uint8_t* Device(int device, uint64_t address, uint64_t size, bool write, const char* what,
                std::string* error) {
  if (size == 0) return nullptr;
  void* host = nullptr;
  char why[512] = {};
  if (ember_vgpu_resolve(device, address, size, write ? 1 : 0, &host, why, sizeof(why)) != 0) {
    *error = absl::StrCat("the ", what, " buffer (", size, " bytes at 0x", absl::Hex(address), "): ", why);
    return nullptr;
  }
  return static_cast<uint8_t*>(host);
}

// Bytes a rank deposits for a collective (its whole send buffer).
uint64_t SendBytes(const PendingOp& op, int nranks) {
  const uint64_t e = static_cast<uint64_t>(DatatypeSize(op.desc.datatype));
  switch (op.desc.kind) {
    case kReduceScatter: case kAlltoAll: case kScatter: return op.desc.count * nranks * e;
    default: return op.desc.count * e;
  }
}

bool RunPointToPoint(RankLaunch& launch, std::string* error) {
  Clique& clique = *launch.clique;
  CliqueHeader& h = clique.header();
  struct Message {
    size_t op;
    uint64_t number;
    bool done;
  };
  std::vector<Message> sends, recvs;
  size_t si = 0, ri = 0;
  for (size_t i = 0; i < launch.ops.size(); ++i) {
    if (launch.ops[i].desc.kind == kSend) sends.push_back({i, launch.send_numbers[si++], false});
    if (launch.ops[i].desc.kind == kRecv) recvs.push_back({i, launch.recv_numbers[ri++], false});
  }
  size_t remaining = sends.size() + recvs.size();
  std::string failure;
  auto progress = [&]() -> bool {
    for (Message& m : sends) {
      if (m.done) continue;
      const PendingOp& op = launch.ops[m.op];
      Mailbox& box = h.mailboxes[launch.rank][op.desc.root];
      if (box.sent.load() != m.number - 1) continue;  // an earlier message is not sent yet
      if (box.received.load() != box.sent.load()) continue;  // the box still holds a message
      const uint64_t bytes = op.desc.count * DatatypeSize(op.desc.datatype);
      if (bytes > clique.slot_bytes()) {
        failure = absl::StrCat("ncclSend of ", bytes, " bytes exceeds the virtual NCCL's ",
                               clique.slot_bytes(), "-byte mailbox (EMBER_VIRTUAL_NCCL_SLOT_BYTES)");
        return false;
      }
      const uint8_t* src = Device(launch.device, op.send, bytes, false, "send", &failure);
      if (bytes > 0 && src == nullptr) return false;
      if (bytes > 0) std::memcpy(clique.MailboxPayload(launch.rank, op.desc.root), src, bytes);
      box.datatype = op.desc.datatype;
      box.count = op.desc.count;
      box.payload_bytes = bytes;
      box.sent.store(m.number);
      m.done = true;
      --remaining;
    }
    for (Message& m : recvs) {
      if (m.done) continue;
      const PendingOp& op = launch.ops[m.op];
      Mailbox& box = h.mailboxes[op.desc.root][launch.rank];
      if (box.sent.load() < m.number || box.received.load() != m.number - 1) continue;
      if (box.count != op.desc.count || box.datatype != op.desc.datatype) {
        failure = absl::StrCat("message #", m.number, " from rank ", op.desc.root, " to rank ", launch.rank,
                               ": ncclSend sent ", box.count, " elements of type ", box.datatype,
                               " but ncclRecv expects ", op.desc.count, " of type ", op.desc.datatype);
        clique.Abort(failure);
        return false;
      }
      uint8_t* dst = Device(launch.device, op.recv, box.payload_bytes, true, "receive", &failure);
      if (box.payload_bytes > 0 && dst == nullptr) return false;
      if (box.payload_bytes > 0) std::memcpy(dst, clique.MailboxPayload(op.desc.root, launch.rank), box.payload_bytes);
      box.received.store(m.number);
      m.done = true;
      --remaining;
    }
    return true;
  };
  // Sends also wait until their message was received, so that the sender may reuse its buffer.
  auto all_received = [&]() {
    for (const Message& m : sends) {
      const Mailbox& box = h.mailboxes[launch.rank][launch.ops[m.op].desc.root];
      if (box.received.load() < m.number) return false;
    }
    return true;
  };
  const bool ok = clique.Wait(
      [&] {
        if (!progress()) return true;  // stop waiting; `failure` says why
        return remaining == 0 && all_received();
      },
      [&] {
        for (const Message& m : recvs) {
          if (!m.done) {
            return absl::StrCat("rank ", launch.rank, " waited for message #", m.number, " from rank ",
                                launch.ops[m.op].desc.root, " (ncclRecv), which never sent it");
          }
        }
        for (const Message& m : sends) {
          return absl::StrCat("rank ", launch.rank, "'s message #", m.number, " to rank ",
                              launch.ops[m.op].desc.root, " (ncclSend) was never received");
        }
        return std::string("point-to-point exchange timed out");
      },
      TimeoutMs());
  if (!failure.empty()) {
    *error = failure;
    return false;
  }
  if (!ok) {
    *error = clique.abort_reason();
    return false;
  }
  return true;
}

bool RunCollective(RankLaunch& launch, const PendingOp& op, uint64_t number, std::string* error) {
  Clique& clique = *launch.clique;
  CliqueHeader& h = clique.header();
  const int n = clique.nranks();
  const int me = launch.rank;
  const uint64_t e = static_cast<uint64_t>(DatatypeSize(op.desc.datatype));
  const uint64_t count = op.desc.count;
  // Deposit.
  const uint64_t bytes = SendBytes(op, n);
  const bool sends = !(op.desc.kind == kBroadcast && me != op.desc.root) &&
                     !(op.desc.kind == kScatter && me != op.desc.root);
  if (bytes > clique.slot_bytes()) {
    *error = absl::StrCat(op.desc.Describe(), " moves ", bytes, " bytes per rank, more than the virtual NCCL's ",
                          clique.slot_bytes(), "-byte slots (EMBER_VIRTUAL_NCCL_SLOT_BYTES)");
    clique.Abort(*error);
    return false;
  }
  if (sends && bytes > 0) {
    const uint8_t* src = Device(launch.device, op.send, bytes, false, "send", error);
    if (src == nullptr) return false;
    std::memcpy(clique.SlotPayload(me), src, bytes);
  }
  double premul = 1.0;
  if (op.premul) {
    uint8_t scalar[8] = {};
    std::memcpy(scalar, op.premul_scalar, 8);
    if (op.premul_on_device) {
      const uint8_t* p = Device(launch.device, op.premul_address, e, false, "PreMulSum scalar", error);
      if (p == nullptr) return false;
      std::memcpy(scalar, p, e);
    }
    uint64_t unused = 0;
    premul = IsFloat(op.desc.datatype) ? LoadFloat(op.desc.datatype, scalar)
                                       : static_cast<double>(LoadInt(op.desc.datatype, scalar, &unused));
  }
  h.slots[me].op = op.desc;
  h.slots[me].payload_bytes = bytes;
  h.slots[me].deposited.store(number);
  // Everyone arrives, and agrees on the operation.
  auto arrived = [&] {
    for (int r = 0; r < n; ++r) {
      if (h.slots[r].deposited.load() < number) return false;
    }
    return true;
  };
  auto missing = [&] {
    for (int r = 0; r < n; ++r) {
      if (h.slots[r].deposited.load() < number) {
        return absl::StrCat("rank ", me, " waited in ", op.desc.Describe(), " (collective #", number,
                            ") but rank ", r, " never issued it (timeout ", TimeoutMs() / 1000, " s)");
      }
    }
    return std::string("collective timed out");
  };
  if (!clique.Wait(arrived, missing, TimeoutMs())) {
    *error = clique.abort_reason();
    return false;
  }
  for (int r = 0; r < n; ++r) {
    const OpDescriptor& other = h.slots[r].op;
    if (other.kind != op.desc.kind || other.count != op.desc.count || other.datatype != op.desc.datatype ||
        other.redop != op.desc.redop || other.root != op.desc.root) {
      *error = absl::StrCat("collective #", number, " differs between ranks: rank ", me, " called ",
                            op.desc.Describe(), " but rank ", r, " called ", other.Describe());
      clique.Abort(*error);
      return false;
    }
  }
  // Compute this rank's output.
  const uint64_t out_bytes = [&]() -> uint64_t {
    switch (op.desc.kind) {
      case kAllGather: case kAlltoAll: return count * n * e;
      case kGather: return me == op.desc.root ? count * n * e : 0;
      case kReduce: return me == op.desc.root ? count * e : 0;
      default: return count * e;
    }
  }();
  uint8_t* dst = out_bytes > 0 ? Device(launch.device, op.recv, out_bytes, true, "receive", error) : nullptr;
  if (out_bytes > 0 && dst == nullptr) return false;
  switch (op.desc.kind) {
    case kAllReduce:
    case kReduce:
      if (out_bytes > 0) {
        for (uint64_t i = 0; i < count; ++i) ReduceElement(op, premul, clique, i * e, dst + i * e);
      }
      break;
    case kReduceScatter:
      for (uint64_t i = 0; i < count; ++i) ReduceElement(op, premul, clique, (me * count + i) * e, dst + i * e);
      break;
    case kBroadcast:
      std::memcpy(dst, clique.SlotPayload(op.desc.root), count * e);
      break;
    case kAllGather:
    case kGather:
      if (out_bytes > 0) {
        for (int r = 0; r < n; ++r) std::memcpy(dst + r * count * e, clique.SlotPayload(r), count * e);
      }
      break;
    case kAlltoAll:
      for (int r = 0; r < n; ++r) std::memcpy(dst + r * count * e, clique.SlotPayload(r) + me * count * e, count * e);
      break;
    case kScatter:
      std::memcpy(dst, clique.SlotPayload(op.desc.root) + me * count * e, count * e);
      break;
    default:
      break;
  }
  // Nobody reuses its slot before everyone has read it.
  h.slots[me].consumed.store(number);
  auto all_read = [&] {
    for (int r = 0; r < n; ++r) {
      if (h.slots[r].consumed.load() < number) return false;
    }
    return true;
  };
  if (!clique.Wait(all_read, [&] { return absl::StrCat("collective #", number, ": a rank stopped while reading"); },
                   TimeoutMs())) {
    *error = clique.abort_reason();
    return false;
  }
  return true;
}

}  // namespace

int DatatypeSize(int32_t datatype) {
  switch (datatype) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 0;
  }
}

bool RunRankLaunch(RankLaunch& launch, std::string* error) {
  bool has_p2p = false;
  for (const PendingOp& op : launch.ops) has_p2p = has_p2p || op.desc.kind == kSend || op.desc.kind == kRecv;
  if (has_p2p && !RunPointToPoint(launch, error)) return false;
  uint64_t number = launch.first_collective;
  for (const PendingOp& op : launch.ops) {
    if (op.desc.kind == kSend || op.desc.kind == kRecv) continue;
    if (!RunCollective(launch, op, number++, error)) return false;
  }
  return true;
}

}  // namespace ember::vgpu::nccl
