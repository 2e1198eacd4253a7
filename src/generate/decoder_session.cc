#include "decoder_session.h"

#include <algorithm>
#include <cstring>

#include "onnxprobe/backend/platform.h"
#include "onnxprobe/graph/graph.h"

namespace onnxprobe {
namespace {

Expected<Tensor> IdsTensor(int elem_type, const std::vector<int64_t>& values) {
  bool i32 = elem_type == 6;
  OP_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(i32 ? DType::kInt32 : DType::kInt64,
                                                 Shape{1, static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) {
    if (i32) {
      t.data_as<int32_t>()[i] = static_cast<int32_t>(values[i]);
    } else {
      t.data_as<int64_t>()[i] = values[i];
    }
  }
  return t;
}

int ElemType(const Model& m, const std::string& name) {
  const ValueInfo* v = m.FindValueInfo(name);
  return v != nullptr ? v->elem_type : 7;
}

}  // namespace

Expected<Tensor> AsFloat32(const Tensor& t) {
  if (t.dtype() == DType::kFloat32) return t;
  if (!IsFloating(t.dtype())) {
    return InvalidArgument(std::string("expected a floating-point tensor, got ") +
                           DTypeName(t.dtype()));
  }
  OP_ASSIGN_OR_RETURN(Tensor f, Tensor::Allocate(DType::kFloat32, t.shape()));
  float* out = f.data_as<float>();
  for (uint64_t i = 0; i < t.num_elements(); ++i)
    out[i] = static_cast<float>(ElementAsDouble(t, i));
  return f;
}

Expected<Tensor> SliceAxis(const Tensor& t, int axis, int64_t from, int64_t to) {
  const Shape& s = t.shape();
  if (axis < 0 || axis >= static_cast<int>(s.size()) || from < 0 || to > s[axis] || from > to) {
    return InvalidArgument("cannot take positions [" + std::to_string(from) + ", " +
                           std::to_string(to) + ") of axis " + std::to_string(axis) +
                           " of a tensor of shape " + ShapeToString(s));
  }
  Shape out_shape = s;
  out_shape[axis] = to - from;
  OP_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(t.dtype(), out_shape));
  int64_t outer = 1, inner = static_cast<int64_t>(DTypeSize(t.dtype()));
  for (int i = 0; i < axis; ++i) outer *= s[i];
  for (size_t i = axis + 1; i < s.size(); ++i) inner *= s[i];
  const auto* src = static_cast<const uint8_t*>(t.data());
  auto* dst = static_cast<uint8_t*>(out.data());
  int64_t n = to - from;
  for (int64_t o = 0; o < outer; ++o) {
    if (n == 0) break;
    std::memcpy(dst + o * n * inner, src + (o * s[axis] + from) * inner,
                static_cast<size_t>(n * inner));
  }
  return out;
}

Expected<Tensor> ConcatAxis(const Tensor& a, const Tensor& b, int axis) {
  const Shape &sa = a.shape(), &sb = b.shape();
  bool ok = a.dtype() == b.dtype() && sa.size() == sb.size() && axis >= 0 &&
            axis < static_cast<int>(sa.size());
  for (size_t i = 0; ok && i < sa.size(); ++i) ok = static_cast<int>(i) == axis || sa[i] == sb[i];
  if (!ok) {
    return InvalidArgument("cannot join tensors " + std::string(DTypeName(a.dtype())) +
                           ShapeToString(sa) + " and " + DTypeName(b.dtype()) + ShapeToString(sb) +
                           " along axis " + std::to_string(axis));
  }
  Shape out_shape = sa;
  out_shape[axis] = sa[axis] + sb[axis];
  OP_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(a.dtype(), out_shape));
  int64_t outer = 1, inner = static_cast<int64_t>(DTypeSize(a.dtype()));
  for (int i = 0; i < axis; ++i) outer *= sa[i];
  for (size_t i = axis + 1; i < sa.size(); ++i) inner *= sa[i];
  auto* dst = static_cast<uint8_t*>(out.data());
  const auto* pa = static_cast<const uint8_t*>(a.data());
  const auto* pb = static_cast<const uint8_t*>(b.data());
  size_t na = static_cast<size_t>(sa[axis] * inner), nb = static_cast<size_t>(sb[axis] * inner);
  for (int64_t o = 0; o < outer; ++o) {
    if (na > 0) std::memcpy(dst, pa + o * na, na);
    dst += na;
    if (nb > 0) std::memcpy(dst, pb + o * nb, nb);
    dst += nb;
  }
  return out;
}

Expected<std::unique_ptr<DecoderSide>> OpenDecoderSide(const GenerateSide& side,
                                                       const std::string& label) {
  if (IsSavedGeneration(side.path)) {
    if (!side.io.empty()) {
      return InvalidArgument(label + " (" + side.path +
                             "): --io does nothing for a saved run (its cache is named in "
                             "generation.json)");
    }
    return OpenSavedGeneration(side.path, label);
  }
  OP_ASSIGN_OR_RETURN(auto live, DecoderSession::Open(side, label));
  return std::unique_ptr<DecoderSide>(std::move(live));
}

Expected<std::unique_ptr<DecoderSession>> DecoderSession::Open(const GenerateSide& side,
                                                               const std::string& label) {
  auto loaded = Model::Load(side.path);
  if (!loaded.ok()) return loaded.status().WithContext(label);
  auto io = DiscoverDecoderIo(*loaded, side.io);
  if (!io.ok()) return io.status().WithContext(label);
  std::unique_ptr<DecoderSession> d(new DecoderSession(std::move(*loaded), std::move(*io)));
  d->side_ = side;
  d->label_ = label;
  auto backend = LoadBackend(side.ort_library);
  if (!backend.ok()) return backend.status().WithContext(label);
  d->backend_ = *backend;
  OP_ASSIGN_OR_RETURN(std::string bytes, MarkOutputs(d->model_, {}));
  auto session = d->backend_->CreateSession(bytes, d->model_.dir(), side.session);
  if (!session.ok()) return session.status().WithContext(label + " (" + side.path + ")");
  d->session_ = std::move(*session);
  d->fetch_.push_back(d->io_.logits);
  for (const auto& c : d->io_.cache) d->fetch_.push_back(c.present);
  return d;
}

