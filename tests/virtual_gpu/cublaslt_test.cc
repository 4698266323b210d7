// The virtual cuBLASLt against a reference matmul written here: layouts (column/row major,
// padded leading dimensions, strided batches), transposes, types (f32, tf32 compute, f16, bf16,
// f64, complex f32, int8 -> int32), alpha/beta (beta = 0 never reads C), bias/ReLU/GELU
// epilogues, device pointer mode, and its errors: bad shapes and unsupported types at the call,
// operands that are not device memory as a sticky fault when the stream runs the matmul.
#include <cublasLt.h>

#include <cmath>
#include <complex>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/virtual_gpu/reference_math.h"
#include "tests/virtual_gpu/vgpu_test_util.h"

extern "C" const char* ember_vgpu_cublaslt_last_error(void);

namespace ember::vgpu::testing {
namespace {

using ::testing::HasSubstr;

// A host matrix of doubles with its layout; Index() follows the order.
struct Matrix {
  uint64_t rows, cols;
  int64_t ld;
  bool row_major = false;
  std::vector<double> values;  // indexed as stored (ld-strided), padding included
  double& at(uint64_t r, uint64_t c) { return values[row_major ? r * ld + c : c * ld + r]; }
  double at(uint64_t r, uint64_t c) const { return values[row_major ? r * ld + c : c * ld + r]; }
};

Matrix RandomMatrix(std::mt19937& rng, uint64_t rows, uint64_t cols, int64_t ld, bool row_major,
                    double lo = -2, double hi = 2) {
  std::uniform_real_distribution<double> dist(lo, hi);
  Matrix m{rows, cols, ld, row_major, {}};
  m.values.resize((row_major ? rows : cols) * ld);
  for (double& v : m.values) v = dist(rng);
  return m;
}

double Tf32(double v) {
  // Round to 10 fraction bits, ties away from zero (cvt.rna.tf32.f32).
  int e = 0;
  const double f = std::frexp(v, &e);
  const double scaled = std::ldexp(f, 11);
  return std::ldexp(std::round(scaled), e - 11);
}

class CublasLtTest : public VirtualGpuTest {
 protected:
  void SetUp() override {
    VirtualGpuTest::SetUp();
    ASSERT_EQ(cublasLtCreate(&handle_), CUBLAS_STATUS_SUCCESS);
  }
  void TearDown() override {
    EXPECT_EQ(cublasLtDestroy(handle_), CUBLAS_STATUS_SUCCESS);
    VirtualGpuTest::TearDown();
  }

  // Uploads a matrix converted to `type`.
  CUdeviceptr UploadAs(const Matrix& m, cudaDataType_t type) {
    std::vector<uint8_t> bytes;
    for (double v : m.values) Append(&bytes, type, v);
    return Upload(bytes);
  }
  static void Append(std::vector<uint8_t>* bytes, cudaDataType_t type, double v) {
    auto push = [&](const void* p, size_t n) {
      const uint8_t* b = static_cast<const uint8_t*>(p);
      bytes->insert(bytes->end(), b, b + n);
    };
    switch (type) {
      case CUDA_R_32F: { float f = static_cast<float>(v); push(&f, 4); break; }
      case CUDA_R_64F: push(&v, 8); break;
      case CUDA_R_16F: { uint16_t h = RefToF16(v); push(&h, 2); break; }
      case CUDA_R_16BF: { uint16_t h = RefToBF16(v); push(&h, 2); break; }
      case CUDA_R_8I: { int8_t i = static_cast<int8_t>(v); push(&i, 1); break; }
      default: break;
    }
  }
  // The values a device matrix of `type` holds, as doubles.
  static double Stored(cudaDataType_t type, double v) {
    switch (type) {
      case CUDA_R_32F: return static_cast<float>(v);
      case CUDA_R_16F: return RefFromF16(RefToF16(v));
      case CUDA_R_16BF: return RefFromBF16(RefToBF16(v));
      case CUDA_R_8I: return static_cast<int8_t>(v);
      default: return v;
    }
  }

