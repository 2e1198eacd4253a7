// A live side whose runtime runs in a child process, so that a runtime that crashes (a segfault in
// an execution provider or a custom op) fails one call instead of ending the comparison.
//
// How: OpenIsolatedLiveSide forks a small keeper process while this process has no ONNX Runtime
// loaded; the keeper forks the worker that loads the runtime and serves Fetch/RunOther/SetInputs
// over a Unix socket, tensors travelling in shared memory (memfd). Open isolated sides before
// anything in this process loads ONNX Runtime (any OpenLiveSide, LoadOrtBackend, or a runtime
// loaded by the host program): a process that has runtime threads cannot be forked safely, so
// that case fails with kUnsupported rather than risk a child that deadlocks.
#pragma once

#include <memory>
#include <string>

#include "onnxprobe/side/side.h"

namespace onnxprobe {

struct IsolationOptions {
  // After a crash while fetching, find the node that crashes by re-running growing prefixes of
  // the graph in fresh processes (a binary search: about log2(nodes) + 1 runs, each paying for
  // loading the runtime and creating a session).
  bool find_crashing_node = true;
  int max_search_runs = 24;  // the search stops here and reports the range it narrowed down
};

// A live side whose runtime runs in a child process. Same behaviour as OpenLiveSide; when the
// child dies (signal or exit), Fetch/RunOther/SetInputs fail with kBackend naming the signal,
// the operation and the last node known to have run, and the side stays failed.
// Fails with kUnsupported when ONNX Runtime is already loaded in this process, kBackend when the
// runtime cannot be loaded (or crashes while loading) in the child.
Expected<std::unique_ptr<Side>> OpenIsolatedLiveSide(const Model& model, const SideSpec& spec);
Expected<std::unique_ptr<Side>> OpenIsolatedLiveSide(const Model& model, const SideSpec& spec,
                                                     const IsolationOptions& options);

enum class CrashSearch {
  kNotRun,         // disabled, or the crash did not come from a fetch
  kFound,          // crashing_node crashes in a fresh process and its predecessors do not
  kNotReproduced,  // the same fetch in a fresh process did not crash
  kNarrowed,       // stopped at max_search_runs: the crash lies from `range_first` to crashing_node
  kFailed,         // a re-run failed otherwise (e.g. the runtime rejected a truncated graph)
};

struct RuntimeCrash {
  int signal = 0;         // the signal that ended the child; 0 when it exited
  int exit_code = 0;      // its exit status when it exited
  std::string exit_name;  // "SIGSEGV" or "exit status 1"
  std::string operation;  // "fetching 42 tensors", "running another model", "setting inputs"
  // The last node whose outputs this side delivered before the crash; "" when none.
  std::string last_node, last_op_type;
  CrashSearch search = CrashSearch::kNotRun;
  std::string crashing_node, crashing_op_type;  // kFound / kNarrowed
  std::string range_first;                      // kNarrowed: the first node it may be
  std::string search_error;                     // kFailed: why
  int search_runs = 0;                          // fresh processes the search started
};

// The crash that failed `side`; null when `side` is not isolated or has not crashed.
const RuntimeCrash* FindRuntimeCrash(const Side& side);

}  // namespace onnxprobe
