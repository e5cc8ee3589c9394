#include "sim/config/profile_library.hpp"

#include <algorithm>
#include <optional>
#include <sstream>
#include <utility>

#include "sim/config/input_file.hpp"
#include "sim/config/limits.hpp"
#include "sim/config/nearest_name.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::sim {

namespace {

const char* const kKinds[] = {"accelerator", "kernels", "framework", "host", "link", "cluster"};

// The folder a kind's profiles live in (hw_profiles/ and --profile-dir alike).
std::string kind_folder(const std::string& kind) {
  return kind == "kernels" ? kind : kind + "s";
}

std::shared_ptr<JsonSource> source_for(const std::string& file) {
  auto s = std::make_shared<JsonSource>();
  s->file = file;
  return s;
}

// Profile names inside a cluster object (path relative to the cluster) and the kind each names.
struct ProfileReference {
  const char* path;
  const char* kind;
};
constexpr ProfileReference kClusterReferences[] = {{"node.host", "host"},
                                                   {"node.accelerator", "accelerator"},
                                                   {"node.accelerator.kernels", "kernels"},
                                                   {"node.intra.link", "link"},
                                                   {"node.host_link", "link"},
                                                   {"inter.link", "link"}};

// A profile given by name, or inline as an object (what a --set reaching inside it leaves).
template <typename Spec, typename ByName, typename ReadInline>
Spec named_or_inline(JsonReader& parent, const std::string& key, ByName by_name,
                     ReadInline read_inline) {
  if (parent.has(key) && parent.raw()[key].is_object()) {
    JsonReader inline_profile = parent.object(key);
    return read_inline(inline_profile);
  }
  return by_name(parent.string(key), parent.where(key));
}

// Issue 14: the cluster's "collectives" block (how its collective library runs).
CollectiveFabricSpec read_collectives(JsonReader& r) {
  CollectiveFabricSpec c;
  c.library = r.choice_enum_or<CollectiveLibrary>("library",
                                                  {{"none", CollectiveLibrary::none},
                                                   {"nccl", CollectiveLibrary::nccl},
                                                   {"rccl", CollectiveLibrary::rccl}},
                                                  CollectiveLibrary::none);
  c.generation = r.choice_enum_or<GpuGeneration>("generation",
                                                 {{"volta", GpuGeneration::volta},
                                                  {"ampere", GpuGeneration::ampere},
                                                  {"hopper", GpuGeneration::hopper},
                                                  {"blackwell", GpuGeneration::blackwell},
                                                  {"cdna3", GpuGeneration::cdna3}},
                                                 GpuGeneration::ampere);
  c.channels = static_cast<int>(r.integer_or("channels", 1, 0));
  c.nvls = r.boolean_or("nvls", false);
  c.nvls_efficiency = r.number_or("nvls_efficiency", Bound::unit_interval, 1.0);
  c.sharp = r.boolean_or("sharp", false);
  c.base_latency_s = r.optional_quantity("base_latency", Dimension::seconds, Bound::non_negative);
  if (r.has("protocols")) {
    c.protocols = {false, false, false};
    const nlohmann::json& list = r.raw()["protocols"];
    r.ignore({"protocols"});
    if (!list.is_array() || list.empty())
      r.fail("protocols", "expected a list such as [\"LL\", \"Simple\"]");
    for (const auto& v : list) {
      const std::string name = v.is_string() ? v.get<std::string>() : show_json(v);
      if (name == "LL")
        c.protocols[0] = true;
      else if (name == "LL128")
        c.protocols[1] = true;
      else if (name == "Simple")
        c.protocols[2] = true;
      else
        r.fail("protocols", "unknown protocol " + name + " (valid: LL, LL128, Simple)");
    }
  }
  if (auto steps = r.optional_object("step_latency")) {
    const char* transports[] = {"nvlink", "pcie", "network"};
    const char* protocols[] = {"ll", "ll128", "simple"};
    for (std::size_t t = 0; t < 3; ++t) {
      if (auto per = steps->optional_object(transports[t])) {
        for (std::size_t p = 0; p < 3; ++p)
          c.step_latency_s[t][p] = per->optional_quantity(protocols[p], Dimension::seconds);
        per->done();
      }
    }
    steps->done();
  }
  r.done();
  return c;
}

}  // namespace

const nlohmann::json* value_at_path(const nlohmann::json& doc, const std::string& path) {
  const nlohmann::json* node = &doc;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    const std::string key =
        path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (node->is_object()) {
      const auto it = node->find(key);
      if (it == node->end()) return nullptr;
      node = &*it;
    } else if (node->is_array() && !key.empty() &&
               key.find_first_not_of("0123456789") == std::string::npos && key.size() < 9 &&
               std::stoul(key) < node->size()) {
      node = &(*node)[std::stoul(key)];
    } else {
      return nullptr;
    }
    if (dot == std::string::npos) return node;
    start = dot + 1;
  }
}

