#pragma once
// Numeric formats of device arithmetic and storage.

#include <array>

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

}  // namespace trainsim::sim
