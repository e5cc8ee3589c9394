// Stand-in implementation of fit/validation.hpp written on the `coll` branch so the collective
// tables can be split and summarized before the lead's implementation lands; when merging, keep
// main's file if it has one.
#include "fit/validation.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace trainsim::fit {

const char* half_name(Half h) {
  return h == Half::calibration ? "calibration" : "validation";
}

void split_halves(std::vector<ValidationPoint>& points) {
  std::map<std::string, std::vector<std::size_t>> series;
  for (std::size_t i = 0; i < points.size(); ++i)
    series[points[i].series].push_back(i);
  for (auto& [name, idx] : series) {
    std::stable_sort(idx.begin(), idx.end(),
                     [&](std::size_t a, std::size_t b) { return points[a].x < points[b].x; });
    for (std::size_t j = 0; j < idx.size(); ++j)
      points[idx[j]].half = j % 2 == 0 ? Half::calibration : Half::validation;
  }
}

TableAccuracy summarize(const std::string& name, const std::string& source, Half half,
                        const std::vector<ValidationPoint>& points, std::size_t worst_count) {
  TableAccuracy t;
  t.name = name;
  t.source = source;
  t.half = half;
  std::map<std::string, std::pair<double, double>> means;  // series -> (measured, predicted)
  std::map<std::string, int> counts;
  for (const ValidationPoint& p : points) {
    if (p.half != half) continue;
    means[p.series].first += p.measured;
    means[p.series].second += p.predicted;
    ++counts[p.series];
  }
  double abs_sum = 0, shape_sum = 0;
  for (const ValidationPoint& p : points) {
    if (p.half != half) continue;
    ++t.points;
    const double e = (p.predicted - p.measured) / p.measured;
    abs_sum += std::abs(e);
    const auto& [mm, mp] = means[p.series];
    const double n = counts[p.series];
    const double sm = p.measured / (mm / n), sp = p.predicted / (mp / n);
    shape_sum += std::abs(sp - sm) / sm;
    t.worst.push_back({p.label, p.measured, p.predicted, 100 * e});
  }
  if (t.points > 0) {
    t.mape_abs_pct = 100 * abs_sum / t.points;
    t.mape_shape_pct = 100 * shape_sum / t.points;
  }
  std::stable_sort(t.worst.begin(), t.worst.end(), [](const WorstPoint& a, const WorstPoint& b) {
    return std::abs(a.error_pct) > std::abs(b.error_pct);
  });
  if (t.worst.size() > worst_count) t.worst.resize(worst_count);
  return t;
}

}  // namespace trainsim::fit
