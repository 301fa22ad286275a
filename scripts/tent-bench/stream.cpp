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
    if (checks_writes()) {
        notes_ = spec.notes;
        answers_.resize(spec.depth);
        note_pending_.assign(spec.depth, 0);
        answer_pending_.assign(spec.depth, 0);
    }
}

bool Stream::start_checks(tent_engine_t* engine, std::string& error) {
    if (!checks_writes()) return true;
    engine_ = engine;
    for (std::uint32_t i = 0; i < spec_.depth; ++i) {
        int rc = tent_post_recv(engine, &answers_[i], sizeof(WriteNote), kCheckCookie | kAnswerCookie | i);
        if (rc != TENT_OK) {
            error = std::string("cannot post a receive buffer: ") + tent_strerror(rc);
            return false;
        }
    }
    return true;
}

void Stream::send_notes(tent_peer_t* peer) {
    while (!unsent_notes_.empty()) {
        const std::uint32_t s = unsent_notes_.back();
        int rc = tent_post_send(peer, &notes_[s], sizeof(WriteNote), spec_.priority, spec_.hint, kCheckCookie | s);
        if (rc == TENT_ERR_BUSY) return;
        unsent_notes_.pop_back();
        if (rc != TENT_OK) {
            // Unchecked: an error of the run.
            note_error("note of write " + std::to_string(notes_[s].seq) + ": " + tent_strerror(rc));
            answer_pending_[s] = 0;
            release_checked(s);
            continue;
        }
        note_pending_[s] = 1;
    }
}

void Stream::release_checked(std::uint32_t s) {
    if (note_pending_[s] || answer_pending_[s]) return;
    --inflight_;
    free_slots_.push_back(s);
}

void Stream::check_completion(const tent_completion_t& c) {
    const std::uint32_t i = static_cast<std::uint32_t>(c.cookie & 0x7fff);
    if (!checks_writes() || i >= spec_.depth) {
        note_error("unexpected completion (cookie " + std::to_string(c.cookie) + ")");
        return;
    }
    if (!(c.cookie & kAnswerCookie)) {  // a note sent
        if (!note_pending_[i]) {
            note_error("a note completed twice (slot " + std::to_string(i) + ")");
            return;
        }
        note_pending_[i] = 0;
        if (c.status != TENT_OK) {
            note_error("note of write " + std::to_string(notes_[i].seq) + ": " + tent_strerror(c.status));
            answer_pending_[i] = 0;  // none will come
        }
        release_checked(i);
        return;
    }
    // An answer, in buffer i: for the slot it names.
    const WriteNote a = answers_[i];
    (void)tent_post_recv(engine_, &answers_[i], sizeof(WriteNote), kCheckCookie | kAnswerCookie | i);
    if (c.status != TENT_OK || c.length != sizeof(WriteNote) || a.slot >= spec_.depth || !answer_pending_[a.slot] ||
        notes_[a.slot].seq != a.seq) {
        ++report_.mismatches;
        if (report_.check_detail.empty())
            report_.check_detail = "an answer of the server names no write under check (slot " +
                                   std::to_string(a.slot) + ", write " + std::to_string(a.seq) + ")";
        return;
    }
    answer_pending_[a.slot] = 0;
    if (a.result == 0) {
        ++verified_;
    } else {
        ++report_.mismatches;  // the server's detail says which
        last_seq_[a.slot] = kFailedSlot;  // its final check would repeat the finding
    }
    release_checked(a.slot);
}

void Stream::note_error(const std::string& what) {
    ++report_.errors;
    if (first_error_.empty()) first_error_ = what;
}

bool Stream::post(tent_peer_t* peer, const std::vector<std::uint8_t>& key, std::uint64_t limit) {
    const std::uint64_t size = spec_.size;
    send_notes(peer);
    while (!free_slots_.empty() && (!limit || posted_ < limit)) {
        std::uint32_t s = free_slots_.back();
        const std::uint64_t offset = spec_.reuse_buffer ? 0 : s * size;
        std::uint8_t* buf = spec_.local + offset;
        std::uint64_t remote_addr = spec_.remote + offset;
        std::uint64_t cookie = make_cookie(posted_, spec_.tag, s);
        if (spec_.check) {
            if (spec_.op == Op::Write) {
                // Every byte drawn from this write's number: any other write's bytes differ.
                stamp_seq(buf, size, posted_);
                fill_words(buf, size, posted_, 8);
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
            failed_seqs_.push_back(posted_ - 1);
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
    const bool check_it = checks_writes() && c.status == TENT_OK;
    if (check_it) {
        // The slot stays taken until the server has seen this write in place.
        notes_[s] = WriteNote{seq, s, 0};
        answer_pending_[s] = 1;
        unsent_notes_.push_back(s);
    } else {
        --inflight_;
        free_slots_.push_back(s);
    }
    if (c.status != TENT_OK) {
        note_error(std::string(op_name(spec_.op)) + " " + std::to_string(seq) + ": " + tent_strerror(c.status));
        failed_seqs_.insert(std::upper_bound(failed_seqs_.begin(), failed_seqs_.end(), seq), seq);
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
    for (std::uint64_t seq : slot_seq_)
        if (seq != kNoSeq) failed_seqs_.insert(std::upper_bound(failed_seqs_.begin(), failed_seqs_.end(), seq), seq);
}

} // namespace tent_bench
