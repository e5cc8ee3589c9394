// A memory-bound kernel whose per-element arithmetic is heavy (GELU's erf, dropout's Philox
// draw, a softmax or layer-norm row) takes at least the time the device's FP32 lanes need to
// issue it (sim::element_issue_s): PyTorch computes 16-bit ops in fp32, so halving the bytes does
// not halve the instructions. The counts are the framework's (FrameworkSpec::
// element_instructions), the lane rate the device's.
#include <catch2/catch.hpp>

#include <string_view>

#include "cli/profiles_source.hpp"
#include "models/zoo/net_builder.hpp"
#include "models/zoo/zoo_model.hpp"
#include "sim/hw/kernel_model.hpp"

using trainsim::models::Activation;
using trainsim::models::KernelSpec;
using trainsim::models::NetBuilder;
using trainsim::models::OpClass;
using trainsim::sim::Dtype;
using trainsim::sim::ElementMath;
using trainsim::sim::KernelClass;

namespace {

constexpr double kElements = 268435456;  // 2^28, h200_kernels_memory.csv's largest rows

// One pointwise kernel over kElements elements of `dtype`: one read, one write.
trainsim::sim::Kernel pointwise(Dtype dtype, double instructions_per_element) {
  trainsim::sim::Kernel k;
  k.cls = KernelClass::elementwise;
  k.dtype = dtype;
  k.bytes = 2 * kElements * trainsim::sim::dtype_bytes(dtype);
  k.issue_instructions = kElements * instructions_per_element;
  return k;
}

// The kernel named `what` among `kernels`.
const KernelSpec& named(const std::vector<KernelSpec>& kernels, std::string_view what) {
  for (const KernelSpec& k : kernels)
    if (what == k.what) return k;
  FAIL("no kernel " << what);
  return kernels.front();
}

}  // namespace

TEST_CASE("a 16-bit GELU issues as long as its fp32 one streams; a ReLU halves with its bytes") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto h200 = lib.accelerator("h200", "test");
  const auto eager = lib.framework("pytorch_eager", "test");
  const double erf = eager.element_instructions[static_cast<std::size_t>(ElementMath::erf)];
  REQUIRE(erf > 0);
  const auto body_s = [&](Dtype dtype, double instructions) {
    return trainsim::sim::kernel_body_s(h200, pointwise(dtype, instructions));
  };
  // bf16 GELU over 2^28 elements: 0.345 ms measured, within 10%; bound by issue, not DRAM.
  CHECK(1e3 * body_s(Dtype::bf16, erf) == Approx(0.345).epsilon(0.1));
  CHECK(body_s(Dtype::bf16, erf) > 1.3 * body_s(Dtype::bf16, 0));
  // fp32 GELU streams at DRAM's rate (0.510 ms measured, as its ReLU): its arithmetic hides.
  CHECK(body_s(Dtype::fp32, erf) == Approx(body_s(Dtype::fp32, 0)).epsilon(1e-12));
  // So the dtype buys GELU 1.5x (1.48x measured), ReLU 2x (1.99x measured).
  CHECK(body_s(Dtype::fp32, erf) / body_s(Dtype::bf16, erf) == Approx(1.48).epsilon(0.1));
  CHECK(body_s(Dtype::fp32, 0) / body_s(Dtype::bf16, 0) == Approx(2).epsilon(1e-9));
  // The lane rate is the device's: an A100 (19.5 TFLOP/s fp32 against 1.6 TB/s) issues its
  // fp16 GELU for longer than it streams it, by more than the H200 (67 TFLOP/s, 4.8 TB/s).
  const auto a100 = lib.accelerator("a100-sxm4-40gb", "test");
  const auto bound = [&](const trainsim::sim::AcceleratorSpec& a, Dtype dtype) {
    return trainsim::sim::element_issue_s(a, pointwise(dtype, erf)) /
           trainsim::sim::kernel_body_s(a, pointwise(dtype, 0));
  };
  CHECK(bound(a100, Dtype::fp16) > bound(h200, Dtype::bf16));
  CHECK(bound(h200, Dtype::bf16) > 1);
  CHECK(bound(a100, Dtype::fp32) < 1);
}

TEST_CASE("the zoo names the arithmetic of GELU, dropout, softmax and layer norm, forward") {
  NetBuilder nb;
  const auto x = nb.input({128, 1024}, true);
  const double n = 128.0 * 1024;
  nb.begin("block", OpClass::elementwise, n);
  auto y = nb.layer_norm(x);
  y = nb.activation(y, Activation::gelu);
  y = nb.activation(y, Activation::relu);
  y = nb.dropout(y);
  nb.end(y);
  nb.begin("head", OpClass::elementwise, n);
  nb.loss(y);
  nb.end(y);
  const auto layers = nb.take_layers();
  const auto& block = layers.at(0);
  const auto& head = layers.at(1);
  const auto check = [&](const KernelSpec& k, ElementMath math) {
    INFO(k.what);
    CHECK(k.element_math == math);
    CHECK(k.math_elements == (math == ElementMath::none ? 0 : n));
  };
  check(named(block.fwd_kernels, "layernorm fwd"), ElementMath::layer_norm);
  check(named(block.bwd_kernels, "layernorm bwd"), ElementMath::none);
  // GELU's gradient evaluates erf (and exp) again; ReLU's nothing.
  int erf_kernels = 0;
  for (const auto* kernels : {&block.fwd_kernels, &block.bwd_kernels}) {
    for (const KernelSpec& k : *kernels)
      erf_kernels += k.element_math == ElementMath::erf;
  }
  CHECK(erf_kernels == 2);
  check(named(block.fwd_kernels, "dropout fwd"), ElementMath::philox);
  check(named(block.bwd_kernels, "dropout bwd"), ElementMath::none);
  check(named(head.fwd_kernels, "log_softmax fwd"), ElementMath::softmax);
  check(named(head.bwd_kernels, "log_softmax bwd"), ElementMath::none);
}

TEST_CASE("the counts are the framework's kernels': frameworks that fuse their own give none") {
  const auto lib = trainsim::cli::load_profile_library({});
  KernelSpec gelu;
  gelu.element_math = ElementMath::erf;
  gelu.math_elements = 1000;
  const auto eager = lib.framework("pytorch_eager", "test");
  CHECK(trainsim::models::issue_instructions(gelu, 8, eager) ==
        Approx(8000 * eager.element_instructions[static_cast<std::size_t>(ElementMath::erf)]));
  // Apex O1 patches the same ATen kernels; Megatron-LM's fused kernels and XLA's are their own
  // code, whose counts no table here measures.
  const auto apex = lib.framework("pytorch_apex_amp", "test");
  CHECK(apex.element_instructions == eager.element_instructions);
  for (const char* name : {"megatron_lm", "tensorflow_xla", "jax", "mxnet"})
    CHECK(trainsim::models::issue_instructions(gelu, 8, lib.framework(name, "test")) == 0);
  KernelSpec relu;
  CHECK(trainsim::models::issue_instructions(relu, 8, eager) == 0);
}
