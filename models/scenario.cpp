#include "models/scenario.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "models/zoo/imported_workload.hpp"
#include "models/zoo/tensor_parallel.hpp"
#include "models/zoo/zoo.hpp"
#include "sim/config/json_reader.hpp"
#include "sim/config/limits.hpp"
#include "sim/config/units.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::models {

const char* compression_name(Compression c) {
  switch (c) {
    case Compression::none:
      return "none";
    case Compression::topk:
      return "topk";
    case Compression::gtopk:
      return "gtopk";
  }
  return "?";
}

namespace {

// "model": {"workload": FILE}: an imported workload (models/zoo/imported_workload.hpp), measured
// on the accelerator profile it names. A relative path in the scenario file is relative to that
// file; one a --set gives, to the working directory (where the command was typed).
ZooModel read_workload_model(sim::JsonReader& m, const sim::JsonSource& source,
                             const sim::ProfileLibrary& profiles) {
  const std::string given = m.string("workload");
  m.done();
  std::filesystem::path path(given);
  const bool from_set = source.origin_of(m.path_of("workload")).rfind("--set", 0) == 0;
  if (path.is_relative() && !from_set && source.file.rfind("<", 0) != 0)
    path = std::filesystem::path(source.file).parent_path() / path;
  auto wsource = std::make_shared<sim::JsonSource>();
  wsource->file = path.string();
  try {
    const nlohmann::json doc = sim::load_json_file(wsource->file, "workload");
    const Workload w = read_workload(doc, wsource);
    const sim::AcceleratorSpec acc =
        profiles.accelerator(w.accelerator, wsource->describe("accelerator"));
    return workload_model(w, acc);
  } catch (const InputError& e) {
    throw InputError(m.where("workload"), "'" + given + "': " + e.what());
  }
}

ZooModel read_model(sim::JsonReader& parent, const sim::JsonSource& source,
                    const sim::ProfileLibrary& profiles) {
  if (parent.raw().contains("model") && parent.raw()["model"].is_string()) {
    const std::string name = parent.string("model");
    try {
      return build_zoo_model(name, {}, parent.path_of("model"));
    } catch (const InputError& e) {  // the zoo names the model, not the file or --set
      throw InputError(parent.where("model"), e.what());
    }
  }
  sim::JsonReader m = parent.object("model");
  if (m.has("workload")) return read_workload_model(m, source, profiles);
  const std::string name = m.string("name");
  std::map<std::string, double> hyper;
  for (const auto& [key, value] : m.raw().items()) {
    if (key == "name") continue;
    hyper[key] = m.number(key, sim::Bound::positive);
  }
  m.done();
  const std::string model_where = source.describe(m.path());
  try {
    return build_scenario_model(name, hyper, model_where, source.describe(m.path_of("resolution")));
  } catch (const InputError& e) {
    // The zoo labels a hyper-parameter's error "<where> <key>: ..."; name the key's own origin
    // (a --set of model.<key> rather than the file that gave the model).
    const std::string what = e.what();
    for (const auto& [key, value] : hyper) {
      const std::string prefix = model_where + " " + key + ": ";
      if (what.rfind(prefix, 0) == 0)
        throw InputError(source.describe(m.path_of(key)), what.substr(prefix.size()));
    }
    if (what.rfind("model '", 0) == 0) throw InputError(m.where("name"), what);
    throw;
  }
}

InputPipelineSpec read_input(sim::JsonReader& r, const ZooModel& model, const sim::HostSpec& host) {
  InputPipelineSpec in;
  in.enabled = r.boolean_or("enabled", true);
  using sim::Bound;
  using sim::Dimension;
  in.read_s_per_sample =
      r.quantity_or("read_per_sample", Dimension::seconds, Bound::non_negative, 0);
  in.decode_s_per_sample =
      r.quantity_or("decode_per_sample", Dimension::seconds, Bound::non_negative, 0);
  in.augment_s_per_sample =
      r.quantity_or("augment_per_sample", Dimension::seconds, Bound::non_negative, 0);
  in.batch_s_per_sample =
      r.quantity_or("batch_per_sample", Dimension::seconds, Bound::non_negative, 0);
  in.storage_bytes_per_sample =
      r.quantity_or("storage_bytes_per_sample", Dimension::bytes, Bound::non_negative, 0);
  in.workers = static_cast<int>(r.integer_or("workers", 1, std::min(4, std::max(1, host.cpu_cores)),
                                             sim::limits::kMaxCpuCores));
  if (in.enabled && host.cpu_cores > 0 && in.workers > host.cpu_cores) {
    r.fail("workers", std::to_string(in.workers) + " input workers, but host " + host.name +
                          " has " + std::to_string(host.cpu_cores) + " CPU cores");
  }
  in.prefetch_batches =
      static_cast<int>(r.integer_or("prefetch_batches", 1, 2, sim::limits::kMaxPrefetchBatches));
  // Default: the model's own input dtype (uint8 pixels, int32 tokens); fp32 pixels cost 4x.
  in.input_dtype = r.choice_enum_in_or("input_dtype", kInputDtypeNames, model.input_dtype);
  if (auto echo = r.optional_object("echo")) {
    in.echo_factor =
        static_cast<int>(echo->integer_or("factor", 1, 1, sim::limits::kMaxEchoFactor));
    in.echo_mode = echo->choice_enum_or<EchoMode>(
        "mode", {{"example", EchoMode::example}, {"batch", EchoMode::batch}}, EchoMode::batch);
    in.echo_before_augment = echo->choice_or("insert", {"before_augment", "after_augment"},
                                             "after_augment") == "before_augment";
    if (in.echo_before_augment && in.echo_mode == EchoMode::batch) {
      echo->fail("insert",
                 "before_augment needs mode example: batch echoing repeats finished batches, after "
                 "augmentation and batching");
    }
    echo->done();
  }
  r.done();
  return in;
}

// Pipeline keys: the stage balance must name every layer once, in K contiguous runs.
void read_pipeline_keys(sim::JsonReader& p, Scenario& s) {
  p.ignore({"balance"});  // optional and read below; listed among the known keys either way
  s.schedule = p.choice_enum_or<PipelineSchedule>(
      "schedule", {{"gpipe", PipelineSchedule::gpipe}, {"1f1b", PipelineSchedule::one_f_one_b}},
      PipelineSchedule::gpipe);
  const int layers = static_cast<int>(s.model.layers.size());
  if (s.pipeline_stages > layers) {
    p.fail("pipeline", std::to_string(s.pipeline_stages) + " stages, but model " + s.model.name +
                           " has only " + std::to_string(layers) + " layers");
  }
  if (!s.batch_max && s.microbatches > s.batch_per_replica) {
    p.fail("microbatches", std::to_string(s.microbatches) +
                               " micro-batches cannot split batch_per_replica " +
                               std::to_string(s.batch_per_replica) + " (at least one sample each)");
  }
  if (!p.has("balance")) return;
  std::int64_t total = 0;
  for (const std::int64_t n : p.integer_list("balance", 1, layers)) {
    s.balance.push_back(static_cast<int>(n));
    total += n;
  }
  if (static_cast<int>(s.balance.size()) != s.pipeline_stages) {
    p.fail("balance", "has " + std::to_string(s.balance.size()) +
                          " entries, but parallelism.pipeline is " +
                          std::to_string(s.pipeline_stages) + " (one layer count per stage)");
  }
  if (total != layers) {
    p.fail("balance", "layer counts sum to " + std::to_string(total) + ", but model " +
                          s.model.name + " has " + std::to_string(layers) + " layers");
  }
}

// "global_batch" fixes local batch x replicas x grad_accum, so a sweep over cluster sizes keeps
// the global batch (as the IPU-POD runs did) by changing the accumulation count.
void derive_grad_accum(sim::JsonReader& r, const nlohmann::json& doc, Scenario& s) {
  s.global_batch = r.integer("global_batch", 1, sim::limits::kMaxGlobalBatch);
  if (doc.contains("parallelism") && doc["parallelism"].contains("grad_accum")) {
    r.fail("global_batch", "give either global_batch or parallelism.grad_accum, not both");
  }
  if (s.batch_max) r.fail("global_batch", "needs a numeric batch_per_replica, not \"max\"");
  const std::int64_t per_cycle = std::int64_t{s.batch_per_replica} * s.data_parallel;
  if (s.global_batch % per_cycle != 0) {
    r.fail("global_batch",
           std::to_string(s.global_batch) +
               " is not a multiple of batch_per_replica x data = " + std::to_string(per_cycle));
  }
  if (s.global_batch / per_cycle > sim::limits::kMaxGradAccum) {
    r.fail("global_batch", std::to_string(s.global_batch) +
                               " / (batch_per_replica x data = " + std::to_string(per_cycle) +
                               ") = " + std::to_string(s.global_batch / per_cycle) +
                               " accumulation rounds, above the limit of " +
                               std::to_string(sim::limits::kMaxGradAccum));
  }
  s.grad_accum = static_cast<int>(s.global_batch / per_cycle);
}

// Tensor, sequence, ZeRO and interleaving keys that depend on each other and on the pipeline.
void read_mesh_keys(sim::JsonReader& p, Scenario& s) {
  const int layers = static_cast<int>(s.model.layers.size());
  if (s.virtual_stages > 1) {
    // Megatron-LM's interleaved schedule (Narayanan et al. 2021, Sec. 2.2): 1F1B over model
    // chunks, a multiple of K micro-batches per round.
    if (s.pipeline_stages < 2) {
      p.fail("virtual_stages", std::to_string(s.virtual_stages) +
                                   " needs parallelism.pipeline > 1 (interleaving splits stages)");
    }
    if (s.schedule != PipelineSchedule::one_f_one_b) {
      p.fail("virtual_stages", std::to_string(s.virtual_stages) +
                                   " needs parallelism.schedule \"1f1b\" (the interleaved "
                                   "schedule is 1F1B over model chunks)");
    }
    if (s.microbatches % s.pipeline_stages != 0) {
      p.fail("virtual_stages", "interleaving needs parallelism.microbatches (" +
                                   std::to_string(s.microbatches) +
                                   ") to be a multiple of parallelism.pipeline (" +
                                   std::to_string(s.pipeline_stages) + ")");
    }
    if (std::int64_t{s.pipeline_stages} * s.virtual_stages > layers) {
      p.fail("virtual_stages", std::to_string(s.pipeline_stages) + " stages x " +
                                   std::to_string(s.virtual_stages) + " chunks, but model " +
                                   s.model.name + " has only " + std::to_string(layers) +
                                   " layers");
    }
    if (!s.balance.empty()) {
      p.fail("virtual_stages",
             "cannot be combined with parallelism.balance (chunks are balanced "
             "by simulated cost)");
    }
  }
  if (s.model.measured && s.sequence_parallel) {
    p.fail("sequence_parallel",
           "sequence parallelism of an imported workload (model.workload) is not supported: its "
           "replicated kernels cannot be split by tokens (use parallelism.tensor without it)");
  }
  if (s.tensor_parallel > 1 || s.sequence_parallel) {
    // Split the model now, so that a model tensor parallelism cannot split is refused naming
    // the key (the step splits it again from the same inputs).
    shard_tensor_parallel(s.model, s.tensor_parallel, s.sequence_parallel, p.where("tensor"));
  }
  if (s.zero >= 2 && s.pipeline_stages > 1) {
    // DeepSpeed refuses it (deepspeed/runtime/pipe/engine.py: "ZeRO-2 and ZeRO-3 are
    // incompatible with pipeline parallelism"): gradients sharded per micro-batch would be
    // reduce-scattered after every backward.
    p.fail("zero", std::to_string(s.zero) +
                       ": ZeRO stages 2-3 shard gradients and cannot be combined with "
                       "parallelism.pipeline > 1 (use zero 1, Megatron's distributed optimizer)");
  }
}

// data x pipeline devices must exist. Both keys are named with where their values came from
// (file, profile or --set), since either may be the one to change.
void check_devices(sim::JsonReader& p, const sim::JsonSource& source, const Scenario& s) {
  const std::int64_t used = std::int64_t{s.data_parallel} * s.pipeline_stages * s.tensor_parallel;
  const int all = s.cluster.total_accelerators();
  if (used <= all) return;
  const auto origin = [&](const char* key) {
    if (!p.has(key)) return std::string("default");
    return source.origin_of(p.path_of(key));
  };
  // Blame the key a --set changed, if one did: that is the edit that broke the layout.
  const bool pipeline_set = origin("pipeline").rfind("--set", 0) == 0;
  const bool data_set = origin("data").rfind("--set", 0) == 0;
  const char* blamed = pipeline_set && !data_set ? "pipeline" : p.has("data") ? "data" : "pipeline";
  const bool tp = s.tensor_parallel > 1;
  p.fail(blamed, std::string(tp ? "data x pipeline x tensor = " : "data x pipeline = ") +
                     std::to_string(s.data_parallel) + " x " + std::to_string(s.pipeline_stages) +
                     (tp ? " x " + std::to_string(s.tensor_parallel) : std::string()) + " = " +
                     std::to_string(used) + " devices, but the cluster has " + std::to_string(all) +
                     " (" + s.cluster.name + "; parallelism.data " +
                     std::to_string(s.data_parallel) + " from " + origin("data") +
                     ", parallelism.pipeline " + std::to_string(s.pipeline_stages) + " from " +
                     origin("pipeline") + ")");
}

// A hyper-parameter for messages: integers as integers, anything larger in exponent form.
std::string number_text(double v) {
  if (std::abs(v) < 1e15 && v == std::floor(v)) return std::to_string(static_cast<long long>(v));
  return sim::format_significant(v, 6);
}

// Distinct spatial sizes (H of every {C, H, W} output) of a model's feature maps.
std::set<std::int64_t> spatial_sizes(const ZooModel& m) {
  std::set<std::int64_t> sizes;
  for (const Layer& l : m.layers) {
    if (l.output_shape.size() == 3) sizes.insert(l.output_shape[1]);
  }
  return sizes;
}

// The largest S_min and B_noise accepted: far beyond any training run (1e12 steps, 1e12 samples
// per batch) and small enough that steps x step time and their products stay finite.
constexpr double kMaxConvergenceValue = 1e12;

ConvergenceTarget read_target(sim::JsonReader& t, const InputPipelineSpec& input) {
  ConvergenceTarget target;
  target.repeat_weight =
      input.echo_before_augment ? kRepeatWeightBeforeAugment : kRepeatWeightAfterAugment;
  if (t.has("workload")) {
    target.workload = t.string("workload");
    const ConvergenceWorkload* w = find_convergence_workload(target.workload);
    if (w == nullptr) {
      std::string known;
      for (const ConvergenceWorkload& k : convergence_workloads())
        known += (known.empty() ? "" : ", ") + k.name;
      t.fail("workload", "unknown workload '" + target.workload + "' (known: " + known + ")");
    }
    if (!w->params) t.fail("workload", "'" + target.workload + "': " + w->missing);
    target.params = *w->params;
    target.metric = w->target;
    for (const char* key : {"steps_min", "batch_noise", "steps_min_stderr", "batch_noise_stderr",
                            "correlation", "metric"}) {
      if (t.has(key)) {
        t.fail(key, std::string("give either workload or explicit parameters, not both (") + key +
                        " beside workload '" + target.workload + "')");
      }
    }
  } else {
    const auto bounded = [&t](const char* key, sim::Bound b) {
      const double v = t.number(key, b);
      if (v > kMaxConvergenceValue) {
        t.fail(key, "value " + sim::show_json(t.raw()[key]) + " is above the limit of 1e12");
      }
      return v;
    };
    target.params.steps_min = bounded("steps_min", sim::Bound::positive);
    target.params.batch_noise = bounded("batch_noise", sim::Bound::positive);
    target.metric = t.string_or("metric", "");
    const bool s_err = t.has("steps_min_stderr");
    const bool b_err = t.has("batch_noise_stderr");
    if (s_err || b_err) {
      ConvergenceParams::Covariance c;
      const double ss = s_err ? bounded("steps_min_stderr", sim::Bound::non_negative) : 0.0;
      const double sb = b_err ? bounded("batch_noise_stderr", sim::Bound::non_negative) : 0.0;
      double rho = 0;
      if (t.has("correlation")) {
        rho = t.number("correlation", sim::Bound::any);
        if (rho < -1 || rho > 1) {
          t.fail("correlation",
                 "value " + sim::show_json(t.raw()["correlation"]) + " is outside [-1, 1]");
        }
      }
      c.steps_var = ss * ss;
      c.noise_var = sb * sb;
      c.cross = rho * ss * sb;
      target.params.covariance = c;
    } else if (t.has("correlation")) {
      t.fail("correlation", "needs steps_min_stderr or batch_noise_stderr");
    }
  }
  if (t.has("repeat_weight")) {
    const double w = t.number("repeat_weight", sim::Bound::non_negative);
    if (w > 1) {
      t.fail("repeat_weight",
             "value " + sim::show_json(t.raw()["repeat_weight"]) + " is above 1 (a fresh sample)");
    }
    target.repeat_weight = w;
  }
  t.done();
  return target;
}

}  // namespace

