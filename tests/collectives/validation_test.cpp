// The collective busbw tables of `trainsim validate`: every row simulated on the cluster of the
// machine that measured it, with the library's automatic algorithm and protocol. Their MAPE per
// half is pinned with every other table's in tests/validate/pins.json (target: 15% per table,
// goal 5%); here the evaluator's mapping of rows to points.

#include <catch2/catch.hpp>

#include "cli/profiles_source.hpp"
#include "cli/validate_collectives.hpp"
#include "cli/validate_tables.hpp"
#include "fit/validation.hpp"

#include <string>

using namespace trainsim;

TEST_CASE("collective tables: halves alternate by size and busbw comes from the time column") {
  const sim::ProfileLibrary profiles = cli::load_profile_library({});
  const cli::CollectiveTable& t = cli::collective_tables().front();
  const auto points = cli::evaluate_collective_table(t, cli::reference_csv(t.file), profiles);
  REQUIRE(points.size() == 31);
  CHECK(points[0].half == fit::Half::calibration);
  CHECK(points[1].half == fit::Half::validation);
  // 1 MiB row: 58.47 us measured, busbw = 1048576 / 58.47 us x 2 x 7/8 = 31.38 GB/s (as printed).
  CHECK(points[17].x == 1048576);
  CHECK(points[17].measured == Approx(31.38).epsilon(1e-3));
}

TEST_CASE("collective tables are registered with trainsim validate and within the 15% target") {
  const sim::ProfileLibrary profiles = cli::load_profile_library({});
  std::vector<cli::ReferenceTable> tables;
  cli::add_collective_tables(tables);
  REQUIRE(tables.size() == cli::collective_tables().size());
  for (const cli::ReferenceTable& t : tables) {
    CHECK(t.metric == "busbw GB/s");
    const std::vector<fit::ValidationPoint> points = t.evaluate(profiles);
    for (fit::Half h : {fit::Half::calibration, fit::Half::validation}) {
      const fit::TableAccuracy a = fit::summarize(t.name, t.source, h, points);
      INFO(t.name << " " << fit::half_name(h) << ": " << a.mape_abs_pct << "%");
      CHECK(a.mape_abs_pct < 15);
    }
  }
}
