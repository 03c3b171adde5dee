//===- StrategyGraph.h - choosing one strategy per node, exactly -*- C++ -*-===//
//
// The combinatorial core of the strategy search, with no MLIR: every node
// (an op, a weight, a folded block) picks one of its strategies; a plan's
// cost is the sum of the chosen strategies' node costs plus, on every edge,
// the cost of the pair chosen at its ends (resharding a tensor between the
// producer's layout and the consumer's). Memory is a second per-strategy
// quantity, summed the same way, that a plan must keep under a cap.
//
//  - solveExact: min-sum variable elimination (bucket elimination) in a
//    greedy min-fill order; exact, time exponential only in the induced
//    width (a transformer layer with its residuals has width 2-3).
//  - solveGreedy: one pass in node order, each node taking its best strategy
//    given the nodes already decided, then local improvement sweeps; the
//    `level=fast` answer.
//  - solveBruteForce: every combination; for tests.
//  - solveUnderMemoryCap: exact by elimination over (memory, cost) fronts
//    where they stay small enough; otherwise Lagrangian relaxation (cost +
//    lambda * memory, lambda by bisection) over either solver, then local
//    moves under the cap. Returns the cheapest plan found under the cap, or
//    the least-memory plan, marked infeasible.
//
// Costs may be +infinity (a strategy that is not allowed). Ties break
// towards the lower strategy index, so the same graph gives the same plan.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PLAN_STRATEGYGRAPH_H
#define LOOM_PLAN_STRATEGYGRAPH_H

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace loom::plan {

constexpr double kInfeasible = std::numeric_limits<double>::infinity();

struct StrategyGraph {
  struct Node {
    std::vector<double> cost;   // one per strategy
    std::vector<double> memory; // empty, or one per strategy
    std::string name;           // for diagnostics only
  };
  struct Edge {
    unsigned from = 0, to = 0;
    /// cost[i * nodes[to].cost.size() + j]: `from` picks i, `to` picks j.
    std::vector<double> cost;
  };
  std::vector<Node> nodes;
  std::vector<Edge> edges;

  unsigned addNode(std::vector<double> cost, std::vector<double> memory = {},
                   std::string name = {});
  /// Several edges between the same pair are allowed (their costs add).
  void addEdge(unsigned from, unsigned to, std::vector<double> cost);
  size_t numStrategies(unsigned node) const { return nodes[node].cost.size(); }
};

struct Solution {
  std::vector<unsigned> choice; // strategy per node
  double cost = kInfeasible;    // node + edge costs of `choice`
  double memory = 0;            // summed memory of `choice`
  bool feasible = false;        // finite cost (and under the cap, if any)
};

/// Cost and memory of a given choice.
double evaluateCost(const StrategyGraph &graph, const std::vector<unsigned> &choice);
double evaluateMemory(const StrategyGraph &graph, const std::vector<unsigned> &choice);

/// Exact minimum of cost. `maxFactorEntries` bounds the largest intermediate
/// table; past it the solver falls back to solveGreedy and says so through
/// `exactOut` (false), so callers can report it.
Solution solveExact(const StrategyGraph &graph, bool *exactOut = nullptr,
                    uint64_t maxFactorEntries = uint64_t(1) << 26);

Solution solveGreedy(const StrategyGraph &graph);

/// How many combinations of strategies the graph has, or `limit + 1` once
/// that passes `limit`.
uint64_t countCombinations(const StrategyGraph &graph, uint64_t limit);

/// Every combination, the cheapest with memory <= `memoryCap`; refuses
/// (returns an infeasible empty Solution) past `maxCombinations`. The
/// reference the solvers are checked against (unit tests, and
/// `--loom-plan`'s check-exact on real programs).
Solution solveBruteForce(const StrategyGraph &graph,
                         uint64_t maxCombinations = uint64_t(1) << 32,
                         double memoryCap = kInfeasible);

/// Minimum cost subject to memory <= cap. When the cap binds, a Lagrangian
/// search (solveExact or solveGreedy, by `exact`, on cost + lambda *
/// memory) finds the best plan on the lower convex hull of (memory, cost)
/// and improves it by moves of one node or of an edge's two ends that stay
/// under the cap. With `exact`, elimination over (memory, cost) fronts,
/// bounded by that plan's cost, then finds the cheapest plan under the cap,
/// unless the fronts pass `maxFrontPoints` (points and trail nodes kept at
/// once); the Lagrangian plan then stands. `exactOut` says whether the
/// answer is proven: the cheapest plan under the cap, or that none fits.
/// `lagrangianOut` receives the Lagrangian search's plan (the unconstrained
/// one where the cap does not bind): it costs more under this graph's
/// model, but callers whose full model differs (memory placement can move
/// state off the device) may want both.
Solution solveUnderMemoryCap(const StrategyGraph &graph, double cap, bool exact,
                             bool *exactOut = nullptr,
                             uint64_t maxFrontPoints = uint64_t(1) << 20,
                             Solution *lagrangianOut = nullptr);

} // namespace loom::plan

#endif // LOOM_PLAN_STRATEGYGRAPH_H
