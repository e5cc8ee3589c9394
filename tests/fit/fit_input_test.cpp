// Bad input to `trainsim fit`: every case exits 2 and names the line, the column and the value.

#include <catch2/catch.hpp>

#include <string>

#include "cli_support.hpp"
#include "fit/fit_series.hpp"
#include "fit/points_csv.hpp"
#include "sim/core/input_error.hpp"

using trainsim::test::run_cli;
using trainsim::test::write_temp_file;

namespace {

trainsim::test::CliResult fit_csv(const std::string& csv, std::vector<std::string> extra = {}) {
  const std::string path = write_temp_file(csv, ".csv");
  std::vector<std::string> args{"fit", path};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = run_cli(args);
  r.err += std::string("|path=").append(path);  // so a failing CHECK shows which file
  return r;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("an empty file exits 2 naming line 1") {
  const auto r = fit_csv("");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, ".csv:1: empty file"));
}

TEST_CASE("a header without rows exits 2") {
  const auto r = fit_csv("batch,throughput\n");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, ".csv:1: no data rows"));
}

TEST_CASE("a missing column exits 2 naming it and the columns present") {
  const auto r = fit_csv("batch,speed\n1,10\n2,15\n");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, ".csv:1: no throughput column"));
  CHECK(contains(r.err, "batch, speed"));
  const auto r2 = fit_csv("bs,throughput\n1,10\n2,15\n");
  CHECK(r2.exit_code == 2);
  CHECK(contains(r2.err, "no batch column 'batch' (columns: bs, throughput)"));
  const auto r3 = fit_csv("batch,throughput\n1,10\n2,15\n", {"--group-col", "gpu"});
  CHECK(r3.exit_code == 2);
  CHECK(contains(r3.err, "no group column 'gpu'"));
  const auto r4 = fit_csv("batch,throughput\n1,10\n2,15\n", {"--weight-col", "w"});
  CHECK(r4.exit_code == 2);
  CHECK(contains(r4.err, "no weight column 'w'"));
}

TEST_CASE("an ambiguous default throughput column exits 2") {
  const auto r = fit_csv("batch,throughput,images_per_s\n1,10,10\n2,15,15\n");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "ambiguous throughput column (throughput, images_per_s)"));
  // Naming one resolves it.
  CHECK(fit_csv("batch,throughput,images_per_s\n1,10,10\n2,15,15\n4,20,20\n",
                {"--throughput-col", "images_per_s"})
            .exit_code == 0);
}

TEST_CASE("a non-numeric value exits 2 naming line and column and value") {
  const auto r = fit_csv("batch,throughput\n1,10\n2,fast\n4,20\n");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, ".csv:3: column 'throughput': 'fast' is not a number"));
  const auto r2 = fit_csv("batch,throughput\n1,10\n2x,15\n");
  CHECK(r2.exit_code == 2);
  CHECK(contains(r2.err, ".csv:3: column 'batch': '2x' is not a number"));
  const auto r3 = fit_csv("batch,throughput\n1,10\n2,\n");
  CHECK(r3.exit_code == 2);
  CHECK(contains(r3.err, ".csv:3: column 'throughput' is empty"));
}

TEST_CASE("NaN and infinity exit 2 with the line") {
  const auto r = fit_csv("batch,throughput\n1,10\n2,nan\n4,20\n");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, ".csv:3: column 'throughput': 'nan' is not finite"));
  const auto r2 = fit_csv("batch,throughput\n1,10\ninf,12\n4,20\n");
  CHECK(r2.exit_code == 2);
  CHECK(contains(r2.err, ".csv:3: column 'batch': 'inf' is not finite"));
}

TEST_CASE("zero and negative values exit 2 with the line") {
  const auto r = fit_csv("batch,throughput\n1,10\n2,15\n4,-20\n");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, ".csv:4: column 'throughput': -20 must be positive"));
  const auto r2 = fit_csv("batch,throughput\n0,10\n2,15\n");
  CHECK(r2.exit_code == 2);
  CHECK(contains(r2.err, ".csv:2: column 'batch': 0 must be positive"));
  const auto r3 = fit_csv("batch,throughput,w\n1,10,1\n2,15,0\n4,20,1\n", {"--weight-col", "w"});
  CHECK(r3.exit_code == 2);
  CHECK(contains(r3.err, ".csv:3: column 'w': 0 must be positive"));
}

TEST_CASE("a row with the wrong number of fields exits 2") {
  const auto r = fit_csv("batch,throughput\n1,10\n2,15,7\n");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, ".csv:3: expected 2 fields (batch,throughput), found 3"));
}

