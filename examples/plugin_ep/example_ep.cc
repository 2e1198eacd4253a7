// A minimal plugin execution provider for ONNX Runtime 1.23+ (the plugin EP C API): it registers
// one provider, "OnnxprobeExample", on the machine's CPU device and computes float32 MatMul,
// Softmax, Add/Sub/Mul/Div (with broadcasting) and a few elementwise ops with kernels of its own,
// each node compiled on its own. Its sums run in plain order (not ONNX Runtime's blocked kernels),
// so its numbers differ from the CPU provider's by rounding: what a real plugin's do.
//
// Provider option approximate_exp=1 computes exp (Sigmoid, Tanh, Exp, Softmax) with a degree-3
// polynomial, as fast-math kernels do: a kernel that is wrong by ~1e-4 relative, for onnxprobe's
// tests and docs/providers.md to find. Provider option cannot_expose=OP (e.g. Relu) makes it
// behave as a compiling provider that fuses OP into what precedes it: compiling fails when an OP
// node's output is a graph output, as happens when a capture marks inner tensors as outputs.
// Build: any C++17 compiler and ONNX Runtime 1.23's headers.
#include <onnxruntime_c_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

const char kEpName[] = "OnnxprobeExample";
const OrtApi* g_api = nullptr;

OrtStatus* Fail(const std::string& msg) { return g_api->CreateStatus(ORT_FAIL, msg.c_str()); }

#define EP_RETURN_IF_ERROR(expr)    \
  do {                              \
    OrtStatus* _st = (expr);        \
    if (_st != nullptr) return _st; \
  } while (0)

// ---- kernels ---------------------------------------------------------------------------------

float ExactExp(float x) { return std::exp(x); }

// exp(x) = 2^k e^r, |r| <= ln2/2, e^r by its Taylor polynomial to r^3 (relative error <= 6e-4)
float ApproxExp(float x) {
  x = std::min(88.0f, std::max(-87.0f, x));
  float k = std::nearbyint(x * 1.44269504f);
  float r = x - k * 0.693147181f;
  float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6.0f)));
  return std::ldexp(p, static_cast<int>(k));
}

struct Kernel {
  std::string op;
  int64_t axis = -1;  // Softmax
  bool approximate_exp = false;
  float Exp(float x) const { return approximate_exp ? ApproxExp(x) : ExactExp(x); }
};

struct View {
  const float* data = nullptr;
  std::vector<int64_t> dims;
  size_t size() const {
    size_t n = 1;
    for (int64_t d : dims) n *= static_cast<size_t>(d);
    return n;
  }
};

OrtStatus* Input(OrtKernelContext* ctx, size_t i, View* v) {
  const OrtValue* value = nullptr;
  EP_RETURN_IF_ERROR(g_api->KernelContext_GetInput(ctx, i, &value));
  OrtTensorTypeAndShapeInfo* info = nullptr;
  EP_RETURN_IF_ERROR(g_api->GetTensorTypeAndShape(value, &info));
  size_t rank = 0;
  OrtStatus* st = g_api->GetDimensionsCount(info, &rank);
  if (st == nullptr) {
    v->dims.assign(rank, 0);
    st = g_api->GetDimensions(info, v->dims.data(), rank);
  }
  g_api->ReleaseTensorTypeAndShapeInfo(info);
  EP_RETURN_IF_ERROR(st);
  void* p = nullptr;
  EP_RETURN_IF_ERROR(g_api->GetTensorMutableData(const_cast<OrtValue*>(value), &p));
  v->data = static_cast<const float*>(p);
  return nullptr;
}

OrtStatus* Output(OrtKernelContext* ctx, const std::vector<int64_t>& dims, float** out) {
  OrtValue* value = nullptr;
  EP_RETURN_IF_ERROR(g_api->KernelContext_GetOutput(ctx, 0, dims.data(), dims.size(), &value));
  void* p = nullptr;
  EP_RETURN_IF_ERROR(g_api->GetTensorMutableData(value, &p));
  *out = static_cast<float*>(p);
  return nullptr;
}

float Unary(const Kernel& k, float x) {
  if (k.op == "Relu") return x > 0 ? x : 0.0f;
  if (k.op == "Sigmoid") return 1.0f / (1.0f + k.Exp(-x));
  if (k.op == "Tanh")
    return k.approximate_exp ? 2.0f / (1.0f + k.Exp(-2.0f * x)) - 1.0f : std::tanh(x);
  if (k.op == "Exp") return k.Exp(x);
  if (k.op == "Neg") return -x;
  if (k.op == "Abs") return std::fabs(x);
  return std::sqrt(x);  // Sqrt
}

