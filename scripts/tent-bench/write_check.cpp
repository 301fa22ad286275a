#include "tent-bench/write_check.h"

#include <algorithm>

#include "tent-bench/pattern.h"

namespace tent_bench {

WriteVerifier::WriteVerifier(tent_engine_t* engine, const std::uint8_t* region, std::uint64_t size,
                             std::uint32_t depth, WriteNote* answers)
    : engine_(engine), region_(region), size_(size), depth_(depth), notes_(depth), answers_(answers) {}

bool WriteVerifier::start(std::string& error) {
    for (std::uint32_t i = 0; i < depth_; ++i) {
        int rc = tent_post_recv(engine_, &notes_[i], sizeof(WriteNote), kCheckCookie | i);
        if (rc != TENT_OK) {
            error = std::string("cannot post a receive buffer: ") + tent_strerror(rc);
            return false;
        }
    }
    return true;
}

void WriteVerifier::note_mismatch(const std::string& what) {
    ++mismatches_;
    if (detail_.empty()) detail_ = what;
}

void WriteVerifier::on_completion(const tent_completion_t& c) {
    const std::uint32_t i = static_cast<std::uint32_t>(c.cookie & 0x7fff);
    if (c.op != TENT_OP_RECV) {
        if (answers_in_flight_) --answers_in_flight_;
        if (c.status != TENT_OK) note_mismatch(std::string("an answer to the client failed: ") + tent_strerror(c.status));
        return;
    }
    if (c.status != TENT_OK || c.length != sizeof(WriteNote) || i >= depth_) {
        note_mismatch("a note of " + std::to_string(c.length) + " bytes arrived (" + tent_strerror(c.status) + ")");
    } else {
        const WriteNote note = notes_[i];
        WriteNote& answer = answers_[std::min<std::uint32_t>(note.slot, depth_ - 1)];
        answer = note;
        if (note.slot >= depth_) {
            answer.result = 1;
            note_mismatch("a note names slot " + std::to_string(note.slot));
        } else {
            const std::uint8_t* slot = region_ + note.slot * size_;
            std::size_t at = seq_matches(slot, size_, note.seq) ? find_word_mismatch(slot, size_, note.seq, 8) : 0;
            answer.result = at == size_ ? 0 : static_cast<std::uint32_t>(std::min<std::size_t>(at, 0xfffffffe) + 1);
            if (at == size_) {
                ++verified_;
            } else {
                note_mismatch("write " + std::to_string(note.seq) + " into slot " + std::to_string(note.slot) +
                              (at == 0 ? " is not there (the slot holds write " +
                                             std::to_string(read_seq(slot, size_)) + ")"
                                       : " differs at byte " + std::to_string(at)));
            }
        }
        int rc = tent_post_send(c.peer, &answer, sizeof answer, TENT_PRIORITY_MEDIUM, TENT_TRANSPORT_ANY,
                                kCheckCookie | (note.slot & 0x7fff));
        if (rc == TENT_OK)
            ++answers_in_flight_;
        else
            note_mismatch(std::string("cannot answer a note: ") + tent_strerror(rc));
    }
    if (i < depth_) (void)tent_post_recv(engine_, &notes_[i], sizeof(WriteNote), kCheckCookie | i);
}

} // namespace tent_bench
