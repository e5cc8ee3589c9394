// Weight-gradient convolutions (cuDNN's backward-filter algorithms) run at the forward
// convolutions' efficiency times the kernels profile's conv_weight_gradient, and strided
// convolutions' data gradients times its conv_strided_data_gradient, where it gives them.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/profiles_source.hpp"
#include "models/zoo/zoo_model.hpp"
#include "sim/hw/kernel_model.hpp"
#include "support/conv_kernels.hpp"

using trainsim::models::KernelSpec;
using trainsim::sim::Dtype;

namespace {

// The kernel `what` of a convolution `spec` over a {C, H, W} input; by default a 3x3 one,
// 256 -> 256 channels on 28x28 (compute-bound).
KernelSpec conv(std::string_view what,
                const trainsim::models::Conv2d& spec = trainsim::models::conv_spec(256, 3, 1, 1),
                std::vector<std::int64_t> input = {256, 28, 28}) {
  return trainsim::test::conv_kernel(std::move(input), spec, what);
}

// The kernel's own duration in fp32 at batch 64 on a built-in accelerator.
double body_s(const trainsim::sim::ProfileLibrary& lib, const char* accelerator,
              const KernelSpec& k) {
  return trainsim::sim::kernel_body_s(
      lib.accelerator(accelerator, "test"),
      trainsim::models::instantiate(k, 64, trainsim::sim::Dtype::fp32));
}

// A split weight gradient: a 1x1 convolution of 64 channels on 112x112, whose weight gradient
// is one 64x64 filter tile over a reduction of batch x 12544 positions.
KernelSpec split_wgrad() {
  return conv("conv wgrad", trainsim::models::conv_spec(64, 1, 1, 0), {64, 112, 112});
}

// The kernel's own duration in fp32 at batch 16 on accelerator `a`.
double body16_s(const trainsim::sim::AcceleratorSpec& a, const KernelSpec& k) {
  return trainsim::sim::kernel_body_s(a, trainsim::models::instantiate(k, 16, Dtype::fp32));
}

}  // namespace

TEST_CASE("weight-gradient convolutions take the profile's share of conv efficiency") {
  const auto lib = trainsim::cli::load_profile_library({});
  // A 1x1 convolution (no Winograd algorithm competes), 256 -> 256 channels on 28x28:
  // compute-bound.
  const auto pointwise = trainsim::models::conv_spec(256, 1, 1, 0);
  const KernelSpec wgrad = conv("conv wgrad", pointwise);
  CHECK(wgrad.weight_gradient);
  CHECK_FALSE(conv("conv dgrad", pointwise).weight_gradient);
  const auto body_on = [&](const trainsim::sim::AcceleratorSpec& a) {
    return trainsim::sim::kernel_body_s(
        a, trainsim::models::instantiate(wgrad, 64, trainsim::sim::Dtype::fp32));
  };
  // Pascal and Turing give a share in fp32 (calibrated on DeepBench's rows of each, about 0.82
  // and 0.64): the compute-bound body takes up to 1 / share as long as without it (the split-K
  // slices' sum, a kernel of its own, does not scale with the share). (Volta's, refitted once the
  // 1x1 filters' input loads were priced apart, runs at its bound 1.)
  for (const char* accelerator : {"p100-sxm2-16gb", "t4"}) {
    INFO(accelerator);
    const auto& a = lib.accelerator(accelerator, "test");
    const double share = a.kernels.conv_weight_gradient[static_cast<std::size_t>(Dtype::fp32)];
    CHECK(share > 0.5);
    CHECK(share < 1);
    auto without = a;
    without.kernels.conv_weight_gradient = {};
    CHECK(body_on(a) > body_on(without));
    CHECK(body_on(a) <= body_on(without) / share * (1 + 1e-12));
    CHECK(body_on(a) > 0.9 * body_on(without) / share);
  }
  // An architecture whose profile gives none prices weight gradients at conv's efficiency.
  const auto& ampere = lib.accelerator("a100-sxm4-40gb", "test");
  CHECK(ampere.kernels.conv_weight_gradient[static_cast<std::size_t>(Dtype::fp32)] == 0);
}

