// Hostile points and options of `trainsim fit` and `trainsim calibrate`.
#include "hostile/hostile_support.hpp"

namespace {

const char* const kMxnet = "@src/tests/reference_data/throughput_vs_batch_mxnet_k80_m60.csv";
const std::string kPoints = "batch,throughput\n1,10\n2,15\n4,20\n8,22\n";
const char* const kScenario = "@src/examples/resnet50_dgx_a100.json";
const char* const kMeasured = "@src/examples/calibrate_resnet50_measured.csv";

std::string rows(int n) {
  std::string s = "batch,throughput\n";
  for (int i = 0; i < n; ++i)
    s += std::to_string(i % 7 + 1) + "," + std::to_string(10 + i % 5) + "\n";
  return s;
}

}  // namespace

HOSTILE("fit on throughputs around 1e155", {"fit", "@/p.csv"}, 2,
        {"@/p.csv:2: column 'throughput': 1e155 is outside the range a fit handles"},
        {{"p.csv", "batch,throughput\n1,1e155\n2,1.5e155\n4,1.8e155\n8,2e155\n"}})
HOSTILE("fit on throughputs around 1e-300", {"fit", "@/p.csv"}, 2,
        {"@/p.csv:2: column 'throughput': 1e-300 is outside the range"},
        {{"p.csv", "batch,throughput\n1,1e-300\n2,2e-300\n"}})
HOSTILE("fit on batches of 1e300", {"fit", "@/p.csv"}, 2,
        {"@/p.csv:3: column 'batch': 1e300 is outside the range"},
        {{"p.csv", "batch,throughput\n1,10\n1e300,20\n"}})
HOSTILE("fit with weights of 1e200", {"fit", "@/p.csv", "--weight-col", "w"}, 2,
        {"column 'w': 1e200 is outside the range"},
        {{"p.csv", "batch,throughput,w\n1,10,1\n2,15,1e200\n"}})
HOSTILE("fit --predict 1e308", {"fit", kMxnet, "--predict", "1e308"}, 2,
        {"--predict 1e308: expected a number from 1e-06 to 1e+12"})
HOSTILE("fit --predict 0", {"fit", kMxnet, "--predict", "64,0"}, 2,
        {"--predict 0: expected a number from 1e-06"})
HOSTILE("fit --predict -1", {"fit", kMxnet, "--predict", "-1"}, 2, {"--predict -1: expected"})
HOSTILE("fit --predict inf", {"fit", kMxnet, "--predict", "inf"}, 2, {"--predict inf: expected"})
HOSTILE("fit --predict nan", {"fit", kMxnet, "--predict", "nan"}, 2, {"--predict nan: expected"})
HOSTILE("fit --predict abc", {"fit", kMxnet, "--predict", "abc"}, 2, {"--predict abc: expected"})
HOSTILE("fit --predict 1e12 stays finite",
        {"fit", kMxnet, "--group-col", "gpu,model", "--predict", "1e12"}, 0, {"1e+12"})
HOSTILE("fit --loss-scale 0", {"fit", kMxnet, "--loss", "huber", "--loss-scale", "0"}, 2,
        {"--loss-scale 0: expected a number above 0"})
HOSTILE("fit --loss-scale inf", {"fit", kMxnet, "--loss", "huber", "--loss-scale", "inf"}, 2,
        {"--loss-scale inf: expected a number"})
HOSTILE("fit --loss-scale with l2", {"fit", kMxnet, "--loss-scale", "2"}, 2,
        {"--loss-scale 2: applies only to --loss huber or cauchy"})
HOSTILE("fit --loss l1", {"fit", kMxnet, "--loss", "l1"}, 2, {"--loss l1: unknown loss"})
HOSTILE("fit --shared b", {"fit", kMxnet, "--shared", "b"}, 2, {"--shared b: unknown parameter"})
HOSTILE("fit --format xml", {"fit", kMxnet, "--format", "xml"}, 2,
        {"--format xml: expected text, json or csv"})
HOSTILE("fit --curve into a missing folder prints no report",
        {"fit", kMxnet, "--curve", "@/no/such/dir/c.csv"}, 2,
        {"--curve @/no/such/dir/c.csv: cannot open the file for writing"})
HOSTILE("fit --curve onto a folder", {"fit", kMxnet, "--curve", "@/"}, 2,
        {"is a folder, not a file"})
HOSTILE("fit on a folder", {"fit", "@src/examples"}, 2,
        {"examples: is a folder, not a points CSV file"})
HOSTILE("fit on a missing file", {"fit", "@/p.csv"}, 2,
        {"@/p.csv: cannot open points CSV file: it does not exist"})
HOSTILE("fit on an empty file", {"fit", "@/p.csv"}, 2, {"@/p.csv:1: empty file"}, {{"p.csv", ""}})
HOSTILE("fit on a header without rows", {"fit", "@/p.csv"}, 2, {"no data rows after the header"},
        {{"p.csv", "batch,throughput\n"}})
HOSTILE("fit on a non-numeric value", {"fit", "@/p.csv"}, 2,
        {"@/p.csv:3: column 'throughput': 'fast' is not a number"},
        {{"p.csv", "batch,throughput\n1,10\n2,fast\n"}})
