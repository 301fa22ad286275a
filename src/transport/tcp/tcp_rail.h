// TcpRail: a Rail over one connected, non-blocking TCP socket, speaking
// tent's wire frames. One object is both ends of the rail: the initiator of
// the operations it posts and the target of the operations its peer posts.
//
// Initiator: post() encodes one frame per op (Write, ReadRequest, Send,
// Probe) into an outgoing queue flushed with sendmsg (partial writes keep
// their place); Write and Send data go from the op's buffer to the socket
// without a copy. Each op gets a rail-local sequence number and completes
// exactly once: Write and Send when the peer's Ack arrives, Read when the
// Ack (or Nack) that follows its ReadResponse arrives, Probe with its
// ProbeReply (outcome ProbeAnswered); a Nack completes it with
// RailOutcome::RemoteAccess and the peer's reason (or RetryExceeded when
// the peer had no receive handler for a Send).
//
// An Ack with nothing else to send waits one progress() turn (or the next
// post, whose sendmsg then carries it): the answer to a message leaves
// first, and acks of messages arriving meanwhile merge into one (they are
// cumulative). A rail holding one is not idle and wants to write, so no
// driver sleeps on it.
//
// Receiving: one recv() reads as much as is there into the receive buffer
// (frames and their data together); a short read ends the rail's reading
// for the turn (no recv() that could only fail). The data of a large Write
// or ReadResponse whose destination checks out goes from the socket
// straight into its memory (tcp_rail_direct.cpp), or from the receive
// buffer in one copy when a read took the whole frame.
//
// Target: an incoming Write or ReadRequest is checked against the
// registration the RegionLookup returns for its key (key, bounds, access
// flags: wire::check_remote_access) before memory is touched; a violation
// answers a Nack and touches nothing. A ReadResponse's data goes to the
// socket straight from the region, without a copy, and is followed by an
// Ack of the read; the region is looked up again before every sendmsg, and
// when the program deregistered it meanwhile, zeros take the place of the
// rest and a Nack (RemoteAccess) follows instead: the initiator's read
// fails, as on an HCA whose MR went away under a read. Every look-up and the
// copy it allows (sendmsg, recv, memcpy) happen under the registry's region
// use lock (guard_regions_with), so once deregistration returns no byte of
// the region moves. (ASan checks a
// sendmsg's buffers after the call, when a reader in the same process may
// have completed and freed them: README, "Sanitizers".) An incoming Send
// goes to progress()'s on_message callback, then is acked.
//
// Send payloads carry the op's send_header in front: u16 header length
// (little-endian), header bytes, payload. Hence max_op_length() is the wire
// data maximum less kSendHeaderReserve.
//
// Failure: a peer that closes or resets the socket, stays unheard for
// tcp_silence_intervals heartbeats (silence_detector.h), or sends a frame
// this side rejects ("tcp frame rejected") closes the rail. Every
// outstanding op then completes -- the oldest with the error
// (RetryExceeded, or Timeout for silence), the others Flushed, as a failed
// QP reports them; outstanding probes complete ProbeFailed -- and post()
// returns Code::RailDown from then on. close() (local) and fail() (the
// engine declares the rail failed) flush them all.
//
// Failover hooks (rail.h): broken() once the rail is closed, for whatever
// reason. rearm() gives a closed rail a new socket to the same peer
// (tcp_rail_rearm.cpp, tcp_redial.h): the side that connected it dials
// again (Busy until the peer answered the Hello), the side that accepted
// it resets at once and takes the next socket its provider accepts for it;
// the engine's re-arm handshake orders the two sides and probes the rail
// before it carries traffic again. Both ends start afresh (sequence
// numbers, queues, silence). A rail built without a TcpRedial (tests) is
// not rearmable and rearm() stays Unsupported. lossy() is true while the
// connection's retransmission ratio over the last seconds is above
// tcp_lossy_retransmit_percent (loss_detector.h): the rail works but
// should be used last.
//
// Waiting: wait_fd() is the socket (readable on input, and on EOF after a
// close so the failure completions are collected). A caller that epolls it
// itself must also wait for writability while wants_write() and wake up by
// next_timer(), as the engine's drive loop does.
//
// The class is defined in tcp_rail.cpp (construction, progress, closing) and
// one file per concern beside it: tcp_rail_initiator.cpp, tcp_rail_receive.cpp,
// tcp_rail_target.cpp, tcp_rail_acks.cpp, tcp_rail_timers.cpp,
// tcp_rail_direct.cpp.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/node_spares.h"
#include "common/status.h"
#include "transport/rail.h"
#include "transport/region_use_lock.h"
#include "transport/tcp/atomic_ledger.h"
#include "transport/tcp/loss_detector.h"
#include "transport/tcp/region_lookup.h"
#include "transport/tcp/silence_detector.h"
#include "transport/tcp/tcp_rail_params.h"
#include "transport/tcp/tcp_redial.h"
#include "common/unique_fd.h"
#include "wire/frame.h"
#include "wire/protocol.h"

