#include "cli/step_report_format.hpp"

#include <iomanip>
#include <ostream>

#include "cli/units_format.hpp"

namespace trainsim::cli {

namespace {

void add_stages_json(nlohmann::json& j, const models::StepReport& r) {
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : r.stages) {
    const auto& m = s.memory;
    stages.push_back({{"stage", s.stage},
                      {"first_layer", s.first_layer},
                      {"layers", s.layers},
                      {"first_layer_name", s.first_layer_name},
                      {"last_layer_name", s.last_layer_name},
                      {"params", s.params},
                      {"forward_s", s.forward_s},
                      {"backward_s", s.backward_s},
                      {"recompute_s", s.recompute_s},
                      {"send_bytes", s.send_bytes},
                      {"send_s", s.send_s},
                      {"allreduce_s", s.allreduce_s},
                      {"busy_s", s.busy_s},
                      {"bubble_s", s.bubble_s},
                      {"in_flight", s.in_flight},
                      {"memory",
                       {{"peak_bytes", m.peak_bytes},
                        {"capacity_bytes", m.capacity_bytes},
                        {"fits", m.fits},
                        {"weights_bytes", m.weights_bytes},
                        {"gradients_bytes", m.gradients_bytes},
                        {"optimizer_state_bytes", m.optimizer_state_bytes},
                        {"activations_bytes", m.activations_bytes},
                        {"workspace_bytes", m.workspace_bytes}}}});
  }
  j["stages"] = stages;
}

void print_pipeline_text(std::ostream& os, const models::StepReport& r) {
  const auto& p = r.pipeline;
  os << "  pipeline             " << p.stages << " stages"
     << (p.virtual_stages > 1 ? " x " + std::to_string(p.virtual_stages) + " chunks"
                              : std::string())
     << ", " << p.schedule << ", " << p.microbatches << " micro-batches x " << p.grad_accum
     << " accumulation rounds, recompute " << p.recompute_mode << "; batch per replica "
     << p.batch_per_replica << " (" << p.batch_source << "; largest that fits "
     << p.max_batch_that_fits << ")"
     << "; ideal bubble " << format_number(100 * p.ideal_bubble_fraction, 3) << "%\n";
  for (const auto& s : r.stages) {
    os << "    stage " << s.stage << "  ";
    if (p.virtual_stages > 1) {
      // Interleaved: the stage's layers are v chunks spread over the model.
      os << s.layers << " layers in " << p.virtual_stages << " chunks (" << s.first_layer_name
         << " .. " << s.last_layer_name << ")";
    } else {
      os << "layers " << s.first_layer << "-" << s.first_layer + s.layers - 1 << " (" << s.layers
         << ", " << s.first_layer_name << " .. " << s.last_layer_name << ")";
    }
    os << ", " << format_number(static_cast<double>(s.params) / 1e6, 4) << " M params\n"
       << "             per micro-batch fwd " << format_seconds(s.forward_s) << ", bwd "
       << format_seconds(s.backward_s) << ", recompute " << format_seconds(s.recompute_s)
       << ", send " << format_bytes(s.send_bytes) << " in " << format_seconds(s.send_s) << "\n"
       << "             per step busy " << format_seconds(s.busy_s) << ", bubble "
       << format_seconds(s.bubble_s) << ", allreduce " << format_seconds(s.allreduce_s)
       << "; memory " << format_bytes(s.memory.peak_bytes)
       << (s.memory.fits ? "" : " (DOES NOT FIT)") << " (activations "
       << format_bytes(s.memory.activations_bytes) << ", " << s.in_flight
       << " micro-batches held)\n";
  }
}

}  // namespace