float Binary(const std::string& op, float a, float b) {
  if (op == "Add") return a + b;
  if (op == "Sub") return a - b;
  if (op == "Mul") return a * b;
  return a / b;  // Div
}

// Numpy broadcasting: each input's stride per output dimension (0 where it is broadcast).
std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& in, size_t rank) {
  std::vector<int64_t> strides(rank, 0);
  int64_t s = 1;
  for (size_t i = 0; i < in.size(); ++i) {
    size_t d = in.size() - 1 - i, o = rank - 1 - i;
    strides[o] = in[d] == 1 ? 0 : s;
    s *= in[d];
  }
  return strides;
}

OrtStatus* ComputeBinary(const Kernel& k, OrtKernelContext* ctx) {
  View a, b;
  EP_RETURN_IF_ERROR(Input(ctx, 0, &a));
  EP_RETURN_IF_ERROR(Input(ctx, 1, &b));
  size_t rank = std::max(a.dims.size(), b.dims.size());
  std::vector<int64_t> dims(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < a.dims.size() ? a.dims[a.dims.size() - 1 - i] : 1;
    int64_t db = i < b.dims.size() ? b.dims[b.dims.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) return Fail(k.op + ": shapes do not broadcast");
    dims[rank - 1 - i] = da == 1 ? db : da;
  }
  float* out = nullptr;
  EP_RETURN_IF_ERROR(Output(ctx, dims, &out));
  std::vector<int64_t> sa = BroadcastStrides(a.dims, rank), sb = BroadcastStrides(b.dims, rank);
  std::vector<int64_t> index(rank, 0);
  size_t n = 1;
  for (int64_t d : dims) n *= static_cast<size_t>(d);
  int64_t ia = 0, ib = 0;
  for (size_t e = 0; e < n; ++e) {
    out[e] = Binary(k.op, a.data[ia], b.data[ib]);
    for (size_t d = rank; d-- > 0;) {  // odometer over the output's index
      ia += sa[d];
      ib += sb[d];
      if (++index[d] < dims[d]) break;
      ia -= sa[d] * dims[d];
      ib -= sb[d] * dims[d];
      index[d] = 0;
    }
  }
  return nullptr;
}

// A [..., M, K] x B [K, N]: the sum over K in order, in float
OrtStatus* ComputeMatMul(OrtKernelContext* ctx) {
  View a, b;
  EP_RETURN_IF_ERROR(Input(ctx, 0, &a));
  EP_RETURN_IF_ERROR(Input(ctx, 1, &b));
  if (a.dims.size() < 2 || b.dims.size() != 2 || a.dims.back() != b.dims[0])
    return Fail("MatMul: this provider takes A [..., M, K] x B [K, N] only");
  int64_t kdim = b.dims[0], ndim = b.dims[1];
  std::vector<int64_t> dims = a.dims;
  dims.back() = ndim;
  float* out = nullptr;
  EP_RETURN_IF_ERROR(Output(ctx, dims, &out));
  size_t rows = a.size() / static_cast<size_t>(kdim);
  for (size_t r = 0; r < rows; ++r) {
    for (int64_t n = 0; n < ndim; ++n) {
      float sum = 0.0f;
      for (int64_t k = 0; k < kdim; ++k) sum += a.data[r * kdim + k] * b.data[k * ndim + n];
      out[r * ndim + n] = sum;
    }
  }
  return nullptr;
}

OrtStatus* ComputeSoftmax(const Kernel& k, OrtKernelContext* ctx) {
  View x;
  EP_RETURN_IF_ERROR(Input(ctx, 0, &x));
  int64_t rank = static_cast<int64_t>(x.dims.size());
  int64_t axis = k.axis < 0 ? k.axis + rank : k.axis;
  if (axis < 0 || axis >= rank) return Fail("Softmax: axis out of range");
  float* out = nullptr;
  EP_RETURN_IF_ERROR(Output(ctx, x.dims, &out));
  size_t outer = 1, inner = 1, len = static_cast<size_t>(x.dims[axis]);
  for (int64_t d = 0; d < axis; ++d) outer *= static_cast<size_t>(x.dims[d]);
  for (int64_t d = axis + 1; d < rank; ++d) inner *= static_cast<size_t>(x.dims[d]);
  for (size_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < inner; ++i) {
      const float* in = x.data + o * len * inner + i;
      float* dst = out + o * len * inner + i;
      float mx = in[0];
      for (size_t j = 1; j < len; ++j) mx = std::max(mx, in[j * inner]);
      float sum = 0.0f;
      for (size_t j = 0; j < len; ++j) sum += dst[j * inner] = k.Exp(in[j * inner] - mx);
      for (size_t j = 0; j < len; ++j) dst[j * inner] /= sum;
    }
  }
  return nullptr;
}

