#pragma once
// Pipeline-parallel training on the event engine: R replicas of a K-stage pipeline (one replica
// is simulated; its stage peers are symmetric), each stage a device with a compute stream, a
// link stream per direction to its neighbours and a stream for its gradient allreduce. Micro-
// batches flow through the stages in the order of the schedule (GPipe or 1F1B); a stage waits
// when the activation (forward) or gradient (backward) it needs has not arrived, and that idle
// time is the bubble. After its last backward a stage allreduces its gradients with its R peers
// and updates its weights; the step ends when every stage has (one synchronous update).

#include "models/scenario.hpp"
#include "models/training_step.hpp"
#include "sim/trace/trace_recorder.hpp"

namespace trainsim::models {

// The step report of a pipelined scenario (also used for one stage with micro-batches or for
// "batch_per_replica": "max"). Spans go to `trace` when it is not null.
StepReport simulate_pipeline(const Scenario& s, sim::TraceRecorder* trace);

}  // namespace trainsim::models
