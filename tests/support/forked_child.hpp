#pragma once
// SimGrid's engine is a process-wide singleton, so each reference run happens in a forked child
// that sends its results back through a pipe, one number per line.

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace trainsim::testing {

// In the child: writes `values` to `fd`, one per line with full precision, and exits.
[[noreturn]] inline void write_numbers_and_exit(int fd, const std::vector<double>& values) {
  std::string text;
  char buf[64];
  for (double v : values) {
    std::snprintf(buf, sizeof buf, "%.17g\n", v);
    text += buf;
  }
  std::size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = write(fd, text.data() + off, text.size() - off);
    if (n <= 0) _exit(3);
    off += static_cast<std::size_t>(n);
  }
  close(fd);
  _exit(0);
}

// Runs `child(fd)` (which must end in write_numbers_and_exit) in a forked process and returns
// the numbers it wrote; the child must exit cleanly.
template <typename Child>
std::vector<double> numbers_from_forked_child(Child child) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  std::fflush(nullptr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    child(fds[1]);
    _exit(4);  // the child returned without reporting
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  std::vector<double> values;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t nl = text.find('\n', pos);
    values.push_back(std::stod(text.substr(pos, nl - pos)));
    pos = nl + 1;
  }
  return values;
}

}  // namespace trainsim::testing