namespace tent::tcp {

// Bytes reserved in a Send frame for the header length and header.
inline constexpr std::uint64_t kSendHeaderReserve = 1024;
inline constexpr std::uint64_t kMaxSendHeaderLength = kSendHeaderReserve - 2;

struct TcpRailIdentity {
    std::uint64_t connection_id = 0; // from the Hello exchange (non-zero)
    std::uint16_t rail_id = 0;
    std::string name;                // e.g. "tcp 127.0.0.1->127.0.0.2:7000"
};

class TcpRail final : public Rail {
public:
    // fd: a connected socket whose Hello exchange is done. It is made
    // non-blocking with TCP_NODELAY and params' buffer sizes.
    // redial: how rearm() gets a new socket (none: the rail cannot be re-armed).
    static Result<std::unique_ptr<TcpRail>> create(UniqueFd fd, TcpRailIdentity identity, TcpRailParams params,
                                                   RegionLookup regions, const Clock& clock, TcpRedial redial = {});
    ~TcpRail() override;
    TcpRail(const TcpRail&) = delete;
    TcpRail& operator=(const TcpRail&) = delete;

    TransportKind kind() const override { return TransportKind::Tcp; }
    const std::string& name() const override { return identity_.name; }
    std::uint64_t max_op_length() const override { return wire::kMaxDataLength - kSendHeaderReserve; }
    // Reads go in short pieces: when the target still copied a read's
    // data, one piece was on the wire while the next was copied (NetPIPE at
    // 1 MiB over btl tent and two TCP rails between namespaces: 22.3 Gbit/s
    // in 128 KiB reads, 16.5 in 256 KiB, 9.5 in one).
    std::uint64_t max_read_length() const override { return kReadPiece; }
    static constexpr std::uint64_t kReadPiece = 128 * 1024;
    Status post(const RailOp& op) override;
    void begin_posts() override { holding_posts_ = true; }
    void end_posts() override;
    void progress(std::vector<RailCompletion>& done,
                  const std::function<void(const RailMessage&)>& on_message) override;
    // The dial's socket while re-arming; -1 while waiting for an accepted one.
    int wait_fd() const override { return dial_ ? dial_->fd() : fd_.get(); }
    bool broken() const override { return !open_; }
    // Closes now: every outstanding op completes Flushed at the next
    // progress() (the engine has already judged the failure), the peer
    // sees the connection end. Abandons a dial under way (rearm()).
    Status fail() override;
    bool lossy() const override { return loss_.lossy(); }
    Status rearm() override;
    bool rearmable() const override { return redial_.possible(); }
    // Every TCP target executes atomics through its provider's ledger (or,
    // built without one, refuses them unexecuted).
    bool atomics_deduplicated() const override { return true; }
    // The ledger the peer's atomics are executed through (the provider's,
    // shared by its rails); without one they are refused.
    // The rail's connection keeps its results there while the rail exists.
    void use_atomic_ledger(std::shared_ptr<AtomicLedger> ledger);
    // Held shared while the rail looks a region up and moves its bytes
    // (sendmsg, recv, a copy), so that a deregistration waits for it; none:
    // the caller keeps its regions registered while the rail runs.
    void guard_regions_with(std::shared_ptr<const RegionUseLock> lock) { region_lock_ = std::move(lock); }

