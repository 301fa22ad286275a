#include "discovery.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "activation.h"
#include "common/unique_fd.h"
#include "runtime.h"

namespace tent::interpose {

namespace {

using Clock = std::chrono::steady_clock;

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

int remaining_ms(Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return left > 0 ? static_cast<int>(left) : 0;
}

// One datagram of at most 4 KiB before the deadline; empty on timeout or error.
std::string receive(int fd, Clock::time_point deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, remaining_ms(deadline)) != 1) return {};
    char buf[4096];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

// The rendezvous name lives in the host's (network namespace's) abstract
// socket namespace, where file permissions do not apply: any local user can
// call or squat it. Only a process of our own user is listened to; the
// engine connection that follows is authenticated with the job's key anyway.
bool same_user(int fd) {
    ucred cred{};
    socklen_t len = sizeof cred;
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == geteuid();
}

bool send_all(int fd, const std::string& m) { return send(fd, m.data(), m.size(), MSG_NOSIGNAL) == ssize_t(m.size()); }

// "H" + our token + our engine's address.
std::string hello(std::uint32_t token) {
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

// The end with the smaller name: calls the other until interpose_discovery_ms.
void call_peer(const std::shared_ptr<ShadowQp>& q, const std::string& peer, int timeout_ms) {
    // Starting the engine (once per process) is not the peer's time to answer.
    std::string mine = hello(q->token);
    if (mine.empty()) return become_plain(q, "tent's engine did not start");
    auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    sockaddr_un addr;
    socklen_t len = abstract_address(peer, &addr);
    std::uint32_t peer_token = 0;
    for (;;) {
        UniqueFd fd(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
        if (fd.get() < 0) return become_plain(q, "no socket for the rendezvous");
        if (connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) == 0) {
            if (!same_user(fd.get())) return become_plain(q, "the rendezvous name is held by another user");
            auto bound = Clock::now() + kExchangeBound;
            if (!send_all(fd.get(), mine)) return become_plain(q, "the peer closed the rendezvous");
            tent_peer_t* p = connect_to(receive(fd.get(), bound), &peer_token);
            if (!p) {
                send_all(fd.get(), "N");
                return become_plain(q, "the peer's tent did not agree");
            }
            if (!send_all(fd.get(), "K")) return become_plain(q, "the peer closed the rendezvous");
            return become_tent(q, p, peer_token);
        }
        if (remaining_ms(deadline) == 0) return become_plain(q, "no tent peer answered");
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

// The end with the larger name: listens (before starting the engine, so the
// peer can call at once) until interpose_discovery_ms.
void await_peer(const std::shared_ptr<ShadowQp>& q, const std::string& self, int timeout_ms) {
    sockaddr_un addr;
    UniqueFd listener(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    socklen_t len = abstract_address(self, &addr);
    if (listener.get() < 0 || bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        listen(listener.get(), 4) != 0)
        return become_plain(q, "cannot listen for the rendezvous");
    std::string mine = hello(q->token);
    if (mine.empty()) return become_plain(q, "tent's engine did not start");
    auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    UniqueFd fd;
    // Callers of another user are hung up on; bounded by the deadline.
    while (!fd) {
        pollfd p{listener.get(), POLLIN, 0};
        if (poll(&p, 1, remaining_ms(deadline)) != 1) return become_plain(q, "no tent peer called");
        fd.reset(accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (fd.get() < 0) return become_plain(q, "the rendezvous failed");
        if (!same_user(fd.get())) fd.reset();
    }
    auto bound = Clock::now() + kExchangeBound;
    std::uint32_t peer_token = 0;
    tent_peer_t* peer_handle = connect_to(receive(fd.get(), bound), &peer_token);
    if (!peer_handle) {
        send_all(fd.get(), "N");
        return become_plain(q, "the peer's tent did not agree");
    }
    if (!send_all(fd.get(), mine) || receive(fd.get(), bound) != "K")
        return become_plain(q, "the peer's tent did not agree");
    become_tent(q, peer_handle, peer_token);
}

void run(std::shared_ptr<ShadowQp> q, std::string self, std::string peer, int timeout_ms) {
    TentScope scope;  // tent's own verbs calls pass through
    if (self == peer) return become_plain(q, "the queue pair is connected to itself");
    if (self < peer) call_peer(q, peer, timeout_ms);
    else await_peer(q, self, timeout_ms);
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
    std::thread(run, std::move(q), std::move(self_name), std::move(peer_name), timeout_ms).detach();
}

} // namespace tent::interpose
