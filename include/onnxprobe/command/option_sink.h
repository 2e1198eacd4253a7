// How a command declares its options, without seeing a parser: the command line (CLI11 in
// tools/onnxprobe/cli_app.cc) and the Python package (ApplyArguments, command.h) both read the
// same declarations, so every option exists once, with one parser and one message per mistake.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "onnxprobe/common/status.h"

namespace onnxprobe::cmd {

// One option of a command.
struct OptionSpec {
  std::string names;       // "-o,--output"
  std::string value_name;  // "PATH"; empty: a switch that takes no value
  std::string help;
  bool repeatable = false;  // given twice is an error unless set (switches too)
  bool hidden = false;      // parsed but not listed in --help
  // Non-empty: a switch whose value is optional and attached with '=' ("--json" or
  // "--json=FILE"); `parse` gets this value when none is attached. A separate next argument is
  // never taken as its value, so positionals after it stay positionals.
  std::string bare_value = "";
};

// Where a command declares its options. `parse` runs once per occurrence, in command-line
// order, with the value ("" for a switch); an error it returns ends parsing (exit 2).
class OptionSink {
 public:
  virtual ~OptionSink() = default;
  // Options declared after this are listed under `title` in --help.
  virtual void Section(const std::string& title) = 0;
  virtual void Add(const OptionSpec& spec, std::function<Status(const std::string&)> parse) = 0;
  // A positional argument, in declaration order.
  virtual void Positional(const std::string& name, const std::string& help, std::string* out,
                          bool required) = 0;
  // Every remaining positional argument, at least one (declared last).
  virtual void Positionals(const std::string& name, const std::string& help,
                           std::vector<std::string>* out) = 0;
};

// The longest of "-o,--output": the name messages use.
std::string MainName(const std::string& names);

}  // namespace onnxprobe::cmd