HOSTILE("fit on NaN", {"fit", "@/p.csv"}, 2, {"@/p.csv:3: column 'throughput'", "is not finite"},
        {{"p.csv", "batch,throughput\n1,10\n2,nan\n"}})
HOSTILE("fit on inf", {"fit", "@/p.csv"}, 2, {"@/p.csv:2: column 'batch'", "is not finite"},
        {{"p.csv", "batch,throughput\ninf,10\n2,20\n"}})
HOSTILE("fit on 1e999", {"fit", "@/p.csv"}, 2, {"@/p.csv:2: column 'throughput': '1e999'"},
        {{"p.csv", "batch,throughput\n1,1e999\n2,20\n"}})
HOSTILE("fit on a zero batch", {"fit", "@/p.csv"}, 2, {"column 'batch': 0 must be positive"},
        {{"p.csv", "batch,throughput\n0,10\n2,20\n"}})
HOSTILE("fit on a negative throughput", {"fit", "@/p.csv"}, 2,
        {"column 'throughput': -10 must be positive"},
        {{"p.csv", "batch,throughput\n1,-10\n2,20\n"}})
HOSTILE("fit on a short row", {"fit", "@/p.csv"}, 2, {"@/p.csv:3: expected 2 fields"},
        {{"p.csv", "batch,throughput\n1,10\n2\n"}})
HOSTILE("fit on a column named twice", {"fit", "@/p.csv"}, 2,
        {"column 'batch' appears twice in the header"},
        {{"p.csv", "batch,batch,throughput\n1,1,10\n"}})
HOSTILE("fit on a line that is not UTF-8", {"fit", "@/p.csv", "--group-col", "g"}, 2,
        {"@/p.csv:3: the line is not valid UTF-8 text"},
        {{"p.csv", "g,batch,throughput\na,1,10\n\xff,2,20\n"}})
HOSTILE("fit on more than 100,000 rows", {"fit", "@/p.csv"}, 2,
        {"@/p.csv:100002: more than the limit of 100000 data rows"}, {{"p.csv", rows(100001)}})
HOSTILE("fit on one batch size", {"fit", "@/p.csv"}, 2,
        {"group 'all' has only one distinct batch size", "not identifiable"},
        {{"p.csv", "batch,throughput\n4,10\n4,11\n"}})
HOSTILE("fit whose t diverges is an error, not inf", {"fit", "@/p.csv"}, 2,
        {"@/p.csv:2: the fit of group 'all' gives a non-finite t"},
        {{"p.csv", "batch,throughput\n1e-6,1e12\n1e12,1e-6\n"}})
HOSTILE("fit on wildly scattered points stays finite and quiet", {"fit", "@/p.csv"}, 0,
        {"group all", "max rel err = 5e+19%"},
        {{"p.csv", "batch,throughput\n1,1e12\n2,1e-6\n4,1e12\n8,1e-6\n"}})
HOSTILE("fit JSON of wild points has no NaN", {"fit", "@/p.csv", "--format", "json"}, 0,
        {"\"v0_ci95\": [\n        null"},
        {{"p.csv", "batch,throughput\n1,1e12\n2,1e-6\n4,1e12\n8,1e-6\n"}})
HOSTILE("fit missing group column", {"fit", "@/p.csv", "--group-col", "gpu"}, 2,
        {"@/p.csv:1: no group column 'gpu' (columns: batch, throughput)"}, {{"p.csv", kPoints}})
HOSTILE("fit --verbose is accepted", {"fit", "@/p.csv", "--verbose"}, 0, {"group all"},
        {{"p.csv", kPoints}})

HOSTILE("calibrate on a measured 1e-300",
        {"calibrate", kScenario, "@/m.csv", "--free", "input.decode_per_sample"}, 2,
        {"@/m.csv:2: column 'throughput': 1e-300 is outside the range"},
        {{"m.csv", "batch_per_replica,throughput\n32,1e-300\n64,2\n"}})
HOSTILE("calibrate on a measured 1e300",
        {"calibrate", kScenario, "@/m.csv", "--free", "input.decode_per_sample"}, 2,
        {"@/m.csv:2: column 'throughput': 1e300 is outside the range"},
        {{"m.csv", "batch_per_replica,throughput\n32,1e300\n64,2\n"}})
HOSTILE("calibrate --out onto a file prints no report",
        {"calibrate", kScenario, kMeasured, "--free", "input.decode_per_sample", "--out",
         "@/file.txt"},
        2, {"--out @/file.txt: is a file, not a folder"}, {{"file.txt", "x"}})
HOSTILE("calibrate --out below a file",
        {"calibrate", kScenario, kMeasured, "--free", "input.decode_per_sample", "--out",
         "@/file.txt/sub"},
        2, {"--out @/file.txt/sub: cannot create the folder"}, {{"file.txt", "x"}})
HOSTILE("calibrate --max-iterations 0",
        {"calibrate", kScenario, kMeasured, "--free", "input.decode_per_sample", "--max-iterations",
         "0"},
        2, {"--max-iterations 0: expected an integer from 1 to 1000"})
