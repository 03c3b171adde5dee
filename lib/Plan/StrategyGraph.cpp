//===- StrategyGraph.cpp - choosing one strategy per node, exactly --------===//
//
// The solvers declared in StrategyGraph.h.
//
// solveExact is bucket elimination. An elimination order is chosen first,
// symbolically, by min-fill on the interaction graph; nodes with a single
// strategy are folded into their neighbours' unary costs beforehand so they
// add no fill. Every factor keeps its scope sorted by elimination rank, the
// variable eliminated soonest last, so the variable being eliminated always
// has stride 1: its values lie contiguously in every table that holds it and
// the inner min-sum loop runs over plain arrays. Argmins are kept in one byte
// per entry where a node has at most 256 strategies, since for long chains
// they are the bulk of the memory.
//
// solveUnderMemoryCap, when the cap binds, first runs a Lagrangian search:
// it finds the multiplier by intersecting the lines cost + lambda * memory
// of the two plans that bracket the cap (a bisection that lands on the
// breakpoints of the lower convex hull, so it ends after as many solves as
// the hull has vertices in the bracket), then moves from the best vertex
// under the cap into the memory it leaves free. With that plan's cost as a
// bound it then runs the same elimination with a front of (memory, cost)
// pairs per table entry instead of one cost (FrontEliminator): exact, and
// cheap while the fronts stay short, which they do when memory takes few
// distinct values per node (bytes of a few shardings). Past a budget the
// Lagrangian plan stands.
//
//===----------------------------------------------------------------------===//

#include "loom/Plan/StrategyGraph.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

using namespace loom::plan;

//===----------------------------------------------------------------------===//
// The graph
//===----------------------------------------------------------------------===//

unsigned StrategyGraph::addNode(std::vector<double> cost,
                                std::vector<double> memory, std::string name) {
  assert(!cost.empty() && "a node needs at least one strategy");
  assert((memory.empty() || memory.size() == cost.size()) &&
         "memory must be empty or one entry per strategy");
  nodes.push_back({std::move(cost), std::move(memory), std::move(name)});
  return unsigned(nodes.size() - 1);
}

void StrategyGraph::addEdge(unsigned from, unsigned to,
                            std::vector<double> cost) {
  assert(from < nodes.size() && to < nodes.size() && "edge to unknown node");
  assert(cost.size() == numStrategies(from) * numStrategies(to) &&
         "edge table must be |from| x |to|");
  Edge e;
  e.from = from;
  e.to = to;
  e.cost = std::move(cost);
  edges.push_back(std::move(e));
}

double loom::plan::evaluateCost(const StrategyGraph &graph,
                                const std::vector<unsigned> &choice) {
  assert(choice.size() == graph.nodes.size() && "one choice per node");
  double total = 0;
  for (size_t v = 0; v < graph.nodes.size(); ++v) {
    assert(choice[v] < graph.numStrategies(v) && "choice out of range");
    total += graph.nodes[v].cost[choice[v]];
  }
  for (const StrategyGraph::Edge &e : graph.edges)
    total += e.cost[size_t(choice[e.from]) * graph.numStrategies(e.to) +
                    choice[e.to]];
  return total;
}

double loom::plan::evaluateMemory(const StrategyGraph &graph,
                                  const std::vector<unsigned> &choice) {
  assert(choice.size() == graph.nodes.size() && "one choice per node");
  double total = 0;
  for (size_t v = 0; v < graph.nodes.size(); ++v)
    if (!graph.nodes[v].memory.empty())
      total += graph.nodes[v].memory[choice[v]];
  return total;
}

namespace {

/// Fills in cost, memory and feasibility of a plan from the true costs.
Solution finish(const StrategyGraph &graph, std::vector<unsigned> choice) {
  Solution s;
  s.choice = std::move(choice);
  s.cost = evaluateCost(graph, s.choice);
  s.memory = evaluateMemory(graph, s.choice);
  s.feasible = std::isfinite(s.cost);
  return s;
}

/// Node cost with the Lagrangian memory penalty (lambda == 0: the true cost).
/// Skipping the product at lambda == 0 keeps 0 * inf out of the picture.
inline double nodeCost(const StrategyGraph::Node &node, unsigned s,
                       double lambda) {
  if (lambda == 0 || node.memory.empty())
    return node.cost[s];
  return node.cost[s] + lambda * node.memory[s];
}

/// a * b, or `limit + 1` once it passes `limit` (no overflow).
uint64_t mulCapped(uint64_t a, uint64_t b, uint64_t limit) {
  if (a == 0 || b == 0)
    return 0;
  if (a > limit / b)
    return limit + 1;
  uint64_t p = a * b;
  return p > limit ? limit + 1 : p;
}

//===----------------------------------------------------------------------===//
// Greedy
//===----------------------------------------------------------------------===//

/// An edge seen from one of its ends.
struct EdgeRef {
  unsigned edge;
  unsigned other;
  bool isFrom; // this end is the edge's `from`
};

std::vector<std::vector<EdgeRef>> incidentEdges(const StrategyGraph &graph) {
  std::vector<std::vector<EdgeRef>> inc(graph.nodes.size());
  for (unsigned i = 0; i < graph.edges.size(); ++i) {
    const StrategyGraph::Edge &e = graph.edges[i];
    inc[e.from].push_back({i, e.to, true});
    if (e.to != e.from)
      inc[e.to].push_back({i, e.from, false});
  }
  return inc;
}

/// Cost of node v taking each strategy, given the choices of the nodes for
/// which `decided` holds (v's own self-edges always count).
template <typename Decided>
void localCosts(const StrategyGraph &graph,
                const std::vector<std::vector<EdgeRef>> &inc, unsigned v,
                const std::vector<unsigned> &choice, double lambda,
                Decided decided, std::vector<double> &out) {
  const StrategyGraph::Node &node = graph.nodes[v];
  size_t k = node.cost.size();
  out.resize(k);
  for (unsigned s = 0; s < k; ++s)
    out[s] = nodeCost(node, s, lambda);
  for (const EdgeRef &r : inc[v]) {
    const StrategyGraph::Edge &e = graph.edges[r.edge];
    size_t kTo = graph.numStrategies(e.to);
    if (e.from == e.to) {
      for (size_t s = 0; s < k; ++s)
        out[s] += e.cost[s * kTo + s];
    } else if (decided(r.other)) {
      unsigned o = choice[r.other];
      if (r.isFrom)
        for (size_t s = 0; s < k; ++s)
          out[s] += e.cost[s * kTo + o];
      else
        for (size_t s = 0; s < k; ++s)
          out[s] += e.cost[size_t(o) * kTo + s];
    }
  }
}

/// Lowest index among the minima; 0 when all are infinite.
unsigned argMin(const std::vector<double> &v) {
  unsigned best = 0;
  for (unsigned i = 1; i < v.size(); ++i)
    if (v[i] < v[best])
      best = i;
  return best;
}

/// Forward check for the first greedy pass: strategy s of v is ruled out
/// when some later neighbour would have no finite strategy left against it
/// (counting that neighbour's own cost and this one edge). Without it a
/// cheap early pick can leave a later node only infinite options, which no
/// single-node sweep move can repair.
void ruleOutDeadEnds(const StrategyGraph &graph,
                     const std::vector<std::vector<EdgeRef>> &inc, unsigned v,
                     std::vector<double> &local) {
  size_t k = local.size();
  for (const EdgeRef &r : inc[v]) {
    if (r.other <= v)
      continue;
    const StrategyGraph::Edge &e = graph.edges[r.edge];
    const std::vector<double> &otherCost = graph.nodes[r.other].cost;
    size_t ko = otherCost.size(), kTo = graph.numStrategies(e.to);
    for (size_t s = 0; s < k; ++s) {
      if (!std::isfinite(local[s]))
        continue;
      bool open = false;
      for (size_t t = 0; t < ko && !open; ++t) {
        double c = r.isFrom ? e.cost[s * kTo + t] : e.cost[t * kTo + s];
        open = std::isfinite(c + otherCost[t]);
      }
      if (!open)
        local[s] = kInfeasible;
    }
  }
}

std::vector<unsigned> greedyChoice(const StrategyGraph &graph, double lambda) {
  size_t n = graph.nodes.size();
  std::vector<std::vector<EdgeRef>> inc = incidentEdges(graph);
  std::vector<unsigned> choice(n, 0);
  std::vector<double> local;
  for (unsigned v = 0; v < n; ++v) {
    localCosts(
        graph, inc, v, choice, lambda, [v](unsigned o) { return o < v; },
        local);
    unsigned cheapest = argMin(local);
    ruleOutDeadEnds(graph, inc, v, local);
    unsigned open = argMin(local);
    // Everything leads to a dead end: the check has nothing to say.
    choice[v] = std::isfinite(local[open]) ? open : cheapest;
  }
  // Local improvement: a move is taken only when strictly better, so the
  // total cost strictly falls and the sweeps cannot cycle.
  constexpr int kMaxSweeps = 4;
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    bool changed = false;
    for (unsigned v = 0; v < n; ++v) {
      if (graph.numStrategies(v) < 2)
        continue;
      localCosts(
          graph, inc, v, choice, lambda, [](unsigned) { return true; }, local);
      unsigned best = argMin(local);
      if (local[best] < local[choice[v]]) {
        choice[v] = best;
        changed = true;
      }
    }
    if (!changed)
      break;
  }
  return choice;
}

