// The TCP transport as the engine sees it: one listener per address of
// tcp_rail_addresses (advertised in the address blob after the control
// address), and one TcpRail (src/transport/tcp) per address pair shared with
// a peer. The initiator connects each rail's socket after the control
// handshake and opens it with the per-rail Hello; the responder accepts those
// sockets on its progress thread (poll_incoming) and hands the rails to the
// engine. Target-side checks use the engine's registrations by TCP key.
// A re-armed rail gets a new socket the same way (tcp_redial.h): the
// initiator dials again with the same Hello, and poll_incoming hands the
// socket to the rail it names instead of making a new one.
//
// Link events: the provider watches the kernel's link and address events
// (link_watch.h, one rtnetlink socket, the engine's event descriptor) for
// the local addresses of its rails. A rail's local device is its local
// address (port 0); when that address's interface goes down (no IFF_UP or
// IFF_RUNNING) or the address is removed, poll_events() reports
// AsyncEvent::PortError for it, and PortActive when it is usable again
// (link_table.h decides): the engine pauses and fails those rails at once,
// as for a verbs port event, instead of waiting for heartbeat silence.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/config.h"
#include "common/unique_fd.h"
#include "transport/provider.h"
#include "transport/tcp/atomic_ledger.h"
#include "transport/tcp/link_table.h"
#include "transport/tcp/link_watch.h"
#include "transport/tcp/auth_socket.h"
#include "transport/tcp/tcp_rail_params.h"
#include "transport/tcp/tcp_redial.h"
#include "transport/tcp/tcp_socket.h"

namespace tent {

class TcpProvider final : public TransportProvider {
public:
    static Result<std::unique_ptr<TcpProvider>> create(const Config& config);

    TransportKind kind() const override { return TransportKind::Tcp; }
    Status install(const RegionLookup& regions) override;
    void describe(wire::AddressBlob& blob) const override;
    Status register_region(void*, std::uint64_t, std::uint16_t, RegionKeys&) override { return Status::ok(); }
    void deregister_region(void*, const RegionKeys&) override {}
    Status propose_rails(const RailContext& ctx, std::vector<wire::RailInfo>& proposal) override;
    Status accept_rails(const RailContext& ctx, const std::vector<wire::RailInfo>& proposal,
                        std::vector<wire::RailInfo>& answer, std::vector<NewRail>& rails) override;
    Status complete_rails(const RailContext& ctx, const std::vector<wire::RailInfo>& answer,
                          std::vector<NewRail>& rails) override;
    void poll_incoming(RailSink& sink) override;
    int incoming_fd() const override { return epoll_.get(); }
    std::vector<int> event_fds() const override;
    void poll_events(std::vector<DeviceEvent>& out) override;
    void use_job_key(std::shared_ptr<const JobKeyCell> keys) override { keys_ = std::move(keys); }
    void enter_rail_tokens(std::uint64_t connection_id, std::span<const wire::RailToken> tokens) override;

private:
    TcpProvider(std::vector<tcp::TcpAddress> addresses, tcp::TcpRailParams params, Duration timeout)
        : addresses_(std::move(addresses)), params_(params), timeout_(timeout) {}
    Result<NewRail> make_rail(UniqueFd fd, std::uint64_t connection_id, const wire::RailInfo& info,
                              const std::string& name, tcp::TcpRedial redial);
    // Watches the link of a rail's local address from now on; its state
    // now (the interface it is on).
    tcp::LinkState watch_link(const std::string& address);
    void watch_listener_links();

    std::vector<tcp::TcpAddress> addresses_;
    tcp::TcpRailParams params_;
    Duration timeout_;
    const RegionLookup* regions_ = nullptr;
    // Every rail's peer atomics execute through it: exactly once per
    // connection and operation id, whichever rail carries a repeat.
    std::shared_ptr<tcp::AtomicLedger> ledger_ = std::make_shared<tcp::AtomicLedger>();
    std::vector<tcp::TcpListener> listeners_;
    UniqueFd epoll_;  // readable when any listener has a connection waiting, or gate_ has input
    std::shared_ptr<const JobKeyCell> keys_ = JobKeyCell::off();
    std::unique_ptr<tcp::AuthGate> gate_;  // accepted rail sockets until they authenticate
    mutable std::uint64_t engine_id_ = 0;
    // Rails this side accepted, by (connection id, rail id): a later socket
    // with the same Hello is the rail re-armed (tcp_redial.h), not a new rail.
    std::map<std::pair<std::uint64_t, std::uint16_t>, std::weak_ptr<tcp::TcpSocketMailbox>> mailboxes_;
    // None when rtnetlink is not available: heartbeat silence still finds a dead link.
    std::optional<tcp::LinkWatch> links_;
    // Rails are made on the progress thread (poll_incoming) and in an
    // application's connect() (complete_rails): the table is shared.
    std::mutex links_mutex_;
    tcp::LinkTable link_table_;
    std::set<std::string> reported_down_;  // addresses poll_events() last reported down (progress thread)
};

} // namespace tent