TEST_CASE("a weight gradient's input loads are shared by the filter taps over each element") {
  // The filter taps that one input element serves: R x S for a stride-1 filter, R x S /
  // stride^2 for a strided one, at least 1.
  using trainsim::models::conv_spec;
  CHECK(conv("conv wgrad", conv_spec(256, 1, 1, 0)).input_tap_reuse == 1);
  CHECK(conv("conv wgrad").input_tap_reuse == 9);
  CHECK(conv("conv wgrad", conv_spec(256, 5, 2, 2), {128, 40, 40}).input_tap_reuse == 6.25);
  CHECK(conv("conv wgrad", conv_spec(256, 7, 2, 3), {128, 40, 40}).input_tap_reuse == 12.25);
  CHECK(conv("conv wgrad", conv_spec(512, 1, 2, 0), {256, 56, 56}).input_tap_reuse == 1);
  CHECK(conv("conv dgrad").input_tap_reuse == 0);  // weight gradients only
  {
    // A transposed 1-D convolution (WaveGlow's upsampling: kernel 1024, stride 256) gathers its
    // output gradient in the weight gradient: 4 taps overlap each element.
    trainsim::models::NetBuilder nb;
    const auto x = nb.input({80, 1, 63}, true);
    nb.begin("up", trainsim::models::OpClass::conv, x.elements());
    nb.end(nb.conv_transpose1d(x, 80, 1024, 256, true));
    CHECK(trainsim::test::kernel_named(nb.take_layers().at(0), "conv_transpose wgrad")
              .input_tap_reuse == 4);
  }
  // Pascal's SIMT weight gradients pay 1 + load / reuse: a compute-bound 3x3 one (256 -> 256
  // channels on 28x28) takes (1 + load) / (1 + load / 9) as long once its taps are taken to
  // share nothing, up to the split-K sum and fill that do not scale with it.
  const auto lib = trainsim::cli::load_profile_library({});
  const auto& p100 = lib.accelerator("p100-sxm2-16gb", "test");
  const double load =
      p100.kernels.conv_weight_gradient_input_load[static_cast<std::size_t>(Dtype::fp32)];
  CHECK(load > 0.1);
  CHECK(load < 0.5);
  KernelSpec three = conv("conv wgrad");
  three.winograd_filter = 0;  // the implicit GEMM alone, no Winograd algorithm competing
  KernelSpec unshared = three;
  unshared.input_tap_reuse = 1;
  const double ratio =
      body_s(lib, "p100-sxm2-16gb", unshared) / body_s(lib, "p100-sxm2-16gb", three);
  CHECK(ratio <= (1 + load) / (1 + load / 9) * (1 + 1e-12));
  CHECK(ratio > 1 + 0.8 * (load - load / 9));
  // Maxwell takes Pascal's value (the same maxwell_scudnn kernels); tensor-core weight gradients
  // and Hopper's, whose fits ran into 0 or widened their series' errors, pay none.
  CHECK(lib.accelerator("m40", "test")
            .kernels.conv_weight_gradient_input_load[static_cast<std::size_t>(Dtype::fp32)] ==
        load);
  CHECK(lib.accelerator("v100-sxm2-16gb", "test")
            .kernels.conv_weight_gradient_input_load[static_cast<std::size_t>(Dtype::fp16)] == 0);
  CHECK(lib.accelerator("t4", "test")
            .kernels.conv_weight_gradient_input_load[static_cast<std::size_t>(Dtype::fp16)] == 0);
  CHECK(lib.accelerator("h200", "test")
            .kernels.conv_weight_gradient_input_load[static_cast<std::size_t>(Dtype::fp32)] == 0);
}

TEST_CASE("only weight-gradient convolutions split their reduction") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto& v100 = lib.accelerator("v100-sxm2-16gb", "test");
  // The split weight gradient's long reduction, which split-K spreads over the SMs; the same
  // GEMM as a forward kernel (no split) runs on the few SMs its narrowed tiles fill (3.9x as
  // long, the weight gradient's 64 x 64 filter on a 128-wide tile).
  const KernelSpec wgrad = split_wgrad();
  KernelSpec as_forward = wgrad;
  as_forward.weight_gradient = false;
  auto no_share = v100;
  no_share.kernels.conv_weight_gradient = {};
  no_share.kernels.conv_weight_gradient_bandwidth = {};
  CHECK(body16_s(no_share, as_forward) > 3 * body16_s(no_share, wgrad));
}

