//===- CPUArtifact.cpp - compile loom IR into a loom-run artifact ---------===//
//
// Runs the loom-lower-to-cpu pipeline in two halves. Between them the entry
// function's signature (each pipeline stage's, for a pipelined plan) is the
// per-device interface: its arguments (inputs, then weights) and results
// carry `loom.name`, `loom.weight`, `loom.sharding` and `loom.batch_dim`,
// which become manifest.json; a step's update function's signature becomes
// its `update` record. The LLVM dialect is then
// translated to LLVM IR, optimized and compiled to an object for the host
// in-process; the system linker driver (`cc`) turns the object into
// program.so. Undefined MPI and loomrt symbols are left for the dynamic
// loader: loom-run loads the program into a process that already holds
// libmpi and libloomrt.
//
// Everything is written into a temporary sibling directory that replaces
// the artifact directory only once complete.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/CPUArtifact.h"

#include "dialects/Loom/IR/LoomOps.h"
#include "loom/Autodiff/Differentiate.h"
#include "loom/Autodiff/OptimizerStep.h"
#include "loom/Memory/StaticMemoryPlanIR.h"
#include "loom/Passes/Lower.h"
#include "loom/Target/RuntimeABI.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::loom;

static llvm::json::Array toJSON(ArrayRef<int64_t> values) {
  llvm::json::Array array;
  for (int64_t v : values)
    array.push_back(v);
  return array;
}

/// One manifest tensor: name, dtype, global and local shape, split axes.
static FailureOr<llvm::json::Object>
describeTensor(func::FuncOp func, StringRef what, unsigned index, Type type,
               DictionaryAttr attrs, StringRef fallbackName) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  std::optional<int32_t> dtype =
      tensor ? runtimeDtype(tensor.getElementType()) : std::nullopt;
  if (!tensor || !tensor.hasStaticShape() || !dtype)
    return func.emitOpError() << what << " #" << index << " has type " << type
                              << "; an artifact passes static tensors of "
                                 "float, integer or bool elements only";
  std::string name = fallbackName.str();
  if (auto attr = attrs ? attrs.getAs<StringAttr>("loom.name") : nullptr)
    name = attr.str();
  llvm::json::Object record{{"name", name},
                            {"dtype", kRuntimeDtypeNames[*dtype]},
                            {"local_shape", toJSON(tensor.getShape())}};
  auto sharding =
      attrs ? attrs.getAs<DictionaryAttr>("loom.sharding") : nullptr;
  llvm::json::Array split;
  if (sharding) {
    record["shape"] = toJSON(sharding.getAs<DenseI64ArrayAttr>("shape").asArrayRef());
    for (Attribute dim : sharding.getAs<ArrayAttr>("split")) {
      llvm::json::Array axes;
      for (Attribute axis : cast<ArrayAttr>(dim))
        axes.push_back(cast<IntegerAttr>(axis).getInt());
      split.push_back(std::move(axes));
    }
  } else {
    record["shape"] = toJSON(tensor.getShape());
    for (int64_t d = 0; d < tensor.getRank(); ++d)
      split.push_back(llvm::json::Array());
  }
  record["split"] = std::move(split);
  if (auto dim = attrs ? attrs.getAs<IntegerAttr>("loom.batch_dim") : nullptr)
    record["batch_dim"] = dim.getInt();
  return record;
}

