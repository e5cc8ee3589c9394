#include "cli/sweep_mpi.hpp"

#include <cstdlib>
#include <stdexcept>

#include "sim/core/input_error.hpp"

#ifdef TRAINSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace trainsim::cli {
namespace {

int env_int(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return 0;
  return std::atoi(v);
}

constexpr int kTagRow = 1;
constexpr int kTagError = 2;

}  // namespace

bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

int launcher_world_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    if (const int n = env_int(name); n > 0) return n;
  }
  return 1;
}

int launcher_local_size() {
  for (const char* name :
       {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"}) {
    if (const int n = env_int(name); n > 0) return n;
  }
  return 1;
}

#ifdef TRAINSIM_HAVE_MPI

MpiSession::MpiSession() {
  if (!launched_by_mpi()) return;
  int provided = 0;
  // Only the main thread calls MPI; worker threads just simulate.
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  active_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() {
  if (active_) MPI_Finalize();
}

void MpiSession::send(int to, const std::string& text, bool error) const {
  MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, to, error ? kTagError : kTagRow,
           MPI_COMM_WORLD);
}

std::string MpiSession::receive(int from, bool& error) const {
  MPI_Status status;
  MPI_Probe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);
  std::string text(static_cast<std::size_t>(count), '\0');
  MPI_Recv(text.data(), count, MPI_CHAR, from, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  error = status.MPI_TAG == kTagError;
  return text;
}

void MpiSession::barrier() const {
  if (active_) MPI_Barrier(MPI_COMM_WORLD);
}

void MpiSession::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();
}

#else

MpiSession::MpiSession() {
  if (launched_by_mpi() && launcher_world_size() > 1) {
    throw UsageError("mpirun",
                     "this trainsim was built without MPI (install libopenmpi-dev and "
                     "rebuild) but was started as one of " +
                         std::to_string(launcher_world_size()) + " MPI ranks");
  }
}
MpiSession::~MpiSession() = default;
void MpiSession::send(int, const std::string&, bool) const {
  throw std::logic_error("MPI send without MPI");
}
std::string MpiSession::receive(int, bool&) const {
  throw std::logic_error("MPI receive without MPI");
}
void MpiSession::abort(int code) const {
  std::exit(code);
}

#endif

}  // namespace trainsim::cli
