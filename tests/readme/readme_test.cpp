// The README's commands are tests: every ```sh block of README.md (and hw_profiles/README.md)
// runs, command line by command line, against the built binary (`trainsim` and
// `./build/trainsim` become TRAINSIM_EXE) in one fresh folder per README where examples/, tests/,
// hw_profiles/, notebooks/ and scripts/ of the repository are reachable (the analysis scripts
// read what `trainsim validate --points` writes), so blocks can use files that earlier blocks
// wrote (calibrate --out, then simulate --profile-dir). Each command must exit 0, or the code
// given by a `<!-- readme-test: exit N -->` comment on the line before the fence; a block after
// `<!-- readme-test: skip (reason) -->` is not run (builds, apt, mpirun, Slurm). Output blocks
// are ```text and are not compared (numbers move as the models improve).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "sweep/cli_support.hpp"

namespace fs = std::filesystem;
using trainsim::test::shell_quote;
using trainsim::test::slurp;

namespace {

struct ShBlock {
  int line = 0;  // of the opening fence
  std::vector<std::string> commands;
  int expected_exit = 0;
  bool skip = false;
};

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

std::vector<ShBlock> sh_blocks(const std::string& path) {
  std::vector<std::string> lines;
  std::istringstream in(slurp(path));
  for (std::string l; std::getline(in, l);)
    lines.push_back(l);
  static const std::regex exit_marker(R"(<!--\s*readme-test:\s*exit\s+(\d+)\s*-->)");
  static const std::regex skip_marker(R"(<!--\s*readme-test:\s*skip\b.*-->)");
  std::vector<ShBlock> blocks;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string fence = trim(lines[i]);
    if (fence.rfind("```", 0) != 0) continue;
    // Find the closing fence whatever the language, so the next block starts after it.
    std::size_t end = i + 1;
    while (end < lines.size() && trim(lines[end]) != "```")
      ++end;
    if (fence != "```sh") {
      i = end;
      continue;
    }
    ShBlock b;
    b.line = static_cast<int>(i + 1);
    std::size_t prev = i;
    while (prev > 0 && trim(lines[prev - 1]).empty())
      --prev;
    if (prev > 0) {
      std::smatch m;
      const std::string marker = trim(lines[prev - 1]);
      if (std::regex_search(marker, m, exit_marker)) b.expected_exit = std::stoi(m[1]);
      if (std::regex_search(marker, skip_marker)) b.skip = true;
    }
    std::string command;
    for (std::size_t k = i + 1; k < end; ++k) {
      const std::string l = trim(lines[k]);
      if (command.empty() && (l.empty() || l[0] == '#')) continue;
      if (!l.empty() && l.back() == '\\') {
        command += l.substr(0, l.size() - 1) + " ";
        continue;
      }
      command += l;
      b.commands.push_back(command);
      command.clear();
    }
    blocks.push_back(b);
    i = end;
  }
  return blocks;
}

// `trainsim` / `./build/trainsim` as a command word becomes the binary under test.
std::string with_binary(const std::string& command) {
  static const std::regex word(R"((^|[\s;&|(])(\./build/)?trainsim(?=\s|$))");
  return std::regex_replace(command, word, "$1" + shell_quote(TRAINSIM_EXE));
}

// A fresh folder with the repository's inputs reachable as in the repository root.
std::string work_dir(const std::string& name) {
  const fs::path dir = trainsim::test::fresh_dir("readme_" + name);
  for (const char* d : {"examples", "tests", "hw_profiles", "notebooks", "scripts"})
    fs::create_directory_symlink(fs::path(TRAINSIM_SOURCE_DIR) / d, dir / d);
  return dir.string();
}

// Runs every block of one README; returns the number of commands run.
int run_readme(const std::string& relative, const std::string& name) {
  const std::string path = std::string(TRAINSIM_SOURCE_DIR) + "/" + relative;
  const std::string dir = work_dir(name);
  int ran = 0;
  for (const ShBlock& b : sh_blocks(path)) {
    if (b.skip) continue;
    for (const std::string& c : b.commands) {
      const std::string cmd = "cd " + shell_quote(dir) + " && timeout 300 sh -c " +
                              shell_quote(with_binary(c)) + " </dev/null >" + dir + "/.out 2>" +
                              dir + "/.err";
      const int status = std::system(cmd.c_str());
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      INFO(relative << ":" << b.line << ": " << c);
      INFO("stderr: " << slurp(dir + "/.err"));
      CHECK(code == b.expected_exit);
      ++ran;
    }
  }
  fs::remove_all(dir);
  return ran;
}

}  // namespace

TEST_CASE("readme: every sh block of README.md runs with the documented exit code") {
  // The README documents many commands; finding few means the blocks lost their ```sh tag.
  CHECK(run_readme("README.md", "main") >= 10);
}

TEST_CASE("readme: every sh block of hw_profiles/README.md runs") {
  (void)run_readme("hw_profiles/README.md", "hw_profiles");
}

TEST_CASE("readme: the block reader understands markers, continuations and comments") {
  const std::string path = trainsim::test::fresh_dir("readme_parse") + "/README.md";
  std::ofstream(path) << "text\n\n<!-- readme-test: exit 2 -->\n```sh\n# comment\n"
                         "trainsim simulate \\\n  --set x=1\n./build/trainsim --version\n```\n\n"
                         "```text\n$ not a command\n```\n<!-- readme-test: skip (apt) -->\n"
                         "```sh\napt-get install x\n```\n  ```sh\n  trainsim models list\n  ```\n";
  const auto blocks = sh_blocks(path);
  REQUIRE(blocks.size() == 3);
  CHECK(blocks[0].expected_exit == 2);
  CHECK_FALSE(blocks[0].skip);
  REQUIRE(blocks[0].commands.size() == 2);
  CHECK(blocks[0].commands[0] == "trainsim simulate  --set x=1");
  CHECK(with_binary(blocks[0].commands[1]) == shell_quote(TRAINSIM_EXE) + " --version");
  CHECK(blocks[1].skip);
  CHECK(blocks[2].commands == std::vector<std::string>{"trainsim models list"});
  CHECK(with_binary("grep x f | trainsim fit -") ==
        "grep x f | " + shell_quote(TRAINSIM_EXE) + " fit -");
  CHECK(with_binary("ls examples/trainsim_x") == "ls examples/trainsim_x");
  fs::remove(path);
}
