// The virtual libcublasLt.so.13: the cuBLASLt calls a CUDA backend makes (handles, matmul
// descriptors and their attributes, matrix layouts with order/batch/strides, preferences, the
// heuristic, cublasLtMatmul), running each matmul on the stream of the virtual GPU when the stream
// reaches it (matmul_problem.h computes it). Argument problems are cuBLAS statuses at the call,
// with the reason on stderr and from ember_vgpu_cublaslt_last_error(); a matmul whose operands do
// not resolve to device memory at run time is a sticky illegal-address fault of the context.
#include <cublasLt.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "tests/virtual_gpu/cublaslt/matmul_problem.h"
#include "tests/virtual_gpu/driver/virtual_gpu_hooks.h"

using ember::vgpu::cublaslt::Layout;
using ember::vgpu::cublaslt::MatmulDesc;
using ember::vgpu::cublaslt::Operands;

struct cublasLtContext {
  int magic = 0x564c5420;  // "VLT "
};

namespace {

static_assert(sizeof(Layout) <= sizeof(cublasLtMatrixLayoutOpaque_t));
static_assert(sizeof(MatmulDesc) <= sizeof(cublasLtMatmulDescOpaque_t));

struct Preference {
  uint64_t max_workspace = 0;
};
static_assert(sizeof(Preference) <= sizeof(cublasLtMatmulPreferenceOpaque_t));

constexpr uint64_t kAlgoMagic = 0x5647505541470001ull;  // "VGPUAG" + version

thread_local std::string t_last_error;

cublasStatus_t Fail(cublasStatus_t status, const std::string& why) {
  t_last_error = why;
  std::fprintf(stderr, "ember virtual cuBLASLt: %s\n", why.c_str());
  return status;
}

Layout* AsLayout(cublasLtMatrixLayout_t l) { return reinterpret_cast<Layout*>(l); }
MatmulDesc* AsDesc(cublasLtMatmulDesc_t d) { return reinterpret_cast<MatmulDesc*>(d); }
Preference* AsPref(cublasLtMatmulPreference_t p) { return reinterpret_cast<Preference*>(p); }

// Reads or writes one attribute field with the size check cuBLASLt makes.
template <class T>
cublasStatus_t SetField(T* field, const void* buf, size_t size, const char* name) {
  if (buf == nullptr || size != sizeof(T)) {
    return Fail(CUBLAS_STATUS_INVALID_VALUE,
                absl::StrCat("attribute ", name, " takes ", sizeof(T), " bytes, got ", size));
  }
  std::memcpy(field, buf, sizeof(T));
  return CUBLAS_STATUS_SUCCESS;
}
template <class T>
cublasStatus_t GetField(const T& field, void* buf, size_t size, size_t* written) {
  if (written != nullptr) *written = sizeof(T);
  if (size == 0 && buf == nullptr) return CUBLAS_STATUS_SUCCESS;  // size query
  if (buf == nullptr || size < sizeof(T)) return Fail(CUBLAS_STATUS_INVALID_VALUE, "attribute buffer too small");
  std::memcpy(buf, &field, sizeof(T));
  return CUBLAS_STATUS_SUCCESS;
}

struct Job {
  int device;
  MatmulDesc desc;
  Layout a, b, c, d;
  Operands operands;
};

void RunJob(void* arg, int run) {
  std::unique_ptr<Job> job(static_cast<Job*>(arg));
  if (!run) return;  // the context faulted earlier: a GPU would not run it
  std::string why;
  if (!ember::vgpu::cublaslt::Compute(job->device, job->desc, job->a, job->b, job->c, job->d,
                                      job->operands, &why)) {
    ember_vgpu_fault(job->device, CUDA_ERROR_ILLEGAL_ADDRESS,
                     absl::StrCat("cublasLtMatmul: ", why).c_str());
  }
}

}  // namespace

extern "C" {

const char* ember_vgpu_cublaslt_last_error(void) { return t_last_error.c_str(); }

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  if (handle == nullptr) return Fail(CUBLAS_STATUS_INVALID_VALUE, "cublasLtCreate: null handle");
  *handle = std::make_unique<cublasLtContext>().release();  // cublasLtDestroy takes it back
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  if (handle == nullptr || handle->magic != 0x564c5420) {
    return Fail(CUBLAS_STATUS_NOT_INITIALIZED, "cublasLtDestroy: not a handle");
  }
  std::unique_ptr<cublasLtContext> owned(handle);
  return CUBLAS_STATUS_SUCCESS;
}

size_t cublasLtGetVersion(void) { return CUBLAS_VERSION; }
size_t cublasLtGetCudartVersion(void) { return 13000; }

