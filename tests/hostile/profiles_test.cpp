// Hostile profile folders (--profile-dir) and `trainsim profiles`.
#include "hostile/hostile_support.hpp"

using trainsim::test::deep_array;
using trainsim::test::with;

namespace {

const char* const kAccelerator = R"({
  "kind": "accelerator", "name": "gpu",
  "peak_flops": {"fp32": "10 TFLOP/s", "fp16": "100 TFLOP/s"},
  "memory_bandwidth": "1 TB/s", "memory_capacity": "16 GiB",
  "kernel_launch_overhead": "5 us", "compute_units": 80, "kernels": "nvidia-volta"
})";

const char* const kHost =
    R"({"kind": "host", "name": "box", "cpu_cores": 8, "single_thread_speed": 1,
  "memory_bandwidth": "100 GB/s", "memory_capacity": "256 GiB",
  "storage_read_bandwidth": "2 GB/s"})";

std::string cluster(const std::string& extra) {
  return R"({"kind": "cluster", "name": "c", "nodes": 2,
  "node": {"host": "dual-epyc-7742", "accelerator": "a100-sxm4-40gb", "accelerators_per_node": 8,
           "intra": {"topology": "switched", "link": "nvlink3"}, "host_link": "pcie4-x16"},
  "inter": {"topology": "star", "link": "ib-hdr")" +
         extra + "}}";
}

// A minimal kernels profile with one more top-level entry (`extra`, "key": value).
std::string kernels_profile(const std::string& extra) {
  return R"({"kind": "kernels", "name": "arch",
  "gemm_tile": {"m": 128, "n": 128, "half_tile_throughput": 0.8}, "k_half": 10, )" +
         extra + R"(, "compute": {"conv": {"fp32": 0.8}},
  "memory": {"copy": 0.9, "elementwise": 0.8, "normalization": 0.7, "softmax": 0.7,
             "reduction": 0.7, "pooling": 0.7, "gather": 0.6, "scatter": 0.3, "optimizer": 0.8,
             "topk": 0.01}})";
}

// kernels_profile with `entry` added to its gemm_tile object.
std::string kernels_profile_tile(const std::string& entry) {
  return with(kernels_profile("\"dilated_conv_tensor_cores\": true"), "0.8}, \"k_half\"",
              "0.8, " + entry + "}, \"k_half\"");
}

// A framework profile whose host block's library launch is `library_launch`, with `extra` keys
// after its optimizer and `library_call` as its host block's last entry.
std::string framework_profile(const std::string& library_launch, const std::string& extra = "",
                              const std::string& library_call = R"("library_call": "0.1 ms")") {
  return R"({"kind": "framework", "name": "f",
  "host": {"forward_per_kernel": "5 us", "backward_per_kernel": "5 us",
           "optimizer_per_kernel": "5 us", "per_step": "1 ms", "library_launch": ")" +
         library_launch + R"(",
           "syncs_per_step": 1, )" +
         library_call + R"(},
  "graph_launch": false, "fusion": "none", "mixed_precision": "autocast",
  "rnn": "cudnn", "optimizer": {"kernels": "per_tensor"})" +
         extra + "}";
}

}  // namespace

HOSTILE("profile nested 100,000 deep", {"profiles", "show", "gpu", "--profile-dir", "@/"}, 2,
        {"@/accelerators/gpu.json:1:", "nested deeper than the limit of 64 levels"},
        {{"accelerators/gpu.json",
          "{\"kind\": \"accelerator\", \"name\": \"gpu\", \"x\": " + deep_array(100000) + "}"}})
HOSTILE("profile with a duplicate key", {"profiles", "show", "gpu", "--profile-dir", "@/"}, 2,
        {"@/accelerators/gpu.json:", "key 'memory_capacity' appears twice"},
        {{"accelerators/gpu.json",
          with(kAccelerator, "\"memory_capacity\": \"16 GiB\",",
               "\"memory_capacity\": \"16 GiB\", \"memory_capacity\": \"32 GiB\",")}})
