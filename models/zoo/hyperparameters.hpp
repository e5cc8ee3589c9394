#pragma once
// Read access to a model's resolved hyper-parameters for the generators.

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "models/zoo/zoo_model.hpp"

namespace trainsim::models {

class Hyperparameters {
 public:
  explicit Hyperparameters(std::map<std::string, double> values, TensorParallelism parallel = {})
      : values_(std::move(values)), parallel_(parallel) {}
  // The value as an integer; the catalog has already checked it is a positive integer.
  std::int64_t get(const std::string& key) const;
  const std::map<std::string, double>& values() const { return values_; }
  // The tensor-parallel split to build (tp 1: the whole model); see tensor_parallel.hpp.
  const TensorParallelism& parallel() const { return parallel_; }

 private:
  std::map<std::string, double> values_;
  TensorParallelism parallel_;
};

}  // namespace trainsim::models
