// Flags shared by `run` and `compare`: inputs and session settings.
#include "cli.h"

namespace onnxprobe::cli {

Expected<int> ParseOptLevel(const std::string& s) {
  auto level = ParseOptLevelName(s);
  if (!level.ok())
    return InvalidArgument("bad --opt-level '" + s + "' (disabled, basic, extended or all)");
  return level;
}

namespace {

template <typename F>
bool Take(Args& args, const std::string& flag, Status* st, F&& f) {
  if (!args.Flag(flag)) return false;
  auto v = args.Value();
  *st = v.ok() ? f(*v) : v.status();
  return true;
}

}  // namespace

bool ParseInputFlag(Args& args, InputOptions* o, Status* st) {
  return Take(args, "--input", st,
              [&](const std::string& v) {
                o->files.push_back(v);
                return Status::Ok();
              }) ||
         Take(args, "--shape", st,
              [&](const std::string& v) -> Status {
                OP_ASSIGN_OR_RETURN(auto ns, ParseNamedShape(v));
                o->shapes[ns.first] = ns.second;
                return Status::Ok();
              }) ||
         Take(args, "--dim", st,
              [&](const std::string& v) -> Status {
                OP_ASSIGN_OR_RETURN(auto kv, ParseKeyValue(v, "--dim"));
                OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(kv.second, "--dim " + kv.first));
                if (n < 0) return InvalidArgument("--dim " + kv.first + " must not be negative");
                o->dim_params[kv.first] = n;
                return Status::Ok();
              }) ||
         Take(args, "--range", st,
              [&](const std::string& v) -> Status {
                OP_ASSIGN_OR_RETURN(auto r, ParseRange(v));
                o->ranges[r.first] = r.second;
                return Status::Ok();
              }) ||
         Take(args, "--seed", st, [&](const std::string& v) -> Status {
           OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(v, "--seed"));
           o->seed = static_cast<uint64_t>(n);
           return Status::Ok();
         });
}

bool ParseSessionFlag(Args& args, const std::string& prefix, SessionFlags* o, Status* st) {
  auto name = [&](const char* f) { return prefix.empty() ? std::string("--") + f : prefix + f; };
  auto threads = [](int* field, const char* what) {
    return [field, what](const std::string& v) -> Status {
      OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(v, what));
      if (n < 0 || n > 4096)
        return InvalidArgument(std::string(what) + " must be between 0 and 4096");
      *field = static_cast<int>(n);
      return Status::Ok();
    };
  };
  if (Take(args, name("provider"), st,
           [&](const std::string& v) {
             o->session.provider = v;
             o->touched.insert("provider");
             return Status::Ok();
           }) ||
      Take(args, name("provider-option"), st,
           [&](const std::string& v) -> Status {
             OP_ASSIGN_OR_RETURN(auto kv, ParseKeyValue(v, name("provider-option")));
             o->session.provider_options[kv.first] = kv.second;
             o->touched.insert("provider_options");
             return Status::Ok();
           }) ||
      Take(args, name("opt-level"), st,
           [&](const std::string& v) -> Status {
             OP_ASSIGN_OR_RETURN(o->session.optimization_level, ParseOptLevel(v));
             o->touched.insert("opt");
             return Status::Ok();
           }) ||
      Take(args, name("ort-lib"), st,
           [&](const std::string& v) {
             o->ort_lib = v;
             o->touched.insert("ort");
             return Status::Ok();
           }) ||
      Take(args, name("ort-version"), st, [&](const std::string& v) {
        o->ort_version = v;
        o->touched.insert("ort");
        return Status::Ok();
      })) {
    return true;
  }
  if (Take(args, name("intra-threads"), st,
           threads(&o->session.intra_op_threads, "--intra-threads"))) {
    o->touched.insert("intra");
    return true;
  }
  if (Take(args, name("inter-threads"), st,
           threads(&o->session.inter_op_threads, "--inter-threads"))) {
    o->touched.insert("inter");
    return true;
  }
  if (args.Flag(name("parallel"))) {
    o->session.sequential = false;
    o->touched.insert("parallel");
    return true;
  }
  return false;
}

SessionFlags MergeSessionFlags(const SessionFlags& shared, const SessionFlags& side) {
  SessionFlags out = shared;
  const auto& t = side.touched;
  if (t.count("provider")) out.session.provider = side.session.provider;
  if (t.count("provider_options")) out.session.provider_options = side.session.provider_options;
  if (t.count("opt")) out.session.optimization_level = side.session.optimization_level;
  if (t.count("intra")) out.session.intra_op_threads = side.session.intra_op_threads;
  if (t.count("inter")) out.session.inter_op_threads = side.session.inter_op_threads;
  if (t.count("parallel")) out.session.sequential = false;
  if (t.count("ort")) {
    out.ort_lib = side.ort_lib;
    out.ort_version = side.ort_version;
  }
  out.touched.insert(t.begin(), t.end());
  return out;
}

Expected<std::string> ResolveOrtLibrary(const SessionFlags& f) {
  if (!f.ort_lib.empty() && !f.ort_version.empty()) {
    return InvalidArgument("give --ort-lib or --ort-version, not both");
  }
  if (!f.ort_version.empty()) return OrtLibraryForVersion(f.ort_version);
  return f.ort_lib;
}

}  // namespace onnxprobe::cli