OrtStatus* RunKernel(const Kernel& k, OrtKernelContext* ctx) {
  if (k.op == "MatMul") return ComputeMatMul(ctx);
  if (k.op == "Softmax") return ComputeSoftmax(k, ctx);
  if (k.op == "Add" || k.op == "Sub" || k.op == "Mul" || k.op == "Div")
    return ComputeBinary(k, ctx);
  View x;
  EP_RETURN_IF_ERROR(Input(ctx, 0, &x));
  float* out = nullptr;
  EP_RETURN_IF_ERROR(Output(ctx, x.dims, &out));
  for (size_t i = 0, n = x.size(); i < n; ++i) out[i] = Unary(k, x.data[i]);
  return nullptr;
}

// ---- what the provider takes -----------------------------------------------------------------

bool IsUnary(const std::string& op) {
  return op == "Relu" || op == "Sigmoid" || op == "Tanh" || op == "Exp" || op == "Neg" ||
         op == "Abs" || op == "Sqrt";
}
bool IsBinary(const std::string& op) {
  return op == "Add" || op == "Sub" || op == "Mul" || op == "Div";
}

// A float tensor's rank (-1: not a float tensor of known rank)
int64_t FloatRank(const OrtValueInfo* v) {
  const OrtTypeInfo* type = nullptr;
  if (v == nullptr || g_api->GetValueInfoTypeInfo(v, &type) != nullptr || type == nullptr)
    return -1;
  const OrtTensorTypeAndShapeInfo* tensor = nullptr;
  if (g_api->CastTypeInfoToTensorInfo(type, &tensor) != nullptr || tensor == nullptr) return -1;
  ONNXTensorElementDataType et = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  size_t rank = 0;
  if (g_api->GetTensorElementType(tensor, &et) != nullptr ||
      et != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT ||
      g_api->GetDimensionsCount(tensor, &rank) != nullptr)
    return -1;
  return static_cast<int64_t>(rank);
}

bool Takes(const OrtNode* node) {
  const char* op = nullptr;
  const char* domain = nullptr;
  int since = 0;
  size_t n_in = 0, n_out = 0;
  if (g_api->Node_GetOperatorType(node, &op) != nullptr ||
      g_api->Node_GetDomain(node, &domain) != nullptr ||
      g_api->Node_GetSinceVersion(node, &since) != nullptr ||
      g_api->Node_GetNumInputs(node, &n_in) != nullptr ||
      g_api->Node_GetNumOutputs(node, &n_out) != nullptr)
    return false;
  std::string o = op;
  if ((domain != nullptr && *domain && std::strcmp(domain, "ai.onnx") != 0) || n_out != 1)
    return false;
  std::vector<const OrtValueInfo*> in(n_in), out(n_out);
  if (g_api->Node_GetInputs(node, in.data(), n_in) != nullptr ||
      g_api->Node_GetOutputs(node, out.data(), n_out) != nullptr || FloatRank(out[0]) < 0)
    return false;
  if (IsUnary(o)) return n_in == 1 && FloatRank(in[0]) >= 0;
  if (IsBinary(o)) return n_in == 2 && FloatRank(in[0]) >= 0 && FloatRank(in[1]) >= 0;
  if (o == "MatMul") return n_in == 2 && FloatRank(in[0]) >= 2 && FloatRank(in[1]) == 2;
  if (o == "Softmax") return n_in == 1 && since >= 13 && FloatRank(in[0]) >= 1;
  return false;
}

// ---- the provider ----------------------------------------------------------------------------

struct ComputeInfo : OrtNodeComputeInfo {
  Kernel kernel;
  ComputeInfo() {
    ort_version_supported = ORT_API_VERSION;
    CreateState = [](OrtNodeComputeInfo* self, OrtNodeComputeContext*,
                     void** state) noexcept -> OrtStatus* {
      *state = &static_cast<ComputeInfo*>(self)->kernel;
      return nullptr;
    };
    Compute = [](OrtNodeComputeInfo*, void* state, OrtKernelContext* ctx) noexcept -> OrtStatus* {
      return RunKernel(*static_cast<const Kernel*>(state), ctx);
    };
    ReleaseState = [](OrtNodeComputeInfo*, void*) noexcept {};
  }
};

