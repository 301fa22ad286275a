// TransportProvider: how one kind of transport (verbs, TCP, the in-memory
// loopback used in tests) plugs into the engine. The engine owns the control
// connection (Hello/HelloAck on a TCP socket), sequence numbers, striping and
// the completion queue; a provider only
//   1. describes its local endpoints in the address blob,
//   2. registers memory on its devices and reports the keys,
//   3. builds the rails of a new connection, and
//   4. (passive side) hands over rails whose own sockets arrive later.
//
// Connection setup, as the engine drives it:
//   initiator: propose_rails() -> Hello{rails} -> (control channel) ->
//   responder: accept_rails(proposal) -> HelloAck{rails} ->
//   initiator: complete_rails(answer).
// Rails a provider can only finish asynchronously on the responder (a TCP
// rail's socket connects after HelloAck) are given to the engine later
// through RailSink::adopt_rail from poll_incoming().
//
// Threading: the engine calls a provider from one thread at a time, except
// register/deregister which may run on an application thread under the
// engine's registry lock (a provider must not call back into the engine from
// them).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "common/job_key_cell.h"
#include "common/status.h"
#include "health/rail_monitor.h"
#include "transport/rail.h"
#include "transport/region_use_lock.h"
#include "common/transport_kind.h"
#include "wire/address_blob.h"
#include "wire/auth_handshake.h"
#include "wire/memory_handle.h"
#include "wire/rail_info.h"

namespace tent {

// The engine's registration table as the target side of a TCP (or loopback)
// rail sees it: a WRITE or READ arriving with `key` is checked with
// wire::check_remote_access against the returned region before any byte is
// touched. Thread-safe.
class RegionLookup {
public:
    virtual ~RegionLookup() = default;
    virtual std::optional<wire::MemoryHandle> find_by_tcp_key(std::uint32_t key) const = 0;
    // Held shared by a rail from a look-up until the bytes it checked have
    // moved; deregistration waits for it (region_use_lock.h). Shared: a
    // rail a provider still holds may outlive the registry.
    virtual std::shared_ptr<const RegionUseLock> use_lock() const = 0;
};

// What a provider contributes to one registration.
struct RegionKeys {
    // verbs: rkey per local HCA, in this provider's blob order; the engine
    // places them at the provider's HCA offset in MemoryHandle::rkeys.
    std::vector<std::uint32_t> rkeys;
    std::vector<std::uint32_t> lkeys;  // same indices as rkeys
};

// Everything a provider knows about the connection being built.
struct RailContext {
    std::uint64_t connection_id = 0;       // non-zero, chosen by the initiator
    const wire::AddressBlob* local = nullptr;  // this engine's blob
    const wire::AddressBlob* peer = nullptr;   // the peer's blob
    // First rail id this provider may use; ids are unique per connection.
    std::uint16_t first_rail_id = 0;
    // Indices of this provider's entries in the blobs (HCA entries for
    // verbs, TCP addresses for TCP): entry i of the provider is
    // local->hcas[local_hca_offset + i] (or tcp[local_tcp_offset + i]).
    std::size_t local_hca_offset = 0;
    std::size_t peer_hca_offset = 0;
    std::size_t local_tcp_offset = 0;
    std::size_t peer_tcp_offset = 0;
    // Initiator with the job key: the rail tokens of the responder's Answer
    // (wire/auth_handshake.h), for the rails that open their own sockets.
    std::span<const wire::RailToken> rail_tokens;
};

// A rail plus the id both sides know it by.
struct NewRail {
    std::uint16_t rail_id = 0;
    std::unique_ptr<Rail> rail;
    // The local device (topology device index, -1 unknown) and endpoints for
    // the health layer.
    int device = -1;
    std::string local_device;
    int local_port = 0;
    std::string remote_device;
    int remote_port = 0;
    // Which of this provider's local entries and of the peer's entries the
    // rail joins (0-based, relative to the provider's offsets): the engine
    // takes the lkey from RegionKeys::lkeys[local_entry] and, for verbs, the
    // rkey from the remote handle's rkeys[peer_hca_offset + remote_entry].
    std::size_t local_entry = 0;
    std::size_t remote_entry = 0;
    // Bytes/s of the rail's link as its interface reports it (TCP rails;
    // link_speed.h), 0 unknown.
    double link_rate = 0.0;
};

class RailSink {
public:
    virtual ~RailSink() = default;
    // A rail of connection `connection_id` that became ready on the passive
    // side after the handshake. A rail whose connection is not there yet
    // (the connection's own proof still on its way) waits for it up to
    // connect_timeout_ms; then it is dropped.
    virtual void adopt_rail(std::uint64_t connection_id, NewRail rail) = 0;
};

// An asynchronous event of a local device (port down/up, device fatal).
struct DeviceEvent {
    std::string device;
    int port = 0;
    AsyncEvent event = AsyncEvent::Other;
};

class TransportProvider {
public:
    virtual ~TransportProvider() = default;

    virtual TransportKind kind() const = 0;
    // Names of the devices (HCAs) this provider opened; none by default.
    virtual std::vector<std::string> device_names() const { return {}; }

    // Append this provider's endpoints (HCA entries or TCP listen addresses)
    // to the local blob. Called once, after install().
    virtual Status install(const RegionLookup& regions) = 0;
    virtual void describe(wire::AddressBlob& blob) const = 0;

    // Register [addr, addr+length) with the given wire::kAccess* bits on
    // every device of this provider.
    virtual Status register_region(void* addr, std::uint64_t length, std::uint16_t access, RegionKeys& keys) = 0;
    virtual void deregister_region(void* addr, const RegionKeys& keys) = 0;

    // Initiator: rails this provider proposes to the peer (RailInfo as Hello
    // lists them, ids from ctx.first_rail_id).
    virtual Status propose_rails(const RailContext& ctx, std::vector<wire::RailInfo>& proposal) = 0;
    // Responder: answer a proposal (only the RailInfos of this provider's
    // kind are passed), create the rails it can create now.
    virtual Status accept_rails(const RailContext& ctx, const std::vector<wire::RailInfo>& proposal,
                                std::vector<wire::RailInfo>& answer, std::vector<NewRail>& rails) = 0;
    // Initiator: the responder's answer arrived; create the rails.
    virtual Status complete_rails(const RailContext& ctx, const std::vector<wire::RailInfo>& answer,
                                  std::vector<NewRail>& rails) = 0;

    // Responder: accept pending rail sockets and hand finished rails over.
    // Non-blocking. Default: nothing arrives asynchronously.
    virtual void poll_incoming(RailSink& sink) { (void)sink; }
    // The job's key, for a provider whose rails open their own sockets
    // (tcp): given before install(). Default: rails ride on authenticated
    // channels only.
    virtual void use_job_key(std::shared_ptr<const JobKeyCell> keys) { (void)keys; }
    // Responder: the peer of this connection proved the job's key; its rail
    // sockets may now show these tokens (each once) instead of running the
    // challenge-response. Default: rails ride on authenticated channels only.
    virtual void enter_rail_tokens(std::uint64_t connection_id, std::span<const wire::RailToken> tokens) {
        (void)connection_id;
        (void)tokens;
    }
    // Readable when poll_incoming() has work; -1 when it must be polled.
    virtual int incoming_fd() const { return -1; }

    // Descriptors readable when poll_events() has device events; none by default.
    virtual std::vector<int> event_fds() const { return {}; }
    // Non-blocking: appends the devices' pending asynchronous events.
    virtual void poll_events(std::vector<DeviceEvent>& out) { (void)out; }
};

} // namespace tent
