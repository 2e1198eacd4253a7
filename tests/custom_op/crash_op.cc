// A custom-operator library for the tests of isolated sides and of diagnosis, written against the
// ONNX Runtime C API only. Operator "CrashOp" in domain "onnxprobe.test": identity on a float
// tensor, except that it dereferences a null pointer (a segfault in a kernel, as a broken execution
// provider or custom op would cause)
//   - when the first input element is 13: always;
//   - when it is 16: from the second run in the same process on (a crash that depends on the
//     process's history, like a use after free, which a fresh process does not reproduce).
#include <onnxruntime_c_api.h>

#include <cstdint>
#include <cstring>
#include <random>

namespace {

const OrtApi* g_api = nullptr;
constexpr float kCrashValue = 13.0f;
constexpr float kSecondRunCrashValue = 16.0f;
int g_runs = 0;

struct Kernel {};

void* ORT_API_CALL CreateKernel(const OrtCustomOp*, const OrtApi*, const OrtKernelInfo*) {
  return new Kernel();
}
const char* ORT_API_CALL GetName(const OrtCustomOp*) { return "CrashOp"; }
const char* ORT_API_CALL GetExecutionProviderType(const OrtCustomOp*) { return nullptr; }
ONNXTensorElementDataType ORT_API_CALL GetType(const OrtCustomOp*, size_t) {
  return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
}
size_t ORT_API_CALL GetOne(const OrtCustomOp*) { return 1; }
OrtCustomOpInputOutputCharacteristic ORT_API_CALL Required(const OrtCustomOp*, size_t) {
  return INPUT_OUTPUT_REQUIRED;
}
OrtMemType ORT_API_CALL InputMemory(const OrtCustomOp*, size_t) { return OrtMemTypeDefault; }
int ORT_API_CALL MinArity(const OrtCustomOp*) { return 1; }
int ORT_API_CALL Homogeneous(const OrtCustomOp*) { return 1; }

// volatile: the compiler must not prove the store undefined and drop it
float* volatile g_nowhere = nullptr;

// True when the call succeeded; releases the status of one that failed.
bool Ok(OrtStatus* st) {
  if (st == nullptr) return true;
  g_api->ReleaseStatus(st);
  return false;
}

void ORT_API_CALL Compute(void*, OrtKernelContext* ctx) {
  const OrtValue* in = nullptr;
  OrtTensorTypeAndShapeInfo* info = nullptr;
  if (!Ok(g_api->KernelContext_GetInput(ctx, 0, &in)) ||
      !Ok(g_api->GetTensorTypeAndShape(in, &info)))
    return;
  size_t rank = 0, count = 0;
  int64_t dims[16] = {};
  bool shaped = Ok(g_api->GetDimensionsCount(info, &rank)) && rank <= 16 &&
                Ok(g_api->GetDimensions(info, dims, rank)) &&
                Ok(g_api->GetTensorShapeElementCount(info, &count));
  g_api->ReleaseTensorTypeAndShapeInfo(info);
  void* x_data = nullptr;
  if (!shaped || !Ok(g_api->GetTensorMutableData(const_cast<OrtValue*>(in), &x_data))) return;
  const float* x = static_cast<const float*>(x_data);
  ++g_runs;
  if (count > 0 && (x[0] == kCrashValue || (x[0] == kSecondRunCrashValue && g_runs > 1)))
    *g_nowhere = x[0];  // SIGSEGV
  OrtValue* out = nullptr;
  void* y = nullptr;
  if (!Ok(g_api->KernelContext_GetOutput(ctx, 0, dims, rank, &out)) ||
      !Ok(g_api->GetTensorMutableData(out, &y)))
    return;
  if (count > 0) std::memcpy(y, x, count * sizeof(float));
}

// The float input and an output of its shape (for the identity-like ops below); false when the
// runtime refused either.
bool InputAndOutput(OrtKernelContext* ctx, const float** x, float** y, size_t* count) {
  const OrtValue* in = nullptr;
  OrtTensorTypeAndShapeInfo* info = nullptr;
  if (!Ok(g_api->KernelContext_GetInput(ctx, 0, &in)) ||
      !Ok(g_api->GetTensorTypeAndShape(in, &info)))
    return false;
  size_t rank = 0;
  int64_t dims[16] = {};
  bool shaped = Ok(g_api->GetDimensionsCount(info, &rank)) && rank <= 16 &&
                Ok(g_api->GetDimensions(info, dims, rank)) &&
                Ok(g_api->GetTensorShapeElementCount(info, count));
  g_api->ReleaseTensorTypeAndShapeInfo(info);
  void* x_data = nullptr;
  OrtValue* out = nullptr;
  void* y_data = nullptr;
  if (!shaped || !Ok(g_api->GetTensorMutableData(const_cast<OrtValue*>(in), &x_data)) ||
      !Ok(g_api->KernelContext_GetOutput(ctx, 0, dims, rank, &out)) ||
      !Ok(g_api->GetTensorMutableData(out, &y_data)))
    return false;
  *x = static_cast<const float*>(x_data);
  *y = static_cast<float*>(y_data);
  return true;
}

// JitterOp: identity, except that every other run adds 1e-3 to the first element, a kernel
// whose result differs run to run (for the determinism tests).
int g_jitter_runs = 0;
const char* ORT_API_CALL GetJitterName(const OrtCustomOp*) { return "JitterOp"; }
void ORT_API_CALL JitterCompute(void*, OrtKernelContext* ctx) {
  const float* x = nullptr;
  float* y = nullptr;
  size_t count = 0;
  if (!InputAndOutput(ctx, &x, &y, &count) || count == 0) return;
  std::memcpy(y, x, count * sizeof(float));
  if ((g_jitter_runs++ % 2) == 1) y[0] += 1e-3f;
}

// NoiseOp: identity plus noise of up to 1e-3 (relative to max(1, |x|)) drawn from a fresh random
// seed each run: a kernel whose result no run reproduces (randomness in a custom operator).
const char* ORT_API_CALL GetNoiseName(const OrtCustomOp*) { return "NoiseOp"; }
void ORT_API_CALL NoiseCompute(void*, OrtKernelContext* ctx) {
  const float* x = nullptr;
  float* y = nullptr;
  size_t count = 0;
  if (!InputAndOutput(ctx, &x, &y, &count)) return;
  uint64_t state = std::random_device()() | (static_cast<uint64_t>(std::random_device()()) << 32);
  state |= 1;
  for (size_t i = 0; i < count; ++i) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;           // xorshift64
    double u = static_cast<double>(state >> 11) / 9007199254740992.0 * 2 - 1;  // [-1, 1)
    double mag = x[i] < 0 ? -x[i] : x[i];
    y[i] = x[i] + static_cast<float>(1e-3 * u * (mag > 1 ? mag : 1));
  }
}

