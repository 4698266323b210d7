// Runs the virtual GPU's known test kernels (NVRTC and LLVM PTX) and a few cuBLASLt matmuls
// through whichever libcuda.so.1 / libcublasLt.so.13 it is given, on fixed inputs, and writes
// every output buffer to a file: tests/gpu/virtual_vs_real.sh runs it once on the virtual GPU and
// once on a real one and compares the files. Only dlopen: it builds and runs without a GPU.
//
// usage: ember_kernel_results --libcuda PATH [--libcublaslt PATH] --llvm-ptx-dir DIR --out FILE
//          [--kernel-source FILE]   (known_kernels.cu; default: the source tree it was built from)
#include <cuda.h>
#include <cublasLt.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/virtual_gpu/nvrtc_compiler.h"
#include "tests/virtual_gpu/ptx/float_format.h"

namespace {

struct Driver {
#define EMBER_FN(name) decltype(&::name) name = nullptr;
  EMBER_FN(cuInit) EMBER_FN(cuDeviceGet) EMBER_FN(cuDeviceGetAttribute) EMBER_FN(cuDevicePrimaryCtxRetain)
  EMBER_FN(cuCtxPushCurrent) EMBER_FN(cuModuleLoadData) EMBER_FN(cuModuleGetFunction) EMBER_FN(cuMemAlloc)
  EMBER_FN(cuMemFree) EMBER_FN(cuMemcpyHtoD) EMBER_FN(cuMemcpyDtoH) EMBER_FN(cuMemsetD8) EMBER_FN(cuLaunchKernel)
  EMBER_FN(cuCtxSynchronize) EMBER_FN(cuGetErrorString)
#undef EMBER_FN
};

#define EMBER_STR_(x) #x
#define EMBER_STR(x) EMBER_STR_(x)

template <class F>
void Resolve(void* handle, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(handle, name));
  if (*out == nullptr) {
    std::fprintf(stderr, "missing %s\n", name);
    std::exit(2);
  }
}

Driver LoadDriver(const std::string& path) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (h == nullptr) {
    std::fprintf(stderr, "cannot open %s: %s\n", path.c_str(), dlerror());
    std::exit(2);
  }
  Driver d;
#define EMBER_RESOLVE(name) Resolve(h, EMBER_STR(name), &d.name);
  EMBER_RESOLVE(cuInit) EMBER_RESOLVE(cuDeviceGet) EMBER_RESOLVE(cuDeviceGetAttribute)
  EMBER_RESOLVE(cuDevicePrimaryCtxRetain) EMBER_RESOLVE(cuCtxPushCurrent) EMBER_RESOLVE(cuModuleLoadData)
  EMBER_RESOLVE(cuModuleGetFunction) EMBER_RESOLVE(cuMemAlloc) EMBER_RESOLVE(cuMemFree)
  EMBER_RESOLVE(cuMemcpyHtoD) EMBER_RESOLVE(cuMemcpyDtoH) EMBER_RESOLVE(cuMemsetD8)
  EMBER_RESOLVE(cuLaunchKernel) EMBER_RESOLVE(cuCtxSynchronize) EMBER_RESOLVE(cuGetErrorString)
#undef EMBER_RESOLVE
  return d;
}

Driver g;
std::ofstream g_out;

void Check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* text = nullptr;
  g.cuGetErrorString(r, &text);
  std::fprintf(stderr, "%s failed: %d %s\n", what, r, text ? text : "");
  std::exit(3);
}

CUdeviceptr Upload(const std::vector<uint8_t>& bytes) {
  CUdeviceptr p = 0;
  Check(g.cuMemAlloc(&p, std::max<size_t>(bytes.size(), 1)), "cuMemAlloc");
  if (!bytes.empty()) Check(g.cuMemcpyHtoD(p, bytes.data(), bytes.size()), "cuMemcpyHtoD");
  return p;
}
CUdeviceptr Zeros(size_t bytes) {
  CUdeviceptr p = 0;
  Check(g.cuMemAlloc(&p, bytes), "cuMemAlloc");
  Check(g.cuMemsetD8(p, 0, bytes), "cuMemsetD8");
  return p;
}
// Writes "<name>\t<kind>\t<hex bytes>": kind says how to compare (exact, f32:<rel tol>, ...).
void Record(const std::string& name, const std::string& kind, CUdeviceptr p, size_t bytes) {
  std::vector<uint8_t> host(bytes);
  Check(g.cuMemcpyDtoH(host.data(), p, bytes), "cuMemcpyDtoH");
  g_out << name << '\t' << kind << '\t';
  for (uint8_t b : host) g_out << absl::StrCat(absl::Hex(b, absl::kZeroPad2));
  g_out << '\n';
}

