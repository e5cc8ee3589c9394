// A launched memory-bound kernel runs at least its class's floor past the device gap
// (KernelEfficiency::memory_floor_s): the dependent chain of a layer norm, a softmax or a sum
// that no bandwidth shortens; a row-wise one (a layer norm, a softmax) at least one row's walk on
// top, and a TensorIterator reduction its blocks' share of a row. A pointwise op folded into its
// producer adds its body alone.
#include <catch2/catch.hpp>

#include <algorithm>

#include "cli/profiles_source.hpp"
#include "models/zoo/net_builder.hpp"
#include "sim/hw/kernel_model.hpp"

using trainsim::sim::KernelClass;

namespace {

trainsim::sim::Kernel memory_kernel(KernelClass cls, double bytes) {
  trainsim::sim::Kernel k;
  k.cls = cls;
  k.dtype = trainsim::sim::Dtype::bf16;
  k.bytes = bytes;
  return k;
}

}  // namespace

TEST_CASE("a small memory-bound kernel takes its class's floor on top of the device gap") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto h200 = lib.accelerator("h200", "test");
  const double gap_s = h200.kernel_launch_overhead_s;
  for (const KernelClass cls :
       {KernelClass::copy, KernelClass::elementwise, KernelClass::normalization,
        KernelClass::softmax, KernelClass::reduction}) {
    const double floor_s = h200.kernels.memory_floor_s[static_cast<std::size_t>(cls)];
    REQUIRE(floor_s > 0);
    // 4 KiB: far under the floor at any bandwidth.
    const auto tiny = memory_kernel(cls, 4096);
    CHECK(trainsim::sim::kernel_body_s(h200, tiny) < floor_s);
    CHECK(trainsim::sim::kernel_time_s(h200, tiny) == Approx(gap_s + floor_s).epsilon(1e-12));
    // 1 GiB: bandwidth-bound, the floor long past.
    const auto large = memory_kernel(cls, 1 << 30);
    CHECK(trainsim::sim::kernel_time_s(h200, large) ==
          Approx(gap_s + trainsim::sim::kernel_body_s(h200, large)).epsilon(1e-12));
  }
  // A layer norm of 16 rows of 1024 bf16 values (h200_kernels_memory.csv: 3.36 us measured):
  // the gap, the floor and one row's walk, within 15%.
  auto ln = memory_kernel(KernelClass::normalization, 2 * 2 * 16384);
  ln.row_elements = 1024;
  CHECK(1e6 * trainsim::sim::kernel_time_s(h200, ln) == Approx(3.36).epsilon(0.15));
}

TEST_CASE("a row-wise kernel lasts at least one row's walk, however few its rows") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto h200 = lib.accelerator("h200", "test");
  const double gap_s = h200.kernel_launch_overhead_s;
  // Measured (h200_kernels_memory.csv, bf16, 4 to 256 rows): layer norms of 4096-wide rows
  // 6.5-7.0 us, 1024-wide 3.4-3.5 us; softmaxes of 1024-wide rows 4.8-4.9 us, 128-wide 2.3-2.4.
  const struct {
    KernelClass cls;
    double row_elements, measured_us;
  } rows[] = {{KernelClass::normalization, 4096, 6.6},
              {KernelClass::normalization, 1024, 3.45},
              {KernelClass::softmax, 1024, 4.85},
              {KernelClass::softmax, 128, 2.35}};
  for (const auto& r : rows) {
    const double floor_s = h200.kernels.memory_floor_s[static_cast<std::size_t>(r.cls)];
    const double per_element_s =
        h200.kernels.row_element_latency_s[static_cast<std::size_t>(r.cls)];
    REQUIRE(per_element_s > 0);
    // 16 rows: one row's walk bounds it, not the bytes.
    auto k = memory_kernel(r.cls, 2 * 2 * 16 * r.row_elements);
    k.row_elements = r.row_elements;
    const double t_s = trainsim::sim::kernel_time_s(h200, k);
    CHECK(t_s == Approx(gap_s + floor_s + r.row_elements * per_element_s).epsilon(1e-12));
    CHECK(1e6 * t_s == Approx(r.measured_us).epsilon(0.15));
    // 2^28 elements: the bytes bound it, whatever the rows.
    auto large = memory_kernel(r.cls, 2 * 2 * 268435456.0);
    large.row_elements = r.row_elements;
    CHECK(trainsim::sim::kernel_time_s(h200, large) ==
          Approx(gap_s + trainsim::sim::kernel_body_s(h200, large)).epsilon(1e-12));
  }
  // Classes that are not row-wise take no row latency, and profiles without one price none.
  auto add = memory_kernel(KernelClass::elementwise, 4096);
  const double add_s = trainsim::sim::kernel_time_s(h200, add);
  add.row_elements = 4096;
  CHECK(trainsim::sim::kernel_time_s(h200, add) == add_s);
  const auto v100 = lib.accelerator("v100-sxm2-16gb", "test");
  auto ln = memory_kernel(KernelClass::normalization, 4096);
  const double ln_s = trainsim::sim::kernel_time_s(v100, ln);
  ln.row_elements = 4096;
  CHECK(trainsim::sim::kernel_time_s(v100, ln) == ln_s);
}