cublasStatus_t cublasLtGetProperty(libraryPropertyType type, int* value) {
  if (value == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  switch (type) {
    case MAJOR_VERSION: *value = CUBLAS_VER_MAJOR; return CUBLAS_STATUS_SUCCESS;
    case MINOR_VERSION: *value = CUBLAS_VER_MINOR; return CUBLAS_STATUS_SUCCESS;
    case PATCH_LEVEL: *value = CUBLAS_VER_PATCH; return CUBLAS_STATUS_SUCCESS;
    default: return CUBLAS_STATUS_INVALID_VALUE;
  }
}

const char* cublasLtGetStatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "CUBLAS_STATUS_UNKNOWN";
  }
}

const char* cublasLtGetStatusString(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    default: return "unknown error";
  }
}

cublasStatus_t cublasLtMatrixLayoutInit_internal(cublasLtMatrixLayout_t layout, size_t size,
                                                 cudaDataType type, uint64_t rows, uint64_t cols,
                                                 int64_t ld) {
  if (layout == nullptr || size < sizeof(Layout)) return Fail(CUBLAS_STATUS_INVALID_VALUE, "layout storage too small");
  Layout l;
  l.type = type;
  l.rows = rows;
  l.cols = cols;
  l.ld = ld;
  std::memcpy(layout, &l, sizeof(l));
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld) {
  if (layout == nullptr) return Fail(CUBLAS_STATUS_INVALID_VALUE, "null layout");
  auto owned = std::make_unique<cublasLtMatrixLayoutOpaque_t>();
  cublasStatus_t s = cublasLtMatrixLayoutInit_internal(owned.get(), sizeof(*owned), type, rows, cols, ld);
  if (s != CUBLAS_STATUS_SUCCESS) return s;
  *layout = owned.release();  // cublasLtMatrixLayoutDestroy takes it back
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  std::unique_ptr<cublasLtMatrixLayoutOpaque_t> owned(layout);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout,
                                                cublasLtMatrixLayoutAttribute_t attr,
                                                const void* buf, size_t size) {
  if (layout == nullptr) return Fail(CUBLAS_STATUS_INVALID_VALUE, "null layout");
  Layout& l = *AsLayout(layout);
  switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE: {
      uint32_t t;
      cublasStatus_t s = SetField(&t, buf, size, "TYPE");
      if (s == CUBLAS_STATUS_SUCCESS) l.type = static_cast<cudaDataType_t>(t);
      return s;
    }
    case CUBLASLT_MATRIX_LAYOUT_ORDER: return SetField(&l.order, buf, size, "ORDER");
    case CUBLASLT_MATRIX_LAYOUT_ROWS: return SetField(&l.rows, buf, size, "ROWS");
    case CUBLASLT_MATRIX_LAYOUT_COLS: return SetField(&l.cols, buf, size, "COLS");
    case CUBLASLT_MATRIX_LAYOUT_LD: return SetField(&l.ld, buf, size, "LD");
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: return SetField(&l.batch_count, buf, size, "BATCH_COUNT");
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
      return SetField(&l.batch_stride, buf, size, "STRIDED_BATCH_OFFSET");
    default:
      return Fail(CUBLAS_STATUS_NOT_SUPPORTED, absl::StrCat("layout attribute ", static_cast<int>(attr), " is not modelled"));
  }
}

cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t layout,
                                                cublasLtMatrixLayoutAttribute_t attr, void* buf,
                                                size_t size, size_t* written) {
  if (layout == nullptr) return Fail(CUBLAS_STATUS_INVALID_VALUE, "null layout");
  const Layout& l = *AsLayout(layout);
  switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE: return GetField(static_cast<uint32_t>(l.type), buf, size, written);
    case CUBLASLT_MATRIX_LAYOUT_ORDER: return GetField(l.order, buf, size, written);
    case CUBLASLT_MATRIX_LAYOUT_ROWS: return GetField(l.rows, buf, size, written);
    case CUBLASLT_MATRIX_LAYOUT_COLS: return GetField(l.cols, buf, size, written);
    case CUBLASLT_MATRIX_LAYOUT_LD: return GetField(l.ld, buf, size, written);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: return GetField(l.batch_count, buf, size, written);
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: return GetField(l.batch_stride, buf, size, written);
    default: return Fail(CUBLAS_STATUS_NOT_SUPPORTED, "layout attribute not modelled");
  }
}

