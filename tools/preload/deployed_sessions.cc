#include "deployed_sessions.h"

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <unordered_map>

#include "onnxprobe/preload/probe.h"

namespace onnxprobe::preload {
namespace {

struct Session {
  int index = 0;  // 1-based, in creation order
  std::string model_path;
  std::shared_ptr<const std::string> model_bytes;  // sessions created from memory
  RecordedOptions options;
  std::atomic<uint64_t> runs{0};
  std::atomic<uint64_t> captures{0};
  std::atomic<bool> off{false};
  // used by the worker only
  std::unique_ptr<Probe> probe;
};

struct Job {
  std::shared_ptr<Session> session;
  uint64_t run = 0;
  std::vector<NamedTensor> inputs;
};

// Queued captures the application may get ahead of the worker by before a capturing run waits.
constexpr size_t kMaxQueued = 4;

struct State {
  PreloadConfig config;
  const OrtApi* api = nullptr;
  std::string ort_library;
  std::shared_mutex sessions_mu;
  std::unordered_map<const OrtSession*, std::shared_ptr<Session>> sessions;
  std::atomic<int> next_index{1};
  std::mutex queue_mu;
  std::condition_variable queue_cv;
  std::deque<Job> queue;
  bool stopping = false, worker_started = false;
  std::thread worker;
  std::mutex first_mu;  // the process's first capture runs on the application's thread
  std::atomic<bool> first_done{false};
};

State& S() {
  static auto* s = new State();  // never destroyed: the worker may outlive static destructors
  return *s;
}

void Say(const std::string& line) {
  std::string msg = "onnxprobe preload: " + line + "\n";
  (void)!write(2, msg.data(), msg.size());
}

std::string SessionFolder(const Session& s) {
  return S().config.dir + "/" + std::to_string(getpid()) + "-session" + std::to_string(s.index);
}

// One line per session, then the session captures nothing more. Its folder goes too when nothing
// was captured into it (remove() takes only an empty folder).
void TurnOff(Session& s, const std::string& variable, const std::string& message) {
  if (s.off.exchange(true)) return;
  std::error_code ec;
  std::filesystem::remove(SessionFolder(s), ec);
  Say(variable + ": " + message + "; capture is off for session " + std::to_string(s.index));
}

void RunJob(Job& job) {
  Session& s = *job.session;
  if (s.off) return;
  std::string folder = SessionFolder(s);
  if (!s.probe) {
    std::error_code ec;
    std::filesystem::create_directories(folder, ec);
    std::string model = s.model_path;
    if (s.model_bytes) {  // a session made from memory: keep its model next to its dumps
      model = folder + "/model.onnx";
      FILE* f = std::fopen((model + ".tmp").c_str(), "wb");
      bool ok = f != nullptr && std::fwrite(s.model_bytes->data(), 1, s.model_bytes->size(), f) ==
                                    s.model_bytes->size();
      if (f != nullptr) ok = std::fclose(f) == 0 && ok;
      if (!ok || std::rename((model + ".tmp").c_str(), model.c_str()) != 0) {
        TurnOff(s, "ONNXPROBE_CAPTURE", "cannot write " + model);
        return;
      }
      s.model_bytes.reset();
    }
    ProbeOptions po;
    po.selection = S().config.selection;
    po.session = ToSessionOptions(s.options);
    po.session.quiet = true;  // the application's stderr is not ours for the runtime's warnings
    po.max_memory = S().config.max_memory;
    po.ort_library = S().ort_library;
    po.recorded_settings = ToManifestSettings(s.options);
    ProbeFault fault = ProbeFault::kNone;
    auto probe = Probe::Attach(model, po, &fault);
    if (!probe.ok()) {
      TurnOff(
          s,
          fault == ProbeFault::kSelection ? SelectionVariables(po.selection) : "ONNXPROBE_CAPTURE",
          probe.status().message());
      return;
    }
    s.probe = std::move(*probe);
  }
  char run[32];
  std::snprintf(run, sizeof(run), "/run%06llu", static_cast<unsigned long long>(job.run));
  ProbeFault fault = ProbeFault::kNone;
  auto done = s.probe->CaptureRun(job.inputs, folder + run, &fault);
  if (!done.ok()) {
    const char* var = fault == ProbeFault::kMemoryBudget ? "ONNXPROBE_MAX_MEMORY"
                      : fault == ProbeFault::kSelection  ? "ONNXPROBE_TENSORS"
                                                         : "ONNXPROBE_CAPTURE";
    TurnOff(s, var, done.status().message());
  }
}

void DrainAtExit();

void WorkerLoop() {
  State& st = S();
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(st.queue_mu);
      st.queue_cv.wait(lock, [&] { return !st.queue.empty() || st.stopping; });
      if (st.queue.empty()) return;
      job = std::move(st.queue.front());
      st.queue.pop_front();
    }
    st.queue_cv.notify_all();  // a capturing run may be waiting for room
    bool first = !job.session->probe;
    RunJob(job);
    // First captures construct function-local statics (model and runtime code) that register
    // destructors at exit; registering the drain after them runs it before they are destroyed.
    if (first) std::atexit(DrainAtExit);
  }
}

// At exit: pending captures are written, then the worker stops.
void DrainAtExit() {
  State& st = S();
  {
    std::unique_lock<std::mutex> lock(st.queue_mu);
    if (!st.worker_started || st.stopping) return;
    st.stopping = true;
  }
  st.queue_cv.notify_all();
  if (st.worker.joinable()) st.worker.join();
}

