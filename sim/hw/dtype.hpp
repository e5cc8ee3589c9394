#pragma once
// Numeric formats of device arithmetic and storage.

#include <array>
#include <optional>
#include <string_view>
#include <utility>

namespace trainsim::sim {

// tf32: fp32 storage with tensor-core math on a 10-bit mantissa (NVIDIA Ampere and later).
// fp8: 8-bit floating point (E4M3/E5M2) tensor-core math, 16-bit elsewhere (Hopper and later).
enum class Dtype { fp32, tf32, fp16, bf16, int8, fp8 };
inline constexpr int kDtypeCount = 6;
inline constexpr std::array<Dtype, kDtypeCount> kAllDtypes{Dtype::fp32, Dtype::tf32, Dtype::fp16,
                                                           Dtype::bf16, Dtype::int8, Dtype::fp8};
const char* dtype_name(Dtype d);
// Bytes one element of this dtype occupies in memory (tf32 is stored as fp32).
int dtype_bytes(Dtype d);

// The precisions a training step computes in, by the names scenario files, workload files and
// `trainsim import --precision` use (int8 is inference-only: no training step names it).
inline constexpr std::array<std::pair<const char*, Dtype>, 5> kStepPrecisionNames{
    {{"fp32", Dtype::fp32},
     {"tf32", Dtype::tf32},
     {"fp16", Dtype::fp16},
     {"bf16", Dtype::bf16},
     {"fp8", Dtype::fp8}}};
// The step precision of that name; nullopt for any other string.
std::optional<Dtype> parse_step_precision(std::string_view name);

}  // namespace trainsim::sim
