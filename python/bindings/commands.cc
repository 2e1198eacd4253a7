// The library's commands (onnxprobe/command/command.h) for the Python package: their option
// tables, from which onnxprobe/_commands.py builds one function per command, and one call that
// applies values by option name and executes.
#include <pybind11/stl.h>

#include <optional>

#include "bindings.h"
#include "onnxprobe/command/command.h"

namespace onnxprobe::python {
namespace {

py::list CommandTables() {
  py::list out;
  for (auto& c : cmd::MakeCommands()) {
    cmd::CommandInfo info = cmd::DescribeCommand(*c);
    py::list positionals, options;
    for (const auto& p : info.positionals) {
      py::dict d;
      d["name"] = p.name;
      d["help"] = p.help;
      d["required"] = p.required;
      d["many"] = p.many;
      positionals.append(d);
    }
    for (const auto& o : info.options) {
      py::dict d;
      d["name"] = o.name;
      d["names"] = o.spec.names;
      d["value_name"] = o.spec.value_name;
      d["help"] = o.spec.help;
      d["repeatable"] = o.spec.repeatable;
      d["hidden"] = o.spec.hidden;
      d["bare_value"] = o.spec.bare_value;
      d["section"] = o.section;
      options.append(d);
    }
    py::dict d;
    d["name"] = info.name;
    d["summary"] = info.summary;
    d["footer"] = info.footer;
    d["positionals"] = positionals;
    d["options"] = options;
    out.append(d);
  }
  return out;
}

// {exit_code, text, documents {format: text}, notes, error: None or (code key, message)}
py::dict RunCommand(const std::string& name, const std::vector<std::string>& positionals,
                    const std::vector<std::pair<std::string, std::string>>& options,
                    const py::object& on_progress) {
  std::unique_ptr<cmd::Command> command = Unwrap(cmd::MakeCommand(name));
  Check(cmd::ApplyArguments(*command, positionals, options));
  // the callable runs with the GIL held; an exception it raises stops the command before its
  // next step and is raised again once the library returns (it never travels through it)
  PyProgress py_progress(on_progress);
  cmd::CommandContext context;
  if (py_progress.active()) {
    context.progress = [&py_progress](const cmd::ProgressEvent& e) {
      return py_progress(cmd::PhaseName(e.phase), e.done, e.total);
    };
  }
  std::optional<Expected<cmd::CommandOutput>> result;
  {
    py::gil_scoped_release release;
    result.emplace(command->Execute(context));
  }
  py_progress.Rethrow();
  cmd::CommandOutput out = Unwrap(std::move(*result));
  py::dict d;
  d["exit_code"] = out.exit_code;
  d["text"] = out.text;
  d["documents"] = out.documents;
  d["notes"] = cmd::DistinctNotes(out.notes);
  d["error"] =
      out.error.ok()
          ? py::object(py::none())
          : py::object(py::make_tuple(ErrorCodeKey(out.error.code()), out.error.message()));
  return d;
}

// The command's parse and checks only (ApplyArguments): raises the command line's error for
// these arguments, executes nothing.
void CheckArguments(const std::string& name, const std::vector<std::string>& positionals,
                    const std::vector<std::pair<std::string, std::string>>& options) {
  std::unique_ptr<cmd::Command> command = Unwrap(cmd::MakeCommand(name));
  Check(cmd::ApplyArguments(*command, positionals, options));
}

}  // namespace

void RegisterCommands(py::module_& m) {
  m.def("check_arguments", &CheckArguments, py::arg("name"), py::arg("positionals"),
        py::arg("options"));
  m.def("command_tables", &CommandTables);
  m.def("run_command", &RunCommand, py::arg("name"), py::arg("positionals"), py::arg("options"),
        py::arg("on_progress") = py::none());
}

}  // namespace onnxprobe::python
