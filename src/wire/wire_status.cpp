#include "wire/wire_status.h"

#include <string_view>

namespace tent::wire {

const char* wire_status_name(WireStatus s) {
    switch (s) {
    case WireStatus::Ok: return "ok";
    case WireStatus::RemoteAccess: return "remote access error";
    case WireStatus::RemoteInvalid: return "remote invalid request";
    case WireStatus::RemoteOperation: return "remote operation error";
    case WireStatus::ReceiverNotReady: return "receiver not ready";
    }
    return "unknown";
}

bool is_known_wire_status(uint8_t raw) {
    return std::string_view(wire_status_name(static_cast<WireStatus>(raw))) != "unknown";
}

Code wire_status_code(WireStatus s) {
    switch (s) {
    case WireStatus::Ok: return Code::Ok;
    case WireStatus::RemoteAccess: return Code::RemoteAccess;
    case WireStatus::RemoteInvalid: return Code::InvalidArgument;
    case WireStatus::RemoteOperation: return Code::TransportError;
    case WireStatus::ReceiverNotReady: return Code::Busy;
    }
    return Code::Internal;
}

} // namespace tent::wire