HOSTILE("profile description that is a number", {"profiles", "show", "gpu", "--profile-dir", "@/"},
        2, {"@/accelerators/gpu.json: description: expected a string, got 5"},
        {{"accelerators/gpu.json",
          with(kAccelerator, "\"name\": \"gpu\",", "\"name\": \"gpu\", \"description\": 5,")}})
HOSTILE("profile description that is an array (was a library error)",
        {"profiles", "list", "--profile-dir", "@/"}, 2, {"description: expected a string, got []"},
        {{"accelerators/gpu.json",
          with(kAccelerator, "\"name\": \"gpu\",", "\"name\": \"gpu\", \"description\": [],")}})
HOSTILE("profile in the wrong kind folder", {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/hosts/gpu.json: kind: a accelerator profile must be in the folder accelerators/"},
        {{"hosts/gpu.json", kAccelerator}})
HOSTILE("profile name differs from its file", {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"name: profile name \"gpu\" must equal the file name \"other\""},
        {{"accelerators/other.json", kAccelerator}})
HOSTILE("profile number out of range", {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/accelerators/gpu.json:", "compute_units: number 5e500 is out of range"},
        {{"accelerators/gpu.json", with(kAccelerator, "80", "5e500")}})
HOSTILE(
    "accelerator that streams faster than its memory bandwidth",
    {"profiles", "list", "--profile-dir", "@/"}, 2,
    {"@/accelerators/gpu.json: streaming_bandwidth: exceeds memory_bandwidth (1200 > 1000 GB/s)"},
    {{"accelerators/gpu.json", with(kAccelerator, "\"memory_bandwidth\": \"1 TB/s\",",
                                    "\"memory_bandwidth\": \"1 TB/s\", "
                                    "\"streaming_bandwidth\": \"1.2 TB/s\",")}})
HOSTILE("accelerator that streams nothing", {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/accelerators/gpu.json", "streaming_bandwidth", "0 GB/s"},
        {{"accelerators/gpu.json", with(kAccelerator, "\"memory_bandwidth\": \"1 TB/s\",",
                                        "\"memory_bandwidth\": \"1 TB/s\", "
                                        "\"streaming_bandwidth\": \"0 GB/s\",")}})
HOSTILE("profile folder as a profile file", {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/accelerators/gpu.json: is not a regular file"},
        {{"accelerators/gpu.json/inner.txt", "x"}})
HOSTILE("files outside the kind folders are not read",
        {"profiles", "show", "gpu", "--profile-dir", "@/"}, 0, {"100 TFLOP/s"},
        {{"accelerators/gpu.json", kAccelerator},
         {"scenario.json", "{\"not\": \"a profile\"}"},
         {"notes/readme.json", "not even JSON"}})
HOSTILE("profile saved at the top of the folder (was read as nothing)",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/gpu.json: is not read: --profile-dir @/ has none of the kind folders (accelerators/,",
         "a profile goes in DIR/<kind folder>/<name>.json"},
        {{"gpu.json", kAccelerator}, {"zz.json", kHost}})
HOSTILE("profile folder without any kind folder", {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"--profile-dir @/: has none of the kind folders"}, {{"notes/readme.txt", "x"}})
HOSTILE("host with 1e9 cores", {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/hosts/box.json: cpu_cores: value 1000000000 is above the limit of 65536"},
        {{"hosts/box.json", with(kHost, "\"cpu_cores\": 8", "\"cpu_cores\": 1e9")}})
HOSTILE("host with 0 cores", {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"cpu_cores: value 0 must be at least 1"},
        {{"hosts/box.json", with(kHost, "\"cpu_cores\": 8", "\"cpu_cores\": 0")}})
HOSTILE("host with a clock for its single-thread speed",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/hosts/box.json: single_thread_speed: 3400 must lie in [0.05, 20]"},
        {{"hosts/box.json",
          with(kHost, "\"single_thread_speed\": 1", "\"single_thread_speed\": 3400")}})
HOSTILE("host without a single-thread speed", {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/hosts/box.json", "single_thread_speed"},
        {{"hosts/box.json", with(kHost, " \"single_thread_speed\": 1,", "")}})
HOSTILE("kernels profile whose weight-gradient share is above 1",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json: conv_weight_gradient.fp32: value 1.5 must be in (0, 1]"},
        {{"kernels/arch.json", kernels_profile("\"conv_weight_gradient\": {\"fp32\": 1.5}")}})
HOSTILE("kernels profile whose weight-gradient input-load cost is negative",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json: conv_weight_gradient_input_load.fp32: value -0.2 must be positive"},
        {{"kernels/arch.json",
          kernels_profile("\"conv_weight_gradient_input_load\": {\"fp32\": -0.2}")}})
HOSTILE("kernels profile whose weight-gradient bandwidth share is 0",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json: conv_weight_gradient_bandwidth.fp32: value 0 must be in (0, 1]"},
        {{"kernels/arch.json",
          kernels_profile("\"conv_weight_gradient_bandwidth\": {\"fp32\": 0}")}})
HOSTILE("kernels profile whose weight-gradient bandwidth share names no dtype",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json: conv_weight_gradient_bandwidth", "fp33"},
        {{"kernels/arch.json",
          kernels_profile("\"conv_weight_gradient_bandwidth\": {\"fp33\": 0.3}")}})
HOSTILE("kernels profile whose strided data-gradient share is 0",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json: conv_strided_data_gradient.fp16: value 0 must be in (0, 1]"},
        {{"kernels/arch.json", kernels_profile("\"conv_strided_data_gradient\": {\"fp16\": 0}")}})
HOSTILE("kernels profile whose phase-split data-gradient share is above 1",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json: conv_phase_split_data_gradient.fp32: value 1.5 must be in (0, 1]"},
        {{"kernels/arch.json",
          kernels_profile("\"conv_phase_split_data_gradient\": {\"fp32\": 1.5}")}})
HOSTILE("kernels profile whose unaligned-GEMM share is above 1",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json: unaligned_gemm.bf16: value 2 must be in (0, 1]"},
        {{"kernels/arch.json", kernels_profile("\"unaligned_gemm\": {\"bf16\": 2}")}})
HOSTILE("kernels profile whose unaligned-GEMM share names no dtype",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "unaligned_gemm", "fp64"},
        {{"kernels/arch.json", kernels_profile("\"unaligned_gemm\": {\"fp64\": 0.5}")}})
HOSTILE("kernels profile whose narrow-operand tile is not a halving of the main tile",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "gemm_tile.narrow_operand.tile",
         "must be the main tile (128 x 128) halved 0 or more times (got 48)"},
        {{"kernels/arch.json",
          kernels_profile_tile("\"narrow_operand\": {\"below\": 32, \"tile\": 48}")}})
HOSTILE("kernels profile whose convolution tile floor is not a halving of the main tile",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "gemm_tile.conv_matrix_unit_min_m",
         "must be the main tile's m (128) halved 0 or more times (got 48)"},
        {{"kernels/arch.json", kernels_profile_tile("\"conv_matrix_unit_min_m\": 48")}})
HOSTILE("kernels profile whose convolution tile floor is 0",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "gemm_tile.conv_matrix_unit_min_m", "0"},
        {{"kernels/arch.json", kernels_profile_tile("\"conv_matrix_unit_min_m\": 0")}})
HOSTILE("kernels profile whose convolution tile share exceeds 1",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "gemm_tile.conv_half_tile_throughput", "(0, 1]"},
        {{"kernels/arch.json", kernels_profile_tile("\"conv_half_tile_throughput\": 1.2")}})
HOSTILE("kernels profile whose Winograd channel floor is a fraction",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "winograd_min_channels", "31.5"},
        {{"kernels/arch.json", kernels_profile("\"winograd_min_channels\": 31.5")}})