// A CPU copy of one input; false (with the reason) for values the dump cannot hold.
bool CopyInput(const OrtApi* api, const char* name, const OrtValue* v, NamedTensor* out,
               std::string* why) {
  auto fail = [&](OrtStatus* status, const std::string& what) {
    if (status != nullptr) api->ReleaseStatus(status);
    *why = "input '" + std::string(name) + "': " + what;
    return false;
  };
  int is_tensor = 0;
  if (OrtStatus* e = api->IsTensor(v, &is_tensor); e != nullptr || !is_tensor)
    return fail(e, "not a tensor");
  const OrtMemoryInfo* mem = nullptr;
  if (OrtStatus* e = api->GetTensorMemoryInfo(v, &mem); e != nullptr)
    return fail(e, "no memory info");
  OrtMemoryInfoDeviceType device = OrtMemoryInfoDeviceType_CPU;
  api->MemoryInfoGetDeviceType(mem, &device);
  if (device != OrtMemoryInfoDeviceType_CPU) return fail(nullptr, "not in CPU memory");
  OrtTensorTypeAndShapeInfo* info = nullptr;
  if (OrtStatus* e = api->GetTensorTypeAndShape(v, &info); e != nullptr)
    return fail(e, "no type and shape");
  ONNXTensorElementDataType et = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  size_t rank = 0;
  OrtStatus* e = api->GetTensorElementType(info, &et);
  if (e == nullptr) e = api->GetDimensionsCount(info, &rank);
  Shape shape(rank);
  if (e == nullptr) e = api->GetDimensions(info, shape.data(), rank);
  api->ReleaseTensorTypeAndShapeInfo(info);
  if (e != nullptr) return fail(e, "no type and shape");
  auto dt = DTypeFromOnnx(static_cast<int>(et));
  if (!dt.ok() || et == ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING)
    return fail(nullptr, "element type " + std::to_string(et) + " cannot be dumped");
  auto t = Tensor::Allocate(*dt, shape);
  if (!t.ok()) return fail(nullptr, t.status().message());
  if (t->byte_size() > 0) {
    void* data = nullptr;
    if (OrtStatus* e2 = api->GetTensorMutableData(const_cast<OrtValue*>(v), &data);
        e2 != nullptr || data == nullptr)
      return fail(e2, "no data");
    std::memcpy(t->data(), data, t->byte_size());
  }
  out->name = name;
  out->tensor = std::move(*t);
  return true;
}

}  // namespace

void StartCapturing(const PreloadConfig& config, const OrtApi* real_api,
                    const std::string& ort_library) {
  State& st = S();
  st.config = config;
  st.api = real_api;
  st.ort_library = ort_library;
}

void OnSessionCreated(const OrtSession* session, const char* model_path,
                      std::shared_ptr<const std::string> model_bytes,
                      const OrtSessionOptions* options) {
  auto s = std::make_shared<Session>();
  s->index = S().next_index++;
  if (model_path != nullptr) s->model_path = model_path;
  s->model_bytes = std::move(model_bytes);
  s->options = Snapshot(options);
  std::unique_lock<std::shared_mutex> lock(S().sessions_mu);
  S().sessions[session] = std::move(s);
}

void OnSessionReleased(const OrtSession* session) {
  std::unique_lock<std::shared_mutex> lock(S().sessions_mu);
  S().sessions.erase(session);  // queued captures keep what they need
}

void OnRun(const OrtSession* session, const char* const* input_names, const OrtValue* const* inputs,
           size_t input_count) {
  State& st = S();
  std::shared_ptr<Session> s;
  {
    std::shared_lock<std::shared_mutex> lock(st.sessions_mu);
    auto it = st.sessions.find(session);
    if (it == st.sessions.end()) return;
    s = it->second;
  }
  uint64_t run = ++s->runs;  // 1-based
  if (s->off || (run - 1) % st.config.every != 0) return;
  if (st.config.max_runs > 0 && s->captures.fetch_add(1) >= st.config.max_runs) return;
  Job job;
  job.session = s;
  job.run = run;
  for (size_t i = 0; i < input_count; ++i) {
    NamedTensor nt;
    std::string why;
    if (!CopyInput(st.api, input_names[i], inputs[i], &nt, &why)) {
      TurnOff(*s, "ONNXPROBE_CAPTURE", why + " (run " + std::to_string(run) + ")");
      return;
    }
    job.inputs.push_back(std::move(nt));
  }
  if (!st.first_done) {
    // The first capture of the process runs here, before the worker exists: it constructs the
    // function-local statics of every code path a capture takes (model loading, shape inference,
    // the runtime's sessions, dump writing), so the drain registered after it runs at exit
    // before any of them is destroyed. The application's thread pays this once.
    std::lock_guard<std::mutex> first(st.first_mu);
    if (!st.first_done) {
      RunJob(job);
      std::lock_guard<std::mutex> lock(st.queue_mu);
      st.worker_started = true;
      st.worker = std::thread(WorkerLoop);
      std::atexit(DrainAtExit);
      st.first_done = true;
      return;
    }
  }
  std::unique_lock<std::mutex> lock(st.queue_mu);
  if (st.stopping) return;
  st.queue_cv.wait(lock, [&] { return st.queue.size() < kMaxQueued || st.stopping; });
  if (st.stopping) return;
  st.queue.push_back(std::move(job));
  lock.unlock();
  st.queue_cv.notify_all();
}

}  // namespace onnxprobe::preload
