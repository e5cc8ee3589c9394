#include "sim/config/provenance.hpp"

#include <cctype>
#include <cstring>
#include <map>
#include <utility>

#include "sim/config/limits.hpp"
#include "sim/config/units.hpp"

namespace trainsim::sim {

namespace {

enum class Tok { lbrace, rbrace, lbracket, rbracket, colon, comma, string, number, literal };

struct Token {
  Tok type = Tok::literal;
  std::size_t line = 0;
  std::string_view text;  // a string's contents without the quotes; a number's or literal's text
};

struct Comment {
  std::size_t line = 0;
  std::size_t column = 0;
  bool inline_comment = false;  // a token precedes it on its line
  bool continuation = false;    // continues the inline comment on the line above
  std::size_t next_token = 0;   // index of the first token after it
  std::string text;             // without the comment markers, trimmed
};

std::string_view trim_whitespace(std::string_view s) {
  const auto a = s.find_first_not_of(" \t\r\n");
  if (a == std::string_view::npos) return {};
  return s.substr(a, s.find_last_not_of(" \t\r\n") - a + 1);
}

bool starts_with_word(std::string_view s, std::string_view word) {
  return s.size() >= word.size() && s.substr(0, word.size()) == word;
}

void lex(std::string_view text, std::vector<Token>& tokens, std::vector<Comment>& comments) {
  std::size_t line = 1;
  std::size_t line_start = 0;
  std::size_t last_token_line = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < text.size() && (text[i + 1] == '/' || text[i + 1] == '*')) {
      Comment cm;
      cm.line = line;
      cm.column = i - line_start;
      cm.inline_comment = last_token_line == line;
      cm.next_token = tokens.size();
      if (text[i + 1] == '/') {
        const std::size_t end = std::min(text.find('\n', i), text.size());
        cm.text = std::string(trim_whitespace(text.substr(i + 2, end - i - 2)));
        i = end;
      } else {
        const std::size_t found = text.find("*/", i + 2);
        const std::size_t end = found == std::string_view::npos ? text.size() : found;
        std::string body(text.substr(i + 2, end - i - 2));
        for (std::size_t k = 0; k < body.size(); ++k) {
          if (body[k] != '\n') continue;
          body[k] = ' ';
          ++line;
          line_start = i + 2 + k + 1;
        }
        cm.text = std::string(trim_whitespace(body));
        i = found == std::string_view::npos ? text.size() : found + 2;
      }
      comments.push_back(std::move(cm));
      continue;
    }
    Token t;
    t.line = line;
    if (c == '"') {
      std::size_t j = i + 1;
      while (j < text.size() && text[j] != '"')
        j += text[j] == '\\' ? 2 : 1;
      j = std::min(j, text.size());
      t.type = Tok::string;
      t.text = text.substr(i + 1, j - i - 1);
      i = j + 1;
    } else if (std::strchr("{}[]:,", c) != nullptr) {
      t.type = c == '{'   ? Tok::lbrace
               : c == '}' ? Tok::rbrace
               : c == '[' ? Tok::lbracket
               : c == ']' ? Tok::rbracket
               : c == ':' ? Tok::colon
                          : Tok::comma;
      t.text = text.substr(i, 1);
      ++i;
    } else {
      std::size_t j = i;
      while (j < text.size() && std::strchr(" \t\r\n,:{}[]/\"", text[j]) == nullptr)
        ++j;
      if (j == i) ++j;  // a stray character: one token, so the loop always advances
      t.type = (c == '-' || std::isdigit(static_cast<unsigned char>(c)) != 0) ? Tok::number
                                                                              : Tok::literal;
      t.text = text.substr(i, j - i);
      i = j;
    }
    tokens.push_back(t);
    last_token_line = line;
  }
}

// A string value that is a quantity ("19.5 TFLOP/s", "80 GiB", "5 us", "0.8", "80%").
bool is_quantity(std::string_view s) {
  for (Dimension d : kAllDimensions) {
    if (parse_quantity(s, d)) return true;
  }
  return false;
}

struct Node {
  std::string path;
  std::string parent;  // path of the enclosing object ("" at the top level)
  std::size_t key_line = 0;
  std::size_t end_line = 0;  // line of the value's last token
  std::size_t key_token = 0;
  bool leaf = false;  // a number, a quantity, or a list of them
};

