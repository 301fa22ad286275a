#include "discovery.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "activation.h"
#include "common/log.h"
#include "common/signal_free_thread.h"
#include "common/unique_fd.h"
#include "engine_address.h"
#include "rendezvous_tcp.h"
#include "runtime.h"
#include "settings.h"

namespace tent::interpose {

namespace {

using Clock = RendezvousClock;

// Abstract socket address of NAME (no file; gone with the process).
socklen_t abstract_address(const std::string& name, sockaddr_un* out) {
    std::memset(out, 0, sizeof *out);
    out->sun_family = AF_UNIX;
    std::size_t n = std::min(name.size(), sizeof out->sun_path - 2);
    std::memcpy(out->sun_path + 1, name.data(), n);
    return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
}

// Once both ends have met, the exchange (two tent connects) is bounded by
// this instead of interpose_discovery_ms: giving up then on one side only
// could leave the ends disagreeing. A side that gives up closes the socket,
// so the other sees it and gives up too.
constexpr auto kExchangeBound = std::chrono::seconds(15);

// The caller's verdict ("K": carried by tent) is the exchange's last word:
// once the owner has sent its hello, it waits for that verdict as long as
// the caller may take to give it (the rest of its exchange, then its tent
// connect), so that it never gives up on a caller that went on. A caller
// that gives up says "N" or closes the socket.
Clock::time_point verdict_deadline() {
    return Clock::now() + kExchangeBound + std::chrono::milliseconds(connect_timeout_ms());
}

// How long a process waiting for its own peer gives a network caller to say
// whom it wants (it sends that at once) before hanging up on it.
constexpr auto kRequestBound = std::chrono::milliseconds(500);

// The rendezvous name lives in the host's (network namespace's) abstract
// socket namespace, where file permissions do not apply: any local user can
// call or squat it. Only a process of our own user is listened to; the
// engine connection that follows is authenticated with the job's key anyway.
bool same_user(int fd) {
    ucred cred{};
    socklen_t len = sizeof cred;
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == geteuid();
}

// A connection to the local rendezvous NAME of a process of our user;
// invalid when nobody listens under it (yet).
UniqueFd call_local(const std::string& name) {
    sockaddr_un addr;
    socklen_t len = abstract_address(name, &addr);
    UniqueFd fd(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    if (!fd || connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0) return {};
    return fd;
}

// "H" + our token + our engine's address.
std::string hello(std::uint32_t token) {
    InsideEngine inside;
    if (!inside.usable()) return {};
    tent_engine_t* e = engine();
    const void* blob = nullptr;
    std::size_t len = 0;
    if (!e || tent_engine_address(e, &blob, &len) != TENT_OK) return {};
    std::string m = "H";
    m.append(reinterpret_cast<const char*>(&token), sizeof token);
    m.append(static_cast<const char*>(blob), len);
    return m;
}

// Parses the peer's hello and connects to its engine.
tent_peer_t* connect_to(const std::string& m, std::uint32_t* peer_token) {
    if (m.size() <= 1 + sizeof *peer_token || m[0] != 'H') return nullptr;
    std::memcpy(peer_token, m.data() + 1, sizeof *peer_token);
    return peer_for(m.substr(1 + sizeof *peer_token));
}

// The GID a rendezvous name (rendezvous_name) was made from.
bool gid_of_name(const std::string& name, ibv_gid* gid) {
    const std::string prefix = "tent-qp/";
    if (name.compare(0, prefix.size(), prefix) != 0 || name.size() < prefix.size() + 32) return false;
    auto nibble = [](char c) { return c >= 'a' ? c - 'a' + 10 : c - '0'; };
    for (std::size_t i = 0; i < 16; ++i)
        gid->raw[i] = static_cast<std::uint8_t>(nibble(name[prefix.size() + 2 * i]) << 4 |
                                                nibble(name[prefix.size() + 2 * i + 1]));
    return true;
}

// The caller's half of the exchange, once the owner of the name is on CH.
void call_exchange(const std::shared_ptr<ShadowQp>& q, RendezvousChannel& ch, const std::string& mine) {
    auto bound = Clock::now() + kExchangeBound;
    std::uint32_t peer_token = 0;
    if (!ch.send(mine)) return become_plain(q, "the peer closed the rendezvous");
    tent_peer_t* p = connect_to(ch.receive(bound), &peer_token);
    if (!p) {
        ch.send("N");
        return become_plain(q, "the peer's tent did not agree");
    }
    if (!ch.send("K")) return become_plain(q, "the peer closed the rendezvous");
    become_tent(q, p, peer_token);
}

// Over the network: asks the host the peer's GID names for the owner of
// PEER ("Q" + name). True when the owner answered ("A"), with the
// connection in *CH; false (try again) when the process the kernel handed
// the connection to could not reach the owner yet, or nobody listens.
bool call_remote(const SocketAddress& where, const std::string& peer, Clock::time_point deadline,
                 std::unique_ptr<RendezvousChannel>* ch) {
    // One attempt may not take all the time: a lost SYN is retried later.
    auto attempt = std::min(deadline, Clock::now() + std::chrono::seconds(1));
    UniqueFd fd = dial(where, attempt);
    if (!fd) return false;
    auto c = std::make_unique<RendezvousChannel>(std::move(fd), true);
    if (!c->send("Q" + peer) || c->receive(deadline) != "A") return false;
    *ch = std::move(c);
    return true;
}

// The end with the smaller name: calls the other until interpose_discovery_ms,
// on this host first (the abstract unix name), then on the host its GID
// names (interpose_rendezvous_port; 0 = this host only).
void call_peer(const std::shared_ptr<ShadowQp>& q, const std::string& peer, int timeout_ms, int port) {
    // Starting the engine (once per process) is not the peer's time to answer.
    std::string mine = hello(q->token);
    if (mine.empty()) return become_plain(q, why_no_engine());
    auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    SocketAddress where;
    ibv_gid gid{};
    bool remote = port > 0 && gid_of_name(peer, &gid) &&
                  gid_socket_address(gid, static_cast<std::uint16_t>(port), &where);
    for (;;) {
        if (UniqueFd fd = call_local(peer)) {
            if (!same_user(fd.get())) return become_plain(q, "the rendezvous name is held by another user");
            RendezvousChannel ch(std::move(fd), false);
            return call_exchange(q, ch, mine);
        }
        std::unique_ptr<RendezvousChannel> ch;
        if (remote && call_remote(where, peer, deadline, &ch)) return call_exchange(q, *ch, mine);
        if (remaining_ms(deadline) == 0) return become_plain(q, "no tent peer answered");
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

// The owner's half of the exchange on CH; THEIRS is the caller's hello if
// already read. A network caller first learns that it reached the owner ("A").
void serve_exchange(const std::shared_ptr<ShadowQp>& q, RendezvousChannel& ch, const std::string& mine,
                    std::string theirs) {
    auto bound = Clock::now() + kExchangeBound;
    if (ch.stream() && !ch.send("A")) return become_plain(q, "the peer closed the rendezvous");
    if (theirs.empty()) theirs = ch.receive(bound);
    std::uint32_t peer_token = 0;
    tent_peer_t* peer_handle = connect_to(theirs, &peer_token);
    if (!peer_handle) {
        ch.send("N");
        return become_plain(q, "the peer's tent did not agree");
    }
    if (!ch.send(mine) || ch.receive(verdict_deadline()) != "K")
        return become_plain(q, "the peer's tent did not agree");
    become_tent(q, peer_handle, peer_token);
}

// A network caller the kernel gave to this process: the channel if it asks
// for SELF; otherwise it is handed ("F" + the descriptor) to the process of
// this user listening under the name it asks for, or hung up on.
std::unique_ptr<RendezvousChannel> take_network_caller(UniqueFd fd, const std::string& self) {
    auto ch = std::make_unique<RendezvousChannel>(std::move(fd), true);
    std::string request = ch->receive(Clock::now() + kRequestBound);
    if (request.size() < 2 || request[0] != 'Q') return nullptr;
    std::string name = request.substr(1);
    if (name == self) return ch;
    UniqueFd owner = call_local(name);
    if (owner && same_user(owner.get()) && send_with_fd(owner.get(), "F", ch->fd()))
        TENT_INFO("interpose-handover", "interposer: rendezvous caller for %s handed to its owner", name.c_str());
    return nullptr;
}

// The end with the larger name: listens (before starting the engine, so the
// peer can call at once) under its name on this host and, for callers from
// other hosts, on interpose_rendezvous_port, until interpose_discovery_ms.
void await_peer(const std::shared_ptr<ShadowQp>& q, const std::string& self, int timeout_ms, int port) {
    sockaddr_un addr;
    UniqueFd listener(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    socklen_t len = abstract_address(self, &addr);
    if (listener.get() < 0 || bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        listen(listener.get(), 16) != 0)
        return become_plain(q, "cannot listen for the rendezvous");
    // Without it (the port taken by another user or program) callers on
    // this host still find us.
    UniqueFd network = port > 0 ? listen_shared(static_cast<std::uint16_t>(port)) : UniqueFd();
    std::string mine = hello(q->token);
    if (mine.empty()) return become_plain(q, why_no_engine());
    auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    std::unique_ptr<RendezvousChannel> ch;
    // Callers of another user, and network callers for other names, are
    // hung up on or handed over; bounded by the deadline.
    while (!ch) {
        pollfd p[2] = {{listener.get(), POLLIN, 0}, {network.get(), POLLIN, 0}};
        if (poll(p, network ? 2 : 1, remaining_ms(deadline)) < 1) return become_plain(q, "no tent peer called");
        if (p[1].revents & POLLIN) {
            UniqueFd fd(accept4(network.get(), nullptr, nullptr, SOCK_CLOEXEC));
            if (fd) ch = take_network_caller(std::move(fd), self);
            continue;
        }
        if (!(p[0].revents & POLLIN)) continue;
        UniqueFd fd(accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (fd.get() < 0) return become_plain(q, "the rendezvous failed");
        if (!same_user(fd.get())) continue;
        // A local caller sends its hello; a process that took a network
        // caller for us sends "F" and the caller's connection.
        UniqueFd handed;
        std::string first = receive_with_fd(fd.get(), Clock::now() + kRequestBound, &handed);
        if (first == "F" && handed) {
            ch = std::make_unique<RendezvousChannel>(std::move(handed), true);
            continue;
        }
        if (first.empty() || first[0] != 'H') continue;
        // The hello is already read: serve the local caller here.
        network.reset();
        RendezvousChannel local(std::move(fd), false);
        return serve_exchange(q, local, mine, first);
    }
    // Network callers the kernel queues on our listener from now on would
    // wait for an answer until their deadline: closing it resets them, and
    // they call again (landing on another waiting process's listener).
    network.reset();
    serve_exchange(q, *ch, mine, {});
}

void run(std::shared_ptr<ShadowQp> q, std::string self, std::string peer, int timeout_ms) {
    TentScope scope;  // tent's own verbs calls pass through
    if (self == peer) return become_plain(q, "the queue pair is connected to itself");
    int port = rendezvous_port();
    if (ibv_gid own{}; gid_of_name(self, &own)) note_own_gid(own);
    if (self < peer) call_peer(q, peer, timeout_ms, port);
    else await_peer(q, self, timeout_ms, port);
}

} // namespace

std::string rendezvous_name(const ibv_gid& gid, std::uint32_t qpn) {
    static const char* hex = "0123456789abcdef";
    std::string name = "tent-qp/";
    for (unsigned char b : gid.raw) {
        name += hex[b >> 4];
        name += hex[b & 15];
    }
    name += "/" + std::to_string(qpn);
    return name;
}

void start_discovery(std::shared_ptr<ShadowQp> q, std::string self_name, std::string peer_name, int timeout_ms) {
    signal_free_thread(run, std::move(q), std::move(self_name), std::move(peer_name), timeout_ms).detach();
}

} // namespace tent::interpose
