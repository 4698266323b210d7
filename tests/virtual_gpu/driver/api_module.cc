// Driver API: modules from PTX (a cubin or fatbin is refused with a message saying why), module
// variables, functions, function attributes and occupancy.
#include <cuda.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "tests/virtual_gpu/driver/driver_state.h"
#include "tests/virtual_gpu/driver/errors.h"

using ember::vgpu::Allocation;
using ember::vgpu::CurrentContext;
using ember::vgpu::Driver;
using ember::vgpu::Fail;

namespace {

constexpr int kMaxSupportedPtxVersion = 90;  // the driver of CUDA 13.0 reads PTX ISA up to 9.0

CUresult CheckFunction(CUfunction f, const char* call) {
  if (f == nullptr || f->module == nullptr || !ember::vgpu::ValidModule(f->module)) {
    return Fail(CUDA_ERROR_INVALID_HANDLE, absl::StrCat(call, ": not a live function"));
  }
  return CUDA_SUCCESS;
}

void WriteLog(void* buffer, size_t capacity, const std::string& text) {
  if (buffer == nullptr || capacity == 0) return;
  const size_t n = std::min(capacity - 1, text.size());
  std::memcpy(buffer, text.data(), n);
  static_cast<char*>(buffer)[n] = '\0';
}

CUresult Load(CUmodule* module, const void* image, const std::string& error_prefix,
              std::string* log) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  if (module == nullptr || image == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null argument");
  const unsigned char* bytes = static_cast<const unsigned char*>(image);
  if (std::memcmp(bytes, "\x7f" "ELF", 4) == 0) {
    *log = "the image is a cubin (ELF): the virtual GPU interprets PTX only, so load the PTX "
           "text instead (for example what nvrtcGetPTX or LLVM's NVPTX backend produces)";
    return Fail(CUDA_ERROR_INVALID_IMAGE, *log);
  }
  const uint32_t magic = uint32_t{bytes[0]} | uint32_t{bytes[1]} << 8 | uint32_t{bytes[2]} << 16 |
                         uint32_t{bytes[3]} << 24;
  if (magic == 0xba55ed50u || magic == 0x466243b1u) {
    *log = "the image is a fatbinary: the virtual GPU interprets PTX only, so load the PTX text";
    return Fail(CUDA_ERROR_INVALID_IMAGE, *log);
  }
  const std::string text(static_cast<const char*>(image));
  absl::StatusOr<std::shared_ptr<const ember::vgpu::ModuleImage>> loaded =
      ember::vgpu::LoadModuleImage(text);
  if (!loaded.ok()) {
    *log = absl::StrCat(error_prefix, loaded.status().message());
    return Fail(CUDA_ERROR_INVALID_PTX, *log);
  }
  const ember::vgpu::ModuleImage& m = **loaded;
  Driver& d = Driver::Get();
  const ember::vgpu::DeviceModel& model = d.model(ctx->device);
  const int device_sm = model.cc_major * 10 + model.cc_minor;
  if (m.ptx_version > kMaxSupportedPtxVersion) {
    *log = absl::StrCat("PTX ISA ", m.ptx_version / 10, ".", m.ptx_version % 10,
                        " is newer than this driver (CUDA 13.0) reads");
    return Fail(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, *log);
  }
  if (m.target_sm > device_sm || (m.arch_specific && m.target_sm != device_sm)) {
    *log = absl::StrCat("the module targets ", m.ast.target, " but device ", ctx->device, " is sm_",
                        device_sm, " (", model.short_name, ")");
    return Fail(CUDA_ERROR_INVALID_PTX, *log);
  }
  auto owned = std::make_unique<CUmod_st>();
  owned->ctx = ctx;
  owned->image = *loaded;
  for (const ember::vgpu::ptx::Variable& v : m.ast.globals) {
    if (v.space != ember::vgpu::ptx::Space::kGlobal && v.space != ember::vgpu::ptx::Space::kConst) continue;
    if (v.is_extern) {
      *log = absl::StrCat("line ", v.line, ": .extern variable '", v.name,
                          "' needs linking, which the virtual GPU does not do");
      return Fail(CUDA_ERROR_INVALID_PTX, *log);
    }
    const Allocation::Kind kind = v.space == ember::vgpu::ptx::Space::kConst
                                      ? Allocation::Kind::kModuleConst
                                      : Allocation::Kind::kModuleGlobal;
    absl::StatusOr<std::shared_ptr<Allocation>> a =
        d.memory.AllocateDevice(ctx->device, std::max<int64_t>(v.size_bytes(), 1), kind, v.name);
    if (!a.ok()) return Fail(CUDA_ERROR_OUT_OF_MEMORY, std::string(a.status().message()));
    std::memset((*a)->host, 0, (*a)->size);  // module variables start zeroed or initialized
    std::memcpy((*a)->host, v.init.data(), std::min<size_t>(v.init.size(), (*a)->size));
    owned->globals[v.name] = *a;
  }
  absl::MutexLock lock(&d.mu);
  CUmod_st* raw = owned.release();  // owned by the handle until cuModuleUnload
  d.modules.insert(raw);
  *module = raw;
  return CUDA_SUCCESS;
}

int Occupancy(const CUfunc_st& f, const ember::vgpu::DeviceModel& m, int block_size,
              size_t dynamic_shared) {
  if (block_size <= 0) return 0;
  const int warps = (block_size + 31) / 32;
  int blocks = std::min(m.max_blocks_per_sm, m.max_threads_per_sm / (warps * 32));
  const int registers = std::max(32, std::min(f.program->registers, 255));
  const int per_warp = (registers * 32 + 255) / 256 * 256;
  blocks = std::min(blocks, m.registers_per_sm / (per_warp * warps));
  const size_t shared = f.program->static_shared_bytes + dynamic_shared;
  if (shared > 0) {
    blocks = std::min<int>(blocks, static_cast<int>(m.shared_per_sm / (shared + m.reserved_shared_per_block)));
  }
  return std::max(blocks, 0);
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuModuleLoadData(CUmodule* module, const void* image) {
  std::string log;
  return Load(module, image, "", &log);
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int num_options,
                                    CUjit_option* options, void** values) {
  std::string log;
  const CUresult r = Load(module, image, "", &log);
  void* error_buffer = nullptr;
  size_t error_size = 0;
  for (unsigned int i = 0; i < num_options && options != nullptr && values != nullptr; ++i) {
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER) error_buffer = values[i];
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) error_size = reinterpret_cast<uintptr_t>(values[i]);
  }
  if (r != CUDA_SUCCESS) WriteLog(error_buffer, error_size, log);
  return r;
}