template <class T>
std::vector<uint8_t> AsBytes(const std::vector<T>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

void Launch(CUmodule m, const char* name, unsigned gx, unsigned gy, unsigned bx, unsigned by, unsigned smem,
            std::vector<void*> args) {
  CUfunction f = nullptr;
  Check(g.cuModuleGetFunction(&f, m, name), name);
  Check(g.cuLaunchKernel(f, gx, gy, 1, bx, by, 1, smem, nullptr, args.data(), nullptr), name);
  Check(g.cuCtxSynchronize(), name);
}

// The common kernel set (known_kernels.cu and known_kernels.ll share names and signatures).
void RunCommon(CUmodule m, const std::string& prefix, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-2, 2);
  auto floats = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
  };
  {
    int n = 3000;
    float a = 1.75f;
    CUdeviceptr x = Upload(AsBytes(floats(n))), y = Upload(AsBytes(floats(n)));
    Launch(m, "grid_stride_saxpy", 5, 1, 128, 1, 0, {&a, &x, &y, &n});
    Record(prefix + "grid_stride_saxpy", "exact", y, n * 4);
  }
  {
    int n = 1000;
    CUdeviceptr in = Upload(AsBytes(floats(n))), out = Zeros(4 * 4);
    Launch(m, "tree_reduce", 4, 1, 256, 1, 256 * 4, {&in, &out, &n});
    Record(prefix + "tree_reduce", "exact", out, 16);
  }
  {
    int n = 5000;
    CUdeviceptr in = Upload(AsBytes(floats(n))), out = Zeros(4);
    Launch(m, "warp_shuffle_reduce", 4, 1, 96, 1, 0, {&in, &out, &n});
    Record(prefix + "warp_shuffle_reduce", "f32:1e-5", out, 4);  // atomics: order-dependent
  }
  {
    int rows = 70, cols = 45;
    CUdeviceptr in = Upload(AsBytes(floats(rows * cols))), out = Zeros(rows * cols * 4);
    Launch(m, "tiled_transpose", 2, 3, 32, 8, 0, {&in, &out, &rows, &cols});
    Record(prefix + "tiled_transpose", "exact", out, rows * cols * 4);
  }
  {
    int n = 4000, nbins = 37;
    std::vector<uint32_t> values(n);
    for (auto& v : values) v = rng() % 1000;
    CUdeviceptr in = Upload(AsBytes(values)), bins = Zeros(nbins * 4);
    Launch(m, "atomic_histogram", 6, 1, 128, 1, nbins * 4, {&in, &bins, &n, &nbins});
    Record(prefix + "atomic_histogram", "exact", bins, nbins * 4);
  }
  {
    int n = 200;
    std::vector<uint16_t> h(n);
    for (auto& v : h) v = static_cast<uint16_t>(0x3000 + rng() % 0x1000);  // moderate f16/bf16 values
    CUdeviceptr a = Upload(AsBytes(h)), b = Upload(AsBytes(h)), c = Upload(AsBytes(h)), d = Upload(AsBytes(h));
    CUdeviceptr ho = Zeros(4 * n * 2), bo = Zeros(3 * n * 2), fo = Zeros(2 * n * 4);
    Launch(m, "half_math", 2, 1, 128, 1, 0, {&a, &b, &c, &d, &ho, &bo, &fo, &n});
    Record(prefix + "half_math.h", "exact", ho, 4 * n * 2);
    Record(prefix + "half_math.b", "exact", bo, 3 * n * 2);
    Record(prefix + "half_math.f", "exact", fo, 2 * n * 4);
  }
  {
    int n = 160;
    std::vector<int32_t> values(n);
    for (auto& v : values) v = static_cast<int32_t>(rng() % 250) - 50;
    CUdeviceptr in = Upload(AsBytes(values)), out = Zeros(n * 4), ballots = Zeros(n / 32 * 4);
    Launch(m, "divergent_branches", 2, 1, 96, 1, 0, {&in, &out, &ballots, &n});
    Record(prefix + "divergent_branches", "exact", out, n * 4);
    Record(prefix + "divergent_branches.ballots", "exact", ballots, n / 32 * 4);
  }
}

