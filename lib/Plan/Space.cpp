//===- Space.cpp - strategies of loom ops and what they cost -------------===//
//
// Implements Space.h. The value analysis (activations, gradients, saved
// values) follows the estimator's rules so the search and the estimate agree
// on what each plan costs; the estimator remains the reference that re-prices
// the search's finalists.
//
//===----------------------------------------------------------------------===//

#include "Space.h"
#include "loom/Cost/Estimate.h"

#include "dialects/Loom/IR/Gradients.h"
#include "dialects/Loom/IR/LoomOps.h"
#include "dialects/Loom/IR/ShardValues.h"
#include "loom/Cost/Collectives.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::search;
using ::loom::TensorLayout;

//===----------------------------------------------------------------------===//
// Grids
//===----------------------------------------------------------------------===//

int64_t SearchGrid::devices() const {
  int64_t n = pp;
  for (int64_t a : axes)
    n *= a;
  return n;
}

SmallVector<int64_t, 4> SearchGrid::irShape() const {
  SmallVector<int64_t, 4> shape(axes.begin(), axes.end());
  if (pp > 1)
    shape.push_back(pp);
  return shape;
}

int64_t SearchGrid::size(ArrayRef<int16_t> which) const {
  int64_t n = 1;
  for (int16_t a : which)
    n *= axes[a];
  return n;
}

::loom::AxisSpan SearchGrid::span(ArrayRef<int16_t> which) const {
  SmallVector<::loom::AxisSpan, 4> parts;
  for (int16_t a : which)
    parts.push_back(spans[a]);
  return ::loom::combineSpans(parts);
}

uint64_t search::layoutKey(const TensorLayout &l) {
  // 5 bits per grid axis: 0 unused, 1 + dim when it splits a dim, 31 partial.
  uint64_t key = 0;
  for (auto [d, axes] : llvm::enumerate(l.splitAxes))
    for (int16_t a : axes)
      key |= uint64_t(d + 1) << (5 * a);
  for (int16_t a : l.partialAxes)
    key |= uint64_t(31) << (5 * a);
  return key;
}

std::vector<TensorLayout> search::tensorLayouts(ArrayRef<int64_t> shape,
                                              const SearchGrid &grid) {
  std::vector<TensorLayout> out;
  TensorLayout cur;
  cur.splitAxes.resize(shape.size());
  SmallVector<int64_t, 4> splitBy(shape.size(), 1);
  std::function<void(unsigned)> rec = [&](unsigned a) {
    if (a == grid.axes.size()) {
      out.push_back(cur);
      return;
    }
    rec(a + 1); // axis a replicates
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] % (splitBy[d] * grid.axes[a]) != 0)
        continue;
      splitBy[d] *= grid.axes[a];
      cur.splitAxes[d].push_back(static_cast<int16_t>(a));
      rec(a + 1);
      cur.splitAxes[d].pop_back();
      splitBy[d] /= grid.axes[a];
    }
  };
  rec(0);
  return out;
}

//===----------------------------------------------------------------------===//
// The program
//===----------------------------------------------------------------------===//