CUresult CUDAAPI cuModuleLoad(CUmodule* module, const char* path) {
  if (CUresult r = ember::vgpu::Enter(); r != CUDA_SUCCESS) return r;
  if (path == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null path");
  std::ifstream file(path, std::ios::binary);
  if (!file) return Fail(CUDA_ERROR_FILE_NOT_FOUND, absl::StrCat("cannot open ", path));
  std::stringstream content;
  content << file.rdbuf();
  std::string text = content.str();
  std::string log;
  return Load(module, text.c_str(), "", &log);
}

CUresult CUDAAPI cuModuleUnload(CUmodule module) {
  if (CUresult r = ember::vgpu::Enter(); r != CUDA_SUCCESS) return r;
  Driver& d = Driver::Get();
  std::unique_ptr<CUmod_st> owned;
  {
    absl::MutexLock lock(&d.mu);
    if (module == nullptr || d.modules.erase(module) == 0) {
      return Fail(CUDA_ERROR_INVALID_HANDLE, "cuModuleUnload: not a live module");
    }
    owned.reset(module);
  }
  for (auto& [name, global] : owned->globals) d.memory.Remove(global->base, global->kind).IgnoreError();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  if (function == nullptr || name == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null argument");
  if (module == nullptr || !ember::vgpu::ValidModule(module)) {
    return Fail(CUDA_ERROR_INVALID_HANDLE, "cuModuleGetFunction: not a live module");
  }
  auto it = module->image->kernels.find(name);
  if (it == module->image->kernels.end()) {
    return Fail(CUDA_ERROR_NOT_FOUND, absl::StrCat("the module has no kernel named '", name, "'"));
  }
  Driver& d = Driver::Get();
  absl::MutexLock lock(&d.mu);
  std::unique_ptr<CUfunc_st>& f = module->functions[name];
  if (f == nullptr) {
    f = std::make_unique<CUfunc_st>();
    f->module = module;
    f->name = name;
    f->program = it->second;
    f->constants = f->program->constants;
    for (const ember::vgpu::ptx::Relocation& r : f->program->relocations) {
      auto global = module->globals.find(r.symbol);
      if (global == module->globals.end()) {
        return Fail(CUDA_ERROR_INVALID_PTX, absl::StrCat("kernel '", name, "' refers to '", r.symbol,
                                                         "', which the module does not define"));
      }
      f->constants[r.constant_index] = global->second->base + static_cast<uint64_t>(r.offset);
    }
    f->max_dynamic_shared = d.model(ctx->device).shared_per_block -
                            static_cast<int>(f->program->static_shared_bytes);
  }
  *function = f.get();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUmodule module, const char* name) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  if (name == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null name");
  if (module == nullptr || !ember::vgpu::ValidModule(module)) {
    return Fail(CUDA_ERROR_INVALID_HANDLE, "cuModuleGetGlobal: not a live module");
  }
  auto it = module->globals.find(name);
  if (it == module->globals.end()) {
    return Fail(CUDA_ERROR_NOT_FOUND, absl::StrCat("the module has no .global/.const variable '", name, "'"));
  }
  if (dptr) *dptr = it->second->base;
  if (bytes) *bytes = it->second->size;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetAttribute(int* value, CUfunction_attribute attribute, CUfunction f) {
  if (CUresult r = ember::vgpu::Enter(); r != CUDA_SUCCESS) return r;
  if (CUresult r = CheckFunction(f, "cuFuncGetAttribute"); r != CUDA_SUCCESS) return r;
  if (value == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null value");
  const ember::vgpu::ptx::KernelProgram& p = *f->program;
  const ember::vgpu::DeviceModel& m = Driver::Get().model(f->module->ctx->device);
  switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: {
      int limit = m.max_threads_per_block;
      if (p.maxntid[0] > 0) limit = std::min(limit, p.maxntid[0] * p.maxntid[1] * p.maxntid[2]);
      if (p.reqntid[0] > 0) limit = std::min(limit, p.reqntid[0] * p.reqntid[1] * p.reqntid[2]);
      *value = limit;
      return CUDA_SUCCESS;
    }
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *value = static_cast<int>(p.static_shared_bytes); return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: {
      size_t bytes = 0;
      for (const auto& [name, g] : f->module->globals) {
        if (g->kind == Allocation::Kind::kModuleConst) bytes += g->size;
      }
      *value = static_cast<int>(bytes);
      return CUDA_SUCCESS;
    }
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *value = static_cast<int>(p.local_bytes); return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_NUM_REGS:
      // Declared (virtual) PTX registers: ptxas would allocate fewer.
      *value = std::min(p.registers, 255);
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: *value = f->module->image->ptx_version; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *value = m.cc_major * 10 + m.cc_minor; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: *value = 0; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *value = f->max_dynamic_shared; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *value = f->carveout; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
      *value = 0;
      return CUDA_SUCCESS;
    default:
      return Fail(CUDA_ERROR_INVALID_VALUE,
                  absl::StrCat("function attribute ", static_cast<int>(attribute), " is not modelled"));
  }
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction f, CUfunction_attribute attribute, int value) {
  if (CUresult r = ember::vgpu::Enter(); r != CUDA_SUCCESS) return r;
  if (CUresult r = CheckFunction(f, "cuFuncSetAttribute"); r != CUDA_SUCCESS) return r;
  const ember::vgpu::DeviceModel& m = Driver::Get().model(f->module->ctx->device);
  switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: {
      const int limit = m.shared_per_block_optin - static_cast<int>(f->program->static_shared_bytes);
      if (value < 0 || value > limit) {
        return Fail(CUDA_ERROR_INVALID_VALUE,
                    absl::StrCat("cuFuncSetAttribute: ", value, " bytes of dynamic shared memory; ",
                                 m.short_name, " allows at most ", limit, " for '", f->name, "'"));
      }
      f->max_dynamic_shared = value;
      return CUDA_SUCCESS;
    }
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
      if (value < -1 || value > 100) return Fail(CUDA_ERROR_INVALID_VALUE, "carveout out of range");
      f->carveout = value;
      return CUDA_SUCCESS;
    default:
      return Fail(CUDA_ERROR_INVALID_VALUE,
                  absl::StrCat("function attribute ", static_cast<int>(attribute), " cannot be set"));
  }
}

CUresult CUDAAPI cuFuncSetCacheConfig(CUfunction f, CUfunc_cache config) {
  if (CUresult r = ember::vgpu::Enter(); r != CUDA_SUCCESS) return r;
  (void)config;  // a preference only
  return CheckFunction(f, "cuFuncSetCacheConfig");
}

CUresult CUDAAPI cuFuncGetName(const char** name, CUfunction f) {
  if (CUresult r = ember::vgpu::Enter(); r != CUDA_SUCCESS) return r;
  if (CUresult r = CheckFunction(f, "cuFuncGetName"); r != CUDA_SUCCESS) return r;
  if (name == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null name");
  *name = f->name.c_str();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, CUfunction f, int block_size,
                                                             size_t dynamic_shared) {
  if (CUresult r = ember::vgpu::Enter(); r != CUDA_SUCCESS) return r;
  if (CUresult r = CheckFunction(f, "cuOccupancyMaxActiveBlocksPerMultiprocessor"); r != CUDA_SUCCESS) return r;
  if (blocks == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null output");
  *blocks = Occupancy(*f, Driver::Get().model(f->module->ctx->device), block_size, dynamic_shared);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* blocks, CUfunction f,
                                                                      int block_size,
                                                                      size_t dynamic_shared,
                                                                      unsigned int flags) {
  (void)flags;
  return cuOccupancyMaxActiveBlocksPerMultiprocessor(blocks, f, block_size, dynamic_shared);
}

CUresult CUDAAPI cuOccupancyMaxPotentialBlockSize(int* min_grid_size, int* block_size, CUfunction f,
                                                  CUoccupancyB2DSize dynamic_shared_of_block,
                                                  size_t dynamic_shared, int block_size_limit) {
  if (CUresult r = ember::vgpu::Enter(); r != CUDA_SUCCESS) return r;
  if (CUresult r = CheckFunction(f, "cuOccupancyMaxPotentialBlockSize"); r != CUDA_SUCCESS) return r;
  if (min_grid_size == nullptr || block_size == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null output");
  const ember::vgpu::DeviceModel& m = Driver::Get().model(f->module->ctx->device);
  int limit = block_size_limit > 0 ? std::min(block_size_limit, 1024) : 1024;
  int best_size = 32, best_threads = 0;
  for (int size = 32; size <= limit; size += 32) {
    const size_t shared = dynamic_shared_of_block ? dynamic_shared_of_block(size) : dynamic_shared;
    const int threads = Occupancy(*f, m, size, shared) * size;
    if (threads >= best_threads) {
      best_threads = threads;
      best_size = size;
    }
  }
  *block_size = best_size;
  *min_grid_size = best_threads / best_size * m.sm_count;
  return CUDA_SUCCESS;
}

}  // extern "C"