  cublasLtMatrixLayout_t MakeLayout(const Matrix& m, cudaDataType_t type, int batch = 1, int64_t stride = 0) {
    cublasLtMatrixLayout_t l = nullptr;
    EXPECT_EQ(cublasLtMatrixLayoutCreate(&l, type, m.rows, m.cols, m.ld), CUBLAS_STATUS_SUCCESS);
    const int32_t order = m.row_major ? CUBLASLT_ORDER_ROW : CUBLASLT_ORDER_COL;
    EXPECT_EQ(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof(order)), CUBLAS_STATUS_SUCCESS);
    if (batch > 1) {
      EXPECT_EQ(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)), CUBLAS_STATUS_SUCCESS);
      EXPECT_EQ(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)), CUBLAS_STATUS_SUCCESS);
    }
    layouts_.push_back(l);
    return l;
  }
  cublasLtMatmulDesc_t MakeDesc(cublasComputeType_t compute, cudaDataType_t scale, cublasOperation_t ta,
                                cublasOperation_t tb) {
    cublasLtMatmulDesc_t d = nullptr;
    EXPECT_EQ(cublasLtMatmulDescCreate(&d, compute, scale), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)), CUBLAS_STATUS_SUCCESS);
    descs_.push_back(d);
    return d;
  }
  void FreeDescriptors() {
    for (auto l : layouts_) EXPECT_EQ(cublasLtMatrixLayoutDestroy(l), CUBLAS_STATUS_SUCCESS);
    for (auto d : descs_) EXPECT_EQ(cublasLtMatmulDescDestroy(d), CUBLAS_STATUS_SUCCESS);
    layouts_.clear();
    descs_.clear();
  }

  // Runs one matmul through the heuristic and cublasLtMatmul on the legacy stream.
  cublasStatus_t Matmul(cublasLtMatmulDesc_t desc, const void* alpha, CUdeviceptr a, cublasLtMatrixLayout_t al,
                        CUdeviceptr b, cublasLtMatrixLayout_t bl, const void* beta, CUdeviceptr c,
                        cublasLtMatrixLayout_t cl, CUdeviceptr d, cublasLtMatrixLayout_t dl) {
    cublasLtMatmulPreference_t pref = nullptr;
    EXPECT_EQ(cublasLtMatmulPreferenceCreate(&pref), CUBLAS_STATUS_SUCCESS);
    uint64_t workspace = 1 << 20;
    EXPECT_EQ(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace)), CUBLAS_STATUS_SUCCESS);
    cublasLtMatmulHeuristicResult_t result = {};
    int count = 0;
    cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(handle_, desc, al, bl, cl, dl, pref, 1, &result, &count);
    EXPECT_EQ(cublasLtMatmulPreferenceDestroy(pref), CUBLAS_STATUS_SUCCESS);
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    EXPECT_EQ(count, 1);
    return cublasLtMatmul(handle_, desc, alpha, reinterpret_cast<void*>(a), al, reinterpret_cast<void*>(b), bl,
                          beta, reinterpret_cast<void*>(c), cl, reinterpret_cast<void*>(d), dl, &result.algo,
                          nullptr, 0, nullptr);
  }

  // alpha * op(A) op(B) + beta * C with inputs as stored in their types.
  static double Reference(const Matrix& a, cudaDataType_t at, bool ta, const Matrix& b, cudaDataType_t bt, bool tb,
                          uint64_t i, uint64_t j, uint64_t k, bool tf32 = false) {
    double acc = 0;
    for (uint64_t p = 0; p < k; ++p) {
      double x = Stored(at, ta ? a.at(p, i) : a.at(i, p));
      double y = Stored(bt, tb ? b.at(j, p) : b.at(p, j));
      if (tf32) {
        x = Tf32(x);
        y = Tf32(y);
      }
      acc += x * y;
    }
    return acc;
  }

  cublasLtHandle_t handle_ = nullptr;
  std::vector<cublasLtMatrixLayout_t> layouts_;
  std::vector<cublasLtMatmulDesc_t> descs_;
  std::mt19937 rng_{99};
};