TEST_CASE("a column named twice in the header exits 2 instead of picking one") {
  const auto r = fit_csv("batch,throughput,throughput\n1,10,11\n2,15,16\n");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, ".csv:1: column 'throughput' appears twice in the header"));
}

TEST_CASE("a UTF-8 byte-order mark and CRLF line ends (spreadsheet exports) are accepted") {
  const auto r = fit_csv(
      "\xEF\xBB\xBF"
      "batch,throughput\r\n1,10\r\n2,15\r\n4,18\r\n",
      {"--format", "csv"});
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "all,"));
}

TEST_CASE("a group with one distinct batch size is not identifiable") {
  // Comments and blank lines count as lines, so the line numbers match an editor's.
  const std::string csv =
      "gpu,batch,throughput\n# measured twice at one "
      "batch\n1,8,100\n1,16,150\n\n2,8,190\n2,8,191\n";
  const auto r = fit_csv(csv, {"--group-col", "gpu"});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err,
                 ".csv:6: group '2' has only one distinct batch size (batch 8 on line(s) 6,7)"));
  CHECK(contains(r.err, "not identifiable"));
  CHECK(r.out.empty());  // fails before printing any fit
}

TEST_CASE("bad options exit 2 naming the option") {
  const std::string csv = "batch,throughput\n1,10\n2,15\n4,20\n";
  const auto loss = fit_csv(csv, {"--loss", "l1"});
  CHECK(loss.exit_code == 2);
  CHECK(contains(loss.err, "--loss l1: unknown loss"));
  const auto scale = fit_csv(csv, {"--loss", "huber", "--loss-scale", "-1"});
  CHECK(scale.exit_code == 2);
  CHECK(contains(scale.err, "--loss-scale -1: expected a number above 0"));
  const auto l2_scale = fit_csv(csv, {"--loss-scale", "2"});
  CHECK(l2_scale.exit_code == 2);
  CHECK(contains(l2_scale.err, "--loss-scale 2: applies only to --loss huber or cauchy"));
  const auto predict = fit_csv(csv, {"--predict", "64,abc"});
  CHECK(predict.exit_code == 2);
  CHECK(contains(predict.err, "--predict abc: expected a number from"));
  const auto shared = fit_csv(csv, {"--shared", "v0"});
  CHECK(shared.exit_code == 2);
  CHECK(contains(shared.err, "a joint fit needs at least two groups (found 1)"));
  const auto shared_name = fit_csv(csv, {"--shared", "b"});
  CHECK(shared_name.exit_code == 2);
  CHECK(contains(shared_name.err, "--shared b: unknown parameter"));
  const auto format = fit_csv(csv, {"--format", "xml"});
  CHECK(format.exit_code == 2);
  const auto unknown = fit_csv(csv, {"--bogus"});
  CHECK(unknown.exit_code == 2);
  const auto missing = run_cli({"fit", "/nonexistent/points.csv"});
  CHECK(missing.exit_code == 2);
  CHECK(contains(missing.err, "/nonexistent/points.csv: cannot open"));
}

TEST_CASE("the library throws InputError for the same problems") {
  trainsim::fit::CsvColumns columns;
  CHECK_THROWS_AS(trainsim::fit::parse_points_csv("batch,throughput\n1,x\n", "p.csv", columns),
                  trainsim::InputError);
  CHECK_THROWS_WITH(trainsim::fit::parse_points_csv("batch,throughput\n1,x\n", "p.csv", columns),
                    Catch::Contains("p.csv:2: column 'throughput': 'x' is not a number"));
  trainsim::fit::Series one_batch{"s", {}, {{8, 100, 1, 0}, {8, 101, 1, 0}}, ""};
  CHECK_THROWS_WITH(trainsim::fit::fit_series(one_batch), Catch::Contains("not identifiable"));
}

TEST_CASE("quoted fields and grouping by two columns") {
  trainsim::fit::CsvColumns columns;
  columns.group = {"gpu", "model"};
  const auto series = trainsim::fit::parse_points_csv(
      "gpu,model,batch,throughput\nK80,\"Net, big\",1,10\nK80,small,1,20\nK80,\"Net, big\",2,15\n",
      "p.csv", columns);
  REQUIRE(series.size() == 2);
  CHECK(series[0].name == "K80/Net, big");
  CHECK(series[0].points.size() == 2);
  CHECK(series[0].points[1].line == 4);
  CHECK(series[1].name == "K80/small");
}