class Parser {
 public:
  explicit Parser(const std::vector<Token>& tokens) : t_(tokens) {}

  std::vector<Node> nodes;

  void parse() {
    bool leaf = false;
    std::size_t end = 0;
    (void)value("", 0, leaf, end);
  }

 private:
  // Reads the value at pos_; false on a token it cannot place (nodes read so far are kept).
  bool value(const std::string& path, int depth, bool& leaf, std::size_t& end_line) {
    if (pos_ >= t_.size() || depth > limits::kMaxJsonDepth) return false;
    const Token& tok = t_[pos_];
    leaf = false;
    end_line = tok.line;
    if (tok.type == Tok::number || tok.type == Tok::string || tok.type == Tok::literal) {
      leaf = tok.type == Tok::number || (tok.type == Tok::string && is_quantity(tok.text));
      ++pos_;
      return true;
    }
    if (tok.type == Tok::lbrace) return object(path, depth, end_line);
    if (tok.type != Tok::lbracket) return false;
    ++pos_;
    for (std::size_t index = 0;;) {
      if (pos_ >= t_.size()) return false;
      if (t_[pos_].type == Tok::rbracket) {
        end_line = t_[pos_++].line;
        return true;
      }
      if (t_[pos_].type == Tok::comma) {
        ++pos_;
        continue;
      }
      const bool scalar = t_[pos_].type != Tok::lbrace && t_[pos_].type != Tok::lbracket;
      bool item_leaf = false;
      std::size_t item_end = 0;
      const std::string item = path + "." + std::to_string(index++);
      if (!value(item, depth + 1, item_leaf, item_end)) return false;
      if (scalar && item_leaf) leaf = true;  // a list of numbers is one value
    }
  }

  bool object(const std::string& path, int depth, std::size_t& end_line) {
    ++pos_;
    while (true) {
      if (pos_ >= t_.size()) return false;
      if (t_[pos_].type == Tok::rbrace) {
        end_line = t_[pos_++].line;
        return true;
      }
      if (t_[pos_].type == Tok::comma) {
        ++pos_;
        continue;
      }
      if (t_[pos_].type != Tok::string) return false;
      Node n;
      n.key_token = pos_;
      n.key_line = t_[pos_].line;
      n.parent = path;
      n.path = path.empty() ? std::string(t_[pos_].text) : path + "." + std::string(t_[pos_].text);
      if (++pos_ >= t_.size() || t_[pos_].type != Tok::colon) return false;
      ++pos_;
      const std::size_t index = nodes.size();
      nodes.push_back(n);
      bool leaf = false;
      std::size_t end = 0;
      // n.path, not nodes[index].path: the recursion grows `nodes`.
      if (!value(n.path, depth + 1, leaf, end)) return false;
      nodes[index].leaf = leaf;
      nodes[index].end_line = end;
    }
  }

  const std::vector<Token>& t_;
  std::size_t pos_ = 0;
};

// The sources given to one key, by rule; the first of header, path line, inline, block wins.
struct Sources {
  std::optional<Provenance> header;
  std::optional<Provenance> path_line;
  std::optional<Provenance> inline_comment;
  std::optional<Provenance> block;

  const Provenance* best() const {
    for (const auto* p : {&header, &path_line, &inline_comment, &block}) {
      if (*p) return &**p;
    }
    return nullptr;
  }
};

// "a.b: rest" -> ("a.b", "rest"); nullopt when the text does not start with a dotted key path
// and a colon.
std::optional<std::pair<std::string, std::string_view>> split_path_line(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) != 0 ||
                             text[i] == '_' || text[i] == '.' || text[i] == '-'))
    ++i;
  if (i == 0 || i >= text.size() || text[i] != ':') return std::nullopt;
  const std::string_view path = text.substr(0, i);
  if (path.front() == '.' || path.back() == '.' || path.find("..") != std::string_view::npos)
    return std::nullopt;
  return std::make_pair(std::string(path), text.substr(i + 1));
}

std::string join_path(const std::string& parent, const std::string& rel) {
  return parent.empty() ? rel : parent + "." + rel;
}

void append(Provenance* p, std::string_view text) {
  if (p == nullptr || text.empty()) return;
  p->citation += p->citation.empty() ? std::string(text) : " " + std::string(text);
}

}  // namespace

