// DeepBench's tensor-core build forces cuDNN's algorithms (code/nvidia/conv_bench.cu,
// USE_TENSOR_CORES): its fp16 weight gradients run CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, whose
// tensor-core kernels (cuDNN 7) split the N x P x Q reduction as the autotuned fp32 rows' do, on
// tiles of at least 128 filters.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/profiles_source.hpp"
#include "cli/validate_tables.hpp"
#include "models/zoo/net_builder.hpp"
#include "models/zoo/zoo_model.hpp"
#include "sim/hw/kernel_model.hpp"
#include "support/conv_kernels.hpp"

namespace {

using trainsim::sim::Dtype;

// The simulated ms of one row (label) of a kernel table (deepbench_conv unless named) or nothing.
std::optional<double> simulated_ms(const std::string& label,
                                   const std::string& table_name = "deepbench_conv") {
  const auto lib = trainsim::cli::load_profile_library({});
  for (const auto& table : trainsim::cli::reference_tables()) {
    if (table.name != table_name) continue;
    for (const auto& p : table.evaluate(lib)) {
      if (p.label == label) return p.predicted;
    }
  }
  return std::nullopt;
}

// DeepBench's speech first layer (C1 161x700, K32, 5x20 filter, stride 2), weight gradient, N 32,
// on the V100, in ms.
double weight_gradient_ms(Dtype dtype) {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto v100 = lib.accelerator("v100-sxm2-16gb", "test");
  trainsim::models::NetBuilder nb;
  const auto x = nb.input({1, 161, 700}, true);
  nb.begin("conv", trainsim::models::OpClass::conv, x.elements());
  nb.end(nb.conv2d(x, trainsim::test::speech_first_layer()));
  auto k = nb.take_layers()[0].bwd_kernels.at(1);
  return 1e3 * trainsim::sim::kernel_time_s(v100, trainsim::models::instantiate(k, 32, dtype));
}

}  // namespace

TEST_CASE("DeepBench's fp16 weight gradients split their reduction on 128-filter tiles") {
  const auto fp16 = simulated_ms("v100-sxm2-16gb fp16 conv C1 161x700 K32 5x20/2 N32 bwd_params");
  const auto fp32 = simulated_ms("v100-sxm2-16gb fp32 conv C1 161x700 K32 5x20/2 N32 bwd_params");
  REQUIRE(fp16);
  REQUIRE(fp32);
  CHECK(*fp16 == Approx(weight_gradient_ms(Dtype::fp16)).epsilon(1e-9));
  CHECK(*fp32 == Approx(weight_gradient_ms(Dtype::fp32)).epsilon(1e-9));
  // Measured (tests/reference_data/deepbench_train_conv.csv): 128 filters over a large map at
  // the forward's rate, 83 TFLOP/s, which one block per filter tile over the whole reduction
  // cannot reach (it priced this row 1.5x slow); 32 filters at a quarter of that rate, which
  // tiles as narrow as the filters had priced 1.8x fast.
  const auto wide = simulated_ms("v100-sxm2-16gb fp16 conv C128 40x175 K128 3x3/1 N16 bwd_params");
  const auto narrow = simulated_ms("v100-sxm2-16gb fp16 conv C32 79x341 K32 5x10/2 N16 bwd_params");
  REQUIRE(wide);
  REQUIRE(narrow);
  CHECK(*wide == Approx(0.396).epsilon(0.15));
  CHECK(*narrow == Approx(0.541).epsilon(0.15));
  // The tile floor is what prices the narrow one: 32 of its 128 rows are filters.
  const auto lib = trainsim::cli::load_profile_library({});
  const auto v100 = lib.accelerator("v100-sxm2-16gb", "test");
  REQUIRE(v100.kernels.conv_matrix_unit_min_tile_m == 128);
  auto free_tiles = v100;
  free_tiles.kernels.conv_matrix_unit_min_tile_m = 0;
  trainsim::models::Conv2d k32;
  k32.out_channels = 32;
  k32.kernel_h = 5;
  k32.kernel_w = 10;
  k32.stride_h = 2;
  k32.stride_w = 2;
  const auto wgrad =
      trainsim::test::conv_instance({32, 79, 341}, k32, "conv wgrad", 16, Dtype::fp16);
  CHECK(trainsim::sim::kernel_time_s(v100, wgrad) >
        1.5 * trainsim::sim::kernel_time_s(free_tiles, wgrad));
}

TEST_CASE("The H200's LSTM rows run cuDNN's kernels, not TensorFlow's BlockLSTM ones") {
  // torch.nn.LSTM calls cuDNN (scripts/measure_gpu.py, section_lstm). The zoo's LSTM also lists
  // TensorFlow's per-step BlockLSTM kernels (rnn_form tf_block_only) for the frameworks that run
  // them; summed in as well, they priced the weight gradient 2.6x too slow at h 4096.
  const auto lib = trainsim::cli::load_profile_library({});
  const auto h200 = lib.accelerator("h200", "test");
  trainsim::models::NetBuilder nb;
  const auto x = nb.input({25, 4096}, true);
  nb.begin("lstm", trainsim::models::OpClass::recurrent, x.elements());
  nb.end(nb.lstm(x, 4096, trainsim::models::LstmInput::linear));
  const auto layers = nb.take_layers();
  double cudnn_ms = 0, block_ms = 0;
  for (const auto& k : layers[0].bwd_kernels) {
    if (!std::string_view(k.what).starts_with("lstm weight grad")) continue;
    const double ms =
        1e3 * k.repeat *
        trainsim::sim::kernel_time_s(h200, trainsim::models::instantiate(k, 128, Dtype::fp32));
    (k.rnn_form == trainsim::models::RnnForm::tf_block_only ? block_ms : cudnn_ms) += ms;
  }
  REQUIRE(block_ms > 0);  // the zoo lists both forms
  const auto row = simulated_ms("h200 fp32 lstm h4096 N128 T25 bwd_weights", "h200_kernels");
  REQUIRE(row);
  CHECK(*row == Approx(cudnn_ms).epsilon(1e-9));
  // Measured 16.5 ms (tests/reference_data/h200_kernels_lstm.csv): one GEMM of 0.86 TFLOP at
  // about SGEMM's rate.
  CHECK(*row == Approx(16.5).epsilon(0.15));
}

