// Tests of the IR verifier: one valid and one or more invalid instructions per op family, with
// the exact error message (op, location, constraint).
#include "compiler/ir/verifier.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ember::ir {
namespace {

ValueType T(ElementType e, std::vector<int64_t> dims) {
  return ValueType::Tensor(*Shape::Make(e, dims));
}
const ElementType F32 = ElementType::kF32;
const ElementType S32 = ElementType::kS32;
const ElementType PRED = ElementType::kPred;

Location Loc() {
  Location l;
  l.file = "model.py";
  l.line = 41;
  l.column = 7;
  return l;
}

// A module whose @main takes `params`, applies one op and returns its results.
struct OneOp {
  Module module;
  Computation* main = nullptr;
  Instruction* inst = nullptr;
  OneOp(const std::vector<ValueType>& params, Opcode opcode, std::vector<ValueType> results,
        AttributeMap attrs, std::vector<Computation*> regions = {}) {
    main = *module.AddFunction("main");
    main->set_public(true);
    std::vector<Value*> operands;
    for (const ValueType& p : params) operands.push_back(main->AddParameter(p));
    Build(opcode, operands, std::move(results), std::move(attrs), std::move(regions));
  }
  explicit OneOp(const std::vector<ValueType>& params) {
    main = *module.AddFunction("main");
    for (const ValueType& p : params) main->AddParameter(p);
  }
  void Build(Opcode opcode, std::vector<Value*> operands, std::vector<ValueType> results,
             AttributeMap attrs, std::vector<Computation*> regions = {}) {
    inst = main->AddInstruction(opcode, std::move(operands), std::move(results), std::move(attrs),
                                std::move(regions), Loc());
    std::vector<Value*> rets;
    for (size_t i = 0; i < inst->num_results(); ++i) rets.push_back(inst->result(i));
    main->AddInstruction(Opcode::kReturn, rets, {});
  }
  std::string Error() {
    absl::Status s = Verify(module);
    return s.ok() ? "OK" : std::string(s.message());
  }
};

AttributeMap Attrs(std::vector<std::pair<std::string, Attribute>> entries) {
  AttributeMap m;
  for (auto& [k, v] : entries) m.Set(k, v);
  return m;
}

// A scalar binary region (f32, f32) -> f32 computing `opcode`.
Computation* Binary(Module& m, ElementType e, Opcode opcode = Opcode::kAdd) {
  Computation* r = m.AddRegion("body");
  Value* a = r->AddParameter(T(e, {}));
  Value* b = r->AddParameter(T(e, {}));
  Instruction* add = r->AddInstruction(opcode, {a, b}, {T(e, {})});
  r->AddInstruction(Opcode::kReturn, {add->result()}, {});
  return r;
}

TEST(VerifierTest, ElementwiseBinary) {
  EXPECT_EQ(OneOp({T(F32, {2}), T(F32, {2})}, Opcode::kAdd, {T(F32, {2})}, {}).Error(), "OK");
  EXPECT_EQ(OneOp({T(F32, {2}), T(F32, {3})}, Opcode::kAdd, {T(F32, {2})}, {}).Error(),
            "stablehlo.add at model.py:41:7: operands have different types tensor<2xf32> and "
            "tensor<3xf32>");
  EXPECT_EQ(OneOp({T(F32, {2}), T(F32, {2})}, Opcode::kAnd, {T(F32, {2})}, {}).Error(),
            "stablehlo.and at model.py:41:7: element type f32 is not supported (expected boolean "
            "or integer)");
  EXPECT_EQ(OneOp({T(F32, {2}), T(F32, {2})}, Opcode::kAdd, {T(F32, {3})}, {}).Error(),
            "stablehlo.add at model.py:41:7: result type tensor<3xf32> does not match the "
            "inferred tensor<2xf32>");
}

TEST(VerifierTest, Compare) {
  auto attrs = Attrs({{"comparison_direction", Attribute::String("GT")}});
  EXPECT_EQ(OneOp({T(F32, {2}), T(F32, {2})}, Opcode::kCompare, {T(PRED, {2})}, attrs).Error(),
            "OK");
  EXPECT_EQ(OneOp({T(F32, {2}), T(F32, {2})}, Opcode::kCompare, {T(F32, {2})}, attrs).Error(),
            "stablehlo.compare at model.py:41:7: result type tensor<2xf32> does not match the "
            "inferred tensor<2xi1>");
  auto bad = Attrs({{"comparison_direction", Attribute::String("GREATER")}});
  EXPECT_EQ(OneOp({T(F32, {2}), T(F32, {2})}, Opcode::kCompare, {T(PRED, {2})}, bad).Error(),
            "stablehlo.compare at model.py:41:7: comparison_direction GREATER is not one of EQ, "
            "NE, GE, GT, LE, LT");
  // A float comparison of integers is refused at compile time, not when the program runs.
  auto total = Attrs({{"comparison_direction", Attribute::String("LT")},
                      {"compare_type", Attribute::String("TOTALORDER")}});
  EXPECT_EQ(OneOp({T(S32, {2}), T(S32, {2})}, Opcode::kCompare, {T(PRED, {2})}, total).Error(),
            "stablehlo.compare at model.py:41:7: compare_type TOTALORDER does not apply to "
            "tensor<2xi32> (integers and booleans compare as SIGNED or UNSIGNED)");
  EXPECT_EQ(OneOp({T(F32, {2}), T(F32, {2})}, Opcode::kCompare, {T(PRED, {2})}, total).Error(),
            "OK");
}

TEST(VerifierTest, SelectAndClamp) {
  EXPECT_EQ(OneOp({T(PRED, {}), T(F32, {2}), T(F32, {2})}, Opcode::kSelect, {T(F32, {2})}, {})
                .Error(),
            "OK");
  EXPECT_EQ(OneOp({T(PRED, {3}), T(F32, {2}), T(F32, {2})}, Opcode::kSelect, {T(F32, {2})}, {})
                .Error(),
            "stablehlo.select at model.py:41:7: pred shape [3] is neither scalar nor the shape "
            "[2] of on_true");
  EXPECT_EQ(OneOp({T(S32, {}), T(F32, {2}), T(F32, {})}, Opcode::kClamp, {T(F32, {2})}, {})
                .Error(),
            "stablehlo.clamp at model.py:41:7: min element type differs from the operand's: "
            "tensor<i32> vs tensor<2xf32>");
}

TEST(VerifierTest, BroadcastTransposeSlice) {
  auto bcast = Attrs({{"broadcast_dimensions", Attribute::Ints({1})}});
  EXPECT_EQ(OneOp({T(F32, {3})}, Opcode::kBroadcastInDim, {T(F32, {2, 3})}, bcast).Error(), "OK");
  EXPECT_EQ(OneOp({T(F32, {3})}, Opcode::kBroadcastInDim, {T(F32, {3, 2})}, bcast).Error(),
            "stablehlo.broadcast_in_dim at model.py:41:7: operand dimension 0 of size 3 cannot "
            "broadcast to result dimension 1 of size 2");
  auto bad_dims = Attrs({{"broadcast_dimensions", Attribute::Ints({2})}});
  EXPECT_EQ(OneOp({T(F32, {3})}, Opcode::kBroadcastInDim, {T(F32, {2, 3})}, bad_dims).Error(),
            "stablehlo.broadcast_in_dim at model.py:41:7: broadcast_dimensions[0] = 2 is out of "
            "range for rank 2");
  auto perm = Attrs({{"permutation", Attribute::Ints({1, 0})}});
  EXPECT_EQ(OneOp({T(F32, {2, 3})}, Opcode::kTranspose, {T(F32, {3, 2})}, perm).Error(), "OK");
  auto dup = Attrs({{"permutation", Attribute::Ints({0, 0})}});
  EXPECT_EQ(OneOp({T(F32, {2, 3})}, Opcode::kTranspose, {T(F32, {2, 2})}, dup).Error(),
            "stablehlo.transpose at model.py:41:7: permutation [0, 0] repeats dimension 0");
  auto slice = Attrs({{"start_indices", Attribute::Ints({1})},
                      {"limit_indices", Attribute::Ints({7})},
                      {"strides", Attribute::Ints({2})}});
  EXPECT_EQ(OneOp({T(F32, {8})}, Opcode::kSlice, {T(F32, {3})}, slice).Error(), "OK");
  EXPECT_EQ(OneOp({T(F32, {6})}, Opcode::kSlice, {T(F32, {3})}, slice).Error(),
            "stablehlo.slice at model.py:41:7: slice [1, 7) of dimension 0 is out of bounds for "
            "size 6");
}

TEST(VerifierTest, ConcatenateAndPad) {
  auto dim = Attrs({{"dimension", Attribute::Int(0)}});
  EXPECT_EQ(OneOp({T(F32, {2, 3}), T(F32, {4, 3})}, Opcode::kConcatenate, {T(F32, {6, 3})}, dim)
                .Error(),
            "OK");
  EXPECT_EQ(OneOp({T(F32, {2, 3}), T(F32, {4, 2})}, Opcode::kConcatenate, {T(F32, {6, 3})}, dim)
                .Error(),
            "stablehlo.concatenate at model.py:41:7: operand 1 dimension 1 is 2, expected 3");
  auto pad = Attrs({{"edge_padding_low", Attribute::Ints({1})},
                    {"edge_padding_high", Attribute::Ints({-1})},
                    {"interior_padding", Attribute::Ints({1})}});
  EXPECT_EQ(OneOp({T(F32, {3}), T(F32, {})}, Opcode::kPad, {T(F32, {5})}, pad).Error(), "OK");
}

TEST(VerifierTest, DotGeneral) {
  auto dims = [](std::vector<int64_t> lc) {
    return Attrs({{"lhs_batching_dimensions", Attribute::Ints({})},
                  {"rhs_batching_dimensions", Attribute::Ints({})},
                  {"lhs_contracting_dimensions", Attribute::Ints(lc)},
                  {"rhs_contracting_dimensions", Attribute::Ints({0})}});
  };
  EXPECT_EQ(OneOp({T(F32, {2, 3}), T(F32, {3, 4})}, Opcode::kDotGeneral, {T(F32, {2, 4})},
                  dims({1}))
                .Error(),
            "OK");
  EXPECT_EQ(OneOp({T(F32, {2, 3}), T(F32, {3, 4})}, Opcode::kDotGeneral, {T(F32, {2, 4})},
                  dims({2}))
                .Error(),
            "stablehlo.dot_general at model.py:41:7: lhs_contracting_dimensions[0] = 2 is out of "
            "range for rank 2");
  EXPECT_EQ(OneOp({T(F32, {3, 2}), T(F32, {3, 4})}, Opcode::kDotGeneral, {T(F32, {2, 4})},
                  dims({1}))
                .Error(),
            "stablehlo.dot_general at model.py:41:7: contracting dimension sizes differ: lhs "
            "dimension 1 is 2, rhs dimension 0 is 3");
}

AttributeMap Conv2d() {
  return Attrs({{"window_strides", Attribute::Ints({2, 1})},
                {"padding", Attribute::Ints({1, 1, 0, 0})},
                {"input_batch_dimension", Attribute::Int(0)},
                {"input_feature_dimension", Attribute::Int(3)},
                {"input_spatial_dimensions", Attribute::Ints({1, 2})},
                {"kernel_input_feature_dimension", Attribute::Int(2)},
                {"kernel_output_feature_dimension", Attribute::Int(3)},
                {"kernel_spatial_dimensions", Attribute::Ints({0, 1})},
                {"output_batch_dimension", Attribute::Int(0)},
                {"output_feature_dimension", Attribute::Int(3)},
                {"output_spatial_dimensions", Attribute::Ints({1, 2})},
                {"feature_group_count", Attribute::Int(1)},
                {"batch_group_count", Attribute::Int(1)}});
}

TEST(VerifierTest, Convolution) {
  // NHWC 1x8x8x3 * HWIO 3x3x3x16, stride (2, 1), pad H by 1: H (8+2-3)/2+1 = 4, W 8-3+1 = 6.
  EXPECT_EQ(OneOp({T(F32, {1, 8, 8, 3}), T(F32, {3, 3, 3, 16})}, Opcode::kConvolution,
                  {T(F32, {1, 4, 6, 16})}, Conv2d())
                .Error(),
            "OK");
  EXPECT_EQ(OneOp({T(F32, {1, 8, 8, 3}), T(F32, {3, 3, 3, 16})}, Opcode::kConvolution,
                  {T(F32, {1, 8, 8, 16})}, Conv2d())
                .Error(),
            "stablehlo.convolution at model.py:41:7: result shape tensor<1x8x8x16xf32> does not "
            "match the inferred shape [1, 4, 6, 16]");
  EXPECT_EQ(OneOp({T(F32, {1, 8, 8, 4}), T(F32, {3, 3, 3, 16})}, Opcode::kConvolution,
                  {T(F32, {1, 4, 6, 16})}, Conv2d())
                .Error(),
            "stablehlo.convolution at model.py:41:7: input feature size 4 / feature_group_count 1 "
            "differs from kernel input feature size 3");
}

TEST(VerifierTest, GatherInfersItsResult) {
  // Rows of a 5x4 matrix picked by 3 indices: result 3x4.
  auto attrs = Attrs({{"offset_dims", Attribute::Ints({1})},
                      {"collapsed_slice_dims", Attribute::Ints({0})},
                      {"start_index_map", Attribute::Ints({0})},
                      {"index_vector_dim", Attribute::Int(1)},
                      {"slice_sizes", Attribute::Ints({1, 4})}});
  EXPECT_EQ(OneOp({T(F32, {5, 4}), T(S32, {3, 1})}, Opcode::kGather, {T(F32, {3, 4})}, attrs)
                .Error(),
            "OK");
  EXPECT_EQ(OneOp({T(F32, {5, 4}), T(S32, {3, 1})}, Opcode::kGather, {T(F32, {4, 3})}, attrs)
                .Error(),
            "stablehlo.gather at model.py:41:7: result type tensor<4x3xf32> does not match the "
            "inferred tensor<3x4xf32>");
  attrs.Set("slice_sizes", Attribute::Ints({2, 4}));
  EXPECT_EQ(OneOp({T(F32, {5, 4}), T(S32, {3, 1})}, Opcode::kGather, {T(F32, {3, 4})}, attrs)
                .Error(),
            "stablehlo.gather at model.py:41:7: slice_sizes[0] = 2 of a collapsed dimension must "
            "be at most 1");
}

TEST(VerifierTest, ReduceChecksItsBody) {
  OneOp ok({T(F32, {2, 3}), T(F32, {})});
  Computation* body = Binary(ok.module, F32);
  ok.Build(Opcode::kReduce, {ok.main->parameter(0), ok.main->parameter(1)}, {T(F32, {2})},
           Attrs({{"dimensions", Attribute::Ints({1})}}), {body});
  EXPECT_EQ(ok.Error(), "OK");

  OneOp bad({T(F32, {2, 3}), T(F32, {})});
  Computation* int_body = Binary(bad.module, S32);
  bad.Build(Opcode::kReduce, {bad.main->parameter(0), bad.main->parameter(1)}, {T(F32, {2})},
            Attrs({{"dimensions", Attribute::Ints({1})}}), {int_body});
  EXPECT_EQ(bad.Error(),
            "stablehlo.reduce at model.py:41:7: the body takes (tensor<i32>, tensor<i32>) but "
            "must take (tensor<f32>, tensor<f32>)");
}

TEST(VerifierTest, WhileSignature) {
  OneOp w({T(S32, {})});
  Computation* cond = w.module.AddRegion("cond");
  Value* c0 = cond->AddParameter(T(S32, {}));
  cond->AddInstruction(Opcode::kReturn, {c0}, {});  // returns i32, not i1
  Computation* body = w.module.AddRegion("body");
  Value* b0 = body->AddParameter(T(S32, {}));
  body->AddInstruction(Opcode::kReturn, {b0}, {});
  w.Build(Opcode::kWhile, {w.main->parameter(0)}, {T(S32, {})}, {}, {cond, body});
  EXPECT_EQ(w.Error(),
            "stablehlo.while at model.py:41:7: cond returns (tensor<i32>) but must return "
            "(tensor<i1>)");
}

TEST(VerifierTest, BranchesTakeTheOperandsAfterTheSelector) {
  // An if whose captured operand is explicit: each branch takes it and returns the results.
  auto build = [](ValueType branch_param) {
    auto op = std::make_unique<OneOp>(std::vector<ValueType>{T(PRED, {}), T(F32, {4})});
    std::vector<Computation*> branches;
    for (const char* name : {"then", "else"}) {
      Computation* b = op->module.AddRegion(name);
      Value* p = b->AddParameter(branch_param);
      b->AddInstruction(Opcode::kReturn, {p}, {});
      branches.push_back(b);
    }
    op->Build(Opcode::kIf, {op->main->parameter(0), op->main->parameter(1)}, {T(F32, {4})}, {},
              branches);
    return op;
  };
  EXPECT_EQ(build(T(F32, {4}))->Error(), "OK");
  EXPECT_EQ(build(T(F32, {5}))->Error(),
            "stablehlo.if at model.py:41:7: branch 0 takes (tensor<5xf32>) but must take "
            "(tensor<4xf32>)");
}

TEST(VerifierTest, StructureAndCalls) {
  // A use before its definition.
  Module m;
  Computation* main = *m.AddFunction("main");
  Value* p = main->AddParameter(T(F32, {}));
  Instruction* add = main->AddInstruction(Opcode::kAdd, {p, p}, {T(F32, {})}, {}, {}, Loc());
  Instruction* neg = main->AddInstruction(Opcode::kNegate, {p}, {T(F32, {})}, {}, {}, Loc());
  add->set_operand(1, neg->result());
  main->AddInstruction(Opcode::kReturn, {add->result()}, {});
  EXPECT_EQ(std::string(Verify(m).message()),
            "stablehlo.add at model.py:41:7: operand 1 is not defined before its use in @main");

  // A call whose operand types do not match the callee.
  Module m2;
  Computation* f = *m2.AddFunction("f");
  f->AddInstruction(Opcode::kReturn, {f->AddParameter(T(F32, {}))}, {});
  Computation* main2 = *m2.AddFunction("main");
  Value* q = main2->AddParameter(T(S32, {}));
  Instruction* call = main2->AddInstruction(Opcode::kCall, {q}, {T(F32, {})}, {}, {}, Loc());
  call->set_callee(f);
  main2->AddInstruction(Opcode::kReturn, {call->result()}, {});
  EXPECT_EQ(std::string(Verify(m2).message()),
            "func.call at model.py:41:7: operand 0 has type tensor<i32> but @f takes tensor<f32>");
}

TEST(VerifierTest, Collectives) {
  AttributeMap attrs = Attrs({{"all_gather_dim", Attribute::Int(1)},
                              {"replica_groups",
                               Attribute::OfLiteral(*Literal::FromValues<int64_t>(
                                   {1, 2}, std::vector<int64_t>{0, 1}))}});
  EXPECT_EQ(OneOp({T(F32, {2, 2})}, Opcode::kAllGather, {T(F32, {2, 4})}, attrs).Error(), "OK");
  EXPECT_EQ(OneOp({T(F32, {2, 2})}, Opcode::kAllGather, {T(F32, {2, 3})}, attrs).Error(),
            "stablehlo.all_gather at model.py:41:7: result 0 dimension 1 has size 3, expected a "
            "multiple of 2");
}

}  // namespace
}  // namespace ember::ir
