#include "common/status.h"

#include <cstring>

namespace tent {

const char* code_name(Code c) {
    switch (c) {
    case Code::Ok: return "ok";
    case Code::InvalidArgument: return "invalid argument";
    case Code::OutOfRange: return "out of range";
    case Code::NotFound: return "not found";
    case Code::AlreadyExists: return "already exists";
    case Code::Unsupported: return "unsupported";
    case Code::Busy: return "busy";
    case Code::Timeout: return "timeout";
    case Code::NoResources: return "no resources";
    case Code::RailDown: return "rail down";
    case Code::TransportError: return "transport error";
    case Code::RemoteAccess: return "remote access error";
    case Code::PeerUnreachable: return "peer unreachable";
    case Code::FailoverExhausted: return "failover exhausted";
    case Code::SystemError: return "system error";
    case Code::Internal: return "internal error";
    }
    return "unknown";
}

Status Status::from_errno(int err, const std::string& what) {
    char buf[128];
    // GNU strerror_r returns the message, which may not be buf.
    const char* text = strerror_r(err, buf, sizeof buf);
    return Status(Code::SystemError, what + ": " + text);
}

std::string Status::to_string() const {
    if (is_ok()) return "ok";
    return std::string(code_name(code_)) + ": " + message_;
}

} // namespace tent