    bool is_open() const { return open_; }
    // Why the rail closed (ok while open).
    const Status& close_reason() const { return close_reason_; }
    // Closes locally: outstanding ops complete Flushed at the next progress().
    void close();

    // Outgoing bytes are queued: wait for the socket to become writable.
    bool wants_write() const override { return (dial_ && dial_->connecting()) || (open_ && fd_.valid() && tx_bytes_ > 0); }
    // Unsent acks only (flush_answers holds them for a turn).
    bool holds_answer() const override { return open_ && fd_.valid() && !tx_.empty() && tx_acks_only_; }
    void send_queued() override { flush(true); }
    // Nothing to send, collect, time or finish: only bytes arriving give
    // progress() work (receive() left no complete frame in the buffer).
    bool idle_unless_readable(TimePoint now) const override {
        return open_ && fd_.valid() && !dial_ && !direct_ && !frames_left_ && tx_.empty() && ready_.empty() &&
               now < next_timer() && (!kernel_counters_ || now < next_loss_sample_);
    }
    bool input_waiting() const override { return open_ && fd_.valid() && frames_left_; }
    Duration silent_for(TimePoint now) const override { return silence_.silent_for(now); }
    // Completions are waiting to be collected by progress().
    bool has_completions() const { return !ready_.empty(); }
    // When progress() must run even without socket activity (heartbeat due,
    // a look at the kernel's counters of a silent peer, or the silence limit
    // reached). While bytes are queued no heartbeat is added (it would wait
    // behind them), so a full socket does not spin.
    TimePoint next_timer() const override {
        if (!open_ || !fd_.valid()) return TimePoint::max();
        return tx_.empty() ? silence_.next_deadline() : silence_.next_check_deadline();
    }
    std::size_t outstanding() const { return pending_.size() + probes_.size(); }

private:
    struct Pending {
        std::uint64_t cookie = 0;
        RailOpcode opcode = RailOpcode::Write;
        void* local = nullptr;
        std::uint64_t length = 0;
        std::uint64_t remote_addr = 0;
        std::uint32_t rkey = 0;
        std::uint32_t local_key = 0;  // the local registration's TCP key (RailOp::lkey), 0: unchecked
        TimePoint posted{};
        std::uint64_t order = 0; // posting order, for failing the oldest first
        // Its buffer was deregistered before all its data was sent: zeros
        // went in its place (withhold_gone_data), and it fails when acked.
        // A read's: its data was not placed.
        bool data_withheld = false;
        // A read whose ReadResponse arrived: the Ack or Nack behind it completes it.
        bool response_in = false;
    };

    TcpRail(UniqueFd fd, TcpRailIdentity identity, TcpRailParams params, RegionLookup regions, const Clock& clock,
            TcpRedial redial);

    // Re-arming (tcp_rail_rearm.cpp): starts over on a new socket.
    void restart(UniqueFd fd);
    // Accepting side, re-armed: takes the newest socket the provider accepted.
    void take_accepted_socket();

    Status queue_frame(const wire::Frame& frame);
    // TAIL_KEY: the registration TAIL lies in (0: not checked), SEQ: the
    // frame's op (pending_), for withhold_gone_data.
    void queue_bytes(std::vector<std::uint8_t> head, std::span<const std::uint8_t> tail, bool ok_ack = false,
                     std::uint32_t tail_key = 0, std::uint64_t seq = 0);
    // A ReadResponse whose data (TAIL) is sent from the target region of
    // key REGION_KEY, then the Ack of the peer's read SEQ.
    void queue_read_response(std::vector<std::uint8_t> head, std::span<const std::uint8_t> tail,
                             std::uint32_t region_key, std::uint64_t seq);
    // Sends what is queued as far as the socket takes it now. An error
    // closes the rail with a warning, unless leaving: the engine is going
    // away, and a peer that left first is no fault.
    void flush(bool leaving = false);
    // End of a progress() turn: flushes, except that Acks alone wait one turn.
    void flush_answers();
    void receive(const std::function<void(const RailMessage&)>& on_message);
    // Handles every complete frame in the receive buffer; need: bytes the
    // next frame still lacks (0 once a direct receive took it over). False
    // when a frame closed the rail.
    bool frame_buffered(const std::function<void(const RailMessage&)>& on_message, std::size_t& need);
    void check_timers(TimePoint now);
    // Reads TCP_INFO when the loss detector or the silence detector wants it.
    void sample_kernel_counters(TimePoint now);