//===----------------------------------------------------------------------===//
// Exact: elimination order
//===----------------------------------------------------------------------===//

/// Greedy min-fill order over the interaction graph of the nodes with more
/// than one strategy. Returns false when some step would combine a table of
/// more than `maxEntries` entries.
class OrderBuilder {
public:
  OrderBuilder(const std::vector<size_t> &domainSizes,
               std::vector<std::vector<unsigned>> adjacency)
      : domain(domainSizes), adj(std::move(adjacency)),
        stamp(domainSizes.size(), 0), key(domainSizes.size()) {}

  bool build(const std::vector<unsigned> &vars, uint64_t maxEntries,
             std::vector<unsigned> &order) {
    for (unsigned v : vars) {
      key[v] = makeKey(v);
      queue.insert(key[v]);
    }
    std::vector<unsigned> affected;
    while (!queue.empty()) {
      unsigned v = std::get<2>(*queue.begin());
      queue.erase(queue.begin());
      const std::vector<unsigned> nbrs = adj[v];

      uint64_t entries = domain[v];
      for (unsigned u : nbrs)
        entries = mulCapped(entries, domain[u], maxEntries);
      if (entries > maxEntries)
        return false;
      order.push_back(v);

      // v's neighbours become a clique and forget v.
      for (unsigned u : nbrs) {
        std::vector<unsigned> &au = adj[u];
        au.erase(std::lower_bound(au.begin(), au.end(), v));
        for (unsigned w : nbrs)
          if (w != u) {
            auto it = std::lower_bound(au.begin(), au.end(), w);
            if (it == au.end() || *it != w)
              au.insert(it, w);
          }
      }
      adj[v].clear();

      // New edges among the neighbours change the fill of the neighbours
      // and of anything adjacent to two of them.
      ++epoch;
      affected.clear();
      for (unsigned u : nbrs) {
        markAffected(u, affected);
        for (unsigned w : adj[u])
          markAffected(w, affected);
      }
      for (unsigned u : affected) {
        queue.erase(key[u]);
        key[u] = makeKey(u);
        queue.insert(key[u]);
      }
    }
    return true;
  }

private:
  using Key = std::tuple<uint64_t, size_t, unsigned>; // fill, degree, index

  bool adjacent(unsigned a, unsigned b) const {
    return std::binary_search(adj[a].begin(), adj[a].end(), b);
  }

  Key makeKey(unsigned v) const {
    const std::vector<unsigned> &nb = adj[v];
    size_t d = nb.size();
    uint64_t fill = 0;
    // Counting exactly costs d^2 log d; a hub that wide goes last anyway, so
    // the bound stands in for the count.
    if (d > kExactFillDegree) {
      fill = uint64_t(d) * (d - 1) / 2;
    } else {
      for (size_t i = 0; i < d; ++i)
        for (size_t j = i + 1; j < d; ++j)
          if (!adjacent(nb[i], nb[j]))
            ++fill;
    }
    return Key(fill, d, v);
  }

  void markAffected(unsigned u, std::vector<unsigned> &affected) {
    if (stamp[u] == epoch)
      return;
    stamp[u] = epoch;
    affected.push_back(u);
  }

  static constexpr size_t kExactFillDegree = 128;
  const std::vector<size_t> &domain;
  std::vector<std::vector<unsigned>> adj;
  std::vector<uint64_t> stamp;
  uint64_t epoch = 0;
  std::vector<Key> key;
  std::set<Key> queue;
};

//===----------------------------------------------------------------------===//
// Exact: elimination
//===----------------------------------------------------------------------===//

/// The lowest index of the minimum of in[s] + add[s] over s < k (0 when all
/// are infinite), with the minimum in `bestOut`. Blocks of eight are reduced
/// without branches and only a block that beats the best so far takes a
/// branch (rarely: random costs would mispredict a compare per entry); the
/// winning block is then rescanned for its first minimum. A strict compare
/// keeps the first block holding the minimum, so ties go to the lowest index
/// as in a plain scan.
template <bool HasAdd>
size_t sumArgMin(const double *in, const double *add, size_t k,
                 double &bestOut) {
  auto at = [&](size_t s) { return HasAdd ? in[s] + add[s] : in[s]; };
  constexpr size_t kBlock = 8;
  double best = kInfeasible;
  size_t bestBlock = 0;
  size_t s = 0;
  for (; s + kBlock <= k; s += kBlock) {
    double m01 = std::min(at(s), at(s + 1)),
           m23 = std::min(at(s + 2), at(s + 3));
    double m45 = std::min(at(s + 4), at(s + 5)),
           m67 = std::min(at(s + 6), at(s + 7));
    double m = std::min(std::min(m01, m23), std::min(m45, m67));
    if (m < best) {
      best = m;
      bestBlock = s;
    }
  }
  if (s < k) {
    double m = at(s);
    for (size_t t = s + 1; t < k; ++t)
      m = std::min(m, at(t));
    if (m < best) {
      best = m;
      bestBlock = s;
    }
  }
  bestOut = best;
  size_t end = std::min(k, bestBlock + kBlock);
  for (size_t t = bestBlock; t < end; ++t)
    if (at(t) == best)
      return t;
  return 0; // all infinite
}

