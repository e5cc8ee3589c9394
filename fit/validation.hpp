#pragma once
// Accuracy of predictions against a reference table: the statistics behind `trainsim validate`.
// Pure arithmetic over (measured, predicted) points; the simulations that produce the predictions
// live with the command (cli/), which maps each table's rows to scenarios.
//
// Every table's rows are split into a calibration half and a validation half (split_halves):
// parameters are fitted on the calibration half only, and both halves are reported apart. A row
// that is plainly a failed run (exclude_failed_runs) is taken out of both and listed on its own.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace trainsim::fit {

enum class Half { calibration, validation, excluded };
const char* half_name(Half h);

struct ValidationPoint {
  std::string label;   // one row, readable: "8x V100 16GB resnet50 batch 1024"
  std::string series;  // rows that form one curve (same system and workload, varying x)
  double x = 0;        // the series' varying quantity (batch, GPU count, message size)
  double measured = 0;
  double predicted = 0;
  int gpus = 0;  // > 0 where the table has GPU counts (scaling efficiency is computed from these)
  Half half = Half::calibration;
  std::string excluded_because;  // why, where half is excluded
  // The model FLOPs utilisation the measured value implies (the simulated MFU scaled by measured /
  // predicted), where the table's rows are training throughputs the simulator counts matmul FLOPs
  // for; 0 where unknown.
  double measured_mfu = 0;
  // The published line the row comes from, where one line reports several rows (a README table
  // line's FP32 and mixed-precision throughputs and the speedup between them); empty otherwise.
  std::string source_line;
};

struct WorstPoint {
  std::string label;
  double measured = 0;
  double predicted = 0;
  double error_pct = 0;  // signed: (predicted - measured) / measured x 100
};

struct TableAccuracy {
  std::string name;
  std::string source;
  Half half = Half::calibration;
  int points = 0;
  double mape_abs_pct = 0;    // mean |predicted - measured| / measured
  double mape_shape_pct = 0;  // the same after dividing each series by its own mean
                              // (measured and predicted apart): the curve's shape
  // Scaling efficiency thr(n) / (n thr(1)) per series, predicted vs measured, for rows with
  // n > 1 GPUs whose series has a 1-GPU row (in either half); nullopt when there is none.
  std::optional<double> mape_scaling_pct;
  std::vector<WorstPoint> worst;  // largest |error| first, at most `worst_count`
};

// Assigns halves: within each series, rows sorted by x alternate calibration, validation,
// calibration, ... (ties keep input order), so both halves cover every series and range.
void split_halves(std::vector<ValidationPoint>& points);

// Takes out of both halves (half = excluded, with the reason) each row whose per-GPU throughput is
// under `min_ratio` of both its neighbours' in its series (the rows with the next fewer and the
// next more GPUs). Data parallelism can lose per-GPU throughput as GPUs are added, but a row below
// both neighbours, the larger one included, lost it to something other than scale: a failed or
// throttled run. For tables whose `measured` is a total throughput over `gpus` GPUs; rows keep the
// halves split_halves gave them, so the other rows' halves do not move.
void exclude_failed_runs(std::vector<ValidationPoint>& points, double min_ratio = 0.5);

// Takes out of both halves each row whose measured throughput needs more than the GPUs' dense peak
// in the row's precision for the model's matmul FLOPs alone (measured_mfu > 1): no run reaches
// that, so the row's batch, precision or unit is not what the table says. The rows that share its
// source_line go with it: one benchmark script measured them and counted them the same way (the
// line's speedup column divides one by the other), so what is wrong with the one is wrong with
// them. Rows keep their halves otherwise, as in exclude_failed_runs.
void exclude_beyond_peak(std::vector<ValidationPoint>& points);

// Accuracy of the points of `half` (the others are used only as scaling references).
TableAccuracy summarize(const std::string& name, const std::string& source, Half half,
                        const std::vector<ValidationPoint>& points, std::size_t worst_count = 5);

}  // namespace trainsim::fit
