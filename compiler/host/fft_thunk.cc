#include "compiler/host/fft_thunk.h"

#include <algorithm>
#include <complex>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/host/op_attributes.h"
#include "compiler/host/scratch_memory.h"
#include "compiler/host/thread_scratch.h"
#include "compiler/host/widen_to_f32.h"
#include "compiler/ir/native_types.h"

namespace ember::host {
namespace {

using eval::FftComplex;
using ir::ElementType;

// Every float and complex type: f32, f64, c64 and c128, and the narrow floats (bf16, f16, the
// f8 types) stored as they are and read through f32, as the evaluator reads them.
bool Supported(ElementType t) { return ir::IsFloat(t) || ir::IsComplex(t); }

int64_t Count(const std::vector<int64_t>& dims) {
  int64_t c = 1;
  for (int64_t d : dims) c *= d;
  return c;
}

// Calls fn with a value of the storage type of `type` (one of Supported's).
template <typename Fn>
void WithStorageType(ElementType type, Fn&& fn) {
  ir::VisitElementType(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T> || fast::kIsNarrowFloat<T>) {
      fn(T{});
    } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                         std::is_same_v<T, std::complex<double>>) {
      fn(T{});
    }
  });
}

// Elements [begin, end) of a buffer of T as complex<double>. (The launch's buffers are aligned
// for every element type, so they are read and written as arrays of T.)
template <typename T>
void Widen(const uint8_t* in, FftComplex* out, int64_t begin, int64_t end) {
  const T* from = reinterpret_cast<const T*>(in);
  for (int64_t i = begin; i < end; ++i) {
    if constexpr (fast::kIsNarrowFloat<T>) {
      out[i] = FftComplex(static_cast<double>(from[i].ToFloat()));
    } else {
      out[i] = FftComplex(from[i]);
    }
  }
}

// Rounds elements [begin, end) into T (real types keep the real parts), as the evaluator's
// LiteralFrom does: once, from double. (Each part is stored as it is rounded: a complex
// assembled on the stack and copied out as one 8-byte word stalled every store on
// store-to-load forwarding.)
template <typename T>
void Narrow(const FftComplex* in, uint8_t* out, int64_t begin, int64_t end) {
  T* to = reinterpret_cast<T*>(out);
  for (int64_t i = begin; i < end; ++i) {
    if constexpr (fast::kIsNarrowFloat<T>) {  // (the verifier gives no fft such a result)
      to[i] = T::FromDouble(in[i].real());
    } else if constexpr (std::is_floating_point_v<T>) {
      to[i] = static_cast<T>(in[i].real());
    } else {
      using Part = typename T::value_type;
      Part* parts = reinterpret_cast<Part*>(to + i);
      parts[0] = static_cast<Part>(in[i].real());
      parts[1] = static_cast<Part>(in[i].imag());
    }
  }
}

struct FftLineOwner {};

}  // namespace

std::string FftThunk::Refusal(const ir::Instruction& inst) {
  if (inst.opcode() != ir::Opcode::kFft) return "not an fft";
  absl::StatusOr<eval::FftForm> form = eval::FftForm::Read(inst);
  if (!form.ok()) return std::string(form.status().message());
  const ir::ValueType& in = inst.operand(0)->type();
  const ir::ValueType& out = inst.result(0)->type();
  if (!Supported(in.element_type()) || !Supported(out.element_type())) {
    return absl::StrCat("no library fft for ", in.ToString(), " -> ", out.ToString(),
                        " (float and complex types only)");
  }
  if (!IsRowMajor(in) || !IsRowMajor(out)) return "an operand or result not in row-major layout";
  return "";
}

std::unique_ptr<FftThunk> FftThunk::Create(std::string name, const ir::Instruction& inst,
                                           ValueRef operand, ValueRef result) {
  if (!Refusal(inst).empty()) return nullptr;
  std::unique_ptr<FftThunk> thunk(
      new FftThunk(std::move(name), *eval::FftForm::Read(inst), operand, result));
  thunk->in_type_ = inst.operand(0)->type().element_type();
  thunk->out_type_ = inst.result(0)->type().element_type();
  return thunk;
}

absl::Status FftThunk::Run(HostRunContext& context) const {
  const eval::FftForm& form = plan_.form();
  const int64_t in_count = Count(form.in_dims), out_count = Count(form.out_dims);
  if (out_count == 0) return absl::OkStatus();
  const bool real_out = form.type == eval::FftForm::Type::kIrfft;
  const int64_t work_count = real_out ? Count(form.full_dims) : 0;
  ScratchMemory memory;
  EMBER_ASSIGN_OR_RETURN(void* arrays,
                         memory.Allocate((in_count + work_count) * sizeof(FftComplex), name()));
  FftComplex* in = static_cast<FftComplex*>(arrays);
  FftComplex* work = in + in_count;
  ThreadPool& pool = context.pool();
  constexpr int64_t kElementsPerPart = 1 << 14;  // copies: a part moves 256 KiB or more
  // Transforms: a part of a few thousand points is tens of microseconds of work, well above
  // what handing it to a thread costs.
  constexpr int64_t kTransformPointsPerPart = 1 << 11;
  constexpr int64_t kLongLine = 1 << 14;  // a line this long is worth splitting
  const uint8_t* operand = context.Address(operand_);
  pool.ParallelFor(in_count, kElementsPerPart, [&](int64_t begin, int64_t end) {
    WithStorageType(in_type_, [&](auto t) { Widen<decltype(t)>(operand, in, begin, end); });
  });
  const int64_t scratch = plan_.scratch_size();
  const FftComplex* out = plan_.Run(
      in, work,
      [&](FftComplex* data, const eval::FftAxisLines& lines, const eval::FftLinePlan& plan,
          bool inverse) {
        // Lines [begin, end) on this thread, with its own line and scratch buffers.
        auto transform = [&](int64_t begin, int64_t end, const eval::FftPartRunner* parts) {
          fast::ThreadScratch<FftComplex, FftLineOwner> buffers;
          FftComplex* line = buffers.Get(0, lines.n);
          FftComplex* line_scratch = buffers.Get(1, scratch);
          eval::TransformFftLines(data, lines, plan, inverse, begin, end, line, line_scratch,
                                  parts);
        };
        if (lines.count < pool.size() && lines.n >= kLongLine) {
          // Fewer lines than threads, each long: the lines one after the other, each line's
          // passes split across the pool (the same bits as one thread's transform).
          const eval::FftPartRunner parts =
              [&](int64_t count, const std::function<void(int64_t, int64_t)>& fn) {
                pool.ParallelFor(count, kTransformPointsPerPart, fn);
              };
          transform(0, lines.count, &parts);
          return;
        }
        const int64_t min_lines =
            std::max<int64_t>(1, kTransformPointsPerPart / std::max<int64_t>(1, lines.n));
        pool.ParallelFor(lines.count, min_lines, [&](int64_t begin, int64_t end) {
          transform(begin, end, nullptr);
        });
      });
  uint8_t* result = context.Address(result_);
  pool.ParallelFor(out_count, kElementsPerPart, [&](int64_t begin, int64_t end) {
    WithStorageType(out_type_, [&](auto t) { Narrow<decltype(t)>(out, result, begin, end); });
  });
  return absl::OkStatus();
}

}  // namespace ember::host