/// Sorts a factor scope by elimination rank, the variable eliminated next
/// last, and drops repeats.
void sortScope(std::vector<unsigned> &scope, const std::vector<unsigned> &rank) {
  std::sort(scope.begin(), scope.end(),
            [&](unsigned a, unsigned b) { return rank[a] > rank[b]; });
  scope.erase(std::unique(scope.begin(), scope.end()), scope.end());
}

/// Steps the odometer `digit` over `scope`, the last variable fastest (as
/// in the tables' layout), and moves each factor's index in `base` by its
/// stride (stride[p * base.size() + f]: factor f's step for scope[p]).
/// True when a slower digit than the last moved.
bool advanceOdometer(std::vector<size_t> &digit,
                     const std::vector<unsigned> &scope,
                     const std::vector<size_t> &domain,
                     const std::vector<size_t> &stride,
                     std::vector<size_t> &base) {
  size_t n = base.size();
  bool wrapped = false;
  for (size_t p = scope.size(); p-- > 0;) {
    const size_t *sp = &stride[p * n];
    if (++digit[p] < domain[scope[p]]) {
      for (size_t f = 0; f < n; ++f)
        base[f] += sp[f];
      return wrapped;
    }
    for (size_t f = 0; f < n; ++f)
      base[f] -= sp[f] * (digit[p] - 1);
    digit[p] = 0;
    wrapped = true;
  }
  return wrapped;
}

struct Factor {
  /// Sorted by elimination rank, latest first: the variable eliminated next
  /// is last and has stride 1.
  std::vector<unsigned> scope;
  std::vector<double> table;
  bool alive = true;
};

struct ScalarFactor {
  std::vector<unsigned> scope; // sorted by elimination rank, latest first
  std::vector<double> table;
};

/// The elimination's starting factors: one unary factor per free node (its
/// cost, with lambda * memory, plus everything folded in from
/// single-strategy neighbours and self-edges) and one binary factor per pair
/// of free nodes (parallel edges summed).
std::vector<ScalarFactor> scalarFactors(const StrategyGraph &graph,
                                        const std::vector<size_t> &domain,
                                        const std::vector<unsigned> &rank,
                                        double lambda) {
  auto later = [&](unsigned a, unsigned b) { return rank[a] > rank[b]; };
  std::vector<ScalarFactor> factors;
  size_t n = graph.nodes.size();
  std::vector<std::vector<double>> unary(n);
  for (unsigned v = 0; v < n; ++v) {
    if (domain[v] < 2)
      continue;
    unary[v].resize(domain[v]);
    for (unsigned s = 0; s < domain[v]; ++s)
      unary[v][s] = nodeCost(graph.nodes[v], s, lambda);
  }

  // Order edges by (later end, earlier end) so parallel edges are adjacent.
  struct PairEdge {
    unsigned first, second, edge;
  };
  std::vector<PairEdge> pairs;
  for (unsigned i = 0; i < graph.edges.size(); ++i) {
    const StrategyGraph::Edge &e = graph.edges[i];
    size_t kTo = domain[e.to];
    bool freeFrom = domain[e.from] > 1, freeTo = kTo > 1;
    if (e.from == e.to) {
      if (freeFrom)
        for (size_t s = 0; s < kTo; ++s)
          unary[e.from][s] += e.cost[s * kTo + s];
    } else if (freeFrom && freeTo) {
      if (later(e.from, e.to))
        pairs.push_back({e.from, e.to, i});
      else
        pairs.push_back({e.to, e.from, i});
    } else if (freeFrom) { // `to` is fixed at 0
      for (size_t s = 0; s < domain[e.from]; ++s)
        unary[e.from][s] += e.cost[s * kTo];
    } else if (freeTo) { // `from` is fixed at 0
      for (size_t s = 0; s < kTo; ++s)
        unary[e.to][s] += e.cost[s];
    }
    // Both fixed: a constant, which evaluateCost accounts for.
  }
  std::sort(pairs.begin(), pairs.end(),
            [](const PairEdge &a, const PairEdge &b) {
              return std::tie(a.first, a.second, a.edge) <
                     std::tie(b.first, b.second, b.edge);
            });

  for (unsigned v = 0; v < n; ++v)
    if (domain[v] > 1)
      factors.push_back({{v}, std::move(unary[v])});

  for (size_t i = 0; i < pairs.size();) {
    unsigned a = pairs[i].first, b = pairs[i].second; // a is eliminated later
    size_t ka = domain[a], kb = domain[b];
    std::vector<double> table(ka * kb, 0.0);
    for (; i < pairs.size() && pairs[i].first == a && pairs[i].second == b;
         ++i) {
      const StrategyGraph::Edge &e = graph.edges[pairs[i].edge];
      if (e.from == a) {
        for (size_t x = 0; x < ka * kb; ++x)
          table[x] += e.cost[x];
      } else { // stored as (b, a): transpose
        for (size_t sa = 0; sa < ka; ++sa)
          for (size_t sb = 0; sb < kb; ++sb)
            table[sa * kb + sb] += e.cost[sb * ka + sa];
      }
    }
    factors.push_back({{a, b}, std::move(table)});
  }
  return factors;
}

/// What eliminating a variable leaves for back-substitution: its best value
/// for every assignment of its neighbours at the time.
struct Eliminated {
  unsigned var;
  std::vector<unsigned> scope; // same layout rule as Factor::scope
  std::vector<uint8_t> arg8;   // used when the variable has <= 256 values
  std::vector<uint32_t> arg32; // otherwise
};

class Eliminator {
public:
  Eliminator(const StrategyGraph &g, double penalty,
             const std::vector<size_t> &domainSizes,
             const std::vector<unsigned> &order)
      : graph(g), lambda(penalty), domain(domainSizes), rank(g.nodes.size(), 0),
        varFactors(g.nodes.size()), posInScope(g.nodes.size(), -1) {
    for (unsigned i = 0; i < order.size(); ++i)
      rank[order[i]] = i;
    buildFactors();
    eliminated.reserve(order.size());
    for (unsigned v : order)
      eliminate(v);
  }

  /// Back-substitution in reverse elimination order; single-strategy nodes
  /// stay at 0.
  std::vector<unsigned> choice() const {
    std::vector<unsigned> result(graph.nodes.size(), 0);
    for (auto it = eliminated.rbegin(); it != eliminated.rend(); ++it) {
      size_t index = 0;
      for (unsigned u : it->scope)
        index = index * domain[u] + result[u];
      result[it->var] = it->arg8.empty() ? it->arg32[index] : it->arg8[index];
    }
    return result;
  }

private:
  unsigned addFactor(std::vector<unsigned> scope, std::vector<double> table) {
    unsigned id = unsigned(factors.size());
    for (unsigned u : scope)
      varFactors[u].push_back(id);
    factors.push_back({std::move(scope), std::move(table), true});
    return id;
  }

  void buildFactors() {
    for (ScalarFactor &f : scalarFactors(graph, domain, rank, lambda))
      addFactor(std::move(f.scope), std::move(f.table));
  }