void RunNvrtcOnly(CUmodule m, std::mt19937& rng) {
  {
    int n = 100;
    std::vector<int32_t> a(n), b(n);
    for (int i = 0; i < n; ++i) {
      a[i] = static_cast<int32_t>(rng() % 200000000) - 100000000;
      b[i] = i % 9 == 0 ? 0 : static_cast<int32_t>(rng() % 100000) - 50000;
    }
    CUdeviceptr da = Upload(AsBytes(a)), db = Upload(AsBytes(b)), out = Zeros(12 * n * 8);
    Launch(m, "integer_ops", 1, 1, 128, 1, 0, {&da, &db, &out, &n});
    Record("nvrtc.integer_ops", "exact", out, 12 * n * 8);
  }
  {
    int n = 128;
    std::uniform_real_distribution<float> dist(-10, 10);
    std::vector<float> a(n), b(n);
    for (int i = 0; i < n; ++i) {
      a[i] = dist(rng);
      b[i] = dist(rng);
      if (std::fabs(b[i]) < 0.01f) b[i] = 0.5f;
    }
    CUdeviceptr da = Upload(AsBytes(a)), db = Upload(AsBytes(b)), e = Zeros(8 * n * 4), ap = Zeros(4 * n * 4),
                ints = Zeros(2 * n * 4), dbl = Zeros(2 * n * 8);
    Launch(m, "float_ops", 1, 1, 128, 1, 0, {&da, &db, &e, &ap, &ints, &dbl, &n});
    Record("nvrtc.float_ops.exact", "exact", e, 8 * n * 4);
    // .approx: within the ISA's bounds, relative for ex2/lg2/rsqrt, absolute for sin (2^-20.5 on
    // [-100pi, 100pi]; the H200 differed from the C library's sinf by 5.3e-7 near 0.03).
    Record("nvrtc.float_ops.approx", "f32:1e-5:7e-7", ap, 4 * n * 4);
    Record("nvrtc.float_ops.ints", "exact", ints, 2 * n * 4);
    Record("nvrtc.float_ops.doubles", "exact", dbl, 2 * n * 8);
  }
  {
    int n = 150;
    std::uniform_real_distribution<float> dist(-2, 2);
    std::vector<float> in(n + 8);
    for (float& v : in) v = dist(rng);
    CUdeviceptr din = Upload(AsBytes(in)), out = Zeros(n * 4);
    Launch(m, "calls_and_local_memory", 2, 1, 96, 1, 0, {&din, &out, &n});
    Record("nvrtc.calls_and_local_memory", "exact", out, n * 4);
  }
  {
    std::vector<int32_t> in(64);
    for (auto& v : in) v = static_cast<int32_t>(rng() % 121);
    CUdeviceptr din = Upload(AsBytes(in)), out = Zeros(6 * 64 * 4);
    Launch(m, "warp_primitives", 1, 1, 64, 1, 0, {&din, &out});
    Record("nvrtc.warp_primitives", "exact", out, 6 * 64 * 4);
  }
}

void RunCublasLt(const std::string& path, std::mt19937& rng) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    std::fprintf(stderr, "cannot open %s: %s\n", path.c_str(), dlerror());
    std::exit(2);
  }
#define EMBER_LT(name) decltype(&::name) name = nullptr; Resolve(h, #name, &name);
  EMBER_LT(cublasLtCreate) EMBER_LT(cublasLtMatmulDescCreate) EMBER_LT(cublasLtMatrixLayoutCreate)
  EMBER_LT(cublasLtMatmul) EMBER_LT(cublasLtMatmulDescSetAttribute)