nlohmann::json* value_at_path(nlohmann::json& doc, const std::string& path) {
  return const_cast<nlohmann::json*>(value_at_path(std::as_const(doc), path));
}

namespace {

// A per-dtype table ({"fp32": 0.8, "fp16": 0.6}): 0 for the dtypes it does not name.
std::array<double, kDtypeCount> read_per_dtype(JsonReader& r, Bound bound) {
  std::array<double, kDtypeCount> out{};
  for (Dtype d : kAllDtypes)
    out[static_cast<std::size_t>(d)] = r.number_or(dtype_name(d), bound, 0.0);
  r.done();
  return out;
}

// A duration per dtype (a quantity string such as "3.05 us"), 0 for the dtypes it leaves out.
std::array<double, kDtypeCount> read_seconds_per_dtype(JsonReader& r) {
  std::array<double, kDtypeCount> out{};
  for (Dtype d : kAllDtypes) {
    out[static_cast<std::size_t>(d)] =
        r.quantity_or(dtype_name(d), Dimension::seconds, Bound::non_negative, 0);
  }
  r.done();
  return out;
}

}  // namespace

KernelEfficiency read_kernels(JsonReader& r) {
  KernelEfficiency k;
  r.ignore({"kind"});
  k.name = r.string("name");
  k.description = r.string_or("description", "");
  JsonReader tile = r.object("gemm_tile");
  k.tile_m = static_cast<double>(tile.integer("m", 1));
  k.tile_n = static_cast<double>(tile.integer("n", 1));
  k.half_tile_throughput = tile.number("half_tile_throughput", Bound::unit_interval);
  if (tile.has("conv_half_tile_throughput"))
    k.conv_half_tile_throughput = tile.number("conv_half_tile_throughput", Bound::unit_interval);
  // A tile side given must be one the tiling search tries: the main tile's halved zero or more
  // times.
  const auto halving = [](double main, double t) {
    for (double h = main; h >= 1; h /= 2) {
      if (h == t) return true;
    }
    return false;
  };
  if (auto narrow = tile.optional_object("narrow_operand")) {
    k.narrow_operand_below = static_cast<double>(narrow->integer("below", 2));
    k.narrow_operand_tile = static_cast<double>(narrow->integer("tile", 1));
    if (!halving(k.tile_m, k.narrow_operand_tile) || !halving(k.tile_n, k.narrow_operand_tile)) {
      narrow->fail("tile", "must be the main tile (" + format_significant(k.tile_m, 6) + " x " +
                               format_significant(k.tile_n, 6) + ") halved 0 or more times (got " +
                               format_significant(k.narrow_operand_tile, 6) + ")");
    }
    narrow->done();
  }
  if (tile.has("conv_matrix_unit_min_m")) {
    k.conv_matrix_unit_min_tile_m = static_cast<double>(tile.integer("conv_matrix_unit_min_m", 1));
    if (!halving(k.tile_m, k.conv_matrix_unit_min_tile_m)) {
      tile.fail("conv_matrix_unit_min_m",
                "must be the main tile's m (" + format_significant(k.tile_m, 6) +
                    ") halved 0 or more times (got " +
                    format_significant(k.conv_matrix_unit_min_tile_m, 6) + ")");
    }
  }
  tile.done();
  k.k_half = r.number("k_half", Bound::non_negative);
  k.recurrent_block_bw_bytes_per_s =
      r.quantity_or("recurrent_block_bandwidth", Dimension::bytes_per_s, Bound::positive, 0.0);
  if (auto serial = r.optional_object("recurrent_serial_data_gradient")) {
    for (const std::int64_t batch : serial->integer_list("batches", 1))
      k.serial_data_gradient_batches.push_back(static_cast<double>(batch));
    if (k.serial_data_gradient_batches.empty())
      serial->fail("batches", "expected at least one batch, got []");
    k.serial_data_gradient_cycles_per_element =
        serial->number("cycles_per_element", Bound::positive);
    serial->done();
  }
  if (auto narrow = r.optional_object("recurrent_narrow_batch")) {
    k.narrow_batch_below = static_cast<double>(narrow->integer("below", 2));
    k.narrow_batch_forward_flops_per_cycle =
        narrow->number("forward_flops_per_cycle", Bound::positive);
    k.narrow_batch_data_gradient_peak_fraction =
        narrow->number("data_gradient_peak_fraction", Bound::unit_interval);
    narrow->done();
  }
  k.winograd_min_channels = static_cast<double>(r.integer_or("winograd_min_channels", 1, 0));
  if (auto wino = r.optional_object("winograd_gain"))
    k.winograd_gain = read_per_dtype(*wino, Bound::positive);
  if (auto wgrad = r.optional_object("conv_weight_gradient"))
    k.conv_weight_gradient = read_per_dtype(*wgrad, Bound::unit_interval);
  if (auto load = r.optional_object("conv_weight_gradient_input_load"))
    k.conv_weight_gradient_input_load = read_per_dtype(*load, Bound::positive);
  if (auto wgrad_bw = r.optional_object("conv_weight_gradient_bandwidth"))
    k.conv_weight_gradient_bandwidth = read_per_dtype(*wgrad_bw, Bound::unit_interval);
  if (auto strided = r.optional_object("conv_strided_data_gradient"))
    k.conv_strided_data_gradient = read_per_dtype(*strided, Bound::unit_interval);
  if (auto phases = r.optional_object("conv_phase_split_data_gradient"))
    k.conv_phase_split_data_gradient = read_per_dtype(*phases, Bound::unit_interval);
  if (auto unaligned = r.optional_object("unaligned_gemm"))
    k.unaligned_gemm = read_per_dtype(*unaligned, Bound::unit_interval);
  if (auto sub_word = r.optional_object("sub_word_aligned_gemm"))
    k.sub_word_aligned_gemm = read_per_dtype(*sub_word, Bound::unit_interval);
  if (auto mn_major = r.optional_object("mn_major_gemm"))
    k.mn_major_gemm = read_per_dtype(*mn_major, Bound::unit_interval);
  if (auto k_major = r.optional_object("k_major_simt_bandwidth"))
    k.k_major_simt_bandwidth = read_per_dtype(*k_major, Bound::unit_interval);
  if (auto latency = r.optional_object("conv_latency"))
    k.conv_latency_s = read_seconds_per_dtype(*latency);
  if (auto latency = r.optional_object("gemm_latency"))
    k.gemm_latency_s = read_seconds_per_dtype(*latency);
  k.winograd_nonfused_weight_gradient_only =
      r.boolean_or("winograd_nonfused_weight_gradient_only", false);
  k.dilated_conv_tensor_cores = r.boolean_or("dilated_conv_tensor_cores", true);
  k.nchw_tensor_core_transposes = r.boolean_or("nchw_tensor_core_transposes", false);
  k.conv_few_channel_kernels = r.boolean_or("conv_few_channel_kernels", true);
  k.conv_few_channel_simt = r.boolean_or("conv_few_channel_simt", false);
  k.pointwise_conv_gemm = r.boolean_or("pointwise_conv_gemm", false);
  if (r.has("winograd_nonfused")) {
    for (const std::int64_t filter : r.integer_list("winograd_nonfused", 3, 5)) {
      if (filter == 4) r.fail("winograd_nonfused", "expected filter sizes 3 or 5, got 4");
      (filter == 3 ? k.winograd_nonfused_3x3 : k.winograd_nonfused_5x5) = true;
    }
  }
  if (auto clock = r.optional_object("sustained_clock")) {
    k.sustained_clock_hz = clock->quantity("clock", Dimension::hertz, Bound::positive);
    k.unit_power_w = clock->quantity("unit_power", Dimension::watts, Bound::positive);
    k.power_clock_exponent = clock->number("power_clock_exponent", Bound::positive);
    // Dynamic power grows between linearly (at the voltage floor) and as the cube (voltage
    // tracking the clock) with the clock; far outside that the curve means nothing.
    if (k.power_clock_exponent < 0.5 || k.power_clock_exponent > 5) {
      clock->fail("power_clock_exponent", "must be between 0.5 and 5 (got " +
                                              format_significant(k.power_clock_exponent, 6) + ")");
    }
    if (auto rates = clock->optional_object("flops_per_clock"))
      k.reference_flops_per_clock = read_per_dtype(*rates, Bound::positive);
    clock->done();
  }
  JsonReader compute = r.object("compute");
  for (int c = 0; c < kKernelClassCount; ++c) {
    const auto cls = static_cast<KernelClass>(c);
    if (!is_compute_class(cls) || !compute.has(kernel_class_name(cls))) continue;
    JsonReader per_dtype = compute.object(kernel_class_name(cls));
    k.compute[static_cast<std::size_t>(c)] = read_per_dtype(per_dtype, Bound::unit_interval);
  }
  compute.done();
  JsonReader memory = r.object("memory");
  for (int c = 0; c < kKernelClassCount; ++c) {
    const auto cls = static_cast<KernelClass>(c);
    if (is_compute_class(cls)) continue;
    k.memory[static_cast<std::size_t>(c)] =
        memory.number(kernel_class_name(cls), Bound::unit_interval);
  }
  memory.done();
  if (auto floor = r.optional_object("memory_floor")) {
    for (int c = 0; c < kKernelClassCount; ++c) {
      const auto cls = static_cast<KernelClass>(c);
      if (is_compute_class(cls)) continue;
      k.memory_floor_s[static_cast<std::size_t>(c)] =
          floor->quantity_or(kernel_class_name(cls), Dimension::seconds, Bound::non_negative, 0);
    }
    floor->done();
  }
  if (auto row = r.optional_object("row_element_latency")) {
    // The row-wise classes alone (KernelEfficiency::row_element_latency_s); done() rejects any
    // other key.
    for (const KernelClass cls :
         {KernelClass::normalization, KernelClass::softmax, KernelClass::reduction}) {
      k.row_element_latency_s[static_cast<std::size_t>(cls)] =
          row->quantity_or(kernel_class_name(cls), Dimension::seconds, Bound::non_negative, 0);
    }
    row->done();
  }
  r.done();
  return k;
}

