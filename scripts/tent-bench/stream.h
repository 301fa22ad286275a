// One stream of the client's operations: depth slots of size bytes in the
// client's buffer, each against its own slot of the server's region (write,
// read) or the server's receive path (send). The stream posts into free
// slots, takes its completions, and times each operation from post to
// completion. The measured stream and the optional background stream are
// two of these on the same engine; the cookie tells their completions apart.
#ifndef TENT_BENCH_STREAM_H
#define TENT_BENCH_STREAM_H

#include <tent/tent.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "tent-bench/options.h"
#include "tent-bench/report.h"
#include "tent-bench/run.h"
#include "tent-bench/write_check.h"

namespace tent_bench {

using Clock = std::chrono::steady_clock;

// A slot whose last write failed: its content is undefined.
constexpr std::uint64_t kFailedSlot = kNoSeq - 1;

// Cookie: sequence number << 16 | stream tag << 15 | slot (kMaxDepth fits in 15 bits).
constexpr std::uint64_t make_cookie(std::uint64_t seq, unsigned tag, std::uint32_t slot) {
    return (seq << 16) | (std::uint64_t(tag & 1) << 15) | slot;
}
constexpr unsigned cookie_tag(std::uint64_t cookie) { return static_cast<unsigned>((cookie >> 15) & 1); }
constexpr std::uint32_t cookie_slot(std::uint64_t cookie) { return static_cast<std::uint32_t>(cookie & 0x7fff); }
constexpr std::uint64_t cookie_seq(std::uint64_t cookie) { return cookie >> 16; }

struct StreamSpec {
    Op op = Op::Write;
    std::uint64_t size = 0;
    std::uint32_t depth = 1;
    tent_priority_t priority = TENT_PRIORITY_MEDIUM;
    tent_transport_t hint = TENT_TRANSPORT_ANY;
    bool check = false;
    bool reuse_buffer = false;       // every slot at offset 0 (not with check)
    unsigned tag = 0;                // 0 the measured stream, 1 the background
    std::uint8_t* local = nullptr;   // depth * size registered bytes (size if reuse_buffer)
    std::uint64_t remote = 0;        // the server's slot 0 of this stream
    WriteNote* notes = nullptr;      // checked writes: depth notes in registered memory (write_check.h)
};

class Stream {
public:
    explicit Stream(const StreamSpec& spec);

    // Posts into free slots until none is left, the engine is busy, or
    // limit operations have been posted (0: no limit). Returns false once
    // the peer is unreachable (nothing more can be posted).
    bool post(tent_peer_t* peer, const std::vector<std::uint8_t>& key, std::uint64_t limit);
    // Checked writes: posts the buffers for the server's answers
    // (write_check.h); once per run, before the first post.
    bool start_checks(tent_engine_t* engine, std::string& error);
    // A completion of the write check's own messages (kCheckCookie set).
    void check_completion(const tent_completion_t& c);
    // Posts the notes of checked writes that completed (also after the
    // last post of the run).
    void send_notes(tent_peer_t* peer);
    // A completion of this stream (cookie_tag matches); now is when it was
    // polled. A completion of no operation in flight (a second completion
    // of one, or a stranger) is counted as an error.
    void complete(const tent_completion_t& c, Clock::time_point now);

    std::uint64_t posted() const { return posted_; }
    // Operations not over: in flight, or (checked writes) awaiting their check.
    std::uint64_t inflight() const { return inflight_; }
    // Writes the server found in place (checked writes).
    std::uint64_t verified() const { return verified_; }
    // The sequence number of the last successful write into each slot
    // (kNoSeq: never written, kFailedSlot: the last write failed).
    const std::vector<std::uint64_t>& last_seq() const { return last_seq_; }
    const std::string& first_error() const { return first_error_; }
    // The sequence numbers of the operations that failed, in order: a
    // failed send may or may not have arrived, the others must have.
    const std::vector<std::uint64_t>& failed_seqs() const { return failed_seqs_; }
    Clock::time_point first_post() const { return first_post_; }
    Clock::time_point last_completion() const { return last_completion_; }
    Report& report() { return report_; }
    // Counts what is still in flight as failed (the run gave up on it at
    // now), and the time since the last completion as a gap.
    void abandon(const std::string& why, Clock::time_point now);

private:
    void note_error(const std::string& what);

    StreamSpec spec_;
    Report report_;
    std::vector<std::uint32_t> free_slots_;
    std::vector<Clock::time_point> posted_at_;
    std::vector<std::uint64_t> last_seq_;
    std::vector<std::uint64_t> slot_seq_;  // the operation in flight in each slot, kNoSeq when free
    // Checked writes: a completed write's slot waits for its note to be
    // sent and answered (write_check.h) before it is free again.
    bool checks_writes() const { return spec_.op == Op::Write && spec_.notes != nullptr; }
    void release_checked(std::uint32_t s);
    tent_engine_t* engine_ = nullptr;
    WriteNote* notes_ = nullptr;         // spec's: a send's source must be registered
    std::vector<WriteNote> answers_;
    std::vector<std::uint32_t> unsent_notes_;   // slots whose note is still to be posted
    std::vector<std::uint8_t> note_pending_;    // per slot: note posted, its send not completed
    std::vector<std::uint8_t> answer_pending_;  // per slot: answer not received
    std::uint64_t posted_ = 0;
    std::uint64_t inflight_ = 0;
    std::uint64_t verified_ = 0;
    std::string first_error_;
    std::vector<std::uint64_t> failed_seqs_;
    Clock::time_point first_post_{};
    Clock::time_point last_completion_{};
};

} // namespace tent_bench

#endif
