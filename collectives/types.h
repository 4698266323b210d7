// The vocabulary of collective operations, shaped like NCCL's: element types, reduction kinds,
// ranks and the cliques of devices that communicate. Nothing here knows programs or IR types;
// the compiler maps its element types and reduction regions onto these.
#ifndef EMBER_COLLECTIVES_TYPES_H_
#define EMBER_COLLECTIVES_TYPES_H_

#include <compare>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/hash/hash.h"

namespace ember::collectives {

// Element types a transport may move or reduce. Complex types reduce as complex numbers (a
// transport without complex reductions, like NCCL, sums them as pairs of reals); the f8 types
// are only moved.
enum class DataType {
  kPred, kS8, kU8, kS16, kU16, kS32, kU32, kS64, kU64,
  kF16, kBF16, kF32, kF64, kC64, kC128, kF8E4M3FN, kF8E5M2,
};
const char* DataTypeName(DataType type);
size_t DataTypeBytes(DataType type);

// How values combine. kAnd, kOr and kXor are bitwise on integers and logical on kPred.
enum class ReductionKind { kSum, kProduct, kMin, kMax, kAnd, kOr, kXor };
const char* ReductionKindName(ReductionKind kind);
// Whether `kind` is defined on `type` (bitwise kinds need integers or pred; min/max need an
// ordered type; nothing reduces f8).
bool IsValidReduction(ReductionKind kind, DataType type);

// A participant's position in its clique, 0..size-1. A type of its own so that ranks, device
// ids and counts cannot be mixed up.
struct RankId {
  int value = 0;
  constexpr RankId() = default;
  constexpr explicit RankId(int v) : value(v) {}
  auto operator<=>(const RankId&) const = default;
};

// The devices of one communicator: global device ids in rank order.
struct CliqueKey {
  std::vector<int64_t> devices;
  int size() const { return static_cast<int>(devices.size()); }
  std::string ToString() const;  // "devices [0,1,2,3]"
  bool operator==(const CliqueKey&) const = default;
  template <typename H>
  friend H AbslHashValue(H h, const CliqueKey& key) {
    return H::combine(std::move(h), key.devices);
  }
};

}  // namespace ember::collectives

#endif  // EMBER_COLLECTIVES_TYPES_H_
