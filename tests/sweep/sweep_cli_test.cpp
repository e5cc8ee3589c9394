// trainsim sweep as a user runs it: every row equals `simulate` of that configuration, the
// output does not depend on --jobs (or on MPI ranks), bad values fail before any simulation,
// configurations that do not fit are rows, and Ctrl-C leaves complete rows behind.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli_support.hpp"

using trainsim::test::run_cli;
using trainsim::test::slurp;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

std::vector<std::string> split_csv(const std::string& line) {  // no quoted fields in these tests
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string f; std::getline(in, f, ',');)
    out.push_back(f);
  return out;
}

const std::vector<std::string> kSweep = {"sweep",
                                         "--vary",
                                         "parallelism.data=1..8x2",
                                         "--vary",
                                         "precision=fp16,fp32",
                                         "--vary",
                                         "batch_per_replica=64,128"};

}  // namespace

TEST_CASE("each sweep row equals simulate of the same overrides") {
  const auto sweep = run_cli(kSweep);
  REQUIRE(sweep.exit_code == 0);
  const auto rows = lines_of(sweep.out);
  REQUIRE(rows.size() == 1 + 4 * 2 * 2);
  const auto header = split_csv(rows[0]);
  CHECK(header[0] == "vary.parallelism.data");
  CHECK(header[1] == "vary.precision");
  CHECK(header[2] == "vary.batch_per_replica");
  CHECK(std::find(header.begin(), header.end(), "sim.wall_s") == header.end());
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const auto row = split_csv(rows[r]);
    REQUIRE(row.size() == header.size());
    const auto sim =
        run_cli({"simulate", "--set", "parallelism.data=" + row[0], "--set", "precision=" + row[1],
                 "--set", "batch_per_replica=" + row[2], "--format", "csv"});
    REQUIRE(sim.exit_code == 0);
    const auto sim_lines = lines_of(sim.out);
    const auto names = split_csv(sim_lines[0]);
    const auto values = split_csv(sim_lines[1]);
    for (std::size_t c = 0; c < names.size(); ++c) {
      // Sweep rows leave out the provenance counts simulate appends (cli/parameter_provenance).
      if (names[c] == "sim.wall_s" || names[c].rfind("provenance.", 0) == 0) continue;
      const auto at = std::find(header.begin(), header.end(), names[c]);
      REQUIRE(at != header.end());
      INFO("row " << r << " column " << names[c]);
      CHECK(row[static_cast<std::size_t>(at - header.begin())] == values[c]);
    }
  }
  // Order: the last --vary varies fastest.
  CHECK(split_csv(rows[1])[0] == "1");
  CHECK(split_csv(rows[2])[2] == "128");
  CHECK(split_csv(rows[3])[1] == "fp32");
  CHECK(split_csv(rows[5])[0] == "2");
}

TEST_CASE("sweep output is byte-identical whatever --jobs is") {
  for (const char* format : {"csv", "json"}) {
    auto args = kSweep;
    args.insert(args.end(), {"--format", format, "--jobs", "1"});
    const auto one = run_cli(args);
    args.back() = "8";
    const auto eight = run_cli(args);
    REQUIRE(one.exit_code == 0);
    REQUIRE(eight.exit_code == 0);
    CHECK(one.out == eight.out);
    CHECK(!one.out.empty());
  }
}

TEST_CASE("sweep --format json is one object with every row and the varied values") {
  auto args = kSweep;
  args.insert(args.end(), {"--format", "json", "--wall-time"});
  const auto r = run_cli(args);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["row_count"] == 16);
  CHECK(j["rows_written"] == 16);
  CHECK(j["complete"] == true);
  REQUIRE(j["rows"].size() == 16);
  CHECK(j["rows"][15]["vary"]["parallelism.data"] == 8);
  CHECK(j["rows"][15]["vary"]["precision"] == "fp32");
  CHECK(j["rows"][15]["data_parallel"] == 8);
  CHECK(j["rows"][15]["precision"] == "fp32");
  CHECK(j["rows"][0]["sim"].contains("wall_s"));  // only with --wall-time
  CHECK(j["vary"][0]["values"] == nlohmann::json::array({1, 2, 4, 8}));
}

TEST_CASE("sweep --out writes the same rows as stdout") {
  const std::string path = trainsim::test::write_temp_file("", ".csv");
  auto args = kSweep;
  args.insert(args.end(), {"--out", path});
  const auto to_file = run_cli(args);
  REQUIRE(to_file.exit_code == 0);
  CHECK(to_file.out.empty());
  CHECK(slurp(path) == run_cli(kSweep).out);
  std::remove(path.c_str());
}

