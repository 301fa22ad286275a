#include "transport/tcp/tcp_provider.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <cstring>

#include "common/log.h"
#include "common/text.h"
#include "transport/tcp/control_socket.h"
#include "transport/tcp/link_speed.h"
#include "transport/tcp/tcp_hello.h"
#include "transport/tcp/tcp_rail.h"
#include "wire/frame_codec.h"

namespace tent {

namespace {

wire::TcpAddress to_wire(const tcp::TcpAddress& a) {
    wire::TcpAddress w;
    w.family = 4;
    inet_pton(AF_INET, a.host.c_str(), w.addr.data());
    w.port = a.port;
    return w;
}

tcp::TcpAddress from_wire(const wire::TcpAddress& w) {
    char buf[INET_ADDRSTRLEN] = "0.0.0.0";
    inet_ntop(AF_INET, w.addr.data(), buf, sizeof buf);
    return tcp::TcpAddress{buf, w.port};
}

} // namespace

Result<std::unique_ptr<TcpProvider>> TcpProvider::create(const Config& config) {
    std::vector<tcp::TcpAddress> addresses;
    for (const std::string& item : split_commas(config.get_string(Knob::TcpRailAddresses))) {
        if (item.empty()) continue;
        auto a = tcp::parse_tcp_address(item);
        if (!a) return Status(Code::InvalidArgument, "tcp_rail_addresses: " + a.status().message());
        addresses.push_back(*a);
    }
    if (addresses.empty()) {
        auto control = resolve_control_address(config.get_string(Knob::ControlAddress));
        if (!control) return control.status();
        wire::TcpAddress w = *control;
        w.port = 0;
        addresses.push_back(from_wire(w));
    }
    Duration timeout = std::chrono::milliseconds(config.get_int(Knob::ConnectTimeoutMs));
    return std::unique_ptr<TcpProvider>(new TcpProvider(std::move(addresses), tcp::TcpRailParams::from_config(config),
                                                        timeout));
}

Status TcpProvider::install(const RegionLookup& regions) {
    regions_ = &regions;
    if (auto links = tcp::LinkWatch::open())
        links_.emplace(std::move(*links));
    else
        TENT_DEBUG("tcp link events unavailable", "%s; dead links are found by heartbeat silence",
                   links.status().to_string().c_str());
    epoll_.reset(::epoll_create1(EPOLL_CLOEXEC));
    if (!epoll_) return Status::from_errno(errno, "tcp provider: epoll_create1");
    // A greeting or a rail token brings the rail's Hello; the HelloAck
    // answers it, and the rail is made only once the Proof or the token is
    // right (poll_incoming).
    auto gate = tcp::AuthGate::create(
        keys_, timeout_, "tcp rail", 1,
        [this](int, const std::vector<std::span<const std::uint8_t>>& frames) -> Result<tcp::AuthGate::Reply> {
            auto frame = wire::decode_frame(frames[0]);
            if (!frame) return frame.status();
            auto hello = tcp::tcp_hello_parse(*frame);
            if (!hello) return hello.status();
            if (hello->version == 0) return Status(Code::Unsupported, "tcp hello: no common protocol version");
            auto bytes = wire::encode_frame(tcp::tcp_hello_accept_frame(*hello, engine_id_));
            if (!bytes) return bytes.status();
            tcp::AuthGate::Reply reply;
            reply.bytes = std::move(*bytes);
            reply.held = *hello;
            reply.rail = std::make_pair(hello->connection_id, hello->rail.rail_id);
            return reply;
        });
    if (!gate) return gate.status();
    gate_ = std::move(*gate);
    epoll_event gate_ev{};
    gate_ev.events = EPOLLIN;
    gate_ev.data.fd = gate_->fd();
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, gate_->fd(), &gate_ev) != 0)
        return Status::from_errno(errno, "tcp provider: epoll_ctl");
    for (const auto& a : addresses_) {
        auto l = tcp::TcpListener::listen(a);
        if (!l) return l.status();
        // A rail socket is accepted once its opening is there, so that it
        // is read and answered in the same turn of the progress thread
        // (else one more turn, over every connection, per socket); a
        // silent stranger waits in the kernel meanwhile (best effort).
        int defer = 1;
        (void)::setsockopt(l->fd(), IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer, sizeof defer);
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.fd = l->fd();
        if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, l->fd(), &ev) != 0)
            return Status::from_errno(errno, "tcp provider: epoll_ctl");
        listeners_.push_back(std::move(*l));
    }
    watch_listener_links();
    return Status::ok();
}

