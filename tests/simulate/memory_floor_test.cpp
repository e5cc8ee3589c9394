// A launched memory-bound kernel runs at least its class's floor past the device gap
// (KernelEfficiency::memory_floor_s): the dependent chain of a layer norm, a softmax or a sum
// that no bandwidth shortens. A pointwise op folded into its producer adds its body alone.
#include <catch2/catch.hpp>

#include <algorithm>

#include "cli/profiles_source.hpp"
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
  // the gap and the floor, within 15%.
  const auto ln = memory_kernel(KernelClass::normalization, 2 * 2 * 16384);
  CHECK(1e6 * trainsim::sim::kernel_time_s(h200, ln) == Approx(3.36).epsilon(0.15));
}

TEST_CASE("architectures whose profile gives no floor price the body alone") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto v100 = lib.accelerator("v100-sxm2-16gb", "test");
  const auto k = memory_kernel(KernelClass::normalization, 4096);
  CHECK(
      trainsim::sim::kernel_time_s(v100, k) ==
      Approx(v100.kernel_launch_overhead_s + trainsim::sim::kernel_body_s(v100, k)).epsilon(1e-12));
}
