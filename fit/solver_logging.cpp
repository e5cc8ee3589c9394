#include "fit/solver_logging.hpp"

#include <glog/logging.h>

namespace trainsim::fit {

void set_solver_logging(bool verbose) {
  FLAGS_logtostderr = true;
  FLAGS_minloglevel = verbose ? google::GLOG_INFO : google::GLOG_FATAL;
  FLAGS_v = verbose ? 1 : 0;
}

}  // namespace trainsim::fit
