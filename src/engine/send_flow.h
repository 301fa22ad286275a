// Flow control of two-sided messages: the receiver grants a window, the
// sender keeps within it. Pure state, no I/O, no clock: the engine's
// progress thread owns one SendWindow and one CreditGrant per connection.
//
// The receiver holds a message from the arrival of its first fragment until
// the application takes it (a receive callback or a posted buffer);
// fragments of later messages that arrive first wait for the gap. Without a
// bound, a sender whose sends complete as soon as the receiving rail has
// them fills the receiver's memory: while one fragment waits for its
// replay after a rail fault, or while the application posts no buffers.
// So:
//  - each side announces its window (the send_window knob) in a
//    wire::SendCredit{delivered, window} when the connection starts, and
//    announces again whenever the application has taken a quarter of the
//    window's weight since the last announcement (CreditGrant);
//  - the sender starts a message only while the messages it started beyond
//    the last `delivered` it heard of weigh less than the window; the next
//    ones wait, in order, for a credit (SendWindow): never dropped, never
//    failed (the receiver is alive, only slow);
//  - a message weighs its length plus kMessageOverhead, the receiver's
//    bookkeeping, so that empty messages count too.
// The receiver therefore holds less than window + one message (the newest
// may be of any size) from each peer. Deadlock-free: a sender that waits
// has started at least a window's weight beyond its last credit; once the
// application took those messages the receiver owes a credit (a quarter is
// due), and sends it.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>

namespace tent {

// What one message costs the receiver beyond its bytes (the reassembler's
// map entry, fragment set and buffer header): a stated constant.
inline constexpr std::uint64_t kMessageOverhead = 256;

inline std::uint64_t message_weight(std::uint64_t length) { return length + kMessageOverhead; }

// The sender's side, per connection.
class SendWindow {
public:
    // Whether the next message may start now: the messages started beyond
    // the last credit weigh less than the window (before the first credit
    // the window is unknown: one message at a time).
    bool may_start() const { return outstanding_.empty() || outstanding_weight_ < window_; }
    // Message msg_seq (each one greater than the last) of length bytes started.
    void started(std::uint64_t msg_seq, std::uint64_t length);
    // Message msg_seq never went out (its planning failed): forgotten, when
    // it is the newest started, so that its number can be given to the next
    // message (the peer delivers numbers without gaps: a number taken and
    // never sent would hold up every later message) and its weight does not
    // close the window for good. False, and nothing changes, otherwise.
    bool withdraw(std::uint64_t msg_seq);
    // The peer's SendCredit: every message up to delivered was taken there.
    void credited(std::uint64_t delivered, std::uint64_t window);

    std::uint64_t window() const { return window_; }
    std::uint64_t outstanding_weight() const { return outstanding_weight_; }
    std::size_t outstanding_messages() const { return outstanding_.size(); }

private:
    std::uint64_t window_ = 0;  // 0: no credit heard yet
    std::uint64_t outstanding_weight_ = 0;
    std::deque<std::pair<std::uint64_t, std::uint64_t>> outstanding_;  // (msg_seq, weight), in order
};

// The receiver's side, per connection.
class CreditGrant {
public:
    explicit CreditGrant(std::uint64_t window) : window_(window ? window : 1) {}
    std::uint64_t window() const { return window_; }
    // The application took a message of length bytes.
    void released(std::uint64_t length) { unreported_ += message_weight(length); }
    // A credit is owed: a quarter of the window (at least one message) taken
    // since the last one.
    bool due() const { return unreported_ > 0 && unreported_ >= window_ / 4; }
    // A credit was sent.
    void reported() { unreported_ = 0; }

private:
    std::uint64_t window_;
    std::uint64_t unreported_ = 0;
};

} // namespace tent
