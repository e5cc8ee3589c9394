#pragma once
// Writes a large synthetic PyTorch profiler (Kineto) trace straight to a file, step by step, for
// the bounded-memory import test and bench/bench_import: `steps` ProfilerSteps of `kernels`
// launches each (a cpu_op with shapes, its cudaLaunchKernel, the kernel, the ac2g flow pair),
// back to back on one stream, a sync at each step's end. The structure of
// scripts/make_kineto_trace.py, without its Python memory.

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

namespace trainsim::test {

struct LargeTrace {
  std::int64_t events = 0;
  std::int64_t bytes = 0;
};

inline LargeTrace write_large_kineto_trace(const std::string& path, int steps, int kernels) {
  std::ofstream out(path, std::ios::binary);
  LargeTrace t;
  out << R"({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],)"
      << "\n\"traceEvents\": [\n";
  double host = 0;
  double device = 0;
  std::int64_t corr = 1;
  bool first = true;
  char buf[1024];
  const auto emit = [&](const char* text) {
    if (!first) out << ",\n";
    first = false;
    out << text;
    ++t.events;
  };
  for (int s = 1; s <= steps; ++s) {
    const double step0 = host;
    host += 50;
    for (int k = 0; k < kernels; ++k) {
      const double op0 = host;
      host += 10;
      const double launch = host;
      host += 4;
      const double start = std::max(device + 2, host + 3);
      const double dur = k % 3 == 0 ? 40.0 : 8.0;
      device = start + dur;
      std::snprintf(
          buf, sizeof buf,
          R"({"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": %.3f, "dur": %.3f, "args": {"External id": %lld, "Input Dims": [[512, 1024], [1024, 1024], [1024]], "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"]}})",
          op0, host - op0, static_cast<long long>(corr));
      emit(buf);
      std::snprintf(
          buf, sizeof buf,
          R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": %.3f, "dur": 4, "args": {"External id": %lld, "cbid": 211, "correlation": %lld}})",
          launch, static_cast<long long>(corr), static_cast<long long>(corr));
      emit(buf);
      std::snprintf(
          buf, sizeof buf,
          R"({"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 7, "ts": %.3f, "dur": %.3f, "args": {"External id": %lld, "device": 0, "stream": 7, "correlation": %lld, "grid": [132, 1, 1], "block": [256, 1, 1]}})",
          k % 3 == 0 ? "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_kernel"
                     : "void at::native::vectorized_elementwise_kernel<4>",
          start, dur, static_cast<long long>(corr), static_cast<long long>(corr));
      emit(buf);
      std::snprintf(
          buf, sizeof buf,
          R"({"ph": "s", "id": %lld, "pid": 1, "tid": 1, "ts": %.3f, "cat": "ac2g", "name": "ac2g"})",
          static_cast<long long>(corr), launch);
      emit(buf);
      std::snprintf(
          buf, sizeof buf,
          R"({"ph": "f", "id": %lld, "pid": 0, "tid": 7, "ts": %.3f, "cat": "ac2g", "name": "ac2g", "bp": "e"})",
          static_cast<long long>(corr), start);
      emit(buf);
      ++corr;
    }
    const double wait = std::max(0.0, device - host) + 1;
    std::snprintf(
        buf, sizeof buf,
        R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 1, "tid": 1, "ts": %.3f, "dur": %.3f, "args": {"cbid": 131}})",
        host, wait);
    emit(buf);
    host += wait + 10;
    std::snprintf(
        buf, sizeof buf,
        R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d", "pid": 1, "tid": 1, "ts": %.3f, "dur": %.3f})",
        s, step0, host - step0);
    emit(buf);
  }
  out << "\n]}\n";
  out.flush();
  t.bytes = static_cast<std::int64_t>(out.tellp());
  return t;
}

}  // namespace trainsim::test