  void eliminate(unsigned v) {
    size_t kv = domain[v];
    // Unary factors of v are the same for every assignment of the others:
    // sum them once.
    std::vector<double> init(kv, 0.0);
    std::vector<unsigned> wide;
    std::vector<unsigned> scope; // union of the wide factors' scopes, minus v
    for (unsigned id : varFactors[v]) {
      Factor &f = factors[id];
      if (!f.alive)
        continue;
      f.alive = false;
      assert(f.scope.back() == v && "the eliminated variable comes last");
      if (f.scope.size() == 1) {
        for (size_t s = 0; s < kv; ++s)
          init[s] += f.table[s];
        std::vector<double>().swap(f.table);
        continue;
      }
      wide.push_back(id);
      for (size_t i = 0; i + 1 < f.scope.size(); ++i)
        scope.push_back(f.scope[i]);
    }
    std::vector<unsigned>().swap(varFactors[v]);
    sortScope(scope, rank);

    size_t nScope = scope.size(), nWide = wide.size();
    size_t total = 1;
    for (unsigned u : scope)
      total *= domain[u];
    for (size_t p = 0; p < nScope; ++p)
      posInScope[scope[p]] = int(p);

    // Factors without the fastest scope variable ("outer", placed first) are
    // constant along a run of it: their sum with the unary part is kept in
    // `partial` and redone only when a slower digit moves.
    size_t nOuter = 0;
    if (nScope > 0)
      for (size_t f = 0; f < nWide; ++f) {
        const std::vector<unsigned> &fs = factors[wide[f]].scope;
        if (std::find(fs.begin(), fs.end(), scope.back()) == fs.end())
          std::swap(wide[f], wide[nOuter++]);
      }

    // stride[p * nWide + f]: how far factor f's index moves when scope[p]
    // steps by one (0 when f does not hold it).
    std::vector<size_t> stride(nScope * nWide, 0);
    std::vector<const double *> table(nWide);
    for (size_t f = 0; f < nWide; ++f) {
      const Factor &fac = factors[wide[f]];
      table[f] = fac.table.data();
      size_t s = kv;
      for (size_t i = fac.scope.size() - 1; i-- > 0;) {
        stride[size_t(posInScope[fac.scope[i]]) * nWide + f] = s;
        s *= domain[fac.scope[i]];
      }
    }
    for (unsigned u : scope)
      posInScope[u] = -1;

    Eliminated record;
    record.var = v;
    record.scope = scope;
    bool small = kv <= 256;
    if (small)
      record.arg8.resize(total);
    else
      record.arg32.resize(total);
    std::vector<double> result(total);

    std::vector<double> partial = init, buf(kv);
    std::vector<size_t> base(nWide, 0);
    std::vector<size_t> digit(nScope, 0);
    bool stale = nOuter > 0;
    for (size_t r = 0; r < total; ++r) {
      if (stale) {
        partial = init;
        for (size_t f = 0; f < nOuter; ++f) {
          const double *t = table[f] + base[f];
          for (size_t s = 0; s < kv; ++s)
            partial[s] += t[s];
        }
        stale = false;
      }
      // The inner factors but the last are summed into buf; the last add
      // is fused with the minimum.
      const double *row = partial.data();
      for (size_t f = nOuter; f + 1 < nWide; ++f) {
        const double *t = table[f] + base[f];
        for (size_t s = 0; s < kv; ++s)
          buf[s] = row[s] + t[s];
        row = buf.data();
      }
      double best;
      size_t arg = nWide > nOuter
                       ? sumArgMin<true>(
                             row, table[nWide - 1] + base[nWide - 1], kv, best)
                       : sumArgMin<false>(row, nullptr, kv, best);
      result[r] = best;
      if (small)
        record.arg8[r] = uint8_t(arg);
      else
        record.arg32[r] = uint32_t(arg);

      if (advanceOdometer(digit, scope, domain, stride, base))
        stale = nOuter > 0; // a slower digit moved
    }

    for (unsigned id : wide)
      std::vector<double>().swap(factors[id].table);
    // An empty scope leaves a constant; the final cost is re-evaluated, so
    // it is not kept.
    if (nScope > 0)
      addFactor(scope, std::move(result));
    eliminated.push_back(std::move(record));
  }

  const StrategyGraph &graph;
  double lambda;
  const std::vector<size_t> &domain;
  std::vector<unsigned> rank;
  std::vector<Factor> factors;
  std::vector<std::vector<unsigned>> varFactors;
  std::vector<int> posInScope;
  std::vector<Eliminated> eliminated;
};

/// Every node's number of strategies and a min-fill elimination order of the
/// nodes with more than one; false when some table would pass `maxEntries`.
bool eliminationOrder(const StrategyGraph &graph, uint64_t maxEntries,
                      std::vector<size_t> &domain,
                      std::vector<unsigned> &order) {
  size_t n = graph.nodes.size();
  domain.assign(n, 0);
  std::vector<unsigned> freeVars;
  for (unsigned v = 0; v < n; ++v) {
    domain[v] = graph.numStrategies(v);
    if (domain[v] > 1)
      freeVars.push_back(v);
  }

  std::vector<std::vector<unsigned>> adj(n);
  for (const StrategyGraph::Edge &e : graph.edges)
    if (e.from != e.to && domain[e.from] > 1 && domain[e.to] > 1) {
      adj[e.from].push_back(e.to);
      adj[e.to].push_back(e.from);
    }
  for (std::vector<unsigned> &a : adj) {
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
  }

  order.clear();
  order.reserve(freeVars.size());
  OrderBuilder builder(domain, std::move(adj));
  return builder.build(freeVars, maxEntries, order);
}

/// Exact solve of cost + lambda * memory; false when the tables would be too
/// big (then `choice` is untouched).
bool exactChoice(const StrategyGraph &graph, double lambda,
                 uint64_t maxFactorEntries, std::vector<unsigned> &choice) {
  std::vector<size_t> domain;
  std::vector<unsigned> order;
  if (!eliminationOrder(graph, maxFactorEntries, domain, order))
    return false;
  Eliminator elim(graph, lambda, domain, order);
  choice = elim.choice();
  return true;
}

//===----------------------------------------------------------------------===//
// Improving a plan under a memory cap
//===----------------------------------------------------------------------===//

/// Memory of node v's strategy s (0 for nodes without memory).
inline double nodeMemory(const StrategyGraph::Node &node, unsigned s) {
  return node.memory.empty() ? 0.0 : node.memory[s];
}