TEST_F(CublasLtTest, F32EveryTransposeAndOrderWithAlphaBeta) {
  const uint64_t m = 13, n = 7, k = 9;
  const float alpha = 1.5f, beta = -0.5f;
  for (int variant = 0; variant < 8; ++variant) {
    const bool ta = variant & 1, tb = variant & 2, row = variant & 4;
    SCOPED_TRACE(absl::StrCat("transa=", ta, " transb=", tb, " row_major=", row));
    Matrix a = ta ? RandomMatrix(rng_, k, m, (row ? m : k) + 3, row) : RandomMatrix(rng_, m, k, (row ? k : m) + 3, row);
    Matrix b = tb ? RandomMatrix(rng_, n, k, row ? k : n, row) : RandomMatrix(rng_, k, n, row ? n : k, row);
    Matrix c = RandomMatrix(rng_, m, n, row ? n : m, row);
    CUdeviceptr da = UploadAs(a, CUDA_R_32F), db = UploadAs(b, CUDA_R_32F), dc = UploadAs(c, CUDA_R_32F);
    CUdeviceptr dd = Alloc(c.values.size() * 4);
    cublasLtMatmulDesc_t desc = MakeDesc(CUBLAS_COMPUTE_32F, CUDA_R_32F, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                                         tb ? CUBLAS_OP_T : CUBLAS_OP_N);
    ASSERT_EQ(Matmul(desc, &alpha, da, MakeLayout(a, CUDA_R_32F), db, MakeLayout(b, CUDA_R_32F), &beta, dc,
                     MakeLayout(c, CUDA_R_32F), dd, MakeLayout(c, CUDA_R_32F)), CUBLAS_STATUS_SUCCESS)
        << ember_vgpu_cublaslt_last_error();
    EMBER_ASSERT_CU(cuCtxSynchronize());
    std::vector<float> out = Download<float>(dd, c.values.size());
    Matrix d = c;
    for (size_t i = 0; i < out.size(); ++i) d.values[i] = out[i];
    for (uint64_t i = 0; i < m; ++i) {
      for (uint64_t j = 0; j < n; ++j) {
        const double expected = alpha * Reference(a, CUDA_R_32F, ta, b, CUDA_R_32F, tb, i, j, k) +
                                beta * static_cast<float>(c.at(i, j));
        ASSERT_EQ(d.at(i, j), static_cast<float>(expected)) << i << "," << j;
      }
    }
    FreeDescriptors();
  }
}

TEST_F(CublasLtTest, StridedBatchesWithBiasReluAndGelu) {
  const uint64_t m = 6, n = 5, k = 4;
  const int batch = 3;
  const int64_t stride_a = m * k + 2, stride_b = k * n, stride_d = m * n + 1;
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<float> a(stride_a * batch), b(stride_b * batch), bias(m);
  for (float& v : a) v = static_cast<float>(dist(rng_));
  for (float& v : b) v = static_cast<float>(dist(rng_));
  for (float& v : bias) v = static_cast<float>(dist(rng_));
  CUdeviceptr da = Upload(a), db = Upload(b), dbias = Upload(bias), dd = Alloc(stride_d * batch * 4);
  for (uint32_t epilogue : {CUBLASLT_EPILOGUE_RELU_BIAS, CUBLASLT_EPILOGUE_GELU}) {
    Matrix am{m, k, static_cast<int64_t>(m), false, {}}, bm{k, n, static_cast<int64_t>(k), false, {}},
        dm{m, n, static_cast<int64_t>(m), false, {}};
    cublasLtMatmulDesc_t desc = MakeDesc(CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLAS_OP_N, CUBLAS_OP_N);
    ASSERT_EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &dbias, sizeof(dbias)), CUBLAS_STATUS_SUCCESS);
    const float alpha = 1.0f, beta = 0.0f;
    cublasLtMatrixLayout_t dl = MakeLayout(dm, CUDA_R_32F, batch, stride_d);
    ASSERT_EQ(Matmul(desc, &alpha, da, MakeLayout(am, CUDA_R_32F, batch, stride_a), db,
                     MakeLayout(bm, CUDA_R_32F, batch, stride_b), &beta, dd, dl, dd, dl), CUBLAS_STATUS_SUCCESS)
        << ember_vgpu_cublaslt_last_error();
    EMBER_ASSERT_CU(cuCtxSynchronize());
    std::vector<float> out = Download<float>(dd, stride_d * batch);
    for (int s = 0; s < batch; ++s) {
      for (uint64_t i = 0; i < m; ++i) {
        for (uint64_t j = 0; j < n; ++j) {
          double acc = 0;
          for (uint64_t p = 0; p < k; ++p) acc += double{a[s * stride_a + p * m + i]} * b[s * stride_b + j * k + p];
          double expected;
          if (epilogue == CUBLASLT_EPILOGUE_GELU) {
            expected = 0.5 * acc * (1.0 + std::tanh(0.7978845608028654 * (acc + 0.044715 * acc * acc * acc)));
          } else {
            expected = std::max(acc + bias[i], 0.0);
          }
          ASSERT_EQ(out[s * stride_d + j * m + i], static_cast<float>(expected)) << s << ":" << i << "," << j;
        }
      }
    }
    FreeDescriptors();
  }
}

