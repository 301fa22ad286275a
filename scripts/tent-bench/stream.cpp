#include "tent-bench/stream.h"

#include <algorithm>
#include <cstring>

#include "tent-bench/pattern.h"

namespace tent_bench {

namespace {

double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

} // namespace

Stream::Stream(const StreamSpec& spec)
    : spec_(spec), posted_at_(spec.depth), last_seq_(spec.depth, kNoSeq), slot_seq_(spec.depth, kNoSeq) {
    report_.op = spec.op;
    report_.size = spec.size;
    report_.check = spec.check;
    for (std::uint32_t s = spec.depth; s-- > 0;) free_slots_.push_back(s);
    // A written slot carries the slot's pattern after its sequence number.
    if (spec.op == Op::Write && spec.check)
        for (std::uint32_t s = 0; s < spec.depth; ++s) fill_pattern(spec.local + s * spec.size, spec.size, s, 8);
}

void Stream::note_error(const std::string& what) {
    ++report_.errors;
    if (first_error_.empty()) first_error_ = what;
}

bool Stream::post(tent_peer_t* peer, const std::vector<std::uint8_t>& key, std::uint64_t limit) {
    const std::uint64_t size = spec_.size;
    while (!free_slots_.empty() && (!limit || posted_ < limit)) {
        std::uint32_t s = free_slots_.back();
        const std::uint64_t offset = spec_.reuse_buffer ? 0 : s * size;
        std::uint8_t* buf = spec_.local + offset;
        std::uint64_t remote_addr = spec_.remote + offset;
        std::uint64_t cookie = make_cookie(posted_, spec_.tag, s);
        if (spec_.check) {
            if (spec_.op == Op::Write) {
                stamp_seq(buf, size, posted_);
            } else if (spec_.op == Op::Read) {
                std::memset(buf, 0, size);
            } else {
                stamp_seq(buf, size, posted_);
                fill_pattern(buf, size, posted_, 8);
            }
        }
        Clock::time_point t = Clock::now();
        int rc;
        if (spec_.op == Op::Write)
            rc = tent_post_write(peer, buf, size, key.data(), key.size(), remote_addr, spec_.priority, spec_.hint,
                                 cookie);
        else if (spec_.op == Op::Read)
            rc = tent_post_read(peer, buf, size, key.data(), key.size(), remote_addr, spec_.priority, spec_.hint,
                                cookie);
        else
            rc = tent_post_send(peer, buf, size, spec_.priority, spec_.hint, cookie);
        if (rc == TENT_ERR_BUSY) return true;  // poll, then retry
        if (posted_ == 0) first_post_ = t;
        ++posted_;
        if (rc != TENT_OK) {
            note_error(std::string("post: ") + tent_strerror(rc));
            if (spec_.op == Op::Write) last_seq_[s] = kFailedSlot;
            // Back to the caller, which checks the clock before posting again.
            return rc != TENT_ERR_PEER_UNREACHABLE;
        }
        free_slots_.pop_back();
        slot_seq_[s] = posted_ - 1;
        posted_at_[s] = t;
        ++inflight_;
    }
    return true;
}

void Stream::complete(const tent_completion_t& c, Clock::time_point now) {
    std::uint32_t s = cookie_slot(c.cookie);
    std::uint64_t seq = cookie_seq(c.cookie);
    if (s >= spec_.depth || slot_seq_[s] != seq) {
        // Each operation completes exactly once: this one is not in flight.
        note_error("unexpected completion (cookie " + std::to_string(c.cookie) + "): no such operation in flight");
        return;
    }
    slot_seq_[s] = kNoSeq;
    // The longest time without a completion: from the first post to the
    // first completion, then between two completions.
    report_.max_gap_ms =
        std::max(report_.max_gap_ms, ms_between(report_.ops + report_.errors ? last_completion_ : first_post_, now));
    last_completion_ = now;
    --inflight_;
    free_slots_.push_back(s);
    if (c.status != TENT_OK) {
        note_error(std::string(op_name(spec_.op)) + " " + std::to_string(seq) + ": " + tent_strerror(c.status));
        if (spec_.op == Op::Write) last_seq_[s] = kFailedSlot;
        return;
    }
    ++report_.ops;
    report_.bytes += spec_.size;
    report_.latencies_us.push_back(std::chrono::duration<double, std::micro>(now - posted_at_[s]).count());
    if (spec_.op == Op::Write) last_seq_[s] = seq;
    if (spec_.op == Op::Read && spec_.check) {
        const std::uint8_t* buf = spec_.local + s * spec_.size;
        if (std::size_t at = find_mismatch(buf, spec_.size, s); at != spec_.size) {
            ++report_.mismatches;
            if (report_.check_detail.empty())
                report_.check_detail = "read " + std::to_string(seq) + " differs at byte " + std::to_string(at);
        }
    }
}

void Stream::abandon(const std::string& why, Clock::time_point now) {
    if (inflight_ == 0) return;
    if (posted_ > 0)
        report_.max_gap_ms = std::max(
            report_.max_gap_ms, ms_between(report_.ops + report_.errors ? last_completion_ : first_post_, now));
    note_error(why);
    report_.errors += inflight_ - 1;
    inflight_ = 0;
}

} // namespace tent_bench
