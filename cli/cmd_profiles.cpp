// trainsim profiles list | show NAME: the hardware profiles, built in and from --profile-dir;
// `show` ends with the source of every value.

#include <algorithm>
#include <array>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/profiles_source.hpp"
#include "cli/units_format.hpp"
#include "sim/config/units.hpp"
#include "sim/core/input_error.hpp"
#include "sim/hw/kernel_model.hpp"

namespace trainsim::cli {

namespace {

void show_accelerator(std::ostream& os, const sim::AcceleratorSpec& a) {
  os << "  peak compute:\n";
  for (sim::Dtype d : sim::kAllDtypes) {
    if (const auto p = a.peak(d))
      os << "    " << std::setw(5) << sim::dtype_name(d) << "  " << format_rate(*p, "FLOP/s")
         << "\n";
  }
  os << "  memory bandwidth       " << format_rate(a.memory_bw_bytes_per_s, "B/s") << "\n";
  if (a.streaming_bw_bytes_per_s)
    os << "  streaming bandwidth    " << format_rate(*a.streaming_bw_bytes_per_s, "B/s")
       << " (measured copy; memory-bound kernels scale from it)\n";
  os << "  memory capacity        " << format_bytes(a.memory_capacity_bytes) << "\n"
     << "  kernel launch overhead " << format_seconds(a.kernel_launch_overhead_s)
     << " (device gap between kernels)\n"
     << "  compute units          " << a.compute_units << "\n";
  if (a.boost_clock_hz)
    os << "  boost clock            " << sim::format_significant(*a.boost_clock_hz / 1e6, 5)
       << " MHz (the clock the peaks are quoted at)\n";
  if (a.board_power_w) {
    os << "  board power            " << sim::format_significant(*a.board_power_w, 4)
       << " W; share of the rated boost clock sustained under dense math:";
    for (sim::Dtype d : sim::kAllDtypes) {
      if (d != sim::Dtype::int8 && a.peak(d))
        os << " " << sim::dtype_name(d) << " "
           << sim::format_significant(100 * sim::sustained_clock_fraction(a, d), 3) << "%";
    }
    os << "\n";
  }
  os << "  kernels                " << a.kernels.name << " (efficiencies per kernel class)\n";
}

void show_kernels(std::ostream& os, const sim::KernelEfficiency& k) {
  os << "  GEMM tile " << k.tile_m << " x " << k.tile_n << " (half-area tile at "
     << k.half_tile_throughput << " of the rate), k_half " << k.k_half << "\n";
  if (k.winograd_min_channels > 0) {
    os << "  Winograd convolutions: from " << k.winograd_min_channels << " input channels\n";
  }
  if (k.conv_half_tile_throughput > 0) {
    os << "  convolution tiles: a half-area tile runs at " << k.conv_half_tile_throughput
       << " of the rate\n";
  }
  if (k.conv_matrix_unit_min_tile_m > 0) {
    os << "  convolution tiles on matrix units: at least " << k.conv_matrix_unit_min_tile_m
       << " tall on GEMM_M (a weight gradient's filters)\n";
  }
  if (k.narrow_operand_below > 0) {
    os << "  library GEMMs: an operand narrower than " << k.narrow_operand_below
       << " runs on tiles at least " << k.narrow_operand_tile << " wide\n";
  }
  if (k.recurrent_block_bw_bytes_per_s > 0) {
    os << "  recurrent step GEMMs: a thread block of the main tile draws "
       << sim::format_significant(k.recurrent_block_bw_bytes_per_s / 1e9, 4)
       << " GB/s of DRAM bandwidth\n";
  }
  if (!k.serial_data_gradient_batches.empty()) {
    os << "  recurrent data-gradient steps at batch";
    for (std::size_t i = 0; i < k.serial_data_gradient_batches.size(); ++i)
      os << (i ? ", " : " ") << k.serial_data_gradient_batches[i];
    os << ": serial, " << sim::format_significant(k.serial_data_gradient_cycles_per_element, 4)
       << " cycles per reduction element\n";
  }
  if (k.narrow_batch_below > 0) {
    os << "  recurrent steps of batch below " << k.narrow_batch_below << ": small-batch kernels at "
       << sim::format_significant(k.narrow_batch_forward_flops_per_cycle, 4)
       << " FLOP per cycle per compute unit forward; the data gradient at "
       << sim::format_significant(k.narrow_batch_data_gradient_peak_fraction, 4)
       << " of the fp32 peak\n";
  }
  os << "  achieved fraction of peak (compute classes):\n";
  for (int c = 0; c < sim::kKernelClassCount; ++c) {
    const auto cls = static_cast<sim::KernelClass>(c);
    if (!sim::is_compute_class(cls)) continue;
    os << "    " << std::left << std::setw(16) << sim::kernel_class_name(cls) << std::right;
    for (sim::Dtype d : sim::kAllDtypes) {
      const double v = k.compute[static_cast<std::size_t>(c)][static_cast<std::size_t>(d)];
      if (v > 0) os << " " << sim::dtype_name(d) << " " << v;
    }
    os << "\n";
  }
  // " fp32 0.8 fp16 0.6": the dtypes a per-dtype table gives a value for.
  const auto dtype_values = [](const std::array<double, sim::kDtypeCount>& v) {
    std::ostringstream out;
    for (sim::Dtype d : sim::kAllDtypes)
      if (v[static_cast<std::size_t>(d)] > 0)
        out << " " << sim::dtype_name(d) << " " << v[static_cast<std::size_t>(d)];
    return out.str();
  };
  // The per-dtype factors on convolutions, where the profile gives any.
  const auto per_dtype = [&](const char* label, const std::array<double, sim::kDtypeCount>& v) {
    const std::string values = dtype_values(v);
    if (!values.empty()) os << "  " << label << values << "\n";
  };
  per_dtype("Winograd gain (3x3 stride-1 convolutions):", k.winograd_gain);
  const auto latencies = [&](const char* label, const std::array<double, sim::kDtypeCount>& v) {
    std::ostringstream latency;
    for (sim::Dtype d : sim::kAllDtypes) {
      const double s = v[static_cast<std::size_t>(d)];
      if (s > 0) latency << " " << sim::dtype_name(d) << " " << format_seconds(s);
    }
    if (!latency.str().empty()) os << "  " << label << latency.str() << "\n";
  };
  latencies("GEMMs on matrix units take, on top of their tiles' work:", k.gemm_latency_s);
  latencies("convolutions take instead:", k.conv_latency_s);
  if (k.winograd_nonfused_3x3 || k.winograd_nonfused_5x5) {
    os << "  nonfused Winograd (batched GEMMs between transform kernels) for stride-1 filters:"
       << (k.winograd_nonfused_3x3 ? " 3x3 (F(4x4,3x3))" : "")
       << (k.winograd_nonfused_5x5 ? " 5x5 (F(5x5,5x5))" : "")
       << (k.winograd_nonfused_weight_gradient_only ? ", weight gradients only" : "") << "\n";
  }
  per_dtype("weight-gradient convolutions at this fraction of conv's efficiency:",
            k.conv_weight_gradient);
  per_dtype("of those, divided by 1 + this over the filter taps per loaded input element:",
            k.conv_weight_gradient_input_load);
  per_dtype("weight-gradient convolutions stream their operands at this fraction of DRAM's rate:",
            k.conv_weight_gradient_bandwidth);
  per_dtype("data gradients of strided convolutions at this fraction of conv's efficiency:",
            k.conv_strided_data_gradient);
  per_dtype(
      "of those, split into stride phases (filter >= stride, >= 64 channels), at this fraction:",
      k.conv_phase_split_data_gradient);
  per_dtype("GEMMs on matrix units with a dimension not a whole 16-byte vector at this fraction:",
            k.unaligned_gemm);
  per_dtype("of those, with a stride not a whole 4-byte word (no cp.async) at this fraction:",
            k.sub_word_aligned_gemm);
  per_dtype(
      "GEMMs on matrix units with both operands MN-major (weight gradients) at this fraction:",
      k.mn_major_gemm);
  per_dtype(
      "SIMT GEMMs with both operands K-major (\"TN\") stream them at this fraction of "
      "DRAM's rate:",
      k.k_major_simt_bandwidth);
  if (k.sustained_clock_hz > 0) {
    os << "  sustained clock under dense math: "
       << sim::format_significant(k.sustained_clock_hz / 1e6, 5) << " MHz at "
       << sim::format_significant(k.unit_power_w, 4) << " W per compute unit, growing as power^(1/"
       << sim::format_significant(k.power_clock_exponent, 4) << ")";
    const std::string rates = dtype_values(k.reference_flops_per_clock);
    if (!rates.empty()) os << "; FLOPs per clock per unit:" << rates;
    os << "\n";
  }
  if (!k.dilated_conv_tensor_cores)
    os << "  dilated convolutions: no tensor-core algorithm (computed in fp32)\n";
  if (!k.conv_few_channel_kernels)
    os << "  few-channel convolutions: no packed-tap kernels (channels pad to the tile's depth at "
          "every filter tap)\n";
  if (k.conv_few_channel_simt)
    os << "  few-channel convolutions (under one 16-byte vector of input channels): fp32 SIMT "
          "kernels whatever the dtype\n";
  if (k.pointwise_conv_gemm)
    os << "  pointwise (1x1 stride-1) convolutions on matrix units: forward and data gradient run "
          "as library GEMMs\n";
  os << "  achieved fraction of DRAM bandwidth (memory classes):\n";
  for (int c = 0; c < sim::kKernelClassCount; ++c) {
    const auto cls = static_cast<sim::KernelClass>(c);
    if (sim::is_compute_class(cls)) continue;
    os << "    " << std::left << std::setw(16) << sim::kernel_class_name(cls) << std::right << " "
       << k.memory[static_cast<std::size_t>(c)];
    const double floor_s = k.memory_floor_s[static_cast<std::size_t>(c)];
    const double row_s = k.row_element_latency_s[static_cast<std::size_t>(c)];
    if (floor_s > 0 || row_s > 0) {
      os << " (at least " << format_seconds(floor_s) << " per kernel";
      if (row_s > 0) os << ", plus " << format_seconds(row_s) << " per element of a row";
      os << ")";
    }
    os << "\n";
  }
}

void show_framework(std::ostream& os, const sim::FrameworkSpec& f) {
  os << "  host time per kernel   forward " << format_seconds(f.host_forward_per_kernel_s)
     << ", backward " << format_seconds(f.host_backward_per_kernel_s) << ", optimizer "
     << format_seconds(f.host_optimizer_per_kernel_s) << "; mixed precision adds "
     << format_seconds(f.host_amp_cast_per_kernel_s) << " per forward kernel; "
     << format_seconds(f.host_library_launch_s) << " per kernel a library launches, "
     << format_seconds(f.host_library_call_s) << " per library call\n"
     << "  host time per step     " << format_seconds(f.host_per_step_s) << "; "
     << f.host_syncs_per_step << " host-device syncs per step\n"
     << "  graph launch " << (f.graph_launch ? "yes" : "no") << ", fusion "
     << (f.fusion == sim::Fusion::none ? "none" : "pointwise") << ", mixed precision "
     << (f.mixed_precision == sim::MixedPrecision::autocast ? "autocast" : "master_weights")
     << " (fp32 ops: " << (f.amp_fp32_ops == sim::AmpFp32Ops::listed ? "listed" : "graph_rewrite")
     << "; weight casts: "
     << (f.amp_weight_casts == sim::AmpWeightCasts::dispatcher ? "dispatcher" : "framework_op")
     << "), batch norm "
     << (f.batch_norm == sim::BatchNormKernels::cudnn ? "cudnn" : "native_for_bf16")
     << ", optimizer kernels "
     << (f.optimizer_kernels == sim::OptimizerKernels::per_tensor     ? "per_tensor"
         : f.optimizer_kernels == sim::OptimizerKernels::multi_tensor ? "multi_tensor"
                                                                      : "fused")
     << " (" << f.tensors_per_optimizer_kernel << " tensors per kernel)\n";
  os << "  instructions per element of memory-bound kernels ";
  bool any = false;
  for (const auto& [name, math] : sim::kElementMathNames) {
    const double n = f.element_instructions[static_cast<std::size_t>(math)];
    if (n <= 0) continue;
    os << (any ? ", " : "") << name << " " << sim::format_significant(n, 3);
    any = true;
  }
  os << (any ? "\n" : "none (priced on DRAM alone)\n");
}

void show_link(std::ostream& os, const sim::LinkSpec& l, const std::string& indent = "  ") {
  os << indent << "bandwidth " << format_rate(l.bw_bytes_per_s, "B/s") << " per direction ("
     << format_rate(l.bw_bytes_per_s * 8, "b/s") << "), latency " << format_seconds(l.latency_s)
     << ", " << (l.duplex == sim::Duplex::full ? "full" : "half") << " duplex\n";
}

const char* intra_name(sim::IntraTopology t) {
  switch (t) {
    case sim::IntraTopology::switched:
      return "switched";
    case sim::IntraTopology::ring:
      return "ring";
    case sim::IntraTopology::fully_connected:
      return "fully_connected";
    case sim::IntraTopology::torus2d:
      return "torus2d";
  }
  return "?";
}

const char* inter_name(sim::InterTopology t) {
  switch (t) {
    case sim::InterTopology::none:
      return "none";
    case sim::InterTopology::star:
      return "star";
    case sim::InterTopology::fat_tree:
      return "fat_tree";
    case sim::InterTopology::ring:
      return "ring";
    case sim::InterTopology::torus2d:
      return "torus2d";
    case sim::InterTopology::torus3d:
      return "torus3d";
  }
  return "?";
}

void show_cluster(std::ostream& os, const sim::ClusterSpec& c) {
  os << "  nodes " << c.nodes << " x " << c.accelerators_per_node << " " << c.accelerator.name
     << " = " << c.total_accelerators() << " accelerators\n"
     << "  host " << c.host.name << " (" << c.host.cpu_cores << " cores)\n"
     << "  intra-node " << intra_name(c.intra_topology) << " over " << c.intra_link.name << ":";
  show_link(os, c.intra_link, " ");
  os << "  host link " << c.host_link.name << ":";
  show_link(os, c.host_link, " ");
  os << "  peer-to-peer " << (c.p2p ? "yes" : "no (accelerator traffic crosses the host)") << "\n";
  if (c.inter_link) {
    os << "  inter-node " << inter_name(c.inter_topology) << " over " << c.inter_link->name << " x "
       << c.nics_per_node << " NICs per node:";
    show_link(os, *c.inter_link, " ");
  }
  os << "  accelerator " << c.accelerator.name << ":\n";
  show_accelerator(os, c.accelerator);
}

// Every number of the profile with the kind and text of its source (sim/config/provenance.hpp),
// and how many are estimates.
void show_sources(std::ostream& os, const sim::ProfileProvenance& p) {
  if (p.leaves.empty()) return;
  std::size_t width = 0;
  std::array<int, sim::kProvenanceKindCount> counts{};
  for (const sim::ProvenanceLeaf& l : p.leaves) {
    width = std::max(width, l.path.size());
    ++counts[static_cast<std::size_t>(l.provenance.kind)];
  }
  os << "  sources:\n";
  for (const sim::ProvenanceLeaf& l : p.leaves) {
    os << "    " << std::left << std::setw(static_cast<int>(width)) << l.path << "  "
       << std::setw(10) << sim::provenance_kind_name(l.provenance.kind) << std::right;
    if (!l.provenance.citation.empty()) os << "  " << l.provenance.citation;
    os << "\n";
  }
  const auto n = [&](sim::ProvenanceKind k) { return counts[static_cast<std::size_t>(k)]; };
  using K = sim::ProvenanceKind;
  os << "  " << n(K::estimate) << " of " << p.leaves.size() << " values are estimates ("
     << n(K::calibrated) << " calibrated, " << n(K::datasheet) + n(K::paper) + n(K::measured)
     << " from datasheets, papers or measurements";
  if (n(K::unsourced) > 0) os << ", " << n(K::unsourced) << " with no source";
  os << ")\n";
}

}  // namespace

int run_profiles(const Args& args, CommandIo& io) {
  po::options_description options("profiles options");
  std::vector<std::string> words;
  std::vector<std::string> dirs;
  options.add_options()("words", po::value(&words), "list | show NAME")(
      "profile-dir", po::value(&dirs), "extra folder of profile JSON files (repeatable)");
  po::positional_options_description pos;
  pos.add("words", -1);
  po::variables_map vm;
  if (!parse_command_line("profiles", "list | show NAME [--profile-dir DIR]", args, options, pos,
                          vm, io))
    return 0;
  if (words.empty()) {
    throw UsageError("trainsim profiles",
                     "expected 'list' or 'show NAME' (see 'trainsim profiles --help')");
  }
  if (words[0] != "list" && words[0] != "show") {
    throw UsageError("trainsim profiles " + words[0],
                     "unknown action (expected 'list' or 'show NAME')");
  }
  const sim::ProfileLibrary lib = load_profile_library(dirs);
  if (words[0] == "list") {
    if (words.size() != 1) throw UsageError("trainsim profiles list", "takes no further arguments");
    std::string kind;
    for (const sim::ProfileEntry* e : lib.list()) {
      if (e->kind != kind) {
        kind = e->kind;
        io.out << (kind == "accelerator" ? "" : "\n") << (kind == "kernels" ? kind : kind + "s")
               << ":\n";
      }
      io.out << "  " << std::left << std::setw(26) << e->name << e->description << "\n";
    }
    return 0;
  }
  if (words.size() != 2)
    throw UsageError("trainsim profiles show", "expects exactly one profile NAME");
  const sim::ProfileEntry& e = lib.find(words[1], "", "trainsim profiles show");
  std::ostringstream out;  // printed only once the whole profile is known to be valid
  out << e.kind << " " << e.name << " (" << e.origin << ")\n";
  if (!e.description.empty()) out << "  " << e.description << "\n";
  if (e.kind == "accelerator") show_accelerator(out, lib.accelerator(e.name, e.origin));
  if (e.kind == "kernels") show_kernels(out, lib.kernels(e.name, e.origin));
  if (e.kind == "framework") show_framework(out, lib.framework(e.name, e.origin));
  if (e.kind == "host") {
    const auto h = lib.host(e.name, e.origin);
    out << "  cpu cores " << h.cpu_cores << "\n  single-thread speed " << h.single_thread_speed
        << " x the reference core (host times of framework profiles)\n  memory bandwidth "
        << format_rate(h.memory_bw_bytes_per_s, "B/s") << "\n  memory capacity "
        << format_bytes(h.memory_capacity_bytes) << "\n  storage read "
        << format_rate(h.storage_read_bw_bytes_per_s, "B/s") << "\n";
  }
  if (e.kind == "link") show_link(out, lib.link(e.name, e.origin));
  if (e.kind == "cluster") show_cluster(out, lib.cluster(e.name, e.origin));
  show_sources(out, e.provenance);
  io.out << out.str();
  return 0;
}

}  // namespace trainsim::cli