/// Local search from a plan under `cap` towards cheaper plans still under
/// it. The Lagrangian solve returns vertices of the lower convex hull of
/// (memory, cost) only; the cheapest plan under the cap often lies above
/// the hull, a few strategy changes from a vertex, using the memory the
/// vertex leaves free. Moves: one node, or the two ends of one edge
/// together (a single change is often blocked by the edge's resharding
/// cost). Each sweep takes, node by node, the cheapest move that fits; a
/// move is taken only when it lowers the cost by more than rounding, so
/// the sweeps cannot cycle.
void improveUnderCap(const StrategyGraph &graph, double cap,
                     std::vector<unsigned> &choice, double &memory) {
  size_t n = graph.nodes.size();
  std::vector<std::vector<EdgeRef>> inc = incidentEdges(graph);
  std::vector<double> local, localU, localV;
  std::vector<EdgeRef> byOther; // u's edges grouped by their other end
  auto improves = [](double delta, double total) {
    return delta < -1e-12 * std::max(1.0, std::fabs(total));
  };
  double total = evaluateCost(graph, choice);
  constexpr int kMaxSweeps = 8;
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    bool changed = false;
    for (unsigned u = 0; u < n; ++u) {
      const StrategyGraph::Node &nu = graph.nodes[u];
      if (nu.cost.size() < 2)
        continue;
      // One node.
      localCosts(
          graph, inc, u, choice, 0.0, [](unsigned) { return true; }, local);
      unsigned cu = choice[u];
      double bestDelta = 0, bestMemory = memory;
      int best = -1;
      for (unsigned a = 0; a < local.size(); ++a) {
        double m = memory - nodeMemory(nu, cu) + nodeMemory(nu, a);
        double d = local[a] - local[cu];
        if (m <= cap && std::isfinite(local[a]) && d < bestDelta) {
          bestDelta = d;
          bestMemory = m;
          best = int(a);
        }
      }
      if (best >= 0 && improves(bestDelta, total)) {
        choice[u] = unsigned(best);
        memory = bestMemory;
        total += bestDelta;
        changed = true;
        continue;
      }
      // Two ends of an edge: u with each later neighbour v. The pair's cost
      // is each end's local cost without the edges between them, plus those
      // edges at the pair's strategies.
      byOther = inc[u];
      std::stable_sort(byOther.begin(), byOther.end(),
                       [](const EdgeRef &a, const EdgeRef &b) {
                         return a.other < b.other;
                       });
      for (auto group = byOther.begin(); group != byOther.end();) {
        unsigned v = group->other;
        auto end = std::find_if(group, byOther.end(),
                                [v](const EdgeRef &r) { return r.other != v; });
        auto first = group;
        group = end;
        if (v <= u || graph.numStrategies(v) < 2)
          continue;
        const StrategyGraph::Node &nv = graph.nodes[v];
        localCosts(
            graph, inc, u, choice, 0.0, [v](unsigned o) { return o != v; },
            localU);
        localCosts(
            graph, inc, v, choice, 0.0, [u](unsigned o) { return o != u; },
            localV);
        size_t ku = localU.size(), kv = localV.size();
        auto pairCost = [&](unsigned a, unsigned b) {
          double c = localU[a] + localV[b];
          for (auto e = first; e != end; ++e) { // the edges between u and v
            const StrategyGraph::Edge &edge = graph.edges[e->edge];
            c += e->isFrom ? edge.cost[size_t(a) * kv + b]
                           : edge.cost[size_t(b) * ku + a];
          }
          return c;
        };
        unsigned cv = choice[v];
        double current = pairCost(cu, cv);
        double base = memory - nodeMemory(nu, cu) - nodeMemory(nv, cv);
        double pairDelta = 0, pairMemory = memory;
        unsigned bestA = cu, bestB = cv;
        for (unsigned a = 0; a < ku; ++a) {
          if (!std::isfinite(localU[a]))
            continue;
          for (unsigned b = 0; b < kv; ++b) {
            double m = base + nodeMemory(nu, a) + nodeMemory(nv, b);
            if (m > cap)
              continue;
            double d = pairCost(a, b) - current;
            if (d < pairDelta) {
              pairDelta = d;
              pairMemory = m;
              bestA = a;
              bestB = b;
            }
          }
        }
        if (improves(pairDelta, total)) {
          choice[u] = cu = bestA;
          choice[v] = bestB;
          memory = pairMemory;
          total += pairDelta;
          changed = true;
        }
      }
    }
    if (!changed)
      break;
  }
}

//===----------------------------------------------------------------------===//
// Exact under a memory cap: elimination over (memory, cost) fronts
//===----------------------------------------------------------------------===//

constexpr uint32_t kNoTrail = std::numeric_limits<uint32_t>::max();

/// A partial plan: the cost and memory of what it covers, and the trail node
/// that records its choices (kNoTrail: none).
struct FrontPoint {
  double cost, memory;
  uint32_t trail;
};

/// The choices behind a partial plan: `var` took `value` (var < 0: no
/// choice here), plus the choices behind trail nodes `a` and `b`.
struct TrailNode {
  int32_t var;
  uint32_t value;
  uint32_t a, b;
};

/// A factor whose every entry is a front: the partial plans for that
/// assignment of the scope that no other beats on both cost and memory,
/// memory rising and cost falling.
struct FrontFactor {
  std::vector<unsigned> scope;  // as Factor::scope
  std::vector<uint32_t> start;  // entry r: points[start[r] .. start[r + 1])
  std::vector<FrontPoint> points;
  /// The summed least memory of the nodes whose memory its points hold, and
  /// the summed least cost of the starting factors their costs hold.
  double coveredFloor = 0, coveredCostFloor = 0;
  bool alive = true;
};

/// Bucket elimination in the order solveExact uses, with a front of
/// (memory, cost) pairs where solveExact keeps one cost: the cheapest plan
/// under the cap is then read off the last front, and its choices off the
/// trail. A pair is dropped as soon as its memory plus the least memory of
/// every node it does not cover passes the cap, or its cost plus the least
/// cost of every factor it does not hold passes a known plan's (the
/// Lagrangian search's answer, given as `bound`). Fronts can grow with the
/// number of distinct memory sums, so the work is bounded: past
/// `maxPoints` points and trail nodes (or 8 times that many pairs tried)
/// the solve gives up and the caller falls back to the Lagrangian search.
class FrontEliminator {
public:
  enum class Outcome { Solved, NothingFits, OverBudget };

  FrontEliminator(const StrategyGraph &g, double capBytes,
                  const std::vector<size_t> &domainSizes,
                  const std::vector<unsigned> &order,
                  const std::vector<unsigned> *bound, uint64_t maxPoints)
      : graph(g), cap(capBytes), domain(domainSizes),
        rank(g.nodes.size(), 0), varFactors(g.nodes.size()),
        pointBudget(maxPoints), pairBudget(maxPoints * 8) {
    for (unsigned i = 0; i < order.size(); ++i)
      rank[order[i]] = i;
    floors.assign(graph.nodes.size(), 0.0);
    for (unsigned v = 0; v < graph.nodes.size(); ++v) {
      const StrategyGraph::Node &node = graph.nodes[v];
      double least = kInfeasible;
      for (unsigned s = 0; s < node.cost.size(); ++s)
        if (std::isfinite(node.cost[s]))
          least = std::min(least, nodeMemory(node, s));
      floors[v] = std::isfinite(least) ? least : 0.0;
      totalFloor += floors[v];
    }
    tolerance = 1e-12 * (std::fabs(cap) + std::fabs(totalFloor));
    buildFactors(bound);
    costTolerance = 1e-9 * (std::fabs(costBound) + std::fabs(totalCostFloor));
    for (unsigned v : order)
      if (!eliminate(v)) {
        outcome = Outcome::OverBudget;
        return;
      }
    finishComponents();
  }

  Outcome result() const { return outcome; }

