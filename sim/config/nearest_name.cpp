#include "sim/config/nearest_name.hpp"

#include <algorithm>
#include <cctype>

namespace trainsim::sim {

std::size_t levenshtein(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0u : 1u)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::string::npos;
  for (const auto& c : candidates) {
    const std::size_t d = levenshtein(word, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  const std::size_t limit = std::max<std::size_t>(1, (word.size() + 2) / 3);
  return best_distance <= limit ? best : std::string();
}

}  // namespace trainsim::sim