TEST_CASE("a bad --vary value fails before any simulation, naming path and value") {
  const auto r =
      run_cli({"sweep", "--vary", "parallelism.data=1,2,16", "--vary", "precision=fp16"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());  // not even the header: nothing was simulated
  CHECK_THAT(r.err, Catch::Contains("parallelism.data=16"));
  CHECK_THAT(r.err, Catch::Contains("cluster has 8"));
  const auto typo = run_cli({"sweep", "--vary", "parallelism.dta=1,2"});
  CHECK(typo.exit_code == 2);
  CHECK(typo.out.empty());
  CHECK_THAT(typo.err, Catch::Contains("parallelism.dta=1"));
  CHECK_THAT(typo.err, Catch::Contains("did you mean 'data'"));
  const auto value = run_cli({"sweep", "--vary", "precision=fp16,fp8"});
  CHECK(value.exit_code == 2);
  CHECK_THAT(value.err, Catch::Contains("precision=fp8"));
  CHECK(run_cli({"sweep", "--vary", "steps=5..1"}).exit_code == 2);
  CHECK(run_cli({"sweep", "--vary", "steps=4", "--jobs", "0"}).exit_code == 2);
  CHECK(run_cli({"sweep", "--vary", "steps=4", "--format", "xml"}).exit_code == 2);
  CHECK(run_cli({"sweep"}).exit_code == 2);
}

TEST_CASE("configurations that do not fit in memory are rows with fits=false") {
  const auto r = run_cli({"sweep", "--vary", "batch_per_replica=256,4096", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["rows"].size() == 2);
  CHECK(j["rows"][0]["memory"]["fits"] == true);
  CHECK(j["rows"][1]["memory"]["fits"] == false);
  // The ResNet-50 demo keeps ~41 MB of activations per fp16 sample: 4096 exceed 40 GB.
  CHECK(j["rows"][1]["memory"]["peak_bytes_per_device"].get<double>() >
        j["rows"][1]["memory"]["capacity_bytes"].get<double>());
}

TEST_CASE("Ctrl-C stops the sweep and leaves only complete rows") {
  for (const char* format : {"csv", "json"}) {
    const std::string path = trainsim::test::write_temp_file("", ".out");
    // ~40 ms per row: the whole sweep would take minutes; it is interrupted after the first rows.
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::execl(TRAINSIM_EXE, TRAINSIM_EXE, "sweep", "--vary", "steps=1000..1300", "--vary",
              "batch_per_replica=1..8", "--jobs", "2", "--format", format, "--out", path.c_str(),
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    const std::size_t header_lines = std::string(format) == "csv" ? 1 : 2;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (lines_of(slurp(path)).size() < header_lines + 2 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ::kill(pid, SIGINT);
    int status = 0;
    ::waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 130);
    const std::string text = slurp(path);
    if (std::string(format) == "csv") {
      const auto lines = lines_of(text);
      REQUIRE(lines.size() >= 3);
      CHECK(lines.size() < 1 + 301 * 8);
      CHECK(text.back() == '\n');
      const std::size_t columns = split_csv(lines[0]).size();
      for (const auto& l : lines)
        CHECK(split_csv(l).size() == columns);
    } else {
      const auto j = nlohmann::json::parse(text);  // still one valid JSON object
      CHECK(j["complete"] == false);
      CHECK(j["rows_written"] == j["rows"].size());
      CHECK(j["rows"].size() >= 2);
      CHECK(j["rows"][1]["vary"]["batch_per_replica"] == 2);
    }
    std::remove(path.c_str());
  }
}

#ifdef TRAINSIM_HAVE_MPI
TEST_CASE("sweep under mpirun -np 2 writes the same bytes as the threaded sweep") {
  auto args = kSweep;
  args.insert(args.end(), {"--jobs", "1"});
  for (const char* format : {"csv", "json"}) {
    auto a = args;
    a.insert(a.end(), {"--format", format});
    const auto threaded = run_cli(a);
    std::vector<std::string> mpi = {"ASAN_OPTIONS=detect_leaks=0",
                                    "OMPI_ALLOW_RUN_AS_ROOT=1",
                                    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                    "OMPI_MCA_rmaps_base_oversubscribe=1",
                                    TRAINSIM_MPIEXEC,
                                    "--allow-run-as-root",
                                    "--oversubscribe",
                                    "-np",
                                    "2",
                                    TRAINSIM_EXE};
    mpi.insert(mpi.end(), a.begin(), a.end());
    const auto ranks = run_cli(mpi, "/usr/bin/env");
    INFO(ranks.err);
    REQUIRE(ranks.exit_code == 0);
    REQUIRE(threaded.exit_code == 0);
    CHECK(ranks.out == threaded.out);
  }
  // A bad value fails on every rank before any simulation; rank 0 alone reports it.
  std::vector<std::string> bad = {"ASAN_OPTIONS=detect_leaks=0",
                                  "OMPI_ALLOW_RUN_AS_ROOT=1",
                                  "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                  TRAINSIM_MPIEXEC,
                                  "--allow-run-as-root",
                                  "--oversubscribe",
                                  "-np",
                                  "2",
                                  TRAINSIM_EXE,
                                  "sweep",
                                  "--vary",
                                  "parallelism.data=1,16"};
  const auto r = run_cli(bad, "/usr/bin/env");
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  const std::string needle = "parallelism.data=16 (";
  std::size_t count = 0;
  for (auto at = r.err.find(needle); at != std::string::npos; at = r.err.find(needle, at + 1))
    ++count;
  CHECK(count == 1);
}
#endif
