#pragma once
// Splitting a model's layer list into K contiguous pipeline stages.

#include <vector>

namespace trainsim::models {

// Layer counts per stage that minimise the largest stage cost (the sum of its layers' costs), as
// GPipe's partitioner does; every stage gets at least one layer. Exact (dynamic programming over
// prefix sums, the split point found by bisection since the left part's optimum rises and the
// right part's cost falls with it). Among equal optima the earliest split points win, so the
// result is deterministic. Requires 1 <= stages <= costs.size() and non-negative costs.
std::vector<int> balance_by_cost(const std::vector<double>& costs, int stages);

// The largest stage cost of a given split.
double slowest_stage_cost(const std::vector<double>& costs, const std::vector<int>& balance);

}  // namespace trainsim::models