const char* recompute_name(Recompute r) {
  switch (r) {
    case Recompute::none:
      return "none";
    case Recompute::selective:
      return "selective";
    case Recompute::full:
      return "full";
  }
  return "none";
}

const char* mesh_order_name(MeshOrder o) {
  switch (o) {
    case MeshOrder::tp_dp_pp:
      return "tp-dp-pp";
    case MeshOrder::tp_pp_dp:
      return "tp-pp-dp";
    case MeshOrder::dp_tp_pp:
      return "dp-tp-pp";
  }
  return "tp-dp-pp";
}

sim::StringExpander scenario_expander(const sim::ProfileLibrary& profiles) {
  return [&profiles](const std::string& path, nlohmann::json& node, sim::JsonSource& src) {
    if (path == "model" && node.is_string()) {  // "model": "resnet50" -> {"name": "resnet50"}
      node = nlohmann::json{{"name", node.get<std::string>()}};
      return true;
    }
    if (path == "framework" && node.is_string()) {
      const sim::ProfileEntry& e =
          profiles.find(node.get<std::string>(), "framework", src.describe(path));
      node = e.json;
      src.origins[path] = e.origin;
      return true;
    }
    return profiles.expand_cluster(path, node, src);
  };
}

ZooModel build_scenario_model(const std::string& name, const std::map<std::string, double>& hyper,
                              const std::string& where, const std::string& resolution_where) {
  for (const auto& [key, value] : hyper) {
    if (value > sim::limits::kMaxHyperparameter) {
      throw InputError(where + " " + key,
                       "value " + number_text(value) + " is above the limit of " +
                           std::to_string(static_cast<long long>(sim::limits::kMaxHyperparameter)));
    }
  }
  ZooModel model = build_zoo_model(name, hyper, where);
  const auto it = hyper.find("resolution");
  if (it == hyper.end()) return model;
  // A resolution too small for the network's downsampling leaves stride-2 layers nothing to
  // downsample (their 1x1 maps stay 1x1): the feature maps then take fewer distinct sizes than
  // at the reference resolution. Such a model is a different network, not a smaller input.
  const ZooModel reference = build_zoo_model(name, {}, where);
  const std::set<std::int64_t> got = spatial_sizes(model);
  const std::set<std::int64_t> want = spatial_sizes(reference);
  if (!want.empty() && got.size() < want.size()) {
    // The smallest resolution that keeps every size (the count only grows with resolution).
    const auto keeps_all = [&](std::int64_t r) {
      std::map<std::string, double> trial = hyper;
      trial["resolution"] = static_cast<double>(r);
      try {
        return spatial_sizes(build_zoo_model(name, trial, where)).size() >= want.size();
      } catch (const InputError&) {
        return false;
      }
    };
    auto lo = static_cast<std::int64_t>(it->second);
    auto hi = static_cast<std::int64_t>(reference.hyperparameters.at("resolution"));
    while (lo + 1 < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      (keeps_all(mid) ? hi : lo) = mid;
    }
    throw InputError(resolution_where,
                     "value " + number_text(it->second) + " is too small for " + name +
                         ": its stride-2 layers would run on maps already 1x1 (feature maps of " +
                         std::to_string(got.size()) + " distinct sizes instead of " +
                         std::to_string(want.size()) +
                         "); the smallest resolution that keeps them is " + std::to_string(hi));
  }
  return model;
}