/// The inputs, weights and outputs of one partitioned entry function, in
/// the order its C entry takes their buffers; the arenas, when it has them
/// (the device's, then the host's), and then the micro-batch index come
/// between the weights and the outputs.
static FailureOr<llvm::json::Object>
describeFunction(func::FuncOp func, const CPUArtifactOptions &options) {
  llvm::json::Array inputs, weights, outputs;
  std::optional<int64_t> arenaBytes, hostArenaBytes;
  std::optional<int64_t> microBatchPlaces;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    DictionaryAttr attrs = func.getArgAttrDict(i);
    // The micro-batch a call runs, where the arena's places differ by
    // micro-batch (loom-arena-buffers): the last argument, an int64; the
    // attribute says how many micro-batches' places the program holds.
    if (attrs && attrs.get(kMicroBatchPlacesAttr)) {
      auto memref = dyn_cast<MemRefType>(func.getArgumentTypes()[i]);
      auto places = attrs.getAs<IntegerAttr>(kMicroBatchPlacesAttr);
      auto micro = func->getAttrOfType<IntegerAttr>(kMicroBatchesAttr);
      auto bad = [&](StringRef why) {
        return func.emitOpError("argument #")
               << i << " (" << kMicroBatchPlacesAttr
               << ", the micro-batch index) " << why;
      };
      if (!memref || memref.getShape() != ArrayRef<int64_t>{1} ||
          !memref.getElementType().isInteger(64))
        return bad("is not a memref<1xi64>");
      if (!arenaBytes)
        return bad("follows no device arena");
      if (i + 1 != func.getNumArguments())
        return bad("is not the last argument");
      if (!places || !micro || places.getInt() != micro.getInt() ||
          micro.getInt() < 2)
        return bad(
            "must hold the function's " + kMicroBatchesAttr.str() +
            " (two or more), the micro-batches whose places the program holds");
      microBatchPlaces = places.getInt();
      continue;
    }
    // The static memory plan's arenas (loom-arena-buffers): the runtime
    // allocates them once and passes them after the weights.
    if (auto tier = attrs ? attrs.getAs<StringAttr>(kArenaArgAttr) : nullptr) {
      auto memref = dyn_cast<MemRefType>(func.getArgumentTypes()[i]);
      bool device = tier.getValue() == "device", host = tier.getValue() == "host";
      if (!memref || memref.getRank() != 1 || !memref.hasStaticShape() ||
          !memref.getElementType().isInteger(8) || (!device && !host) ||
          (device ? arenaBytes || hostArenaBytes : hostArenaBytes.has_value()))
        return func.emitOpError("argument #")
               << i << " is marked " << kArenaArgAttr
               << " but is not a static memref of bytes, names a tier other than "
                  "\"device\" or \"host\", or follows an arena it should precede";
      (device ? arenaBytes : hostArenaBytes) = memref.getDimSize(0);
      continue;
    }
    if (arenaBytes || hostArenaBytes)
      return func.emitOpError("argument #")
             << i << " follows an arena; the arenas are the last arguments";
    auto weight = attrs ? attrs.getAs<DictionaryAttr>("loom.weight") : nullptr;
    if (!weight && !weights.empty())
      return func.emitOpError("input argument #")
             << i << " follows a weight argument; the runtime passes all "
                     "inputs before all weights";
    FailureOr<llvm::json::Object> record =
        describeTensor(func, "argument", i, func.getArgumentTypes()[i], attrs,
                       ("input_" + Twine(i)).str());
    if (failed(record))
      return failure();
    if (!weight) {
      inputs.push_back(std::move(*record));
      continue;
    }
    (*record)["name"] = weight.getAs<StringAttr>("name").getValue();
    (*record)["role"] = weight.getAs<StringAttr>("role").getValue();
    if (auto tier = weight.getAs<StringAttr>("tier"))
      (*record)["tier"] = tier.getValue();
    // Its place in its tier's arena (loom-weights-to-arguments), on this
    // rank.
    if (auto place = weightArenaBytes(weight, func.getArgumentTypes()[i]))
      (*record)["arena_offset"] = place->first;
    // Optimizer state without a file starts at zero (the runtime fills it).
    SmallString<256> file(weight.getAs<StringAttr>("file").getValue());
    if (!file.empty()) {
      if (!llvm::sys::path::is_absolute(file)) {
        SmallString<256> joined(options.weightsDir);
        llvm::sys::path::append(joined, file);
        file = joined;
      }
      llvm::sys::fs::make_absolute(file);
      (*record)["file"] = std::string(file.str());
      (*record)["offset"] = weight.getAs<IntegerAttr>("offset").getInt();
      // The file's narrower elements, widened at load (a master copy).
      if (auto fileType = weight.getAs<TypeAttr>("file_type")) {
        std::optional<int32_t> dtype = runtimeDtype(fileType.getValue());
        if (!dtype)
          return func.emitOpError("weight '")
                 << weight.getAs<StringAttr>("name").getValue()
                 << "' is stored in its file as " << fileType.getValue()
                 << ", which the runtime does not read";
        (*record)["file_dtype"] = kRuntimeDtypeNames[*dtype];
      }
    }
    weights.push_back(std::move(*record));
  }
  llvm::StringMap<llvm::json::Object *> weightByName;
  for (llvm::json::Value &w : weights)
    weightByName[*w.getAsObject()->getString("name")] = w.getAsObject();
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    // An update is written back into its weight (loom-write-back-updates),
    // not returned.
    if (auto updates = func.getResultAttrOfType<StringAttr>(i, kUpdatesAttr)) {
      if (llvm::json::Object *w = weightByName.lookup(updates.getValue()))
        (*w)["updated"] = true;
      continue;
    }
    FailureOr<llvm::json::Object> record =
        describeTensor(func, "result", i, func.getResultTypes()[i],
                       func.getResultAttrDict(i), ("output_" + Twine(i)).str());
    if (failed(record))
      return failure();
    // A weight's gradient over a step of several micro-batches is the sum
    // of theirs (the IR computes one micro-batch's).
    auto micro = func->getAttrOfType<IntegerAttr>(kMicroBatchesAttr);
    if (micro && micro.getInt() > 1 && func.getResultAttr(i, kGradientOfAttr))
      (*record)["sum_over_micro_batches"] = true;
    outputs.push_back(std::move(*record));
  }
  if (hostArenaBytes && !arenaBytes)
    return func.emitOpError("has a host arena argument (")
           << kArenaArgAttr << " = \"host\") but no device arena before it";
  llvm::json::Object described{{"inputs", std::move(inputs)},
                               {"weights", std::move(weights)},
                               {"outputs", std::move(outputs)}};
  if (arenaBytes)
    described["arena_bytes"] = *arenaBytes;
  if (hostArenaBytes)
    described["host_arena_bytes"] = *hostArenaBytes;
  if (microBatchPlaces)
    described["micro_batch_places"] = *microBatchPlaces;
  return described;
}