TEST_CASE("weight gradients sum their split-K slices in a kernel of their own") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto& v100 = lib.accelerator("v100-sxm2-16gb", "test");
  // The split weight gradient above (one 64x64 filter tile over batch x 12544 positions): cuDNN
  // adds its slices into the zeroed filter gradient after the GEMM (atomic adds, or a workspace
  // reduction), one launch more. A forward kernel of the same GEMM, which does not split, and a
  // library GEMM, which sums its slices within the kernel, have no such launch.
  const KernelSpec wgrad = split_wgrad();
  KernelSpec as_forward = wgrad;
  as_forward.weight_gradient = false;
  KernelSpec as_gemm = wgrad;
  as_gemm.cls = trainsim::sim::KernelClass::gemm;
  as_gemm.weight_gradient = false;
  auto slower_launch = v100;
  slower_launch.kernel_launch_overhead_s += 1e-6;
  CHECK(body16_s(slower_launch, wgrad) - body16_s(v100, wgrad) == Approx(1e-6).epsilon(1e-6));
  CHECK(body16_s(slower_launch, as_forward) == body16_s(v100, as_forward));
  CHECK(body16_s(slower_launch, as_gemm) == body16_s(v100, as_gemm));
  // The sum reads every slice's fp32 partial filter gradient and writes the result: with
  // memory 10x faster the split weight gradient gets faster.
  auto faster_memory = v100;
  faster_memory.memory_bw_bytes_per_s *= 10;
  CHECK(body16_s(faster_memory, wgrad) < body16_s(v100, wgrad));
}

TEST_CASE("strided convolutions' data gradients take the profile's share of conv efficiency") {
  const auto lib = trainsim::cli::load_profile_library({});
  // ResNet's 1x1/2 shortcut.
  const auto strided = trainsim::models::conv_spec(512, 1, 2, 0);
  const KernelSpec dgrad = conv("conv dgrad", strided, {256, 56, 56});
  CHECK(dgrad.strided_data_gradient);
  CHECK_FALSE(conv("conv dgrad").strided_data_gradient);  // stride 1
  CHECK_FALSE(conv("conv wgrad", strided, {256, 56, 56}).strided_data_gradient);
  KernelSpec unstrided = dgrad;
  unstrided.strided_data_gradient = false;
  // Volta gives a share in fp32 (calibrated on DeepBench's V100 rows, about 0.5).
  const double share =
      lib.accelerator("v100-sxm2-16gb", "test")
          .kernels.conv_strided_data_gradient[static_cast<std::size_t>(Dtype::fp32)];
  CHECK(share > 0.3);
  CHECK(share < 1);
  CHECK(body_s(lib, "v100-sxm2-16gb", dgrad) ==
        Approx(body_s(lib, "v100-sxm2-16gb", unstrided) / share).epsilon(1e-9));
  // An architecture whose profile gives none prices them at conv's efficiency.
  const auto& ampere = lib.accelerator("a100-sxm4-40gb", "test");
  CHECK(ampere.kernels.conv_strided_data_gradient[static_cast<std::size_t>(Dtype::fp32)] == 0);
}

TEST_CASE("strided data gradients of filters as long as their stride run in stride phases") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto waste = [](const trainsim::models::Conv2d& spec, std::vector<std::int64_t> input) {
    return conv("conv dgrad", spec, std::move(input)).strided_tap_waste;
  };
  // Each phase of a 5x5 stride-2 filter has ceil(5 / 2)^2 = 9 taps, four phases 36 of 25.
  CHECK(waste(trainsim::models::conv_spec(128, 5, 2, 2), {64, 80, 350}) == Approx(36.0 / 25));
  CHECK(waste(trainsim::models::conv_spec(64, 7, 2, 3), {64, 224, 224}) == Approx(64.0 / 49));
  CHECK(waste(trainsim::models::conv_spec(64, 3, 2, 1), {64, 56, 56}) == Approx(16.0 / 9));
  // A 1x1 stride-2 filter leaves three phases without taps, and unstrided ones have none.
  CHECK(waste(trainsim::models::conv_spec(512, 1, 2, 0), {256, 56, 56}) == 0);
  CHECK(waste(trainsim::models::conv_spec(256, 3, 1, 1), {256, 28, 28}) == 0);
  // Grouped (depthwise) ones keep the strided share.
  auto depthwise = trainsim::models::conv_spec(64, 3, 2, 1);
  depthwise.groups = 64;
  CHECK(waste(depthwise, {64, 56, 56}) == 0);

  // Priced at the phase share over that rounding on 64 or more input channels, at the strided
  // share below (DeepBench's C32 79x341 5x10/2 data gradients run at the latter's rate).
  const auto& p100 = lib.accelerator("p100-sxm2-16gb", "test");
  const auto d = static_cast<std::size_t>(Dtype::fp32);
  const double phases = p100.kernels.conv_phase_split_data_gradient[d];
  const double strided = p100.kernels.conv_strided_data_gradient[d];
  REQUIRE(phases > strided);
  const auto spec = trainsim::models::conv_spec(128, 5, 2, 2);
  for (const std::int64_t channels : {32, 64}) {
    const KernelSpec dgrad = conv("conv dgrad", spec, {channels, 80, 350});
    KernelSpec unstrided = dgrad;
    unstrided.strided_data_gradient = false;
    unstrided.strided_tap_waste = 0;
    const double share = channels >= 64 ? phases / dgrad.strided_tap_waste : strided;
    CHECK(body_s(lib, "p100-sxm2-16gb", dgrad) ==
          Approx(body_s(lib, "p100-sxm2-16gb", unstrided) / share).epsilon(1e-9));
  }
}

