// Error handling for onnxprobe: every library call that can fail returns Status or Expected<T>.
// Messages name the thing that is wrong (file, tensor, node, expected vs got).
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace onnxprobe {

enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,  // bad user input: option strings, shapes, mismatched inputs
  kNotFound,         // a file, tensor or node that does not exist
  kIoError,          // read/write failure
  kCorrupt,          // a file that exists but cannot be parsed
  kUnsupported,      // a valid request this build cannot honour
  kBackend,          // the runtime failed or rejected the model
  kResourceExhausted,
};

class Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // Returns a copy whose message is "<prefix>: <message>".
  Status WithContext(const std::string& prefix) const {
    return ok() ? *this : Status(code_, prefix + ": " + message_);
  }

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {ErrorCode::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {ErrorCode::kNotFound, std::move(m)}; }
inline Status IoError(std::string m) { return {ErrorCode::kIoError, std::move(m)}; }
inline Status Corrupt(std::string m) { return {ErrorCode::kCorrupt, std::move(m)}; }
inline Status Unsupported(std::string m) { return {ErrorCode::kUnsupported, std::move(m)}; }
inline Status BackendError(std::string m) { return {ErrorCode::kBackend, std::move(m)}; }
inline Status ResourceExhausted(std::string m) {
  return {ErrorCode::kResourceExhausted, std::move(m)};
}

// A value or the Status explaining why there is none.
template <typename T>
class Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  Expected(Status status) : v_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<1>(v_);
  }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace onnxprobe

#define ONNXPROBE_CONCAT_INNER(a, b) a##b
#define ONNXPROBE_CONCAT(a, b) ONNXPROBE_CONCAT_INNER(a, b)

// Returns from the enclosing function when `expr` (a Status) is an error.
#define OP_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::onnxprobe::Status op_status_ = (expr); \
    if (!op_status_.ok()) return op_status_; \
  } while (0)

// Declares `lhs` from an Expected<T>, returning its Status from the enclosing function on error.
#define OP_ASSIGN_OR_RETURN(lhs, expr) \
  OP_ASSIGN_OR_RETURN_IMPL(ONNXPROBE_CONCAT(op_expected_, __LINE__), lhs, expr)
#define OP_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