/// The `update` record of a step's update function (run once a step after
/// the micro-batches): its entry, the weights it reads and writes back,
/// which are the step's where they share a name, and the step's arenas
/// where it moves something into them (`arena_bytes`, `host_arena_bytes`,
/// the step's own sizes: the same arenas). It takes nothing else.
static FailureOr<llvm::json::Object>
describeUpdate(func::FuncOp update, const llvm::json::Object &step,
               const CPUArtifactOptions &options) {
  FailureOr<llvm::json::Object> d = describeFunction(update, options);
  if (failed(d))
    return failure();
  if (!d->getArray("inputs")->empty() || !d->getArray("outputs")->empty() ||
      d->get("micro_batch_places"))
    return update.emitOpError("'")
           << update.getSymName()
           << "' is a step's update, which must take only weights and the "
              "step's arenas (no inputs, outputs or micro-batch places)";
  llvm::json::Object record{
      {"entry", updateEntrySymbol(pipelineStageOf(update))},
      {"weights", std::move(*d->getArray("weights"))}};
  for (llvm::StringRef key : {"arena_bytes", "host_arena_bytes"}) {
    std::optional<int64_t> bytes = d->getInteger(key);
    if (!bytes)
      continue;
    if (step.getInteger(key) != bytes)
      return update.emitOpError("'")
             << update.getSymName() << "' takes a " << key << " of " << *bytes
             << ", but its step's arena is not that size: an update runs in "
                "the step's arenas";
    record[key] = *bytes;
  }
  return record;
}