cublasStatus_t cublasLtMatmulDescInit_internal(cublasLtMatmulDesc_t desc, size_t size,
                                               cublasComputeType_t compute, cudaDataType_t scale) {
  if (desc == nullptr || size < sizeof(MatmulDesc)) return Fail(CUBLAS_STATUS_INVALID_VALUE, "descriptor storage too small");
  MatmulDesc d;
  d.compute = compute;
  d.scale = scale;
  std::memcpy(desc, &d, sizeof(d));
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute,
                                        cudaDataType_t scale) {
  if (desc == nullptr) return Fail(CUBLAS_STATUS_INVALID_VALUE, "null descriptor");
  auto owned = std::make_unique<cublasLtMatmulDescOpaque_t>();
  cublasStatus_t s = cublasLtMatmulDescInit_internal(owned.get(), sizeof(*owned), compute, scale);
  if (s != CUBLAS_STATUS_SUCCESS) return s;
  *desc = owned.release();  // cublasLtMatmulDescDestroy takes it back
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  std::unique_ptr<cublasLtMatmulDescOpaque_t> owned(desc);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                              cublasLtMatmulDescAttributes_t attr, const void* buf,
                                              size_t size) {
  if (desc == nullptr) return Fail(CUBLAS_STATUS_INVALID_VALUE, "null descriptor");
  MatmulDesc& d = *AsDesc(desc);
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: return SetField(&d.compute, buf, size, "COMPUTE_TYPE");
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE: return SetField(&d.scale, buf, size, "SCALE_TYPE");
    case CUBLASLT_MATMUL_DESC_POINTER_MODE: return SetField(&d.pointer_mode, buf, size, "POINTER_MODE");
    case CUBLASLT_MATMUL_DESC_TRANSA: return SetField(&d.transa, buf, size, "TRANSA");
    case CUBLASLT_MATMUL_DESC_TRANSB: return SetField(&d.transb, buf, size, "TRANSB");
    case CUBLASLT_MATMUL_DESC_TRANSC: return SetField(&d.transc, buf, size, "TRANSC");
    case CUBLASLT_MATMUL_DESC_EPILOGUE: return SetField(&d.epilogue, buf, size, "EPILOGUE");
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER: return SetField(&d.bias, buf, size, "BIAS_POINTER");
    case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE:
      return SetField(&d.bias_batch_stride, buf, size, "BIAS_BATCH_STRIDE");
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: return SetField(&d.bias_type, buf, size, "BIAS_DATA_TYPE");
    case CUBLASLT_MATMUL_DESC_FAST_ACCUM: return SetField(&d.fast_accum, buf, size, "FAST_ACCUM");
    case CUBLASLT_MATMUL_DESC_FILL_MODE: {
      int32_t ignored;
      return SetField(&ignored, buf, size, "FILL_MODE");
    }
    default:
      return Fail(CUBLAS_STATUS_NOT_SUPPORTED,
                  absl::StrCat("matmul attribute ", static_cast<int>(attr), " is not modelled"));
  }
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t desc,
                                              cublasLtMatmulDescAttributes_t attr, void* buf,
                                              size_t size, size_t* written) {
  if (desc == nullptr) return Fail(CUBLAS_STATUS_INVALID_VALUE, "null descriptor");
  const MatmulDesc& d = *AsDesc(desc);
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: return GetField(d.compute, buf, size, written);
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE: return GetField(d.scale, buf, size, written);
    case CUBLASLT_MATMUL_DESC_POINTER_MODE: return GetField(d.pointer_mode, buf, size, written);
    case CUBLASLT_MATMUL_DESC_TRANSA: return GetField(d.transa, buf, size, written);
    case CUBLASLT_MATMUL_DESC_TRANSB: return GetField(d.transb, buf, size, written);
    case CUBLASLT_MATMUL_DESC_TRANSC: return GetField(d.transc, buf, size, written);
    case CUBLASLT_MATMUL_DESC_EPILOGUE: return GetField(d.epilogue, buf, size, written);
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER: return GetField(d.bias, buf, size, written);
    default: return Fail(CUBLAS_STATUS_NOT_SUPPORTED, "matmul attribute not modelled");
  }
}

