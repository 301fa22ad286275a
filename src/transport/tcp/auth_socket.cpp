#include "transport/tcp/auth_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "common/crypto.h"
#include "common/log.h"
#include "transport/tcp/tcp_socket.h"

namespace tent::tcp {

namespace {

// Waits until fd is ready for events or the deadline passes.
Status wait_ready(int fd, short events, TimePoint deadline) {
    // Bounded: each round returns or retries an interrupted poll.
    for (int attempt = 0; attempt < 64; ++attempt) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::instance().now());
        if (left.count() < 0) break;
        pollfd p{fd, events, 0};
        int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count() + 1, 1 << 30)));
        if (n > 0) return Status::ok();
        if (n < 0 && errno != EINTR) return Status::from_errno(errno, "authentication: poll");
    }
    return Status(Code::Timeout, "authentication: the peer did not answer in time");
}

// Exactly out.size() bytes, never one more (the peer's frames follow).
Status read_exact(int fd, std::span<std::uint8_t> out, TimePoint deadline) {
    std::size_t have = 0;
    // Bounded by the deadline: each round reads a byte or waits.
    while (have < out.size()) {
        ssize_t n = ::recv(fd, out.data() + have, out.size() - have, MSG_DONTWAIT);
        if (n > 0) {
            have += static_cast<std::size_t>(n);
            continue;
        }
        if (n == 0) return Status(Code::PeerUnreachable, "authentication: the peer closed the connection");
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return Status::from_errno(errno, "authentication: recv");
        if (Status s = wait_ready(fd, POLLIN, deadline); !s) return s;
    }
    return Status::ok();
}

Status write_all(int fd, std::span<const std::uint8_t> bytes, TimePoint deadline) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
        ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            sent += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (Status s = wait_ready(fd, POLLOUT, deadline); !s) return s;
            continue;
        }
        return Status::from_errno(errno, "authentication: send");
    }
    return Status::ok();
}

Result<wire::Nonce> fresh_nonce() {
    wire::Nonce n;
    if (Status s = random_bytes(n); !s) return s;
    return n;
}

} // namespace

Result<AuthProver> AuthProver::start(const JobKeyCell& keys) {
    std::optional<JobKey> key;
    if (keys.required()) {
        key = keys.get();
        if (!key)
            return Status(Code::InvalidArgument,
                          "no job key yet: the program has not given it (job_key_file = none, tent_engine_set_job_key)");
    }
    auto nonce = fresh_nonce();
    if (!nonce) return nonce.status();
    return AuthProver(std::move(key), *nonce);
}

Status AuthProver::answer_challenge(int fd, TimePoint deadline) {
    if (!key_) return Status::ok();
    wire::ChallengeBytes challenge;
    if (Status s = read_exact(fd, challenge, deadline); !s) return s;
    auto proof = auth_.on_challenge(challenge, *key_);
    if (!proof) return proof.status();
    return write_all(fd, *proof, deadline);
}

Result<AuthProver> AuthProver::prove(int fd, const JobKeyCell& keys, TimePoint deadline) {
    auto prover = start(keys);
    if (!prover) return prover.status();
    if (Status s = prover->answer_challenge(fd, deadline); !s) return s;
    return prover;
}

Status AuthProver::confirm(int fd, TimePoint deadline) {
    if (!key_) return Status::ok();
    wire::ConfirmBytes confirm;
    if (Status s = read_exact(fd, confirm, deadline); !s) return s;
    return auth_.on_confirm(confirm, *key_);
}

struct AuthGate::Pending {
    Pending(UniqueFd f, const wire::Nonce& nonce, TimePoint d, std::string p)
        : fd(std::move(f)), auth(nonce), deadline(d), peer(std::move(p)) {}
    UniqueFd fd;
    wire::AuthResponder auth;
    TimePoint deadline;
    std::string peer;
    wire::ProofBytes proof{};
    std::size_t have = 0;
};

AuthGate::AuthGate(std::shared_ptr<const JobKeyCell> keys, Duration timeout, std::string what, UniqueFd epoll)
    : keys_(std::move(keys)), timeout_(timeout), what_(std::move(what)), epoll_(std::move(epoll)) {}

AuthGate::~AuthGate() = default;

