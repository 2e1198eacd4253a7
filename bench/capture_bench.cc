// Capture overhead, measured side by side in one process on one model:
//   plain       the unmodified model, graph outputs only
//   naive       every intermediate tensor marked as an output, fresh allocations every run
//   in-memory   the same outputs through I/O binding into reused buffers (CaptureSession)
//   dump        a full `onnxprobe run` capture into a dump folder (session creation included)
//   disk        writing the same number of bytes with plain fwrite, as the bandwidth baseline
// usage: capture_bench MODEL [--runs N] [--threads N] [--dump-dir DIR]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_util.h"
#include "onnxprobe/backend/backend.h"
#include "onnxprobe/capture/capture.h"
#include "onnxprobe/capture/dump.h"
#include "onnxprobe/graph/graph.h"

using namespace onnxprobe;         // NOLINT
using namespace onnxprobe::bench;  // NOLINT

namespace {

class NullSink : public CaptureSink {
 public:
  Status Consume(CapturedTensor&&) override { return Status::Ok(); }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: capture_bench MODEL [--runs N] [--threads N] [--dump-dir DIR]\n");
    return 2;
  }
  std::string path = argv[1], dump_dir = "/tmp/onnxprobe-bench-dump";
  int runs = 20, threads = 2;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--runs") runs = std::atoi(argv[i + 1]);
    if (a == "--threads") threads = std::atoi(argv[i + 1]);
    if (a == "--dump-dir") dump_dir = argv[i + 1];
  }
  BenchModel bm = LoadBenchModel(path);
  Model* model = &bm.model;
  auto* backend = &bm.backend;
  auto* inputs = &bm.inputs;
  const auto& refs = bm.refs;
  SessionOptions so;
  so.intra_op_threads = threads;
  std::vector<std::string> outs;
  for (const auto& o : model->summary().outputs) outs.push_back(o.name);
  auto all = SelectTensors(*model, TensorSelection());
  Check(all.status());

  auto plain_bytes = MarkOutputs(*model, {});
  auto plain = (*backend)->CreateSession(*plain_bytes, model->dir(), so);
  Check(plain.status());
  auto marked_bytes = MarkOutputs(*model, *all);
  auto naive = (*backend)->CreateSession(*marked_bytes, model->dir(), so);
  Check(naive.status());
  auto cs = CaptureSession::Create(*model, **backend, *all, so);
  Check(cs.status());

  // warm up all three, then interleave measurements so drift affects each alike
  for (int i = 0; i < 3; ++i) {
    Check((*plain)->Run(refs, outs).status());
    Check((*naive)->Run(refs, *all).status());
    Check((*cs)->Run(*inputs));
  }
  double t_plain = 0, t_naive = 0, t_mem = 0;
  for (int round = 0; round < 3; ++round) {
    t_plain += MedianMs(runs, [&] { Check((*plain)->Run(refs, outs).status()); });
    t_naive += MedianMs(runs, [&] { Check((*naive)->Run(refs, *all).status()); });
    t_mem += MedianMs(runs, [&] { Check((*cs)->Run(*inputs)); });
  }
  t_plain /= 3;
  t_naive /= 3;
  t_mem /= 3;
  uint64_t captured_bytes = 0;
  for (const auto& r : (*cs)->outputs()) captured_bytes += r.tensor.byte_size();

  // dumping: the full job, and its write phase against plain writes of the same bytes
  auto full_job = [&](const std::string& out) {
    return MedianMs(3, [&] {
      DumpMetadata meta;
      auto w = DumpWriter::Create(out, meta);
      Check(w.status());
      CaptureOptions co;
      co.session = so;
      auto rep = Capture(*model, **backend, *inputs, *all, co, **w);
      Check(rep.status());
      Check((*w)->Finish(*rep));
    });
  };
  auto write_phase = [&](const std::string& out) {
    return MedianMs(3, [&] {
      DumpMetadata meta;
      auto w = DumpWriter::Create(out, meta);
      for (const auto& r : (*cs)->outputs()) {
        CapturedTensor c;
        c.name = r.name;
        c.tensor = r.tensor;
        Check((*w)->Consume(std::move(c)));
      }
      Check((*w)->Finish(CaptureReport()));
    });
  };
  std::string npz = dump_dir + ".npz";
  double t_job_dir = full_job(dump_dir), t_job_npz = full_job(npz);
  double t_write_dir = write_phase(dump_dir), t_write_npz = write_phase(npz);
  double t_null = MedianMs(3, [&] {
    NullSink sink;
    CaptureOptions co;
    co.session = so;
    Check(Capture(*model, **backend, *inputs, *all, co, sink).status());
  });
  std::vector<char> block(1 << 22, 1);
  auto raw_files = [&](size_t nfiles) {
    std::filesystem::create_directories(dump_dir + ".raw");
    double t = MedianMs(3, [&] {
      uint64_t per = captured_bytes / nfiles;
      for (size_t k = 0; k < nfiles; ++k) {
        FILE* f = std::fopen((dump_dir + ".raw/" + std::to_string(k)).c_str(), "wb");
        for (uint64_t done = 0; done < per; done += block.size()) {
          std::fwrite(block.data(), 1, std::min<uint64_t>(block.size(), per - done), f);
        }
        std::fclose(f);
      }
    });
    std::filesystem::remove_all(dump_dir + ".raw");
    return t;
  };
  double t_raw_one = raw_files(1), t_raw_many = raw_files(all->size());
  double t_stats = MedianMs(3, [&] {
    for (const auto& r : (*cs)->outputs()) (void)ComputeStats(r.tensor);
  });
  std::filesystem::remove_all(dump_dir);
  std::filesystem::remove(npz);

  std::printf(
      "%s: %zu tensors captured (%.1f MiB), onnxruntime %s, %d intra-op threads, median of %d "
      "runs\n",
      std::filesystem::path(path).filename().c_str(), all->size(), captured_bytes / 1048576.0,
      (*backend)->version().c_str(), threads, runs);
  std::printf("  plain inference            %8.2f ms   1.00x\n", t_plain);
  std::printf("  naive mark-all outputs     %8.2f ms   %.2fx\n", t_naive, t_naive / t_plain);
  std::printf("  in-memory capture (reuse)  %8.2f ms   %.2fx   target <= 1.05x\n", t_mem,
              t_mem / t_plain);
  std::printf("  one-shot capture, no disk  %8.2f ms   (model rewrite + new session + first run)\n",
              t_null);
  std::printf(
      "  dump write, folder         %8.2f ms   %.2fx plain writes of the same bytes into %zu files "
      "(%.2f ms); "
      "stats pass %.2f ms\n",
      t_write_dir, t_write_dir / t_raw_many, all->size(), t_raw_many, t_stats);
  std::printf(
      "  dump write, .npz           %8.2f ms   %.2fx a plain write of the same bytes into 1 file "
      "(%.2f ms)\n",
      t_write_npz, t_write_npz / t_raw_one, t_raw_one);
  std::printf("  full job: folder %.1f ms, .npz %.1f ms\n", t_job_dir, t_job_npz);
  return 0;
}