HOSTILE("kernels profile whose narrow-operand width is 1",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "gemm_tile.narrow_operand.below", "1"},
        {{"kernels/arch.json",
          kernels_profile_tile("\"narrow_operand\": {\"below\": 1, \"tile\": 64}")}})
HOSTILE("kernels profile whose recurrent blocks draw no bandwidth",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "recurrent_block_bandwidth", "0 GB/s"},
        {{"kernels/arch.json", kernels_profile("\"recurrent_block_bandwidth\": \"0 GB/s\"")}})
HOSTILE("kernels profile whose recurrent block bandwidth is a duration",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "recurrent_block_bandwidth", "18 us"},
        {{"kernels/arch.json", kernels_profile("\"recurrent_block_bandwidth\": \"18 us\"")}})
HOSTILE("kernels profile whose dilated-convolution switch is a string",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "dilated_conv_tensor_cores", "yes"},
        {{"kernels/arch.json", kernels_profile("\"dilated_conv_tensor_cores\": \"yes\"")}})
HOSTILE("kernels profile whose sub-word-aligned GEMM share exceeds 1",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "sub_word_aligned_gemm.bf16", "(0, 1]"},
        {{"kernels/arch.json", kernels_profile("\"sub_word_aligned_gemm\": {\"bf16\": 1.5}")}})
