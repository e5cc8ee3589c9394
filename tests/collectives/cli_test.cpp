// `trainsim collective` as a user runs it: JSON keys, the sweep table, bad input -> exit 2.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run_cli.hpp"

using trainsim::test::run_cli;

TEST_CASE("collective --format json has the documented keys") {
  const auto r =
      run_cli({"collective", "--cluster", "star-1gbe", "--set", "cluster.nodes=32", "--op",
               "allreduce", "--algorithm", "ring", "--bytes", "64 MiB", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"time_s", "algbw_GBps", "busbw_GBps", "events", "wall_s"})
    CHECK(j.contains(key));
  CHECK(j["ranks"] == 32);
  // 2(P-1)/P x 64 MiB over 1 Gb/s plus 62 latencies and reductions: about 1.05 s.
  CHECK(j["time_s"].get<double>() == Approx(1.047).epsilon(0.01));
  CHECK(j["busbw_GBps"].get<double>() ==
        Approx(j["algbw_GBps"].get<double>() * 2 * 31 / 32).epsilon(1e-12));
}

TEST_CASE("collective --sweep prints one row per doubling size") {
  const auto r = run_cli(
      {"collective", "--cluster", "mi300x-8", "--algorithm", "ring", "--sweep", "1 MiB:8MiB"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("busbw(GB/s)") != std::string::npos);
  CHECK(r.out.find("1048576") != std::string::npos);
  CHECK(r.out.find("8388608") != std::string::npos);
  int rows = 0;
  for (char ch : r.out)
    rows += ch == '\n';
  CHECK(rows == 3 + 4);
}

TEST_CASE("collective: sparsified algorithms report k") {
  const auto r = run_cli({"collective", "--cluster", "gtopk-32x-p102-1gbe", "--algorithm", "gtopk",
                          "--bytes", "100MB", "--density", "0.001", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["k"] == 25000);
}

TEST_CASE("collective: bad values exit 2 naming the option and value") {
  struct Case {
    std::vector<std::string> args;
    std::string needle;
  };
  const std::vector<Case> cases{
      {{"--algorithm", "rign", "--bytes", "1MiB"}, "rign"},
      {{"--algorithm", "ring", "--bytes", "12 parsecs"}, "--bytes 12 parsecs"},
      {{"--algorithm", "ring", "--bytes", "-5"}, "--bytes -5"},
      {{"--algorithm", "topk", "--bytes", "1MiB", "--density", "2"}, "--density 2"},
      {{"--algorithm", "ring", "--op", "allscatter", "--bytes", "1MiB"}, "allscatter"},
      {{"--algorithm", "ring", "--protocol", "LL256", "--bytes", "1MiB"}, "LL256"},
      {{"--algorithm", "ring", "--bytes", "1MiB", "--format", "xml"}, "--format xml"},
      {{"--algorithm", "ring", "--sweep", "8"}, "--sweep 8"},
      {{"--algorithm", "hierarchical", "--op", "broadcast", "--bytes", "1MiB"}, "hierarchical"},
      {{"--algorithm", "ring", "--bytes", "1MiB", "--ranks", "999"}, "--ranks"},
      {{"--set", "cluster.collectives.library=mpi", "--bytes", "1MiB"}, "mpi"},
      {{"--set", "cluster.collectives.channels=0", "--bytes", "1MiB"}, "channels"},
      {{"--set", "cluster.collectives.step_latency.nvlink.lx=1us", "--bytes", "1MiB"}, "lx"},
      {{"--set", "cluster.collectives.protocols=[\"LL256\"]", "--bytes", "1MiB"}, "LL256"},
      {{"--set", "cluster.node.intra.link.efficiency=1.5", "--bytes", "1MiB"}, "efficiency"},
      {{"--algorithm", "nvls", "--bytes", "1MiB"}, "nvls"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args{"collective", "--cluster", "mi300x-8"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const auto r = run_cli(args);
    INFO(c.needle << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.needle) != std::string::npos);
  }
  const auto r = run_cli(
      {"collective", "--cluster", "no-such-cluster", "--algorithm", "ring", "--bytes", "1"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("no-such-cluster") != std::string::npos);
}
