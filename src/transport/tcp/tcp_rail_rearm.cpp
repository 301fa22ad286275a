// TcpRail, re-arming: a closed rail starts over on a new socket to the same
// peer (tcp_redial.h says which side dials and which accepts).
#include "transport/tcp/tcp_rail.h"

#include "common/log.h"

namespace tent::tcp {

Status TcpRail::rearm() {
    if (!redial_.possible()) return Status(Code::Unsupported, "tcp rail " + identity_.name + " cannot be re-armed");
    if (outstanding() > 0 || !ready_.empty())
        return Status(Code::Busy, "tcp rail " + identity_.name + ": operations still outstanding");
    if (redial_.mailbox) {
        // Sockets accepted before this point belong to older attempts.
        redial_.mailbox->sockets.clear();
        restart(UniqueFd());
        return Status::ok();
    }
    if (open_) close_with(Code::RailDown, "re-armed", RailOutcome::Flushed);
    if (!dial_) {
        auto dial = TcpDial::start(*redial_.dial);
        if (!dial) return dial.status();
        dial_.emplace(std::move(*dial));
    }
    Status s = dial_->advance();
    if (s.code() == Code::Busy) return s;
    if (!s) {
        dial_.reset();
        return Status(s.code(), "tcp rail " + identity_.name + ": " + s.message());
    }
    UniqueFd fd = dial_->take();
    dial_.reset();
    restart(std::move(fd));
    TENT_DEBUG("tcp rail redialed", "tcp rail %s: new connection", identity_.name.c_str());
    return Status::ok();
}

void TcpRail::take_accepted_socket() {
    if (!redial_.mailbox || redial_.mailbox->sockets.empty()) return;
    UniqueFd fd = std::move(redial_.mailbox->sockets.back());
    redial_.mailbox->sockets.clear();
    restart(std::move(fd));
    TENT_DEBUG("tcp rail reaccepted", "tcp rail %s: new connection", identity_.name.c_str());
}

void TcpRail::restart(UniqueFd fd) {
    fd_ = std::move(fd);
    dial_.reset();
    open_ = true;
    close_reason_ = Status::ok();
    const TimePoint now = clock_.now();
    silence_ = SilenceDetector(params_.silence, now);
    loss_ = LossDetector(params_.loss);
    next_loss_sample_ = now + LossDetector::kSamplePeriod;
    kernel_counters_ = true;
    next_seq_ = 1;
    expected_peer_seq_ = 1;
    tx_.clear();
    tx_front_sent_ = 0;
    tx_bytes_ = 0;
    rx_begin_ = rx_end_ = 0;
    frames_left_ = false;
    direct_.reset();
}

} // namespace tent::tcp
