// Connection setup over the control channel:
//   initiator -> [Greeting] AddressBlob (its own), Hello{proposed rails}
//   responder -> [Answer{rail tokens}] HelloAck{rails it set up}
//   initiator -> [Proof]
// Each provider proposes, accepts and completes its own rails
// (transport/provider.h). The job-key handshake (bracketed,
// wire/auth_handshake.h) rides on the same messages: the responder answers
// the Hello together with its proof and one-time tokens for the TCP rails
// it accepted, and adds the connection, and honours those tokens, only once
// the initiator's Proof is right; the initiator sends that Proof without
// waiting, before it connects its rails, each showing its token (a rail
// socket that arrives before the Proof waits for it in the provider's
// gate). A rail that authenticated with the whole challenge-response before
// its connection arrived waits in adopt_rail.
// A pair of engines shares one connection (connection_pairing.h): connect()
// returns the one the pair has, and a responder answers Crossed to a Hello
// when the pair's connection is another; the initiator then waits for that
// one (or, when none comes within kCrossedRecheck, says Hello again: the
// peer may still hold a connection this engine gave up on). The initiator
// blocks for at most connect_timeout_ms in all; the
// responder serves the handshake on the progress thread, without blocking
// while the peer has not proved itself (AuthGate), with the same bound.
#include <sys/socket.h>

#include <array>
#include <cstdio>
#include <random>

#include "common/log.h"
#include "engine/connection.h"
#include "engine/connection_pairing.h"
#include "transport/tcp/control_socket.h"
#include "engine/engine.h"
#include "health/rail_monitor.h"
#include "transport/fault/fault_rail.h"
#include "transport/tcp/tcp_socket.h"
#include "wire/auth_handshake.h"
#include "wire/frame_codec.h"