void ORT_API_CALL Destroy(void* k) { delete static_cast<Kernel*>(k); }

OrtCustomOp MakeOp() {
  OrtCustomOp op;
  std::memset(&op, 0, sizeof op);
  op.version = 14;  // the fields below exist since API 14 (ONNX Runtime 1.14)
  op.CreateKernel = CreateKernel;
  op.GetName = GetName;
  op.GetExecutionProviderType = GetExecutionProviderType;
  op.GetInputType = GetType;
  op.GetInputTypeCount = GetOne;
  op.GetOutputType = GetType;
  op.GetOutputTypeCount = GetOne;
  op.KernelCompute = Compute;
  op.KernelDestroy = Destroy;
  op.GetInputCharacteristic = Required;
  op.GetOutputCharacteristic = Required;
  op.GetInputMemoryType = InputMemory;
  op.GetVariadicInputMinArity = MinArity;
  op.GetVariadicInputHomogeneity = Homogeneous;
  op.GetVariadicOutputMinArity = MinArity;
  op.GetVariadicOutputHomogeneity = Homogeneous;
  return op;
}

OrtCustomOp g_op = MakeOp();
OrtCustomOp MakeJitterOp() {
  OrtCustomOp op = MakeOp();
  op.GetName = GetJitterName;
  op.KernelCompute = JitterCompute;
  return op;
}
OrtCustomOp g_jitter_op = MakeJitterOp();
OrtCustomOp MakeNoiseOp() {
  OrtCustomOp op = MakeOp();
  op.GetName = GetNoiseName;
  op.KernelCompute = NoiseCompute;
  return op;
}
OrtCustomOp g_noise_op = MakeNoiseOp();
OrtCustomOpDomain* g_domain = nullptr;

}  // namespace

extern "C" __attribute__((visibility("default"))) OrtStatus* ORT_API_CALL
RegisterCustomOps(OrtSessionOptions* options, const OrtApiBase* base) {
  g_api = base->GetApi(14);
  if (g_api == nullptr) return nullptr;
  OrtStatus* st = nullptr;
  if (g_domain == nullptr) {
    st = g_api->CreateCustomOpDomain("onnxprobe.test", &g_domain);
    if (st == nullptr) st = g_api->CustomOpDomain_Add(g_domain, &g_op);
    if (st == nullptr) st = g_api->CustomOpDomain_Add(g_domain, &g_jitter_op);
    if (st == nullptr) st = g_api->CustomOpDomain_Add(g_domain, &g_noise_op);
  }
  if (st == nullptr) st = g_api->AddCustomOpDomain(options, g_domain);
  return st;
}
