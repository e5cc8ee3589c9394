#pragma once
// UTF-8 validation for text that comes from outside JSON files (command-line arguments, CSV
// fields): JSON output must be valid UTF-8, so invalid bytes are refused where they enter.

#include <string_view>

namespace trainsim::sim {

// True when `text` is well-formed UTF-8 (no overlong forms, surrogates or code points above
// U+10FFFF), per RFC 3629 section 4.
bool is_valid_utf8(std::string_view text);

}  // namespace trainsim::sim