TEST_CASE("weight gradients stream their operands at the profile's share of bandwidth") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto& p100 = lib.accelerator("p100-sxm2-16gb", "test");
  const auto& gp102 = lib.accelerator("gtx-1080-ti", "test");
  const auto share_of = [](const trainsim::sim::AcceleratorSpec& a) {
    return a.kernels.conv_weight_gradient_bandwidth[static_cast<std::size_t>(Dtype::fp32)];
  };
  CHECK(share_of(p100) > 0.2);
  CHECK(share_of(p100) < 0.5);
  const auto without = [](trainsim::sim::AcceleratorSpec a) {
    a.kernels.conv_weight_gradient_bandwidth = {};
    return a;
  };
  // The split weight gradient (64 filters over batch x 12544 positions, 103 MB of x and dy at
  // batch 16): DeepBench times it at 0.64 ms on the P100 and 1.08 ms on the GTX 1080 Ti, whose
  // bandwidth is 1.5x lower and FLOP rate higher. Priced at the streaming rate it follows the
  // FLOPs; at the profile's share it follows the bandwidth (the share is fitted on all of the two
  // boards' convolution rows): the GTX 1080 Ti's within 15% of its row. The P100's, its 64 x 64
  // filter gradient on a 128-wide SIMT tile (fastest_tiling_s), is priced at its compute (1.25x
  // its row), the share not binding, so the two come out 1.2x apart where DeepBench has 1.69x.
  const KernelSpec wgrad = split_wgrad();
  const double p100_s = body16_s(p100, wgrad);
  const double gp102_s = body16_s(gp102, wgrad);
  CHECK(body16_s(without(gp102), wgrad) < body16_s(without(p100), wgrad));
  CHECK(gp102_s > 1.15 * p100_s);
  CHECK(p100_s == body16_s(without(p100), wgrad));
  CHECK(gp102_s == Approx(1.08e-3).epsilon(0.15));
  // Its forward kernel, and a compute-bound weight gradient, are priced as before.
  const KernelSpec fwd = conv("conv fwd", trainsim::models::conv_spec(64, 1, 1, 0), {64, 112, 112});
  CHECK(body16_s(p100, fwd) == body16_s(without(p100), fwd));
  const KernelSpec dense = conv("conv wgrad");
  CHECK(body_s(lib, "p100-sxm2-16gb", dense) ==
        trainsim::sim::kernel_body_s(without(p100),
                                     trainsim::models::instantiate(dense, 64, Dtype::fp32)));
  // Tensor-core weight gradients and Hopper's read at a convolution's rate.
  CHECK(share_of(lib.accelerator("h200", "test")) == 0);
  CHECK(lib.accelerator("v100-sxm2-16gb", "test")
            .kernels.conv_weight_gradient_bandwidth[static_cast<std::size_t>(Dtype::fp16)] == 0);
}

TEST_CASE("a strided filter shorter than its stride reads only the input rows it covers") {
  // A 1x1 stride-2 convolution (ResNet's downsampling shortcut, 256 -> 512 channels on 56x56):
  // its forward and weight-gradient kernels read every other input row, 256 x 28 x 56 elements,
  // and the output's 512 x 28 x 28; its data gradient writes the whole input gradient.
  const auto shortcut = trainsim::models::conv_spec(512, 1, 2, 0);
  const double half_input = 256.0 * 28 * 56;
  const double output = 512.0 * 28 * 28;
  CHECK(conv("conv fwd", shortcut, {256, 56, 56}).act_elements == half_input + output);
  CHECK(conv("conv wgrad", shortcut, {256, 56, 56}).act_elements == half_input + output);
  CHECK(conv("conv dgrad", shortcut, {256, 56, 56}).act_elements == 2 * half_input + output);
  // A 3x3 stride-2 filter covers every row.
  const auto strided3 = trainsim::models::conv_spec(512, 3, 2, 1);
  CHECK(conv("conv fwd", strided3, {256, 56, 56}).act_elements == 2 * half_input + output);
}

