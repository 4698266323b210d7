#include "tests/virtual_gpu/cublaslt/matmul_problem.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/virtual_gpu/driver/virtual_gpu_hooks.h"
#include "tests/virtual_gpu/ptx/float_format.h"

namespace ember::vgpu::cublaslt {
namespace {

using Complex = std::complex<double>;
namespace ptx = ember::vgpu::ptx;

bool IsComplex(cudaDataType_t t) { return t == CUDA_C_32F || t == CUDA_C_64F; }

// The element at (row, col) of a matrix laid out per `l`, from host bytes.
Complex Load(const uint8_t* base, const Layout& l, uint64_t row, uint64_t col) {
  const int64_t index = l.order == CUBLASLT_ORDER_ROW ? static_cast<int64_t>(row) * l.ld + col
                                                      : static_cast<int64_t>(col) * l.ld + row;
  const uint8_t* p = base + index * TypeSize(l.type);
  switch (l.type) {
    case CUDA_R_32F: { float v; std::memcpy(&v, p, 4); return v; }
    case CUDA_R_64F: { double v; std::memcpy(&v, p, 8); return v; }
    case CUDA_R_16F: { uint16_t v; std::memcpy(&v, p, 2); return ptx::F16ToF32(v); }
    case CUDA_R_16BF: { uint16_t v; std::memcpy(&v, p, 2); return ptx::BF16ToF32(v); }
    case CUDA_R_8I: return static_cast<int8_t>(*p);
    case CUDA_R_32I: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case CUDA_C_32F: { float v[2]; std::memcpy(v, p, 8); return Complex(v[0], v[1]); }
    case CUDA_C_64F: { double v[2]; std::memcpy(v, p, 16); return Complex(v[0], v[1]); }
    default: return 0;
  }
}

void Store(uint8_t* base, const Layout& l, uint64_t row, uint64_t col, Complex value) {
  const int64_t index = l.order == CUBLASLT_ORDER_ROW ? static_cast<int64_t>(row) * l.ld + col
                                                      : static_cast<int64_t>(col) * l.ld + row;
  uint8_t* p = base + index * TypeSize(l.type);
  const double v = value.real();
  switch (l.type) {
    case CUDA_R_32F: { float f = static_cast<float>(v); std::memcpy(p, &f, 4); break; }
    case CUDA_R_64F: std::memcpy(p, &v, 8); break;
    case CUDA_R_16F: {
      uint16_t h = static_cast<uint16_t>(ptx::RoundToFormat(v, ptx::kF16Format, ptx::Rounding::kNearest));
      std::memcpy(p, &h, 2);
      break;
    }
    case CUDA_R_16BF: {
      uint16_t h = static_cast<uint16_t>(ptx::RoundToFormat(v, ptx::kBF16Format, ptx::Rounding::kNearest));
      std::memcpy(p, &h, 2);
      break;
    }
    case CUDA_R_8I: {
      const double r = std::nearbyint(std::clamp(v, -128.0, 127.0));
      *p = static_cast<uint8_t>(static_cast<int8_t>(r));
      break;
    }
    case CUDA_R_32I: {
      const double r = std::nearbyint(std::clamp(v, -2147483648.0, 2147483647.0));
      int32_t i = static_cast<int32_t>(r);
      std::memcpy(p, &i, 4);
      break;
    }
    case CUDA_C_32F: {
      float f[2] = {static_cast<float>(value.real()), static_cast<float>(value.imag())};
      std::memcpy(p, f, 8);
      break;
    }
    case CUDA_C_64F: {
      double f[2] = {value.real(), value.imag()};
      std::memcpy(p, f, 16);
      break;
    }
    default: break;
  }
}

// Inputs as the compute type sees them: the FAST_* modes may down-convert (we do, so that a test
// passing on the virtual GPU does not rely on more precision than the GPU may use).
double Downconvert(cublasComputeType_t compute, cudaDataType_t type, double v) {
  if (type != CUDA_R_32F) return v;
  switch (compute) {
    case CUBLAS_COMPUTE_32F_FAST_TF32:
      return std::bit_cast<float>(static_cast<uint32_t>(
          ptx::RoundToFormat(v, ptx::kTF32Format, ptx::Rounding::kNearestAway)));
    case CUBLAS_COMPUTE_32F_FAST_16F:
      return ptx::F16ToF32(static_cast<uint16_t>(ptx::RoundToFormat(v, ptx::kF16Format, ptx::Rounding::kNearest)));
    case CUBLAS_COMPUTE_32F_FAST_16BF:
      return ptx::BF16ToF32(static_cast<uint16_t>(ptx::RoundToFormat(v, ptx::kBF16Format, ptx::Rounding::kNearest)));
    default:
      return v;
  }
}

Complex Scalar(cudaDataType_t type, const uint8_t* bytes) {
  switch (type) {
    case CUDA_R_32F: { float v; std::memcpy(&v, bytes, 4); return v; }
    case CUDA_R_64F: { double v; std::memcpy(&v, bytes, 8); return v; }
    case CUDA_R_16F: { uint16_t v; std::memcpy(&v, bytes, 2); return ptx::F16ToF32(v); }
    case CUDA_R_32I: { int32_t v; std::memcpy(&v, bytes, 4); return v; }
    case CUDA_C_32F: { float v[2]; std::memcpy(v, bytes, 8); return Complex(v[0], v[1]); }
    case CUDA_C_64F: { double v[2]; std::memcpy(v, bytes, 16); return Complex(v[0], v[1]); }
    default: return 0;
  }
}

double Gelu(double x) {
  constexpr double kSqrt2OverPi = 0.7978845608028654;
  return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}

// Bytes a matrix spans from its start (the last element's end), for range checks.
uint64_t Span(const Layout& l) {
  if (l.rows == 0 || l.cols == 0) return 0;
  const uint64_t outer = l.order == CUBLASLT_ORDER_ROW ? l.rows : l.cols;
  const uint64_t inner = l.order == CUBLASLT_ORDER_ROW ? l.cols : l.rows;
  return ((outer - 1) * static_cast<uint64_t>(l.ld) + inner) * TypeSize(l.type);
}

const uint8_t* Resolve(int device, uint64_t address, uint64_t size, bool write, const char* what,
                       std::string* why) {
  if (size == 0) return nullptr;
  void* host = nullptr;
  char error[512] = {};
  if (ember_vgpu_resolve(device, address, size, write ? 1 : 0, &host, error, sizeof(error)) != 0) {
    *why = absl::StrCat(what, " (", size, " bytes at 0x", absl::Hex(address), "): ", error);
    return nullptr;
  }
  return static_cast<const uint8_t*>(host);
}

}  // namespace

int TypeSize(cudaDataType_t type) {
  switch (type) {
    case CUDA_R_8I: return 1;
    case CUDA_R_16F: case CUDA_R_16BF: return 2;
    case CUDA_R_32F: case CUDA_R_32I: return 4;
    case CUDA_R_64F: case CUDA_C_32F: return 8;
    case CUDA_C_64F: return 16;
    default: return 0;
  }
}

const char* TypeName(cudaDataType_t type) {
  switch (type) {
    case CUDA_R_8I: return "CUDA_R_8I";
    case CUDA_R_16F: return "CUDA_R_16F";
    case CUDA_R_16BF: return "CUDA_R_16BF";
    case CUDA_R_32F: return "CUDA_R_32F";
    case CUDA_R_32I: return "CUDA_R_32I";
    case CUDA_R_64F: return "CUDA_R_64F";
    case CUDA_C_32F: return "CUDA_C_32F";
    case CUDA_C_64F: return "CUDA_C_64F";
    default: return "an unsupported data type";
  }
}

cublasStatus_t Validate(const MatmulDesc& desc, const Layout& a, const Layout& b, const Layout& c,
                        const Layout& d, std::string* why) {
  auto invalid = [&](const std::string& what) {
    *why = what;
    return CUBLAS_STATUS_INVALID_VALUE;
  };
  auto unsupported = [&](const std::string& what) {
    *why = what;
    return CUBLAS_STATUS_NOT_SUPPORTED;
  };
  for (const Layout* l : {&a, &b, &c, &d}) {
    if (TypeSize(l->type) == 0) return unsupported(absl::StrCat("matrix type ", static_cast<int>(l->type), " is not supported"));
    if (l->order != CUBLASLT_ORDER_COL && l->order != CUBLASLT_ORDER_ROW) {
      return unsupported("only CUBLASLT_ORDER_COL and CUBLASLT_ORDER_ROW layouts are modelled");
    }
    const uint64_t inner = l->order == CUBLASLT_ORDER_ROW ? l->cols : l->rows;
    if (l->ld < static_cast<int64_t>(inner) || l->ld <= 0) {
      return invalid(absl::StrCat("a leading dimension of ", l->ld, " is less than the ", inner,
                                  l->order == CUBLASLT_ORDER_ROW ? " columns" : " rows",
                                  " of a row-or-column-major layout"));
    }
  }
  if (desc.transc != CUBLAS_OP_N) return unsupported("CUBLASLT_MATMUL_DESC_TRANSC must be CUBLAS_OP_N");
  const uint64_t m = d.rows, n = d.cols;
  const uint64_t am = desc.transa == CUBLAS_OP_N ? a.rows : a.cols;
  const uint64_t k = desc.transa == CUBLAS_OP_N ? a.cols : a.rows;
  const uint64_t bk = desc.transb == CUBLAS_OP_N ? b.rows : b.cols;
  const uint64_t bn = desc.transb == CUBLAS_OP_N ? b.cols : b.rows;
  if (am != m || bn != n || bk != k) {
    return invalid(absl::StrCat("shapes do not chain: op(A) is ", am, "x", k, ", op(B) is ", bk, "x",
                                bn, ", D is ", m, "x", n));
  }
  if (c.rows != m || c.cols != n) {
    return invalid(absl::StrCat("C is ", c.rows, "x", c.cols, " but D is ", m, "x", n));
  }
  if (c.type != d.type) return invalid("C and D must have the same type");
  const int32_t batch = d.batch_count;
  for (const Layout* l : {&a, &b, &c}) {
    if (l->batch_count != batch) {
      return invalid(absl::StrCat("batch counts differ: ", l->batch_count, " vs D's ", batch));
    }
  }
  // Type combinations cuBLASLt supports (a subset: the ones a CUDA backend uses).
  const cudaDataType_t at = a.type, bt = b.type, dt = d.type;
  const bool real_float = [&] {
    for (cudaDataType_t t : {at, bt, dt}) {
      if (t != CUDA_R_32F && t != CUDA_R_16F && t != CUDA_R_16BF) return false;
    }
    return true;
  }();
  switch (desc.compute) {
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
    case CUBLAS_COMPUTE_32F_FAST_TF32:
      if (at == CUDA_C_32F && bt == CUDA_C_32F && dt == CUDA_C_32F && desc.scale == CUDA_C_32F) break;
      if (!real_float || at != bt || desc.scale != CUDA_R_32F) {
        return unsupported(absl::StrCat("CUBLAS_COMPUTE_32F* with A ", TypeName(at), ", B ", TypeName(bt),
                                        ", D ", TypeName(dt), " and scale ", TypeName(desc.scale)));
      }
      break;
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC:
      if (!((at == CUDA_R_64F && bt == CUDA_R_64F && dt == CUDA_R_64F && desc.scale == CUDA_R_64F) ||
            (at == CUDA_C_64F && bt == CUDA_C_64F && dt == CUDA_C_64F && desc.scale == CUDA_C_64F))) {
        return unsupported("CUBLAS_COMPUTE_64F needs f64 (or complex f64) everywhere");
      }
      break;
    case CUBLAS_COMPUTE_16F:
    case CUBLAS_COMPUTE_16F_PEDANTIC:
      if (at != CUDA_R_16F || bt != CUDA_R_16F || dt != CUDA_R_16F ||
          (desc.scale != CUDA_R_16F && desc.scale != CUDA_R_32F)) {
        return unsupported("CUBLAS_COMPUTE_16F needs f16 A, B, C and D");
      }
      break;
    case CUBLAS_COMPUTE_32I:
    case CUBLAS_COMPUTE_32I_PEDANTIC:
      if (at != CUDA_R_8I || bt != CUDA_R_8I ||
          !((dt == CUDA_R_32I && desc.scale == CUDA_R_32I) || (dt == CUDA_R_8I && desc.scale == CUDA_R_32F))) {
        return unsupported("CUBLAS_COMPUTE_32I needs int8 A and B, and int32 D (int32 scale) or int8 D (f32 scale)");
      }
      break;
    default:
      return unsupported(absl::StrCat("compute type ", static_cast<int>(desc.compute), " is not modelled"));
  }
  const uint32_t epilogue = desc.epilogue;
  const uint32_t known = CUBLASLT_EPILOGUE_DEFAULT | CUBLASLT_EPILOGUE_RELU | CUBLASLT_EPILOGUE_BIAS |
                         CUBLASLT_EPILOGUE_GELU;
  if ((epilogue & ~known) != 0) {
    return unsupported(absl::StrCat("epilogue ", epilogue, " (aux outputs, gradients) is not modelled"));
  }
  if ((epilogue & CUBLASLT_EPILOGUE_RELU) && (epilogue & CUBLASLT_EPILOGUE_GELU)) {
    return invalid("RELU and GELU epilogues at once");
  }
  if ((epilogue & CUBLASLT_EPILOGUE_BIAS) && desc.bias == 0) {
    return invalid("a BIAS epilogue without CUBLASLT_MATMUL_DESC_BIAS_POINTER");
  }
  if (epilogue != CUBLASLT_EPILOGUE_DEFAULT && (IsComplex(dt) || desc.compute == CUBLAS_COMPUTE_32I)) {
    return unsupported("epilogues are for real floating-point outputs");
  }
  if (desc.pointer_mode != CUBLASLT_POINTER_MODE_HOST && desc.pointer_mode != CUBLASLT_POINTER_MODE_DEVICE) {
    return unsupported("vector pointer modes are not modelled");
  }
  return CUBLAS_STATUS_SUCCESS;
}

bool Compute(int device, const MatmulDesc& desc, const Layout& a, const Layout& b,
             const Layout& c, const Layout& d, const Operands& operands, std::string* why) {
  const uint64_t m = d.rows, n = d.cols;
  const uint64_t k = desc.transa == CUBLAS_OP_N ? a.cols : a.rows;
  const int scale_size = TypeSize(desc.scale);
  uint8_t alpha_bytes[16], beta_bytes[16];
  std::memcpy(alpha_bytes, operands.alpha, sizeof(alpha_bytes));
  std::memcpy(beta_bytes, operands.beta, sizeof(beta_bytes));
  if (desc.pointer_mode == CUBLASLT_POINTER_MODE_DEVICE) {
    const uint8_t* pa = Resolve(device, operands.alpha_address, scale_size, false, "alpha", why);
    const uint8_t* pb = Resolve(device, operands.beta_address, scale_size, false, "beta", why);
    if (pa == nullptr || pb == nullptr) return false;
    std::memcpy(alpha_bytes, pa, scale_size);
    std::memcpy(beta_bytes, pb, scale_size);
  }
  const Complex alpha = Scalar(desc.scale, alpha_bytes), beta = Scalar(desc.scale, beta_bytes);
  const bool read_c = beta != Complex(0.0);  // beta == 0: C is not read (it may hold NaNs)
  const int bias_type = desc.bias_type >= 0 ? desc.bias_type
                        : (d.type == CUDA_R_16F || d.type == CUDA_R_16BF) ? d.type : CUDA_R_32F;
  Layout bias_layout;
  bias_layout.type = static_cast<cudaDataType_t>(bias_type);
  bias_layout.rows = m;
  bias_layout.cols = 1;
  bias_layout.ld = static_cast<int64_t>(m);
  for (int32_t batch = 0; batch < d.batch_count; ++batch) {
    auto matrix = [&](const Layout& l, uint64_t address, bool write, const char* what) -> const uint8_t* {
      const uint64_t start = address + static_cast<uint64_t>(batch * l.batch_stride) * TypeSize(l.type);
      return Resolve(device, start, Span(l), write, what, why);
    };
    const uint8_t* pa = matrix(a, operands.a, false, "A");
    const uint8_t* pb = matrix(b, operands.b, false, "B");
    const uint8_t* pc = read_c ? matrix(c, operands.c, false, "C") : nullptr;
    uint8_t* pd = const_cast<uint8_t*>(matrix(d, operands.d, true, "D"));
    const uint8_t* pbias = nullptr;
    if (desc.epilogue & CUBLASLT_EPILOGUE_BIAS) {
      pbias = Resolve(device, desc.bias + batch * desc.bias_batch_stride * TypeSize(bias_layout.type),
                      m * TypeSize(bias_layout.type), false, "the bias vector", why);
      if (pbias == nullptr) return false;
    }
    if ((k > 0 && m * n > 0 && (pa == nullptr || pb == nullptr)) || (read_c && m * n > 0 && pc == nullptr) ||
        (m * n > 0 && pd == nullptr)) {
      return false;
    }
    std::vector<Complex> result(m * n);
    for (uint64_t j = 0; j < n; ++j) {
      for (uint64_t i = 0; i < m; ++i) {
        Complex acc = 0;
        for (uint64_t p = 0; p < k; ++p) {
          Complex x = desc.transa == CUBLAS_OP_N ? Load(pa, a, i, p) : Load(pa, a, p, i);
          Complex y = desc.transb == CUBLAS_OP_N ? Load(pb, b, p, j) : Load(pb, b, j, p);
          if (desc.transa == CUBLAS_OP_C) x = std::conj(x);
          if (desc.transb == CUBLAS_OP_C) y = std::conj(y);
          x = Complex(Downconvert(desc.compute, a.type, x.real()), x.imag());
          y = Complex(Downconvert(desc.compute, b.type, y.real()), y.imag());
          acc += x * y;
        }
        Complex v = alpha * acc;
        if (read_c) v += beta * Load(pc, c, i, j);
        double r = v.real();
        if (desc.epilogue & CUBLASLT_EPILOGUE_BIAS) r += Load(pbias, bias_layout, i, 0).real();
        if (desc.epilogue & CUBLASLT_EPILOGUE_RELU) r = r > 0 ? r : 0.0;
        if (desc.epilogue & CUBLASLT_EPILOGUE_GELU) r = Gelu(r);
        result[j * m + i] = IsComplex(d.type) ? v : Complex(r);
      }
    }
    // D may alias C: write once everything is read.
    for (uint64_t j = 0; j < n; ++j) {
      for (uint64_t i = 0; i < m; ++i) Store(pd, d, i, j, result[j * m + i]);
    }
  }
  return true;
}

}  // namespace ember::vgpu::cublaslt
