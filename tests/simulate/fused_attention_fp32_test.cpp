// A fused attention kernel on fp32 data computes in fp32 whatever the TF32 switches say:
// FlashAttention and cuDNN's fused attention take 16-bit inputs only, and PyTorch's SDPA falls
// back to memory-efficient CUTLASS kernels whose fp32 build ignores allow_tf32 (this project's
// H200 profile of BERT-large in TF32: fmha_cutlassF_f32 / fmha_cutlassB_f32,
// tests/reference_data/h200_profile_kernels.csv). The GEMMs around it take TF32.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "models/kernel_plan.hpp"
#include "models/zoo/net_builder.hpp"
#include "support/step_scenarios.hpp"

using trainsim::models::Launch;
using trainsim::models::Pass;

namespace {

// BERT-large's attention over 128 tokens: Q, K and V projections and 16 heads.
trainsim::models::Layer attention_layer() {
  trainsim::models::NetBuilder nb;
  const auto x = nb.input({128, 1024}, true);
  nb.begin("attention", trainsim::models::OpClass::attention, x.elements());
  const auto q = nb.linear(x, 1024, true);
  const auto k = nb.linear(x, 1024, true);
  const auto v = nb.linear(x, 1024, true);
  nb.end(nb.attention(q, k, v, 16, false, {}));
  return nb.take_layers().at(0);
}

double device_s(const std::string& precision, std::string_view what) {
  const auto s = trainsim::test::scenario(
      {"cluster=dgx-h100", "precision=" + precision, "fused_attention=true"});
  std::vector<Launch> out;
  trainsim::models::layer_launches(s, attention_layer(), Pass::forward, 16, out);
  for (const Launch& l : out) {
    if (what == l.what) return l.device_s;
  }
  FAIL("no launch " << what);
  return 0;
}

}  // namespace

TEST_CASE("fused attention in a TF32 step computes in fp32; its projections in TF32") {
  CHECK(device_s("tf32", "flash attention fwd") == device_s("fp32", "flash attention fwd"));
  CHECK(device_s("tf32", "flash attention fwd") > 2 * device_s("bf16", "flash attention fwd"));
  const char* projection = attention_layer().fwd_kernels.at(0).what;
  CHECK(device_s("tf32", projection) < device_s("fp32", projection));
}
