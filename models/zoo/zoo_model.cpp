#include "models/zoo/zoo_model.hpp"

#include <array>
#include <numeric>
#include <utility>
#include <vector>

#include "sim/hw/kernel_model.hpp"

namespace trainsim::models {

const char* op_class_name(OpClass op) {
  switch (op) {
    case OpClass::conv:
      return "conv";
    case OpClass::depthwise_conv:
      return "depthwise_conv";
    case OpClass::grouped_conv:
      return "grouped_conv";
    case OpClass::matmul:
      return "matmul";
    case OpClass::attention:
      return "attention";
    case OpClass::normalization:
      return "normalization";
    case OpClass::elementwise:
      return "elementwise";
    case OpClass::pooling:
      return "pooling";
    case OpClass::embedding:
      return "embedding";
    case OpClass::recurrent:
      return "recurrent";
    case OpClass::loss:
      return "loss";
  }
  return "unknown";
}

const char* tp_collective_op_name(TpCollectiveOp op) {
  switch (op) {
    case TpCollectiveOp::allreduce:
      return "allreduce";
    case TpCollectiveOp::all_gather:
      return "all_gather";
    case TpCollectiveOp::reduce_scatter:
      return "reduce_scatter";
  }
  return "unknown";
}

const char* input_dtype_name(InputDtype d) {
  for (const auto& [name, dtype] : kInputDtypeNames) {
    if (dtype == d) return name;
  }
  return "?";
}

double input_dtype_bytes(InputDtype d) {
  switch (d) {
    case InputDtype::uint8:
      return 1;
    case InputDtype::fp16:
    case InputDtype::bf16:
      return 2;
    case InputDtype::fp32:
    case InputDtype::int32:
      return 4;
    case InputDtype::int64:
      return 8;
  }
  return 4;
}

sim::Kernel instantiate(const KernelSpec& k, double batch, sim::Dtype dtype) {
  sim::Kernel out;
  out.cls = k.cls;
  out.dtype = dtype;
  out.flops = k.flops * batch;
  const double width = sim::dtype_bytes(dtype);
  out.bytes = (k.act_elements * batch + k.param_elements) * width + k.raw_bytes * batch;
  out.gemm = k.gemm;
  out.channels = k.channels;
  out.winograd_filter = k.winograd_filter;
  out.weight_gradient = k.weight_gradient;
  out.dilated = k.dilated;
  out.strided_data_gradient = k.strided_data_gradient;
  out.strided_tap_waste = k.strided_tap_waste;
  out.input_tap_reuse = k.input_tap_reuse;
  out.whole_k = k.whole_k;
  out.recurrent_data_gradient = k.recurrent_data_gradient;
  out.pointwise_gemm = k.pointwise_gemm;
  if (k.k_major_operands) out.operands = sim::GemmOperands::both_k_major;
  out.input_channels = k.input_channels;
  out.row_elements = k.row_elements;
  out.transpose_elements = k.transpose_act_elements * batch + k.transpose_param_elements;
  if (k.cls == sim::KernelClass::gemm) {
    // A linear layer's strides are its feature counts (m where the rows are in n or k, n, and k
    // where the rows are in m), never its rows.
    std::vector<double> strides{k.gemm.n};
    if (k.batch_dim != BatchDim::m) strides.push_back(k.gemm.m);
    if (k.batch_dim != BatchDim::k) strides.push_back(k.gemm.k);
    sim::set_operand_strides(out, strides);
  }
  // A GEMM that reduces over the rows (a weight gradient) reads both operands across their
  // feature-contiguous rows: both MN-major. A convolution's weight gradient is such a GEMM where
  // its library hands it to the BLAS library (channels-last pointwise ones:
  // sim/hw/kernel_model.cpp, runs_as_gemm).
  if ((k.cls == sim::KernelClass::gemm || k.cls == sim::KernelClass::conv) &&
      k.batch_dim == BatchDim::k) {
    out.operands = sim::GemmOperands::both_mn_major;
  }
  switch (k.batch_dim) {
    case BatchDim::none:
      break;
    case BatchDim::m:
      out.gemm.m *= batch;
      if (k.cls == sim::KernelClass::conv) out.samples = batch;
      break;
    case BatchDim::k:
      out.gemm.k *= batch;
      break;
    case BatchDim::batch:
      out.gemm.batch *= batch;
      break;
  }
  return out;
}

double issue_instructions(const KernelSpec& k, double batch, const sim::FrameworkSpec& framework) {
  return framework.issue_instructions(k.element_math, k.math_elements * batch);
}

double ZooModel::input_bytes_per_sample() const {
  double elements = 1;
  for (const auto d : input_shape)
    elements *= static_cast<double>(d);
  return elements * input_dtype_bytes(input_dtype);
}

namespace {
template <typename T, typename F>
T sum_layers(const std::vector<Layer>& layers, F f) {
  T total{};
  for (const auto& l : layers)
    total += f(l);
  return total;
}
}  // namespace

std::int64_t ZooModel::params() const {
  return sum_layers<std::int64_t>(layers, [](const Layer& l) { return l.params; });
}
double ZooModel::fwd_flops() const {
  return sum_layers<double>(layers, [](const Layer& l) { return l.fwd_flops; });
}
double ZooModel::fwd_macs() const {
  return sum_layers<double>(layers, [](const Layer& l) { return l.fwd_macs; });
}
double ZooModel::bwd_flops() const {
  return sum_layers<double>(layers, [](const Layer& l) { return l.bwd_flops(); });
}
double ZooModel::saved_elements() const {
  return sum_layers<double>(layers, [](const Layer& l) { return l.saved_elements; });
}
int ZooModel::param_tensors() const {
  return sum_layers<int>(layers, [](const Layer& l) { return l.param_tensors; });
}
double ZooModel::saved_bytes(double bytes_per_element) const {
  return sum_layers<double>(layers,
                            [&](const Layer& l) { return l.saved_bytes(bytes_per_element); });
}

}  // namespace trainsim::models