const char* provenance_kind_name(ProvenanceKind k) {
  switch (k) {
    case ProvenanceKind::datasheet:
      return "datasheet";
    case ProvenanceKind::paper:
      return "paper";
    case ProvenanceKind::measured:
      return "measured";
    case ProvenanceKind::calibrated:
      return "calibrated";
    case ProvenanceKind::estimate:
      return "estimate";
    case ProvenanceKind::unsourced:
      return "unsourced";
  }
  return "unsourced";
}

const Provenance* ProfileProvenance::find(std::string_view path) const {
  for (const ProvenanceLeaf& l : leaves) {
    if (l.path == path) return &l.provenance;
  }
  return nullptr;
}

std::optional<Provenance> parse_source(std::string_view comment_text) {
  const std::string_view s = trim_whitespace(comment_text);
  constexpr std::pair<const char*, ProvenanceKind> kPlain[] = {
      {"datasheet:", ProvenanceKind::datasheet},
      {"paper:", ProvenanceKind::paper},
      {"measured:", ProvenanceKind::measured},
      {"estimate:", ProvenanceKind::estimate}};
  for (const auto& [word, kind] : kPlain) {
    if (starts_with_word(s, word)) {
      Provenance p;
      p.kind = kind;
      p.citation = std::string(trim_whitespace(s.substr(std::strlen(word))));
      return p;
    }
  }
  constexpr std::string_view kCalibrated = "calibrated on ";
  if (!starts_with_word(s, kCalibrated)) return std::nullopt;
  const std::string_view rest = trim_whitespace(s.substr(kCalibrated.size()));
  const std::size_t end = std::min(rest.find_first_of(" \t(:,;"), rest.size());
  if (end == 0) return std::nullopt;
  Provenance p;
  p.kind = ProvenanceKind::calibrated;
  p.table = std::string(rest.substr(0, end));
  p.citation = std::string(rest);
  return p;
}

