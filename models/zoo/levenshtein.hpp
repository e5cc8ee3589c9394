#pragma once
// Edit distance, to suggest the nearest valid name for a misspelt model or hyper-parameter.

#include <cstddef>
#include <string>
#include <vector>

namespace trainsim::models {

std::size_t levenshtein(const std::string& a, const std::string& b);

// The candidate closest to `word`, or "" when none is within a plausible typo distance.
std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace trainsim::models
