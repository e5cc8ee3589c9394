// Under a causal mask the fused attention kernels (FlashAttention-2, PyTorch's memory-efficient
// kernels) skip the key blocks wholly above the diagonal: of n x n blocks of 128 rows, n (n + 1)
// / 2 run (Dao, arXiv:2307.08691, section 3.1.1). Unfused attention computes the whole score
// matrix and masks it. Decoders' self-attention is causal; encoders' and cross-attention are not.
#include <catch2/catch.hpp>

#include <string>

#include "support/zoo_models.hpp"

using trainsim::models::AttentionForm;
using trainsim::models::Layer;

namespace {

// The fused kernels' FLOPs over the unfused score GEMMs' (two forward, five backward).
double fused_share(const Layer& l) {
  const double unfused = trainsim::test::kernel_named(l, "attention QK^T").flops;
  return trainsim::test::kernel_named(l, "flash attention fwd").flops / (2 * unfused);
}

}  // namespace

TEST_CASE("fused causal attention skips the blocks above the diagonal") {
  // GPT-2: 1024 positions, 8 blocks of 128: 36 of 64 run.
  const auto gpt2 = trainsim::test::build("gpt2");
  const Layer& attn = trainsim::test::layer_named(gpt2, "h.0.attn");
  CHECK(fused_share(attn) == Approx(36.0 / 64.0));
  const double one = trainsim::test::kernel_named(attn, "attention QK^T").flops;
  CHECK(trainsim::test::kernel_named(attn, "flash attention bwd").flops ==
        Approx(5 * one * 36.0 / 64.0));
  // Its reduction shortens with it; the unfused GEMMs keep the whole score matrix.
  CHECK(trainsim::test::kernel_named(attn, "flash attention fwd").gemm.k ==
        Approx(1024 * 36.0 / 64.0));
  CHECK(trainsim::test::kernel_named(attn, "attention QK^T").gemm.n == Approx(1024));
  CHECK(trainsim::test::kernel_named(attn, "attention QK^T").form == AttentionForm::unfused_only);
  // A longer sequence skips more: Llama 2's 4096 positions, 32 blocks.
  const auto llama = trainsim::test::build("llama2_7b");
  CHECK(fused_share(trainsim::test::layer_named(llama, "layers.0.self_attn")) ==
        Approx(33.0 / 64.0));
}

TEST_CASE("encoders and cross-attention attend to every position") {
  const auto bert = trainsim::test::build("bert_base");
  CHECK(fused_share(trainsim::test::layer_named(bert, "layer.0.attention")) == Approx(1.0));
  // T5's decoder self-attention is causal: 512 target positions, 4 blocks, 10 of 16 run; its
  // 114 default ones are one block, masked within.
  const auto t5 = trainsim::test::build("t5_small", {{"tgt_len", 512}});
  CHECK(fused_share(trainsim::test::layer_named(t5, "encoder.0.self_attn")) == Approx(1.0));
  CHECK(fused_share(trainsim::test::layer_named(t5, "decoder.0.cross_attn")) == Approx(1.0));
  CHECK(fused_share(trainsim::test::layer_named(t5, "decoder.0.self_attn")) == Approx(10.0 / 16.0));
  CHECK(fused_share(trainsim::test::layer_named(trainsim::test::build("t5_small"),
                                                "decoder.0.self_attn")) == Approx(1.0));
}