    // Frame handlers; a false return means the frame was rejected (the rail
    // is closed by then).
    bool handle(const wire::Frame& frame, const std::function<void(const RailMessage&)>& on_message);
    bool handle_write(const wire::Frame& f, const wire::Write& w);
    bool handle_read_request(const wire::Frame& f, const wire::ReadRequest& r);
    bool handle_send(const wire::Frame& f, const wire::Send& s,
                     const std::function<void(const RailMessage&)>& on_message);
    bool handle_ack(const wire::Frame& f, const wire::Ack& a);
    bool handle_nack(const wire::Frame& f, const wire::Nack& n);
    bool handle_read_response(const wire::Frame& f, const wire::ReadResponse& r);
    // The program deregistered the local buffer of an op while it was in
    // flight: a read's data (or an atomic's result) must not be placed,
    // and a write's must not be sent (withhold_gone_data): the memory may
    // be freed or reused. An HCA refuses both as well, once the MR is gone.
    bool local_gone(const Pending& p) const;
    // Whether [addr, addr + length) lies in the region registered under
    // KEY with RIGHTS (wire::check_remote_access): ok, or RemoteAccess.
    Status region_access(std::uint32_t key, std::uint64_t addr, std::uint64_t length, std::uint16_t rights) const;
    void fail_local_gone(const Pending& p);
    bool handle_atomic(const wire::Frame& f, const wire::Atomic& a);
    bool handle_atomic_response(const wire::Frame& f, const wire::AtomicResponse& r);
    bool handle_probe_reply(const wire::ProbeReply& r);
    bool check_incoming_seq(const wire::Frame& f);

    void complete(const Pending& p, RailOutcome outcome, Status status);
    void reject_frame(const std::string& reason);
    // Closes the rail: the oldest outstanding op gets `first`, the rest Flushed.
    void close_with(Code code, const std::string& reason, RailOutcome first);
    std::string describe(const Pending& p) const;
    // A frame of this rail's connection and rail id.
    wire::Frame frame_for(std::uint64_t seq, wire::FrameBody body) const;

    UniqueFd fd_;
    TcpRailIdentity identity_;
    TcpRailParams params_;
    RegionLookup regions_;
    std::shared_ptr<const RegionUseLock> region_lock_;  // none: not guarded
    std::shared_ptr<AtomicLedger> ledger_;
    const Clock& clock_;
    SilenceDetector silence_;
    LossDetector loss_;
    TimePoint next_loss_sample_{};
    bool kernel_counters_ = true; // false once TCP_INFO lacks them (old kernel)
    bool open_ = true;
    Status close_reason_;
    TcpRedial redial_;
    std::optional<TcpDial> dial_;  // connecting side: the dial under way

    // Initiator state.
    std::uint64_t next_seq_ = 1;
    std::uint64_t next_nonce_ = 1;
    std::uint64_t next_order_ = 0;
    std::map<std::uint64_t, Pending> pending_; // by sequence number (Write, Read, Send, atomics)
    NodeSpares<decltype(pending_)> pending_nodes_;
    std::map<std::uint64_t, Pending> probes_;  // by nonce
    std::vector<RailCompletion> ready_;        // handed out by the next progress()

    // Target state: the peer's ops must arrive in sequence.
    std::uint64_t expected_peer_seq_ = 1;

