#include "cli/sweep_runner.hpp"

#include <algorithm>

namespace trainsim::cli {

OrderedRunner::OrderedRunner(std::size_t count, int jobs, Compute compute,
                             const std::atomic<bool>& stop)
    : count_(count), compute_(std::move(compute)), stop_(stop), slots_(count) {
  const auto n = static_cast<std::size_t>(std::max(1, jobs));
  for (std::size_t t = 0; t < std::min(n, count); ++t)
    threads_.emplace_back([this] { work(); });
}

OrderedRunner::~OrderedRunner() {
  abort_ = true;
  for (auto& t : threads_)
    t.join();
}

void OrderedRunner::work() {
  for (;;) {
    std::size_t item = 0;
    {
      std::lock_guard lock(mutex_);
      if (abort_ || stop_ || started_ >= count_) break;
      item = started_++;
    }
    Slot done;
    try {
      done.result = compute_(item);
    } catch (...) {
      done.error = std::current_exception();
    }
    done.ready = true;
    std::lock_guard lock(mutex_);
    slots_[item] = std::move(done);
    cv_.notify_all();
  }
  std::lock_guard lock(mutex_);
  cv_.notify_all();  // the reader may be waiting for an item nobody will start now
}

std::optional<std::string> OrderedRunner::next() {
  std::unique_lock lock(mutex_);
  if (next_out_ >= count_) return std::nullopt;
  cv_.wait(lock, [this] {
    return slots_[next_out_].ready || ((stop_ || abort_) && next_out_ >= started_);
  });
  Slot& slot = slots_[next_out_];
  if (!slot.ready) return std::nullopt;
  ++next_out_;
  if (slot.error) {
    abort_ = true;
    std::rethrow_exception(slot.error);
  }
  std::string out = std::move(slot.result);
  slot.result = std::string();
  return out;
}

int default_jobs(int ranks_on_this_node) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, cores / std::max(1, ranks_on_this_node));
}

}  // namespace trainsim::cli
