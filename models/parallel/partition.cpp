#include "models/parallel/partition.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace trainsim::models {

std::vector<int> balance_by_cost(const std::vector<double>& costs, int stages) {
  const int n = static_cast<int>(costs.size());
  if (stages < 1 || stages > n)
    throw std::invalid_argument("balance_by_cost: need 1 <= stages <= layers");
  std::vector<double> prefix(static_cast<std::size_t>(n) + 1, 0.0);
  for (int i = 0; i < n; ++i)
    prefix[static_cast<std::size_t>(i) + 1] =
        prefix[static_cast<std::size_t>(i)] + costs[static_cast<std::size_t>(i)];
  const auto range = [&](int a, int b) {
    return prefix[static_cast<std::size_t>(b)] - prefix[static_cast<std::size_t>(a)];
  };
  const auto at = [n](int k, int i) {
    return static_cast<std::size_t>(k) * static_cast<std::size_t>(n + 1) +
           static_cast<std::size_t>(i);
  };
  // best[k][i]: minimal slowest stage when the first i layers form k stages; cut[k][i]: where the
  // k-th stage starts in that optimum.
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> best(static_cast<std::size_t>(stages + 1) * static_cast<std::size_t>(n + 1),
                           inf);
  std::vector<int> cut(best.size(), 0);
  for (int i = 1; i <= n; ++i)
    best[at(1, i)] = range(0, i);
  for (int k = 2; k <= stages; ++k) {
    for (int i = k; i <= n; ++i) {
      // j in [k-1, i-1]: best[k-1][j] rises with j, range(j, i) falls; the optimum is next to
      // the first j where the left part is at least the right part.
      int lo = k - 1;
      int hi = i - 1;
      while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (best[at(k - 1, mid)] >= range(mid, i)) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      int chosen = lo;
      double value = std::max(best[at(k - 1, lo)], range(lo, i));
      if (lo > k - 1) {
        const double before = std::max(best[at(k - 1, lo - 1)], range(lo - 1, i));
        if (before <= value) {
          chosen = lo - 1;
          value = before;
        }
      }
      best[at(k, i)] = value;
      cut[at(k, i)] = chosen;
    }
  }
  std::vector<int> balance(static_cast<std::size_t>(stages), 0);
  int end = n;
  for (int k = stages; k >= 1; --k) {
    const int start = k == 1 ? 0 : cut[at(k, end)];
    balance[static_cast<std::size_t>(k - 1)] = end - start;
    end = start;
  }
  return balance;
}

double slowest_stage_cost(const std::vector<double>& costs, const std::vector<int>& balance) {
  double worst = 0;
  std::size_t i = 0;
  for (const int count : balance) {
    double sum = 0;
    for (int c = 0; c < count; ++c)
      sum += costs.at(i++);
    worst = std::max(worst, sum);
  }
  return worst;
}

}  // namespace trainsim::models
