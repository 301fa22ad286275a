#include "transport/tcp/auth_socket.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <utility>

#include "common/crypto.h"
#include "common/log.h"
#include "transport/tcp/blocking_io.h"
#include "transport/tcp/tcp_socket.h"
#include "wire/frame_scanner.h"
#include "wire/protocol.h"

namespace tent::tcp {

namespace {

constexpr Exchange kAuth{"authentication", Code::PeerUnreachable, Code::SystemError};

// Messages behind which the peer sends nothing before this side answers
// are read with this much to spare, so that one read takes them whole.
constexpr std::size_t kReadAhead = 4096;

} // namespace

Result<AuthProver> AuthProver::start(const JobKeyCell& keys) {
    std::shared_ptr<const HmacKey> key;
    if (keys.required()) {
        key = keys.mac_key();
        if (!key)
            return Status(Code::InvalidArgument,
                          "no job key yet: the program has not given it (job_key_file = none, tent_engine_set_job_key)");
    }
    wire::Nonce nonce{};
    if (key)
        if (Status s = random_bytes(nonce); !s) return s;
    return AuthProver(std::move(key), nonce);
}

Status AuthProver::open(int fd, std::span<const std::uint8_t> frames, TimePoint deadline) {
    if (!key_) return write_all(fd, frames, deadline, kAuth);
    // One write: the responder finds the Greeting and the frames together.
    std::vector<std::uint8_t> bytes(wire::kGreetingSize + frames.size());
    const auto greeting = auth_.greeting();
    std::copy(greeting.begin(), greeting.end(), bytes.begin());
    std::copy(frames.begin(), frames.end(), bytes.begin() + wire::kGreetingSize);
    return write_all(fd, bytes, deadline, kAuth);
}

Result<std::vector<std::uint8_t>> AuthProver::prove(int fd, TimePoint deadline) {
    if (!key_) return std::vector<std::uint8_t>{};
    // The Answer and what came with it, in as few reads as it arrived in
    // (one, as the responder writes it once): the responder sends nothing
    // more until it has the Proof, so every byte read here is the Answer's
    // or its reply's. Its header first: a Refusal is a header and the close.
    std::vector<std::uint8_t> in;
    if (Status s = read_until(fd, in, wire::kAuthHeaderSize, kReadAhead, deadline, kAuth); !s) {
        // What came before a close may be a Refusal, which says more.
        Status refused = wire::check_auth_header(in, wire::AuthMessageType::Answer);
        return refused ? s : refused;
    }
    Result<std::size_t> size = wire::answer_size(in);  // checks the header
    if (!size) return size.status();
    if (Status s = read_until(fd, in, *size, kReadAhead, deadline, kAuth); !s) return s;
    auto proof = auth_.on_answer(std::span(in).first(*size), *key_);
    if (!proof) return proof.status();
    if (Status w = write_all(fd, *proof, deadline, kAuth); !w) return w;
    in.erase(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(*size));
    return in;
}

Result<std::vector<wire::RailToken>> draw_rail_tokens(std::span<const std::uint16_t> rail_ids) {
    if (rail_ids.size() > wire::kMaxRailTokens) return Status(Code::InvalidArgument, "too many tcp rails for tokens");
    // One draw for all: a single getrandom() call.
    std::vector<std::uint8_t> random(rail_ids.size() * 64);
    if (Status s = random_bytes(random); !s) return s;
    std::vector<wire::RailToken> tokens(rail_ids.size());
    for (std::size_t i = 0; i < rail_ids.size(); ++i) {
        tokens[i].rail_id = rail_ids[i];
        std::copy_n(random.begin() + static_cast<std::ptrdiff_t>(i * 64), 32, tokens[i].from_initiator.begin());
        std::copy_n(random.begin() + static_cast<std::ptrdiff_t>(i * 64 + 32), 32, tokens[i].from_responder.begin());
    }
    return tokens;
}

Status rail_token_open(int fd, const wire::RailTokenBytes& show, std::span<const std::uint8_t> frames,
                       TimePoint deadline) {
    std::vector<std::uint8_t> bytes(wire::kRailOpenSize + frames.size());
    const auto open = wire::rail_open(show);
    std::copy(open.begin(), open.end(), bytes.begin());
    std::copy(frames.begin(), frames.end(), bytes.begin() + wire::kRailOpenSize);
    return write_all(fd, bytes, deadline, kAuth);
}

Result<std::vector<std::uint8_t>> rail_token_check(int fd, const wire::RailTokenBytes& expected, TimePoint deadline) {
    // The RailAccept and the header of the HelloAck behind it in one read
    // (never a byte more: the rail's frames may follow the HelloAck). A
    // Refusal (a header, then the close) is recognised in what came before
    // the close.
    std::vector<std::uint8_t> in;
    if (Status s = read_until(fd, in, wire::kRailAcceptSize + wire::kHeaderSize, 0, deadline, kAuth); !s) {
        Status refused = wire::check_auth_header(std::span(in).first(std::min(in.size(), wire::kAuthHeaderSize)),
                                                 wire::AuthMessageType::RailAccept);
        return !refused && refused.code() == Code::Unsupported ? refused : s;
    }
    auto token = wire::rail_token_of(std::span(in).first(wire::kRailAcceptSize), wire::AuthMessageType::RailAccept);
    if (!token) return token.status();
    if (!equal_in_constant_time(*token, expected))
        return Status(Code::PeerUnreachable, "authentication failed: the peer showed a wrong rail token");
    return std::vector<std::uint8_t>(in.begin() + wire::kRailAcceptSize, in.end());
}

struct AuthGate::Pending {
    Pending(UniqueFd f, TimePoint d) : fd(std::move(f)), deadline(d) {}
    UniqueFd fd;
    std::optional<wire::AuthResponder> auth;  // from the answer on
    TimePoint deadline;
    // The Greeting and the frames behind it, until answered; then the Proof.
    std::vector<std::uint8_t> in;
    bool answered = false;
    // Answered in this call of admit(): its Proof cannot have come yet, and
    // the poll() right after it does not look (one recv() fewer).
    bool just_answered = false;
    std::any held;
    std::optional<Reply> reply;  // a RailOpen's, while its token is awaited
    bool watched = false;        // in the gate's epoll
};

namespace {

static_assert(wire::kGreetingSize == wire::kRailOpenSize, "an opening message has one size");
constexpr std::size_t kOpeningSize = wire::kGreetingSize;

// Which opening message the bytes so far begin: a Greeting unless they say RailOpen.
wire::AuthMessageType opening_type(std::span<const std::uint8_t> in) {
    return in.size() > 5 && in[5] == static_cast<std::uint8_t>(wire::AuthMessageType::RailOpen)
               ? wire::AuthMessageType::RailOpen
               : wire::AuthMessageType::Greeting;
}

} // namespace

AuthGate::AuthGate(std::shared_ptr<const JobKeyCell> keys, Duration timeout, std::string what, std::size_t frames,
                   Answerer answerer, UniqueFd epoll)
    : keys_(std::move(keys)), timeout_(timeout), what_(std::move(what)), frames_(frames),
      answerer_(std::move(answerer)), epoll_(std::move(epoll)), tokens_(timeout) {}

AuthGate::~AuthGate() = default;

Result<std::unique_ptr<AuthGate>> AuthGate::create(std::shared_ptr<const JobKeyCell> keys, Duration timeout,
                                                   std::string what, std::size_t frames, Answerer answerer) {
    UniqueFd epoll(::epoll_create1(EPOLL_CLOEXEC));
    if (!epoll) return Status::from_errno(errno, "authentication: epoll_create1");
    return std::unique_ptr<AuthGate>(
        new AuthGate(std::move(keys), timeout, std::move(what), frames, std::move(answerer), std::move(epoll)));
}

void AuthGate::watch(Pending& p, bool on) {
    if (p.watched == on) return;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = p.fd.get();
    if (::epoll_ctl(epoll_.get(), on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, p.fd.get(), &ev) == 0) p.watched = on;
}

void AuthGate::refuse(Pending& p, const Status& why) {
    watch(p, false);
    // Another version of tent, or a tent with authentication off: told so
    // before the close, rather than left to guess (8 bytes into a fresh
    // socket's buffer; best effort).
    const bool plain_frame = wire::is_plain_frame(p.in);
    if (plain_frame || wire::is_other_auth_version(p.in)) {
        const auto no = wire::refusal(plain_frame ? wire::RefusalReason::AuthMismatch : wire::RefusalReason::OtherVersion);
        (void)!::send(p.fd.get(), no.data(), no.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    // The peer's name only when there is something to say about it: no
    // system call on the way of a connection that proves itself.
    auto peer = peer_address_of(p.fd.get());
    TENT_WARN("auth-refused", "%s connection from %s closed: %s", what_.c_str(),
              peer ? peer->to_string().c_str() : "?", why.message().c_str());
    p.fd.reset();
    p.held.reset();  // what the answerer kept goes with the socket
}

void AuthGate::admit(UniqueFd fd, TimePoint now) {
    if (!keys_->required()) {
        ready_.push_back(Admitted{std::move(fd), false, {}});
        return;
    }
    const int flags = ::fcntl(fd.get(), F_GETFL);
    if ((flags & O_NONBLOCK) == 0 && (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK) != 0)) return;
    auto p = std::make_unique<Pending>(std::move(fd), now + timeout_);
    // Its opening has usually arrived with it: answered at once, and a rail
    // socket whose token is entered is handed over without ever entering
    // the epoll (two system calls fewer on the way of every rail).
    if (!settle(*p, now)) return;
    p->just_answered = p->answered;
    // A crowd of silent strangers must not grow without bound: the oldest goes.
    if (pending_.size() >= kMaxPending) {
        refuse(*pending_.front(), Status(Code::Busy, "too many connections waiting to authenticate"));
        pending_.erase(pending_.begin());
    }
    pending_.push_back(std::move(p));
}

bool AuthGate::settle(Pending& p, TimePoint now) {
    Status s = advance(p, now);
    if (s.code() == Code::Busy) {
        watch(p, true);
        return true;
    }
    if (!s) {
        refuse(p, s);
        return false;
    }
    watch(p, false);
    ready_.push_back(Admitted{std::move(p.fd), true, std::move(p.held)});
    return false;
}

// Reads what has come of the Greeting and its frames. The initiator sends
// nothing else before the Answer, so reading all there is takes nothing
// that belongs to later; more than the opening is a protocol error.
Status AuthGate::read_opening(Pending& p) {
    // Bounded: each round reads at least one byte of a bounded opening.
    for (;;) {
        const std::size_t have = p.in.size();
        const std::size_t room = kOpeningSize + kMaxOpening - have;
        if (room == 0) return Status(Code::InvalidArgument, "its opening frames exceed " + std::to_string(kMaxOpening) + " bytes");
        p.in.resize(have + std::min<std::size_t>(room, 4096));
        ssize_t n = ::recv(p.fd.get(), p.in.data() + have, p.in.size() - have, MSG_DONTWAIT);
        p.in.resize(have + static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
        if (n == 0) return Status(Code::PeerUnreachable, "closed before authenticating");
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::ok();
            return Status::from_errno(errno, "recv");
        }
        if (Status s = wire::check_auth_header(p.in, opening_type(p.in)); !s) return s;
        if (opening_complete(p.in)) return Status::ok();  // no need to ask for more
    }
}

// Whether in holds the Greeting and every frame behind it (garbage counts
// as complete: answer() refuses it).
bool AuthGate::opening_complete(std::span<const std::uint8_t> in) const {
    if (in.size() < kOpeningSize) return false;
    std::size_t at = kOpeningSize;
    for (std::size_t i = 0; i < frames_; ++i) {
        auto scan = wire::scan_frame(in.subspan(at));
        if (scan.state == wire::ScanState::NeedMore) return false;
        if (scan.state == wire::ScanState::Error) return true;
        at += scan.bytes;
    }
    return true;
}

// The frames behind the opening message, each whole; garbage is refused as
// soon as the scanner sees it.
Result<std::vector<std::span<const std::uint8_t>>> AuthGate::opening_frames(const Pending& p) const {
    std::vector<std::span<const std::uint8_t>> frames;
    std::size_t at = kOpeningSize;
    while (frames.size() < frames_) {
        auto scan = wire::scan_frame(std::span(p.in).subspan(at));
        if (scan.state == wire::ScanState::Error) return scan.error;
        if (scan.state == wire::ScanState::NeedMore) return Status(Code::Busy, "authenticating");
        frames.push_back(std::span(p.in).subspan(at, scan.bytes));
        at += scan.bytes;
    }
    if (at != p.in.size()) return Status(Code::InvalidArgument, "it sent more than its opening before the answer");
    return frames;
}

Status AuthGate::answer(Pending& p, const HmacKey& key) {
    auto frames = opening_frames(p);
    if (!frames) return frames.status();
    wire::Nonce nonce;
    if (Status s = random_bytes(nonce); !s) return s;
    p.auth.emplace(nonce);
    auto reply = answerer_(p.fd.get(), *frames);
    if (!reply) return reply.status();
    auto answer = p.auth->on_greeting(std::span(p.in).first(wire::kGreetingSize), key, reply->rail_tokens);
    if (!answer) return answer.status();
    // The Answer and the reply in one write: the initiator wakes once. A
    // fresh socket's empty buffer takes these few hundred bytes at once.
    std::vector<std::uint8_t> out = std::move(*answer);
    out.insert(out.end(), reply->bytes.begin(), reply->bytes.end());
    if (::send(p.fd.get(), out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT) != static_cast<ssize_t>(out.size()))
        return Status::from_errno(errno, "sending the answer");
    p.held = std::move(reply->held);
    p.answered = true;
    p.in.clear();
    return Status(Code::Busy, "authenticating");
}

// A RailOpen and its frames: ok once the token was right and the reply
// sent; Busy while no token is entered for the rail the frames name.
Status AuthGate::answer_rail_token(Pending& p, TimePoint now) {
    if (!p.reply) {
        auto frames = opening_frames(p);
        if (!frames) return frames.status();
        auto reply = answerer_(p.fd.get(), *frames);
        if (!reply) return reply.status();
        if (!reply->rail) return Status(Code::InvalidArgument, "a rail token where no rail opens");
        p.reply = std::move(*reply);
    }
    auto shown = wire::rail_token_of(std::span(p.in).first(wire::kRailOpenSize), wire::AuthMessageType::RailOpen);
    if (!shown) return shown.status();
    auto mine = tokens_.take(p.reply->rail->first, p.reply->rail->second, *shown, now);
    if (!mine) return mine.status();
    const auto accept = wire::rail_accept(*mine);
    std::vector<std::uint8_t> out(accept.begin(), accept.end());
    out.insert(out.end(), p.reply->bytes.begin(), p.reply->bytes.end());
    if (::send(p.fd.get(), out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT) != static_cast<ssize_t>(out.size()))
        return Status::from_errno(errno, "sending the rail token");
    p.held = std::move(p.reply->held);
    p.answered = true;
    return Status::ok();
}

Status AuthGate::advance(Pending& p, TimePoint now) {
    if (!p.answered) {
        if (Status s = read_opening(p); !s) return s;
        if (p.in.size() >= kOpeningSize && opening_type(p.in) == wire::AuthMessageType::RailOpen) {
            if (opening_complete(p.in))
                if (Status s = answer_rail_token(p, now); s.code() != Code::Busy) return s;
        } else if (p.in.size() >= wire::kGreetingSize) {
            // Without the key yet (given later by the program), the greeting waits.
            if (auto key = keys_->mac_key()) {
                // The Proof cannot be there yet (it answers what was just
                // sent): it is read on a later call.
                if (Status s = answer(p, *key); s.code() != Code::Busy) return s;
                if (p.answered) return Status(Code::Busy, "authenticating");
            }
        }
    } else {
        // Exactly the Proof, never a byte more: the peer's frames follow it.
        // Bounded: each round reads at least one byte of it.
        while (p.in.size() < wire::kProofSize) {
            const std::size_t have = p.in.size();
            p.in.resize(wire::kProofSize);
            ssize_t n = ::recv(p.fd.get(), p.in.data() + have, wire::kProofSize - have, MSG_DONTWAIT);
            p.in.resize(have + static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
            if (n == 0) return Status(Code::PeerUnreachable, "closed before authenticating");
            if (n < 0) {
                if (errno == EINTR) continue;
                if (errno == EAGAIN || errno == EWOULDBLOCK) break;
                return Status::from_errno(errno, "recv");
            }
            if (Status s = wire::check_auth_header(p.in, wire::AuthMessageType::Proof); !s) return s;
        }
        if (p.in.size() == wire::kProofSize) {
            auto key = keys_->mac_key();
            if (!key) return Status(Code::Internal, "the job key went away");
            return p.auth->on_proof(p.in, *key);
        }
    }
    if (now >= p.deadline)
        return Status(Code::Timeout, p.reply ? "no connection entered a token for the rail it names within connect_timeout_ms"
                                     : !p.answered && p.in.size() >= wire::kGreetingSize && !keys_->mac_key()
                                         ? "the job key was not given in time"
                                         : "did not authenticate within connect_timeout_ms");
    return Status(Code::Busy, "authenticating");
}

std::vector<AuthGate::Admitted> AuthGate::poll(TimePoint now) {
    for (auto& p : pending_) {
        if (std::exchange(p->just_answered, false)) continue;  // the epoll tells when its Proof comes
        settle(*p, now);
    }
    std::erase_if(pending_, [](const auto& p) { return !p->fd; });
    std::vector<Admitted> proven = std::move(ready_);
    ready_.clear();
    return proven;
}

} // namespace tent::tcp