void TcpProvider::watch_listener_links() {
    // One look at the interfaces for every listening address now, while
    // nothing waits, rather than one per address in the first connect()
    // (about 0.3 ms each). The event socket is already open, so no change
    // after this look is missed. An address not on any interface (a
    // wildcard) is looked at when a rail is made through it (watch_link).
    if (!links_) return;
    std::vector<std::string> hosts;
    for (const auto& l : listeners_) hosts.push_back(l.address().host);
    const auto states = tcp::link_states_now(hosts);
    std::lock_guard lock(links_mutex_);
    for (const auto& [address, state] : states)
        if (state.ifindex != 0) link_table_.watch(address, state);
}

void TcpProvider::describe(wire::AddressBlob& blob) const {
    engine_id_ = blob.engine_id;
    for (const auto& l : listeners_) blob.tcp.push_back(to_wire(l.address()));
}

Status TcpProvider::propose_rails(const RailContext& ctx, std::vector<wire::RailInfo>& proposal) {
    std::size_t peer_count = ctx.peer->tcp.size() > ctx.peer_tcp_offset ? ctx.peer->tcp.size() - ctx.peer_tcp_offset : 0;
    std::size_t n = std::min(listeners_.size(), peer_count);
    for (std::size_t i = 0; i < n; ++i)
        proposal.push_back({static_cast<std::uint16_t>(ctx.first_rail_id + i), wire::RailKind::Tcp,
                            static_cast<std::uint8_t>(ctx.local_tcp_offset + i),
                            static_cast<std::uint8_t>(ctx.peer_tcp_offset + i), 0});
    return Status::ok();
}

Status TcpProvider::accept_rails(const RailContext& ctx, const std::vector<wire::RailInfo>& proposal,
                                 std::vector<wire::RailInfo>& answer, std::vector<NewRail>& rails) {
    (void)rails;  // the sockets connect later; poll_incoming() adopts them
    for (auto info : proposal) {
        // The initiator's indices, seen from here: swap local and remote.
        std::uint8_t local = info.remote_index;
        if (local < ctx.local_tcp_offset || local - ctx.local_tcp_offset >= listeners_.size()) continue;
        std::swap(info.local_index, info.remote_index);
        answer.push_back(info);
    }
    return Status::ok();
}

Result<NewRail> TcpProvider::make_rail(UniqueFd fd, std::uint64_t connection_id, const wire::RailInfo& info,
                                       const std::string& name, tcp::TcpRedial redial) {
    // TcpRail asks for a pointer valid until its progress() returns; each
    // rail keeps the last region it looked up.
    auto holder = std::make_shared<std::optional<wire::MemoryHandle>>();
    const RegionLookup* regions = regions_;
    tcp::RegionLookup lookup = [regions, holder](std::uint32_t key) -> const wire::MemoryHandle* {
        *holder = regions->find_by_tcp_key(key);
        return *holder ? &**holder : nullptr;
    };
    const auto local = tcp::local_address_of(fd.get());
    auto rail = tcp::TcpRail::create(std::move(fd), {connection_id, info.rail_id, name}, params_, std::move(lookup),
                                     SteadyClock::instance(), std::move(redial));
    if (!rail) return rail.status();
    (*rail)->use_atomic_ledger(ledger_);
    if (regions) (*rail)->guard_regions_with(regions->use_lock());
    NewRail r;
    r.rail_id = info.rail_id;
    // The local device is the local address: its link events (poll_events)
    // reach every rail through it.
    r.local_device = local ? local->host : name;
    r.local_port = 0;
    r.remote_device = name;
    r.rail = std::move(*rail);
    if (local) r.link_rate = tcp::link_speed_of(watch_link(local->host).ifindex);
    return r;
}

