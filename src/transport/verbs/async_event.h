// A device's asynchronous event, reduced to what the health layer acts on,
// and its translation into the RailMonitor's AsyncEvent.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

#include "health/rail_monitor.h"

namespace tent {

struct VerbsAsyncEvent {
    enum class Kind { PortError, PortActive, DeviceFatal, QpFatal, Other };
    Kind kind = Kind::Other;
    ibv_event_type type = IBV_EVENT_COMM_EST;  // the raw event
    std::uint8_t port_num = 0;                 // PortError/PortActive: element.port_num
    std::uint32_t qp_num = 0;                  // QpFatal: the QP's number
};

// Reads the element that belongs to the event type (port, QP) before the
// event is acknowledged.
VerbsAsyncEvent classify_async_event(const ibv_async_event& event);

const char* async_event_kind_name(VerbsAsyncEvent::Kind kind);

// PortError/PortActive/DeviceFatal change rail state at once; a QP fatal
// concerns one rail only, whose ops complete with errors of their own.
AsyncEvent health_event_of(VerbsAsyncEvent::Kind kind);

} // namespace tent
