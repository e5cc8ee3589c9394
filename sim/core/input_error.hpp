#pragma once
// Errors caused by what the user gave us (files, keys, values, command-line arguments).
// The command maps them to exit code 2; everything else that escapes is a runtime failure (1).

#include <stdexcept>
#include <string>

namespace trainsim {

class InputError : public std::runtime_error {
 public:
  // `where` names the origin: a file (and JSON path), a CSV line, or a command-line option.
  InputError(const std::string& where, const std::string& message)
      : std::runtime_error(where.empty() ? message : where + ": " + message) {}
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

// Wrong command-line usage: the command prints a hint to --help.
class UsageError : public InputError {
 public:
  using InputError::InputError;
};

}  // namespace trainsim