// An OP node (cannot_expose=OP) whose output is a graph output: the error compiling it gives.
OrtStatus* Unexposable(const OrtNode* node, const std::string& cannot_expose) {
  const char* op = nullptr;
  const char* name = nullptr;
  const OrtValueInfo* out = nullptr;
  bool is_output = false;
  if (cannot_expose.empty() || g_api->Node_GetOperatorType(node, &op) != nullptr ||
      cannot_expose != op || g_api->Node_GetName(node, &name) != nullptr ||
      g_api->Node_GetOutputs(node, &out, 1) != nullptr ||
      g_api->ValueInfo_IsGraphOutput(out, &is_output) != nullptr || !is_output)
    return nullptr;
  return Fail(std::string(kEpName) + " fuses " + op + " into the node before it and cannot give " +
              name + "'s output as a graph output");
}

struct Ep : OrtEp {
  bool approximate_exp = false;
  std::string cannot_expose;
  Ep(bool approx, std::string unexposable)
      : OrtEp{}, approximate_exp(approx), cannot_expose(std::move(unexposable)) {
    ort_version_supported = ORT_API_VERSION;
    GetName = [](const OrtEp*) noexcept { return kEpName; };
    GetCapability = [](OrtEp* self, const OrtGraph* graph,
                       OrtEpGraphSupportInfo* support) noexcept -> OrtStatus* {
      size_t n = 0;
      EP_RETURN_IF_ERROR(g_api->Graph_GetNumNodes(graph, &n));
      std::vector<const OrtNode*> nodes(n);
      EP_RETURN_IF_ERROR(g_api->Graph_GetNodes(graph, nodes.data(), n));
      OrtNodeFusionOptions fusion{};
      fusion.ort_version_supported = ORT_API_VERSION;
      for (const OrtNode* node : nodes) {  // every node a compiled partition of its own
        EP_RETURN_IF_ERROR(Unexposable(node, static_cast<Ep*>(self)->cannot_expose));
        if (Takes(node))
          EP_RETURN_IF_ERROR(
              g_api->GetEpApi()->EpGraphSupportInfo_AddNodesToFuse(support, &node, 1, &fusion));
      }
      return nullptr;
    };
    Compile = [](OrtEp* self, const OrtGraph** graphs, const OrtNode**, size_t count,
                 OrtNodeComputeInfo** infos, OrtNode**) noexcept -> OrtStatus* {
      for (size_t i = 0; i < count; ++i) {
        const OrtNode* node = nullptr;
        size_t n = 0;
        EP_RETURN_IF_ERROR(g_api->Graph_GetNumNodes(graphs[i], &n));
        if (n != 1) return Fail("expected one node per compiled graph");
        EP_RETURN_IF_ERROR(g_api->Graph_GetNodes(graphs[i], &node, 1));
        auto info = std::make_unique<ComputeInfo>();
        const char* op = nullptr;
        EP_RETURN_IF_ERROR(g_api->Node_GetOperatorType(node, &op));
        info->kernel.op = op;
        info->kernel.approximate_exp = static_cast<Ep*>(self)->approximate_exp;
        const OrtOpAttr* axis = nullptr;
        if (info->kernel.op == "Softmax" &&
            g_api->Node_GetAttributeByName(node, "axis", &axis) == nullptr && axis != nullptr) {
          size_t got = 0;
          EP_RETURN_IF_ERROR(
              g_api->ReadOpAttr(axis, ORT_OP_ATTR_INT, &info->kernel.axis, sizeof(int64_t), &got));
        }
        infos[i] = info.release();
      }
      return nullptr;
    };
    ReleaseNodeComputeInfos = [](OrtEp*, OrtNodeComputeInfo** infos, size_t n) noexcept {
      for (size_t i = 0; i < n; ++i) delete static_cast<ComputeInfo*>(infos[i]);
    };
  }
};

OrtStatus* Option(const OrtSessionOptions* so, const std::string& name, std::string* value) {
  std::string key = "ep.onnxprobeexample." + name;
  int has = 0;
  EP_RETURN_IF_ERROR(g_api->HasSessionConfigEntry(so, key.c_str(), &has));
  if (!has) return nullptr;
  size_t size = 0;
  EP_RETURN_IF_ERROR(g_api->GetSessionConfigEntry(so, key.c_str(), nullptr, &size));
  std::vector<char> buffer(size + 1, '\0');
  EP_RETURN_IF_ERROR(g_api->GetSessionConfigEntry(so, key.c_str(), buffer.data(), &size));
  *value = buffer.data();
  return nullptr;
}

