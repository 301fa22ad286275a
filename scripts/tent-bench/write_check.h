// --check for writes: every write is verified at its target before its slot
// is written again. A write carries its sequence number and a pattern drawn
// from it (pattern.h), so a lost, stale, duplicated or reordered write does
// not compare equal. Once it completes, the client sends the server a note
// (slot, sequence number); the server compares the slot's bytes in its
// region with what that write put there and answers with the result; the
// slot takes its next write only once the answer is in.
#ifndef TENT_BENCH_WRITE_CHECK_H
#define TENT_BENCH_WRITE_CHECK_H

#include <tent/tent.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tent_bench {

// A note (client to server) and its answer (server to client), one message each.
struct WriteNote {
    std::uint64_t seq = 0;
    std::uint32_t slot = 0;
    std::uint32_t result = 0;  // answer: 0 the slot holds the write, else 1 + the first differing byte (capped)
};
static_assert(sizeof(WriteNote) == 16);

// Cookies of the check's own messages, apart from the stream's operations
// (whose sequence numbers stay far below bit 61): the low 15 bits are the slot.
constexpr std::uint64_t kCheckCookie = 1ull << 63;
constexpr std::uint64_t kAnswerCookie = 1ull << 62;  // with kCheckCookie: a buffer for an answer

// The server's side: receives the notes and answers them.
class WriteVerifier {
public:
    // answers: depth notes in registered memory (a send's source must be:
    // an RDMA rail reads it with the registration's key).
    WriteVerifier(tent_engine_t* engine, const std::uint8_t* region, std::uint64_t size, std::uint32_t depth,
                  WriteNote* answers);
    // Posts one receive buffer per slot.
    bool start(std::string& error);
    // A completion from tent_poll: a note (verify and answer) or an answer sent.
    void on_completion(const tent_completion_t& c);

    std::uint64_t verified() const { return verified_; }
    std::uint64_t mismatches() const { return mismatches_; }
    const std::string& detail() const { return detail_; }
    std::uint64_t answers_in_flight() const { return answers_in_flight_; }

private:
    void note_mismatch(const std::string& what);

    tent_engine_t* engine_;
    const std::uint8_t* region_;
    std::uint64_t size_;
    std::uint32_t depth_;
    std::vector<WriteNote> notes_;    // receive buffers, one per slot
    WriteNote* answers_;              // one per slot: a slot has one write under check at a time
    std::uint64_t verified_ = 0, mismatches_ = 0, answers_in_flight_ = 0;
    std::string detail_;
};

} // namespace tent_bench

#endif
