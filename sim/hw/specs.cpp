#include "sim/hw/specs.hpp"

namespace trainsim::sim {

const char* dtype_name(Dtype d) {
  switch (d) {
    case Dtype::fp32:
      return "fp32";
    case Dtype::tf32:
      return "tf32";
    case Dtype::fp16:
      return "fp16";
    case Dtype::bf16:
      return "bf16";
    case Dtype::int8:
      return "int8";
    case Dtype::fp8:
      return "fp8";
  }
  return "?";
}

int dtype_bytes(Dtype d) {
  switch (d) {
    case Dtype::fp32:
    case Dtype::tf32:
      return 4;
    case Dtype::fp16:
    case Dtype::bf16:
      return 2;
    case Dtype::int8:
    case Dtype::fp8:
      return 1;
  }
  return 4;
}

std::optional<Dtype> parse_step_precision(std::string_view name) {
  for (const auto& [n, d] : kStepPrecisionNames)
    if (name == n) return d;
  return std::nullopt;
}

const char* kernel_class_name(KernelClass c) {
  switch (c) {
    case KernelClass::gemm:
      return "gemm";
    case KernelClass::conv:
      return "conv";
    case KernelClass::depthwise_conv:
      return "depthwise_conv";
    case KernelClass::attention:
      return "attention";
    case KernelClass::recurrent:
      return "recurrent";
    case KernelClass::elementwise:
      return "elementwise";
    case KernelClass::normalization:
      return "normalization";
    case KernelClass::softmax:
      return "softmax";
    case KernelClass::reduction:
      return "reduction";
    case KernelClass::pooling:
      return "pooling";
    case KernelClass::gather:
      return "gather";
    case KernelClass::scatter:
      return "scatter";
    case KernelClass::optimizer:
      return "optimizer";
    case KernelClass::copy:
      return "copy";
    case KernelClass::topk:
      return "topk";
  }
  return "?";
}

bool is_compute_class(KernelClass c) {
  switch (c) {
    case KernelClass::gemm:
    case KernelClass::conv:
    case KernelClass::depthwise_conv:
    case KernelClass::attention:
    case KernelClass::recurrent:
      return true;
    default:
      return false;
  }
}

double KernelEfficiency::effective_compute(KernelClass c, Dtype d) const {
  const auto& row = compute[static_cast<std::size_t>(c)];
  const double v = row[static_cast<std::size_t>(d)];
  if (v > 0) return v;
  if (d == Dtype::bf16) return row[static_cast<std::size_t>(Dtype::fp16)];
  if (d == Dtype::fp16) return row[static_cast<std::size_t>(Dtype::bf16)];
  return 0;
}

}  // namespace trainsim::sim
