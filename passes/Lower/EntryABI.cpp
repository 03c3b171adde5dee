//===- EntryABI.cpp - void loom_entry(void **buffers) ---------------------===//
//
// The runtime must call the compiled program without knowing MLIR's memref
// descriptors. After bufferization the entry takes one static, identity-
// layout memref per input, weight and (out-parameter) output; this pass adds
//   func.func @loom_entry(%buffers: !llvm.ptr)
// which loads the i-th pointer, wraps it in a descriptor (allocated = aligned
// = the pointer, offset 0, the static sizes and row-major strides) and calls
// the entry. A pipelined program gets one wrapper per stage function,
// `loom_entry_stage<k>`, and a step's update function (--loom-optimizer-step
// of a micro-batched or pipelined step) one of its own, `loom_update` or
// `loom_update_stage<k>`. The descriptor is built in the LLVM dialect and cast
// to the memref type; the LLVM conversion folds the cast pair away.
//
//===----------------------------------------------------------------------===//

#include "loom/Passes/Lower.h"
#include "loom/Target/RuntimeABI.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

namespace mlir::loom {
#define GEN_PASS_DEF_LOOMENTRYABI
#include "passes/Lower/Passes.h.inc"
} // namespace mlir::loom

using namespace mlir;
using namespace mlir::loom;

namespace {
struct EntryABIPass : mlir::loom::impl::LoomEntryABIBase<EntryABIPass> {
  using LoomEntryABIBase::LoomEntryABIBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> functions = entryFunctions(module, entry);
    if (functions.empty()) {
      mlir::emitError(module.getLoc(), "loom-entry-abi: no entry function '")
          << entry << "'";
      return signalPassFailure();
    }
    for (func::FuncOp func : functions)
      if (failed(wrap(module, func, entrySymbol(pipelineStageOf(func)))))
        return signalPassFailure();
    for (func::FuncOp func : updateFunctions(module, entry))
      if (failed(wrap(module, func, updateEntrySymbol(pipelineStageOf(func)))))
        return signalPassFailure();
    // Collectives and process indices are lowered by now; the grids they
    // named have no meaning in LLVM IR.
    for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>()))
      grid.erase();
  }

  LogicalResult wrap(ModuleOp module, func::FuncOp func, StringRef name) {
    MLIRContext *ctx = &getContext();
    if (func.getNumResults() != 0)
      return func.emitOpError("still returns values after bufferization; the "
                              "entry ABI needs every result as an out-parameter");
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
      auto memref = dyn_cast<MemRefType>(type);
      if (!memref || !memref.hasStaticShape() ||
          !memref.getLayout().isIdentity())
        return func.emitOpError("argument #")
               << i << " has type " << type
               << "; the entry ABI passes only static, identity-layout buffers";
    }
    if (module.lookupSymbol(name))
      return func.emitOpError("cannot get an entry wrapper: the module already "
                              "defines '")
             << name << "'";

    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    Location loc = func.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = b.getI64Type();
    auto wrapper = func::FuncOp::create(b, loc, name,
                                        b.getFunctionType({ptr}, {}));
    Block *body = wrapper.addEntryBlock();
    b.setInsertionPointToStart(body);
    Value buffers = body->getArgument(0);
    auto constant = [&](int64_t v) {
      return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
    };
    SmallVector<Value> args;
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
      auto memref = cast<MemRefType>(type);
      Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, buffers,
                                       ArrayRef<LLVM::GEPArg>{int32_t(i)});
      Value data = LLVM::LoadOp::create(b, loc, ptr, slot);
      int64_t rank = memref.getRank();
      SmallVector<Type> fields = {ptr, ptr, i64};
      if (rank > 0) {
        fields.push_back(LLVM::LLVMArrayType::get(i64, rank));
        fields.push_back(LLVM::LLVMArrayType::get(i64, rank));
      }
      auto descType = LLVM::LLVMStructType::getLiteral(ctx, fields);
      Value desc = LLVM::PoisonOp::create(b, loc, descType);
      desc = LLVM::InsertValueOp::create(b, loc, desc, data, ArrayRef<int64_t>{0});
      desc = LLVM::InsertValueOp::create(b, loc, desc, data, ArrayRef<int64_t>{1});
      desc = LLVM::InsertValueOp::create(b, loc, desc, constant(0), ArrayRef<int64_t>{2});
      int64_t stride = 1;
      for (int64_t d = rank - 1; d >= 0; --d) {
        desc = LLVM::InsertValueOp::create(
            b, loc, desc, constant(memref.getDimSize(d)),
            ArrayRef<int64_t>{3, d});
        desc = LLVM::InsertValueOp::create(b, loc, desc, constant(stride),
                                           ArrayRef<int64_t>{4, d});
        stride *= memref.getDimSize(d);
      }
      args.push_back(
          UnrealizedConversionCastOp::create(b, loc, memref, desc).getResult(0));
    }
    func::CallOp::create(b, loc, func, args);
    func::ReturnOp::create(b, loc);
    return success();
  }
};
} // namespace