TEST_CASE("The H200's small LSTM cells pay one cuDNN call setup per column") {
  // tests/reference_data/h200_kernels_lstm.csv, TF32, hidden 512, 25 steps: the weight-gradient
  // column (one cudnnRNNBackwardWeights_v8 call, a few kernels) took 0.507, 0.446 and 0.452 ms at
  // N 16, 32 and 64, whatever the batch: the host's setup of the call. Priced per launch alone,
  // it came out 0.046 ms.
  const std::vector<std::pair<const char*, double>> rows{
      {"h200 tf32 lstm h512 N16 T25 bwd_weights", 0.507},
      {"h200 tf32 lstm h512 N32 T25 bwd_weights", 0.446},
      {"h200 tf32 lstm h512 N64 T25 bwd_weights", 0.452}};
  for (const auto& [label, measured_ms] : rows) {
    const auto simulated = simulated_ms(label, "h200_kernels");
    REQUIRE(simulated);
    CHECK(*simulated == Approx(measured_ms).epsilon(0.25));
  }
  // The data-gradient column launches 2 kernels per step after its own setup. In bf16 at N 32
  // it took 3.92 ms over 150 steps (h 256) and 0.90 ms over 25 (h 512): 4.3x for 6x the steps,
  // as a fixed setup makes it. Per launch alone the ratio would be about 6.
  const auto long_cells = simulated_ms("h200 bf16 lstm h256 N32 T150 bwd_inputs", "h200_kernels");
  const auto short_cells = simulated_ms("h200 bf16 lstm h512 N32 T25 bwd_inputs", "h200_kernels");
  REQUIRE(long_cells);
  REQUIRE(short_cells);
  CHECK(*long_cells / *short_cells > 3.0);
  CHECK(*long_cells / *short_cells < 5.0);
  CHECK(*short_cells == Approx(0.90).epsilon(0.2));
  // 26% fast at 150 steps: these backward launches take the host longer than the forward's
  // (fitted apart, 9.3 against 6.7 us on this host), and one library_launch serves both.
  CHECK(*long_cells == Approx(3.92).epsilon(0.3));
}

// DeepBench's fp32 sheets record the forward algorithm cuDNN ran for each layer (fwd_algo:
// WINOGRAD, WINOGRAD_NONFUSED, IMPLICIT_(PRECOMP_)GEMM, FFT). The model picks the faster of its
// implicit GEMM and Winograd's batched GEMMs (sim/hw/kernel_model.cpp); over the layers where it
// has both (square 3x3 and 5x5 filters at stride 1) its pick is cuDNN's in 248 of the 266 rows
// that did not run FFT, which it does not price (the P100's, GTX 1080 Ti's, TITAN Xp's, TITAN X
// Pascal's, M40's and GTX TITAN X's C128 56x56 K256 3x3 and the V100's and T4's C192 28x28 K32
// 5x5). A change of the Winograd terms that turns the model's picks away from cuDNN's fails here.
TEST_CASE("the model's forward algorithm is the one DeepBench recorded cuDNN running") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto table = trainsim::cli::embedded_table("deepbench_train_conv.csv");
  int rows = 0, agree = 0, winograd_agree = 0;
  for (const auto& csv_row : table.rows) {
    const trainsim::cli::TableRow r(table, csv_row);
    if (r.at("precision_sheet") != "Float") continue;
    const std::string algo = r.at("fwd_algo");
    if (algo.find("FFT") != std::string::npos) continue;
    const auto board = trainsim::cli::deepbench_profile(r.at("gpu"));
    REQUIRE(board);
    const auto layer = trainsim::cli::deepbench_conv_layer(r);
    REQUIRE(layer);
    const auto& spec = layer->spec;
    if (spec.kernel_h != spec.kernel_w || spec.stride_h != 1 || spec.stride_w != 1 ||
        (spec.kernel_h != 3 && spec.kernel_h != 5)) {
      continue;
    }
    auto k =
        trainsim::test::conv_instance(layer->input, spec, "conv fwd", layer->batch, Dtype::fp32);
    k.channels_first = true;
    REQUIRE(k.winograd_filter == spec.kernel_h);
    const auto& acc = lib.accelerator(*board, "test");
    auto gemm_only = k;
    gemm_only.winograd_filter = 0;
    const bool model_winograd =
        trainsim::sim::kernel_time_s(acc, k) < 0.999 * trainsim::sim::kernel_time_s(acc, gemm_only);
    const bool cudnn_winograd = algo.find("WINOGRAD") != std::string::npos;
    ++rows;
    if (model_winograd == cudnn_winograd) ++agree;
    if (model_winograd && cudnn_winograd) ++winograd_agree;
  }
  CHECK(rows == 266);
  // 248 agree today (93.2%): within 2 points of that.
  CHECK(agree >= 243);
  // Of them, 198 ran Winograd on both counts.
  CHECK(winograd_agree >= 193);
}
