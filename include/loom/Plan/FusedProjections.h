//===- FusedProjections.h - split fused projections into parts --*- C++ -*-===//
//
// A fused projection computes several projections with one matmul and
// slices the result: GPT-2's c_attn (query, key and value), a gated MLP's
// gate and up projections. Its weight stores the parts one after another
// ([P*N, K], or [K, P*N]), so a block split of the stored weight does not
// follow the parts: splitting it over tp gives one device all of the query
// and part of the key, and the plan must gather the projection before the
// slices. Megatron stores the weight interleaved by head for that reason.
//
// splitFusedProjections rewrites each fused projection into P projections.
// The weight keeps its name, file and offset but is typed [P, N, K] (or
// [K, P, N]): the same bytes, row-major, with the part as a dimension of its
// own. Each part reads its [N, K] view through a slice and a reshape, so a
// split of N (the heads) is block-local in every part. The bias, if any, is
// typed [P, N] the same way. The arithmetic is unchanged: every output
// element is the same dot product.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PLAN_FUSEDPROJECTIONS_H
#define LOOM_PLAN_FUSEDPROJECTIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::loom {

/// Splits every fused projection of `func`: y = x @ W (W a weight, or the
/// transpose of one), optionally plus a bias weight over y's last dimension,
/// whose only readers are slices that cut y's last dimension into P >= 2
/// equal parts and keep every other dimension whole. Returns how many were
/// split.
unsigned splitFusedProjections(func::FuncOp func);

} // namespace mlir::loom

#endif // LOOM_PLAN_FUSEDPROJECTIONS_H