tcp::LinkState TcpProvider::watch_link(const std::string& address) {
    // A listener's address is watched from the start: no look at the
    // interfaces (about 0.3 ms) for each of its rails.
    std::lock_guard lock(links_mutex_);
    const auto watched = link_table_.watched().find(address);
    if (links_ && watched != link_table_.watched().end()) return watched->second;
    const tcp::LinkState state = tcp::link_states_now({address})[address];
    if (links_) link_table_.watch(address, state);
    return state;
}

std::vector<int> TcpProvider::event_fds() const {
    if (!links_) return {};
    return {links_->fd()};
}

void TcpProvider::poll_events(std::vector<DeviceEvent>& out) {
    if (!links_) return;
    std::vector<tcp::LinkChange> changes;
    const bool complete = links_->read(changes);
    std::vector<tcp::LinkVerdict> verdicts;
    {
        std::lock_guard lock(links_mutex_);
        for (const auto& c : changes)
            for (auto& v : link_table_.apply(c)) verdicts.push_back(std::move(v));
        if (!complete) {
            // The kernel dropped events: look at every watched address afresh.
            std::vector<std::string> addresses;
            for (const auto& [a, state] : link_table_.watched()) addresses.push_back(a);
            for (auto& v : link_table_.resync(tcp::link_states_now(addresses))) verdicts.push_back(std::move(v));
        }
    }
    for (const auto& v : verdicts) {
        if (v.down)
            TENT_INFO("tcp link down", "local address %s lost its link or was removed; pausing its tcp rails",
                      v.address.c_str());
        else if (reported_down_.count(v.address))
            TENT_INFO("tcp link up", "local address %s is usable again", v.address.c_str());
        else  // a fresh interface whose carrier the kernel reports late
            TENT_DEBUG("tcp link up", "local address %s is usable", v.address.c_str());
        if (v.down)
            reported_down_.insert(v.address);
        else
            reported_down_.erase(v.address);
        out.push_back(DeviceEvent{v.address, 0, v.down ? AsyncEvent::PortError : AsyncEvent::PortActive});
    }
}

Status TcpProvider::complete_rails(const RailContext& ctx, const std::vector<wire::RailInfo>& answer,
                                   std::vector<NewRail>& rails) {
    // Every rail's socket is connected, then each says its Hello, before
    // any answer is read: the openings arrive together and the responder
    // answers them in one turn of its progress thread, where one rail after
    // the other cost a turn (and a round trip) each.
    struct Dial {
        wire::RailInfo info;
        tcp::TcpAddress local, remote;
        const wire::RailToken* token = nullptr;
        tcp::TcpRailHello hello;
        UniqueFd fd;
    };
    std::vector<Dial> dials;
    const TimePoint deadline = SteadyClock::instance().now() + timeout_;
    for (const auto& info : answer) {
        // In the answer the responder's view: remote_index is ours.
        std::size_t mine = info.remote_index - ctx.local_tcp_offset;
        if (info.remote_index < ctx.local_tcp_offset || mine >= listeners_.size() ||
            info.local_index >= ctx.peer->tcp.size())
            return Status(Code::InvalidArgument, "HelloAck names a TCP address that does not exist");
        Dial d;
        d.info = info;
        d.local = tcp::TcpAddress{listeners_[mine].address().host, 0};
        d.remote = from_wire(ctx.peer->tcp[info.local_index]);
        // With the job key, the rail shows the token the responder's Answer
        // gave it (no challenge-response of its own) and checks the token
        // shown back.
        for (const auto& t : ctx.rail_tokens)
            if (t.rail_id == info.rail_id) d.token = &t;
        if (keys_->required() && !d.token)
            return Status(Code::PeerUnreachable, "authentication failed: the peer gave no token for tcp rail " +
                                                     std::to_string(info.rail_id));
        auto fd = tcp::tcp_connect(d.local, d.remote, timeout_, params_.buffers);
        if (!fd) return fd.status();
        d.fd = std::move(*fd);
        d.hello.connection_id = ctx.connection_id;
        d.hello.engine_id = ctx.local->engine_id;
        d.hello.rail = wire::RailInfo{info.rail_id, wire::RailKind::Tcp, static_cast<std::uint8_t>(info.remote_index),
                                      info.local_index, 0};
        dials.push_back(std::move(d));
    }
    for (auto& d : dials) {
        // The token with the Hello in one write; the peer's token and its
        // HelloAck come back together.
        if (d.token) {
            auto hello_bytes = wire::encode_frame(tcp::tcp_hello_frame(d.hello));
            if (!hello_bytes) return hello_bytes.status();
            if (Status s = tcp::rail_token_open(d.fd.get(), d.token->from_initiator, *hello_bytes, deadline); !s)
                return s;
        } else if (Status s = tcp::tcp_hello_send(d.fd.get(), d.hello, deadline); !s) {
            return s;
        }
    }
    for (auto& d : dials) {
        std::vector<std::uint8_t> ack_start;
        if (d.token) {
            auto checked = tcp::rail_token_check(d.fd.get(), d.token->from_responder, deadline);
            if (!checked) return checked.status();
            ack_start = std::move(*checked);
        }
        auto answered = tcp::tcp_hello_read_answer(d.fd.get(), d.hello, deadline, std::move(ack_start));
        if (!answered) return answered.status();
        tcp::TcpRedial redial;
        redial.dial = tcp::TcpDialPlan{d.local, d.remote, d.hello, timeout_, params_.buffers, keys_};
        auto rail = make_rail(std::move(d.fd), ctx.connection_id, d.info,
                              "tcp " + d.local.host + " -> " + d.remote.to_string(), std::move(redial));
        if (!rail) return rail.status();
        rails.push_back(std::move(*rail));
    }
    return Status::ok();
}