#undef EMBER_LT
  cublasLtHandle_t handle = nullptr;
  if (cublasLtCreate(&handle) != CUBLAS_STATUS_SUCCESS) std::exit(4);
  struct Case {
    const char* name;
    cudaDataType_t in, out;
    cublasComputeType_t compute;
    int elem_in, elem_out;
  };
  const Case cases[] = {{"f32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4, 4},
                        {"f16", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 2},
                        {"bf16", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 2},
                        {"tf32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4}};
  const uint64_t m = 33, n = 17, k = 40;
  for (const Case& c : cases) {
    std::vector<uint8_t> a(m * k * c.elem_in), b(k * n * c.elem_in);
    for (size_t i = 0; i < a.size(); i += c.elem_in) {
      const float v = static_cast<float>(static_cast<int>(rng() % 200) - 100) / 64.0f;  // exact in every type
      if (c.elem_in == 4) {
        std::memcpy(&a[i], &v, 4);
      } else {
        const uint16_t bits = c.in == CUDA_R_16BF ? ember::vgpu::ptx::F32ToBF16(v) : ember::vgpu::ptx::F32ToF16(v);
        std::memcpy(&a[i], &bits, 2);
      }
    }
    for (size_t i = 0; i < b.size(); ++i) b[i] = a[i % a.size()];
    CUdeviceptr da = Upload(a), db = Upload(b), dd = Zeros(m * n * c.elem_out);
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatmulDescCreate(&desc, c.compute, CUDA_R_32F);
    cublasLtMatrixLayout_t al = nullptr, bl = nullptr, dl = nullptr;
    cublasLtMatrixLayoutCreate(&al, c.in, m, k, m);
    cublasLtMatrixLayoutCreate(&bl, c.in, k, n, k);
    cublasLtMatrixLayoutCreate(&dl, c.out, m, n, m);
    const float alpha = 1.0f, beta = 0.0f;
    if (cublasLtMatmul(handle, desc, &alpha, reinterpret_cast<void*>(da), al, reinterpret_cast<void*>(db), bl,
                       &beta, reinterpret_cast<void*>(dd), dl, reinterpret_cast<void*>(dd), dl, nullptr,
                       nullptr, 0, nullptr) != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "cublasLtMatmul %s failed\n", c.name);
      std::exit(4);
    }
    Check(g.cuCtxSynchronize(), "cublasLtMatmul");
    // Accumulation order differs between libraries: compare with a tolerance per type.
    const char* kind = c.elem_out == 4 ? "f32:1e-5" : c.in == CUDA_R_16BF ? "bf16:1e-2" : "f16:1e-3";
    Record(absl::StrCat("cublaslt.", c.name), kind, dd, m * n * c.elem_out);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> args;
  for (int i = 1; i + 1 < argc; i += 2) args[argv[i]] = argv[i + 1];
  if (!args.count("--libcuda") || !args.count("--out") || !args.count("--llvm-ptx-dir")) {
    std::fprintf(stderr,
                 "usage: %s --libcuda PATH [--libcublaslt PATH] --llvm-ptx-dir DIR --out FILE [--kernel-source FILE]\n",
                 argv[0]);
    return 2;
  }
  g = LoadDriver(args["--libcuda"]);
  g_out.open(args["--out"]);
  Check(g.cuInit(0), "cuInit");
  CUdevice device = 0;
  Check(g.cuDeviceGet(&device, 0), "cuDeviceGet");
  int major = 0, minor = 0;
  g.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
  g.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
  const int sm = major * 10 + minor >= 90 ? 90 : 80;
  CUcontext ctx = nullptr;
  Check(g.cuDevicePrimaryCtxRetain(&ctx, device), "cuDevicePrimaryCtxRetain");
  Check(g.cuCtxPushCurrent(ctx), "cuCtxPushCurrent");
  // A build carried to a GPU machine finds its source tree elsewhere: --kernel-source says where.
  const std::string source_path = args.count("--kernel-source")
                                      ? args["--kernel-source"]
                                      : absl::StrCat(EMBER_VGPU_SOURCE_DIR, "/kernels/known_kernels.cu");
  std::ifstream source(source_path);
  if (!source) {
    std::fprintf(stderr, "cannot read the kernel source %s\n", source_path.c_str());
    return 2;
  }
  std::stringstream text;
  text << source.rdbuf();
  absl::StatusOr<std::string> nvrtc = ember::vgpu::testing::CompileToPtx(text.str(), absl::StrCat("compute_", sm));
  if (!nvrtc.ok()) {
    std::fprintf(stderr, "%s\n", std::string(nvrtc.status().message()).c_str());
    return 3;
  }
  CUmodule nvrtc_module = nullptr;
  Check(g.cuModuleLoadData(&nvrtc_module, nvrtc->c_str()), "cuModuleLoadData (NVRTC)");
  std::mt19937 rng(2024);
  RunCommon(nvrtc_module, "nvrtc.", rng);
  RunNvrtcOnly(nvrtc_module, rng);
  std::ifstream llvm(absl::StrCat(args["--llvm-ptx-dir"], "/known_kernels.sm_", sm, ".ptx"));
  if (llvm) {
    std::stringstream ptx;
    ptx << llvm.rdbuf();
    CUmodule llvm_module = nullptr;
    Check(g.cuModuleLoadData(&llvm_module, ptx.str().c_str()), "cuModuleLoadData (LLVM)");
    RunCommon(llvm_module, "llvm.", rng);
  } else {
    std::fprintf(stderr, "no LLVM PTX for sm_%d in %s: skipping those kernels\n", sm, args["--llvm-ptx-dir"].c_str());
  }
  if (args.count("--libcublaslt")) RunCublasLt(args["--libcublaslt"], rng);
  g_out.close();
  std::printf("wrote %s (sm_%d)\n", args["--out"].c_str(), sm);
  return 0;
}
