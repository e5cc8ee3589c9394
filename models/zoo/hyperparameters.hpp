#pragma once
// Read access to a model's resolved hyper-parameters for the generators.

#include <cstdint>
#include <map>
#include <string>

namespace trainsim::models {

class Hyperparameters {
 public:
  explicit Hyperparameters(std::map<std::string, double> values) : values_(std::move(values)) {}
  // The value as an integer; the catalog has already checked it is a positive integer.
  std::int64_t get(const std::string& key) const;
  const std::map<std::string, double>& values() const { return values_; }

 private:
  std::map<std::string, double> values_;
};

}  // namespace trainsim::models
