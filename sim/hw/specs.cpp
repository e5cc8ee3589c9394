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
      return 1;
  }
  return 4;
}

}  // namespace trainsim::sim