AcceleratorSpec read_accelerator(JsonReader& r, const ProfileLibrary& library) {
  AcceleratorSpec a;
  r.ignore({"kind"});
  a.name = r.string("name");
  a.description = r.string_or("description", "");
  JsonReader peak = r.object("peak_flops");
  bool any = false;
  for (Dtype d : kAllDtypes) {
    const auto v = peak.optional_quantity(dtype_name(d), Dimension::flops_per_s);
    a.peak_flops_per_s[static_cast<int>(d)] = v;
    any = any || v.has_value();
  }
  peak.done();
  if (!any) r.fail("peak_flops", "needs at least one of fp32, tf32, fp16, bf16, int8, fp8");
  a.memory_bw_bytes_per_s = r.quantity("memory_bandwidth", Dimension::bytes_per_s);
  a.streaming_bw_bytes_per_s =
      r.optional_quantity("streaming_bandwidth", Dimension::bytes_per_s, Bound::positive);
  if (a.streaming_bw_bytes_per_s && *a.streaming_bw_bytes_per_s > a.memory_bw_bytes_per_s) {
    r.fail("streaming_bandwidth",
           "exceeds memory_bandwidth (" + format_significant(*a.streaming_bw_bytes_per_s / 1e9, 6) +
               " > " + format_significant(a.memory_bw_bytes_per_s / 1e9, 6) + " GB/s)");
  }
  a.memory_capacity_bytes = r.quantity("memory_capacity", Dimension::bytes);
  a.kernel_launch_overhead_s =
      r.quantity("kernel_launch_overhead", Dimension::seconds, Bound::non_negative);
  a.compute_units = static_cast<int>(r.integer("compute_units", 1));
  a.board_power_w = r.optional_quantity("board_power", Dimension::watts);
  a.boost_clock_hz = r.optional_quantity("boost_clock", Dimension::hertz);
  if (r.has("kernels") && r.raw()["kernels"].is_object()) {
    JsonReader inline_kernels = r.object("kernels");
    a.kernels = read_kernels(inline_kernels);
  } else {
    a.kernels = library.kernels(r.string("kernels"), r.where("kernels"));
  }
  // A power limit on an architecture that models its sustained clock needs the rated clock the
  // peaks are quoted at.
  if (a.board_power_w && a.kernels.sustained_clock_hz > 0 && !a.boost_clock_hz) {
    r.fail("board_power",
           "needs boost_clock (the rated boost clock of the peaks): kernels profile \"" +
               a.kernels.name + "\" models the clock a power limit sustains");
  }
  // The serial data-gradient steps' cycles are counted at the board's rated clock.
  if (!a.kernels.serial_data_gradient_batches.empty() && !a.boost_clock_hz) {
    r.fail("kernels", "needs boost_clock: kernels profile \"" + a.kernels.name +
                          "\" prices recurrent_serial_data_gradient in clock cycles");
  }
  if (a.kernels.narrow_batch_below > 0 && !a.boost_clock_hz) {
    r.fail("kernels", "needs boost_clock: kernels profile \"" + a.kernels.name +
                          "\" prices recurrent_narrow_batch in clock cycles");
  }
  // Every compute class needs an efficiency for every dtype the device has a peak for.
  for (int c = 0; c < kKernelClassCount; ++c) {
    const auto cls = static_cast<KernelClass>(c);
    if (!is_compute_class(cls)) continue;
    for (Dtype d : kAllDtypes) {
      if (d == Dtype::int8 || !a.peak(d)) continue;  // int8 is never a training precision
      if (a.kernels.effective_compute(cls, d) <= 0) {
        r.fail("kernels", "kernels profile \"" + a.kernels.name + "\" gives no compute." +
                              kernel_class_name(cls) + "." + dtype_name(d) + " efficiency, but " +
                              a.name + " has a " + dtype_name(d) + " peak");
      }
    }
  }
  r.done();
  return a;
}

