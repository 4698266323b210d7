#include "compiler/host/host_runner.h"

#include <cstring>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/host/host_thunks.h"

namespace ember::host {

absl::Status RunOnHostInPlace(const backend::Executable& executable,
                              absl::Span<const void* const> arguments,
                              absl::Span<void* const> results,
                              absl::Span<const uint64_t> result_bytes) {
  const backend::BufferLayout& layout = executable.layout();
  if (arguments.size() != layout.parameter_types.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the program takes ", layout.parameter_types.size(),
                                                   " arguments, got ", arguments.size()));
  }
  if (results.size() != layout.result_types.size() || result_bytes.size() != results.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the program returns ", layout.result_types.size(),
                                                   " results, got room for ", results.size()));
  }
  const auto* top = dynamic_cast<const HostThunk*>(&executable.thunks());
  if (top == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("a ", executable.backend(),
                                                   " executable does not run on the host"));
  }
  std::vector<se::DeviceMemory> allocations;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const ir::ValueType& type = layout.parameter_types[i];
    allocations.push_back(se::DeviceMemory{const_cast<void*>(arguments[i]),
                                           type.is_tensor() ? uint64_t(type.shape().ByteSize()) : 0});
  }
  for (size_t r = 0; r < results.size(); ++r) {
    const ir::ValueType& type = layout.result_types[r];
    const uint64_t want = type.is_tensor() ? uint64_t(type.shape().ByteSize()) : 0;
    if (result_bytes[r] != want) {
      return absl::InvalidArgumentError(absl::StrCat("result ", r, " (", type.ToString(), ") needs ",
                                                     want, " bytes, got ", result_bytes[r]));
    }
    allocations.push_back(se::DeviceMemory{results[r], result_bytes[r]});
  }
  std::unique_ptr<uint64_t[]> arena;
  if (layout.temp_bytes > 0) {
    // 64-byte aligned, as device allocations are.
    const size_t words = static_cast<size_t>(layout.temp_bytes / 8 + 16);
    arena.reset(new uint64_t[words]);
    auto base = (reinterpret_cast<uintptr_t>(arena.get()) + 63) / 64 * 64;
    allocations.push_back(se::DeviceMemory{reinterpret_cast<void*>(base),
                                           static_cast<uint64_t>(layout.temp_bytes)});
  }
  backend::BufferAllocations buffers(std::move(allocations));
  HostRunContext context(buffers, nullptr, top->num_other_values());
  return top->Run(context);
}

absl::StatusOr<std::vector<eval::EvalValue>> RunOnHost(const backend::Executable& executable,
                                                       std::vector<eval::EvalValue> arguments) {
  const backend::BufferLayout& layout = executable.layout();
  std::vector<const void*> args;
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i].kind != eval::EvalValue::Kind::kArray) {
      return absl::InvalidArgumentError(absl::StrCat("argument ", i, " is not an array"));
    }
    if (i < layout.parameter_types.size() &&
        !(arguments[i].array.shape() == layout.parameter_types[i].shape())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument ", i, " is ", arguments[i].array.shape().ToString(), ", the program takes ",
          layout.parameter_types[i].ToString()));
    }
    args.push_back(arguments[i].array.bytes().data());
  }
  std::vector<ir::Literal> outputs;
  std::vector<void*> out;
  std::vector<uint64_t> sizes;
  for (const ir::ValueType& type : layout.result_types) {
    if (!type.is_tensor()) {
      return absl::UnimplementedError(absl::StrCat("results of type ", type.ToString()));
    }
    EMBER_ASSIGN_OR_RETURN(ir::Literal literal, ir::Literal::Create(type.shape()));
    outputs.push_back(std::move(literal));
  }
  for (ir::Literal& literal : outputs) {
    out.push_back(literal.mutable_bytes().data());
    sizes.push_back(literal.bytes().size());
  }
  EMBER_RETURN_IF_ERROR(RunOnHostInPlace(executable, args, out, sizes));
  std::vector<eval::EvalValue> values;
  for (ir::Literal& literal : outputs) values.push_back(eval::EvalValue::Array(std::move(literal)));
  return values;
}

}  // namespace ember::host