nlohmann::json step_report_json(const models::StepReport& r) {
  const auto& b = r.breakdown;
  const auto& m = r.memory;
  nlohmann::json j = {
      {"scenario", r.scenario},
      {"model", r.model},
      {"cluster", r.cluster},
      {"accelerator", r.accelerator},
      {"precision", r.precision},
      {"framework", r.framework},
      {"devices", r.devices},
      {"data_parallel", r.data_parallel},
      {"tensor_parallel", r.tensor_parallel},
      {"pipeline_parallel", r.pipeline_stages},
      {"zero", r.zero},
      {"simulated", r.simulated},
      {"global_batch", r.global_batch},
      {"step_time_s", r.step_time_s},
      {"throughput_samples_per_s", r.throughput_samples_per_s},
      {"model_flops_per_step", r.model_flops_per_step},
      {"mfu", r.mfu},
      {"sustained_clock", r.sustained_clock},
      {"dilated_conv_fp32_math", r.dilated_conv_fp32_math},
      {"breakdown_s",
       {{"compute", b.compute_s},
        {"recompute", b.recompute_s},
        {"host", b.host_s},
        {"exposed_comm", b.exposed_comm_s},
        {"input_stall", b.input_stall_s},
        {"bubble", b.bubble_s},
        {"optimizer", b.optimizer_s},
        {"tp_comm", b.tp_comm_s},
        {"zero_gather", b.zero_comm_s}}},
      {"comm_time_s", r.comm_time_s},
      {"comm_interference_s", r.comm_interference_s},
      {"collective_model", r.collective_model},
      {"shared_network", r.shared_network},
      {"gradient_bytes", r.gradient_bytes},
      {"buckets", r.buckets},
      {"kernels_per_step", r.kernels_per_step},
      {"host_busy_s", r.host_busy_s},
      {"memory",
       {{"peak_bytes_per_device", m.peak_bytes_per_device},
        {"capacity_bytes", m.capacity_bytes},
        {"fits", m.fits},
        {"max_batch_that_fits", m.max_batch_that_fits},
        {"max_microbatch_that_fits", m.max_microbatch_that_fits},
        {"weights_bytes", m.weights_bytes},
        {"gradients_bytes", m.gradients_bytes},
        {"optimizer_state_bytes", m.optimizer_state_bytes},
        {"activations_bytes", m.activations_bytes},
        {"workspace_bytes", m.workspace_bytes}}},
      {"fresh_sample_fraction", r.fresh_sample_fraction},
      {"echo_factor", r.echo_factor},
      {"echo_speedup", r.echo_speedup},
      {"upstream_batch_s", r.upstream_batch_s},
      {"h2d_batch_s", r.h2d_batch_s},
      {"h2d_copy_s", r.h2d_copy_s},
      {"sim",
       {{"events", r.events},
        {"wall_s", r.wall_s},
        {"micro_steps_simulated", r.micro_steps_simulated}}},
  };
  if (!r.workload_note.empty())
    j["workload"] = {{"scaled", r.workload_scaled}, {"note", r.workload_note}};
  const auto& p = r.pipeline;
  j["pipeline"] = {{"stages", p.stages},
                   {"microbatches", p.microbatches},
                   {"grad_accum", p.grad_accum},
                   {"schedule", p.schedule},
                   {"recompute", p.recompute},
                   {"recompute_mode", p.recompute_mode},
                   {"virtual_stages", p.virtual_stages},
                   {"batch_per_replica", p.batch_per_replica},
                   {"batch_source", p.batch_source},
                   {"max_batch_that_fits", p.max_batch_that_fits},
                   {"ideal_bubble_fraction", p.ideal_bubble_fraction}};
  if (r.pipeline.stages > 1 || r.pipeline.microbatches > 1) add_stages_json(j, r);
  return j;
}

void flatten_json(const nlohmann::json& j, const std::string& prefix,
                  std::vector<std::pair<std::string, std::string>>& out) {
  for (const auto& [k, v] : j.items()) {
    const std::string key = prefix.empty() ? k : prefix + "." + k;
    if (v.is_object() || v.is_array()) {  // arrays (stages) as key.0.field
      flatten_json(v, key, out);
    } else {
      out.emplace_back(key, v.is_string() ? v.get<std::string>() : v.dump());
    }
  }
}