cublasStatus_t cublasLtMatmulPreferenceInit_internal(cublasLtMatmulPreference_t pref, size_t size) {
  if (pref == nullptr || size < sizeof(Preference)) return Fail(CUBLAS_STATUS_INVALID_VALUE, "preference storage too small");
  Preference p;
  std::memcpy(pref, &p, sizeof(p));
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  if (pref == nullptr) return Fail(CUBLAS_STATUS_INVALID_VALUE, "null preference");
  auto owned = std::make_unique<cublasLtMatmulPreferenceOpaque_t>();
  cublasLtMatmulPreferenceInit_internal(owned.get(), sizeof(*owned));
  *pref = owned.release();  // cublasLtMatmulPreferenceDestroy takes it back
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  std::unique_ptr<cublasLtMatmulPreferenceOpaque_t> owned(pref);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void* buf, size_t size) {
  if (pref == nullptr) return Fail(CUBLAS_STATUS_INVALID_VALUE, "null preference");
  switch (attr) {
    case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
      return SetField(&AsPref(pref)->max_workspace, buf, size, "MAX_WORKSPACE_BYTES");
    case CUBLASLT_MATMUL_PREF_SEARCH_MODE:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES: {
      uint32_t ignored;  // preferences only: every algorithm here needs no alignment
      return SetField(&ignored, buf, size, "preference");
    }
    default:
      return Fail(CUBLAS_STATUS_NOT_SUPPORTED, "preference attribute not modelled");
  }
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                              cublasLtMatmulPreference_t pref, int requested,
                                              cublasLtMatmulHeuristicResult_t results[],
                                              int* returned) {
  if (handle == nullptr) return Fail(CUBLAS_STATUS_NOT_INITIALIZED, "cublasLtMatmulAlgoGetHeuristic: no handle");
  if (desc == nullptr || a == nullptr || b == nullptr || c == nullptr || d == nullptr ||
      pref == nullptr || results == nullptr || returned == nullptr || requested <= 0) {
    return Fail(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatmulAlgoGetHeuristic: null or bad argument");
  }
  std::string why;
  cublasStatus_t s = ember::vgpu::cublaslt::Validate(*AsDesc(desc), *AsLayout(a), *AsLayout(b),
                                                      *AsLayout(c), *AsLayout(d), &why);
  if (s != CUBLAS_STATUS_SUCCESS) return Fail(s, absl::StrCat("cublasLtMatmulAlgoGetHeuristic: ", why));
  std::memset(&results[0], 0, sizeof(results[0]));
  results[0].algo.data[0] = kAlgoMagic;
  results[0].workspaceSize = 0;
  results[0].state = CUBLAS_STATUS_SUCCESS;
  results[0].wavesCount = 1.0f;
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
                              const void* a, cublasLtMatrixLayout_t adesc, const void* b,
                              cublasLtMatrixLayout_t bdesc, const void* beta, const void* c,
                              cublasLtMatrixLayout_t cdesc, void* d, cublasLtMatrixLayout_t ddesc,
                              const cublasLtMatmulAlgo_t* algo, void* workspace,
                              size_t workspace_size, cudaStream_t stream) {
  (void)workspace;
  (void)workspace_size;  // every algorithm here needs none
  if (handle == nullptr) return Fail(CUBLAS_STATUS_NOT_INITIALIZED, "cublasLtMatmul: no handle");
  if (desc == nullptr || adesc == nullptr || bdesc == nullptr || cdesc == nullptr || ddesc == nullptr ||
      alpha == nullptr || beta == nullptr) {
    return Fail(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatmul: null descriptor, alpha or beta");
  }
  if (algo != nullptr && algo->data[0] != kAlgoMagic) {
    return Fail(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatmul: the algorithm does not come from this library's heuristic");
  }
  auto job = std::make_unique<Job>();
  job->desc = *AsDesc(desc);
  job->a = *AsLayout(adesc);
  job->b = *AsLayout(bdesc);
  job->c = *AsLayout(cdesc);
  job->d = *AsLayout(ddesc);
  std::string why;
  cublasStatus_t s = ember::vgpu::cublaslt::Validate(job->desc, job->a, job->b, job->c, job->d, &why);
  if (s != CUBLAS_STATUS_SUCCESS) return Fail(s, absl::StrCat("cublasLtMatmul: ", why));
  if (ember_vgpu_stream_device(stream, &job->device) != CUDA_SUCCESS) {
    return Fail(CUBLAS_STATUS_EXECUTION_FAILED, "cublasLtMatmul: no usable stream or current context");
  }
  const int scale_size = ember::vgpu::cublaslt::TypeSize(job->desc.scale);
  if (job->desc.pointer_mode == CUBLASLT_POINTER_MODE_HOST) {
    std::memcpy(job->operands.alpha, alpha, scale_size);
    std::memcpy(job->operands.beta, beta, scale_size);
  } else {
    job->operands.alpha_address = reinterpret_cast<uintptr_t>(alpha);
    job->operands.beta_address = reinterpret_cast<uintptr_t>(beta);
  }
  job->operands.a = reinterpret_cast<uintptr_t>(a);
  job->operands.b = reinterpret_cast<uintptr_t>(b);
  job->operands.c = reinterpret_cast<uintptr_t>(c);
  job->operands.d = reinterpret_cast<uintptr_t>(d);
  Job* raw = job.release();  // RunJob owns it
  if (ember_vgpu_stream_enqueue(stream, &RunJob, raw) != CUDA_SUCCESS) {
    std::unique_ptr<Job> reclaimed(raw);
    return Fail(CUBLAS_STATUS_EXECUTION_FAILED, "cublasLtMatmul: the stream refused the work (a faulted context?)");
  }
  return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