ProfileProvenance parse_provenance(std::string_view text) {
  std::vector<Token> tokens;
  std::vector<Comment> comments;
  lex(text, tokens, comments);
  Parser parser(tokens);
  parser.parse();
  const std::vector<Node>& nodes = parser.nodes;

  std::map<std::string, std::size_t> node_at;        // path -> index in nodes
  std::map<std::size_t, std::size_t> node_of_token;  // key token -> index in nodes
  std::map<std::size_t, std::vector<std::size_t>>
      ending_on;                                   // line -> nodes whose values end there
  std::map<std::size_t, std::size_t> last_key_on;  // line -> its last key
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    node_at.emplace(nodes[i].path, i);
    node_of_token.emplace(nodes[i].key_token, i);
    ending_on[nodes[i].end_line].push_back(i);
    last_key_on[nodes[i].key_line] = i;
  }
  struct Targets {
    std::vector<std::size_t> nodes;
    std::string base;
    bool sourced = false;
  };
  std::map<std::size_t, Targets> targets_of_line;
  std::map<std::string, Sources> sources;
  ProfileProvenance out;

  // A PATH line relative to the object `parent`; returns where its citation continues.
  const auto apply_path_line = [&](const Comment& c, const std::string& parent) -> Provenance* {
    const auto split = split_path_line(c.text);
    if (!split) return nullptr;
    auto source = parse_source(split->second);
    if (!source) return nullptr;
    const std::string target = join_path(parent, split->first);
    if (!node_at.contains(target)) {
      out.problems.push_back("line " + std::to_string(c.line) + ": " + split->first +
                             " names no value");
      return nullptr;
    }
    auto& slot = sources[target].path_line;
    if (slot) return nullptr;
    slot = std::move(*source);
    return &*slot;
  };

  // Standalone lines right below an inline comment, in its column, continue it.
  for (std::size_t i = 0, last = comments.size(), last_line = 0; i < comments.size(); ++i) {
    Comment& c = comments[i];
    if (c.inline_comment) {
      last = i;
      last_line = c.line;
    } else if (last < comments.size() && c.line == last_line + 1 &&
               c.column == comments[last].column && c.next_token == comments[last].next_token) {
      c.continuation = true;
      comments[last].text += " " + c.text;
      last_line = c.line;
    } else {
      last = comments.size();
    }
  }

  // The header `trainsim calibrate --out` writes before the document.
  constexpr std::string_view kHeader = "Calibrated by `trainsim calibrate ";
  if (!comments.empty() && comments[0].next_token == 0 &&
      starts_with_word(comments[0].text, kHeader)) {
    out.calibrate_header = true;
    const std::string& first = comments[0].text;
    const std::size_t open = first.find('`');
    const std::size_t close = first.find('`', open + 1);
    const std::string command =
        close == std::string::npos ? "" : first.substr(open + 1, close - open - 1);
    const std::size_t space = command.find_last_of(' ');
    const std::string table = space == std::string::npos ? command : command.substr(space + 1);
    for (std::size_t i = 1; i < comments.size() && comments[i].next_token == 0; ++i) {
      const auto split = split_path_line(comments[i].text);
      if (!split || table.empty()) continue;
      if (!node_at.contains(split->first)) {
        out.problems.push_back("line " + std::to_string(comments[i].line) + ": " + split->first +
                               " names no value");
        continue;
      }
      Provenance p;
      p.kind = ProvenanceKind::calibrated;
      p.table = table;
      p.citation = table + " (`" + command + "`): " + std::string(trim_whitespace(split->second));
      sources[split->first].header = std::move(p);
    }
  }

  for (std::size_t i = 0; i < comments.size(); ++i) {
    const Comment& c = comments[i];
    if (c.continuation) continue;
    if (c.inline_comment) {
      // The keys whose values end on this line, outermost first; else the key on this line.
      // PATH lines are relative to the object the comment is in: the targets' parent, or the
      // object that opens on this line. Found once per line (a line may hold many /* */).
      auto found = targets_of_line.find(c.line);
      if (found == targets_of_line.end()) {
        Targets t;
        if (const auto ending = ending_on.find(c.line); ending != ending_on.end()) {
          for (std::size_t n : ending->second) {
            const auto parent = node_at.find(nodes[n].parent);
            if (parent != node_at.end() && nodes[parent->second].end_line == c.line) continue;
            t.nodes.push_back(n);
          }
        }
        if (!t.nodes.empty()) {
          t.base = nodes[t.nodes.front()].parent;
        } else if (const auto keyed = last_key_on.find(c.line); keyed != last_key_on.end()) {
          t.nodes.push_back(keyed->second);
          t.base = nodes[keyed->second].path;
        }
        found = targets_of_line.emplace(c.line, std::move(t)).first;
      }
      Targets& t = found->second;
      if (t.nodes.empty()) continue;
      if (auto source = parse_source(c.text)) {
        if (t.sourced) continue;  // the first source on a line counts
        t.sourced = true;
        for (std::size_t n : t.nodes) {
          auto& slot = sources[nodes[n].path].inline_comment;
          if (!slot) slot = *source;
        }
      } else {
        apply_path_line(c, t.base);
      }
      continue;
    }
    // A block: the standalone lines before one key.
    const auto key = node_of_token.find(c.next_token);
    if (key == node_of_token.end()) continue;
    const Node& node = nodes[key->second];
    Provenance* current = nullptr;
    for (; i < comments.size() && comments[i].next_token == c.next_token; ++i) {
      const Comment& line = comments[i];
      if (line.continuation || line.inline_comment) continue;
      if (auto source = parse_source(line.text)) {
        auto& slot = sources[node.path].block;
        current = nullptr;
        if (slot) {
          out.problems.push_back("line " + std::to_string(line.line) + ": a second source for " +
                                 node.path + " (give each value its own PATH line)");
        } else {
          slot = std::move(*source);
          current = &*slot;
        }
      } else if (const auto split = split_path_line(line.text);
                 split && parse_source(split->second)) {
        current = apply_path_line(line, node.parent);
      } else {
        append(current, line.text);
      }
    }
    --i;
  }

  for (const Node& n : nodes) {
    if (!n.leaf) continue;
    ProvenanceLeaf leaf;
    leaf.path = n.path;
    for (std::string p = n.path;;) {
      const auto it = sources.find(p);
      if (it != sources.end() && it->second.best() != nullptr) {
        leaf.provenance = *it->second.best();
        break;
      }
      const auto dot = p.find_last_of('.');
      if (dot == std::string::npos) break;
      p.resize(dot);
    }
    out.leaves.push_back(std::move(leaf));
  }
  return out;
}

}  // namespace trainsim::sim