void print_step_report_text(std::ostream& os, const models::StepReport& r) {
  const auto& b = r.breakdown;
  const auto pct = [&](double v) { return format_number(100 * v / r.step_time_s, 3) + "%"; };
  os << "scenario " << r.scenario << ": " << r.model << " on " << r.cluster << " (" << r.devices
     << " x " << r.accelerator << ", " << r.precision << ", " << r.framework << ")\n\n";
  if (!r.workload_note.empty()) os << "  workload             " << r.workload_note << "\n";
  os << "  step time            " << format_seconds(r.step_time_s) << "\n"
     << "  throughput           " << format_number(r.throughput_samples_per_s, 5)
     << " samples/s  (global batch " << r.global_batch << ")\n";
  if (r.mfu > 0) {
    os << "  MFU                  " << format_number(100 * r.mfu, 3) << "%  ("
       << format_number(r.model_flops_per_step / r.step_time_s / r.devices / 1e12, 4)
       << " model TFLOP/s per device)\n";
  }
  if (r.sustained_clock < 1) {
    os << "  sustained clock      " << format_number(100 * r.sustained_clock, 3)
       << "% of the rated boost clock in " << r.precision
       << " math (the board's power limit; compute-bound kernels slow by as much)\n";
  }
  if (r.dilated_conv_fp32_math) {
    os << "  dilated convolutions fp32 math: the library has no tensor-core algorithm for them "
          "(dilated_conv_tensor_cores false)\n";
  }
  if (r.tensor_parallel > 1 || r.pipeline_stages > 1 || r.zero > 0) {
    os << "  layout               data " << r.data_parallel << " x tensor " << r.tensor_parallel
       << " x pipeline " << r.pipeline_stages
       << (r.zero > 0 ? ", ZeRO stage " + std::to_string(r.zero) : std::string()) << "; simulated "
       << r.simulated << "\n";
  }
  os << "\n"
     << "  breakdown per step (steady state):\n"
     << "    compute            " << std::setw(12) << format_seconds(b.compute_s) << "  "
     << pct(b.compute_s)
     << (r.comm_interference_s > 0 ? "  (" + format_seconds(r.comm_interference_s) +
                                         " of it lost to overlapping collectives)"
                                   : std::string())
     << "\n"
     << "    recompute          " << std::setw(12) << format_seconds(b.recompute_s) << "  "
     << pct(b.recompute_s) << "\n"
     << "    host (framework)   " << std::setw(12) << format_seconds(b.host_s) << "  "
     << pct(b.host_s) << "  (host thread busy " << format_seconds(r.host_busy_s) << " launching "
     << format_number(r.kernels_per_step, 5) << " kernels per step"
     << (r.pipeline_stages > 1 ? ", mean over stages)" : ")") << "\n"
     << "    exposed comm       " << std::setw(12) << format_seconds(b.exposed_comm_s) << "  "
     << pct(b.exposed_comm_s) << "  (of " << format_seconds(r.comm_time_s) << " communication in "
     << r.buckets << " buckets, " << format_bytes(r.gradient_bytes) << " of gradients"
     << (r.collective_model == "none" ? "" : "; " + r.collective_model + " collectives") << ")\n"
     << "    input stall        " << std::setw(12) << format_seconds(b.input_stall_s) << "  "
     << pct(b.input_stall_s) << "\n"
     << "    pipeline bubble    " << std::setw(12) << format_seconds(b.bubble_s) << "  "
     << pct(b.bubble_s) << "\n"
     << "    optimizer          " << std::setw(12) << format_seconds(b.optimizer_s) << "  "
     << pct(b.optimizer_s) << "\n";
  if (r.tensor_parallel > 1) {
    os << "    tp comm            " << std::setw(12) << format_seconds(b.tp_comm_s) << "  "
       << pct(b.tp_comm_s) << "  (tensor-parallel collectives in line with the kernels)\n";
  }
  if (r.zero > 0) {
    os << "    ZeRO gathers       " << std::setw(12) << format_seconds(b.zero_comm_s) << "  "
       << pct(b.zero_comm_s) << "  (waiting for parameter all-gathers)\n";
  }
  if (r.pipeline_stages > 1) {
    os << "  (each part is the mean over the " << r.pipeline_stages << " stages)\n";
  }
  os << "\n";
  const auto& m = r.memory;
  os << "  memory per device    " << format_bytes(m.peak_bytes_per_device) << " of "
     << format_bytes(m.capacity_bytes) << (m.fits ? " (fits)" : " (DOES NOT FIT)")
     << "; largest batch that fits " << m.max_batch_that_fits
     << (r.pipeline.microbatches > 1
             ? " (" + std::to_string(m.max_microbatch_that_fits) + " per micro-batch)"
             : std::string())
     << "\n"
     << "    weights " << format_bytes(m.weights_bytes) << ", gradients "
     << format_bytes(m.gradients_bytes) << ", optimizer state "
     << format_bytes(m.optimizer_state_bytes) << ", activations "
     << format_bytes(m.activations_bytes) << "\n";
  if (r.pipeline.stages > 1 || r.pipeline.microbatches > 1) print_pipeline_text(os, r);
  if (r.upstream_batch_s > 0) {
    os << "  input pipeline       " << format_seconds(r.upstream_batch_s)
       << " per fresh batch upstream, " << format_seconds(r.h2d_batch_s)
       << " host-to-device per batch; echo factor " << r.echo_factor << ", fresh samples "
       << format_number(100 * r.fresh_sample_fraction, 3) << "%, speedup vs no echo "
       << format_number(r.echo_speedup, 3) << "x\n";
  }
  os << "  simulation           " << r.events << " events in " << format_seconds(r.wall_s);
  if (r.micro_steps_simulated < r.pipeline.grad_accum) {
    os << " (" << r.pipeline.grad_accum << " accumulation micro-steps extended linearly from "
       << r.micro_steps_simulated - 1 << " and " << r.micro_steps_simulated << ")";
  }
  os << "\n";
}

}  // namespace trainsim::cli
