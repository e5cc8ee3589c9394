// GPT-2's activation as Hugging Face transformers computes it (gelu_new, NewGELUActivation):
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 pow(x, 3)))) as eight eager ops, each its own kernel;
// the H200's GPT-2 bf16 profile runs them (tests/reference_data/h200_profile_kernels.csv: pow,
// tanh and their neighbours as fp32 kernels). Megatron-LM's GPT-2 fuses it into one kernel.
#include <catch2/catch.hpp>

#include <string>

#include "models/zoo/zoo.hpp"
#include "sim/core/input_error.hpp"
#include "support/zoo_models.hpp"

using trainsim::test::build;
using trainsim::test::layer_named;

namespace {

int kernels_named(const std::vector<trainsim::models::KernelSpec>& ks, const std::string& prefix) {
  int n = 0;
  for (const auto& k : ks)
    n += std::string(k.what).rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("GPT-2's MLP runs Hugging Face's gelu_new as eight forward and eleven backward kernels") {
  const auto hf = build("gpt2");
  CHECK(hf.hyperparameters.at("gelu_kernels") == 8);
  const auto& mlp = layer_named(hf, "h.0.mlp");
  CHECK(kernels_named(mlp.fwd_kernels, "gelu_new") == 8);
  CHECK(kernels_named(mlp.bwd_kernels, "gelu_new") == 11);
  CHECK(kernels_named(mlp.fwd_kernels, "activation") == 0);

  const auto fused = build("gpt2", {{"gelu_kernels", 1}});
  const auto& one = layer_named(fused, "h.0.mlp");
  CHECK(kernels_named(one.fwd_kernels, "gelu_new") == 0);
  CHECK(kernels_named(one.fwd_kernels, "activation fwd") == 1);
  // The same arithmetic either way; the eager ops keep three more tensors for backward.
  CHECK(hf.fwd_flops() == fused.fwd_flops());
  CHECK(mlp.saved_elements > one.saved_elements);
  // GPT-3 keeps Megatron-LM's fused kernel.
  CHECK(kernels_named(layer_named(build("gpt3_175b"), "h.0.mlp").fwd_kernels, "gelu_new") == 0);
}

TEST_CASE("gelu_kernels other than 1 or 8 is refused") {
  CHECK_THROWS_AS(build("gpt2", {{"gelu_kernels", 3}}), trainsim::InputError);
}