HOSTILE("kernels profile whose MN-major GEMM share is negative",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "mn_major_gemm.tf32", "(0, 1]"},
        {{"kernels/arch.json", kernels_profile("\"mn_major_gemm\": {\"tf32\": -0.5}")}})
HOSTILE("kernels profile whose K-major SIMT bandwidth share exceeds 1",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "k_major_simt_bandwidth.fp32", "(0, 1]"},
        {{"kernels/arch.json", kernels_profile("\"k_major_simt_bandwidth\": {\"fp32\": 1.5}")}})
HOSTILE("kernels profile whose serial data-gradient step lists no batch",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "recurrent_serial_data_gradient.batches", "at least one batch"},
        {{"kernels/arch.json",
          kernels_profile("\"recurrent_serial_data_gradient\": {\"batches\": [], "
                          "\"cycles_per_element\": 166}")}})
HOSTILE("kernels profile whose serial data-gradient step takes no cycles",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "recurrent_serial_data_gradient.cycles_per_element", "0"},
        {{"kernels/arch.json",
          kernels_profile("\"recurrent_serial_data_gradient\": {\"batches\": [32], "
                          "\"cycles_per_element\": 0}")}})
HOSTILE("kernels profile whose serial data-gradient batch is a fraction",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "recurrent_serial_data_gradient.batches", "32.5"},
        {{"kernels/arch.json",
          kernels_profile("\"recurrent_serial_data_gradient\": {\"batches\": [32.5], "
                          "\"cycles_per_element\": 166}")}})
HOSTILE("accelerator without boost_clock on a kernels profile that counts cycles",
        {"profiles", "show", "gpu", "--profile-dir", "@/"}, 2,
        {"@/accelerators/gpu.json", "kernels", "needs boost_clock",
         "recurrent_serial_data_gradient"},
        {{"kernels/arch.json",
          kernels_profile("\"recurrent_serial_data_gradient\": {\"batches\": [32], "
                          "\"cycles_per_element\": 166}")},
         {"accelerators/gpu.json", with(kAccelerator, "nvidia-volta", "arch")}})
HOSTILE("kernels profile whose small-batch recurrent steps have no forward rate",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "recurrent_narrow_batch.forward_flops_per_cycle", "missing"},
        {{"kernels/arch.json", kernels_profile("\"recurrent_narrow_batch\": {\"below\": 32, "
                                               "\"data_gradient_peak_fraction\": 0.11}")}})