    // An outgoing frame: encoded bytes, then data sent straight from
    // memory: a Write's or Send's from the op's local buffer, which the
    // engine keeps valid until the op completes; a ReadResponse's from the
    // target region, followed by its trailer.
    struct TxFrame {
        std::vector<std::uint8_t> head;
        std::span<const std::uint8_t> tail;
        std::uint32_t tail_key = 0;  // the registration the tail lies in; 0: not checked
        std::uint64_t seq = 0;       // a write's own sequence, or the peer's read a response answers
        bool answers_read = false;   // tail_key is a target region's (read access), seq the peer's read
        std::vector<std::uint8_t> filler;   // zeros standing in for a deregistered tail
        std::vector<std::uint8_t> trailer;  // a ReadResponse's Ack, or Nack once its data was withheld
        std::size_t size() const { return head.size() + tail.size() + trailer.size(); }
    };
    // The program deregistered the buffer of a write whose frame is
    // queued, maybe partly sent: the frame's header has promised
    // its bytes, and the memory may be unmapped (sendmsg would fail with
    // EFAULT and close the rail) or reused (the program's new bytes would
    // land at the target). Zeros go in its place, and the op fails as the
    // program's doing; a write that fails on an HCA leaves its target range
    // undefined too. The same for the region a ReadResponse is sent from,
    // deregistered by the target program: the trailer becomes a Nack.
    void withhold_gone_data(TxFrame& frame);
    // Outgoing frames; the front one may be partly sent.
    std::deque<TxFrame> tx_;
    // Buffers of frames sent, for the next frames' bytes: a message then
    // costs no allocation for its frame, its header or its peer's ack.
    std::vector<std::vector<std::uint8_t>> spare_bytes_;
    std::vector<std::uint8_t> take_bytes();  // empty, maybe with room
    void give_back_bytes(std::vector<std::uint8_t>& bytes);
    std::size_t tx_front_sent_ = 0;
    std::size_t tx_bytes_ = 0;
    // Every frame in tx_ is an unsent Ok Ack (meaningful while tx_ is not
    // empty): the queue may wait for the next post or turn (flush_answers).
    bool tx_acks_only_ = false;
    // Such acks already waited one progress() turn: the next one sends them.
    bool acks_held_ = false;
    // Inside begin_posts()/end_posts(): post() queues, end_posts() flushes.
    bool holding_posts_ = false;

    // Read data this receive() answered (ReadResponses queued): past
    // kAnswerBudget the rest waits for the next turn, so that one rail's
    // requests never hold the turn from the others' for long.
    std::uint64_t answered_ = 0;
    bool frames_left_ = false;  // complete frames left in rx_ for the next turn
    // Incoming stream: bytes [rx_begin_, rx_end_) of rx_ are not yet framed.
    std::vector<std::uint8_t> rx_;
    std::size_t rx_begin_ = 0;
    std::size_t rx_end_ = 0;

    // A large Write or ReadResponse whose checks passed on its first bytes:
    // the rest of its data is received straight into the memory it names
    // (tcp_rail_direct.cpp) instead of through rx_ and a copy.
    struct DirectReceive {
        bool write = false;           // a Write (else a ReadResponse)
        std::uint64_t seq = 0;
        std::uint32_t rkey = 0;       // Write: the region, checked again before every read
        std::uint64_t remote_addr = 0;
        std::uint64_t length = 0;
        std::uint8_t* dest = nullptr; // the next byte's place
        std::uint64_t left = 0;       // bytes still on the wire
        // The region went away: the rest is dropped, then a Write gets a
        // Nack and a read fails (local_gone()).
        bool refused = false;
    };
    std::optional<DirectReceive> direct_;
    // The large Write or ReadResponse at the front of buffered, when its
    // fixed fields and destination check out (left = its whole data), with
    // the number of those fixed fields' bytes; else nullopt.
    std::optional<DirectReceive> direct_target(std::span<const std::uint8_t> buffered, std::size_t& fixed) const;
    // Begins a direct receive of the frame at the front of buffered (not
    // all of it here); false leaves the frame to the buffered path.
    bool start_direct(std::span<const std::uint8_t> buffered);
    // The same frame all buffered: its data copied once, to its place, and
    // the frame answered; false leaves it to the buffered path.
    bool take_buffered_direct(std::span<const std::uint8_t> frame);
    // Reads into the direct receive's memory; false: stop reading this turn.
    // drained: the read emptied the socket.
    bool receive_direct(bool& drained);
    // A read posted on this rail whose data has not arrived yet.
    bool read_data_due() const;
    void finish_direct();
    // A recv() that returned n <= 0: true to try again (EINTR), else the
    // turn ends (no data now, or the rail closed).
    bool recv_failed(ssize_t n);
    // Bytes arrived: the silence detector hears the peer.
    void note_received();
};

} // namespace tent::tcp