  /// The cheapest plan's choices (Outcome::Solved only); nodes with one
  /// strategy stay at 0.
  std::vector<unsigned> choice() const {
    std::vector<unsigned> result(graph.nodes.size(), 0);
    std::vector<uint32_t> stack{bestTrail};
    while (!stack.empty()) {
      uint32_t t = stack.back();
      stack.pop_back();
      if (t == kNoTrail)
        continue;
      const TrailNode &node = trail[t];
      if (node.var >= 0)
        result[unsigned(node.var)] = node.value;
      stack.push_back(node.a);
      stack.push_back(node.b);
    }
    return result;
  }

private:
  /// A pair under construction: cost, memory, and the trails of the two
  /// points it joins (`value`: the eliminated variable's value, when
  /// collecting across values).
  struct Candidate {
    double cost, memory;
    uint32_t a, b, value;
  };

  /// The most memory, and cost, a partial plan holding `covered` of the
  /// floors may have: everything else takes at least its floor.
  double memoryLimit(double covered) const {
    return cap - (totalFloor - covered) + tolerance;
  }
  double costLimit(double covered) const {
    return costBound - (totalCostFloor - covered) + costTolerance;
  }

  void addFactor(FrontFactor f) {
    unsigned id = unsigned(factors.size());
    for (unsigned u : f.scope)
      varFactors[u].push_back(id);
    factors.push_back(std::move(f));
  }

  /// The scalar factors as one-point fronts; a node's memory goes with its
  /// own unary factor, which covers it. The cost bound is `bound`'s cost
  /// as these factors sum it (without the constants they leave out).
  void buildFactors(const std::vector<unsigned> *bound) {
    costBound = bound ? 0.0 : kInfeasible;
    for (ScalarFactor &sf : scalarFactors(graph, domain, rank, 0.0)) {
      FrontFactor f;
      bool unary = sf.scope.size() == 1;
      const StrategyGraph::Node &node = graph.nodes[sf.scope[0]];
      f.start.reserve(sf.table.size() + 1);
      f.start.push_back(0);
      double least = kInfeasible;
      for (size_t r = 0; r < sf.table.size(); ++r) {
        if (std::isfinite(sf.table[r])) {
          f.points.push_back(
              {sf.table[r], unary ? nodeMemory(node, unsigned(r)) : 0.0,
               kNoTrail});
          least = std::min(least, sf.table[r]);
        }
        f.start.push_back(uint32_t(f.points.size()));
      }
      f.coveredCostFloor = std::isfinite(least) ? least : 0.0;
      totalCostFloor += f.coveredCostFloor;
      if (bound) {
        size_t index = 0;
        for (unsigned u : sf.scope)
          index = index * domain[u] + (*bound)[u];
        costBound += sf.table[index];
      }
      if (unary)
        f.coveredFloor = floors[sf.scope[0]];
      f.scope = std::move(sf.scope);
      livePoints += f.points.size();
      addFactor(std::move(f));
    }
  }

  /// Keeps the candidates no other beats on both memory and cost, sorted
  /// by memory; among equals the earliest stays.
  static void keepFront(std::vector<Candidate> &cands) {
    std::stable_sort(cands.begin(), cands.end(),
                     [](const Candidate &x, const Candidate &y) {
                       return std::tie(x.memory, x.cost) <
                              std::tie(y.memory, y.cost);
                     });
    size_t kept = 0;
    for (const Candidate &c : cands)
      if (kept == 0 || c.cost < cands[kept - 1].cost)
        cands[kept++] = c;
    cands.resize(kept);
  }

  uint32_t join(uint32_t a, uint32_t b) {
    if (a == kNoTrail)
      return b;
    if (b == kNoTrail)
      return a;
    trail.push_back({-1, 0, a, b});
    return uint32_t(trail.size() - 1);
  }

  /// cur := the front of every pair of a point of `cur` and a point of
  /// `points[begin, end)` with memory at most `limit` and cost at most
  /// `costLimit`. Both are sorted by memory, so each row stops at the first
  /// pair over the limit.
  bool product(std::vector<Candidate> &cur, const FrontPoint *begin,
               const FrontPoint *end, double limit, double costLimit) {
    scratch.clear();
    for (const Candidate &x : cur)
      for (const FrontPoint *p = begin; p != end; ++p) {
        double m = x.memory + p->memory;
        if (m > limit)
          break;
        double c = x.cost + p->cost;
        if (c <= costLimit) // also drops infinite costs
          scratch.push_back({c, m, x.a, p->trail, 0});
      }
    pairsTried += scratch.size();
    if (pairsTried > pairBudget)
      return false;
    // One side a single point: the other front shifted, still a front.
    if (cur.size() > 1 && end - begin > 1)
      keepFront(scratch);
    cur.clear();
    for (const Candidate &x : scratch)
      cur.push_back({x.cost, x.memory, join(x.a, x.b), kNoTrail, 0});
    return trail.size() + livePoints <= pointBudget;
  }

  bool eliminate(unsigned v) {
    size_t kv = domain[v];
    std::vector<unsigned> ids, scope;
    double covered = 0, coveredCost = 0;
    for (unsigned id : varFactors[v]) {
      FrontFactor &f = factors[id];
      if (!f.alive)
        continue;
      f.alive = false;
      assert(f.scope.back() == v && "the eliminated variable comes last");
      ids.push_back(id);
      covered += f.coveredFloor;
      coveredCost += f.coveredCostFloor;
      scope.insert(scope.end(), f.scope.begin(), f.scope.end() - 1);
    }
    std::vector<unsigned>().swap(varFactors[v]);
    sortScope(scope, rank);

    size_t nScope = scope.size(), nFactors = ids.size();
    size_t total = 1;
    for (unsigned u : scope)
      total *= domain[u];
    // stride[p * nFactors + f]: how far factor f's entry index moves when
    // scope[p] steps by one; v itself has stride 1 everywhere.
    std::vector<size_t> stride(nScope * nFactors, 0);
    for (size_t f = 0; f < nFactors; ++f) {
      const std::vector<unsigned> &fs = factors[ids[f]].scope;
      size_t step = kv;
      for (size_t i = fs.size() - 1; i-- > 0;) {
        size_t p = size_t(std::find(scope.begin(), scope.end(), fs[i]) -
                          scope.begin());
        stride[p * nFactors + f] = step;
        step *= domain[fs[i]];
      }
    }

    FrontFactor out;
    out.scope = scope;
    out.coveredFloor = covered;
    out.coveredCostFloor = coveredCost;
    out.start.reserve(total + 1);
    out.start.push_back(0);
    std::vector<size_t> digit(nScope, 0), base(nFactors, 0);
    std::vector<Candidate> cur, across;
    for (size_t r = 0; r < total; ++r) {
      across.clear();
      for (size_t s = 0; s < kv; ++s) {
        cur.assign(1, {0.0, 0.0, kNoTrail, kNoTrail, 0});
        double coveredSoFar = 0, coveredCostSoFar = 0;
        for (size_t f = 0; f < nFactors && !cur.empty(); ++f) {
          const FrontFactor &fac = factors[ids[f]];
          size_t entry = base[f] + s;
          coveredSoFar += fac.coveredFloor;
          coveredCostSoFar += fac.coveredCostFloor;
          if (!product(cur, fac.points.data() + fac.start[entry],
                       fac.points.data() + fac.start[entry + 1],
                       memoryLimit(coveredSoFar), costLimit(coveredCostSoFar)))
            return false;
        }
        for (const Candidate &x : cur)
          across.push_back({x.cost, x.memory, x.a, kNoTrail, uint32_t(s)});
      }
      keepFront(across);
      for (const Candidate &x : across) {
        trail.push_back({int32_t(v), x.value, x.a, kNoTrail});
        out.points.push_back({x.cost, x.memory, uint32_t(trail.size() - 1)});
      }
      livePoints += across.size();
      out.start.push_back(uint32_t(out.points.size()));
      if (trail.size() + livePoints > pointBudget)
        return false;

      advanceOdometer(digit, scope, domain, stride, base);
    }
    for (unsigned id : ids) {
      livePoints -= factors[id].points.size();
      FrontFactor().points.swap(factors[id].points);
      std::vector<uint32_t>().swap(factors[id].start);
    }
    if (nScope > 0)
      addFactor(std::move(out));
    else
      components.push_back(std::move(out));
    return true;
  }

