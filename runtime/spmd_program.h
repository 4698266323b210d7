// SPMD programs on host devices. JAX sends one global program with Shardy annotations
// (`sdy.sharding` on entry arguments and results, `sdy.mesh` at module level, and
// `sdy.manual_computation` for shard_map bodies) and hands Execute one shard per device. Rather
// than partitioning the program, Ember assembles the global arguments from the shards, runs the
// global program once, and cuts the results into shards. A manual computation runs its body once
// per device on that device's slices of the operands (with collectives among the devices) and
// its results are assembled back into global values.
#ifndef EMBER_RUNTIME_SPMD_PROGRAM_H_
#define EMBER_RUNTIME_SPMD_PROGRAM_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collectives/in_process/in_process_collectives.h"
#include "compiler/driver/compile_program.h"
#include "compiler/host/host_executable.h"
#include "compiler/ir/literal.h"
#include "compiler/ir/mesh.h"

namespace ember::runtime {

// A Shardy mesh: axis names and sizes, and optionally the logical device ids in mesh order.
using SdyMesh = ir::Mesh;
using ir::ParseSdyMesh;

// A tensor's sharding: for each dimension, the mesh axes it is split over (major first).
struct SdySharding {
  std::string mesh;
  std::vector<std::vector<std::string>> dims;
};

// Parsers for the printed attributes the importer keeps ("#sdy.sharding<@mesh, [{"x"}, {}]>",
// lists of those, manual axes; meshes: ir::ParseSdyMesh).
absl::StatusOr<SdySharding> ParseSdySharding(const std::string& text);
absl::StatusOr<std::vector<SdySharding>> ParseSdyShardingList(const std::string& text);
std::vector<std::string> ParseQuotedNames(const std::string& text);
// A GSPMD `mhlo.sharding` string ("{devices=[2,1,2]<=[4] last_tile_dim_replicate}") as an
// equivalent mesh (one axis per tile dimension, named "_tile<i>", devices in tile order) and
// sharding over it; nullopt for "{replicated}".
absl::StatusOr<std::optional<std::pair<SdyMesh, SdySharding>>> ParseGspmdSharding(
    const std::string& text, int64_t rank);

// The shard of `global` that device `id` holds, and the inverse.
absl::StatusOr<std::vector<int64_t>> ShardDims(absl::Span<const int64_t> global_dims,
                                               const SdySharding& sharding, const SdyMesh& mesh);
absl::StatusOr<ir::Literal> ExtractShard(const ir::Literal& global, const SdySharding& sharding,
                                         const SdyMesh& mesh, int64_t id);
absl::Status InsertShard(const ir::Literal& shard, const SdySharding& sharding,
                         const SdyMesh& mesh, int64_t id, ir::Literal& global);

class SpmdProgram {
 public:
  // Reads the shardings of `program`'s entry and prepares its manual computations (adding
  // stage functions to its module). `device_ids` are the partitions' global device ids.
  static absl::StatusOr<std::unique_ptr<SpmdProgram>> Create(compiler::CompiledProgram& program,
                                                             std::vector<int64_t> device_ids);
  ~SpmdProgram();

  const std::vector<ir::ValueType>& shard_parameter_types() const { return shard_params_; }
  const std::vector<ir::ValueType>& shard_result_types() const { return shard_results_; }

  // The entry's argument / result shardings as GSPMD strings over the partitions
  // ("{replicated}", "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}").
  std::vector<std::string> ParameterShardingStrings() const;
  std::vector<std::string> ResultShardingStrings() const;
  // An MLIR module with the entry's signature and those shardings as `mhlo.sharding`
  // attributes (its body returns zeros): what PJRT_Executable_OptimizedProgram reports, so the
  // framework learns the shardings of parameters and results.
  std::string SignatureModuleText(const std::string& name) const;

  // shards[d][i]: device d's shard of parameter i. Returns results[d][r]. `external_calls`: the
  // launch's run-time custom-call targets (FFI handlers, host callbacks).
  absl::StatusOr<std::vector<std::vector<ir::Literal>>> Run(
      std::vector<std::vector<ir::Literal>> shards, collectives::InProcessCollectives& hub,
      uint64_t run_id, eval::ExternalCalls* external_calls = nullptr) const;

  struct Step;

 private:
  SpmdProgram() = default;
  absl::StatusOr<const SdyMesh*> MeshOf(const SdySharding& sharding) const;

  const compiler::CompiledProgram* program_ = nullptr;
  std::vector<int64_t> device_ids_;
  std::vector<std::pair<std::string, SdyMesh>> meshes_;
  std::vector<std::optional<SdySharding>> param_shardings_;   // nullopt: replicated
  std::vector<std::optional<SdySharding>> result_shardings_;  // nullopt: replicated
  std::vector<ir::ValueType> shard_params_;
  std::vector<ir::ValueType> shard_results_;
  std::vector<std::unique_ptr<Step>> steps_;  // empty: run the entry as it is
};

}  // namespace ember::runtime

#endif  // EMBER_RUNTIME_SPMD_PROGRAM_H_
