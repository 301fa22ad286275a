// TcpRail: construction, progress(), completions and closing. The rest of
// the class is defined beside it: tcp_rail_initiator.cpp (posting and the
// outgoing queue), tcp_rail_receive.cpp (framing the incoming stream and
// dispatching frames), tcp_rail_target.cpp (the peer's writes, reads and
// sends), tcp_rail_acks.cpp (answers to this side's ops) and
// tcp_rail_timers.cpp (heartbeats, silence and loss sampling).
#include "transport/tcp/tcp_rail.h"

#include <sys/socket.h>

#include <algorithm>

#include "common/log.h"
#include "transport/tcp/tcp_rail_detail.h"
#include "transport/tcp/tcp_socket.h"
#include "wire/frame_codec.h"

namespace tent::tcp {

namespace {

const char* opcode_name(RailOpcode op) {
    switch (op) {
    case RailOpcode::Write: return "write";
    case RailOpcode::Read: return "read";
    case RailOpcode::Send: return "send";
    case RailOpcode::Probe: return "probe";
    case RailOpcode::AtomicFetchAdd: return "atomic fetch-and-add";
    case RailOpcode::AtomicCmpSwap: return "atomic compare-and-swap";
    }
    return "?";
}

} // namespace

Result<std::unique_ptr<TcpRail>> TcpRail::create(UniqueFd fd, TcpRailIdentity identity, TcpRailParams params,
                                                  RegionLookup regions, const Clock& clock, TcpRedial redial) {
    if (!fd.valid()) return Status(Code::InvalidArgument, "tcp rail: no socket");
    if (identity.connection_id == 0) return Status(Code::InvalidArgument, "tcp rail: connection id 0");
    if (params.silence.interval <= Duration::zero() || params.silence.dead_after < 1)
        return Status(Code::InvalidArgument, "tcp rail: heartbeat interval and silence intervals must be positive");
    if (Status s = configure_socket(fd.get(), params.buffers); !s) return s;
    return std::unique_ptr<TcpRail>(
        new TcpRail(std::move(fd), std::move(identity), params, std::move(regions), clock, std::move(redial)));
}

TcpRail::TcpRail(UniqueFd fd, TcpRailIdentity identity, TcpRailParams params, RegionLookup regions,
                 const Clock& clock, TcpRedial redial)
    : fd_(std::move(fd)), identity_(std::move(identity)), params_(params), regions_(std::move(regions)),
      clock_(clock), silence_(params.silence, clock.now()), loss_(params.loss),
      next_loss_sample_(clock.now() + LossDetector::kSamplePeriod), redial_(std::move(redial)) {}

TcpRail::~TcpRail() {
    if (ledger_) ledger_->leave(identity_.connection_id);
}

void TcpRail::use_atomic_ledger(std::shared_ptr<AtomicLedger> ledger) {
    if (ledger_) ledger_->leave(identity_.connection_id);
    ledger_ = std::move(ledger);
    if (ledger_) ledger_->join(identity_.connection_id);
}

wire::Frame TcpRail::frame_for(std::uint64_t seq, wire::FrameBody body) const {
    return wire::Frame{.flags = 0,
                       .rail_id = identity_.rail_id,
                       .connection_id = identity_.connection_id,
                       .seq = seq,
                       .body = std::move(body)};
}

std::string TcpRail::describe(const Pending& p) const {
    std::string text = std::string(opcode_name(p.opcode)) + " of " + std::to_string(p.length) + " bytes";
    if (p.opcode == RailOpcode::Write || p.opcode == RailOpcode::Read || is_atomic(p.opcode))
        text += " at " + detail::hex(p.remote_addr) + " key " + detail::hex(p.rkey);
    return text + " on tcp rail " + identity_.name;
}

void TcpRail::progress(std::vector<RailCompletion>& done,
                       const std::function<void(const RailMessage&)>& on_message) {
    if (open_ && !fd_.valid()) take_accepted_socket();
    if (open_ && !fd_.valid()) {  // re-armed, the peer's new socket not here yet
        done.insert(done.end(), std::make_move_iterator(ready_.begin()), std::make_move_iterator(ready_.end()));
        ready_.clear();
        return;
    }
    // Before anything read is reported: a gap in this process's own
    // progress does not count as the peer's silence.
    const TimePoint now = clock_.now();
    if (open_) silence_.watch(now);
    if (open_) receive(on_message);
    // The timers look at the turn's start (bytes read meanwhile carry their
    // own time): they act a receive's length later at most, the safe side,
    // for a clock read less on every turn.
    if (open_) check_timers(now);
    if (open_) flush_answers();
    done.insert(done.end(), std::make_move_iterator(ready_.begin()), std::make_move_iterator(ready_.end()));
    ready_.clear();
}

void TcpRail::complete(const Pending& p, RailOutcome outcome, Status status) {
    ready_.push_back(RailCompletion{p.cookie, outcome, std::move(status), clock_.now() - p.posted});
}

void TcpRail::reject_frame(const std::string& reason) {
    TENT_WARN("tcp frame rejected", "tcp rail %s: %s; closing the rail", identity_.name.c_str(), reason.c_str());
    // Tell the peer why, best effort: the frame goes out only if the socket
    // takes it right now.
    tx_.clear();
    tx_front_sent_ = 0;
    tx_bytes_ = 0;
    wire::Frame bye{.rail_id = identity_.rail_id,
                    .connection_id = identity_.connection_id,
                    .body = wire::Goodbye{wire::GoodbyeReason::ProtocolError}};
    if (auto bytes = wire::encode_frame(bye)) (void)::send(fd_.get(), bytes->data(), bytes->size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    close_with(Code::TransportError, "frame rejected: " + reason, RailOutcome::RetryExceeded);
}

void TcpRail::close_with(Code code, const std::string& reason, RailOutcome first) {
    if (!open_) return;
    open_ = false;
    close_reason_ = Status(code, "tcp rail " + identity_.name + ": " + reason);
    // Shut down, but keep the descriptor until destruction: it stays
    // readable (EOF), which wakes the caller's epoll to collect the
    // completions below, and the number cannot be reused under its feet.
    ::shutdown(fd_.get(), SHUT_RDWR);
    tx_.clear();
    tx_front_sent_ = 0;
    tx_bytes_ = 0;
    // Oldest first, as a QP reports them: the op that met the error, then
    // everything behind it flushed.
    std::vector<Pending> all;
    all.reserve(pending_.size() + probes_.size());
    for (auto& [seq, p] : pending_) all.push_back(p);
    for (auto& [nonce, p] : probes_) all.push_back(p);
    std::sort(all.begin(), all.end(), [](const Pending& a, const Pending& b) { return a.order < b.order; });
    pending_.clear();
    probes_.clear();
    bool first_done = false;
    for (const Pending& p : all) {
        RailOutcome outcome = first_done ? RailOutcome::Flushed : first;
        if (p.opcode == RailOpcode::Probe) outcome = RailOutcome::ProbeFailed;
        else first_done = true;
        Status status = outcome == RailOutcome::Flushed
                            ? Status(Code::RailDown, describe(p) + " flushed: " + reason)
                            : Status(code, describe(p) + " failed: " + reason);
        complete(p, outcome, std::move(status));
    }
}

Status TcpRail::fail() {
    dial_.reset();  // a re-arm under way is abandoned
    close_with(Code::RailDown, "failed by the engine", RailOutcome::Flushed);
    return Status::ok();
}

void TcpRail::close() {
    if (!open_) return;
    // Goodbye, best effort, then everything outstanding is flushed.
    wire::Frame bye{.rail_id = identity_.rail_id,
                    .connection_id = identity_.connection_id,
                    .body = wire::Goodbye{wire::GoodbyeReason::Normal}};
    if (tx_.empty())
        if (auto bytes = wire::encode_frame(bye))
            (void)::send(fd_.get(), bytes->data(), bytes->size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    close_with(Code::RailDown, "closed locally", RailOutcome::Flushed);
}

} // namespace tent::tcp
