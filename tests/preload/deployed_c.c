/* A deployed application in plain C: runs a model with batch 1 float inputs a number of times
 * and writes every run's first output, raw, to a file. Inputs follow a formula the tests
 * recompute: element i of run r is ((i * 7 + r * 13) % 256 - 128) / 64 (exact in float32).
 * usage: deployed_c MODEL RUNS OUT [disabled|all] [path|array] [timing]
 * With "timing", prints the seconds each Run call took, one line per run (for benchmarks).
 * Built a second time with DEPLOYED_DLOPEN, it does not link the runtime but loads it at run time
 * from $ORT_LIB, the way $DLOPEN_MODE says: "global" (RTLD_GLOBAL, then OrtGetApiBase looked up
 * with RTLD_DEFAULT), "local" (RTLD_LOCAL, then RTLD_DEFAULT) or "handle" (RTLD_LOCAL, then looked
 * up on the library's handle).
 * Exit status: 0, 3 when the runtime fails (its message on stderr), 4 when it cannot be loaded. */
#include <onnxruntime_c_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const OrtApi* api;

#ifdef DEPLOYED_DLOPEN
#include <dlfcn.h>
static const OrtApiBase* ApiBase(void) {
  const char* mode = getenv("DLOPEN_MODE") ? getenv("DLOPEN_MODE") : "global";
  void* h = dlopen(getenv("ORT_LIB"),
                   RTLD_NOW | (strcmp(mode, "global") == 0 ? RTLD_GLOBAL : RTLD_LOCAL));
  if (h == NULL) {
    fprintf(stderr, "deployed_c: %s\n", dlerror());
    exit(4);
  }
  const OrtApiBase* (*get)(void) = (const OrtApiBase* (*)(void))dlsym(
      strcmp(mode, "handle") == 0 ? h : RTLD_DEFAULT, "OrtGetApiBase");
  if (get == NULL) {
    fprintf(stderr, "deployed_c: no OrtGetApiBase\n");
    exit(4);
  }
  return get();
}
#else
static const OrtApiBase* ApiBase(void) { return OrtGetApiBase(); }
#endif

static int Check(OrtStatus* st) {
  if (st == NULL) return 0;
  fprintf(stderr, "deployed_c: %s\n", api->GetErrorMessage(st));
  api->ReleaseStatus(st);
  exit(3);
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: deployed_c MODEL RUNS OUT [disabled|all] [path|array] [timing]\n");
    return 2;
  }
  const char* model = argv[1];
  int runs = atoi(argv[2]);
  const char* level = argc > 4 ? argv[4] : "disabled";
  int from_array = argc > 5 && strcmp(argv[5], "array") == 0;
  int timing = argc > 6 && strcmp(argv[6], "timing") == 0;
  api = ApiBase()->GetApi(ORT_API_VERSION);
  OrtEnv* env = NULL;
  Check(api->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "deployed_c", &env));
  OrtSessionOptions* so = NULL;
  Check(api->CreateSessionOptions(&so));
  Check(api->SetSessionGraphOptimizationLevel(
      so, strcmp(level, "all") == 0 ? ORT_ENABLE_ALL : ORT_DISABLE_ALL));
  Check(api->SetIntraOpNumThreads(so, 1));
  OrtSession* session = NULL;
  if (from_array) {
    FILE* f = fopen(model, "rb");
    if (f == NULL) return 2;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char* bytes = malloc(size);
    if (fread(bytes, 1, size, f) != (size_t)size) return 2;
    fclose(f);
    Check(api->CreateSessionFromArray(env, bytes, size, so, &session));
    memset(bytes, 0, size); /* the runtime keeps no reference: neither may the probe */
    free(bytes);
  } else {
    Check(api->CreateSession(env, model, so, &session));
  }
  api->ReleaseSessionOptions(so);

  OrtAllocator* alloc = NULL;
  Check(api->GetAllocatorWithDefaultOptions(&alloc));
  char* in_name = NULL;
  char* out_name = NULL;
  Check(api->SessionGetInputName(session, 0, alloc, &in_name));
  Check(api->SessionGetOutputName(session, 0, alloc, &out_name));
  OrtTypeInfo* ti = NULL;
  const OrtTensorTypeAndShapeInfo* tsi = NULL;
  Check(api->SessionGetInputTypeInfo(session, 0, &ti));
  Check(api->CastTypeInfoToTensorInfo(ti, &tsi));
  size_t rank = 0;
  Check(api->GetDimensionsCount(tsi, &rank));
  int64_t shape[8];
  Check(api->GetDimensions(tsi, shape, rank));
  api->ReleaseTypeInfo(ti);
  size_t n = 1;
  for (size_t d = 0; d < rank; ++d) {
    if (shape[d] < 0) shape[d] = 1; /* symbolic dimensions: batch 1 */
    n *= (size_t)shape[d];
  }
  float* input = malloc(n * sizeof(float));
  OrtMemoryInfo* mem = NULL;
  Check(api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &mem));
  FILE* out = fopen(argv[3], "wb");
  if (out == NULL) return 2;
  for (int r = 0; r < runs; ++r) {
    for (size_t i = 0; i < n; ++i) input[i] = (float)((int)((i * 7 + r * 13) % 256) - 128) / 64.0f;
    OrtValue* in = NULL;
    Check(api->CreateTensorWithDataAsOrtValue(mem, input, n * sizeof(float), shape, rank,
                                              ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &in));
    OrtValue* result = NULL;
    const char* in_names[] = {in_name};
    const char* out_names[] = {out_name};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    Check(api->Run(session, NULL, in_names, (const OrtValue* const*)&in, 1, out_names, 1, &result));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (timing) printf("%.6f\n", (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9);
    float* data = NULL;
    OrtTensorTypeAndShapeInfo* info = NULL;
    size_t count = 0;
    Check(api->GetTensorMutableData(result, (void**)&data));
    Check(api->GetTensorTypeAndShape(result, &info));
    Check(api->GetTensorShapeElementCount(info, &count));
    api->ReleaseTensorTypeAndShapeInfo(info);
    fwrite(data, sizeof(float), count, out);
    api->ReleaseValue(result);
    api->ReleaseValue(in);
  }
  fclose(out);
  api->ReleaseMemoryInfo(mem);
  Check(api->AllocatorFree(alloc, in_name));
  Check(api->AllocatorFree(alloc, out_name));
  free(input);
  api->ReleaseSession(session);
  api->ReleaseEnv(env);
  return 0;
}
