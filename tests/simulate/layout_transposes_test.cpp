// cuDNN 8 and 9 run tensor-core convolutions in NHWC: given channels-first (NCHW) tensors, they
// transpose the operands before the kernel and the result after it (nchwToNhwcKernel,
// nhwcToNchwKernel). The H200's TF32 ResNet-50 step launches 204 of them, 3.5 of its 31.6 ms of
// kernels, its channels-last bf16 step none (tests/reference_data/h200_profile_kernels.csv). The
// kernel model prices them with the convolution (sim/hw/kernel_model.hpp, layout_transposes_s);
// the scenario's memory_format (the framework profile's by default) says which layout it has.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "cli/profiles_source.hpp"
#include "models/kernel_plan.hpp"
#include "models/zoo/zoo_model.hpp"
#include "sim/hw/kernel_model.hpp"
#include "support/conv_kernels.hpp"
#include "support/step_scenarios.hpp"

using trainsim::sim::Dtype;

namespace {

// The kernel `what` of a convolution over a {C, H, W} input, for 16 samples in `dtype`, on
// channels-first tensors or not.
trainsim::sim::Kernel conv(const char* what, const trainsim::models::Conv2d& spec,
                           std::vector<std::int64_t> input, Dtype dtype, bool channels_first) {
  trainsim::sim::Kernel out =
      trainsim::test::conv_instance(std::move(input), spec, what, 16, dtype);
  out.channels_first = channels_first;
  return out;
}

}  // namespace

TEST_CASE("a TF32 convolution on NCHW tensors pays three transposes at a copy's rate") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto& h200 = lib.accelerator("h200", "test");
  REQUIRE(h200.kernels.nchw_tensor_core_transposes);
  // ResNet's 3x3 convolution of 64 channels on 56x56.
  const auto spec = trainsim::models::conv_spec(64, 3, 1, 1);
  const auto nchw = conv("conv fwd", spec, {64, 56, 56}, Dtype::tf32, true);
  const auto nhwc = conv("conv fwd", spec, {64, 56, 56}, Dtype::tf32, false);
  // Input and filter in, output out.
  CHECK(trainsim::sim::layout_transpose_launches(h200, nchw) == 3);
  CHECK(trainsim::sim::layout_transpose_launches(h200, nhwc) == 0);
  // Each element read and written once more, in fp32: the input and output 16 x 64 x 56 x 56
  // each, the filter 64 x 64 x 9.
  const double elements = 2.0 * 16 * 64 * 56 * 56 + 64.0 * 64 * 9;
  const double copy_bw =
      h200.memory_bw_bytes_per_s *
      h200.kernels.memory[static_cast<std::size_t>(trainsim::sim::KernelClass::copy)];
  const double streamed_s = 2 * elements * 4 / copy_bw;
  CHECK(trainsim::sim::layout_transposes_s(h200, nchw) ==
        Approx(3 * h200.kernel_launch_overhead_s + streamed_s).epsilon(1e-9));
  CHECK(trainsim::sim::kernel_time_s(h200, nchw) - trainsim::sim::kernel_time_s(h200, nhwc) ==
        Approx(trainsim::sim::layout_transposes_s(h200, nchw)).epsilon(1e-9));
  // The data gradient converts the output gradient and the filter in, the input gradient out;
  // the weight gradient the input and the output gradient in, the filter gradient out.
  CHECK(trainsim::sim::layout_transpose_launches(
            h200, conv("conv dgrad", spec, {64, 56, 56}, Dtype::tf32, true)) == 3);
  CHECK(trainsim::sim::layout_transpose_launches(
            h200, conv("conv wgrad", spec, {64, 56, 56}, Dtype::tf32, true)) == 3);
}

TEST_CASE("no transposes where cuDNN reads NCHW itself") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto& h200 = lib.accelerator("h200", "test");
  const auto three = trainsim::models::conv_spec(64, 3, 1, 1);
  // fp32 runs SIMT kernels, which read NCHW.
  CHECK(trainsim::sim::layout_transpose_launches(
            h200, conv("conv fwd", three, {64, 56, 56}, Dtype::fp32, true)) == 0);
  // A 1x1 stride-1 convolution is a GEMM over NCHW (W[K x C] X[C x HW]); a strided one is not.
  CHECK(trainsim::sim::layout_transpose_launches(
            h200, conv("conv fwd", trainsim::models::conv_spec(256, 1, 1, 0), {64, 56, 56},
                       Dtype::tf32, true)) == 0);
  CHECK(trainsim::sim::layout_transpose_launches(
            h200, conv("conv fwd", trainsim::models::conv_spec(256, 1, 2, 0), {64, 56, 56},
                       Dtype::tf32, true)) == 3);
  // A first layer of 3 channels, fewer than one 16-byte vector of TF32: the H200's TF32 first
  // layers take as long as its fp32 ones.
  CHECK(trainsim::sim::layout_transpose_launches(
            h200, conv("conv fwd", trainsim::models::conv_spec(64, 7, 2, 3), {3, 224, 224},
                       Dtype::tf32, true)) == 0);
  // cuDNN 7's NCHW tensor-core kernels (Volta, Turing profiles) read NCHW: DeepBench's V100
  // fp16 rows, NCHW, run at rates the transposes would forbid.
  const auto& v100 = lib.accelerator("v100-sxm2-16gb", "test");
  CHECK_FALSE(v100.kernels.nchw_tensor_core_transposes);
  CHECK(trainsim::sim::layout_transpose_launches(
            v100, conv("conv fwd", three, {64, 56, 56}, Dtype::fp16, true)) == 0);
}

TEST_CASE("memory_format: PyTorch's NCHW by default, channels_last on request") {
  // The frameworks' defaults: PyTorch's tensors are NCHW, TensorFlow's convolutions take NHWC.
  const auto lib = trainsim::cli::load_profile_library({});
  for (const char* pytorch : {"pytorch_eager", "pytorch_cuda_graphs", "pytorch_apex_amp"}) {
    CHECK(lib.framework(pytorch, "test").memory_format ==
          trainsim::sim::MemoryFormat::channels_first);
  }
  CHECK(lib.framework("tensorflow_xla", "test").memory_format ==
        trainsim::sim::MemoryFormat::channels_last);
  // The demo scenario (NVIDIA's channels-last recipe) says channels_last; a --set overrides it.
  const std::vector<std::string> tf32 = {"model=resnet50", "precision=tf32", "cluster=dgx-h100"};
  const auto last = trainsim::test::scenario(tf32);
  CHECK(last.framework.memory_format == trainsim::sim::MemoryFormat::channels_last);
  auto sets = tf32;
  sets.push_back("memory_format=channels_first");
  const auto first = trainsim::test::scenario(sets);
  CHECK(first.framework.memory_format == trainsim::sim::MemoryFormat::channels_first);
  // The step: channels-first convolutions take longer on the device and launch more from the
  // host (cuDNN's transposes, each a library launch).
  for (const auto pass : {trainsim::models::Pass::forward, trainsim::models::Pass::backward}) {
    double device_first = 0, device_last = 0, host_first = 0, host_last = 0;
    for (const auto& l : trainsim::test::model_launches(first, pass, 64)) {
      device_first += l.device_s * l.count;
      host_first += l.host_s * l.count;
    }
    for (const auto& l : trainsim::test::model_launches(last, pass, 64)) {
      device_last += l.device_s * l.count;
      host_last += l.host_s * l.count;
    }
    CHECK(device_first > 1.03 * device_last);
    CHECK(host_first > host_last);
  }
}
