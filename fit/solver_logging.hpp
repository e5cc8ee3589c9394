#pragma once
// Ceres logs through glog, whose warnings (a residual that overflowed, a failed linear solve)
// would go to stderr in a format no trainsim user asked for: every command keeps them off
// unless --verbose is given. Problems the fits detect are reported by trainsim itself.

namespace trainsim::fit {

// verbose: glog INFO and above on stderr; otherwise nothing below FATAL.
void set_solver_logging(bool verbose);

}  // namespace trainsim::fit
