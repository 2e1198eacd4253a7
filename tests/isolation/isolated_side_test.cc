// Isolated live sides: same tensors as an in-process run, and a runtime crash (a segfaulting
// custom op, tests/custom_op/crash_op.cc) that fails a call instead of the process.
//
// This binary never loads ONNX Runtime itself: isolated sides must be opened before that. The
// in-process reference runs happen in forked children of the test that write .npy files.
#include "onnxprobe/side/isolated_side.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "onnxprobe/capture/capture.h"
#include "onnxprobe/tensor/npy.h"

namespace onnxprobe {
namespace {

namespace fs = std::filesystem;

const std::string kCrashModel = std::string(ONNXPROBE_TEST_SRC) + "/custom_op/crash_model.onnx";
const std::string kDemo = std::string(ONNXPROBE_TEST_SRC) + "/data/demo/demo_cnn.onnx";
const std::vector<std::string> kAll = {"a", "b", "z", "c", "d", "y"};

SideSpec CrashSpec() {
  SideSpec spec;
  spec.path = kCrashModel;
  spec.session.custom_op_libraries = {ONNXPROBE_CRASH_OP_LIB};
  return spec;
}

std::vector<NamedTensor> CrashInput(float first) {
  auto t = Tensor::Allocate(DType::kFloat32, {1, 8});
  float* x = t->data_as<float>();
  for (int i = 0; i < 8; ++i) x[i] = -1.75f + 0.5f * static_cast<float>(i);
  x[0] = first;
  return {{"x", std::move(*t)}};
}

// Parent pid and state of every process, from /proc.
struct Proc {
  pid_t ppid;
  char state;
};
std::map<pid_t, Proc> Processes() {
  std::map<pid_t, Proc> out;
  DIR* d = opendir("/proc");
  while (struct dirent* e = d != nullptr ? readdir(d) : nullptr) {
    pid_t pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(f, line)) continue;
    size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    Proc p{};
    rest >> p.state >> p.ppid;
    out[pid] = p;
  }
  if (d != nullptr) closedir(d);
  return out;
}

// Processes descending from `root`, with their states.
std::map<pid_t, char> Descendants(pid_t root) {
  auto all = Processes();
  std::map<pid_t, char> out;
  std::set<pid_t> frontier = {root};
  while (!frontier.empty()) {
    std::set<pid_t> next;
    for (const auto& [pid, p] : all) {
      if (frontier.count(p.ppid) && !out.count(pid)) {
        out[pid] = p.state;
        next.insert(pid);
      }
    }
    frontier = next;
  }
  return out;
}

int Zombies(const std::map<pid_t, char>& procs) {
  int n = 0;
  for (const auto& [pid, state] : procs) n += state == 'Z';
  return n;
}

// The reference: the same fetch by an ordinary in-process live side, run in a forked child of
// this test (so that this process never loads the runtime) and handed back as .npy files.
std::vector<Tensor> InProcessFetch(const std::string& model_path, const SideSpec& spec,
                                   const std::vector<NamedTensor>& inputs,
                                   const std::vector<std::string>& names) {
  fs::path dir = fs::temp_directory_path() / ("onnxprobe-isolation-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  pid_t pid = fork();
  if (pid == 0) {
    auto model = Model::Load(model_path);
    if (!model.ok()) _exit(10);
    auto side = OpenLiveSide(*model, spec);
    if (!side.ok()) _exit(11);
    if (!(*side)->SetInputs(inputs).ok()) _exit(12);
    auto out = (*side)->Fetch(names);
    if (!out.ok()) _exit(13);
    for (size_t i = 0; i < out->size(); ++i) {
      if (!WriteNpy((dir / (std::to_string(i) + ".npy")).string(), (*out)[i].tensor).ok())
        _exit(14);
    }
    _exit(0);
  }
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "reference run status " << status;
  std::vector<Tensor> out;
  for (size_t i = 0; i < names.size(); ++i) {
    auto t = ReadNpy((dir / (std::to_string(i) + ".npy")).string());
    EXPECT_TRUE(t.ok()) << names[i];
    out.push_back(t.ok() ? std::move(*t) : Tensor());
  }
  fs::remove_all(dir);
  return out;
}

TEST(IsolatedSide, SafeInputGivesTheValuesOfTheGraphAndOfAnInProcessRun) {
  auto model = Model::Load(kCrashModel);
  ASSERT_TRUE(model.ok()) << model.status().message();
  auto side = OpenIsolatedLiveSide(*model, CrashSpec());
  ASSERT_TRUE(side.ok()) << side.status().message();
  EXPECT_EQ((*side)->info().kind, SideKind::kLive);
  EXPECT_EQ((*side)->info().runtime, "onnxruntime " + (*side)->info().runtime_version);
  EXPECT_EQ((*side)->info().runtime.rfind("onnxruntime 1.", 0), 0u) << (*side)->info().runtime;
  EXPECT_EQ((*side)->info().model_sha256, model->Hashes(false).sha256);
  ASSERT_EQ((*side)->tensors().size(), kAll.size());
  auto inputs = CrashInput(0.25f);
  ASSERT_TRUE((*side)->SetInputs(inputs).ok());
  EXPECT_EQ((*side)->tensors()[0].est_bytes, 32u);
  auto out = (*side)->Fetch(kAll);
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_EQ(out->size(), kAll.size());
  // the graph by hand: a = x + 1, b = 2a, z = -x, c = b, d = relu(c), y = d - 1
  const float* x = inputs[0].tensor.data_as<float>();
  for (int i = 0; i < 8; ++i) {
    float a = x[i] + 1.0f, b = a * 2.0f, d = b > 0 ? b : 0.0f;
    float expect[] = {a, b, -x[i], b, d, d - 1.0f};
    for (size_t k = 0; k < kAll.size(); ++k) {
      EXPECT_EQ((*out)[k].name, kAll[k]);
      EXPECT_EQ((*out)[k].tensor.data_as<float>()[i], expect[k]) << kAll[k] << "[" << i << "]";
    }
  }
  auto ref = InProcessFetch(kCrashModel, CrashSpec(), inputs, kAll);
  for (size_t k = 0; k < kAll.size(); ++k)
    EXPECT_TRUE((*out)[k].tensor.BitwiseEqual(ref[k])) << kAll[k];
  EXPECT_EQ((*side)->runs(), 1u);
  EXPECT_EQ(FindRuntimeCrash(**side), nullptr);
}

TEST(IsolatedSide, CrashNamesSignalAndNodeAndLeavesNoZombie) {
  auto model = Model::Load(kCrashModel);
  ASSERT_TRUE(model.ok());
  {
    auto side = OpenIsolatedLiveSide(*model, CrashSpec());
    ASSERT_TRUE(side.ok()) << side.status().message();
    auto inputs = CrashInput(5.5f);  // CrashOp sees (5.5 + 1) * 2 = 13
    ASSERT_TRUE((*side)->SetInputs(inputs).ok());
    auto out = (*side)->Fetch(kAll);
    ASSERT_FALSE(out.ok());
    const Status& st = out.status();
    EXPECT_EQ(st.code(), ErrorCode::kBackend);
    EXPECT_NE(st.message().find("crashed (SIGSEGV"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("while fetching 6 tensors"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("at node 'crash' (CrashOp) and not before it"), std::string::npos)
        << st.message();
    EXPECT_NE(st.message().find("no node of this side is known to have run"), std::string::npos)
        << st.message();
    const RuntimeCrash* crash = FindRuntimeCrash(**side);
    ASSERT_NE(crash, nullptr);
    EXPECT_EQ(crash->signal, SIGSEGV);
    EXPECT_EQ(crash->exit_name, "SIGSEGV");
    EXPECT_EQ(crash->operation, "fetching 6 tensors");
    EXPECT_EQ(crash->search, CrashSearch::kFound);
    EXPECT_EQ(crash->crashing_node, "crash");
    EXPECT_EQ(crash->crashing_op_type, "CrashOp");
    EXPECT_EQ(crash->last_node, "");
    // 6 nodes: the whole graph again (crashes), then prefixes ending at neg (runs), relu
    // (crashes), crash (crashes)
    EXPECT_EQ(crash->search_runs, 4);

    // the side stays failed, with the same report, and runs nothing more
    auto again = (*side)->Fetch({"a"});
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.status().message(), st.message());
    EXPECT_FALSE((*side)->SetInputs(inputs).ok());
    // the keeper lives on; the crashed worker and the search's workers were reaped
    auto procs = Descendants(getpid());
    EXPECT_EQ(procs.size(), 1u);
    EXPECT_EQ(Zombies(procs), 0);
  }
  // closing the side ends and reaps everything it started
  EXPECT_TRUE(Descendants(getpid()).empty());
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST(IsolatedSide, CrashThatAFreshProcessDoesNotReproduceNamesTheLastNodeKnown) {
  auto model = Model::Load(kCrashModel);
  ASSERT_TRUE(model.ok());
  SideSpec spec = CrashSpec();
  spec.keep_session = true;  // one session, so the custom op library stays loaded between runs
  auto side = OpenIsolatedLiveSide(*model, spec);
  ASSERT_TRUE(side.ok()) << side.status().message();
  auto inputs = CrashInput(7.0f);  // CrashOp sees 16: it crashes from its second run on
  ASSERT_TRUE((*side)->SetInputs(inputs).ok());
  auto first = (*side)->Fetch({"a", "z", "c"});
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->at(2).tensor.data_as<float>()[0], 16.0f);
  auto out = (*side)->Fetch({"a", "z", "c"});
  ASSERT_FALSE(out.ok());
  const RuntimeCrash* crash = FindRuntimeCrash(**side);
  ASSERT_NE(crash, nullptr);
  EXPECT_EQ(crash->search, CrashSearch::kNotReproduced);
  EXPECT_EQ(crash->search_runs, 1);
  EXPECT_EQ(crash->last_node, "crash");  // the latest producer of a tensor delivered
  EXPECT_EQ(crash->last_op_type, "CrashOp");
  EXPECT_NE(out.status().message().find("the same nodes ran without crashing"), std::string::npos)
      << out.status().message();
  EXPECT_NE(out.status().message().find("last node known to have run: 'crash' (CrashOp)"),
            std::string::npos)
      << out.status().message();
}

TEST(IsolatedSide, SearchStopsAtItsBudgetWithARange) {
  auto model = Model::Load(kCrashModel);
  ASSERT_TRUE(model.ok());
  IsolationOptions opts;
  opts.max_search_runs = 1;  // only the re-run of the whole graph
  auto side = OpenIsolatedLiveSide(*model, CrashSpec(), opts);
  ASSERT_TRUE(side.ok()) << side.status().message();
  auto inputs = CrashInput(5.5f);
  ASSERT_TRUE((*side)->SetInputs(inputs).ok());
  auto out = (*side)->Fetch({"y"});
  ASSERT_FALSE(out.ok());
  const RuntimeCrash* crash = FindRuntimeCrash(**side);
  ASSERT_NE(crash, nullptr);
  EXPECT_EQ(crash->search, CrashSearch::kNarrowed);
  EXPECT_EQ(crash->search_runs, 1);
  EXPECT_EQ(crash->range_first, "add");  // first and last nodes in topological order
  EXPECT_EQ(crash->crashing_node, "sub");
  EXPECT_NE(out.status().message().find("from 'add' to 'sub'"), std::string::npos)
      << out.status().message();
}

TEST(IsolatedSide, SearchCanBeTurnedOff) {
  auto model = Model::Load(kCrashModel);
  ASSERT_TRUE(model.ok());
  IsolationOptions opts;
  opts.find_crashing_node = false;
  auto side = OpenIsolatedLiveSide(*model, CrashSpec(), opts);
  ASSERT_TRUE(side.ok()) << side.status().message();
  auto inputs = CrashInput(5.5f);
  ASSERT_TRUE((*side)->SetInputs(inputs).ok());
  ASSERT_FALSE((*side)->Fetch({"y"}).ok());
  ASSERT_NE(FindRuntimeCrash(**side), nullptr);
  EXPECT_EQ(FindRuntimeCrash(**side)->search, CrashSearch::kNotRun);
  EXPECT_EQ(FindRuntimeCrash(**side)->search_runs, 0);
}

TEST(IsolatedSide, CrashInAnotherModelRunIsReportedWithoutSearch) {
  auto model = Model::Load(kCrashModel);
  ASSERT_TRUE(model.ok());
  auto side = OpenIsolatedLiveSide(*model, CrashSpec());
  ASSERT_TRUE(side.ok()) << side.status().message();
  std::ifstream f(kCrashModel, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto safe = CrashInput(1.0f);
  auto ok = (*side)->RunOther(bytes, fs::path(kCrashModel).parent_path().string(),
                              {{"x", &safe[0].tensor}}, {"y"});
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->at(0).tensor.data_as<float>()[0], 3.0f);  // (1 + 1) * 2 - 1
  auto bad = CrashInput(5.5f);
  auto out = (*side)->RunOther(bytes, "", {{"x", &bad[0].tensor}}, {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), ErrorCode::kBackend);
  EXPECT_NE(out.status().message().find("SIGSEGV"), std::string::npos);
  EXPECT_NE(out.status().message().find("while running another model (1 output)"),
            std::string::npos)
      << out.status().message();
  ASSERT_NE(FindRuntimeCrash(**side), nullptr);
  EXPECT_EQ(FindRuntimeCrash(**side)->search, CrashSearch::kNotRun);
}

TEST(IsolatedSide, DemoModelTensorsAreBitwiseThoseOfAnInProcessRun) {
  auto model = Model::Load(kDemo);
  ASSERT_TRUE(model.ok());
  for (bool keep : {false, true}) {
    SideSpec spec;
    spec.path = kDemo;
    spec.keep_session = keep;
    auto side = OpenIsolatedLiveSide(*model, spec);
    ASSERT_TRUE(side.ok()) << side.status().message();
    InputOptions io;
    io.dim_params["batch"] = 3;
    io.seed = 7;
    auto inputs = PrepareInputs(*model, io);
    ASSERT_TRUE(inputs.ok());
    ASSERT_TRUE((*side)->SetInputs(*inputs).ok());
    std::vector<std::string> names;
    for (const auto& t : (*side)->tensors()) names.push_back(t.name);
    ASSERT_EQ(names.size(), 10u);
    auto ref = InProcessFetch(kDemo, spec, *inputs, names);
    for (int round = 0; round < 2; ++round) {
      auto out = (*side)->Fetch(names);
      ASSERT_TRUE(out.ok()) << out.status().message();
      for (size_t k = 0; k < names.size(); ++k) {
        EXPECT_EQ((*out)[k].name, names[k]);
        EXPECT_TRUE((*out)[k].tensor.BitwiseEqual(ref[k])) << names[k] << " keep=" << keep;
      }
    }
  }
}

// The names an in-process live side lists and hides after SetInputs, from a forked child.
std::pair<std::vector<std::string>, std::vector<std::string>> InProcessLists(
    const std::string& model_path, const SideSpec& spec, const std::vector<NamedTensor>& inputs) {
  fs::path file = fs::temp_directory_path() / ("onnxprobe-lists-" + std::to_string(getpid()));
  pid_t pid = fork();
  if (pid == 0) {
    auto model = Model::Load(model_path);
    if (!model.ok()) _exit(10);
    auto side = OpenLiveSide(*model, spec);
    if (!side.ok() || !(*side)->SetInputs(inputs).ok()) _exit(11);
    std::ofstream out(file);
    for (const auto& t : (*side)->tensors()) out << "T " << t.name << "\n";
    for (const auto& h : (*side)->hidden()) out << "H " << h << "\n";
    out.close();  // _exit flushes nothing
    _exit(out.good() ? 0 : 12);
  }
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "reference run status " << status;
  std::pair<std::vector<std::string>, std::vector<std::string>> lists;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    (line[0] == 'T' ? lists.first : lists.second).push_back(line.substr(2));
  }
  fs::remove(file);
  return lists;
}

TEST(IsolatedSide, OptimizedSideListsAndHidesWhatAnInProcessSideDoes) {
  auto model = Model::Load(kDemo);
  ASSERT_TRUE(model.ok());
  SideSpec spec;
  spec.path = kDemo;
  spec.session.optimization_level = OptLevel::kAll;
  auto side = OpenIsolatedLiveSide(*model, spec);
  ASSERT_TRUE(side.ok()) << side.status().message();
  InputOptions io;
  io.dim_params["batch"] = 2;
  auto inputs = PrepareInputs(*model, io);
  ASSERT_TRUE(inputs.ok());
  ASSERT_TRUE((*side)->SetInputs(*inputs).ok());
  auto [listed, hidden] = InProcessLists(kDemo, spec, *inputs);
  std::vector<std::string> names;
  for (const auto& t : (*side)->tensors()) names.push_back(t.name);
  EXPECT_EQ(names, listed);
  EXPECT_EQ((*side)->hidden(), hidden);
  EXPECT_FALSE(hidden.empty());  // the runtime fuses something in this model
  auto out = (*side)->Fetch(names);
  ASSERT_TRUE(out.ok()) << out.status().message();
  auto ref = InProcessFetch(kDemo, spec, *inputs, names);
  for (size_t k = 0; k < names.size(); ++k)
    EXPECT_TRUE((*out)[k].tensor.BitwiseEqual(ref[k])) << names[k];
}

TEST(IsolatedSide, TensorsStillHeldSurviveLaterFetches) {
  // a side that does not keep its session reuses the shared memory of fetches whose tensors were
  // released, and only of those
  auto model = Model::Load(kDemo);
  ASSERT_TRUE(model.ok());
  SideSpec spec;
  spec.path = kDemo;
  auto side = OpenIsolatedLiveSide(*model, spec);
  ASSERT_TRUE(side.ok()) << side.status().message();
  std::vector<std::vector<NamedTensor>> inputs;
  for (uint64_t seed : {1, 2}) {
    InputOptions io;
    io.dim_params["batch"] = 2;
    io.seed = seed;
    auto in = PrepareInputs(*model, io);
    ASSERT_TRUE(in.ok());
    inputs.push_back(std::move(*in));
  }
  std::vector<std::string> names;
  for (const auto& t : (*side)->tensors()) names.push_back(t.name);
  std::vector<std::vector<Tensor>> ref;
  for (const auto& in : inputs) ref.push_back(InProcessFetch(kDemo, spec, in, names));
  auto fetch = [&](int k) {
    EXPECT_TRUE((*side)->SetInputs(inputs[k]).ok());
    auto out = (*side)->Fetch(names);
    EXPECT_TRUE(out.ok()) << out.status().message();
    return out.ok() ? std::move(*out) : std::vector<RunOutput>();
  };
  auto same = [&](const std::vector<RunOutput>& got, int k) {
    ASSERT_EQ(got.size(), names.size());
    for (size_t i = 0; i < names.size(); ++i)
      EXPECT_TRUE(got[i].tensor.BitwiseEqual(ref[k][i])) << names[i] << " of inputs " << k;
  };
  auto first = fetch(0);
  auto second = fetch(1);
  same(first, 0);
  first.clear();
  auto third = fetch(0);  // may reuse the first fetch's memory, never the second's
  same(second, 1);
  same(third, 0);
  second.clear();
  auto fourth = fetch(1);
  same(third, 0);
  same(fourth, 1);
}

TEST(IsolatedSide, RefusesOnceTheRuntimeIsLoadedInProcess) {
  pid_t pid = fork();
  if (pid == 0) {
    auto model = Model::Load(kDemo);
    auto backend = LoadOrtBackend();
    if (!model.ok() || !backend.ok()) _exit(10);
    SideSpec spec;
    auto side = OpenIsolatedLiveSide(*model, spec);
    if (side.ok()) _exit(11);
    if (side.status().code() != ErrorCode::kUnsupported) _exit(12);
    if (side.status().message().find("already loaded") == std::string::npos) _exit(13);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(IsolatedSide, ChildrenEndWhenTheHostDies) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t host = fork();
  if (host == 0) {
    close(ready[0]);
    auto model = Model::Load(kDemo);
    if (!model.ok()) _exit(10);
    SideSpec spec;
    auto side = OpenIsolatedLiveSide(*model, spec);
    if (!side.ok()) _exit(11);
    char c = 1;
    if (write(ready[1], &c, 1) != 1) _exit(12);
    pause();
    _exit(0);
  }
  close(ready[1]);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  auto children = Descendants(host);
  ASSERT_EQ(children.size(), 2u);  // the keeper and its worker
  kill(host, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(host, &status, 0), host);
  // orphans are reaped by init (or a subreaper): wait until none runs
  auto alive = [&] {
    int n = 0;
    for (const auto& [pid, state] : children) {
      std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
      std::string line;
      if (std::getline(f, line) && line.find(") Z") == std::string::npos) ++n;
    }
    return n;
  };
  // up to 30 s: a loaded 2-core machine under a sanitizer can be slow to schedule the exits
  for (int i = 0; i < 600 && alive() > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(alive(), 0);
}

}  // namespace
}  // namespace onnxprobe
