// The keeper process and the workers it forks (see child_process.h for the lifetimes).
#include "side/child_process.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

namespace onnxprobe::isolation {
namespace {

using wire::MsgType;

// Handlers installed by the host program (e.g. a CLI that removes temporaries on SIGINT) must not
// run in the children. An interrupt from the terminal reaches the whole process group: the
// children ignore it and leave the decision to this process, whose exit ends them.
void ResetSignals() {
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    signal(sig, SIG_DFL);
  }
  signal(SIGINT, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

// Descriptors inherited from the host (pipes to other programs, files) would otherwise stay open
// as long as the keeper lives, and a reader waiting for the end of such a pipe would wait for it.
void CloseInheritedFds(int keep) {
  if (keep > 3) close_range(3, static_cast<unsigned>(keep - 1), 0);
  if (close_range(static_cast<unsigned>(keep + 1), ~0u, 0) == 0) return;
  long max = sysconf(_SC_OPEN_MAX);  // kernels before 5.9
  for (long fd = keep + 1; fd < (max > 0 ? max : 65536); ++fd) close(static_cast<int>(fd));
}

pid_t WaitFor(pid_t pid, int* status) {
  pid_t r;
  do {
    r = waitpid(pid, status, 0);
  } while (r < 0 && errno == EINTR);
  return r;
}

[[noreturn]] void RunWorker(int sock, bool quiet, pid_t keeper, const WorkerMain& main) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != keeper) _exit(1);  // the keeper died before the line above
  if (quiet) {
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
  }
  main(sock);
  _exit(0);  // no static destructors: the runtime's may block or crash
}

[[noreturn]] void RunKeeper(int ctrl, const WorkerMain& worker_main) {
  ResetSignals();
  CloseInheritedFds(ctrl);
  std::set<pid_t> workers;
  for (;;) {
    auto m = wire::Receive(ctrl);
    if (!m.ok() || m->type == MsgType::kClosed) break;
    wire::Reader r(m->payload);
    wire::Writer w;
    if (m->type == MsgType::kSpawn) {
      bool quiet = r.U8() != 0;
      int sv[2];
      if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        w.Stat(ResourceExhausted(std::string("socketpair: ") + std::strerror(errno)));
        w.I64(-1);
        if (!wire::Send(ctrl, MsgType::kSpawned, w.bytes()).ok()) break;
        continue;
      }
      pid_t keeper = getpid();
      pid_t pid = fork();
      if (pid == 0) {
        close(ctrl);
        close(sv[0]);
        RunWorker(sv[1], quiet, keeper, worker_main);
      }
      close(sv[1]);
      if (pid < 0) {
        w.Stat(ResourceExhausted(std::string("fork: ") + std::strerror(errno)));
      } else {
        workers.insert(pid);
        w.Stat(Status::Ok());
      }
      w.I64(pid);
      Status sent = wire::Send(ctrl, MsgType::kSpawned, w.bytes(), pid > 0 ? sv[0] : -1);
      close(sv[0]);
      if (!sent.ok()) break;
    } else if (m->type == MsgType::kReap) {
      pid_t pid = static_cast<pid_t>(r.I64());
      bool kill_it = r.U8() != 0;
      int status = 0;
      if (!r.done() || workers.count(pid) == 0) {
        w.Stat(InvalidArgument("process " + std::to_string(pid) + " is not a worker"));
      } else {
        if (kill_it) kill(pid, SIGKILL);
        workers.erase(pid);
        if (WaitFor(pid, &status) == pid) {
          w.Stat(Status::Ok());
        } else {
          w.Stat(BackendError(std::string("waitpid: ") + std::strerror(errno)));
        }
      }
      w.I64(status);
      if (!wire::Send(ctrl, MsgType::kReaped, w.bytes()).ok()) break;
    } else {
      break;
    }
  }
  for (pid_t pid : workers) {
    kill(pid, SIGKILL);
    int status = 0;
    WaitFor(pid, &status);
  }
  _exit(0);
}

}  // namespace

std::string ShortExitName(const WorkerExit& e) {
  if (e.signal == 0) return "exit status " + std::to_string(e.exit_code);
  const char* abbrev = sigabbrev_np(e.signal);
  return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(e.signal);
}

std::string DescribeExit(const WorkerExit& e) {
  if (e.signal == 0) return ShortExitName(e);
  const char* what = sigdescr_np(e.signal);
  return ShortExitName(e) + (what != nullptr ? std::string(", ") + what : std::string());
}

Expected<std::unique_ptr<Keeper>> Keeper::Start(const WorkerMain& worker_main) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return ResourceExhausted(std::string("socketpair: ") + std::strerror(errno));
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(sv[0]);
    close(sv[1]);
    return ResourceExhausted(std::string("cannot start a child process: ") + std::strerror(err));
  }
  if (pid == 0) {
    close(sv[0]);
    RunKeeper(sv[1], worker_main);
  }
  close(sv[1]);
  return std::unique_ptr<Keeper>(new Keeper(pid, wire::UniqueFd(sv[0])));
}

Keeper::~Keeper() {
  ctrl_.reset();  // the keeper sees the end of its socket, ends its workers and exits
  int status = 0;
  WaitFor(pid_, &status);  // ECHILD when the host ignores SIGCHLD: nothing left to reap then
}

Expected<Worker> Keeper::Spawn(bool quiet) {
  wire::Writer w;
  w.U8(quiet ? 1 : 0);
  OP_RETURN_IF_ERROR(wire::Send(ctrl_.get(), MsgType::kSpawn, w.bytes()).WithContext("keeper"));
  OP_ASSIGN_OR_RETURN(wire::Message m, wire::Receive(ctrl_.get()));
  if (m.type != MsgType::kSpawned) return BackendError("the keeper process is gone");
  wire::Reader r(m.payload);
  Status st = r.Stat();
  Worker worker;
  worker.pid = static_cast<pid_t>(r.I64());
  OP_RETURN_IF_ERROR(r.Finish("spawn"));
  OP_RETURN_IF_ERROR(st);
  if (!m.fd.valid()) return Corrupt("the keeper process sent no socket");
  worker.sock = std::move(m.fd);
  return worker;
}

Expected<WorkerExit> Keeper::Reap(Worker* worker, bool kill) {
  worker->sock.reset();
  wire::Writer w;
  w.I64(worker->pid);
  w.U8(kill ? 1 : 0);
  worker->pid = -1;
  OP_RETURN_IF_ERROR(wire::Send(ctrl_.get(), MsgType::kReap, w.bytes()).WithContext("keeper"));
  OP_ASSIGN_OR_RETURN(wire::Message m, wire::Receive(ctrl_.get()));
  if (m.type != MsgType::kReaped) return BackendError("the keeper process is gone");
  wire::Reader r(m.payload);
  Status st = r.Stat();
  int status = static_cast<int>(r.I64());
  OP_RETURN_IF_ERROR(r.Finish("reap"));
  OP_RETURN_IF_ERROR(st);
  WorkerExit e;
  if (WIFSIGNALED(status)) {
    e.signal = WTERMSIG(status);
  } else if (WIFEXITED(status)) {
    e.exit_code = WEXITSTATUS(status);
  }
  return e;
}

}  // namespace onnxprobe::isolation
