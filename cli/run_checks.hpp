#pragma once
// Checks around every simulation a command runs (simulate, sweep, plan, calibrate): the run's
// size is estimated before it starts and refused above sim::limits::kMaxRunEvents, a long run
// says so on a terminal, and a result that is not finite (or a step that rounds to no time at
// all) is an input error naming the inputs that set its scale, never a printed inf or NaN.

#include <string>

#include "cli/commands.hpp"
#include "models/scenario.hpp"
#include "models/training_step.hpp"
#include "sim/trace/trace_recorder.hpp"

namespace trainsim::cli {

// Upper estimate of the engine events one simulate_training(s) executes (echo baseline
// included; collective runs excluded, they are bounded by the cluster size limit).
double estimate_run_events(const models::Scenario& s);

// InputError naming `origin` and the keys that set the estimate when it is above the limit.
// With `io` and a terminal on stderr, a run expected to take a while prints one line there.
void check_run_resources(const models::Scenario& s, const std::string& origin, CommandIo* io);

// simulate_training with the checks above and the finiteness checks of the report.
models::StepReport simulate_checked(const models::Scenario& s, const std::string& origin,
                                    CommandIo* io = nullptr, sim::TraceRecorder* trace = nullptr);

// The inputs that set a step's scale, for messages: model, batch, precision, accelerator.
std::string scale_inputs(const models::Scenario& s);

}  // namespace trainsim::cli