FrameworkSpec read_framework(JsonReader& r) {
  FrameworkSpec f;
  r.ignore({"kind"});
  f.name = r.string("name");
  f.description = r.string_or("description", "");
  JsonReader host = r.object("host");
  f.host_forward_per_kernel_s =
      host.quantity("forward_per_kernel", Dimension::seconds, Bound::non_negative);
  f.host_backward_per_kernel_s =
      host.quantity("backward_per_kernel", Dimension::seconds, Bound::non_negative);
  f.host_optimizer_per_kernel_s =
      host.quantity("optimizer_per_kernel", Dimension::seconds, Bound::non_negative);
  f.host_per_step_s = host.quantity("per_step", Dimension::seconds, Bound::non_negative);
  f.host_library_launch_s =
      host.quantity("library_launch", Dimension::seconds, Bound::non_negative);
  f.host_library_call_s = host.quantity("library_call", Dimension::seconds, Bound::non_negative);
  f.host_amp_cast_per_kernel_s =
      host.quantity_or("amp_cast_per_kernel", Dimension::seconds, Bound::non_negative, 0);
  f.host_syncs_per_step = static_cast<int>(host.integer("syncs_per_step", 0));
  if (f.host_syncs_per_step > 2) host.fail("syncs_per_step", "must be 0, 1 or 2");
  host.done();
  f.graph_launch = r.boolean("graph_launch");
  f.fusion =
      r.choice_enum<Fusion>("fusion", {{"none", Fusion::none}, {"pointwise", Fusion::pointwise}});
  f.mixed_precision = r.choice_enum<MixedPrecision>(
      "mixed_precision",
      {{"autocast", MixedPrecision::autocast}, {"master_weights", MixedPrecision::master_weights}});
  f.amp_fp32_ops = r.choice_enum_or<AmpFp32Ops>(
      "amp_fp32_ops",
      {{"listed", AmpFp32Ops::listed}, {"graph_rewrite", AmpFp32Ops::graph_rewrite}},
      AmpFp32Ops::listed);
  f.amp_weight_casts = r.choice_enum_or<AmpWeightCasts>(
      "amp_weight_casts",
      {{"framework_op", AmpWeightCasts::framework_op}, {"dispatcher", AmpWeightCasts::dispatcher}},
      AmpWeightCasts::framework_op);
  f.batch_norm = r.choice_enum_or<BatchNormKernels>(
      "batch_norm",
      {{"cudnn", BatchNormKernels::cudnn}, {"native_for_bf16", BatchNormKernels::native_for_bf16}},
      BatchNormKernels::cudnn);
  f.memory_format =
      r.choice_enum_in_or("memory_format", kMemoryFormatNames, MemoryFormat::channels_last);
  f.rnn = r.choice_enum<RnnKernels>(
      "rnn", {{"cudnn", RnnKernels::cudnn}, {"tf_block_lstm", RnnKernels::tf_block_lstm}});
  JsonReader opt = r.object("optimizer");
  f.optimizer_kernels = opt.choice_enum<OptimizerKernels>(
      "kernels", {{"per_tensor", OptimizerKernels::per_tensor},
                  {"multi_tensor", OptimizerKernels::multi_tensor},
                  {"fused", OptimizerKernels::fused}});
  f.tensors_per_optimizer_kernel = static_cast<int>(opt.integer_or("tensors_per_kernel", 1, 1));
  opt.done();
  if (auto issue = r.optional_object("element_instructions")) {
    for (const auto& [name, math] : kElementMathNames) {
      if (issue->has(name)) {
        f.element_instructions[static_cast<std::size_t>(math)] =
            issue->number(name, Bound::positive);
      }
    }
    issue->done();
  }
  r.done();
  return f;
}

