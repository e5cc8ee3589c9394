#include "fit/validation.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "sim/config/units.hpp"

namespace trainsim::fit {

const char* half_name(Half h) {
  switch (h) {
    case Half::calibration:
      return "calibration";
    case Half::validation:
      return "validation";
    case Half::excluded:
      return "excluded";
  }
  return "calibration";
}

void split_halves(std::vector<ValidationPoint>& points) {
  std::map<std::string, std::vector<std::size_t>> by_series;
  for (std::size_t i = 0; i < points.size(); ++i)
    by_series[points[i].series].push_back(i);
  for (auto& [series, idx] : by_series) {
    std::stable_sort(idx.begin(), idx.end(),
                     [&](std::size_t a, std::size_t b) { return points[a].x < points[b].x; });
    for (std::size_t k = 0; k < idx.size(); ++k)
      points[idx[k]].half = k % 2 == 0 ? Half::calibration : Half::validation;
  }
}

void exclude_failed_runs(std::vector<ValidationPoint>& points, double min_ratio) {
  std::map<std::string, std::vector<std::size_t>> by_series;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (points[i].gpus > 0 && points[i].measured > 0) by_series[points[i].series].push_back(i);
  }
  const auto per_gpu = [&](std::size_t i) { return points[i].measured / points[i].gpus; };
  const auto num = [](double v) { return sim::format_significant(v, 4); };
  for (auto& [series, idx] : by_series) {
    std::stable_sort(idx.begin(), idx.end(),
                     [&](std::size_t a, std::size_t b) { return points[a].gpus < points[b].gpus; });
    // Judged on measured values only, so marking a row does not change how the next is judged.
    for (std::size_t k = 1; k + 1 < idx.size(); ++k) {
      const ValidationPoint& fewer = points[idx[k - 1]];
      const ValidationPoint& more = points[idx[k + 1]];
      ValidationPoint& here = points[idx[k]];
      if (fewer.gpus == here.gpus || more.gpus == here.gpus) continue;
      const double fewer_per_gpu = per_gpu(idx[k - 1]), more_per_gpu = per_gpu(idx[k + 1]);
      if (per_gpu(idx[k]) >= min_ratio * std::min(fewer_per_gpu, more_per_gpu)) continue;
      here.excluded_because =
          "per-GPU throughput " + num(per_gpu(idx[k])) + " is under " + num(100 * min_ratio) +
          "% of both neighbours' (" + num(fewer_per_gpu) + " on " + std::to_string(fewer.gpus) +
          " GPUs, " + num(more_per_gpu) + " on " + std::to_string(more.gpus) + "): a failed run";
      here.half = Half::excluded;
    }
  }
}

void exclude_beyond_peak(std::vector<ValidationPoint>& points) {
  const auto pct = [](double v) { return sim::format_significant(100 * v, 3) + "%"; };
  std::map<std::string, std::string> beyond;  // source line -> the label of its row beyond peak
  for (ValidationPoint& p : points) {
    if (p.half == Half::excluded || !(p.measured_mfu > 1)) continue;
    p.excluded_because = "the measured throughput needs " + pct(p.measured_mfu) +
                         " of the GPUs' peak for the model's matmul FLOPs alone (simulated MFU " +
                         pct(p.measured_mfu * p.predicted / p.measured) +
                         "): beyond what any run reaches";
    p.half = Half::excluded;
    if (!p.source_line.empty()) beyond.emplace(p.source_line, p.label);
  }
  for (ValidationPoint& p : points) {
    const auto it = beyond.find(p.source_line);
    if (p.half == Half::excluded || p.source_line.empty() || it == beyond.end()) continue;
    p.excluded_because = "reported on one line with " + it->second +
                         ", whose throughput is beyond the GPUs' peak: counted the same way";
    p.half = Half::excluded;
  }
}

namespace {

double mean_abs_pct(const std::vector<double>& errors) {
  if (errors.empty()) return 0;
  double s = 0;
  for (double e : errors)
    s += std::abs(e);
  return 100 * s / static_cast<double>(errors.size());
}

}  // namespace

TableAccuracy summarize(const std::string& name, const std::string& source, Half half,
                        const std::vector<ValidationPoint>& points, std::size_t worst_count) {
  TableAccuracy t;
  t.name = name;
  t.source = source;
  t.half = half;
  std::vector<double> abs_err;
  std::vector<WorstPoint> all;
  // Series means over every point of the series (both halves), so the shape of a curve is the
  // same whichever half a point is in.
  std::map<std::string, std::pair<double, double>> sums;  // measured, predicted
  std::map<std::string, int> counts;
  for (const ValidationPoint& p : points) {
    if (p.half == Half::excluded) continue;
    auto& s = sums[p.series];
    s.first += p.measured;
    s.second += p.predicted;
    ++counts[p.series];
  }
  std::vector<double> shape_err;
  for (const ValidationPoint& p : points) {
    if (p.half != half) continue;
    const double e = (p.predicted - p.measured) / p.measured;
    abs_err.push_back(e);
    all.push_back({p.label, p.measured, p.predicted, 100 * e});
    const auto& s = sums[p.series];
    const double n = counts[p.series];
    if (n > 1 && s.first > 0 && s.second > 0) {
      const double m = p.measured / (s.first / n);
      const double q = p.predicted / (s.second / n);
      shape_err.push_back((q - m) / m);
    }
  }
  t.points = static_cast<int>(abs_err.size());
  t.mape_abs_pct = mean_abs_pct(abs_err);
  t.mape_shape_pct = mean_abs_pct(shape_err);
  // Scaling efficiency against the series' 1-GPU row.
  std::map<std::string, const ValidationPoint*> single;
  for (const ValidationPoint& p : points) {
    if (p.gpus == 1 && p.half != Half::excluded) single[p.series] = &p;
  }
  std::vector<double> scaling_err;
  for (const ValidationPoint& p : points) {
    if (p.half != half || p.gpus <= 1) continue;
    const auto it = single.find(p.series);
    if (it == single.end()) continue;
    const double measured = p.measured / (p.gpus * it->second->measured);
    const double predicted = p.predicted / (p.gpus * it->second->predicted);
    scaling_err.push_back((predicted - measured) / measured);
  }
  if (!scaling_err.empty()) t.mape_scaling_pct = mean_abs_pct(scaling_err);
  std::stable_sort(all.begin(), all.end(), [](const WorstPoint& a, const WorstPoint& b) {
    return std::abs(a.error_pct) > std::abs(b.error_pct);
  });
  if (all.size() > worst_count) all.resize(worst_count);
  t.worst = std::move(all);
  return t;
}

}  // namespace trainsim::fit
