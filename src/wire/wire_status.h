// Outcome of a remote operation as the target reports it (Ack, Nack,
// ReadResponse). The classes mirror the verbs completion statuses a healthy
// HCA gives, so a TCP rail can complete a request exactly as a verbs rail
// would. Values are on the wire: never renumber, only append.
#pragma once

#include <cstdint>

#include "common/status.h"

namespace tent::wire {

enum class WireStatus : uint8_t {
    Ok = 0,
    RemoteAccess = 1,     // bad rkey, out of registered bounds, access flags (IBV_WC_REM_ACCESS_ERR)
    RemoteInvalid = 2,    // request the target cannot parse or length it cannot take (IBV_WC_REM_INV_REQ_ERR)
    RemoteOperation = 3,  // target failed to carry it out (IBV_WC_REM_OP_ERR)
    ReceiverNotReady = 4, // no receive posted for a Send (IBV_WC_RNR_RETRY_EXC_ERR)
};

const char* wire_status_name(WireStatus s);
bool is_known_wire_status(uint8_t raw);
// The tent status code the initiator reports for this outcome.
Code wire_status_code(WireStatus s);

} // namespace tent::wire