ProgramModel::ProgramModel(func::FuncOp func, const ::loom::ClusterSpec &cluster,
                           std::optional<::loom::Precision> forcedPrecision,
                           bool training)
    : func(func), cluster(cluster), forcedPrecision(forcedPrecision),
      training(training) {
  auto addValue = [&](Value v) -> ValueModel & {
    valueIndex[v] = values.size();
    values.push_back({});
    ValueModel &vm = values.back();
    vm.value = v;
    if (auto t = dyn_cast<RankedTensorType>(v.getType())) {
      vm.shape.assign(t.getShape().begin(), t.getShape().end());
      vm.elementBytes = elementBytes(t.getElementType(), forcedPrecision);
      vm.fullBytes = static_cast<double>(t.getNumElements()) * vm.elementBytes;
    }
    return vm;
  };
  // The batch is the leading dim of the first input, and of every other
  // input whose leading dim has the same extent (an encoder-decoder's
  // target tokens, BERT's mask and segment ids): they are cut into the same
  // micro-batches.
  std::optional<int64_t> batch;
  for (BlockArgument arg : func.getArguments()) {
    ValueModel &vm = addValue(arg);
    vm.activation = true;
    if (vm.shape.empty())
      continue;
    if (arg.getArgNumber() == 0)
      batch = vm.shape[0];
    if (batch && vm.shape[0] == *batch)
      vm.batchDim = 0;
  }

  // A gradient where a result reads a value through float values from a
  // trainable parameter (as --loom-autodiff and the estimator find it).
  DenseSet<Value> gradients;
  if (training)
    gradients = gradientValues(func);
  DenseSet<Value> fromParameter; // float, computed from a trainable one
  func.walk([&](Operation *op) {
    if (!isa<LoomDialect>(op->getDialect()))
      return;
    bool act = false, grad = false, param = false;
    if (auto w = dyn_cast<WeightOp>(op)) {
      weights.push_back(op);
      grad = training && isTrainableParameter(w);
      param = grad;
    }
    bool anyOperand = false, allParam = true;
    for (Value v : llvm::map_range(op->getOperands(), lookThroughShards)) {
      const ValueModel &vm = values[valueIndex.lookup(v)];
      anyOperand = true;
      act |= vm.activation;
      grad |= fromParameter.contains(v);
      allParam &= vm.parameterDerived || !vm.activation;
    }
    param |= anyOperand && allParam && grad;
    for (Value r : op->getResults()) {
      ValueModel &vm = addValue(r);
      bool isFloat = isa<FloatType>(getElementTypeOrSelf(r.getType()));
      if (grad && isFloat)
        fromParameter.insert(r);
      vm.activation = act;
      vm.needsGrad = gradients.contains(r);
      vm.soleReader = soleReadingUse(r) != nullptr;
      vm.parameterDerived = param && !act;
    }
    if (isa<WeightOp, ConstantOp>(op))
      return;

    OpModel om;
    om.op = op;
    if (auto si = dyn_cast<shard::ShardingInterface>(op)) {
      auto iters = si.getLoopIteratorTypes();
      auto maps = si.getIndexingMaps();
      SmallVector<bool> local = getLocalLoops(op);
      om.maps.assign(maps.begin(), maps.end());
      om.loopSizes.assign(iters.size(), 1);
      for (auto [i, it] : llvm::enumerate(iters)) {
        om.reduction.push_back(it == utils::IteratorType::reduction);
        om.local.push_back(i < local.size() && local[i]);
      }
      // Loop extents from any tensor dim a loop indexes directly.
      SmallVector<Value> tensors(op->getOperands());
      llvm::append_range(tensors, op->getResults());
      for (auto [t, map] : llvm::zip(tensors, om.maps)) {
        auto type = dyn_cast<RankedTensorType>(t.getType());
        if (!type)
          continue;
        for (unsigned d = 0; d < map.getNumResults() && d < type.getRank(); ++d)
          if (auto dim = dyn_cast<AffineDimExpr>(map.getResult(d)))
            om.loopSizes[dim.getPosition()] =
                std::max(om.loopSizes[dim.getPosition()], type.getDimSize(d));
      }
      // The batch: a loop indexing an operand's batch dim directly.
      for (auto [i, v] : llvm::enumerate(op->getOperands())) {
        const ValueModel &vm = values[valueIndex.lookup(lookThroughShards(v))];
        if (vm.batchDim < 0 || i >= om.maps.size() ||
            vm.batchDim >= static_cast<int>(om.maps[i].getNumResults()))
          continue;
        if (auto dim = dyn_cast<AffineDimExpr>(om.maps[i].getResult(vm.batchDim))) {
          om.batchLoop = dim.getPosition();
          break;
        }
      }
      if (om.batchLoop >= 0)
        for (auto [r, res] : llvm::enumerate(op->getResults())) {
          unsigned m = op->getNumOperands() + r;
          if (m >= om.maps.size())
            continue;
          for (unsigned d = 0; d < om.maps[m].getNumResults(); ++d)
            if (auto dim = dyn_cast<AffineDimExpr>(om.maps[m].getResult(d)))
              if (static_cast<int>(dim.getPosition()) == om.batchLoop)
                values[valueIndex.lookup(res)].batchDim = d;
        }
    }
    if (auto cost = dyn_cast<CostOpInterface>(op)) {
      om.cls = cost.getCostClass();
      om.contractionFlops = cost.getContractionFlops();
      om.totalFlops = cost.getTotalFlops();
      Type elemTy = op->getNumResults() ? getElementTypeOrSelf(op->getResult(0).getType())
                                        : Type();
      if (isa<CastOp>(op))
        elemTy = getElementTypeOrSelf(op->getOperand(0).getType());
      om.precision = precisionOf(elemTy, forcedPrecision);
    }
    if (training) {
      // (A backward where a result carries a gradient, as the estimator's.)
      if (llvm::any_of(op->getResults(),
                       [&](Value r) { return gradients.contains(r); }))
        for (auto [i, v] : llvm::enumerate(op->getOperands()))
          if (values[valueIndex.lookup(lookThroughShards(v))].needsGrad)
            om.gradOperands.push_back(i);
      om.hasBackward = !om.gradOperands.empty();
      om.contractionGrads =
          isa<AttentionOp>(op)
              ? 2.5
              : static_cast<double>(llvm::count_if(
                    om.gradOperands, [](unsigned i) { return i < 2; }));
      if (om.hasBackward)
        if (auto cost = dyn_cast<CostOpInterface>(op)) {
          SmallVector<Value> keep;
          cost.getSavedForBackward(keep);
          for (Value v : keep) {
            ValueModel &vm = values[valueIndex.lookup(lookThroughShards(v))];
            vm.saved |= vm.activation;
          }
        }
    }
    opIndex[op] = ops.size();
    ops.push_back(std::move(om));
  });
  if (training) {
    // What the step returns stays on the device until its backward ends.
    // (A returned input is the caller's, and not counted.)
    for (Value v : func.getBody().front().getTerminator()->getOperands())
      if (Value r = lookThroughShards(v); r.getDefiningOp())
        if (auto it = valueIndex.find(r); it != valueIndex.end())
          values[it->second].held = values[it->second].activation;
    modelRecomputation();
  }
}