/// The manifest of the partitioned entry function, or of its pipeline
/// stages: then `stages` lists each stage's entry and buffers (every stage
/// takes all model inputs; only the last has outputs) and the top level
/// keeps the model's inputs and outputs for the user. A step's update
/// function is its `update` record (each stage's own).
static FailureOr<llvm::json::Object>
describeEntry(ModuleOp module, ArrayRef<func::FuncOp> functions,
              ArrayRef<func::FuncOp> updates,
              const CPUArtifactOptions &options) {
  llvm::json::Object manifest{{"format", "loom-artifact"},
                              {"version", 1},
                              {"backend", "cpu"},
                              {"library", "program.so"}};
  int64_t ranks = 1;
  auto grids = llvm::to_vector(module.getOps<shard::GridOp>());
  if (grids.empty()) {
    manifest["grid"] = llvm::json::Object{{"name", ""}, {"shape", llvm::json::Array()}};
  } else {
    ArrayRef<int64_t> shape = grids.front().getShape();
    for (int64_t size : shape)
      ranks *= size;
    manifest["grid"] = llvm::json::Object{
        {"name", grids.front().getSymName()}, {"shape", toJSON(shape)}};
  }
  manifest["ranks"] = ranks;
  if (auto m = functions.front()->getAttrOfType<IntegerAttr>(kMicroBatchesAttr))
    manifest["micro_batches"] = m.getInt();

  if (!updates.empty() && updates.size() != functions.size())
    return func::FuncOp(updates.front()).emitOpError("'")
           << func::FuncOp(updates.front()).getSymName() << "' is one of "
           << updates.size() << " update functions, but '"
           << func::FuncOp(functions.front()).getSymName() << "' is one of "
           << functions.size() << " stage functions; each stage has one";
  SmallVector<llvm::json::Object> described;
  for (auto [k, func] : llvm::enumerate(functions)) {
    FailureOr<llvm::json::Object> d = describeFunction(func, options);
    if (failed(d))
      return failure();
    if (!updates.empty()) {
      FailureOr<llvm::json::Object> update =
          describeUpdate(updates[k], *d, options);
      if (failed(update))
        return failure();
      (*d)["update"] = std::move(*update);
    }
    described.push_back(std::move(*d));
  }
  if (!pipelineStageOf(functions.front())) {
    manifest["entry"] = entrySymbol();
    for (auto &field : described.front())
      manifest[field.first] = std::move(field.second);
    return manifest;
  }
  FailureOr<std::pair<shard::GridOp, int64_t>> grid =
      pipelineGrid(module, functions.front());
  if (failed(grid))
    return failure();
  manifest["pipeline_axis"] = grid->second;
  manifest["inputs"] = llvm::json::Array(*described.front().getArray("inputs"));
  manifest["outputs"] = llvm::json::Array(*described.back().getArray("outputs"));
  manifest["weights"] = llvm::json::Array();
  llvm::json::Array stages;
  for (auto [k, d] : llvm::enumerate(described)) {
    d["entry"] = entrySymbol(static_cast<int64_t>(k));
    stages.push_back(std::move(d));
  }
  manifest["stages"] = std::move(stages);
  return manifest;
}

/// LLVM dialect -> optimized native object at `path`.
static LogicalResult emitObject(ModuleOp module, unsigned optLevel,
                                StringRef path) {
  MLIRContext *ctx = module.getContext();
  registerBuiltinDialectTranslation(*ctx);
  registerLLVMDialectTranslation(*ctx);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "loom-program");
  if (!llvmModule)
    return mlir::emitError(module.getLoc(), "cannot translate to LLVM IR");

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return mlir::emitError(module.getLoc(), "no LLVM target for the host: ")
           << error;
  llvm::SubtargetFeatures features;
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    features.AddFeature(feature.first(), feature.second);
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), features.getString(),
      llvm::TargetOptions(), llvm::Reloc::PIC_, std::nullopt,
      optLevel >= 2 ? llvm::CodeGenOptLevel::Aggressive
                    : llvm::CodeGenOptLevel::Default));
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(triple);
  if (llvm::Error err = makeOptimizingTransformer(optLevel, 0, machine.get())(
          llvmModule.get()))
    return mlir::emitError(module.getLoc(), "LLVM optimization failed: ")
           << llvm::toString(std::move(err));

  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return mlir::emitError(module.getLoc(), "cannot write '")
           << path << "': " << ec.message();
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, out, nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return mlir::emitError(module.getLoc(),
                           "the host target cannot emit object files");
  codegen.run(*llvmModule);
  out.close();
  if (out.has_error())
    return mlir::emitError(module.getLoc(), "cannot write '") << path << "'";
  return success();
}

