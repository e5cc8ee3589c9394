#pragma once
// Runs independent work items on a pool of threads and hands their results back in item order,
// so the output of a sweep is the same whatever the number of threads. Each item runs its own
// engine; the only shared state is the queue of results below.

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace trainsim::cli {

class OrderedRunner {
 public:
  using Compute = std::function<std::string(std::size_t item)>;

  // Starts `jobs` threads computing items [0, count). `stop` (e.g. set by SIGINT) stops handing
  // out new items; items already started still finish.
  OrderedRunner(std::size_t count, int jobs, Compute compute, const std::atomic<bool>& stop);
  ~OrderedRunner();
  OrderedRunner(const OrderedRunner&) = delete;
  OrderedRunner& operator=(const OrderedRunner&) = delete;

  // The next item's result in order; nullopt when all are done or the rest were never started
  // because of `stop`. Rethrows an item's exception (after stopping the pool).
  std::optional<std::string> next();

 private:
  struct Slot {
    bool ready = false;
    std::string result;
    std::exception_ptr error;
  };
  void work();

  std::size_t count_;
  Compute compute_;
  const std::atomic<bool>& stop_;
  std::atomic<bool> abort_{false};
  std::atomic<std::size_t> next_item_{0};
  std::size_t next_out_ = 0;
  std::vector<Slot> slots_;
  std::size_t started_ = 0;  // guarded by mutex_: items handed to a worker
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::thread> threads_;
};

// Threads to use when --jobs is not given: the cores of this machine shared among the MPI ranks
// started on it.
int default_jobs(int ranks_on_this_node);

}  // namespace trainsim::cli