HOSTILE("calibrate --max-iterations 1e9",
        {"calibrate", kScenario, kMeasured, "--free", "input.decode_per_sample", "--max-iterations",
         "1e9"},
        2, {"--max-iterations 1e9: expected an integer from 1 to 1000"})
HOSTILE("calibrate --max-iterations abc",
        {"calibrate", kScenario, kMeasured, "--free", "input.decode_per_sample", "--max-iterations",
         "abc"},
        2, {"--max-iterations abc: expected an integer"})
HOSTILE("calibrate --objective mape+shape without a table",
        {"calibrate", kScenario, kMeasured, "--free", "input.decode_per_sample", "--objective",
         "mape+shape"},
        2, {"--objective mape+shape: needs --table: a measured CSV's rows form no series"})
HOSTILE("calibrate an unknown path",
        {"calibrate", kScenario, kMeasured, "--free", "input.decode_per_sampel"}, 2,
        {"--free input.decode_per_sampel: unknown path"})
HOSTILE("calibrate an integer setting",
        {"calibrate", kScenario, kMeasured, "--free", "input.workers"}, 2,
        {"--free input.workers: cannot be calibrated"})
HOSTILE("calibrate without --free", {"calibrate", kScenario, kMeasured}, 2,
        {"--free: name at least one parameter to calibrate"})
HOSTILE("calibrate without a throughput column",
        {"calibrate", kScenario, "@/m.csv", "--free", "input.decode_per_sample"}, 2,
        {"@/m.csv:1: no measured throughput (--throughput-col) column 'throughput'"},
        {{"m.csv", "batch_per_replica,speed\n32,100\n"}})
HOSTILE("calibrate a folder scenario",
        {"calibrate", "@src/examples", kMeasured, "--free", "input.decode_per_sample"}, 2,
        {"examples: is a folder, not a scenario file"})
HOSTILE("calibrate a scenario nested 100,000 deep",
        {"calibrate", "@/s.json", kMeasured, "--free", "input.decode_per_sample"}, 2,
        {"@/s.json:1:", "nested deeper than the limit"},
        {{"s.json", trainsim::test::deep_object(100000)}})
HOSTILE("calibrate --format xml",
        {"calibrate", kScenario, kMeasured, "--free", "input.decode_per_sample", "--format", "xml"},
        2, {"--format xml: expected text or json"})
HOSTILE("calibrate rows beyond the run-size limit",
        {"calibrate", kScenario, kMeasured, "--free", "input.decode_per_sample", "--set",
         "parallelism.data=4", "--set", "parallelism.pipeline=2", "--set",
         "parallelism.microbatches=16", "--set", "steps=10000"},
        2, {"the run would execute about", "above the limit of 1e+08"})
HOSTILE("calibrate a row with a bad value names the line",
        {"calibrate", kScenario, "@/m.csv", "--free", "input.decode_per_sample"}, 2,
        {"@/m.csv:3:", "batch_per_replica: value 1000000000 is above the limit"},
        {{"m.csv", "batch_per_replica,throughput\n32,2000\n1e9,2100\n"}})

TEST_CASE("hostile: the README workflow calibrate --out DIR, then simulate --profile-dir DIR") {
  using trainsim::test::HostileCase;
  const std::string dir = trainsim::test::hostile_dir() + "/calibrated";
  trainsim::test::run_hostile(HostileCase{
      {"calibrate", kScenario, kMeasured, "--set", "input.workers=24", "--free",
       "cluster.node.accelerator.kernels.compute.conv.fp16,input.decode_per_sample", "--out", dir},
      0,
      {"calibrated 2 parameter(s)"}});
  trainsim::test::run_hostile(HostileCase{
      {"simulate", kScenario, "--profile-dir", dir}, 0, {"scenario resnet50-dgx-a100"}});
  // The calibrated scenario written beside the profiles runs with them too.
  trainsim::test::run_hostile(
      HostileCase{{"simulate", dir + "/resnet50_dgx_a100.json", "--profile-dir", dir, "--set",
                   "steps=4", "--set", "warmup_steps=1"},
                  0,
                  {"scenario resnet50-dgx-a100"}});
  std::filesystem::remove_all(std::filesystem::path(dir).parent_path());
}

TEST_CASE("hostile: Ceres' own log reaches stderr only with --verbose") {
  // A diverging fit makes Ceres log (glog) about non-finite residuals: shown with --verbose, so
  // the suite's check for glog lines in every other case can fail.
  const std::string csv =
      trainsim::test::write_temp_file("batch,throughput\n1e-6,1e12\n1e12,1e-6\n", ".csv");
  const auto quiet = trainsim::test::run_cli({"fit", csv});
  const auto verbose = trainsim::test::run_cli({"fit", csv, "--verbose"});
  CHECK(quiet.exit_code == 2);
  CHECK(verbose.exit_code == 2);
  CHECK(quiet.err.find("residual_block") == std::string::npos);
  CHECK(verbose.err.find("residual_block") != std::string::npos);
  std::filesystem::remove(csv);
}
