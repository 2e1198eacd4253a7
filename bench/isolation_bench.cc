// The cost of running a live side in a child process (OpenIsolatedLiveSide) against the same
// side in this process (OpenLiveSide), capturing every tensor of one model, measured side by side
// in one run:
//   one-shot     Fetch of every tensor by a side that does not keep its session (model rewrite,
//                session creation, run): what a one-shot comparison pays per batch
//   repeated     Fetch of every tensor by a side that keeps its session (I/O binding into reused
//                buffers): the steady state of repeated comparisons
//   open         opening the side (isolated: forking the keeper and the worker, loading the
//                runtime in the worker)
//   re-run       one step of the crashing-node search: a fresh worker, the graph cut out, a new
//                session and a run; the search takes about 1 + log2(nodes) of them
// Wall time on a shared machine is noisy; CPU time (this process plus its child processes, read
// through clock_getcpuclockid) is reported beside it. One intra-op thread by default, so that no
// spinning thread pool inflates CPU time.
// usage: isolation_bench MODEL [--runs N] [--threads N]
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "bench_util.h"
#include "onnxprobe/graph/graph.h"
#include "onnxprobe/side/isolated_side.h"

using namespace onnxprobe;         // NOLINT
using namespace onnxprobe::bench;  // NOLINT

namespace {

struct Sides {
  std::unique_ptr<Side> one_shot, repeated;
};

Sides Open(const Model& model, const SideSpec& base, bool isolated) {
  Sides s;
  for (bool keep : {false, true}) {
    SideSpec spec = base;
    spec.keep_session = keep;
    auto side = isolated ? OpenIsolatedLiveSide(model, spec) : OpenLiveSide(model, spec);
    Check(side.status());
    (keep ? s.repeated : s.one_shot) = std::move(*side);
  }
  return s;
}

// CPU clocks of every process descending from this one (the keepers and workers).
std::vector<clockid_t> DescendantClocks() {
  std::map<pid_t, pid_t> parent;
  DIR* d = opendir("/proc");
  while (struct dirent* e = d != nullptr ? readdir(d) : nullptr) {
    pid_t pid = std::atoi(e->d_name);
    std::ifstream f("/proc/" + std::string(e->d_name) + "/stat");
    std::string line;
    if (pid <= 0 || !std::getline(f, line) || line.rfind(')') == std::string::npos) continue;
    char state = 0;
    pid_t ppid = 0;
    std::sscanf(line.c_str() + line.rfind(')') + 2, "%c %d", &state, &ppid);
    parent[pid] = ppid;
  }
  if (d != nullptr) closedir(d);
  std::set<pid_t> mine = {getpid()};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [pid, ppid] : parent) {
      if (mine.count(ppid) && mine.insert(pid).second) grew = true;
    }
  }
  std::vector<clockid_t> clocks;
  for (pid_t pid : mine) {
    clockid_t c;
    if (pid != getpid() && clock_getcpuclockid(pid, &c) == 0) clocks.push_back(c);
  }
  return clocks;
}

double CpuMs(const std::vector<clockid_t>& children) {
  double ms = 0;
  std::vector<clockid_t> all = children;
  all.push_back(CLOCK_PROCESS_CPUTIME_ID);
  for (clockid_t c : all) {
    struct timespec ts {};
    if (clock_gettime(c, &ts) == 0) ms += ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
  }
  return ms;
}

struct Cost {
  double wall = 0, cpu = 0;
};