  /// The independent parts' fronts combined; the cheapest plan that fits
  /// is the last point (fronts fall in cost as memory rises).
  void finishComponents() {
    std::vector<Candidate> cur(1, {0.0, 0.0, kNoTrail, kNoTrail, 0});
    double coveredSoFar = 0, coveredCostSoFar = 0;
    for (const FrontFactor &f : components) {
      coveredSoFar += f.coveredFloor;
      coveredCostSoFar += f.coveredCostFloor;
      if (!product(cur, f.points.data(), f.points.data() + f.points.size(),
                   memoryLimit(coveredSoFar), costLimit(coveredCostSoFar))) {
        outcome = Outcome::OverBudget;
        return;
      }
    }
    // The tolerance let in sums a rounding above the cap; the plan must be
    // under it as summed here (the caller re-sums it too).
    double fixedMemory = totalFloor - coveredSoFar;
    while (!cur.empty() && cur.back().memory + fixedMemory > cap)
      cur.pop_back();
    if (cur.empty()) {
      outcome = Outcome::NothingFits;
      return;
    }
    outcome = Outcome::Solved;
    bestTrail = cur.back().a;
  }

  const StrategyGraph &graph;
  double cap;
  const std::vector<size_t> &domain;
  std::vector<unsigned> rank;
  std::vector<FrontFactor> factors, components;
  std::vector<std::vector<unsigned>> varFactors;
  std::vector<double> floors;
  double totalFloor = 0, tolerance = 0;
  double costBound = kInfeasible, totalCostFloor = 0, costTolerance = 0;
  std::vector<TrailNode> trail;
  std::vector<Candidate> scratch;
  uint64_t livePoints = 0, pairsTried = 0;
  const uint64_t pointBudget, pairBudget;
  Outcome outcome = Outcome::OverBudget;
  uint32_t bestTrail = kNoTrail;
};

/// The solve used inside the Lagrangian loop; the exact one falls back to
/// greedy exactly as solveExact does.
std::vector<unsigned> penalisedChoice(const StrategyGraph &graph, double lambda,
                                      bool exact, bool &fellBack) {
  std::vector<unsigned> choice;
  if (exact && exactChoice(graph, lambda, uint64_t(1) << 26, choice))
    return choice;
  fellBack |= exact;
  return greedyChoice(graph, lambda);
}

/// The cheapest plan under the cap by elimination over fronts, if it stays
/// within `maxPoints`; `nothingFits` when it proves no plan is under the cap.
/// `bound`, if given, is a plan under the cap: the answer costs no more.
std::optional<Solution> frontSolve(const StrategyGraph &graph, double cap,
                                   uint64_t maxPoints,
                                   const std::vector<unsigned> *bound,
                                   bool &nothingFits) {
  std::vector<size_t> domain;
  std::vector<unsigned> order;
  if (!eliminationOrder(graph, maxPoints, domain, order))
    return std::nullopt;
  FrontEliminator fronts(graph, cap, domain, order, bound, maxPoints);
  nothingFits = fronts.result() == FrontEliminator::Outcome::NothingFits;
  if (fronts.result() != FrontEliminator::Outcome::Solved)
    return std::nullopt;
  Solution s = finish(graph, fronts.choice());
  // Summed in another order the memory may differ in the last bits.
  if (!s.feasible || s.memory > cap)
    return std::nullopt;
  return s;
}

} // namespace

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

Solution loom::plan::solveExact(const StrategyGraph &graph, bool *exactOut,
                                uint64_t maxFactorEntries) {
  std::vector<unsigned> choice;
  bool exact = exactChoice(graph, 0.0, maxFactorEntries, choice);
  if (exactOut)
    *exactOut = exact;
  if (!exact)
    return solveGreedy(graph);
  return finish(graph, std::move(choice));
}

Solution loom::plan::solveGreedy(const StrategyGraph &graph) {
  return finish(graph, greedyChoice(graph, 0.0));
}

uint64_t loom::plan::countCombinations(const StrategyGraph &graph, uint64_t limit) {
  uint64_t combos = 1;
  for (unsigned v = 0; v < graph.nodes.size(); ++v)
    combos = mulCapped(combos, graph.numStrategies(v), limit);
  return combos;
}

Solution loom::plan::solveBruteForce(const StrategyGraph &graph,
                                     uint64_t maxCombinations, double memoryCap) {
  size_t n = graph.nodes.size();
  if (countCombinations(graph, maxCombinations) > maxCombinations)
    return Solution();

  // Node v's share of the cost: its own cost plus its edges to nodes before
  // it (and self-edges), so a prefix of the odometer has a fixed partial sum.
  std::vector<std::vector<EdgeRef>> back(n);
  for (unsigned i = 0; i < graph.edges.size(); ++i) {
    const StrategyGraph::Edge &e = graph.edges[i];
    if (e.from >= e.to)
      back[e.from].push_back({i, e.to, true});
    else
      back[e.to].push_back({i, e.from, false});
  }
  std::vector<unsigned> choice(n, 0), best(n, 0);
  auto share = [&](unsigned v) {
    double c = graph.nodes[v].cost[choice[v]];
    for (const EdgeRef &r : back[v]) {
      const StrategyGraph::Edge &e = graph.edges[r.edge];
      c += e.cost[size_t(choice[e.from]) * graph.numStrategies(e.to) +
                  choice[e.to]];
    }
    return c;
  };

  // prefix[v]: summed shares of nodes 0..v-1 (memory: memoryPrefix);
  // recomputed from the leftmost digit that moved. The last node moves
  // fastest, so the enumeration is lexicographic and a strict improvement
  // keeps the smallest minimiser.
  std::vector<double> prefix(n + 1, 0.0), memoryPrefix(n + 1, 0.0);
  const bool capped = memoryCap < kInfeasible;
  size_t dirty = 0;
  double bestCost = kInfeasible;
  while (true) {
    for (size_t v = dirty; v < n; ++v) {
      prefix[v + 1] = prefix[v] + share(unsigned(v));
      const std::vector<double> &memory = graph.nodes[v].memory;
      if (capped)
        memoryPrefix[v + 1] = memoryPrefix[v] + (memory.empty() ? 0.0 : memory[choice[v]]);
    }
    if (prefix[n] < bestCost && (!capped || memoryPrefix[n] <= memoryCap)) {
      bestCost = prefix[n];
      best = choice;
    }
    size_t p = n;
    while (p > 0) {
      --p;
      if (++choice[p] < graph.numStrategies(p))
        break;
      choice[p] = 0;
      if (p == 0) {
        p = n; // wrapped around: done
        break;
      }
    }
    if (p == n)
      break;
    dirty = p;
  }
  if (capped && bestCost == kInfeasible)
    return Solution(); // nothing fits
  return finish(graph, std::move(best));
}

