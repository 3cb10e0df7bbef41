#pragma once
// Checked access to one TOML table of a preset file. Every problem throws
// std::invalid_argument "<file>:<line>: <table.key>: <what is wrong>".
// Keys outside the table's declared set are rejected on construction, so a
// misspelt key is reported as unknown rather than as a missing neighbour.
#include <toml++/toml.h>

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nestfast::io {

// Parses a TOML file; a syntax error becomes "<file>:<line>:<column>: TOML syntax error: ...".
toml::table parse_toml_file(const std::filesystem::path& file);

// Lower bounds a number may have to be accepted.
enum class Bound {
  Positive,     // > 0
  NonNegative,  // >= 0
  AtLeastOne,   // >= 1
};

class TomlTableReader {
 public:
  // `prefix` is the dotted path of the table ("model", "cluster.level[2]",
  // "" for the document); a missing key is reported at the table's own line.
  TomlTableReader(const toml::table& table, std::filesystem::path file, std::string prefix,
                  std::initializer_list<std::string_view> allowed_keys);

  std::string string(std::string_view key) const;  // non-empty
  std::optional<std::string> optional_string(std::string_view key) const;
  std::string text_or_empty(std::string_view key) const;  // a string, "" when missing or empty
  bool boolean(std::string_view key) const;
  std::optional<bool> optional_boolean(std::string_view key) const;
  int integer(std::string_view key, Bound bound) const;
  std::optional<int> optional_integer(std::string_view key, Bound bound) const;
  // An integer or a float, finite.
  double number(std::string_view key, Bound bound) const;
  std::optional<double> optional_number(std::string_view key, Bound bound) const;
  const toml::table* optional_table(std::string_view key) const;
  const toml::table& table(std::string_view key) const;
  // A non-empty array whose elements are all tables (inline or [[...]]).
  std::vector<const toml::table*> table_array(std::string_view key) const;

  // Throws the one-line error for `key` at the line of its value (or of the table when absent).
  [[noreturn]] void fail(std::string_view key, std::string_view problem) const;

  const std::filesystem::path& file() const { return file_; }
  std::string key_path(std::string_view key) const;

 private:
  const toml::node& required(std::string_view key) const;
  [[noreturn]] void fail_wrong_type(std::string_view key, std::string_view expected) const;
  void check_bound(std::string_view key, double value, Bound bound) const;
  int line_of(std::string_view key) const;

  const toml::table& table_;
  std::filesystem::path file_;
  std::string prefix_;
};

// The source line of a node, or 1 when toml++ has none (a document root).
int source_line(const toml::node& node);

}  // namespace nestfast::io