HostSpec read_host(JsonReader& r) {
  HostSpec h;
  r.ignore({"kind"});
  h.name = r.string("name");
  h.description = r.string_or("description", "");
  h.cpu_cores = static_cast<int>(r.integer("cpu_cores", 1, limits::kMaxCpuCores));
  h.single_thread_speed = r.number("single_thread_speed", Bound::positive);
  // Cores of the last twenty years span well under 10x in speed per thread; a value outside
  // [0.05, 20] is a typo (a clock in GHz, a benchmark score), and it would scale host times to
  // hours or to nothing.
  if (h.single_thread_speed < 0.05 || h.single_thread_speed > 20) {
    std::ostringstream v;
    v << h.single_thread_speed;
    r.fail("single_thread_speed",
           v.str() + " must lie in [0.05, 20] (relative to a 3.4 GHz Zen 2 core = 1)");
  }
  h.memory_bw_bytes_per_s = r.quantity("memory_bandwidth", Dimension::bytes_per_s);
  h.memory_capacity_bytes = r.quantity("memory_capacity", Dimension::bytes);
  h.storage_read_bw_bytes_per_s = r.quantity("storage_read_bandwidth", Dimension::bytes_per_s);
  r.done();
  return h;
}

// A link profile and what collectives see of it (issue 14).
LinkSpec read_link_traits(JsonReader& r, LinkCollectiveTraits& traits);

LinkSpec read_link(JsonReader& r) {
  LinkCollectiveTraits traits;
  return read_link_traits(r, traits);
}