void TcpProvider::enter_rail_tokens(std::uint64_t connection_id, std::span<const wire::RailToken> tokens) {
    if (gate_) gate_->enter_rail_tokens(connection_id, tokens, SteadyClock::instance().now());
}

void TcpProvider::poll_incoming(RailSink& sink) {
    const TimePoint now = SteadyClock::instance().now();
    for (auto& l : listeners_)
        for (int budget = 0; budget < 64; ++budget) {
            auto accepted = l.accept(params_.buffers);
            if (!accepted || !*accepted) break;
            gate_->admit(std::move(**accepted), now);
        }
    // Only sockets that proved they hold the job's key get to say Hello.
    for (auto& admitted : gate_->poll(now)) {
        UniqueFd fd = std::move(admitted.fd);
        Result<tcp::TcpRailHello> hello = Status(Code::Internal, "no hello");
        if (admitted.answered) {
            hello = std::any_cast<tcp::TcpRailHello>(admitted.held);  // answered by the gate
        } else {  // authentication off: the Hello read and answered here
            hello = tcp::tcp_hello_receive(fd.get(), timeout_);
            if (!hello) {
                TENT_WARN("tcp-rail-refused", "rail socket without a valid Hello: %s",
                          hello.status().to_string().c_str());
                continue;
            }
            if (!tcp::tcp_hello_reply(fd.get(), *hello, engine_id_, wire::HelloResult::Accepted, timeout_)) continue;
        }
        const auto key = std::make_pair(hello->connection_id, hello->rail.rail_id);
        if (auto it = mailboxes_.find(key); it != mailboxes_.end()) {
            if (auto mailbox = it->second.lock()) {
                mailbox->sockets.push_back(std::move(fd));  // the rail re-armed: its new socket
                continue;
            }
            mailboxes_.erase(it);
        }
        auto here = tcp::local_address_of(fd.get());
        auto peer = tcp::peer_address_of(fd.get());
        std::string name = "tcp " + (here ? here->host : std::string("?")) + " <- " +
                           (peer ? peer->to_string() : std::string("?"));
        tcp::TcpRedial redial;
        redial.mailbox = std::make_shared<tcp::TcpSocketMailbox>();
        auto rail = make_rail(std::move(fd), hello->connection_id, hello->rail, name, redial);
        if (!rail) {
            TENT_WARN("tcp-rail-refused", "%s", rail.status().to_string().c_str());
            continue;
        }
        std::erase_if(mailboxes_, [](const auto& entry) { return entry.second.expired(); });
        mailboxes_[key] = redial.mailbox;
        sink.adopt_rail(hello->connection_id, std::move(*rail));
    }
}

} // namespace tent
