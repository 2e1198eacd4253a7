// A deployed application in C++ (the runtime's C++ API): one session shared by several threads,
// each running the model several times. Run (t, k) (thread t, k-th run of that thread) uses
// input element i = ((i * 7 + (t * 1000 + k) * 13) % 256 - 128) / 64 (exact in float32); its
// first output is written raw at slot t * RUNS + k of OUT.
// usage: deployed_threads MODEL THREADS RUNS OUT [disabled|all]
// Exit status: 0, or 3 when the runtime fails.
#include <onnxruntime_cxx_api.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 5) {
    std::cerr << "usage: deployed_threads MODEL THREADS RUNS OUT [disabled|all]\n";
    return 2;
  }
  const int threads = std::atoi(argv[2]), runs = std::atoi(argv[3]);
  const bool all = argc > 5 && std::strcmp(argv[5], "all") == 0;
  try {
    Ort::Env env(ORT_LOGGING_LEVEL_WARNING, "deployed_threads");
    Ort::SessionOptions so;
    so.SetGraphOptimizationLevel(all ? ORT_ENABLE_ALL : ORT_DISABLE_ALL);
    so.SetIntraOpNumThreads(1);
    Ort::Session session(env, argv[1], so);
    Ort::AllocatorWithDefaultOptions alloc;
    std::string in_name = session.GetInputNameAllocated(0, alloc).get();
    std::string out_name = session.GetOutputNameAllocated(0, alloc).get();
    std::vector<int64_t> shape = session.GetInputTypeInfo(0).GetTensorTypeAndShapeInfo().GetShape();
    size_t n = 1;
    for (auto& d : shape) {
      if (d < 0) d = 1;
      n *= static_cast<size_t>(d);
    }
    std::vector<std::vector<float>> outputs(static_cast<size_t>(threads * runs));
    std::vector<std::string> errors(threads);
    auto work = [&](int t) {
      try {
        auto mem = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
        std::vector<float> input(n);
        for (int k = 0; k < runs; ++k) {
          for (size_t i = 0; i < n; ++i)
            input[i] =
                static_cast<float>(static_cast<int>((i * 7 + (t * 1000 + k) * 13) % 256) - 128) /
                64.0f;
          Ort::Value in =
              Ort::Value::CreateTensor<float>(mem, input.data(), n, shape.data(), shape.size());
          const char* in_names[] = {in_name.c_str()};
          const char* out_names[] = {out_name.c_str()};
          auto result = session.Run(Ort::RunOptions{nullptr}, in_names, &in, 1, out_names, 1);
          const float* data = result[0].GetTensorData<float>();
          size_t count = result[0].GetTensorTypeAndShapeInfo().GetElementCount();
          outputs[t * runs + k].assign(data, data + count);
        }
      } catch (const Ort::Exception& e) {
        errors[t] = e.what();
      }
    };
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(work, t);
    for (auto& th : pool) th.join();
    for (const auto& e : errors) {
      if (!e.empty()) {
        std::cerr << "deployed_threads: " << e << "\n";
        return 3;
      }
    }
    std::FILE* out = std::fopen(argv[4], "wb");
    if (out == nullptr) return 2;
    for (const auto& o : outputs) {
      std::fwrite(o.data(), sizeof(float), o.size(), out);
    }
    std::fclose(out);
  } catch (const Ort::Exception& e) {
    std::cerr << "deployed_threads: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
