// Internal: the processes behind an isolated side.
//
// The keeper is forked from this process when the side opens, before this process loads ONNX
// Runtime. It stays single-threaded, never loads a runtime, and forks workers on request, so each
// worker starts with no runtime loaded and no runtime threads inherited, holding (copy-on-write)
// the memory this process had when the side opened, the model included. A worker runs the side's
// runtime and serves requests over its own socket until the socket closes.
//
// Lifetimes: a worker dies with the keeper (PR_SET_PDEATHSIG; the keeper is single-threaded, so
// the signal cannot come from another thread's exit). The keeper watches its control socket and,
// when this process dies or drops it, kills its workers, reaps them and exits; it does not use
// PR_SET_PDEATHSIG because that fires when the *thread* that forked it exits, which would kill
// a side opened on a short-lived thread. This process reaps the keeper; the keeper reaps workers.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>

#include "side/wire.h"

namespace onnxprobe::isolation {

// Runs in a worker with its end of the socket; the worker exits when it returns.
using WorkerMain = std::function<void(int sock)>;

struct WorkerExit {
  int signal = 0;     // the signal that ended it; 0 when it exited
  int exit_code = 0;  // when it exited
};
// "SIGSEGV" / "exit status 1".
std::string ShortExitName(const WorkerExit& e);
// "SIGSEGV, segmentation fault" / "exit status 1".
std::string DescribeExit(const WorkerExit& e);

struct Worker {
  pid_t pid = -1;
  wire::UniqueFd sock;
};

class Keeper {
 public:
  // Forks the keeper. `worker_main` is copied into it and runs in every worker.
  static Expected<std::unique_ptr<Keeper>> Start(const WorkerMain& worker_main);
  ~Keeper();  // the keeper kills the workers still running, exits, and is reaped here
  Keeper(const Keeper&) = delete;
  Keeper& operator=(const Keeper&) = delete;

  // A fresh worker. `quiet`: it leaves no core dump when it crashes (the crash search crashes
  // workers on purpose).
  Expected<Worker> Spawn(bool quiet);
  // Ends `w` (SIGKILL when `kill`, else waits for it to exit) and says how it ended.
  Expected<WorkerExit> Reap(Worker* w, bool kill);
  pid_t pid() const { return pid_; }

 private:
  Keeper(pid_t pid, wire::UniqueFd ctrl) : pid_(pid), ctrl_(std::move(ctrl)) {}
  pid_t pid_ = -1;
  wire::UniqueFd ctrl_;
};

}  // namespace onnxprobe::isolation