void ProgramModel::modelRecomputation() {
  auto hasBackward = [&](Operation *op) {
    auto it = opIndex.find(op);
    return it != opIndex.end() && ops[it->second].hasBackward;
  };
  auto activation = [&](Value v) { return valueOf(v).activation; };
  auto gradient = [&](Value v) { return valueOf(v).needsGrad; };
  RecomputeFacts facts{hasBackward, activation, gradient};
  for (RecomputeMode mode : {RecomputeMode::None, RecomputeMode::Selective}) {
    unsigned k = regionModel(mode);
    RecomputeRegions regions = selectRecomputation(func, mode, facts);
    for (ValueModel &vm : values)
      vm.kept[k] = vm.activation && regions.keeps(vm.value, vm.saved);
    for (OpModel &o : ops)
      if (auto it = regions.regionOf.find(o.op);
          it != regions.regionOf.end() && !resultsHeldByStep(o.op))
        o.region[k] = static_cast<int>(it->second);
  }
}

bool ProgramModel::isParameter(Operation *weight) const {
  return valueOf(weight->getResult(0)).needsGrad;
}

//===----------------------------------------------------------------------===//
// Strategies
//===----------------------------------------------------------------------===//

void ProgramModel::enumerateStrategies(const SearchGrid &grid, int64_t maxTP,
                                       ArrayRef<bool> wanted) {
  for (auto [i, o] : llvm::enumerate(ops)) {
    o.strategies.clear();
    if (!wanted.empty() && !wanted[i])
      continue;
    Strategy cur(grid.axes.size(), -1);
    SmallVector<int64_t, 6> splitBy(o.loopSizes.size(), 1);
    std::function<void(unsigned)> rec = [&](unsigned a) {
      if (a == grid.axes.size()) {
        if (maxTP > 0) {
          int64_t tp = 1;
          for (auto [l, f] : llvm::enumerate(splitBy))
            if (static_cast<int>(l) != o.batchLoop)
              tp *= f;
          if (tp > maxTP)
            return;
        }
        o.strategies.push_back(cur);
        return;
      }
      cur[a] = -1;
      rec(a + 1);
      for (size_t l = 0; l < o.loopSizes.size(); ++l) {
        if (!o.local[l] || o.loopSizes[l] % (splitBy[l] * grid.axes[a]) != 0)
          continue;
        splitBy[l] *= grid.axes[a];
        cur[a] = static_cast<int8_t>(l);
        rec(a + 1);
        splitBy[l] /= grid.axes[a];
      }
      cur[a] = -1;
    };
    rec(0);
  }
}

static TensorLayout layoutThroughMap(AffineMap map, const Strategy &s,
                                     unsigned rank) {
  TensorLayout l;
  l.splitAxes.resize(rank);
  for (unsigned d = 0; d < rank && d < map.getNumResults(); ++d)
    if (auto dim = dyn_cast<AffineDimExpr>(map.getResult(d)))
      for (auto [a, loop] : llvm::enumerate(s))
        if (loop == static_cast<int>(dim.getPosition()))
          l.splitAxes[d].push_back(static_cast<int16_t>(a));
  return l;
}