LinkSpec read_link_traits(JsonReader& r, LinkCollectiveTraits& traits) {
  LinkSpec l;
  r.ignore({"kind"});
  l.name = r.string("name");
  l.description = r.string_or("description", "");
  l.bw_bytes_per_s = r.quantity("bandwidth", Dimension::bytes_per_s);
  l.latency_s = r.quantity("latency", Dimension::seconds, Bound::non_negative);
  l.duplex = r.choice_enum_or<Duplex>("duplex", {{"full", Duplex::full}, {"half", Duplex::half}},
                                      Duplex::full);
  if (r.has("transport")) {
    traits.transport =
        r.choice_enum<LinkTransport>("transport", {{"nvlink", LinkTransport::nvlink},
                                                   {"pcie", LinkTransport::pcie},
                                                   {"network", LinkTransport::network}});
  }
  traits.efficiency = r.number_or("efficiency", Bound::unit_interval, 1.0);
  r.done();
  return l;
}

ProfileLibrary::ProfileLibrary(std::span<const EmbeddedFile> embedded,
                               const std::vector<std::filesystem::path>& extra_dirs) {
  for (const EmbeddedFile& f : embedded)
    add("hw_profiles/" + std::string(f.path), std::string(f.content), "");
  for (const auto& dir : extra_dirs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
      throw InputError("--profile-dir " + dir.string(), std::filesystem::exists(dir, ec)
                                                            ? "is a file, not a folder of profiles"
                                                            : "profile folder does not exist");
    }
    // Only the documented layout is read (accelerators/, kernels/, frameworks/, hosts/, links/,
    // clusters/), so other
    // files in the folder, such as the scenario `calibrate --out` writes beside the profiles,
    // are left alone.
    std::vector<std::filesystem::path> files;
    bool any_kind_folder = false;
    for (const char* kind : kKinds) {
      const std::filesystem::path sub = dir / kind_folder(kind);
      if (!std::filesystem::is_directory(sub, ec)) continue;
      any_kind_folder = true;
      for (const auto& e : std::filesystem::directory_iterator(sub)) {
        if (e.path().extension() != ".json") continue;
        if (!e.is_regular_file(ec)) {
          throw InputError(e.path().string(), "is not a regular file (a profile must be a file)");
        }
        files.push_back(e.path());
      }
    }
    if (!any_kind_folder) {
      // A folder without the layout would add nothing, and every command would run on the
      // built-in profiles as if it had read it: most likely profiles saved at the folder's top.
      std::string folders;
      for (const char* kind : kKinds)
        folders += (folders.empty() ? "" : ", ") + kind_folder(kind) + "/";
      const std::string layout = "has none of the kind folders (" + folders +
                                 "); a profile goes in DIR/<kind folder>/<name>.json";
      std::optional<std::filesystem::path> stray;  // the first by name: the same on every run
      for (const auto& e : std::filesystem::directory_iterator(dir, ec))
        if (e.path().extension() == ".json" && (!stray || e.path() < *stray)) stray = e.path();
      if (stray)
        throw InputError(stray->string(),
                         "is not read: --profile-dir " + dir.string() + " " + layout);
      throw InputError("--profile-dir " + dir.string(), layout);
    }
    std::sort(files.begin(), files.end());
    for (const auto& p : files) {
      const std::string text = read_input_file(p.string(), limits::kMaxJsonFileBytes, "profile");
      add(p.string(), text, p.parent_path().filename().string());
    }
  }
  // Validate everything up front: a broken profile is reported whatever command runs.
  for (const auto& [key, e] : entries_) {
    if (key.first == "accelerator") accelerator(e.name, e.origin);
    if (key.first == "kernels") kernels(e.name, e.origin);
    if (key.first == "framework") framework(e.name, e.origin);
    if (key.first == "host") host(e.name, e.origin);
    if (key.first == "link") link(e.name, e.origin);
    if (key.first == "cluster") cluster(e.name, e.origin);
  }
}

void ProfileLibrary::add(const std::string& origin, const std::string& text,
                         const std::string& folder) {
  nlohmann::json j = parse_json_text(text, origin);
  JsonReader r(j, source_for(origin));
  const std::string kind =
      r.choice("kind", {"accelerator", "kernels", "framework", "host", "link", "cluster"});
  if (!folder.empty() && folder != kind_folder(kind)) {
    r.fail("kind", "a " + kind + " profile must be in the folder " + kind_folder(kind) + "/, not " +
                       folder + "/");
  }
  const std::string name = r.string("name");
  const std::string stem = std::filesystem::path(origin).stem().string();
  if (name != stem)
    r.fail("name", "profile name \"" + name + "\" must equal the file name \"" + stem + "\"");
  const std::string description = r.string_or("description", "");
  ProfileEntry e{kind, name, description, origin, std::move(j), parse_provenance(text)};
  if (const auto shadowed = entries_.find({kind, name}); shadowed != entries_.end()) {
    std::map<std::string, const Provenance*> sources;
    for (const ProvenanceLeaf& leaf : shadowed->second.provenance.leaves)
      sources.emplace(leaf.path, &leaf.provenance);
    for (ProvenanceLeaf& leaf : e.provenance.leaves) {
      const auto before = sources.find(leaf.path);
      if (leaf.provenance.kind != ProvenanceKind::unsourced || before == sources.end()) continue;
      const nlohmann::json* now = value_at_path(e.json, leaf.path);
      const nlohmann::json* then = value_at_path(shadowed->second.json, leaf.path);
      if (now != nullptr && then != nullptr && *now == *then) leaf.provenance = *before->second;
    }
  }
  entries_.insert_or_assign({kind, name}, std::move(e));
}

