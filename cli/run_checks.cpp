#include "cli/run_checks.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>
#include <vector>

#include "cli/units_format.hpp"
#include "sim/config/limits.hpp"
#include "sim/core/input_error.hpp"
#include "sim/core/time.hpp"

namespace trainsim::cli {

namespace {

// Steps actually simulated: with echoing the measured window is rounded up to whole echo
// periods (models/training_step.cpp), and a second run without echoing gives the speedup.
double simulated_steps(const models::Scenario& s) {
  double steps = s.steps;
  double runs = 1;
  if (s.input.enabled && s.input.echo_factor > 1) {
    const double period = s.input.echo_factor;  // e / gcd(e, GA) <= e
    steps = s.warmup_steps + std::ceil((s.steps - s.warmup_steps) / period) * period;
    runs = 2;
  }
  return steps * runs;
}

std::string summary(const models::Scenario& s) {
  std::string text = "steps " + std::to_string(s.steps);
  if (s.input.enabled && s.input.echo_factor > 1)
    text +=
        " (whole echo periods of input.echo.factor " + std::to_string(s.input.echo_factor) + ")";
  text += " x grad_accum " + std::to_string(s.grad_accum);
  if (s.pipeline_stages > 1 || s.microbatches > 1)
    text += " x microbatches " + std::to_string(s.microbatches) + " x pipeline " +
            std::to_string(s.pipeline_stages);
  text += " x model " + s.model.name + " (" + std::to_string(s.model.layers.size()) + " layers)";
  return text;
}

void check_finite(const std::string& origin, const models::Scenario& s, const char* field,
                  double v) {
  if (std::isfinite(v)) return;
  throw InputError(origin, std::string("the simulated ") + field + " is not finite (" +
                               format_number(v) + "): the inputs are out of any meaningful " +
                               "range; " + scale_inputs(s));
}

}  // namespace

double estimate_run_events(const models::Scenario& s) {
  // Each kernel the framework launches is a host dispatch and a device event (a kernel repeated
  // per time step is one launch of `count` kernels, one more host event); recomputation launches
  // the forward kernels again.
  double fwd = 0, bwd = 0;
  for (const auto& layer : s.model.layers) {
    for (const auto& k : layer.fwd_kernels)
      fwd += k.repeat > 1 ? 1.5 : 1.0;
    for (const auto& k : layer.bwd_kernels)
      bwd += k.repeat > 1 ? 1.5 : 1.0;
  }
  const double kernels = (s.recompute == models::Recompute::full ? 2.0 : 1.0) * fwd + bwd;
  // Long gradient accumulation is simulated as 4 + 5 micro-steps and extended linearly
  // (models/training_step.cpp) unless echoing needs the whole step.
  double accum = s.grad_accum;
  if (s.grad_accum > 8 && !(s.input.enabled && s.input.echo_factor > 1)) accum = 9;
  const double micro = accum * std::max(1, s.microbatches);
  // Plus input, copy and bucket events per micro-batch; pipelines add transfers per stage, tensor
  // parallelism about 4 collectives per layer pass, ZeRO-3 a gather per layer and pass.
  double extra_per_layer = s.tensor_parallel > 1 ? 8.0 : 0.0;
  if (s.zero >= 3) extra_per_layer += 4.0;
  const double per_micro = 2.0 * kernels + 32.0 + 8.0 * s.pipeline_stages +
                           extra_per_layer * static_cast<double>(s.model.layers.size());
  return simulated_steps(s) *
         (micro * per_micro + 2.0 * static_cast<double>(s.model.layers.size()));
}

void check_run_resources(const models::Scenario& s, const std::string& origin, CommandIo* io) {
  const double events = estimate_run_events(s);
  if (events > sim::limits::kMaxRunEvents) {
    throw InputError(origin, "the run would execute about " + format_number(events, 3) +
                                 " events (" + summary(s) + "), above the limit of " +
                                 format_number(sim::limits::kMaxRunEvents, 3) +
                                 "; lower steps, grad_accum or microbatches");
  }
  const int devices = s.devices();
  if (io != nullptr && io->err_is_terminal &&
      (events > sim::limits::kLongRunEvents || devices > sim::limits::kLongRunAccelerators)) {
    io->err << "trainsim: simulating about " << format_number(events, 3) << " events on " << devices
            << " devices (" << summary(s) << "); this may take a while...\n"
            << std::flush;
  }
}

std::string scale_inputs(const models::Scenario& s) {
  const auto& a = s.cluster.accelerator;
  const auto peak = a.peak(s.precision);
  return "inputs: model " + s.model.name + ", batch_per_replica " +
         std::to_string(s.batch_per_replica) + ", precision " + sim::dtype_name(s.precision) +
         ", accelerator " + a.name + " (peak " + (peak ? format_rate(*peak, "FLOP/s") : "-") +
         ", memory " + format_rate(a.memory_bw_bytes_per_s, "B/s") + ", kernels " + a.kernels.name +
         ", launch " + format_seconds(a.kernel_launch_overhead_s) + "), intra link " +
         s.cluster.intra_link.name + " (" +
         format_rate(s.cluster.intra_link.bw_bytes_per_s, "B/s") + ")";
}

models::StepReport simulate_checked(const models::Scenario& s, const std::string& origin,
                                    CommandIo* io, sim::TraceRecorder* trace) {
  check_run_resources(s, origin, io);
  if (trace != nullptr && estimate_run_events(s) > sim::limits::kMaxTraceEvents) {
    throw InputError(origin, "--trace of a run of about " +
                                 format_number(estimate_run_events(s), 3) + " events (" +
                                 summary(s) + ") is above the trace limit of " +
                                 format_number(sim::limits::kMaxTraceEvents, 3) +
                                 " events; lower steps, grad_accum or microbatches for the trace");
  }
  models::StepReport r;
  try {
    r = models::simulate_training(s, trace);
  } catch (const sim::TimeOverflow&) {
    throw InputError(origin, "a simulated time is beyond the engine's range of about 106 days; " +
                                 scale_inputs(s));
  }
  if (!(r.step_time_s > 0)) {
    throw InputError(origin, "the simulated step takes " + format_seconds(r.step_time_s) +
                                 ": the inputs are too fast for the engine's 1 ps resolution; " +
                                 scale_inputs(s));
  }
  const auto& b = r.breakdown;
  const auto& m = r.memory;
  const std::vector<std::pair<const char*, double>> fields{
      {"step time", r.step_time_s},
      {"throughput", r.throughput_samples_per_s},
      {"compute time", b.compute_s},
      {"recompute time", b.recompute_s},
      {"exposed communication", b.exposed_comm_s},
      {"input stall", b.input_stall_s},
      {"bubble", b.bubble_s},
      {"optimizer time", b.optimizer_s},
      {"communication time", r.comm_time_s},
      {"gradient size", r.gradient_bytes},
      {"memory per device", m.peak_bytes_per_device},
      {"activation memory", m.activations_bytes},
      {"echo speedup", r.echo_speedup},
      {"upstream batch time", r.upstream_batch_s},
      {"host-to-device time", r.h2d_batch_s}};
  for (const auto& [name, v] : fields)
    check_finite(origin, s, name, v);
  for (const auto& st : r.stages) {
    for (const double v : {st.forward_s, st.backward_s, st.recompute_s, st.send_s, st.busy_s,
                           st.bubble_s, st.allreduce_s, st.memory.peak_bytes}) {
      check_finite(origin, s, "per-stage figure", v);
    }
  }
  return r;
}

}  // namespace trainsim::cli
