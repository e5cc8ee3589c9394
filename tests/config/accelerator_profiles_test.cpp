// The built-in accelerator and host profiles: every one loads, the figures of the profiles added
// for the public benchmark suites equal their datasheets, and the README's profile counts match
// the library.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "cli/profiles_source.hpp"
#include "sim/hw/dtype.hpp"
#include "support/profile_library.hpp"

using trainsim::sim::Dtype;
using trainsim::test::library;

namespace {

// Dense peaks in TFLOP/s (TOP/s for int8); 0 = the profile must have no peak for that dtype.
struct AcceleratorRow {
  const char* name;
  double fp32, tf32, fp16, bf16, int8, fp8;
  double memory_bw_gb_per_s;  // decimal GB/s
  double memory_gb;           // decimal GB
  int compute_units;
};

// Figures from the datasheets named in each profile. Tensor rates that a datasheet gives only
// with structured sparsity are halved; per-die/per-GCD figures are half the package's.
constexpr AcceleratorRow kDatasheets[] = {
    // NVIDIA A10 Tensor Core GPU datasheet (2021)
    {"a10", 31.2, 62.5, 125, 125, 250, 0, 600, 24, 72},
    // NVIDIA A40 datasheet (2020)
    {"a40", 37.4, 74.8, 149.7, 149.7, 299.3, 0, 696, 48, 84},
    // NVIDIA RTX A6000 datasheet (2020): 38.7 FP32, 309.7 tensor with sparsity; TF32 and INT8
    // from the GA102 ratios (A40 datasheet)
    {"rtx-a6000", 38.7, 77.4, 154.8, 154.8, 309.7, 0, 768, 48, 84},
    // NVIDIA Quadro RTX 8000 datasheet (2018); Turing whitepaper (2018) Table 1: no TF32/BF16
    {"quadro-rtx-8000", 16.3, 0, 130.5, 0, 261, 0, 672, 48, 72},
    // NVIDIA RTX 6000 Ada Generation datasheet (2022): 91.1 FP32, 1457.0 FP8 with sparsity
    {"rtx-6000-ada", 91.1, 182.1, 364.25, 364.25, 728.5, 728.5, 960, 48, 142},
    // NVIDIA L4 Tensor Core GPU datasheet (2023): tensor figures with sparsity only
    {"l4", 30.3, 60, 121, 121, 242.5, 242.5, 300, 24, 58},
    // NVIDIA L40S GPU datasheet (2023)
    {"l40s", 91.6, 183, 362.05, 362.05, 733, 733, 864, 48, 142},
    // NVIDIA A100 Tensor Core GPU datasheet (2020), PCIe 40 GB column
    {"a100-pcie-40gb", 19.5, 156, 312, 312, 624, 0, 1555, 40, 108},
    // NVIDIA HGX B200 specifications (2024/2025), per GPU, tensor figures with sparsity
    {"b200", 75, 1100, 2250, 2250, 4500, 4500, 7700, 180, 148},
    // AMD Instinct MI250X data sheet (2021), one of the package's two GCDs: matrix FP32 95.7,
    // FP16/BF16/INT8 383, 3.2 TB/s, 128 GB, 220 CUs per package
    {"mi250x-gcd", 47.85, 0, 191.5, 191.5, 191.5, 0, 1600, 64, 110},
};

double peak_or_zero(const trainsim::sim::AcceleratorSpec& a, Dtype d) {
  const auto p = a.peak(d);
  return p ? *p : 0.0;
}

int count_of_kind(const std::string& kind) {
  int n = 0;
  for (const auto* e : library().list())
    n += e->kind == kind ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("every built-in accelerator profile loads with its peaks, memory and compute units") {
  for (const auto* e : library().list()) {
    if (e->kind != "accelerator") continue;
    INFO(e->name);
    const auto a = library().accelerator(e->name, "test");
    CHECK(a.name == e->name);
    bool any_peak = false;
    for (Dtype d : trainsim::sim::kAllDtypes)
      any_peak = any_peak || peak_or_zero(a, d) > 0;
    CHECK(any_peak);
    CHECK(a.memory_bw_bytes_per_s > 0);
    CHECK(a.memory_capacity_bytes > 0);
    CHECK(a.compute_units > 0);
    CHECK(a.kernel_launch_overhead_s > 0);
    CHECK_FALSE(a.kernels.name.empty());
  }
}

TEST_CASE("accelerator profiles for the public suites equal their datasheets") {
  for (const AcceleratorRow& row : kDatasheets) {
    INFO(row.name);
    const auto a = library().accelerator(row.name, "test");
    const std::pair<Dtype, double> peaks[] = {{Dtype::fp32, row.fp32}, {Dtype::tf32, row.tf32},
                                              {Dtype::fp16, row.fp16}, {Dtype::bf16, row.bf16},
                                              {Dtype::int8, row.int8}, {Dtype::fp8, row.fp8}};
    for (const auto& [dtype, tflops] : peaks) {
      INFO(trainsim::sim::dtype_name(dtype));
      if (tflops == 0) {
        CHECK_FALSE(a.peak(dtype).has_value());
      } else {
        REQUIRE(a.peak(dtype).has_value());
        CHECK(*a.peak(dtype) == Approx(tflops * 1e12).epsilon(1e-12));
      }
    }
    CHECK(a.memory_bw_bytes_per_s == Approx(row.memory_bw_gb_per_s * 1e9).epsilon(1e-12));
    CHECK(a.memory_capacity_bytes == Approx(row.memory_gb * 1e9).epsilon(1e-12));
    CHECK(a.compute_units == row.compute_units);
  }
}

TEST_CASE("each new accelerator names the kernels profile of its architecture") {
  const std::map<std::string, std::string> architecture = {
      {"a10", "nvidia-ampere-ga10x"},
      {"a40", "nvidia-ampere-ga10x"},
      {"rtx-a6000", "nvidia-ampere-ga10x"},
      {"quadro-rtx-8000", "nvidia-turing"},
      {"rtx-6000-ada", "nvidia-ada"},
      {"l4", "nvidia-ada"},
      {"l40s", "nvidia-ada"},
      {"a100-pcie-40gb", "nvidia-ampere-ga100"},
      {"b200", "nvidia-blackwell"},
      {"mi250x-gcd", "amd-cdna2"}};
  for (const auto& [name, kernels] : architecture) {
    INFO(name);
    CHECK(library().accelerator(name, "test").kernels.name == kernels);
  }
}

TEST_CASE("host profiles for the benchmark machines load with their sourced figures") {
  struct HostRow {
    const char* name;
    int cores;
    double memory_bw_gb_per_s;
    double memory_gib;
  };
  // CPU vendor specifications (cores, channels x transfer rate x 8 B) and the memory the
  // benchmark logs report (lambdal/deeplearning-benchmark@aa5addb and @2c0af45
  // pytorch/results/*/sys_pytorch.txt)
  constexpr HostRow kHosts[] = {
      {"threadripper-pro-5995wx", 64, 204.8, 1024},  // 8 x DDR4-3200, 995Gi visible
      {"epyc-7502", 32, 204.8, 512},                 // 8 x DDR4-3200, 503Gi visible
      {"dual-epyc-7302", 32, 409.6, 2048},           // 2 x 8 x DDR4-3200, 2.0Ti
      {"core-i7-6850k", 6, 76.8, 128},               // 4 x DDR4-2400, 125Gi visible
      // the 2020-2021 rows (@2c0af45)
      {"dual-epyc-7502", 64, 409.6, 512},       // 2 x 8 x DDR4-3200, 503G visible
      {"dual-epyc-7513", 64, 409.6, 2048},      // 2 x 8 x DDR4-3200, 2.0Ti
      {"dual-xeon-gold-6148", 40, 255.9, 768},  // 2 x 6 x DDR4-2666, 754G visible
  };
  for (const HostRow& row : kHosts) {
    INFO(row.name);
    const auto h = library().host(row.name, "test");
    CHECK(h.cpu_cores == row.cores);
    CHECK(h.memory_bw_bytes_per_s == Approx(row.memory_bw_gb_per_s * 1e9).epsilon(1e-12));
    CHECK(h.memory_capacity_bytes == Approx(row.memory_gib * 1073741824.0).epsilon(1e-12));
  }
  for (const auto* e : library().list()) {
    if (e->kind != "host") continue;
    INFO(e->name);
    const auto h = library().host(e->name, "test");
    CHECK(h.cpu_cores > 0);
    CHECK(h.memory_bw_bytes_per_s > 0);
  }
}

TEST_CASE("the README states the number of built-in profiles of each kind") {
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/README.md");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  // "`trainsim profiles list` lists every built-in profile (N accelerators, N kernel profiles,
  // N frameworks, N hosts, N links, N clusters)"
  const std::regex sentence(
      R"(lists every built-in profile \((\d+) accelerators, (\d+) kernel profiles,\s+(\d+) frameworks, (\d+) hosts, (\d+) links,\s+(\d+) clusters)");
  std::smatch m;
  const std::string readme = text.str();
  REQUIRE(std::regex_search(readme, m, sentence));
  CHECK(std::stoi(m[1].str()) == count_of_kind("accelerator"));
  CHECK(std::stoi(m[2].str()) == count_of_kind("kernels"));
  CHECK(std::stoi(m[3].str()) == count_of_kind("framework"));
  CHECK(std::stoi(m[4].str()) == count_of_kind("host"));
  CHECK(std::stoi(m[5].str()) == count_of_kind("link"));
  CHECK(std::stoi(m[6].str()) == count_of_kind("cluster"));
}