TEST_CASE("a softmax row wider than a warp takes is shared by the warps of one block") {
  using trainsim::sim::row_walk_elements;
  trainsim::sim::Kernel k = memory_kernel(KernelClass::softmax, 0);
  k.row_elements = 1024;  // one warp's (SoftMax.cu: dispatch_softmax_forward)
  CHECK(row_walk_elements(k) == 1024);
  // 2048 bf16 elements: 256 threads of 8 elements, 8 warps of 256 each.
  k.row_elements = 2048;
  CHECK(row_walk_elements(k) == 256);
  k.dtype = trainsim::sim::Dtype::fp32;  // 4 elements per thread: 16 warps of 128
  CHECK(row_walk_elements(k) == 128);
  // A vocabulary-wide row (GPT-2's 50,257 logits): 1024 threads, 32 warps.
  k.row_elements = 50257;
  CHECK(row_walk_elements(k) == Approx(50257.0 / 32));
  // A layer norm's block walks its whole row, however wide.
  trainsim::sim::Kernel ln = memory_kernel(KernelClass::normalization, 0);
  ln.row_elements = 12288;
  CHECK(row_walk_elements(ln) == 12288);
}

TEST_CASE("the zoo's row-wise kernels carry their rows") {
  trainsim::models::NetBuilder nb;
  const auto x = nb.input({128, 768}, true);
  nb.begin("ln", trainsim::models::OpClass::normalization, x.elements());
  nb.end(nb.layer_norm(x));
  const auto ln = nb.take_layers().at(0);
  CHECK(ln.fwd_kernels.at(0).row_elements == 768);
  for (const auto& k : ln.bwd_kernels) {
    // The input gradient walks rows; the gamma/beta gradient reduces columns.
    CHECK(k.row_elements == (k.cls == KernelClass::normalization ? 768 : 0));
  }
}

TEST_CASE("architectures whose profile gives no floor price the body alone") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto v100 = lib.accelerator("v100-sxm2-16gb", "test");
  const auto k = memory_kernel(KernelClass::normalization, 4096);
  CHECK(
      trainsim::sim::kernel_time_s(v100, k) ==
      Approx(v100.kernel_launch_overhead_s + trainsim::sim::kernel_body_s(v100, k)).epsilon(1e-12));
}

TEST_CASE("a sum walks one block's share of its row, and TensorIterator splits long rows") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto h200 = lib.accelerator("h200", "test");
  using trainsim::sim::tensor_iterator_reduce;
  const auto sum = [](double elements, double outputs = 1) {
    trainsim::sim::Kernel k;
    k.cls = KernelClass::reduction;
    k.dtype = trainsim::sim::Dtype::fp32;
    k.bytes = 4 * elements;
    k.reduce_outputs = outputs;
    k.row_elements = elements / outputs;
    return k;
  };
  // One output: one block of 512 threads walks the row until each thread would sum 256 values
  // (Reduce.cuh, setReduceConfig)...
  for (const double n : {1024.0, 16384.0, 65536.0}) {
    const auto r = tensor_iterator_reduce(h200, sum(n));
    CHECK(r.walk_elements == n);
    CHECK_FALSE(r.global_reduce);
  }
  // ...then over max(min(4 x 132 resident blocks, values / 16), values / 256) blocks.
  auto r = tensor_iterator_reduce(h200, sum(1 << 18));  // 512 values a thread: 32 blocks
  CHECK(r.walk_elements == (1 << 18) / 32);
  CHECK(r.global_reduce);
  r = tensor_iterator_reduce(h200, sum(1 << 22));  // 8192 values a thread: 512 blocks
  CHECK(r.walk_elements == (1 << 22) / 512);
  // Many outputs fill the device with blocks of their own: no split.
  r = tensor_iterator_reduce(h200, sum(1 << 22, 4096));
  CHECK_FALSE(r.global_reduce);
  // Kernels that do not name their outputs are no TensorIterator reduction.
  trainsim::sim::Kernel plain = sum(1 << 16);
  plain.reduce_outputs = 0;
  CHECK(tensor_iterator_reduce(h200, plain).walk_elements == 0);
  // Measured on the H200 (h200_kernels_memory.csv, fp32): 7.76 us at 2^16 elements (one block
  // walking 256 KiB) and 6.72 us at 2^18 (32 blocks, a memset and a last-block pass), so the
  // longer sum takes less time; within 25% of each.
  const double one_block_s = trainsim::sim::kernel_time_s(h200, sum(1 << 16));
  const double split_s = trainsim::sim::kernel_time_s(h200, sum(1 << 18));
  CHECK(split_s < one_block_s);
  CHECK(1e6 * one_block_s == Approx(7.76).epsilon(0.25));
  CHECK(1e6 * split_s == Approx(6.72).epsilon(0.25));
}