TEST_F(CublasLtTest, HalfBfloat16AndTf32Inputs) {
  const uint64_t m = 8, n = 6, k = 10;
  struct Case {
    cudaDataType_t in, out;
    cublasComputeType_t compute;
  };
  for (const Case& c : {Case{CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F}, Case{CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F},
                        Case{CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F}, Case{CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32}}) {
    SCOPED_TRACE(absl::StrCat("in ", c.in, " out ", c.out, " compute ", c.compute));
    Matrix a = RandomMatrix(rng_, m, k, m, false), b = RandomMatrix(rng_, k, n, k, false);
    Matrix d{m, n, static_cast<int64_t>(m), false, std::vector<double>(m * n, 0.0)};
    CUdeviceptr da = UploadAs(a, c.in), db = UploadAs(b, c.in), dd = UploadAs(d, c.out);
    const float alpha = 1.0f, beta = 0.0f;
    cublasLtMatmulDesc_t desc = MakeDesc(c.compute, CUDA_R_32F, CUBLAS_OP_N, CUBLAS_OP_N);
    cublasLtMatrixLayout_t dl = MakeLayout(d, c.out);
    ASSERT_EQ(Matmul(desc, &alpha, da, MakeLayout(a, c.in), db, MakeLayout(b, c.in), &beta, dd, dl, dd, dl),
              CUBLAS_STATUS_SUCCESS) << ember_vgpu_cublaslt_last_error();
    EMBER_ASSERT_CU(cuCtxSynchronize());
    const int size = c.out == CUDA_R_32F ? 4 : 2;
    std::vector<uint8_t> raw = Download<uint8_t>(dd, m * n * size);
    for (uint64_t i = 0; i < m; ++i) {
      for (uint64_t j = 0; j < n; ++j) {
        const double expected = Reference(a, c.in, false, b, c.in, false, i, j, k,
                                          c.compute == CUBLAS_COMPUTE_32F_FAST_TF32);
        const size_t at = (j * m + i) * size;
        if (c.out == CUDA_R_32F) {
          float got;
          std::memcpy(&got, &raw[at], 4);
          ASSERT_EQ(got, static_cast<float>(expected)) << i << "," << j;
        } else {
          const uint16_t got = static_cast<uint16_t>(raw[at] | raw[at + 1] << 8);
          ASSERT_EQ(got, c.out == CUDA_R_16F ? RefToF16(expected) : RefToBF16(expected)) << i << "," << j;
        }
      }
    }
    FreeDescriptors();
  }
}

