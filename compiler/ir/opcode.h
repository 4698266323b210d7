// Every operation of Ember's IR: the StableHLO op set (spec names), plus the func-level call and
// return. One enum so passes and backends dispatch with a switch, not string compares.
#ifndef EMBER_COMPILER_IR_OPCODE_H_
#define EMBER_COMPILER_IR_OPCODE_H_

#include <optional>
#include <string_view>

namespace ember::ir {

// X(enumerator, "stablehlo name without the dialect prefix")
#define EMBER_IR_OPCODES(X)                                                                     \
  X(kAbs, "abs") X(kAdd, "add") X(kAfterAll, "after_all") X(kAllGather, "all_gather")           \
  X(kAllReduce, "all_reduce") X(kAllToAll, "all_to_all") X(kAnd, "and")                         \
  X(kAsyncDone, "async_done") X(kAsyncStart, "async_start") X(kAtan2, "atan2")                   \
  X(kBatchNormGrad, "batch_norm_grad") X(kBatchNormInference, "batch_norm_inference")           \
  X(kBatchNormTraining, "batch_norm_training") X(kBitcastConvert, "bitcast_convert")            \
  X(kBroadcast, "broadcast") X(kBroadcastInDim, "broadcast_in_dim") X(kCase, "case")             \
  X(kCbrt, "cbrt") X(kCeil, "ceil") X(kCholesky, "cholesky") X(kClamp, "clamp")                  \
  X(kCollectiveBroadcast, "collective_broadcast") X(kCollectivePermute, "collective_permute")    \
  X(kCollectiveReduce, "collective_reduce")                                                      \
  X(kCompare, "compare") X(kComplex, "complex") X(kComposite, "composite")                       \
  X(kConcatenate, "concatenate") X(kConstant, "constant") X(kConvert, "convert")                 \
  X(kConvolution, "convolution") X(kCosine, "cosine") X(kCountLeadingZeros, "count_leading_zeros") \
  X(kCustomCall, "custom_call") X(kDivide, "divide") X(kDot, "dot") X(kDotGeneral, "dot_general") \
  X(kDynamicBroadcastInDim, "dynamic_broadcast_in_dim") X(kDynamicConv, "dynamic_conv")          \
  X(kDynamicGather, "dynamic_gather") X(kDynamicIota, "dynamic_iota") X(kDynamicPad, "dynamic_pad") \
  X(kDynamicReshape, "dynamic_reshape") X(kDynamicSlice, "dynamic_slice")                        \
  X(kDynamicUpdateSlice, "dynamic_update_slice") X(kEinsum, "einsum")                            \
  X(kExponential, "exponential") X(kExponentialMinusOne, "exponential_minus_one") X(kFft, "fft") \
  X(kFloor, "floor") X(kGather, "gather") X(kGetDimensionSize, "get_dimension_size")             \
  X(kGetTupleElement, "get_tuple_element") X(kIf, "if") X(kImag, "imag") X(kInfeed, "infeed")    \
  X(kIota, "iota") X(kIsFinite, "is_finite") X(kLog, "log") X(kLogPlusOne, "log_plus_one")       \
  X(kLogistic, "logistic") X(kMap, "map") X(kMaximum, "maximum") X(kMinimum, "minimum")          \
  X(kMultiply, "multiply") X(kNegate, "negate") X(kNot, "not")                                   \
  X(kOptimizationBarrier, "optimization_barrier") X(kOr, "or") X(kOutfeed, "outfeed")            \
  X(kPad, "pad") X(kPartitionId, "partition_id") X(kPopcnt, "popcnt") X(kPower, "power")         \
  X(kReal, "real") X(kRealDynamicSlice, "real_dynamic_slice") X(kRecv, "recv")                   \
  X(kReduce, "reduce") X(kReducePrecision, "reduce_precision") X(kReduceScatter, "reduce_scatter") \
  X(kReduceWindow, "reduce_window") X(kRemainder, "remainder") X(kReplicaId, "replica_id")       \
  X(kReshape, "reshape") X(kReturn, "return") X(kReverse, "reverse") X(kRng, "rng")              \
  X(kRngBitGenerator, "rng_bit_generator") X(kRoundNearestAfz, "round_nearest_afz")              \
  X(kRoundNearestEven, "round_nearest_even") X(kRsqrt, "rsqrt") X(kScatter, "scatter")           \
  X(kSelect, "select") X(kSelectAndScatter, "select_and_scatter") X(kSend, "send")               \
  X(kSetDimensionSize, "set_dimension_size") X(kShiftLeft, "shift_left")                         \
  X(kShiftRightArithmetic, "shift_right_arithmetic") X(kShiftRightLogical, "shift_right_logical") \
  X(kSign, "sign") X(kSine, "sine") X(kSlice, "slice") X(kSort, "sort") X(kSqrt, "sqrt")         \
  X(kSubtract, "subtract") X(kTan, "tan") X(kTanh, "tanh") X(kTorchIndexSelect, "torch_index_select") \
  X(kTranspose, "transpose") X(kTriangularSolve, "triangular_solve") X(kTuple, "tuple")          \
  X(kUnaryEinsum, "unary_einsum") X(kUniformDequantize, "uniform_dequantize")                    \
  X(kUniformQuantize, "uniform_quantize") X(kWhile, "while") X(kXor, "xor")                      \
  /* func dialect: calls between functions of the module (inlined by a pass) */                   \
  X(kCall, "call")

enum class Opcode {
#define EMBER_IR_OPCODE_ENUM(e, name) e,
  EMBER_IR_OPCODES(EMBER_IR_OPCODE_ENUM)
#undef EMBER_IR_OPCODE_ENUM
};

// "add", "dot_general", ... (without the "stablehlo." prefix; kCall is "call").
std::string_view OpcodeName(Opcode opcode);
// Accepts "add" or "stablehlo.add"; also "func.call" and "func.return"/"stablehlo.return".
std::optional<Opcode> OpcodeFromName(std::string_view name);

}  // namespace ember::ir

#endif  // EMBER_COMPILER_IR_OPCODE_H_