// Medians of wall and CPU time of `runs` calls of `f`.
template <typename F>
Cost Measure(int runs, const std::vector<clockid_t>& clocks, F&& f) {
  std::vector<double> wall, cpu;
  for (int i = 0; i < runs; ++i) {
    double c0 = CpuMs(clocks);
    auto t0 = Clock::now();
    f();
    wall.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    cpu.push_back(CpuMs(clocks) - c0);
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  return {wall[wall.size() / 2], cpu[cpu.size() / 2]};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: isolation_bench MODEL [--runs N] [--threads N]\n");
    return 2;
  }
  std::string path = argv[1];
  int runs = 10, threads = 1;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--runs") runs = std::atoi(argv[i + 1]);
    if (a == "--threads") threads = std::atoi(argv[i + 1]);
  }
  auto model = Model::Load(path);
  Check(model.status());
  InputOptions io;
  io.dim_params["batch"] = 1;
  auto inputs = PrepareInputs(*model, io);
  Check(inputs.status());
  SideSpec spec;
  spec.path = path;
  spec.session.intra_op_threads = threads;

  // isolated sides first: they must fork before this process loads the runtime
  auto t0 = Clock::now();
  auto probe = OpenIsolatedLiveSide(*model, spec);
  Check(probe.status());
  double t_open_isolated = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  Sides iso = Open(*model, spec, true);
  Sides in = Open(*model, spec, false);
  for (Side* s :
       {iso.one_shot.get(), iso.repeated.get(), in.one_shot.get(), in.repeated.get(), probe->get()})
    Check(s->SetInputs(*inputs));
  std::vector<std::string> names;
  for (const auto& t : in.one_shot->tensors()) names.push_back(t.name);

  // the same tensors, bit for bit
  auto a = iso.one_shot->Fetch(names);
  auto b = in.one_shot->Fetch(names);
  Check(a.status());
  Check(b.status());
  uint64_t bytes = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    bytes += (*b)[i].tensor.byte_size();
    if (!(*a)[i].tensor.BitwiseEqual((*b)[i].tensor)) {
      std::fprintf(stderr, "bench: tensor '%s' differs between the sides\n", names[i].c_str());
      return 2;
    }
  }
  auto fetch = [&](Side* s) { return [s, &names] { Check(s->Fetch(names).status()); }; };
  for (int i = 0; i < 2; ++i) {  // warm up
    fetch(iso.repeated.get())();
    fetch(in.repeated.get())();
  }
  std::vector<clockid_t> clocks = DescendantClocks();
  // interleaved rounds, so drift affects both alike
  Cost iso_once, in_once, iso_rep, in_rep;
  const int rounds = 3;
  auto add = [&](Cost* sum, Cost c) {
    sum->wall += c.wall / rounds;
    sum->cpu += c.cpu / rounds;
  };
  for (int r = 0; r < rounds; ++r) {
    add(&iso_once, Measure(std::max(1, runs / 3), clocks, fetch(iso.one_shot.get())));
    add(&in_once, Measure(std::max(1, runs / 3), clocks, fetch(in.one_shot.get())));
    add(&iso_rep, Measure(runs, clocks, fetch(iso.repeated.get())));
    add(&in_rep, Measure(runs, clocks, fetch(in.repeated.get())));
  }

  // one step of the crash search, on the worker of an isolated side: cut out the whole graph,
  // create a session, run (the search also starts a fresh worker per step: `open` above)
  SubgraphSpec all;
  for (size_t i = 0; i < model->index().nodes().size(); ++i) all.nodes.push_back(int(i));
  for (const auto& in_t : *inputs) {
    all.inputs.push_back(in_t.name);
    all.input_types.emplace_back(in_t.tensor.dtype(), in_t.tensor.shape());
  }
  for (const auto& o : model->summary().outputs) all.outputs.push_back(o.name);
  std::vector<std::pair<std::string, const Tensor*>> refs;
  for (const auto& nt : *inputs) refs.emplace_back(nt.name, &nt.tensor);
  std::string cut;
  double t_cut = MedianMs(3, [&] {
    auto bytes = ExtractSubgraph(*model, all);
    Check(bytes.status());
    cut = std::move(*bytes);
  });
  double t_run_cut = MedianMs(
      3, [&] { Check((*probe)->RunOther(cut, model->dir(), refs, all.outputs).status()); });
  double t_rerun = t_cut + t_run_cut;
  size_t nodes = model->index().nodes().size();
  int steps = 1 + static_cast<int>(std::ceil(std::log2(static_cast<double>(nodes))));

  std::printf("%s: %zu tensors (%.1f MiB) per fetch, %s, %d intra-op threads, median of %d runs\n",
              std::filesystem::path(path).filename().c_str(), names.size(), bytes / 1048576.0,
              iso.one_shot->info().runtime.c_str(), threads, runs);
  std::printf(
      "                     wall: in-process  isolated  ratio    CPU: in-process  isolated  "
      "ratio\n");
  for (auto [label, in_c, iso_c] : {std::make_tuple("one-shot fetch", in_once, iso_once),
                                    std::make_tuple("repeated fetch", in_rep, iso_rep)}) {
    std::printf("  %-16s %12.2f ms %8.2f ms %5.2fx %13.2f ms %8.2f ms %5.2fx\n", label, in_c.wall,
                iso_c.wall, iso_c.wall / in_c.wall, in_c.cpu, iso_c.cpu, iso_c.cpu / in_c.cpu);
  }
  std::printf("  open an isolated side %.1f ms (fork, load the runtime in the child)\n",
              t_open_isolated);
  std::printf(
      "  crash search, per re-run: %.1f ms to cut the graph out, %.1f ms to send, load and run it, "
      "plus an open; %d re-runs for %zu nodes: about %.1f s\n",
      t_cut, t_run_cut, steps, nodes, steps * (t_rerun + t_open_isolated) / 1000.0);
  return 0;
}
