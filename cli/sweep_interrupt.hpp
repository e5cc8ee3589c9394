#pragma once
// Ctrl-C during a sweep: while an InterruptGuard lives, SIGINT (and SIGTERM) only raise a flag,
// so the sweep can stop handing out rows, write the rows already finished and close its output
// cleanly. A signal handler can only reach a flag with static storage: this is the one
// process-wide variable, and it exists only for the guard's lifetime.

#include <atomic>

namespace trainsim::cli {

class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  const std::atomic<bool>& flag() const;
  bool interrupted() const { return flag().load(); }
  int signal_number() const;

 private:
  using Handler = void (*)(int);
  Handler old_int_;
  Handler old_term_;
};

}  // namespace trainsim::cli
