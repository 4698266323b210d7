// One custom call as an XLA FFI call frame: the operands as argument buffers, the results as
// result buffers (fresh literals, or the launch's own buffers), and the op's attributes (the
// dictionary backend_config JAX's FFI lowerings write) as typed, name-sorted FFI attributes. Owns
// every piece the frame points into but the launch's buffers.
#ifndef EMBER_FFI_CALL_FRAME_H_
#define EMBER_FFI_CALL_FRAME_H_

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/evaluator/eval_value.h"
#include "compiler/ir/module.h"
#include "ffi/xla_ffi_api.h"

namespace ember::ffi {

class CallFrame {
 public:
  // `operands` must outlive the frame (argument buffers point into them; handlers read them).
  static absl::StatusOr<std::unique_ptr<CallFrame>> Build(const ir::Instruction& op,
                                                          std::vector<eval::EvalValue>& operands,
                                                          XLA_FFI_ExecutionContext* ctx);
  CallFrame(const CallFrame&) = delete;
  CallFrame& operator=(const CallFrame&) = delete;

  // On a launch's buffers (the host backend's FfiCallThunk): operand i at args[i] and result r
  // at rets[r], each dense row-major of the op's type (null for tokens, and for all of them
  // when the frame is built only to check that the op's attributes encode). The buffers must
  // outlive the frame.
  static absl::StatusOr<std::unique_ptr<CallFrame>> BuildOnBuffers(const ir::Instruction& op,
                                                                   const std::vector<void*>& args,
                                                                   const std::vector<void*>& rets,
                                                                   XLA_FFI_ExecutionContext* ctx);

  XLA_FFI_CallFrame* frame() { return &frame_; }
  // The results the handler wrote.
  std::vector<eval::EvalValue> TakeResults() { return std::move(results_); }

 private:
  CallFrame() = default;
  absl::Status AddBuffer(const ir::Instruction& op, eval::EvalValue& value, bool is_result,
                         size_t index);
  // A buffer of `type` (an array or a token) at `data`.
  absl::Status AddTypedBuffer(const ir::Instruction& op, const ir::ValueType& type, void* data,
                              bool is_result, size_t index);
  void AddFrameBuffer(const XLA_FFI_Buffer& buffer, bool is_result);
  // The attributes and the frame's header, once the buffers are in.
  absl::Status Finish(const ir::Instruction& op, XLA_FFI_ExecutionContext* ctx);
  // Encodes `attrs` into a new XLA_FFI_Attrs (sorted by name) that lives in this frame.
  absl::StatusOr<XLA_FFI_Attrs*> EncodeDictionary(
      const ir::Instruction& op, const std::vector<std::pair<std::string, ir::Attribute>>& attrs,
      const std::string& path);
  absl::StatusOr<std::pair<XLA_FFI_AttrType, void*>> EncodeAttribute(const ir::Instruction& op,
                                                                     const ir::Attribute& a,
                                                                     const std::string& path);

  XLA_FFI_CallFrame frame_{};
  std::vector<eval::EvalValue> results_;
  // Stable storage for what the frame points at.
  std::deque<XLA_FFI_Buffer> buffers_;
  std::deque<std::vector<int64_t>> dims_;
  std::vector<XLA_FFI_ArgType> arg_types_;
  std::vector<void*> args_;
  std::vector<XLA_FFI_RetType> ret_types_;
  std::vector<void*> rets_;
  std::deque<XLA_FFI_Attrs> attr_tables_;
  std::deque<std::vector<XLA_FFI_AttrType>> attr_types_;
  std::deque<std::vector<XLA_FFI_ByteSpan*>> attr_names_;
  std::deque<std::vector<void*>> attr_values_;
  std::deque<XLA_FFI_ByteSpan> spans_;
  std::deque<std::string> strings_;
  std::deque<XLA_FFI_Scalar> scalars_;
  std::deque<XLA_FFI_Array> arrays_;
  std::deque<std::vector<uint8_t>> bytes_;
  std::deque<ir::Literal> literals_;
};

}  // namespace ember::ffi

#endif  // EMBER_FFI_CALL_FRAME_H_