TEST_F(CublasLtTest, DoubleComplexAndInt8) {
  // f64, exact.
  const uint64_t m = 5, n = 4, k = 3;
  Matrix a = RandomMatrix(rng_, m, k, m, false), b = RandomMatrix(rng_, k, n, k, false);
  CUdeviceptr da = UploadAs(a, CUDA_R_64F), db = UploadAs(b, CUDA_R_64F), dd = Alloc(m * n * 8);
  const double alpha = 2.0, beta = 0.0;
  Matrix dm{m, n, static_cast<int64_t>(m), false, {}};
  cublasLtMatmulDesc_t desc = MakeDesc(CUBLAS_COMPUTE_64F, CUDA_R_64F, CUBLAS_OP_N, CUBLAS_OP_N);
  cublasLtMatrixLayout_t dl = MakeLayout(dm, CUDA_R_64F);
  ASSERT_EQ(Matmul(desc, &alpha, da, MakeLayout(a, CUDA_R_64F), db, MakeLayout(b, CUDA_R_64F), &beta, dd, dl, dd, dl),
            CUBLAS_STATUS_SUCCESS);
  EMBER_ASSERT_CU(cuCtxSynchronize());
  std::vector<double> out = Download<double>(dd, m * n);
  for (uint64_t i = 0; i < m; ++i) {
    for (uint64_t j = 0; j < n; ++j) EXPECT_EQ(out[j * m + i], 2.0 * Reference(a, CUDA_R_64F, false, b, CUDA_R_64F, false, i, j, k));
  }
  FreeDescriptors();

  // Complex f32 with A conjugate-transposed.
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<std::complex<float>> ca(k * m), cb(k * n);
  for (auto& v : ca) v = {dist(rng_), dist(rng_)};
  for (auto& v : cb) v = {dist(rng_), dist(rng_)};
  CUdeviceptr dca = Upload(ca), dcb = Upload(cb), dcd = Alloc(m * n * 8);
  const std::complex<float> calpha(1.0f, 0.5f), cbeta(0.0f, 0.0f);
  Matrix ak{k, m, static_cast<int64_t>(k), false, {}}, bk{k, n, static_cast<int64_t>(k), false, {}};
  cublasLtMatmulDesc_t cdesc = MakeDesc(CUBLAS_COMPUTE_32F, CUDA_C_32F, CUBLAS_OP_C, CUBLAS_OP_N);
  cublasLtMatrixLayout_t cdl = MakeLayout(dm, CUDA_C_32F);
  ASSERT_EQ(Matmul(cdesc, &calpha, dca, MakeLayout(ak, CUDA_C_32F), dcb, MakeLayout(bk, CUDA_C_32F), &cbeta, dcd,
                   cdl, dcd, cdl), CUBLAS_STATUS_SUCCESS) << ember_vgpu_cublaslt_last_error();
  EMBER_ASSERT_CU(cuCtxSynchronize());
  std::vector<std::complex<float>> cout = Download<std::complex<float>>(dcd, m * n);
  for (uint64_t i = 0; i < m; ++i) {
    for (uint64_t j = 0; j < n; ++j) {
      std::complex<double> acc = 0;
      for (uint64_t p = 0; p < k; ++p) {
        acc += std::conj(std::complex<double>(ca[i * k + p])) * std::complex<double>(cb[j * k + p]);
      }
      acc *= std::complex<double>(calpha);
      EXPECT_EQ(cout[j * m + i], std::complex<float>(static_cast<float>(acc.real()), static_cast<float>(acc.imag())));
    }
  }
  FreeDescriptors();

  // int8 x int8 -> int32 with an int32 scale.
  std::vector<int8_t> ia(m * k), ib(k * n);
  std::uniform_int_distribution<int> idist(-128, 127);
  for (auto& v : ia) v = static_cast<int8_t>(idist(rng_));
  for (auto& v : ib) v = static_cast<int8_t>(idist(rng_));
  CUdeviceptr dia = Upload(ia), dib = Upload(ib), did = Alloc(m * n * 4);
  const int32_t ialpha = 3, ibeta = 0;
  Matrix im{m, k, static_cast<int64_t>(m), false, {}}, ibm{k, n, static_cast<int64_t>(k), false, {}};
  cublasLtMatmulDesc_t idesc = MakeDesc(CUBLAS_COMPUTE_32I, CUDA_R_32I, CUBLAS_OP_N, CUBLAS_OP_N);
  cublasLtMatrixLayout_t idl = MakeLayout(dm, CUDA_R_32I);
  ASSERT_EQ(Matmul(idesc, &ialpha, dia, MakeLayout(im, CUDA_R_8I), dib, MakeLayout(ibm, CUDA_R_8I), &ibeta, did,
                   idl, did, idl), CUBLAS_STATUS_SUCCESS) << ember_vgpu_cublaslt_last_error();
  EMBER_ASSERT_CU(cuCtxSynchronize());
  std::vector<int32_t> iout = Download<int32_t>(did, m * n);
  for (uint64_t i = 0; i < m; ++i) {
    for (uint64_t j = 0; j < n; ++j) {
      int32_t acc = 0;
      for (uint64_t p = 0; p < k; ++p) acc += int32_t{ia[p * m + i]} * ib[j * k + p];
      EXPECT_EQ(iout[j * m + i], 3 * acc);
    }
  }
  FreeDescriptors();
}

