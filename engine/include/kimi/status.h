// Status and Result<T>: the one error type of the whole product (engine and appliance).
//
// A Status is either OK or carries a code and a human-readable message. Functions that can
// fail return Status, or Result<T> when they also produce a value. No exception crosses a
// module boundary; the HTTP layer turns a Status into OpenAI's error JSON in one place
// (appliance/http/error_response.h).
//
// Thread safety: Status and Result are values; distinct objects may be used from distinct
// threads, a shared one only for reading.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace kimi {

class Status {
 public:
  enum class Code {
    kOk = 0,
    kInvalidArgument,     // the caller's input is wrong (HTTP 400)
    kNotFound,            // a named thing does not exist (404)
    kAlreadyExists,       // a named thing exists and must not (409)
    kPermissionDenied,    // authenticated but not allowed (403)
    kUnauthenticated,     // no or bad credentials (401)
    kResourceExhausted,   // a quota, a budget or a size cap was hit (429 or 413)
    kFailedPrecondition,  // the system is not in a state to do this (409/400)
    kUnavailable,         // try later: not ready, backend down, audit store failing (503)
    kCorruption,          // stored data is damaged or forged
    kIOError,             // the operating system refused a read or write
    kCancelled,           // the caller went away
    kDeadlineExceeded,    // a timeout (504)
    kUnimplemented,       // a feature this build or model does not support
    kInternal,            // a bug: an invariant did not hold
    kBadGateway,          // a server this one forwards to answered outside its protocol (502)
  };

  Status() = default;  // OK

  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string msg) { return Status(Code::kInvalidArgument, std::move(msg)); }
  static Status NotFound(std::string msg) { return Status(Code::kNotFound, std::move(msg)); }
  static Status AlreadyExists(std::string msg) { return Status(Code::kAlreadyExists, std::move(msg)); }
  static Status PermissionDenied(std::string msg) { return Status(Code::kPermissionDenied, std::move(msg)); }
  static Status Unauthenticated(std::string msg) { return Status(Code::kUnauthenticated, std::move(msg)); }
  static Status ResourceExhausted(std::string msg) { return Status(Code::kResourceExhausted, std::move(msg)); }
  static Status FailedPrecondition(std::string msg) { return Status(Code::kFailedPrecondition, std::move(msg)); }
  static Status Unavailable(std::string msg) { return Status(Code::kUnavailable, std::move(msg)); }
  static Status Corruption(std::string msg) { return Status(Code::kCorruption, std::move(msg)); }
  static Status IOError(std::string msg) { return Status(Code::kIOError, std::move(msg)); }
  static Status Cancelled(std::string msg) { return Status(Code::kCancelled, std::move(msg)); }
  static Status DeadlineExceeded(std::string msg) { return Status(Code::kDeadlineExceeded, std::move(msg)); }
  static Status Unimplemented(std::string msg) { return Status(Code::kUnimplemented, std::move(msg)); }
  static Status Internal(std::string msg) { return Status(Code::kInternal, std::move(msg)); }
  static Status BadGateway(std::string msg) { return Status(Code::kBadGateway, std::move(msg)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // "InvalidArgument: message", or "OK".
  std::string ToString() const;
  static std::string_view CodeName(Code code);

  // Returns a copy with "context: " put in front of the message; OK stays OK.
  Status WithContext(std::string_view context) const;

  bool operator==(const Status& other) const = default;

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  Code code_ = Code::kOk;
  std::string message_;
};

// A value or the Status that explains why there is none. Never holds an OK status
// without a value.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    assert(!status_.ok() && "a Result built from a Status must hold an error");
    if (status_.ok()) status_ = Status::Internal("Result built from an OK status without a value");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  // Preconditions: ok().
  T& value() & { assert(ok()); return *value_; }
  const T& value() const& { assert(ok()); return *value_; }
  T&& value() && { assert(ok()); return std::move(*value_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace kimi

// Evaluates expr (a Status); returns it from the current function when it is an error.
#define KIMI_RETURN_IF_ERROR(expr)                    \
  do {                                                \
    ::kimi::Status _kimi_status = (expr);             \
    if (!_kimi_status.ok()) return _kimi_status;      \
  } while (0)

#define KIMI_CONCAT_INNER_(a, b) a##b
#define KIMI_CONCAT_(a, b) KIMI_CONCAT_INNER_(a, b)

// KIMI_ASSIGN_OR_RETURN(auto x, FunctionReturningResult());
#define KIMI_ASSIGN_OR_RETURN(lhs, expr) \
  KIMI_ASSIGN_OR_RETURN_IMPL_(KIMI_CONCAT_(_kimi_result_, __LINE__), lhs, expr)
#define KIMI_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()
