// The Transport interface: what the engine needs from one way of moving bytes
// (verbs, TCP, shared memory). Deliberately small and engine-agnostic:
// install/uninstall, submit a request, poll its completion.
//
// Two failure stages, both reported per request:
//   - submit(): the request never left (a dead QP, a full send queue, a closed
//     socket). The returned Status says so; no completion follows.
//   - poll():   the request left but did not complete; its Completion carries
//     the error status.
// The engine fails over on either (failover budget, src/policy/failover_budget.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/transport_kind.h"

namespace tent {

enum class TransferOp { Read, Write };

struct TransferRequest {
    std::uint64_t id = 0;           // the caller's handle, echoed in the completion
    TransferOp op = TransferOp::Write;
    void* local = nullptr;          // local buffer
    std::uint64_t remote_addr = 0;  // address in the peer's segment
    std::uint64_t length = 0;
    std::uint64_t device_mask = 0;  // local devices the transport may use (0 = any)
};

struct Completion {
    std::uint64_t request_id = 0;
    Status status;
};

class Transport {
public:
    virtual ~Transport() = default;

    virtual TransportKind kind() const = 0;
    // Instance name for logs, e.g. "rdma" or "tcp:eth1".
    virtual const std::string& name() const = 0;

    // Acquire resources (devices, sockets). A failure makes the transport
    // unavailable; selection then skips it.
    virtual Status install() = 0;
    virtual void uninstall() = 0;

    // Start one request. An error here is a submit-stage failure: the request
    // did not start and no completion will be reported for it.
    virtual Status submit(const TransferRequest& request) = 0;

    // Append up to max completions to out; returns how many were appended.
    virtual std::size_t poll(std::vector<Completion>& out, std::size_t max) = 0;
};

} // namespace tent