/// The Lagrangian search under a binding cap, from the unconstrained plan.
static Solution lagrangianUnderCap(const StrategyGraph &graph, double cap,
                                   bool exact, const Solution &unconstrained,
                                   bool &fellBack) {
  auto solveAt = [&](double lambda) {
    return finish(graph, penalisedChoice(graph, lambda, exact, fellBack));
  };
  auto underCap = [cap](const Solution &s) { return s.memory <= cap; };

  // The cheapest plan under the cap, and the least-memory plan, seen so far.
  Solution bestUnder, leastMemory = unconstrained;
  bool haveUnder = false;
  auto consider = [&](const Solution &s) {
    if (s.feasible && underCap(s) &&
        (!haveUnder || s.cost < bestUnder.cost ||
         (s.cost == bestUnder.cost && s.memory < bestUnder.memory))) {
      bestUnder = s;
      haveUnder = true;
    }
    if (s.memory < leastMemory.memory ||
        (s.memory == leastMemory.memory && s.cost < leastMemory.cost))
      leastMemory = s;
  };
  consider(unconstrained);
  auto result = [&]() {
    if (!haveUnder) {
      Solution s = leastMemory;
      s.feasible = false;
      return s;
    }
    std::vector<unsigned> choice = bestUnder.choice;
    double memory = bestUnder.memory;
    improveUnderCap(graph, cap, choice, memory);
    Solution s = finish(graph, std::move(choice));
    // Summed move by move, the memory may differ from the sum in the last
    // bits; the recomputed one decides.
    if (!(s.feasible && underCap(s) && s.cost <= bestUnder.cost))
      return bestUnder;
    return s;
  };

  // Scales: lambda0 = costRange / memoryRange trades the whole spread of
  // one for the whole spread of the other; memoryFloor is a lower bound on
  // any plan's memory (per-node minima).
  double costRange = 0, memoryRange = 0, memoryFloor = 0;
  auto spread = [](const std::vector<double> &xs, double &lo, double &hi) {
    lo = kInfeasible;
    hi = -kInfeasible;
    for (double x : xs)
      if (std::isfinite(x)) {
        lo = std::min(lo, x);
        hi = std::max(hi, x);
      }
    return lo <= hi ? hi - lo : 0.0;
  };
  double lo, hi;
  for (const StrategyGraph::Node &node : graph.nodes) {
    costRange += spread(node.cost, lo, hi);
    if (!node.memory.empty()) {
      memoryRange += spread(node.memory, lo, hi);
      memoryFloor += lo <= hi ? lo : 0.0;
    }
  }
  for (const StrategyGraph::Edge &e : graph.edges)
    costRange += spread(e.cost, lo, hi);
  if (!(memoryRange > 0) || !std::isfinite(memoryRange))
    return result(); // memory cannot move
  if (!(costRange > 0) || !std::isfinite(costRange))
    costRange = 1;

  constexpr int kMaxSolves = 40;
  int solves = 1;
  auto atFloor = [&](const Solution &s) {
    return s.memory <= memoryFloor + 1e-12 * std::fabs(memoryFloor);
  };

  // Raise lambda until the plan fits (or memory is as low as it goes).
  // Past lambda0 * 8^10 any memory saving of a 1e-9 fraction of the range
  // outweighs every cost difference.
  double lamLo = 0, lamHi = costRange / memoryRange;
  Solution low = unconstrained, high;
  bool bracketed = false;
  for (int step = 0; step <= 10 && solves < kMaxSolves; ++step) {
    Solution s = solveAt(lamHi);
    ++solves;
    consider(s);
    if (underCap(s) && s.feasible) {
      high = s;
      bracketed = true;
      break;
    }
    if (atFloor(s))
      break;
    lamLo = lamHi;
    low = s;
    lamHi *= 8;
  }
  if (!bracketed)
    return result();

  // Between the two bracketing plans, solve where their penalised lines
  // cross. A plan strictly below both there is a new hull vertex; otherwise
  // the two are neighbours on the hull and the search is done.
  while (solves < kMaxSolves && low.memory > high.memory) {
    double lam = (high.cost - low.cost) / (low.memory - high.memory);
    if (!(lam > lamLo && lam < lamHi))
      lam = 0.5 * (lamLo + lamHi); // a heuristic solver can break convexity
    Solution s = solveAt(lam);
    ++solves;
    consider(s);
    double ref =
        std::min(low.cost + lam * low.memory, high.cost + lam * high.memory);
    double pen = s.cost + lam * s.memory;
    double tol = 1e-12 * (std::fabs(ref) + std::fabs(pen));
    if (s.choice == low.choice || s.choice == high.choice || !(pen < ref - tol))
      break;
    if (underCap(s) && s.feasible) {
      high = s;
      lamHi = lam;
    } else {
      low = s;
      lamLo = lam;
    }
  }
  return result();
}

Solution loom::plan::solveUnderMemoryCap(const StrategyGraph &graph, double cap,
                                         bool exact, bool *exactOut,
                                         uint64_t maxFrontPoints,
                                         Solution *lagrangianOut) {
  bool fellBack = false;
  auto answer = [&](Solution s, bool proven) {
    if (exactOut)
      *exactOut = proven;
    return s;
  };

  Solution unconstrained =
      finish(graph, penalisedChoice(graph, 0.0, exact, fellBack));
  bool underCap = unconstrained.memory <= cap;
  if ((unconstrained.feasible && underCap) ||
      (exact && !unconstrained.feasible)) {
    // Either the cap does not bind, or no plan has a finite cost at all.
    unconstrained.feasible = unconstrained.feasible && underCap;
    if (lagrangianOut)
      *lagrangianOut = unconstrained;
    return answer(unconstrained, exact && !fellBack);
  }

  // The cap binds. The Lagrangian search is quick and usually close; its
  // plan bounds the fronts' costs, which keeps them short, and the fronts
  // then find the cheapest plan (or prove that none fits) where they stay
  // within budget.
  Solution heuristic =
      lagrangianUnderCap(graph, cap, exact, unconstrained, fellBack);
  if (lagrangianOut)
    *lagrangianOut = heuristic;
  if (!exact || fellBack)
    return answer(heuristic, false);
  bool nothingFits = false;
  std::optional<Solution> best =
      frontSolve(graph, cap, maxFrontPoints,
                 heuristic.feasible ? &heuristic.choice : nullptr, nothingFits);
  if (!best)
    return answer(heuristic, nothingFits);
  // Equal up to rounding; the lower of the two as summed by evaluateCost.
  return answer(heuristic.feasible && heuristic.cost <= best->cost ? heuristic
                                                                   : *best,
                true);
}