TensorLayout ProgramModel::operandLayout(const OpModel &o, const Strategy &s,
                                         unsigned i) const {
  unsigned rank = valueOf(lookThroughShards(o.op->getOperand(i))).shape.size();
  if (i >= o.maps.size())
    return layoutThroughMap(AffineMap(), {}, rank);
  return layoutThroughMap(o.maps[i], s, rank);
}

TensorLayout ProgramModel::resultLayout(const OpModel &o, const Strategy &s,
                                        unsigned r) const {
  unsigned rank = valueOf(o.op->getResult(r)).shape.size();
  unsigned m = o.op->getNumOperands() + r;
  if (m >= o.maps.size())
    return layoutThroughMap(AffineMap(), {}, rank);
  return layoutThroughMap(o.maps[m], s, rank);
}

::loom::GridAxes ProgramModel::reductionAxes(const OpModel &o, const Strategy &s) const {
  ::loom::GridAxes axes;
  for (auto [a, loop] : llvm::enumerate(s))
    if (loop >= 0 && o.reduction[loop])
      axes.push_back(static_cast<int16_t>(a));
  return axes;
}

::loom::GridAxes ProgramModel::gradientPartialAxes(const OpModel &o,
                                                   const Strategy &s,
                                                   unsigned i) const {
  ::loom::GridAxes partial;
  if (i >= o.maps.size())
    return partial;
  for (auto [a, loop] : llvm::enumerate(s))
    if (loop >= 0 && !o.maps[i].isFunctionOfDim(loop))
      partial.push_back(static_cast<int16_t>(a));
  return partial;
}

//===----------------------------------------------------------------------===//
// Costs
//===----------------------------------------------------------------------===//

double ProgramModel::roofline(::loom::OpClass cls, double flops, double bytes,
                              ::loom::Precision p) const {
  return ::loom::rooflineSeconds(cluster.device, cls, flops, bytes, p);
}

double ProgramModel::collectiveSeconds(::loom::CollectiveKind kind,
                                       ArrayRef<int16_t> axes, double bytes,
                                       const SearchGrid &grid) const {
  if (axes.empty() || bytes <= 0 || grid.size(axes) == 1)
    return 0;
  return ::loom::collectiveCost(cluster, kind, bytes, grid.span(axes)).seconds;
}

double ProgramModel::stepSeconds(const ::loom::CollectiveStep &step,
                                 const SearchGrid &grid) const {
  return collectiveSeconds(step.kind, step.axes, step.bytes, grid) +
         ::loom::rearrangeSeconds(cluster.device, step.rearrangedBytes);
}

double ProgramModel::reshardSeconds(double fullBytes, const TensorLayout &from,
                                    const TensorLayout &to, const SearchGrid &grid,
                                    bool zeroSync, double *largestStep) const {
  double t = 0;
  for (const ::loom::CollectiveStep &step : ::loom::reshardSteps(
           fullBytes, from, to, [&](int16_t a) { return grid.axes[a]; }))
    for (const ::loom::CollectiveStep &s : ::loom::gradientSyncSteps(step, zeroSync)) {
      t += stepSeconds(s, grid);
      if (largestStep && s.bytes > 0 && grid.size(s.axes) > 1) // a real collective
        *largestStep = std::max(*largestStep, s.bytes);
    }
  return t;
}

double ProgramModel::reductionScatterDelta(const OpModel &o, const Strategy &s,
                                           const TensorLayout &want,
                                           const SearchGrid &grid) const {
  if (o.op->getNumResults() != 1)
    return 0;
  ::loom::GridAxes axes = reductionAxes(o, s);
  TensorLayout from = resultLayout(o, s, 0);
  int dim = ::loom::reductionScatterDim(from, want, axes);
  if (dim < 0)
    return 0;
  double bytes = localBytes(valueOf(o.op->getResult(0)), from, grid);
  return stepSeconds(::loom::reductionStep(axes, bytes, dim), grid) -
         stepSeconds(::loom::reductionStep(axes, bytes, -1), grid);
}