HOSTILE("kernels profile whose small-batch data-gradient share is above the peak",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "recurrent_narrow_batch.data_gradient_peak_fraction", "1.5"},
        {{"kernels/arch.json", kernels_profile("\"recurrent_narrow_batch\": {\"below\": 32, "
                                               "\"forward_flops_per_cycle\": 14, "
                                               "\"data_gradient_peak_fraction\": 1.5}")}})
HOSTILE("kernels profile whose small-batch bound is below two",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "recurrent_narrow_batch.below", "1"},
        {{"kernels/arch.json", kernels_profile("\"recurrent_narrow_batch\": {\"below\": 1, "
                                               "\"forward_flops_per_cycle\": 14, "
                                               "\"data_gradient_peak_fraction\": 0.11}")}})
HOSTILE("kernels profile with an unknown key in its small-batch recurrent steps",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "recurrent_narrow_batch", "cycles"},
        {{"kernels/arch.json",
          kernels_profile("\"recurrent_narrow_batch\": {\"below\": 32, "
                          "\"forward_flops_per_cycle\": 14, "
                          "\"data_gradient_peak_fraction\": 0.11, \"cycles\": 3}")}})
HOSTILE("accelerator without boost_clock on a kernels profile with small-batch step rates",
        {"profiles", "show", "gpu", "--profile-dir", "@/"}, 2,
        {"@/accelerators/gpu.json", "kernels", "needs boost_clock", "recurrent_narrow_batch"},
        {{"kernels/arch.json", kernels_profile("\"recurrent_narrow_batch\": {\"below\": 32, "
                                               "\"forward_flops_per_cycle\": 14, "
                                               "\"data_gradient_peak_fraction\": 0.11}")},
         {"accelerators/gpu.json", with(kAccelerator, "nvidia-volta", "arch")}})
HOSTILE("kernels profile whose pointwise-convolution switch is a number",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "pointwise_conv_gemm", "1"},
        {{"kernels/arch.json", kernels_profile("\"pointwise_conv_gemm\": 1")}})
HOSTILE("kernels profile whose few-channel SIMT switch is a string",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "conv_few_channel_simt", "yes"},
        {{"kernels/arch.json", kernels_profile("\"conv_few_channel_simt\": \"yes\"")}})
HOSTILE("kernels profile offering nonfused Winograd for 4x4 filters",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "winograd_nonfused", "expected filter sizes 3 or 5, got 4"},
        {{"kernels/arch.json", kernels_profile("\"winograd_nonfused\": [3, 4]")}})
HOSTILE("kernels profile offering nonfused Winograd as a switch",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "winograd_nonfused", "expected an array of integers, got true"},
        {{"kernels/arch.json", kernels_profile("\"winograd_nonfused\": true")}})
HOSTILE("framework profile with an unknown mixed-precision fp32 policy",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/frameworks/f.json", "amp_fp32_ops", "downstream", "listed|graph_rewrite"},
        {{"frameworks/f.json", R"({"kind": "framework", "name": "f",
  "host": {"forward_per_kernel": "5 us", "backward_per_kernel": "5 us",
           "optimizer_per_kernel": "5 us", "per_step": "1 ms", "library_launch": "5 us",
           "library_call": "0 us", "syncs_per_step": 1},
  "graph_launch": false, "fusion": "none", "mixed_precision": "autocast",
  "amp_fp32_ops": "downstream", "rnn": "cudnn", "optimizer": {"kernels": "per_tensor"}})"}})
HOSTILE("framework profile with a negative mixed-precision host cost",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/frameworks/f.json", "host.amp_cast_per_kernel", "-3 us"},
        {{"frameworks/f.json", R"({"kind": "framework", "name": "f",
  "host": {"forward_per_kernel": "5 us", "backward_per_kernel": "5 us",
           "optimizer_per_kernel": "5 us", "per_step": "1 ms", "library_launch": "5 us",
           "library_call": "0 us", "syncs_per_step": 1, "amp_cast_per_kernel": "-3 us"},
  "graph_launch": false, "fusion": "none", "mixed_precision": "autocast",
  "rnn": "cudnn", "optimizer": {"kernels": "per_tensor"}})"}})
HOSTILE("kernels profile limiting nonfused Winograd with a string",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "winograd_nonfused_weight_gradient_only", "yes"},
        {{"kernels/arch.json",
          kernels_profile("\"winograd_nonfused_weight_gradient_only\": \"yes\"")}})
HOSTILE("kernels profile with a GEMM latency in GB/s", {"profiles", "list", "--profile-dir", "@/"},
        2, {"@/kernels/arch.json", "gemm_latency.bf16", "2 GB/s"},
        {{"kernels/arch.json", kernels_profile("\"gemm_latency\": {\"bf16\": \"2 GB/s\"}")}})
HOSTILE("kernels profile with a negative convolution latency",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "conv_latency.bf16", "-2 us"},
        {{"kernels/arch.json", kernels_profile("\"conv_latency\": {\"bf16\": \"-2 us\"}")}})