Result<std::unique_ptr<AuthGate>> AuthGate::create(std::shared_ptr<const JobKeyCell> keys, Duration timeout,
                                                   std::string what) {
    UniqueFd epoll(::epoll_create1(EPOLL_CLOEXEC));
    if (!epoll) return Status::from_errno(errno, "authentication: epoll_create1");
    return std::unique_ptr<AuthGate>(new AuthGate(std::move(keys), timeout, std::move(what), std::move(epoll)));
}

void AuthGate::refuse(Pending& p, const Status& why) {
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, p.fd.get(), nullptr);
    TENT_WARN("auth-refused", "%s connection from %s closed: %s", what_.c_str(), p.peer.c_str(),
              why.message().c_str());
    p.fd.reset();
}

void AuthGate::admit(UniqueFd fd, TimePoint now) {
    if (!keys_->required()) {
        ready_.push_back(std::move(fd));
        return;
    }
    auto peer = peer_address_of(fd.get());
    std::string name = peer ? peer->to_string() : std::string("?");
    const int flags = ::fcntl(fd.get(), F_GETFL);
    if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK) != 0) return;
    auto nonce = fresh_nonce();
    if (!nonce) {
        TENT_WARN("auth-refused", "%s connection from %s closed: %s", what_.c_str(), name.c_str(),
                  nonce.status().message().c_str());
        return;
    }
    // A crowd of silent strangers must not grow without bound: the oldest goes.
    if (pending_.size() >= kMaxPending) {
        refuse(*pending_.front(), Status(Code::Busy, "too many connections waiting to authenticate"));
        pending_.erase(pending_.begin());
    }
    auto p = std::make_unique<Pending>(std::move(fd), *nonce, now + timeout_, std::move(name));
    // A fresh socket's empty buffer takes the 40 bytes at once.
    const auto challenge = p->auth.challenge();
    if (::send(p->fd.get(), challenge.data(), challenge.size(), MSG_NOSIGNAL | MSG_DONTWAIT) !=
        static_cast<ssize_t>(challenge.size())) {
        TENT_WARN("auth-refused", "%s connection from %s closed: %s", what_.c_str(), p->peer.c_str(),
                  Status::from_errno(errno, "sending the challenge").message().c_str());
        return;
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = p->fd.get();
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, p->fd.get(), &ev) != 0) return;
    pending_.push_back(std::move(p));
}

Status AuthGate::advance(Pending& p, TimePoint now) {
    // Bounded: each round reads at least one byte of the fixed-size Proof.
    while (p.have < p.proof.size()) {
        ssize_t n = ::recv(p.fd.get(), p.proof.data() + p.have, p.proof.size() - p.have, MSG_DONTWAIT);
        if (n == 0) return Status(Code::PeerUnreachable, "closed before authenticating");
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            return Status::from_errno(errno, "recv");
        }
        p.have += static_cast<std::size_t>(n);
        if (Status s = wire::check_auth_header(std::span(p.proof).first(p.have), wire::AuthMessageType::Proof); !s)
            return s;
    }
    if (p.have == p.proof.size()) {
        // Without the key yet (given later by the program), the Proof waits.
        if (auto key = keys_->get()) {
            auto confirm = p.auth.on_proof(p.proof, *key);
            if (!confirm) return confirm.status();
            if (::send(p.fd.get(), confirm->data(), confirm->size(), MSG_NOSIGNAL | MSG_DONTWAIT) !=
                static_cast<ssize_t>(confirm->size()))
                return Status::from_errno(errno, "sending the confirmation");
            return Status::ok();
        }
    }
    if (now >= p.deadline)
        return Status(Code::Timeout, p.have == p.proof.size() ? "the job key was not given in time"
                                                              : "did not authenticate within connect_timeout_ms");
    return Status(Code::Busy, "authenticating");
}

std::vector<UniqueFd> AuthGate::poll(TimePoint now) {
    std::vector<UniqueFd> proven = std::move(ready_);
    ready_.clear();
    for (auto& p : pending_) {
        Status s = advance(*p, now);
        if (s.code() == Code::Busy) continue;
        if (!s) {
            refuse(*p, s);
            continue;
        }
        ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, p->fd.get(), nullptr);
        proven.push_back(std::move(p->fd));
    }
    std::erase_if(pending_, [](const auto& p) { return !p->fd; });
    return proven;
}

} // namespace tent::tcp
