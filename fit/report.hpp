#pragma once
// Formats fit results: a readable text table per group, one JSON object, one CSV row per group,
// and the fitted curve with its bands for plotting.

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fit/fit_types.hpp"
#include "fit/joint_fit.hpp"

namespace trainsim::fit {

struct ReportContext {
  std::vector<std::string> group_columns;
  double confidence = 0.95;
  std::optional<JointSummary> joint;  // set for --shared fits
};

std::string loss_name(Loss loss);
std::string shared_name(Shared shared);

nlohmann::ordered_json fits_to_json(const std::vector<ThroughputFit>& fits,
                                    const ReportContext& context);
void write_text(std::ostream& os, const std::vector<ThroughputFit>& fits,
                const ReportContext& context);
void write_csv(std::ostream& os, const std::vector<ThroughputFit>& fits);
// The curve per group on a geometric grid from half the smallest to twice the largest measured
// batch: group,batch,throughput,ci_lo,ci_hi,pi_lo,pi_hi.
void write_curve_csv(std::ostream& os, const std::vector<ThroughputFit>& fits,
                     int points_per_group = 100);

}  // namespace trainsim::fit