double ProgramModel::localBytes(const ValueModel &v, const TensorLayout &l,
                                const SearchGrid &grid) const {
  double split = 1;
  for (const auto &axes : l.splitAxes)
    split *= static_cast<double>(grid.size(axes));
  return bytesOf(v) / split;
}

StrategyCost ProgramModel::strategyCost(const OpModel &o, const Strategy &s,
                                        const SearchGrid &grid) const {
  StrategyCost c;
  Operation *op = o.op;
  double split = 1;
  for (auto [a, loop] : llvm::enumerate(s))
    if (loop >= 0)
      split *= static_cast<double>(grid.axes[a]);
  ::loom::GridAxes reduction = reductionAxes(o, s);
  DenseMap<Value, double> local;
  for (unsigned i = 0; i < op->getNumOperands(); ++i) {
    Value v = op->getOperand(i);
    local[v] = localBytes(valueOf(lookThroughShards(v)), operandLayout(o, s, i), grid);
  }
  for (unsigned r = 0; r < op->getNumResults(); ++r) {
    const ValueModel &vm = valueOf(op->getResult(r));
    double b = localBytes(vm, resultLayout(o, s, r), grid);
    local[op->getResult(r)] = b;
    for (unsigned k = 0; k < 2; ++k)
      if (vm.kept[k] && !vm.held)
        c.keptBytes[k] += b;
    if (vm.saved)
      c.savedBytes += b;
  }
  for (auto &[v, b] : local)
    c.footprint += b;
  double bytes = 0;
  if (auto cost = dyn_cast<CostOpInterface>(op))
    bytes = cost.getBytesAccessed([&](Value v) { return local.lookup(v); });
  const double scale = flopScale(o);
  c.forward = roofline(o.cls, scale * o.totalFlops / split, bytes, o.precision);
  if (!reduction.empty() && op->getNumResults()) {
    c.forwardComm = collectiveSeconds(::loom::CollectiveKind::AllReduce,
                                      reduction, local.lookup(op->getResult(0)),
                                      grid);
    if (c.forwardComm > 0)
      c.commBytes = local.lookup(op->getResult(0));
  }
  c.forward += c.forwardComm;
  if (o.hasBackward) {
    double flops = scale * (o.contractionFlops * o.contractionGrads +
                            (o.totalFlops - o.contractionFlops) * 2);
    c.backward = roofline(o.cls, flops / split, 2 * bytes, o.precision);
  }
  return c;
}

std::string ProgramModel::describe(
    const OpModel &o, const Strategy &s, ArrayRef<std::string> axisNames,
    const TensorLayout *readerWants,
    llvm::function_ref<const TensorLayout *(unsigned operand)> storedWeight) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto printLayout = [&](const TensorLayout &l) {
    os << "[";
    for (auto [d, axes] : llvm::enumerate(l.splitAxes)) {
      if (d)
        os << ", ";
      if (axes.empty())
        os << "-";
      for (auto [k, a] : llvm::enumerate(axes))
        os << (k ? "*" : "") << axisNames[a];
    }
    os << "]";
  };
  if (o.op->getNumResults()) {
    os << "result ";
    printLayout(resultLayout(o, s, 0));
  }
  for (unsigned i = 0; i < o.op->getNumOperands(); ++i)
    if (lookThroughShards(o.op->getOperand(i)).getDefiningOp<WeightOp>()) {
      os << " weight ";
      TensorLayout read = operandLayout(o, s, i);
      printLayout(read);
      // Stored split where the op reads it whole: gathered for each use (a
      // weight stored whole and read split is only sliced).
      const TensorLayout *stored = storedWeight ? storedWeight(i) : nullptr;
      auto gathered = [&] {
        for (auto [d, axes] : llvm::enumerate(stored->splitAxes))
          for (auto a : axes)
            if (d >= read.splitAxes.size() || !llvm::is_contained(read.splitAxes[d], a))
              return true;
        return false;
      };
      if (stored && gathered()) {
        os << " stored ";
        printLayout(*stored);
      }
    }
  ::loom::GridAxes reduce = reductionAxes(o, s);
  if (!reduce.empty()) {
    bool scattered = readerWants && o.op->getNumResults() == 1 &&
                     ::loom::reductionScatterDim(resultLayout(o, s, 0), *readerWants,
                                                 reduce) >= 0;
    os << (scattered ? " reduce-scatter over " : " all-reduce over ");
    for (auto [k, a] : llvm::enumerate(reduce))
      os << (k ? "*" : "") << axisNames[a];
  }
  return text;
}