std::string DecoderSession::Describe() const {
  return side_.path + " on onnxruntime " + backend_->version() + " " +
         FullProviderName(side_.session.provider) + ", optimizations " +
         OptLevelName(side_.session.optimization_level);
}

Expected<DecoderCache> DecoderSession::EmptyCache() const {
  DecoderCache cache;
  for (const auto& slot : io_.cache) {
    const ValueInfo* v = model_.FindValueInfo(slot.past);
    if (v == nullptr || !v->has_shape) {
      return InvalidArgument(label_ + " (" + side_.path + "): past input '" + slot.past +
                             "' has no shape in the model, so its empty cache cannot be made");
    }
    Shape shape;
    for (size_t i = 0; i < v->dims.size(); ++i) {
      int64_t d = v->dims[i].value;
      if (static_cast<int>(i) == slot.seq_axis) {
        d = 0;
      } else if (d < 0) {
        bool batch = i == 0 || (slot.kind == 'c' && i == 1);
        if (!batch) {
          return InvalidArgument(label_ + " (" + side_.path + "): past input '" + slot.past +
                                 "' has an unknown dimension " + std::to_string(i) + " (" +
                                 ValueInfoTypeString(*v) +
                                 "): only the batch and the sequence may be symbolic");
        }
        d = 1;
      }
      shape.push_back(d);
    }
    OP_ASSIGN_OR_RETURN(DType dt, DTypeFromOnnx(v->elem_type));
    OP_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dt, shape));
    cache.tensors.push_back(std::move(t));
  }
  return cache;
}

Expected<std::vector<NamedTensor>> DecoderSession::StepInputs(const std::vector<int64_t>& tokens,
                                                              const DecoderCache& cache) const {
  std::vector<NamedTensor> in;
  int64_t n = static_cast<int64_t>(tokens.size());
  OP_ASSIGN_OR_RETURN(Tensor ids, IdsTensor(ElemType(model_, io_.input_ids), tokens));
  in.push_back({io_.input_ids, std::move(ids)});
  if (!io_.attention_mask.empty()) {
    std::vector<int64_t> mask(static_cast<size_t>(cache.length + n), 1);
    for (int64_t i = 0; i < pad_ && i < cache.length + n; ++i) mask[static_cast<size_t>(i)] = 0;
    OP_ASSIGN_OR_RETURN(Tensor m, IdsTensor(ElemType(model_, io_.attention_mask), mask));
    in.push_back({io_.attention_mask, std::move(m)});
  }
  if (!io_.position_ids.empty()) {
    std::vector<int64_t> pos(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) pos[i] = std::max<int64_t>(0, cache.length + i - pad_);
    OP_ASSIGN_OR_RETURN(Tensor p, IdsTensor(ElemType(model_, io_.position_ids), pos));
    in.push_back({io_.position_ids, std::move(p)});
  }
  for (size_t i = 0; i < io_.cache.size(); ++i) in.push_back({io_.cache[i].past, cache.tensors[i]});
  return in;
}

Expected<DecoderStep> DecoderSession::Step(const std::vector<int64_t>& tokens,
                                           DecoderCache* cache) {
  OP_ASSIGN_OR_RETURN(std::vector<NamedTensor> in, StepInputs(tokens, *cache));
  std::vector<std::pair<std::string, const Tensor*>> refs;
  for (const auto& nt : in) refs.emplace_back(nt.name, &nt.tensor);
  auto out = session_->Run(refs, fetch_);
  if (!out.ok()) return out.status().WithContext(label_ + " (" + side_.path + ")");
  DecoderStep step;
  const Tensor& logits = (*out)[0].tensor;
  const Shape& ls = logits.shape();
  if (ls.empty() || logits.num_elements() == 0) {
    return InvalidArgument(label_ + ": logits output '" + io_.logits + "' came back with shape " +
                           ShapeToString(ls));
  }
  // the last position: logits are [..., positions, vocab] (or [vocab] for one position)
  int64_t vocab = ls.back();
  OP_ASSIGN_OR_RETURN(Tensor all, AsFloat32(logits));
  OP_ASSIGN_OR_RETURN(step.logits, Tensor::Allocate(DType::kFloat32, Shape{vocab}));
  std::memcpy(step.logits.data(),
              all.data_as<float>() + (all.num_elements() - static_cast<uint64_t>(vocab)),
              static_cast<size_t>(vocab) * sizeof(float));
  int64_t grown = cache->length + static_cast<int64_t>(tokens.size());
  for (size_t i = 0; i < io_.cache.size(); ++i) {
    Tensor& p = (*out)[i + 1].tensor;
    const CacheSlot& slot = io_.cache[i];
    if (slot.seq_axis < 0 || static_cast<int>(p.shape().size()) <= slot.seq_axis ||
        p.shape()[slot.seq_axis] != grown) {
      return InvalidArgument(label_ + ": present output '" + slot.present + "' has shape " +
                             ShapeToString(p.shape()) + ", expected " + std::to_string(grown) +
                             " positions along axis " + std::to_string(slot.seq_axis) +
                             " (map the cache with --io PAST=PRESENT)");
    }
    step.present.push_back(p);
  }
  cache->tensors = step.present;
  cache->length = grown;
  return step;
}

}  // namespace onnxprobe
