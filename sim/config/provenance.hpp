#pragma once
// Where each value of a profile comes from, read from the comments of the profile's JSON text, so
// that `profiles show` can list the sources and a simulation can say how many of the numbers
// behind its result are guesses. The comment grammar (hw_profiles/README.md, "Sources"):
//
// - A source is a comment whose text starts with a kind: `datasheet: ...`, `paper: ...`,
//   `measured: ...`, `estimate: ...`, or `calibrated on TABLE ...` (TABLE is the reference table
//   or measured file the value was fitted to).
// - An inline comment (after a value on the same line) applies to the key(s) whose values end on
//   that line (a one-line object: the object, so all its values); when no value ends there, to
//   the key on that line. A comment on the next line that starts in the same column continues it.
// - A block of comment lines before a key applies to that key: its first line that starts with
//   a kind is the source, the lines after it continue the citation. Lines before it are notes.
// - A line `PATH: kind: text` (inline or in a block) applies to PATH ("gemm.fp32",
//   "gemm_tile.half_tile_throughput") relative to the object the comment is in.
// - A value takes the source given to it, else that of its nearest enclosing key with one. On
//   one key a PATH line beats an inline comment, which beats a block.
// - The header `trainsim calibrate --out` writes ("// Calibrated by `trainsim calibrate S M`
//   ...", then one "//   PATH: old -> new (...)" line per fitted value) makes those values
//   `calibrated` on M, above any other comment.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::sim {

enum class ProvenanceKind { datasheet, paper, measured, calibrated, estimate, unsourced };
inline constexpr std::size_t kProvenanceKindCount = 6;

// "datasheet", "paper", "measured", "calibrated", "estimate", "unsourced".
const char* provenance_kind_name(ProvenanceKind k);

struct Provenance {
  ProvenanceKind kind = ProvenanceKind::unsourced;
  std::string table;     // calibrated only: the table (or measured file) the value was fitted to
  std::string citation;  // the comment's text after "kind:" (after "calibrated on ")
};

struct ProvenanceLeaf {
  std::string path;  // JSON path of the value: "compute.gemm.fp32", "node.intra.dims"
  Provenance provenance;
};

struct ProfileProvenance {
  // Every number and quantity string of the profile ("19.5 TFLOP/s"; a list of numbers counts
  // once, at the list's path), in document order; kind `unsourced` where no comment applies.
  std::vector<ProvenanceLeaf> leaves;
  // Comments that break the grammar, as "line N: ...": a PATH line naming no value of the
  // profile (a typo would leave the value with its enclosing key's source), a second source in
  // one block (only the first counts).
  std::vector<std::string> problems;
  bool calibrate_header = false;  // the text starts with the header `calibrate --out` writes

  const Provenance* find(std::string_view path) const;
};

// Reads the sources of `text`, JSON with comments already accepted by parse_json_strict (on
// other text it stops at the first token it cannot place and returns what it found so far).
ProfileProvenance parse_provenance(std::string_view text);

// "estimate: text" -> {estimate, "", "text"}; "calibrated on T (...)" -> {calibrated, "T",
// "T (...)"}; nullopt when the text does not start with a kind.
std::optional<Provenance> parse_source(std::string_view comment_text);

}  // namespace trainsim::sim
