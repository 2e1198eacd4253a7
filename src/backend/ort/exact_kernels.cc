// onnxprobe's own float64 kernels for ops ONNX Runtime's CPU provider computes in float32 only
// (graph/exact.h lists them: HasOwnExactKernel). Registered as custom ops of domain kExactDomain
// through the C API table of each loaded runtime (SessionOptions::exact_kernels). Each is the
// op's ONNX definition evaluated in double with the C library's functions (erf, expm1, log1p,
// tanh ...), so its error is a few units in the last place of float64.
#include "backend/ort/exact_kernels.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "backend/ort/exact_pool.h"
#include "onnxprobe/graph/exact.h"

namespace onnxprobe {
namespace {

// Custom ops of this version have CreateKernelV2/KernelComputeV2 (errors as a status); every
// runtime onnxprobe loads (1.16 and newer) reads them.
constexpr uint32_t kCustomOpVersion = 16;

struct Kernel {
  const OrtApi* api = nullptr;
  std::string op;
  double alpha = 0, beta = 0, gamma = 0, epsilon = 0;
  bool tanh_gelu = false;
  PoolAttributes pool;  // AveragePool
  ConvTransposeAttributes ct;
};

std::vector<int64_t> IntsAttr(const OrtApi* api, const OrtKernelInfo* info, const char* name) {
  size_t size = 0;
  OrtStatus* st = api->KernelInfoGetAttributeArray_int64(info, name, nullptr, &size);
  if (st != nullptr) {
    api->ReleaseStatus(st);
    return {};
  }
  std::vector<int64_t> v(size);
  st = api->KernelInfoGetAttributeArray_int64(info, name, v.data(), &size);
  if (st != nullptr) {
    api->ReleaseStatus(st);
    return {};
  }
  return v;
}

int64_t IntAttr(const OrtApi* api, const OrtKernelInfo* info, const char* name, int64_t dflt) {
  int64_t v = dflt;
  OrtStatus* st = api->KernelInfoGetAttribute_int64(info, name, &v);
  if (st != nullptr) {
    api->ReleaseStatus(st);
    v = dflt;
  }
  return v;
}

double FloatAttr(const OrtApi* api, const OrtKernelInfo* info, const char* name, float dflt) {
  float v = dflt;
  OrtStatus* st = api->KernelInfoGetAttribute_float(info, name, &v);
  if (st != nullptr) {
    api->ReleaseStatus(st);
    v = dflt;
  }
  return static_cast<double>(v);  // the attribute is a float32 number: its exact value
}

std::string StringAttr(const OrtApi* api, const OrtKernelInfo* info, const char* name) {
  size_t size = 0;
  OrtStatus* st = api->KernelInfoGetAttribute_string(info, name, nullptr, &size);
  if (st != nullptr) {
    api->ReleaseStatus(st);
    return "";
  }
  std::string s(size, '\0');
  st = api->KernelInfoGetAttribute_string(info, name, &s[0], &size);
  if (st != nullptr) {
    api->ReleaseStatus(st);
    return "";
  }
  s.resize(size > 0 ? size - 1 : 0);  // the size counts the terminating NUL
  return s;
}

double Softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

double Unary(const Kernel& k, double x) {
  const std::string& op = k.op;
  if (op == "Erf") return std::erf(x);
  if (op == "Softplus") return Softplus(x);
  if (op == "Softsign") return x / (1 + std::fabs(x));
  if (op == "Elu") return x >= 0 ? x : k.alpha * std::expm1(x);
  if (op == "Selu") return x > 0 ? k.gamma * x : k.gamma * k.alpha * std::expm1(x);
  if (op == "Celu") return std::max(0.0, x) + std::min(0.0, k.alpha * std::expm1(x / k.alpha));
  if (op == "HardSigmoid") return std::max(0.0, std::min(1.0, k.alpha * x + k.beta));
  if (op == "HardSwish") return x * std::max(0.0, std::min(1.0, x / 6 + 0.5));
  if (op == "ThresholdedRelu") return x > k.alpha ? x : 0.0;
  if (op == "Mish") return x * std::tanh(Softplus(x));
  if (op == "Gelu") {
    if (k.tanh_gelu) {
      const double c = std::sqrt(2 / M_PI);
      return 0.5 * x * (1 + std::tanh(c * (x + 0.044715 * x * x * x)));
    }
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  }
  if (op == "Acos") return std::acos(x);
  if (op == "Acosh") return std::acosh(x);
  if (op == "Asin") return std::asin(x);
  if (op == "Asinh") return std::asinh(x);
  if (op == "Atan") return std::atan(x);
  if (op == "Atanh") return std::atanh(x);
  if (op == "Cosh") return std::cosh(x);
  if (op == "Sinh") return std::sinh(x);
  if (op == "Tan") return std::tan(x);
  return std::nan("");
}

#define RETURN_IF_ORT(expr)         \
  do {                              \
    OrtStatus* st_ = (expr);        \
    if (st_ != nullptr) return st_; \
  } while (0)

struct Input {
  const double* data = nullptr;
  std::vector<int64_t> dims;
  size_t count = 1;
};

OrtStatus* ReadInput(const OrtApi* api, OrtKernelContext* ctx, size_t i, Input* in) {
  const OrtValue* v = nullptr;
  RETURN_IF_ORT(api->KernelContext_GetInput(ctx, i, &v));
  OrtTensorTypeAndShapeInfo* info = nullptr;
  RETURN_IF_ORT(api->GetTensorTypeAndShape(v, &info));
  size_t n = 0;
  OrtStatus* st = api->GetDimensionsCount(info, &n);
  if (st == nullptr) {
    in->dims.resize(n);
    st = api->GetDimensions(info, in->dims.data(), n);
  }
  api->ReleaseTensorTypeAndShapeInfo(info);
  if (st != nullptr) return st;
  in->count = 1;
  for (int64_t d : in->dims) in->count *= static_cast<size_t>(d);
  void* p = nullptr;
  RETURN_IF_ORT(api->GetTensorMutableData(const_cast<OrtValue*>(v), &p));
  in->data = static_cast<const double*>(p);
  return nullptr;
}

OrtStatus* Output(const OrtApi* api, OrtKernelContext* ctx, const std::vector<int64_t>& dims,
                  double** data) {
  OrtValue* v = nullptr;
  RETURN_IF_ORT(api->KernelContext_GetOutput(ctx, 0, dims.data(), dims.size(), &v));
  void* p = nullptr;
  RETURN_IF_ORT(api->GetTensorMutableData(v, &p));
  *data = static_cast<double*>(p);
  return nullptr;
}

OrtStatus* Compute(const Kernel& k, OrtKernelContext* ctx) {
  const OrtApi* api = k.api;
  Input x;
  RETURN_IF_ORT(ReadInput(api, ctx, 0, &x));
  double* y = nullptr;
  if (k.op == "ConvTranspose") {
    Input w, b;
    RETURN_IF_ORT(ReadInput(api, ctx, 1, &w));
    size_t count = 0;
    RETURN_IF_ORT(api->KernelContext_GetInputCount(ctx, &count));
    const OrtValue* bias = nullptr;
    if (count > 2) RETURN_IF_ORT(api->KernelContext_GetInput(ctx, 2, &bias));
    if (bias != nullptr) RETURN_IF_ORT(ReadInput(api, ctx, 2, &b));
    std::vector<int64_t> dims = ConvTransposeDims(k.ct, x.dims, w.dims);
    if (dims.empty() || (b.data != nullptr && static_cast<int64_t>(b.count) != dims[1]))
      return api->CreateStatus(ORT_INVALID_ARGUMENT,
                               "ConvTranspose: attributes or weights that do not fit the input");
    RETURN_IF_ORT(Output(api, ctx, dims, &y));
    ConvTranspose64(k.ct, x.data, x.dims, w.data, w.dims, b.data, dims, y);
    return nullptr;
  }
  if (k.op == "AveragePool") {
    if (x.dims.size() < 3)
      return api->CreateStatus(ORT_INVALID_ARGUMENT, "AveragePool: input of rank < 3");
    std::vector<int64_t> pads;
    std::vector<int64_t> out = PoolOutputSizes(k.pool, {x.dims.begin() + 2, x.dims.end()}, &pads);
    if (out.empty())
      return api->CreateStatus(ORT_INVALID_ARGUMENT,
                               "AveragePool: attributes that do not fit the input's shape");
    std::vector<int64_t> dims = {x.dims[0], x.dims[1]};
    dims.insert(dims.end(), out.begin(), out.end());
    RETURN_IF_ORT(Output(api, ctx, dims, &y));
    AveragePool64(k.pool, x.data, x.dims, out, pads, y);
    return nullptr;
  }
  if (k.op == "GlobalAveragePool" || k.op == "GlobalMaxPool" || k.op == "InstanceNormalization") {
    if (x.dims.size() < 3)
      return api->CreateStatus(ORT_INVALID_ARGUMENT, (k.op + ": input of rank < 3").c_str());
    const size_t planes = static_cast<size_t>(x.dims[0] * x.dims[1]);
    const size_t inner = planes == 0 ? 0 : x.count / planes;
    const size_t channels = static_cast<size_t>(x.dims[1]);
    if (k.op == "InstanceNormalization") {
      Input scale, bias;
      RETURN_IF_ORT(ReadInput(api, ctx, 1, &scale));
      RETURN_IF_ORT(ReadInput(api, ctx, 2, &bias));
      if (scale.count != channels || bias.count != channels)
        return api->CreateStatus(ORT_INVALID_ARGUMENT,
                                 "InstanceNormalization: scale or bias is not one per channel");
      RETURN_IF_ORT(Output(api, ctx, x.dims, &y));
      for (size_t p = 0; p < planes; ++p) {
        const double* a = x.data + p * inner;
        double mean = 0, var = 0;
        for (size_t i = 0; i < inner; ++i) mean += a[i];
        mean /= static_cast<double>(inner);
        for (size_t i = 0; i < inner; ++i) var += (a[i] - mean) * (a[i] - mean);
        var /= static_cast<double>(inner);
        const size_t c = p % channels;
        const double f = scale.data[c] / std::sqrt(var + k.epsilon);
        for (size_t i = 0; i < inner; ++i) y[p * inner + i] = (a[i] - mean) * f + bias.data[c];
      }
      return nullptr;
    }
    std::vector<int64_t> dims = x.dims;
    std::fill(dims.begin() + 2, dims.end(), 1);
    RETURN_IF_ORT(Output(api, ctx, dims, &y));
    for (size_t p = 0; p < planes; ++p) {
      const double* a = x.data + p * inner;
      if (k.op == "GlobalMaxPool") {
        y[p] = inner == 0 ? std::nan("") : *std::max_element(a, a + inner);
      } else {
        double s = 0;
        for (size_t i = 0; i < inner; ++i) s += a[i];
        y[p] = s / static_cast<double>(inner);
      }
    }
    return nullptr;
  }
  RETURN_IF_ORT(Output(api, ctx, x.dims, &y));
  for (size_t i = 0; i < x.count; ++i) y[i] = Unary(k, x.data[i]);
  return nullptr;
}

struct ExactOp : OrtCustomOp {
  std::string name;
  size_t inputs = 1;
};

const ExactOp& Self(const OrtCustomOp* op) { return *static_cast<const ExactOp*>(op); }

OrtStatus* ORT_API_CALL CreateKernelV2(const OrtCustomOp* op, const OrtApi* api,
                                       const OrtKernelInfo* info, void** kernel) {
  auto k = std::make_unique<Kernel>();
  k->api = api;
  k->op = Self(op).name;
  if (k->op == "Selu") {
    k->alpha = FloatAttr(api, info, "alpha", 1.67326319217681884765625f);
    k->gamma = FloatAttr(api, info, "gamma", 1.05070102214813232421875f);
  } else if (k->op == "HardSigmoid") {
    k->alpha = FloatAttr(api, info, "alpha", 0.2f);
    k->beta = FloatAttr(api, info, "beta", 0.5f);
  } else {
    k->alpha = FloatAttr(api, info, "alpha", 1.0f);
  }
  k->epsilon = FloatAttr(api, info, "epsilon", 1e-5f);
  k->tanh_gelu = StringAttr(api, info, "approximate") == "tanh";
  if (k->op == "ConvTranspose") {
    k->ct.strides = IntsAttr(api, info, "strides");
    k->ct.pads = IntsAttr(api, info, "pads");
    k->ct.dilations = IntsAttr(api, info, "dilations");
    k->ct.output_padding = IntsAttr(api, info, "output_padding");
    k->ct.group = IntAttr(api, info, "group", 1);
  }
  if (k->op == "AveragePool") {
    k->pool.kernel = IntsAttr(api, info, "kernel_shape");
    k->pool.strides = IntsAttr(api, info, "strides");
    k->pool.pads = IntsAttr(api, info, "pads");
    k->pool.dilations = IntsAttr(api, info, "dilations");
    std::string pad = StringAttr(api, info, "auto_pad");
    k->pool.auto_pad = pad.empty() ? "NOTSET" : pad;
    k->pool.ceil_mode = IntAttr(api, info, "ceil_mode", 0) != 0;
    k->pool.count_include_pad = IntAttr(api, info, "count_include_pad", 0) != 0;
  }
  *kernel = k.release();
  return nullptr;
}

void* ORT_API_CALL CreateKernel(const OrtCustomOp* op, const OrtApi* api,
                                const OrtKernelInfo* info) {
  void* k = nullptr;
  OrtStatus* st = CreateKernelV2(op, api, info, &k);
  if (st != nullptr) api->ReleaseStatus(st);
  return k;
}

OrtStatus* ORT_API_CALL ComputeV2(void* kernel, OrtKernelContext* ctx) {
  return Compute(*static_cast<Kernel*>(kernel), ctx);
}

void ORT_API_CALL ComputeV1(void* kernel, OrtKernelContext* ctx) {
  const Kernel& k = *static_cast<Kernel*>(kernel);
  OrtStatus* st = Compute(k, ctx);
  if (st != nullptr) k.api->ReleaseStatus(st);
}

void ORT_API_CALL Destroy(void* kernel) { delete static_cast<Kernel*>(kernel); }

const char* ORT_API_CALL Name(const OrtCustomOp* op) { return Self(op).name.c_str(); }
const char* ORT_API_CALL Provider(const OrtCustomOp*) { return "CPUExecutionProvider"; }
ONNXTensorElementDataType ORT_API_CALL DoubleType(const OrtCustomOp*, size_t) {
  return ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE;
}
size_t ORT_API_CALL InputCount(const OrtCustomOp* op) { return Self(op).inputs; }
size_t ORT_API_CALL OneOutput(const OrtCustomOp*) { return 1; }
OrtCustomOpInputOutputCharacteristic ORT_API_CALL Required(const OrtCustomOp*, size_t) {
  return INPUT_OUTPUT_REQUIRED;
}
// ConvTranspose's bias is optional
OrtCustomOpInputOutputCharacteristic ORT_API_CALL InputKind(const OrtCustomOp* op, size_t i) {
  return Self(op).name == "ConvTranspose" && i == 2 ? INPUT_OUTPUT_OPTIONAL : INPUT_OUTPUT_REQUIRED;
}
OrtMemType ORT_API_CALL DefaultMemory(const OrtCustomOp*, size_t) { return OrtMemTypeDefault; }
int ORT_API_CALL One(const OrtCustomOp*) { return 1; }

std::unique_ptr<ExactOp> MakeOp(const std::string& name) {
  auto op = std::make_unique<ExactOp>();
  OrtCustomOp& c = *op;
  c = OrtCustomOp{};
  c.version = kCustomOpVersion;
  c.CreateKernel = CreateKernel;
  c.GetName = Name;
  c.GetExecutionProviderType = Provider;
  c.GetInputType = DoubleType;
  c.GetInputTypeCount = InputCount;
  c.GetOutputType = DoubleType;
  c.GetOutputTypeCount = OneOutput;
  c.KernelCompute = ComputeV1;
  c.KernelDestroy = Destroy;
  c.GetInputCharacteristic = InputKind;
  c.GetOutputCharacteristic = Required;
  c.GetInputMemoryType = DefaultMemory;
  c.GetVariadicInputMinArity = One;
  c.GetVariadicInputHomogeneity = One;
  c.GetVariadicOutputMinArity = One;
  c.GetVariadicOutputHomogeneity = One;
  c.CreateKernelV2 = CreateKernelV2;
  c.KernelComputeV2 = ComputeV2;
  op->name = name;
  op->inputs = name == "InstanceNormalization" || name == "ConvTranspose" ? 3 : 1;
  return op;
}

// One domain per loaded runtime, kept for the process: sessions of that runtime hold it.
struct Registry {
  std::mutex mu;
  std::map<const OrtApi*, OrtCustomOpDomain*> domains;
  std::vector<std::unique_ptr<ExactOp>> ops;
};

Registry& TheRegistry() {
  static Registry* r = new Registry();  // never destroyed: sessions may outlive static exit
  return *r;
}

}  // namespace

Status AddExactKernels(const OrtApi* api, OrtSessionOptions* so) {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  OrtCustomOpDomain*& domain = r.domains[api];
  if (domain == nullptr) {
    OP_RETURN_IF_ERROR(FromOrt(api, api->CreateCustomOpDomain(kExactDomain, &domain),
                               "onnxprobe's float64 kernels"));
    for (const std::string& name : OwnExactKernelOps()) {
      r.ops.push_back(MakeOp(name));
      OP_RETURN_IF_ERROR(FromOrt(api, api->CustomOpDomain_Add(domain, r.ops.back().get()),
                                 "onnxprobe's float64 kernel " + name));
    }
  }
  return FromOrt(api, api->AddCustomOpDomain(so, domain), "onnxprobe's float64 kernels");
}

}  // namespace onnxprobe