std::vector<const ProfileEntry*> ProfileLibrary::list() const {
  std::vector<const ProfileEntry*> out;
  for (const char* kind : kKinds) {
    for (const auto& [key, e] : entries_) {
      if (key.first == kind) out.push_back(&e);
    }
  }
  return out;
}

const ProfileEntry& ProfileLibrary::find(const std::string& name, const std::string& kind,
                                         const std::string& where) const {
  std::vector<std::string> names;
  const ProfileEntry* found = nullptr;
  for (const auto& [key, e] : entries_) {
    if (!kind.empty() && key.first != kind) continue;
    names.push_back(e.name);
    if (e.name == name) {
      if (found != nullptr) {
        throw InputError(where, "profile name \"" + name + "\" is ambiguous: give its kind");
      }
      found = &e;
    }
  }
  if (found != nullptr) return *found;
  const std::string near = nearest_name(name, names);
  throw InputError(where, "unknown " + (kind.empty() ? std::string("profile") : kind + " profile") +
                              " \"" + name + "\"" +
                              (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                              "; see 'trainsim profiles list'");
}

AcceleratorSpec ProfileLibrary::accelerator(const std::string& name,
                                            const std::string& where) const {
  const ProfileEntry& e = find(name, "accelerator", where);
  JsonReader r(e.json, source_for(e.origin));
  return read_accelerator(r, *this);
}

FrameworkSpec ProfileLibrary::framework(const std::string& name, const std::string& where) const {
  const ProfileEntry& e = find(name, "framework", where);
  JsonReader r(e.json, source_for(e.origin));
  return read_framework(r);
}

KernelEfficiency ProfileLibrary::kernels(const std::string& name, const std::string& where) const {
  const ProfileEntry& e = find(name, "kernels", where);
  JsonReader r(e.json, source_for(e.origin));
  return read_kernels(r);
}

HostSpec ProfileLibrary::host(const std::string& name, const std::string& where) const {
  const ProfileEntry& e = find(name, "host", where);
  JsonReader r(e.json, source_for(e.origin));
  return read_host(r);
}

LinkSpec ProfileLibrary::link(const std::string& name, const std::string& where) const {
  const ProfileEntry& e = find(name, "link", where);
  JsonReader r(e.json, source_for(e.origin));
  return read_link(r);
}

ClusterSpec ProfileLibrary::cluster(const std::string& name, const std::string& where) const {
  const ProfileEntry& e = find(name, "cluster", where);
  JsonReader r(e.json, source_for(e.origin));
  return cluster_from(r);
}

ClusterSpec ProfileLibrary::cluster_from(JsonReader& r) const {
  ClusterSpec c;
  r.ignore({"kind"});
  c.name = r.string_or("name", "inline");
  c.description = r.string_or("description", "");
  c.nodes = static_cast<int>(r.integer("nodes", 1, limits::kMaxAccelerators));
  JsonReader node = r.object("node");
  const auto host_by_name = [this](const std::string& n, const std::string& w) {
    return host(n, w);
  };
  const auto accelerator_by_name = [this](const std::string& n, const std::string& w) {
    return accelerator(n, w);
  };
  const auto accelerator_inline = [this](JsonReader& j) { return read_accelerator(j, *this); };
  c.host = named_or_inline<HostSpec>(node, "host", host_by_name, read_host);
  c.accelerator = named_or_inline<AcceleratorSpec>(node, "accelerator", accelerator_by_name,
                                                   accelerator_inline);
  c.accelerators_per_node =
      static_cast<int>(node.integer("accelerators_per_node", 1, limits::kMaxAcceleratorsPerNode));
  if (std::int64_t{c.nodes} * c.accelerators_per_node > limits::kMaxAccelerators) {
    r.fail("nodes", std::to_string(c.nodes) + " nodes x " +
                        std::to_string(c.accelerators_per_node) + " accelerators per node = " +
                        std::to_string(std::int64_t{c.nodes} * c.accelerators_per_node) +
                        " accelerators, above the limit of " +
                        std::to_string(limits::kMaxAccelerators));
  }
  JsonReader intra = node.object("intra");
  c.intra_topology = intra.choice_enum<IntraTopology>(
      "topology", {{"switched", IntraTopology::switched},
                   {"ring", IntraTopology::ring},
                   {"fully_connected", IntraTopology::fully_connected},
                   {"torus2d", IntraTopology::torus2d}});
  // Links with their collective traits (issue 14), by name or inline.
  LinkCollectiveTraits intra_traits, host_traits, inter_traits;
  const auto traits_reader = [](LinkCollectiveTraits& t) {
    return [&t](JsonReader& lr) { return read_link_traits(lr, t); };
  };
  const auto traits_by_name = [this](LinkCollectiveTraits& t) {
    return [this, &t](const std::string& n, const std::string& w) {
      const ProfileEntry& e = find(n, "link", w);
      JsonReader lr(e.json, source_for(e.origin));
      return read_link_traits(lr, t);
    };
  };
  c.intra_link = named_or_inline<LinkSpec>(intra, "link", traits_by_name(intra_traits),
                                           traits_reader(intra_traits));
  if (c.intra_topology == IntraTopology::torus2d) {
    for (auto v : intra.integer_list("dims", 1, limits::kMaxAcceleratorsPerNode))
      c.intra_dims.push_back(static_cast<int>(v));
    if (c.intra_dims.size() != 2 || c.intra_dims[0] * c.intra_dims[1] != c.accelerators_per_node) {
      intra.fail("dims", "torus2d dims must be two numbers whose product is accelerators_per_node");
    }
  }
  intra.done();
  c.host_link = named_or_inline<LinkSpec>(node, "host_link", traits_by_name(host_traits),
                                          traits_reader(host_traits));
  c.p2p = node.boolean_or("p2p", true);
  node.done();
  if (auto inter = r.optional_object("inter")) {
    c.inter_topology =
        inter->choice_enum<InterTopology>("topology", {{"star", InterTopology::star},
                                                       {"fat_tree", InterTopology::fat_tree},
                                                       {"ring", InterTopology::ring},
                                                       {"torus2d", InterTopology::torus2d},
                                                       {"torus3d", InterTopology::torus3d}});
    c.inter_link = named_or_inline<LinkSpec>(*inter, "link", traits_by_name(inter_traits),
                                             traits_reader(inter_traits));
    c.nics_per_node =
        static_cast<int>(inter->integer_or("nics_per_node", 1, 1, limits::kMaxNicsPerNode));
    if (c.inter_topology == InterTopology::torus2d || c.inter_topology == InterTopology::torus3d) {
      for (auto v : inter->integer_list("dims", 1, limits::kMaxAccelerators))
        c.inter_dims.push_back(static_cast<int>(v));
      const std::size_t want = c.inter_topology == InterTopology::torus2d ? 2 : 3;
      std::int64_t product = 1;
      for (int v : c.inter_dims)
        product = std::min<std::int64_t>(product * v, limits::kMaxAccelerators + 1);
      if (c.inter_dims.size() != want || product != c.nodes) {
        inter->fail("dims", "torus dims must be " + std::to_string(want) +
                                " numbers whose product is nodes (" + std::to_string(c.nodes) +
                                ")");
      }
    }
    if (c.inter_topology == InterTopology::fat_tree) {
      c.leaf_switch_ports =
          static_cast<int>(inter->integer_or("leaf_switch_ports", 1, 16, limits::kMaxSwitchPorts));
      c.oversubscription = inter->number_or("oversubscription", Bound::positive, 1.0);
    }
    inter->done();
  } else if (c.nodes > 1) {
    r.fail("inter", "a cluster of " + std::to_string(c.nodes) + " nodes needs an \"inter\" fabric");
  }
  if (auto coll = r.optional_object("collectives")) c.collectives = read_collectives(*coll);
  c.collectives.intra_link = intra_traits;
  c.collectives.host_link = host_traits;
  c.collectives.inter_link = inter_traits;
  r.done();
  return c;
}

void ProfileLibrary::set_value(const std::string& kind, const std::string& name,
                               const std::string& path, const nlohmann::json& value) {
  const auto it = entries_.find({kind, name});
  if (it == entries_.end()) find(name, kind, kind + " " + name);  // throws with a suggestion
  ProfileEntry& e = entries_.at({kind, name});
  nlohmann::json* node = &e.json;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    const std::string key =
        path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node->is_object() || !node->contains(key)) {
      throw InputError(e.origin, "has no value at '" + path + "'");
    }
    node = &(*node)[key];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  *node = value;
  if (kind == "accelerator") accelerator(name, e.origin);
  if (kind == "kernels") kernels(name, e.origin);
  if (kind == "framework") framework(name, e.origin);
  if (kind == "host") host(name, e.origin);
  if (kind == "link") link(name, e.origin);
  if (kind == "cluster") cluster(name, e.origin);
}

bool ProfileLibrary::expand_cluster(const std::string& path, nlohmann::json& node,
                                    JsonSource& source) const {
  if (!node.is_string()) return false;
  const char* kind = path == "cluster" ? "cluster" : nullptr;
  for (const ProfileReference& ref : kClusterReferences) {
    if (path == std::string("cluster.") + ref.path) kind = ref.kind;
  }
  if (kind == nullptr) return false;
  const ProfileEntry& e = find(node.get<std::string>(), kind, source.describe(path));
  node = e.json;
  source.origins[path] = e.origin;
  return true;
}

}  // namespace trainsim::sim