TEST_F(CublasLtTest, BetaZeroNeverReadsCAndDevicePointerScalars) {
  const uint64_t m = 4, n = 4, k = 4;
  Matrix a = RandomMatrix(rng_, m, k, m, false), b = RandomMatrix(rng_, k, n, k, false);
  Matrix c{m, n, static_cast<int64_t>(m), false, std::vector<double>(m * n, std::nan(""))};
  CUdeviceptr da = UploadAs(a, CUDA_R_32F), db = UploadAs(b, CUDA_R_32F), dc = UploadAs(c, CUDA_R_32F);
  CUdeviceptr dd = Alloc(m * n * 4);
  CUdeviceptr scalars = Upload(std::vector<float>{0.5f, 0.0f});
  cublasLtMatmulDesc_t desc = MakeDesc(CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLAS_OP_N, CUBLAS_OP_N);
  const int32_t mode = CUBLASLT_POINTER_MODE_DEVICE;
  ASSERT_EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &mode, sizeof(mode)), CUBLAS_STATUS_SUCCESS);
  cublasLtMatrixLayout_t l = MakeLayout(c, CUDA_R_32F);
  ASSERT_EQ(Matmul(desc, reinterpret_cast<void*>(scalars), da, MakeLayout(a, CUDA_R_32F), db, MakeLayout(b, CUDA_R_32F),
                   reinterpret_cast<void*>(scalars + 4), dc, l, dd, l), CUBLAS_STATUS_SUCCESS);
  EMBER_ASSERT_CU(cuCtxSynchronize());
  std::vector<float> out = Download<float>(dd, m * n);
  for (uint64_t i = 0; i < m; ++i) {
    for (uint64_t j = 0; j < n; ++j) {
      EXPECT_EQ(out[j * m + i], static_cast<float>(0.5 * Reference(a, CUDA_R_32F, false, b, CUDA_R_32F, false, i, j, k)));
    }
  }
  FreeDescriptors();
}

TEST_F(CublasLtTest, BadCallsAreStatusesAndBadPointersAreFaults) {
  Matrix a = RandomMatrix(rng_, 4, 3, 4, false), b = RandomMatrix(rng_, 5, 2, 5, false), d = RandomMatrix(rng_, 4, 2, 4, false);
  cublasLtMatmulDesc_t desc = MakeDesc(CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLAS_OP_N, CUBLAS_OP_N);
  const float one = 1.0f, zero = 0.0f;
  CUdeviceptr dd = UploadAs(d, CUDA_R_32F);
  cublasLtMatrixLayout_t dl = MakeLayout(d, CUDA_R_32F);
  EXPECT_EQ(Matmul(desc, &one, dd, MakeLayout(a, CUDA_R_32F), dd, MakeLayout(b, CUDA_R_32F), &zero, dd, dl, dd, dl),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_THAT(ember_vgpu_cublaslt_last_error(), HasSubstr("shapes do not chain: op(A) is 4x3, op(B) is 5x2"));
  Matrix b2 = RandomMatrix(rng_, 3, 2, 3, false);
  EXPECT_EQ(Matmul(desc, &one, dd, MakeLayout(a, CUDA_R_64F), dd, MakeLayout(b2, CUDA_R_32F), &zero, dd, dl, dd, dl),
            CUBLAS_STATUS_NOT_SUPPORTED);
  // A host pointer where device memory belongs: a fault when the stream runs the matmul.
  std::vector<float> host(12, 1.0f);
  cublasLtMatrixLayout_t al = MakeLayout(a, CUDA_R_32F), bl = MakeLayout(b2, CUDA_R_32F);
  ASSERT_EQ(cublasLtMatmul(handle_, desc, &one, host.data(), al, reinterpret_cast<void*>(dd), bl, &zero,
                           reinterpret_cast<void*>(dd), dl, reinterpret_cast<void*>(dd), dl, nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_THAT(LastFault(), HasSubstr("cublasLtMatmul: A (48 bytes at 0x"));
  FreeDescriptors();
}

}  // namespace
}  // namespace ember::vgpu::testing