static LogicalResult linkSharedLibrary(Location loc, StringRef linker,
                                       StringRef object, StringRef library) {
  llvm::ErrorOr<std::string> program = llvm::sys::findProgramByName(linker);
  if (!program)
    return mlir::emitError(loc, "linker driver '")
           << linker << "' not found on PATH";
  SmallVector<StringRef> args = {*program, "-shared", "-o", library, object,
                                 "-lm"};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(*program, args, std::nullopt, {}, 0, 0,
                                     &error);
  if (rc != 0)
    return mlir::emitError(loc, "linking '")
           << library << "' failed (" << *program << " exit " << rc
           << (error.empty() ? "" : ": " + error) << ")";
  return success();
}

/// Runs `build` into a fresh sibling of `dir`, then swaps it in.
static LogicalResult
writeDirectoryAtomically(Location loc, StringRef dir,
                         llvm::function_ref<LogicalResult(StringRef)> build) {
  if (llvm::sys::fs::exists(dir) &&
      !llvm::sys::fs::exists(dir + "/manifest.json")) {
    llvm::sys::fs::file_status status;
    bool isEmptyDir = false;
    if (llvm::sys::fs::is_directory(dir)) {
      std::error_code ec;
      isEmptyDir = llvm::sys::fs::directory_iterator(dir, ec) ==
                   llvm::sys::fs::directory_iterator();
    }
    if (!isEmptyDir)
      return mlir::emitError(loc, "'")
             << dir << "' exists and is not an artifact; not replacing it";
  }
  std::string staging =
      (dir + ".partial-" + Twine(llvm::sys::Process::getProcessId())).str();
  llvm::sys::fs::remove_directories(staging);
  if (std::error_code ec = llvm::sys::fs::create_directories(staging))
    return mlir::emitError(loc, "cannot create '")
           << staging << "': " << ec.message();
  if (failed(build(staging))) {
    llvm::sys::fs::remove_directories(staging);
    return failure();
  }
  llvm::sys::fs::remove_directories(dir);
  if (std::error_code ec = llvm::sys::fs::rename(staging, dir)) {
    llvm::sys::fs::remove_directories(staging);
    return mlir::emitError(loc, "cannot move the artifact into '")
           << dir << "': " << ec.message();
  }
  return success();
}

LogicalResult mlir::loom::writeCPUArtifact(ModuleOp module,
                                           const CPUArtifactOptions &options) {
  LowerToCPUOptions lowerOptions;
  lowerOptions.entry = options.entry;
  lowerOptions.allowExcessPrecision = options.allowExcessPrecision;
  PassManager partition(module.getContext());
  buildPartitionPipeline(partition, lowerOptions);
  if (failed(partition.run(module)))
    return failure();
  SmallVector<func::FuncOp> functions = entryFunctions(module, options.entry);
  if (functions.empty())
    return mlir::emitError(module.getLoc(), "no entry function '")
           << options.entry << "'";
  FailureOr<llvm::json::Object> manifest = describeEntry(
      module, functions, updateFunctions(module, options.entry), options);
  if (failed(manifest))
    return failure();

  PassManager lower(module.getContext());
  buildPartitionedToLLVMPipeline(lower, lowerOptions);
  if (failed(lower.run(module)))
    return failure();
  if (!options.dumpLLVMDialect.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream dump(options.dumpLLVMDialect, ec);
    if (ec)
      return mlir::emitError(module.getLoc(), "cannot write '")
             << options.dumpLLVMDialect << "': " << ec.message();
    module.print(dump);
  }

  return writeDirectoryAtomically(
      module.getLoc(), options.outputDir, [&](StringRef staging) {
        SmallString<256> object(staging), library(staging), manifestPath(staging);
        llvm::sys::path::append(object, "program.o");
        llvm::sys::path::append(library, "program.so");
        llvm::sys::path::append(manifestPath, "manifest.json");
        if (failed(emitObject(module, options.optLevel, object)) ||
            failed(linkSharedLibrary(module.getLoc(), options.linker, object,
                                     library)))
          return failure();
        llvm::sys::fs::remove(object);
        std::error_code ec;
        llvm::raw_fd_ostream out(manifestPath, ec);
        if (ec) {
          mlir::emitError(module.getLoc(), "cannot write '")
              << manifestPath << "': " << ec.message();
          return failure();
        }
        out << llvm::formatv("{0:2}", llvm::json::Value(std::move(*manifest)))
            << "\n";
        return success();
      });
}
