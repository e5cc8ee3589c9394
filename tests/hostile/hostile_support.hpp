#pragma once
// The hostile-input suite: each case runs the built `trainsim` as a user would, with the files
// it needs in a fresh folder, and asserts the exit code and the parts of the message. Every
// case also asserts what must never happen: a crash, a library message (nlohmann, glog/Ceres,
// std::terminate), an inf or NaN in the output, or a multi-line error.
//
//   HOSTILE("name", {args...}, exit_code, {"message part", ...}, {{"file", "content"}, ...});
//
// In args, "@/" is the case's fresh folder and "@src/" the repository root. For exit code 0
// the parts are looked for on stdout, otherwise on stderr.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "sweep/cli_support.hpp"

namespace trainsim::test {

struct HostileCase {
  std::vector<std::string> args;
  int exit_code = 2;
  std::vector<std::string> parts;
  std::vector<std::pair<std::string, std::string>> files = {};
};

inline std::string hostile_dir() {
  return trainsim::test::fresh_dir("hostile");
}

inline std::string expand_placeholders(std::string arg, const std::string& dir) {
  const std::pair<std::string, std::string> subs[] = {
      {"@src/", std::string(TRAINSIM_SOURCE_DIR) + "/"}, {"@/", dir + "/"}};
  for (const auto& [from, to] : subs) {
    for (auto pos = arg.find(from); pos != std::string::npos; pos = arg.find(from, pos + to.size()))
      arg.replace(pos, from.size(), to);
  }
  return arg;
}

// What no output may ever contain, whatever the input. An error message may echo an input
// that spells inf or nan (`--epochs inf`), so `echoes_input` lifts that one check.
inline void check_never(const std::string& text, bool echoes_input = false) {
  static const std::regex non_finite(R"((^|[^A-Za-z_])(inf|-inf|nan|-nan|NaN)([^A-Za-z_]|$))");
  static const std::regex glog_line(R"((^|\n)[IWEF]\d{8} )");
  if (!echoes_input) CHECK_FALSE(std::regex_search(text, non_finite));
  CHECK_FALSE(std::regex_search(text, glog_line));
  CHECK(text.find("InitGoogleLogging") == std::string::npos);
  CHECK(text.find("json.exception") == std::string::npos);
  CHECK(text.find("terminate called") == std::string::npos);
  CHECK(text.find("trainsim: runtime failure") == std::string::npos);
}

inline CliResult run_hostile(const HostileCase& c) {
  const std::string dir = hostile_dir();
  for (const auto& [name, content] : c.files) {
    const std::filesystem::path path = std::filesystem::path(dir) / name;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << content;
  }
  std::vector<std::string> args;
  for (const std::string& a : c.args)
    args.push_back(expand_placeholders(a, dir));
  CliResult r = run_cli(args);
  INFO("args: " << [&] {
    std::string s;
    for (const auto& a : args)
      s += " " + a;
    return s;
  }());
  INFO("stderr: " << r.err);
  INFO("stdout (first 2000 bytes): " << r.out.substr(0, 2000));
  CHECK(r.exit_code == c.exit_code);
  bool non_finite_input = false;
  std::vector<std::string> inputs = args;
  for (const auto& file : c.files)
    inputs.push_back(file.second);
  for (const std::string& a : inputs) {
    non_finite_input = non_finite_input || a.find("inf") != std::string::npos ||
                       a.find("nan") != std::string::npos || a.find("NaN") != std::string::npos;
  }
  check_never(r.out);
  check_never(r.err, non_finite_input);
  const std::string& where = c.exit_code == 0 ? r.out : r.err;
  for (const std::string& part : c.parts) {
    INFO("expected part: " << expand_placeholders(part, dir));
    CHECK(where.find(expand_placeholders(part, dir)) != std::string::npos);
  }
  if (c.exit_code == 2) {
    CHECK(r.err.rfind("trainsim: error: ", 0) == 0);
    CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
  }
  std::filesystem::remove_all(dir);
  return r;
}

// `text` with the first `from` replaced by `to` (unchanged when `from` is absent).
inline std::string with(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  return pos == std::string::npos ? text : text.replace(pos, from.size(), to);
}

// A JSON text nested `depth` levels deep ({"a": {"a": ... 1 ...}}).
inline std::string deep_object(int depth) {
  std::string s;
  for (int i = 0; i < depth; ++i)
    s += "{\"a\": ";
  s += "1";
  s += std::string(static_cast<std::size_t>(depth), '}');
  return s;
}
inline std::string deep_array(int depth) {
  return std::string(static_cast<std::size_t>(depth), '[') +
         std::string(static_cast<std::size_t>(depth), ']');
}

}  // namespace trainsim::test

#define HOSTILE_CONCAT2(a, b) a##b
#define HOSTILE_CONCAT(a, b) HOSTILE_CONCAT2(a, b)
#define HOSTILE(name, ...)                                                     \
  TEST_CASE("hostile: " name) {                                                \
    ::trainsim::test::run_hostile(::trainsim::test::HostileCase{__VA_ARGS__}); \
  }
