//===- StagePartition.h - splitting units into pipeline stages -*- C++ -*-===//
//
// The stage split of the strategy search, with no MLIR: the program's units
// (block copies and single ops, in order) are cut into a fixed number of
// contiguous, non-empty stages so that the slowest stage is as fast as it
// can be, every stage within its memory. A stage's time is its units' plus,
// unless it ends the program, the send of the activations crossing its end.
//
// Units come as runs of equal consecutive units (the copies of a folded
// block), and a run is taken k units at a time, so the split costs per
// stage and per run, not per unit. The answer is the least limit T under
// which a greedy pass (each stage takes as many units as T and its memory
// allow, ending where its send still fits) covers the program, found by
// bisection; exact when neither sends nor memory bind.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PLAN_STAGEPARTITION_H
#define LOOM_PLAN_STAGEPARTITION_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace loom::plan {

/// `count` equal consecutive units, each taking `seconds`; a stage ending
/// after one of them, before the program's end, also takes `sendSeconds`.
struct UnitRun {
  size_t count = 1;
  double seconds = 0;
  double sendSeconds = 0;
};

/// The memory side of a split: one stage's state as units are added.
class StageBudget {
public:
  virtual ~StageBudget();
  /// Starts stage `stage`, empty.
  virtual void begin(int64_t stage) = 0;
  /// Whether the stage still fits with `copies` more units of run `run`
  /// (monotone: fewer copies fit whenever more do).
  virtual bool fits(size_t run, size_t copies) const = 0;
  /// Adds `copies` units of run `run` to the stage.
  virtual void add(size_t run, size_t copies) = 0;
};

/// Splits the units of `runs` (each of at least one unit) into `stages`
/// stages. `unitPins` is empty or
/// holds, per unit, the stage it is pinned to (-1: free). `budget` may be
/// null (time alone). On success `stageOfUnit` holds each unit's stage and
/// `slowest` the slowest stage's time.
bool splitStages(const std::vector<UnitRun> &runs, int64_t stages,
                 const std::vector<int64_t> &unitPins, StageBudget *budget,
                 std::vector<unsigned> &stageOfUnit, double &slowest);

} // namespace loom::plan

#endif // LOOM_PLAN_STAGEPARTITION_H
