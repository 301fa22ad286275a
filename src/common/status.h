// Status and Result<T>: every fallible call in tent returns one of these.
// Codes are grouped by what the caller should do about them (see Scope).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace tent {

enum class Code {
    Ok = 0,
    // Caller error: fix the input, do not retry.
    InvalidArgument,
    OutOfRange,
    NotFound,
    AlreadyExists,
    Unsupported,
    // Operation-scoped: retrying the same operation later may succeed.
    Busy,
    Timeout,
    NoResources,
    // Rail-scoped: this rail failed; fail over to another rail.
    RailDown,
    TransportError,
    RemoteAccess,
    // Endpoint-scoped: every path to the peer is gone; give up on it.
    PeerUnreachable,
    FailoverExhausted,
    // Process-scoped: a system call or invariant failed.
    SystemError,
    Internal,
};

enum class Scope { None, Caller, Operation, Rail, Endpoint, Process };

constexpr Scope scope_of(Code c) {
    switch (c) {
    case Code::Ok: return Scope::None;
    case Code::InvalidArgument:
    case Code::OutOfRange:
    case Code::NotFound:
    case Code::AlreadyExists:
    case Code::Unsupported: return Scope::Caller;
    case Code::Busy:
    case Code::Timeout:
    case Code::NoResources: return Scope::Operation;
    case Code::RailDown:
    case Code::TransportError:
    case Code::RemoteAccess: return Scope::Rail;
    case Code::PeerUnreachable:
    case Code::FailoverExhausted: return Scope::Endpoint;
    case Code::SystemError:
    case Code::Internal: return Scope::Process;
    }
    return Scope::Process;
}

const char* code_name(Code c);

class [[nodiscard]] Status {
public:
    Status() = default;
    Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

    static Status ok() { return {}; }
    // A failed system call: appends strerror(err) to the message.
    static Status from_errno(int err, const std::string& what);

    bool is_ok() const { return code_ == Code::Ok; }
    explicit operator bool() const { return is_ok(); }
    Code code() const { return code_; }
    Scope scope() const { return scope_of(code_); }
    const std::string& message() const { return message_; }
    std::string to_string() const;

private:
    Code code_ = Code::Ok;
    std::string message_;
};

// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : v_(std::move(value)) {}
    Result(Status status) : v_(std::move(status)) {}

    bool is_ok() const { return std::holds_alternative<T>(v_); }
    explicit operator bool() const { return is_ok(); }
    const T& value() const& { return std::get<T>(v_); }
    T& value() & { return std::get<T>(v_); }
    T&& value() && { return std::get<T>(std::move(v_)); }
    const T& operator*() const& { return value(); }
    T& operator*() & { return value(); }
    const T* operator->() const { return &value(); }
    T* operator->() { return &value(); }
    Status status() const { return is_ok() ? Status::ok() : std::get<Status>(v_); }

private:
    std::variant<T, Status> v_;
};

} // namespace tent