HOSTILE("kernels profile with a negative memory floor", {"profiles", "list", "--profile-dir", "@/"},
        2, {"@/kernels/arch.json", "memory_floor.softmax", "-1 us"},
        {{"kernels/arch.json", kernels_profile("\"memory_floor\": {\"softmax\": \"-1 us\"}")}})
HOSTILE("kernels profile with a row latency in GB/s", {"profiles", "list", "--profile-dir", "@/"},
        2, {"@/kernels/arch.json", "row_element_latency.softmax", "2 GB/s"},
        {{"kernels/arch.json",
          kernels_profile("\"row_element_latency\": {\"softmax\": \"2 GB/s\"}")}})
HOSTILE("kernels profile with a negative row latency", {"profiles", "list", "--profile-dir", "@/"},
        2, {"@/kernels/arch.json", "row_element_latency.normalization", "-1 ns"},
        {{"kernels/arch.json",
          kernels_profile("\"row_element_latency\": {\"normalization\": \"-1 ns\"}")}})
HOSTILE("kernels profile with a negative per-element latency for sums",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "row_element_latency.reduction", "-0.1 ns"},
        {{"kernels/arch.json",
          kernels_profile("\"row_element_latency\": {\"reduction\": \"-0.1 ns\"}")}})
HOSTILE("kernels profile with a row latency for a class without rows",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "row_element_latency", "unknown key 'elementwise'"},
        {{"kernels/arch.json",
          kernels_profile("\"row_element_latency\": {\"elementwise\": \"1 ns\"}")}})
HOSTILE("kernels profile with a memory floor for a compute class",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/kernels/arch.json", "memory_floor", "unknown key 'gemm'"},
        {{"kernels/arch.json", kernels_profile("\"memory_floor\": {\"gemm\": \"1 us\"}")}})
HOSTILE("framework profile with a negative library launch time",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/frameworks/f.json", "host.library_launch", "-7 us"},
        {{"frameworks/f.json", framework_profile("-7 us")}})