namespace tent {

namespace {

// A connector's blob and Hello (authentication off) are a few hundred bytes
// each: one read takes both.
constexpr std::size_t kOpeningReadAhead = 4096;

wire::RailKind rail_kind_of(const TransportProvider& p) {
    return p.kind() == TransportKind::Rdma ? wire::RailKind::Verbs : wire::RailKind::Tcp;
}

std::uint64_t new_connection_id() {
    std::random_device rd;
    std::uint64_t v = 0;
    while (v == 0) v = (std::uint64_t{rd()} << 32) ^ rd();
    return v;
}

template <typename T>
Result<T> expect_body(Result<wire::Frame> frame, const char* what) {
    if (!frame) return frame.status();
    if (const T* body = std::get_if<T>(&frame->body)) return *body;
    return Status(Code::InvalidArgument, std::string("control channel: expected ") + what);
}

} // namespace

RailContext Engine::context_for(std::size_t provider, std::uint64_t connection_id,
                                const wire::AddressBlob& peer) const {
    RailContext ctx;
    ctx.connection_id = connection_id;
    ctx.local = &blob_;
    ctx.peer = &peer;
    // Both engines build their blobs from the same provider list, so the
    // peer's entries of this provider start at the same offsets.
    ctx.local_hca_offset = ctx.peer_hca_offset = hca_offset_[provider];
    ctx.local_tcp_offset = ctx.peer_tcp_offset = tcp_offset_[provider];
    return ctx;
}

std::optional<PeerId> Engine::pair_connection(std::unique_lock<std::mutex>& lock, std::uint64_t engine,
                                              TimePoint deadline) {
    for (;;) {
        if (auto live = live_pair_locked(engine)) return live;
        if (SteadyClock::fresh() >= deadline) return std::nullopt;
        connection_known_.wait_until(lock, deadline);
    }
}

std::optional<PeerId> Engine::live_pair_locked(std::uint64_t engine) const {
    auto it = by_engine_.find(engine);
    if (it == by_engine_.end() || unreachable_.count(it->second)) return std::nullopt;
    return it->second;
}

void Engine::note_pair_locked(std::uint64_t engine, PeerId conn) {
    answered_.erase(engine);
    auto [it, added] = by_engine_.try_emplace(engine, conn);
    if (!added && unreachable_.count(it->second)) it->second = conn;
    connection_known_.notify_all();
}

Result<PeerId> Engine::connect(std::span<const std::uint8_t> peer_address) {
    auto blob = expect_body<wire::AddressBlob>(wire::decode_frame(peer_address), "an address blob");
    if (!blob) return blob.status();
    if (blob->tcp.empty()) return Status(Code::InvalidArgument, "address blob has no control address");
    const TimePoint deadline = SteadyClock::fresh() + params_.connect_timeout;
    // At least 1 ms: a socket timeout of 0 would mean none.
    auto remaining = [&deadline] {
        return std::max<Duration>(std::chrono::milliseconds(1), deadline - SteadyClock::fresh());
    };
    const std::uint64_t peer_engine = blob->engine_id;
    const bool paired = peer_engine != blob_.engine_id;  // an engine connected to itself has no pair
    auto timed_out = [&](const char* what) {
        return Status(Code::Timeout, "connecting to " + blob->hostname + ": " + what + " within connect_timeout_ms");
    };
    // Once more after a Crossed answer that no connection followed.
    for (;;) {
        const std::uint64_t conn_id = new_connection_id();
        // The pair's connection when it has one, or one on its way (this
        // engine's own dial from another thread, or the peer's, answered here).
        if (paired) {
            std::unique_lock lock(mutex_);
            for (;;) {
                DialState state;
                const auto live = live_pair_locked(peer_engine);
                state.live = live.has_value();
                state.dialing = dialing_.count(peer_engine) > 0;
                auto answered = answered_.find(peer_engine);
                state.answer_pending = answered != answered_.end() && answered->second > SteadyClock::fresh();
                const DialStep step = next_dial_step(state);
                if (step == DialStep::Reuse) return *live;
                if (step == DialStep::Dial) break;
                if (SteadyClock::fresh() >= deadline)
                    return timed_out("the connection under way did not arrive");
                // A copy: wait_until reads its deadline again after waking, when
                // the answered entry may be gone.
                const TimePoint until = state.answer_pending ? std::min(deadline, answered->second) : deadline;
                connection_known_.wait_until(lock, until);
            }
            dialing_[peer_engine] = conn_id;
        }
        // However the dial ends, a connect() waiting behind it looks again.
        struct DialMark {
            Engine& e;
            std::uint64_t peer_engine;
            bool on;
            void end() {
                if (!on) return;
                on = false;
                std::lock_guard lock(e.mutex_);
                e.dialing_.erase(peer_engine);
                e.connection_known_.notify_all();
            }
            ~DialMark() { end(); }
        } dial_mark{*this, peer_engine, paired};

        auto auth = tcp::AuthProver::start(*job_key_);
        if (!auth)
            return Status(auth.status().code(), "connecting to " + blob->hostname + ": " + auth.status().message());
        auto fd = connect_control(blob->tcp[0], remaining());
        if (!fd) return fd.status();
        if (Status s = set_blocking_with_timeout(fd->get(), remaining()); !s) return s;

        wire::Hello hello;
        hello.engine_id = blob_.engine_id;
        std::vector<std::pair<std::uint16_t, std::uint16_t>> ranges;  // per provider: [first, end)
        for (std::size_t i = 0; i < providers_.size(); ++i) {
            RailContext ctx = context_for(i, conn_id, *blob);
            ctx.first_rail_id = static_cast<std::uint16_t>(hello.rails.size());
            if (Status s = providers_[i]->propose_rails(ctx, hello.rails); !s) return s;
            ranges.emplace_back(ctx.first_rail_id, static_cast<std::uint16_t>(hello.rails.size()));
        }
        // The Greeting, the blob and the Hello in one write; then the peer's
        // Answer is checked and the Proof goes out before the HelloAck is read.
        auto hello_bytes = wire::encode_frame(wire::Frame{0, 0, conn_id, 0, hello});
        if (!hello_bytes) return hello_bytes.status();
        std::vector<std::uint8_t> opening(blob_bytes_);
        opening.insert(opening.end(), hello_bytes->begin(), hello_bytes->end());
        if (Status s = auth->open(fd->get(), opening, deadline); !s) return s;
        auto reply_start = auth->prove(fd->get(), deadline);
        if (!reply_start)
            return Status(reply_start.status().code(),
                          "connecting to " + blob->hostname + ": " + reply_start.status().message());
        auto ack = expect_body<wire::HelloAck>(recv_frame(fd->get(), std::move(*reply_start)), "HelloAck");
        if (!ack) return ack.status();
        if (ack->result == wire::HelloResult::Crossed && paired) {
            // The peer's own dial to this engine goes on, and its connection is
            // the pair's; or the peer still holds a connection of the pair that
            // this engine gave up on and closed, and has not seen the close yet.
            // The first arrives here; the second is gone once the peer looks,
            // and a Hello then is accepted: asked again after a while.
            fd->reset();
            dial_mark.end();
            std::unique_lock lock(mutex_);
            const TimePoint recheck = std::min(deadline, SteadyClock::fresh() + kCrossedRecheck);
            if (auto pair = pair_connection(lock, peer_engine, recheck)) {
                TENT_DEBUG("engine-connect", "%s dialled this engine at the same time: its connection serves both",
                           blob->hostname.c_str());
                return *pair;
            }
            if (SteadyClock::fresh() >= deadline)
                return timed_out("the peer answered that the pair's connection is another, and none arrived");
            continue;
        }
        if (ack->result != wire::HelloResult::Accepted)
            return Status(Code::PeerUnreachable, "peer refused the connection");

        auto conn = std::make_unique<Connection>();
        conn->id = conn_id;
        conn->peer = *blob;
        for (std::size_t i = 0; i < providers_.size(); ++i) {
            std::vector<wire::RailInfo> mine;
            for (const auto& r : ack->rails)
                if (r.rail_id >= ranges[i].first && r.rail_id < ranges[i].second) mine.push_back(r);
            if (mine.empty()) continue;
            RailContext ctx = context_for(i, conn_id, *blob);
            ctx.first_rail_id = ranges[i].first;
            ctx.rail_tokens = auth->rail_tokens();
            std::vector<NewRail> rails;
            if (Status s = providers_[i]->complete_rails(ctx, mine, rails); !s) return s;
            for (auto& r : rails) {
                RailSlot slot;
                slot.rail = std::move(r);
                slot.provider = i;
                conn->rails.push_back(std::move(slot));
            }
        }
        conn->control = std::move(*fd);
        conn->initiator = true;
        {
            std::lock_guard lock(mutex_);
            peers_.insert(conn_id);
            if (paired) note_pair_locked(peer_engine, conn_id);
            connecting_.push_back(std::move(conn));
            inbox_.store(true, std::memory_order_release);
            wake_progress_locked();
        }
        TENT_DEBUG("engine-connect", "connected to %s (%zu rails)", blob->hostname.c_str(), ack->rails.size());
        return conn_id;
    }
}

Result<Engine::HandshakeReply> Engine::answer_hello(const wire::Frame& blob_frame, const wire::Frame& hello_frame) {
    const auto* blob = std::get_if<wire::AddressBlob>(&blob_frame.body);
    if (!blob) return Status(Code::InvalidArgument, "control channel: expected an address blob");
    const auto* hello = std::get_if<wire::Hello>(&hello_frame.body);
    if (!hello) return Status(Code::InvalidArgument, "control channel: no Hello from " + blob->hostname);
    // The pair is known by the blob's engine id: a Hello naming another
    // engine is not that engine's.
    if (hello->engine_id != blob->engine_id)
        return Status(Code::InvalidArgument, "control channel: the Hello from " + blob->hostname +
                                                 " names another engine than its address blob");
    const std::uint64_t conn_id = hello_frame.connection_id;
    if (connections_.count(conn_id)) return Status(Code::AlreadyExists, "a connection id already in use");
    {
        std::lock_guard lock(mutex_);
        PairingState state;
        state.live = live_pair_locked(blob->engine_id).has_value();
        state.dialing = dialing_.count(blob->engine_id) > 0;
        if (answer_for_hello(blob_.engine_id, blob->engine_id, state) == HelloAnswer::Crossed) {
            TENT_DEBUG("hello-crossed", "%s: this pair's connection is another (%s)", blob->hostname.c_str(),
                       state.live ? "live" : "dialled from here");
            wire::HelloAck crossed{.engine_id = blob_.engine_id, .result = wire::HelloResult::Crossed, .version = 0, .rails = {}};
            return HandshakeReply{wire::Frame{0, 0, conn_id, 0, crossed}, nullptr, {}};
        }
        // A connect() to this engine now waits for the Proof rather than
        // dialling a second connection. Bounded: anyone may send a Hello.
        const TimePoint now = SteadyClock::fresh();
        std::erase_if(answered_, [now](const auto& a) { return a.second <= now; });
        if (blob->engine_id != blob_.engine_id && answered_.size() < kMaxAnsweredHellos)
            answered_[blob->engine_id] = now + params_.connect_timeout;
    }

    auto conn = std::make_unique<Connection>();
    conn->id = conn_id;
    conn->peer = *blob;
    wire::HelloAck ack;
    ack.engine_id = blob_.engine_id;
    std::vector<bool> taken(hello->rails.size(), false);
    for (std::size_t i = 0; i < providers_.size(); ++i) {
        std::vector<wire::RailInfo> proposal;
        for (std::size_t r = 0; r < hello->rails.size(); ++r)
            if (!taken[r] && hello->rails[r].kind == rail_kind_of(*providers_[i])) {
                taken[r] = true;
                proposal.push_back(hello->rails[r]);
            }
        if (proposal.empty()) continue;
        std::vector<NewRail> rails;
        if (Status s = providers_[i]->accept_rails(context_for(i, conn_id, *blob), proposal, ack.rails, rails); !s) {
            TENT_WARN("engine-handshake", "%s rails to %s not set up: %s", transport_kind_name(providers_[i]->kind()),
                      blob->hostname.c_str(), s.to_string().c_str());
            continue;
        }
        for (auto& r : rails) {
            RailSlot slot;
            slot.rail = std::move(r);
            slot.provider = i;
            conn->rails.push_back(std::move(slot));
        }
    }
    return HandshakeReply{wire::Frame{0, 0, conn_id, 0, ack}, std::move(conn), {}};
}

// Authentication off: the handshake read on the socket as accepted.
void Engine::serve_handshake(UniqueFd fd) {
    if (!set_blocking_with_timeout(fd.get(), params_.connect_timeout)) return;
    // The connector writes its blob and Hello at once and then waits for
    // the HelloAck: both are taken in as few reads as they arrived in (most
    // often one), and nothing may follow them.
    std::vector<std::uint8_t> opening;
    auto blob = take_frame(fd.get(), opening, kOpeningReadAhead);
    // A peer with authentication on opens with its greeting: told why it is
    // closed (it reports the same), rather than left with a bare close.
    if (!blob && wire::is_auth_message(opening)) {
        const auto no = wire::refusal(wire::RefusalReason::AuthMismatch);
        (void)!::send(fd.get(), no.data(), no.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        auto peer = tcp::peer_address_of(fd.get());
        TENT_WARN("auth-refused", "control connection from %s closed: %s",
                  peer ? peer->to_string().c_str() : "?", wire::auth_mismatch().message().c_str());
        return;
    }
    auto hello = blob ? take_frame(fd.get(), opening, kOpeningReadAhead) : Result<wire::Frame>(blob.status());
    if (hello && !opening.empty())
        hello = Status(Code::InvalidArgument, "control channel: the peer sent more than its blob and Hello");
    if (!hello) {
        TENT_WARN("engine-handshake", "rejected a control connection: %s", hello.status().to_string().c_str());
        return;
    }
    auto reply = answer_hello(*blob, *hello);
    if (!reply) {
        TENT_WARN("engine-handshake", "rejected a control connection: %s", reply.status().to_string().c_str());
        return;
    }
    if (Status s = send_frame(fd.get(), reply->ack); !s) {
        TENT_WARN("engine-handshake", "HelloAck to %s failed: %s", reply->conn->peer.hostname.c_str(),
                  s.to_string().c_str());
        return;
    }
    if (reply->conn) admit_proven(std::move(fd), std::move(reply->conn));
}

bool Engine::admit_proven(UniqueFd fd, std::unique_ptr<Connection> conn) {
    // The same id may have been answered twice before either proved itself.
    if (connections_.count(conn->id)) return false;  // refuse by closing
    if (!set_blocking_with_timeout(fd.get(), params_.connect_timeout)) return false;
    conn->control = std::move(fd);
    {
        std::lock_guard lock(mutex_);
        peers_.insert(conn->id);
        if (conn->peer.engine_id != blob_.engine_id) note_pair_locked(conn->peer.engine_id, conn->id);
    }
    add_connection(std::move(conn));
    return true;
}

void Engine::add_connection(std::unique_ptr<Connection> conn) {
    conn->selector = std::make_unique<DeviceSelector>(DeviceSelectorParams::from_config(config_));
    std::vector<RailSlot> rails = std::move(conn->rails);
    conn->rails.clear();
    Connection& c = *conn;
    connections_[conn->id] = std::move(conn);
    for (auto& r : rails) add_rail(c, std::move(r.rail));
    // The provider index was only carried for add_rail's benefit.
    for (std::size_t i = 0; i < rails.size() && i < c.rails.size(); ++i) c.rails[i].provider = rails[i].provider;
    // Rails that proved themselves before the connection did.
    for (auto& e : early_rails_)
        if (e.connection_id == c.id && e.rail.rail) attach_rail(c, std::move(e.rail));
    std::erase_if(early_rails_, [](const EarlyRail& e) { return !e.rail.rail; });
    // The peer sends one message at a time until it knows our window.
    c.credit = CreditGrant(params_.send_window);
    grant_credit(c);
    refresh_stats();
}

std::string Engine::peer_name(const Connection& conn) {
    char peer[96];
    std::snprintf(peer, sizeof peer, "%s/%016llx", conn.peer.hostname.c_str(),
                  static_cast<unsigned long long>(conn.peer.engine_id));
    return peer;
}

// The single door through which rails enter the engine (at connection set-up
// and when a provider adopts one later), so fault injection covers them all.
void Engine::add_rail(Connection& conn, NewRail rail) {
    if (faults_ && faults_->applies_to(rail.rail->kind(), rail.rail->name()))
        rail.rail = std::make_unique<FaultRail>(std::move(rail.rail), *faults_,
                                                fault_state_for(faults_->seed, fault_rails_++), clock_);
    RailEndpoints ep{rail.local_device, rail.local_port, peer_name(conn), rail.remote_device, rail.remote_port,
                     rail.rail->name(), rail.rail->kind()};
    RailSlot slot;
    slot.monitor_id = monitor_->add_rail(ep, clock_.now());
    if (monitor_names_.size() <= slot.monitor_id) monitor_names_.resize(slot.monitor_id + 1);
    monitor_names_[slot.monitor_id] = rail.rail->name();
    slot.device = topology_->device_index(rail.local_device);
    slot.numa_node = topology_->device_numa_node(rail.local_device);
    if (rail.rail->wait_fd() < 0) fd_less_rails_ = true;
    slot.rail = std::move(rail);
    conn.rails.push_back(std::move(slot));
}

void Engine::adopt_rail(std::uint64_t connection_id, NewRail rail) {
    auto it = connections_.find(connection_id);
    if (it == connections_.end()) {
        bool departed = false;
        {
            std::lock_guard lock(mutex_);
            departed = unreachable_.count(connection_id) > 0;
        }
        if (departed) {
            // Re-dialled by a peer whose connection has since been released
            // (its re-arm crossed its departure): nothing will claim it, and
            // waiting would hold its socket for connect_timeout_ms.
            TENT_DEBUG("rail-dropped", "rail %s: its peer has departed", rail.rail->name().c_str());
            return;
        }
        // Its connection's Proof may still be on the way: the rail waits.
        const TimePoint now = clock_.now();
        sweep_early_rails(now);
        if (early_rails_.size() < kMaxEarlyRails)
            early_rails_.push_back(EarlyRail{connection_id, std::move(rail), now + params_.connect_timeout});
        return;
    }
    attach_rail(*it->second, std::move(rail));
    refresh_stats();
}

void Engine::attach_rail(Connection& conn, NewRail rail) {
    std::size_t provider = 0;
    for (std::size_t i = 0; i < providers_.size(); ++i)
        if (providers_[i]->kind() == rail.rail->kind()) {
            provider = i;
            break;
        }
    add_rail(conn, std::move(rail));
    conn.rails.back().provider = provider;
}

} // namespace tent
