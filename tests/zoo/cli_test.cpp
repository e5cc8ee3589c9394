// `trainsim models list|show` as a user runs it.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

// GCC 12 at -O2 reports a false -Wrestrict in std::string concatenation inlined from run_cli
// (GCC bug 105329); silence it for this header only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
#include "support/run_cli.hpp"
#pragma GCC diagnostic pop

using trainsim::test::run_cli;

TEST_CASE("models list prints every model with its defaults") {
  const auto r = run_cli({"models", "list"});
  REQUIRE(r.exit_code == 0);
  for (const char* name : {"resnet20",
                           "resnet101",
                           "inception_v3",
                           "efficientnet_b4_g16",
                           "amoebanet_d",
                           "unet",
                           "transformer48",
                           "bert_large",
                           "gpt2_xl",
                           "lstm_ptb",
                           "mnist_mlp",
                           "resnet56",
                           "vgg16_cifar",
                           "ssd300",
                           "gnmt",
                           "ncf",
                           "tacotron2",
                           "waveglow",
                           "transformerxl_large",
                           "t5_base",
                           "gpt3_175b",
                           "llama2_70b",
                           "llama3_8b"}) {
    CHECK(r.out.find(name) != std::string::npos);
  }
  CHECK(r.out.find("defaults: F=256 N=18") != std::string::npos);
}

TEST_CASE("models show prints the per-layer table and totals") {
  const auto r = run_cli({"models", "show", "resnet50"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("layer1.0.conv2") != std::string::npos);
  CHECK(r.out.find("parameters:                25557032 (25.56 M)") != std::string::npos);
  CHECK(r.out.find("training GFLOPs/sample") != std::string::npos);
  CHECK(r.out.find("activation MB/sample fp16") != std::string::npos);
}

TEST_CASE("models show works for the LLMs with overridden hyper-parameters") {
  const auto r = run_cli({"models", "show", "llama3_70b", "--set", "seq_len=4096"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("layers.79.self_attn") != std::string::npos);
  CHECK(r.out.find("seq_len=4096") != std::string::npos);
  CHECK(r.out.find("layers:                    162") != std::string::npos);
}

TEST_CASE("models show --format json is one object with documented keys") {
  const auto r = run_cli({"models", "show", "amoebanet_d", "--set", "F=208", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("name") == "amoebanet_d");
  CHECK(j.at("hyperparameters").at("F") == 208);
  CHECK(j.at("input").at("dtype") == "uint8");
  CHECK(j.at("layers").size() == 24);
  CHECK(j.at("layers").at(0).at("op") == "conv");
  const auto& t = j.at("totals");
  CHECK(t.at("params").get<double>() == Approx(81.5e6).epsilon(0.003));
  CHECK(t.at("train_gflops").get<double>() ==
        Approx(t.at("fwd_gflops").get<double>() + t.at("bwd_gflops").get<double>()));
  CHECK(t.at("activation_mb_fp16").get<double>() < t.at("activation_mb_fp32").get<double>());
}

TEST_CASE("bad --set values and names exit 2 with a message naming them") {
  auto r = run_cli({"models", "show", "gpt2", "--set", "n_layers=4"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("n_layers") != std::string::npos);
  CHECK(r.err.find("did you mean 'n_layer'") != std::string::npos);
  r = run_cli({"models", "show", "gpt2", "--set", "seq_len=long"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set seq_len") != std::string::npos);
  r = run_cli({"models", "show", "gpt2", "--set", "seq_len=-4"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("seq_len=-4") != std::string::npos);
  r = run_cli({"models", "show", "bert"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown model 'bert'") != std::string::npos);
  r = run_cli({"models", "frobnicate"});
  CHECK(r.exit_code == 2);
  r = run_cli({"models", "show", "gpt2", "--format", "xml"});
  CHECK(r.exit_code == 2);
}
