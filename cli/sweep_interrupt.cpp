#include "cli/sweep_interrupt.hpp"

#include <csignal>

namespace trainsim::cli {
namespace {

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0};
static_assert(std::atomic<bool>::is_always_lock_free, "signal handlers need a lock-free flag");

extern "C" void on_interrupt(int sig) {
  g_signal.store(sig);
  g_interrupted.store(true);
}

}  // namespace

InterruptGuard::InterruptGuard() {
  g_interrupted = false;
  g_signal = 0;
  old_int_ = std::signal(SIGINT, on_interrupt);
  old_term_ = std::signal(SIGTERM, on_interrupt);
}

InterruptGuard::~InterruptGuard() {
  std::signal(SIGINT, old_int_ == SIG_ERR ? SIG_DFL : old_int_);
  std::signal(SIGTERM, old_term_ == SIG_ERR ? SIG_DFL : old_term_);
}

const std::atomic<bool>& InterruptGuard::flag() const {
  return g_interrupted;
}
int InterruptGuard::signal_number() const {
  return g_signal.load();
}

}  // namespace trainsim::cli