struct Factory : OrtEpFactory {
  Factory() : OrtEpFactory{} {
    ort_version_supported = ORT_API_VERSION;
    GetName = [](const OrtEpFactory*) noexcept { return kEpName; };
    GetVendor = [](const OrtEpFactory*) noexcept { return "onnxprobe"; };
    GetVendorId = [](const OrtEpFactory*) noexcept -> uint32_t { return 0; };
    GetVersion = [](const OrtEpFactory*) noexcept { return "1.0.0"; };
    GetSupportedDevices = [](OrtEpFactory* self, const OrtHardwareDevice* const* devices, size_t n,
                             OrtEpDevice** ep_devices, size_t max,
                             size_t* added) noexcept -> OrtStatus* {
      *added = 0;
      for (size_t i = 0; i < n && *added < max && *added < 1; ++i) {
        if (g_api->HardwareDevice_Type(devices[i]) != OrtHardwareDeviceType_CPU) continue;
        OrtEpDevice* d = nullptr;
        EP_RETURN_IF_ERROR(
            g_api->GetEpApi()->CreateEpDevice(self, devices[i], nullptr, nullptr, &d));
        ep_devices[(*added)++] = d;
      }
      return nullptr;
    };
    CreateEp = [](OrtEpFactory*, const OrtHardwareDevice* const*, const OrtKeyValuePairs* const*,
                  size_t, const OrtSessionOptions* so, const OrtLogger*,
                  OrtEp** ep) noexcept -> OrtStatus* {
      // provider options reach the provider as session entries "ep.<lower-case name>.<key>"
      std::string approx, unexposable;
      EP_RETURN_IF_ERROR(Option(so, "approximate_exp", &approx));
      EP_RETURN_IF_ERROR(Option(so, "cannot_expose", &unexposable));
      *ep = new Ep(approx == "1", unexposable);
      return nullptr;
    };
    ReleaseEp = [](OrtEpFactory*, OrtEp* ep) noexcept { delete static_cast<Ep*>(ep); };
    ValidateCompiledModelCompatibilityInfo =
        [](OrtEpFactory*, const OrtHardwareDevice* const*, size_t, const char*,
           OrtCompiledModelCompatibility* out) noexcept -> OrtStatus* {
      *out = OrtCompiledModelCompatibility_EP_NOT_APPLICABLE;
      return nullptr;
    };
    CreateAllocator = [](OrtEpFactory*, const OrtMemoryInfo*, const OrtKeyValuePairs*,
                         OrtAllocator** allocator) noexcept -> OrtStatus* {
      *allocator = nullptr;  // the CPU allocator serves
      return nullptr;
    };
    ReleaseAllocator = [](OrtEpFactory*, OrtAllocator*) noexcept {};
    CreateDataTransfer = [](OrtEpFactory*, OrtDataTransferImpl** transfer) noexcept -> OrtStatus* {
      *transfer = nullptr;  // host memory only
      return nullptr;
    };
    IsStreamAware = [](const OrtEpFactory*) noexcept { return false; };
    CreateSyncStreamForDevice = [](OrtEpFactory*, const OrtMemoryDevice*, const OrtKeyValuePairs*,
                                   OrtSyncStreamImpl** stream) noexcept -> OrtStatus* {
      *stream = nullptr;
      return nullptr;
    };
  }
};

}  // namespace

extern "C" {

__attribute__((visibility("default"))) OrtStatus* CreateEpFactories(const char*,
                                                                    const OrtApiBase* base,
                                                                    const OrtLogger*,
                                                                    OrtEpFactory** factories,
                                                                    size_t max, size_t* count) {
  *count = 0;
  g_api = base->GetApi(ORT_API_VERSION);
  if (g_api == nullptr) return nullptr;  // a runtime older than these headers: nothing to offer
  if (max < 1) return g_api->CreateStatus(ORT_INVALID_ARGUMENT, "no room for a factory");
  factories[0] = new Factory();
  *count = 1;
  return nullptr;
}

__attribute__((visibility("default"))) OrtStatus* ReleaseEpFactory(OrtEpFactory* factory) {
  delete static_cast<Factory*>(factory);
  return nullptr;
}

}  // extern "C"
