#pragma once
// "Did you mean ...?" for misspelt keys, profile names, model names and option values: one rule
// everywhere, so every error message suggests the same way.

#include <cstddef>
#include <string>
#include <vector>

namespace trainsim::sim {

// Edit distance (insert, delete, substitute), ignoring ASCII case.
std::size_t levenshtein(const std::string& a, const std::string& b);

// The candidate closest to `word`, or "" when none is within a plausible typo distance (at most
// a third of the word changed, at least one edit allowed); ties go to the earlier candidate.
std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace trainsim::sim
