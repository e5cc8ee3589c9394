#pragma once
// The recurrent step GEMM of a cuDNN LSTM as the zoo builds it, for the kernel-model tests.
#include <cstdint>

#include <catch2/catch.hpp>

#include "models/zoo/net_builder.hpp"
#include "models/zoo/zoo_model.hpp"

namespace trainsim::test {

// The forward (or, with `backward`, data-gradient) step GEMM of a skip-input cuDNN LSTM of
// `hidden` units over 25 steps, instantiated for `batch` samples in `dtype`.
inline sim::Kernel lstm_step(std::int64_t hidden, double batch, sim::Dtype dtype, bool backward) {
  models::NetBuilder nb;
  const auto x = nb.input({25, hidden}, true);
  nb.begin("lstm", models::OpClass::recurrent, x.elements());
  nb.end(nb.lstm(x, hidden, models::LstmInput::skip));
  const auto layers = nb.take_layers();
  for (const auto& k : backward ? layers[0].bwd_kernels : layers[0].fwd_kernels) {
    if (k.cls == sim::KernelClass::recurrent) return models::instantiate(k, batch, dtype);
  }
  FAIL("no recurrent step kernel");
  return {};
}

}  // namespace trainsim::test
