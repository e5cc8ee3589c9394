#pragma once
// Optional MPI for sweeps across machines. MPI is initialised only when the environment says the
// process was started by an MPI launcher (mpirun / srun set OMPI_COMM_WORLD_SIZE, PMI_SIZE or
// PMIX_RANK), so the plain binary never needs mpirun. Built without MPI (no TRAINSIM_HAVE_MPI),
// a launch under mpirun with more than one rank is refused rather than run N times.

#include <string>

namespace trainsim::cli {

// True when an MPI launcher's environment variables are present.
bool launched_by_mpi();
// Ranks the launcher says this job has (1 when not launched by one).
int launcher_world_size();
// Ranks the launcher placed on this node (1 when unknown).
int launcher_local_size();

class MpiSession {
 public:
  MpiSession();   // initialises MPI when launched by mpirun and built with MPI
  ~MpiSession();  // finalises it
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  bool active() const { return active_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

  // Point-to-point text messages, used only from the thread that built the session.
  void send(int to, const std::string& text, bool error) const;
  // Receives the next message from `from`; sets `error` when the sender reported a failure.
  std::string receive(int from, bool& error) const;
  // Waits for every rank (no-op without MPI).
  void barrier() const;
  // Ends every rank of the job (after a failure on one rank that the others cannot see).
  [[noreturn]] void abort(int code) const;

 private:
  bool active_ = false;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace trainsim::cli