HOSTILE("framework profile without a library launch time",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/frameworks/f.json", "library_launch", "missing"},
        {{"frameworks/f.json", R"({"kind": "framework", "name": "f",
  "host": {"forward_per_kernel": "5 us", "backward_per_kernel": "5 us",
           "optimizer_per_kernel": "5 us", "per_step": "1 ms", "syncs_per_step": 1},
  "graph_launch": false, "fusion": "none", "mixed_precision": "autocast",
  "rnn": "cudnn", "optimizer": {"kernels": "per_tensor"}})"}})
HOSTILE("framework profile with a negative library call setup",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/frameworks/f.json", "host.library_call", "-0.2 ms"},
        {{"frameworks/f.json", framework_profile("7 us", "", R"("library_call": "-0.2 ms")")}})
HOSTILE("framework profile without a library call setup",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/frameworks/f.json", "library_call", "missing"},
        {{"frameworks/f.json", framework_profile("7 us", "", R"("amp_cast_per_kernel": "1 us")")}})
HOSTILE("framework profile with a library call setup in GB/s",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/frameworks/f.json", "host.library_call", "3 GB/s"},
        {{"frameworks/f.json", framework_profile("7 us", "", R"("library_call": "3 GB/s")")}})
HOSTILE("framework profile with negative instructions per element",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/frameworks/f.json", "element_instructions.erf", "-43"},
        {{"frameworks/f.json",
          framework_profile("7 us", R"(, "element_instructions": {"erf": -43})")}})
HOSTILE("framework profile pricing an arithmetic trainsim does not know",
        {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/frameworks/f.json", "element_instructions", "unknown key 'tanh'"},
        {{"frameworks/f.json",
          framework_profile("7 us", R"(, "element_instructions": {"erf": 43, "tanh": 30})")}})
HOSTILE("cluster of 1e9 nodes", {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/clusters/c.json: nodes: value 1000000000 is above the limit of 262144"},
        {{"clusters/c.json", with(cluster(""), "\"nodes\": 2", "\"nodes\": 1000000000")}})
HOSTILE("cluster with 5000 accelerators per node", {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"node.accelerators_per_node: value 5000 is above the limit of 1024"},
        {{"clusters/c.json",
          with(cluster(""), "\"accelerators_per_node\": 8", "\"accelerators_per_node\": 5000")}})
HOSTILE("cluster whose torus dims overflow an int", {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"inter.dims: torus dims must be 3 numbers whose product is nodes (2)"},
        {{"clusters/c.json",
          with(cluster(", \"dims\": [200000, 200000, 200000]"), "\"star\"", "\"torus3d\"")}})
HOSTILE("cluster with 1e6 NICs per node", {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"inter.nics_per_node: value 1000000 is above the limit of 1024"},
        {{"clusters/c.json", cluster(", \"nics_per_node\": 1000000")}})
HOSTILE("cluster naming a missing link", {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/clusters/c.json: inter.link: unknown link profile \"ib-hdx\""},
        {{"clusters/c.json", with(cluster(""), "ib-hdr", "ib-hdx")}})
HOSTILE("link with a negative latency", {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"latency: value \"-1 us\" must not be negative"},
        {{"links/l.json",
          R"({"kind": "link", "name": "l", "bandwidth": "1 GB/s", "latency": "-1 us"})"}})
HOSTILE("link of 0 bandwidth", {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"bandwidth: value \"0 GB/s\" must be positive"},
        {{"links/l.json",
          R"({"kind": "link", "name": "l", "bandwidth": "0 GB/s", "latency": "1 us"})"}})
HOSTILE("empty profile file", {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"@/links/l.json:1:1: malformed JSON"}, {{"links/l.json", ""}})
HOSTILE("unknown profile kind", {"profiles", "list", "--profile-dir", "@/"}, 2,
        {"kind: value \"switch\" is not one of accelerator|kernels|framework|host|link|cluster"},
        {{"links/l.json", R"({"kind": "switch", "name": "l"})"}})
HOSTILE("profiles show an unknown name", {"profiles", "show", "a100-sxm4-40g"}, 2,
        {"unknown profile \"a100-sxm4-40g\" (did you mean 'a100-sxm4-40gb'?)"})
HOSTILE("profiles show without a name", {"profiles", "show"}, 2, {"profiles show"})
HOSTILE("profiles with an unknown action", {"profiles", "delete"}, 2, {"delete"})
HOSTILE("profiles list with a profile dir of /dev/null",
        {"profiles", "list", "--profile-dir", "/dev/null"}, 2,
        {"--profile-dir /dev/null: is a file, not a folder of profiles"})
HOSTILE("profiles list works", {"profiles", "list"}, 0, {"a100-sxm4-40gb", "dgx-a100"})
