// A board's measured streaming bandwidth (accelerator `streaming_bandwidth`) stands in for its
// architecture's copy fraction: memory-bound kernels run from it, each class keeping its share
// of a copy's rate, and compute-bound kernels do not move.
#include <catch2/catch.hpp>

#include "cli/profiles_source.hpp"
#include "sim/hw/kernel_model.hpp"
#include "support/gemm_kernels.hpp"

namespace {

using trainsim::sim::Dtype;
using trainsim::sim::KernelClass;

trainsim::sim::Kernel memory_bound(KernelClass cls, double bytes) {
  trainsim::sim::Kernel k;
  k.cls = cls;
  k.dtype = Dtype::fp32;
  k.bytes = bytes;
  return k;
}

trainsim::sim::Kernel gemm(double side) {
  return trainsim::test::gemm_kernel(side, side, side, Dtype::fp32);
}

}  // namespace

TEST_CASE("memory-bound kernels run from a board's measured streaming bandwidth") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto p40 = lib.accelerator("p40", "test");
  // The shipped P40 gives the bandwidthTest figure Microway measured.
  REQUIRE(p40.streaming_bw_bytes_per_s);
  CHECK(*p40.streaming_bw_bytes_per_s == Approx(240.4e9));
  auto datasheet = p40;
  datasheet.streaming_bw_bytes_per_s.reset();
  const double bytes = 1e9;
  const auto body_s = [&](const trainsim::sim::AcceleratorSpec& a, KernelClass cls) {
    return trainsim::sim::kernel_body_s(a, memory_bound(cls, bytes));
  };
  // A copy streams at the measured rate.
  CHECK(body_s(p40, KernelClass::copy) == Approx(bytes / 240.4e9));
  // Without it, at the Pascal kernels profile's copy fraction of the datasheet's 346 GB/s.
  const double copy_fraction = p40.kernels.memory[static_cast<std::size_t>(KernelClass::copy)];
  CHECK(body_s(datasheet, KernelClass::copy) == Approx(bytes / (copy_fraction * 346e9)));
  // Every memory-bound class slows by the same factor: its share of a copy's rate is kept.
  const double factor = copy_fraction * 346e9 / 240.4e9;
  for (KernelClass cls : {KernelClass::elementwise, KernelClass::normalization,
                          KernelClass::reduction, KernelClass::optimizer}) {
    CHECK(body_s(p40, cls) == Approx(factor * body_s(datasheet, cls)));
  }
  // A large GEMM is compute-bound either way.
  CHECK(trainsim::sim::kernel_body_s(p40, gemm(8192)) ==
        Approx(trainsim::sim::kernel_body_s(datasheet, gemm(8192))));
}
