#pragma once
// Runs the built `trainsim` binary as a user would and captures exit code, stdout and stderr.

#include <sys/wait.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace trainsim::test {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One private directory per test process for the files its tests write, removed when the
// process exits: a test run leaves nothing in /tmp (it used to leave one file per
// write_temp_file call, about 1,900 per ctest run). run_cli captures output there too.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/trainsim_test_XXXXXX";
    if (::mkdtemp(pattern) == nullptr)
      throw std::runtime_error("cannot create a temporary directory under /tmp");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline const std::string& process_temp_dir() {
  static const TempDir dir;
  return dir.path();
}

// Runs `trainsim args...` (or any program when `program` is given) with the working directory
// unchanged; stdin is /dev/null.
inline CliResult run_cli(const std::vector<std::string>& args,
                         const std::string& program = TRAINSIM_EXE) {
  static int counter = 0;
  const std::string base = process_temp_dir() + "/run_" + std::to_string(counter++);
  std::string cmd = shell_quote(program);
  for (const auto& a : args)
    cmd += " " + shell_quote(a);
  cmd += " </dev/null >" + base + ".out 2>" + base + ".err";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}

// A fresh, empty folder in the process's temporary directory; `name` says what it is for.
inline std::string fresh_dir(const std::string& name) {
  static int counter = 0;
  const std::string dir = process_temp_dir() + "/" + name + "_" + std::to_string(counter++);
  std::filesystem::create_directories(dir);
  return dir;
}

// Writes `content` to a fresh file with the given suffix in the process's temporary directory
// and returns its path.
inline std::string write_temp_file(const std::string& content,
                                   const std::string& suffix = ".json") {
  static int counter = 0;
  const std::string path = process_temp_dir() + "/input_" + std::to_string(counter++) + suffix;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

}  // namespace trainsim::test