TEST_CASE("SIMT weight gradients run on tiles 128 wide on one side") {
  const auto lib = trainsim::cli::load_profile_library({});
  // A 3x3 weight gradient of 64 input channels into K filters on 56x56, which Volta's and
  // Hopper's profiles run on nonfused Winograd: a batched GEMM of K x 64 per transformed tile
  // element (compute-bound).
  const auto wgrad = [](std::int64_t k) {
    return conv("conv wgrad", trainsim::models::conv_spec(k, 3, 1, 1), {64, 56, 56});
  };
  // In fp32 on SIMT math, cuDNN's backward-filter GEMMs are 128 wide on one side (its
  // *_scudnn_128x{128,64,32}_stridedB_splitK_* kernels, and the 128x64 SGEMM under nonfused
  // Winograd), so 64 filters fill half of each tile: their gradient takes 0.85-0.9 of the time
  // of 128 filters' where tiles of 64 x 64 had made it 0.58-0.75.
  for (const char* accelerator : {"v100-sxm2-16gb", "h200"}) {
    INFO(accelerator);
    const auto& a = lib.accelerator(accelerator, "test");
    const double narrow = body16_s(a, wgrad(64));
    const double wide = body16_s(a, wgrad(128));
    CHECK(narrow > 0.8 * wide);
    CHECK(narrow <= wide * (1 + 1e-12));
  }
  // Tensor-core weight gradients keep their narrower tiles where the library has them: in fp16
  // on the A100, 64 filters take well under the time of 128. cuDNN 7's tensor-core kernels
  // (Volta's and Turing's profiles) are 128 filters tall at the least, so there 64 take the time
  // of 128 (gemm_tile.conv_matrix_unit_min_m).
  const auto fp16_s = [&](const char* accelerator, const KernelSpec& k) {
    return trainsim::sim::kernel_body_s(lib.accelerator(accelerator, "test"),
                                        trainsim::models::instantiate(k, 16, Dtype::fp16));
  };
  CHECK(fp16_s("a100-sxm4-40gb", wgrad(64)) < 0.75 * fp16_s("a100-sxm4-40gb", wgrad(128)));
  CHECK(fp16_s("v100-sxm2-16gb", wgrad(64)) ==
        Approx(fp16_s("v100-sxm2-16gb", wgrad(128))).epsilon(0.05));
}

TEST_CASE("SIMT forward and data-gradient convolutions keep tiles 128 pixels wide") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto& gtx = lib.accelerator("gtx-1080-ti", "test");
  // ResNet-50's last 1x1 convolutions (C2048 7x7 K512): a GEMM of batch x 49 pixels by 512
  // filters over 2048 channels, with no split reduction in the forward pass. cuDNN's SIMT
  // kernels (maxwell_scudnn_128x{128,64,32}_relu_*, volta_scudnn_128x32_relu_small_nn_v1) narrow
  // the filters' side only, so at batch 8 (392 pixels) four tiles of pixels leave most of the
  // GTX 1080 Ti's 28 SMs idle until batch 16 fills them: DeepBench measures 0.207 and 0.213 ms
  // (results/train, DeepBench_NV_1080Ti.xlsx). Tiles of 64 x 64 had priced batch 8 at 0.117 ms,
  // 0.57x its measured time and 0.60x batch 16's.
  const auto layer = trainsim::models::conv_spec(512, 1, 1, 0);
  const auto fwd_s = [&](double batch) {
    return trainsim::sim::kernel_time_s(
        gtx, trainsim::test::conv_instance({2048, 7, 7}, layer, "conv fwd", batch, Dtype::fp32));
  };
  CHECK(1e3 * fwd_s(8) == Approx(0.207).epsilon(0.1));
  CHECK(fwd_s(16) / fwd_s(8) == Approx(0.213 / 0.207).epsilon(0.1));
  // The data gradient likewise: 0.154 and 0.188 ms measured.
  const auto dgrad_s = [&](double batch) {
    return trainsim::sim::kernel_time_s(
        gtx, trainsim::test::conv_instance({2048, 7, 7}, layer, "conv dgrad", batch, Dtype::fp32));
  };
  CHECK(1e3 * dgrad_s(8) == Approx(0.154).epsilon(0.1));
  // Tensor-core convolutions narrow either side: in fp16 on the V100, batch 8 takes well under
  // batch 16's time.
  const auto& v100 = lib.accelerator("v100-sxm2-16gb", "test");
  const auto fp16_s = [&](double batch) {
    return trainsim::sim::kernel_body_s(
        v100, trainsim::test::conv_instance({2048, 7, 7}, layer, "conv fwd", batch, Dtype::fp16));
  };
  CHECK(fp16_s(8) < 0.75 * fp16_s(16));
}
