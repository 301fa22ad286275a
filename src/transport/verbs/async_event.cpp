#include "transport/verbs/async_event.h"

namespace tent {

VerbsAsyncEvent classify_async_event(const ibv_async_event& ev) {
    VerbsAsyncEvent e;
    e.type = ev.event_type;
    switch (ev.event_type) {
    case IBV_EVENT_PORT_ERR:
        e.kind = VerbsAsyncEvent::Kind::PortError;
        e.port_num = static_cast<std::uint8_t>(ev.element.port_num);
        break;
    case IBV_EVENT_PORT_ACTIVE:
        e.kind = VerbsAsyncEvent::Kind::PortActive;
        e.port_num = static_cast<std::uint8_t>(ev.element.port_num);
        break;
    case IBV_EVENT_DEVICE_FATAL: e.kind = VerbsAsyncEvent::Kind::DeviceFatal; break;
    case IBV_EVENT_QP_FATAL:
        e.kind = VerbsAsyncEvent::Kind::QpFatal;
        e.qp_num = ev.element.qp ? ev.element.qp->qp_num : 0;
        break;
    default: break;
    }
    return e;
}

const char* async_event_kind_name(VerbsAsyncEvent::Kind kind) {
    switch (kind) {
    case VerbsAsyncEvent::Kind::PortError: return "port error";
    case VerbsAsyncEvent::Kind::PortActive: return "port active";
    case VerbsAsyncEvent::Kind::DeviceFatal: return "device fatal";
    case VerbsAsyncEvent::Kind::QpFatal: return "qp fatal";
    case VerbsAsyncEvent::Kind::Other: return "other";
    }
    return "?";
}

AsyncEvent health_event_of(VerbsAsyncEvent::Kind kind) {
    switch (kind) {
    case VerbsAsyncEvent::Kind::PortError: return AsyncEvent::PortError;
    case VerbsAsyncEvent::Kind::PortActive: return AsyncEvent::PortActive;
    case VerbsAsyncEvent::Kind::DeviceFatal: return AsyncEvent::DeviceFatal;
    case VerbsAsyncEvent::Kind::QpFatal:
    case VerbsAsyncEvent::Kind::Other: return AsyncEvent::Other;
    }
    return AsyncEvent::Other;
}

} // namespace tent