Scenario load_scenario(nlohmann::json doc, const std::string& file,
                       const std::vector<std::string>& overrides,
                       const sim::ProfileLibrary& profiles) {
  auto source = std::make_shared<sim::JsonSource>();
  source->file = file;
  const sim::StringExpander expand = scenario_expander(profiles);
  for (const std::string& o : overrides)
    sim::apply_override(doc, o, *source, expand);

  sim::JsonReader r(doc, source);
  Scenario s;
  s.name = r.string_or("name", file);
  (void)r.string_or("description", "");
  if (r.has("cluster") && doc["cluster"].is_string()) {
    s.cluster = profiles.cluster(r.string("cluster"), source->describe("cluster"));
  } else {
    sim::JsonReader c = r.object("cluster");
    s.cluster = profiles.cluster_from(c);
  }
  s.model = read_model(r, *source, profiles);
  if (r.has("batch_per_replica") && doc["batch_per_replica"].is_string()) {
    r.choice("batch_per_replica", {"max"});
    s.batch_max = true;
    s.batch_per_replica = 0;
  } else {
    s.batch_per_replica =
        static_cast<int>(r.integer("batch_per_replica", 1, sim::limits::kMaxBatchPerReplica));
  }
  s.precision = r.choice_enum_in_or("precision", sim::kStepPrecisionNames, sim::Dtype::fp32);
  if (s.model.measured && !r.has("precision")) s.precision = s.model.measured->precision;
  if (s.model.measured && s.batch_max) {
    r.fail("batch_per_replica",
           "\"max\" needs the activation memory per sample, which an imported workload "
           "(model.workload) does not have: give a number");
  }
  if (!s.cluster.accelerator.peak(s.precision)) {
    r.fail("precision", std::string("accelerator ") + s.cluster.accelerator.name + " has no " +
                            sim::dtype_name(s.precision) + " compute path in its profile");
  }
  s.optimizer = r.choice_enum_or<Optimizer>("optimizer",
                                            {{"sgd", Optimizer::sgd},
                                             {"momentum", Optimizer::momentum},
                                             {"adam", Optimizer::adam},
                                             {"lamb", Optimizer::lamb},
                                             {"bert_adam", Optimizer::bert_adam},
                                             {"jit_lamb", Optimizer::jit_lamb}},
                                            Optimizer::momentum);
  s.gradient_clipping =
      r.choice_enum_or<GradientClipping>("gradient_clipping",
                                         {{"none", GradientClipping::none},
                                          {"per_tensor", GradientClipping::per_tensor},
                                          {"foreach", GradientClipping::foreach}},
                                         GradientClipping::none);
  if (s.gradient_clipping != GradientClipping::none && s.model.measured &&
      !s.model.measured->optimizer.empty()) {
    r.fail("gradient_clipping",
           "an imported workload (model.workload) steps its measured optimizer kernels, which hold "
           "whatever clipping it ran: remove gradient_clipping");
  }
  s.inference = r.choice_or("mode", {"train", "inference"}, "train") == "inference";
  if (r.has("recompute") && doc["recompute"].is_boolean()) {
    s.recompute = r.boolean_or("recompute", false) ? Recompute::full : Recompute::none;
  } else {
    s.recompute = r.choice_enum_or<Recompute>(
        "recompute",
        {{"none", Recompute::none}, {"selective", Recompute::selective}, {"full", Recompute::full}},
        Recompute::none);
  }
  if (auto p = r.optional_object("parallelism")) {
    using sim::limits::kMaxAccelerators;
    s.pipeline_stages = static_cast<int>(p->integer_or("pipeline", 1, 1, kMaxAccelerators));
    s.tensor_parallel = static_cast<int>(p->integer_or("tensor", 1, 1, kMaxAccelerators));
    s.sequence_parallel = p->boolean_or("sequence_parallel", false);
    s.zero = static_cast<int>(p->integer_or("zero", 0, 0, 3));
    s.virtual_stages = static_cast<int>(p->integer_or("virtual_stages", 1, 1, kMaxAccelerators));
    s.order = p->choice_enum_or<MeshOrder>("order",
                                           {{"tp-dp-pp", MeshOrder::tp_dp_pp},
                                            {"tp-pp-dp", MeshOrder::tp_pp_dp},
                                            {"dp-tp-pp", MeshOrder::dp_tp_pp}},
                                           MeshOrder::tp_dp_pp);
    const int all = s.cluster.total_accelerators();
    s.data_parallel = static_cast<int>(p->integer_or(
        "data", 1, std::max(1, all / (s.pipeline_stages * s.tensor_parallel)), kMaxAccelerators));
    s.microbatches =
        static_cast<int>(p->integer_or("microbatches", 1, 1, sim::limits::kMaxMicrobatches));
    s.grad_accum = static_cast<int>(p->integer_or("grad_accum", 1, 1, sim::limits::kMaxGradAccum));
    read_pipeline_keys(*p, s);
    read_mesh_keys(*p, s);
    check_devices(*p, *source, s);
    p->done();
  } else {
    s.data_parallel = s.cluster.total_accelerators();
  }
  if (auto c = r.optional_object("communication")) {
    // The names are sim::collectives' own (parse_algorithm), less the sparse ones, which
    // communication.compression selects.
    s.comm.algorithm = sim::collectives::parse_algorithm(
        c->choice_or("algorithm",
                     {"ring", "tree", "double_binary_tree", "halving_doubling", "hierarchical",
                      "parameter_server", "auto", "nvls", "collnet"},
                     "ring"),
        "communication.algorithm");
    // issue 14: explicit alpha-beta pricing; flow-level otherwise.
    s.comm.model = c->choice_enum_or<CommModel>(
        "model", {{"flow", CommModel::flow_level}, {"alpha_beta", CommModel::alpha_beta}},
        CommModel::flow_level);
    s.comm.bucket_bytes =
        c->quantity_or("bucket_size", sim::Dimension::bytes, sim::Bound::positive, 25e6);
    s.comm.overlap = c->boolean_or("overlap", true);
    s.comm.contention = c->boolean_or("contention", true);
    s.comm.compression = c->choice_enum_or<Compression>(
        "compression",
        {{"none", Compression::none}, {"topk", Compression::topk}, {"gtopk", Compression::gtopk}},
        Compression::none);
    s.comm.density = c->number_or("density", sim::Bound::unit_interval, 0.001);
    c->done();
  }
  if (auto in = r.optional_object("input")) s.input = read_input(*in, s.model, s.cluster.host);
  s.steps = static_cast<int>(r.integer_or("steps", 1, 6, sim::limits::kMaxSteps));
  s.warmup_steps = static_cast<int>(r.integer_or("warmup_steps", 0, 2, sim::limits::kMaxSteps));
  if (s.warmup_steps >= s.steps) {
    r.fail("warmup_steps", "must be smaller than steps (" + std::to_string(s.steps) + ")");
  }
  s.workspace_bytes =
      r.quantity_or("workspace", sim::Dimension::bytes, sim::Bound::non_negative, 0);
  if (r.has("framework") && doc["framework"].is_object()) {
    sim::JsonReader f = r.object("framework");
    s.framework = sim::read_framework(f);
  } else {
    s.framework = profiles.framework(r.string_or("framework", "pytorch_eager"),
                                     source->describe("framework"));
  }
  // The framework's host times are for the reference core; the dispatching thread runs them at
  // the speed of this host's cores (one thread: Python and the dispatcher do not parallelise).
  s.framework.host_forward_per_kernel_s /= s.cluster.host.single_thread_speed;
  s.framework.host_backward_per_kernel_s /= s.cluster.host.single_thread_speed;
  s.framework.host_optimizer_per_kernel_s /= s.cluster.host.single_thread_speed;
  s.framework.host_per_step_s /= s.cluster.host.single_thread_speed;
  s.framework.host_library_launch_s /= s.cluster.host.single_thread_speed;
  s.framework.host_library_call_s /= s.cluster.host.single_thread_speed;
  s.framework.host_amp_cast_per_kernel_s /= s.cluster.host.single_thread_speed;
  if (s.model.measured) {
    // The measured step's host: its per-kernel launch times are the kernels' own; the time per
    // step outside launches and where the host waited come from the trace, not the profile.
    s.framework.host_per_step_s = s.model.measured->host_per_step_s;
    s.framework.host_syncs_per_step = s.model.measured->host_syncs_per_step;
    s.framework.graph_launch = false;
  }
  s.fused_attention = r.boolean_or("fused_attention", false);
  // The framework's default layout, unless the scenario converts the model (PyTorch's
  // model.to(memory_format=torch.channels_last), as NVIDIA's AMP recipes do).
  s.framework.memory_format =
      r.choice_enum_in_or("memory_format", sim::kMemoryFormatNames, s.framework.memory_format);
  // Whether the run's cuDNN has tensor-core algorithms for dilated convolutions is a property of
  // the library build, not only of the architecture: the kernels profile gives the default of
  // the architecture's libraries, and a scenario that names an older (or newer) stack says so.
  bool& dilated_tc = s.cluster.accelerator.kernels.dilated_conv_tensor_cores;
  dilated_tc = r.boolean_or("dilated_conv_tensor_cores", dilated_tc);
  if (r.has("global_batch")) derive_grad_accum(r, doc, s);
  if (auto t = r.optional_object("target")) s.target = read_target(*t, s.input);
  r.done();
  return s;
}

}  // namespace trainsim::models
