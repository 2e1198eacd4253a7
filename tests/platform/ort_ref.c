/* The test's own minimal ONNX Runtime C API program: the reference a side on another CPU is
   checked against (tests/python/test_platform.py). It runs MODEL (every float output) once on
   one float input read from a raw file and writes each output's bytes to OUTDIR/<index>.bin.
   Built for the target by the test with the cross compiler and run under qemu-user, with no
   onnxprobe code in it.
   usage: ort_ref LIBONNXRUNTIME MODEL INPUT_NAME INPUT_FILE OUTDIR D0 [D1 ...] */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxruntime_c_api.h"

static const OrtApi* api;

static void check(OrtStatus* s, const char* what) {
  if (s == NULL) return;
  fprintf(stderr, "%s: %s\n", what, api->GetErrorMessage(s));
  exit(1);
}

int main(int argc, char** argv) {
  if (argc < 7) return 2;
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  const OrtApiBase* (*get)(void) = (const OrtApiBase* (*)(void))dlsym(lib, "OrtGetApiBase");
  api = get()->GetApi(ORT_API_VERSION);
  if (api == NULL) return 1;
  OrtEnv* env;
  check(api->CreateEnv(ORT_LOGGING_LEVEL_ERROR, "ref", &env), "env");
  OrtSessionOptions* so;
  check(api->CreateSessionOptions(&so), "options");
  check(api->SetSessionGraphOptimizationLevel(so, ORT_DISABLE_ALL), "level");
  OrtSession* session;
  check(api->CreateSession(env, argv[2], so, &session), "session");

  int64_t shape[8];
  size_t rank = (size_t)(argc - 6), count = 1;
  for (size_t i = 0; i < rank; ++i) count *= (size_t)(shape[i] = atoll(argv[6 + i]));
  float* data = malloc(count * sizeof(float));
  FILE* in = fopen(argv[4], "rb");
  if (in == NULL || fread(data, sizeof(float), count, in) != count) return 1;
  fclose(in);
  OrtMemoryInfo* mem;
  check(api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &mem), "memory");
  OrtValue* input = NULL;
  check(api->CreateTensorWithDataAsOrtValue(mem, data, count * sizeof(float), shape, rank,
                                            ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &input),
        "input");

  OrtAllocator* alloc;
  check(api->GetAllocatorWithDefaultOptions(&alloc), "allocator");
  size_t n = 0;
  check(api->SessionGetOutputCount(session, &n), "outputs");
  char** names = malloc(n * sizeof(char*));
  OrtValue** outs = calloc(n, sizeof(OrtValue*));
  for (size_t i = 0; i < n; ++i) check(api->SessionGetOutputName(session, i, alloc, &names[i]), "name");
  const char* input_names[1] = {argv[3]};
  check(api->Run(session, NULL, input_names, (const OrtValue* const*)&input, 1,
                 (const char* const*)names, n, outs),
        "run");
  for (size_t i = 0; i < n; ++i) {
    OrtTensorTypeAndShapeInfo* info;
    check(api->GetTensorTypeAndShape(outs[i], &info), "shape");
    size_t elements = 0;
    check(api->GetTensorShapeElementCount(info, &elements), "count");
    api->ReleaseTensorTypeAndShapeInfo(info);
    void* p;
    check(api->GetTensorMutableData(outs[i], &p), "data");
    char path[4096];
    snprintf(path, sizeof path, "%s/%zu.bin", argv[5], i);
    FILE* f = fopen(path, "wb");
    if (f == NULL || fwrite(p, sizeof(float), elements, f) != elements) return 1;
    fclose(f);
    printf("%s\n", names[i]);
  }
  return 0;
}
