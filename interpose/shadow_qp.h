// A reliable-connected queue pair of the application that the interposer
// may carry over tent. The application keeps its own (real) QP: its number,
// state and attributes are what the program sees and exchanges. Once the
// peer behind it is found to run tent, the QP's work goes over tent's
// engine instead of the real QP; otherwise the held-back work is handed to
// the real QP and everything passes through.
#pragma once

#include <infiniband/verbs.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "memory.h"
#include "qp_ex.h"
#include "send_pool.h"
#include "tent/tent.h"

namespace tent::interpose {

// One tent call to make for a work request, prepared under the state mutex
// and made without it (tent's threads take it in on_message). It holds a
// copy of the remote key: the peer's announcements may be replaced
// meanwhile.
struct TentCall {
    enum Kind { Message, Write, Read, Atomic } kind = Message;
    std::uint64_t cookie = 0;
    const void* local = nullptr;
    std::size_t length = 0;
    std::uint8_t key[TENT_REMOTE_KEY_SIZE] = {};
    std::uint64_t remote_addr = 0;
    // Atomic: the verb's operation and operands.
    tent_atomic_op_t atomic_op = TENT_ATOMIC_FETCH_ADD;
    std::uint64_t compare_add = 0;
    std::uint64_t swap = 0;
};

// Candidate: created, not yet at RTR. Pending: looking for the peer (work
// held back). Tent: carried by tent. Plain: passes through.
enum class QpMode { Candidate, Pending, Tent, Plain };

// A posted receive: its SGEs inline (no allocation per receive) unless
// there are more than kInline of them.
struct HeldRecv {
    static constexpr int kInline = 4;
    std::uint64_t wr_id = 0;
    int num_sge = 0;
    ibv_sge inline_sge[kInline]{};
    std::vector<ibv_sge> more;  // all of them, when num_sge > kInline

    HeldRecv() = default;
    HeldRecv(const ibv_recv_wr& wr) : wr_id(wr.wr_id), num_sge(wr.num_sge) {
        if (num_sge <= kInline) std::copy(wr.sg_list, wr.sg_list + num_sge, inline_sge);
        else more.assign(wr.sg_list, wr.sg_list + num_sge);
    }
    const ibv_sge* sge() const { return num_sge <= kInline ? inline_sge : more.data(); }
    ibv_sge* sge() { return num_sge <= kInline ? inline_sge : more.data(); }
};

// A shared receive queue of an adopted context. While every queue pair
// attached to it is carried (or still looking for its peer), the
// receives posted to it wait here and serve the carried queue pairs'
// messages in arrival order; once a queue pair on it passes through (a
// peer without tent, a UD queue pair), they go to the real SRQ and so does
// every later one (plain).
struct ShadowSrq {
    ibv_srq* srq = nullptr;
    bool plain = false;
    std::deque<HeldRecv> recvs;
    // The program's armed IBV_SRQ_LIMIT (0: none): when fewer receives than
    // this are left, IBV_EVENT_SRQ_LIMIT_REACHED is raised and it disarms,
    // as an adapter does with the receives it holds.
    std::uint32_t limit = 0;
};

// A send work request held back while the peer is looked for, deep-copied
// (inline data too) so it can be replayed on the real QP or sent by tent.
struct HeldSend {
    ibv_send_wr wr{};
    std::vector<ibv_sge> sge;
    std::vector<std::uint8_t> inline_data;
};

// A message from the peer not yet matched with a posted receive. A notice
// of an RDMA write with immediate data carries no bytes, only its length.
struct Arrival {
    std::uint32_t imm = 0;
    bool has_imm = false;
    bool write_notice = false;
    std::uint32_t write_length = 0;
    std::vector<std::uint8_t> data;
};

// What a work request's one-sided parts do to the peer's memory, for
// keeping them in the order an adapter keeps (interpose_ordering).
enum class Access : std::uint8_t { None, Read, Modify };  // Modify: a write or an atomic

// One posted send work request, in posting order, until it completes. Its
// one-sided parts (RDMA write/read, one per SGE) go at once, unless they
// must wait for the QP's earlier ones (ShadowQp::ordered, a fence); its message
// (a send, or the notice of a write with immediate data) goes only when
// every one-sided part posted before it, its own included, has completed,
// so the peer never sees a message before the data written ahead of it.
// Small messages that wait while the QP has kMessageWindow tent messages
// in flight go together, in order, as one tent message (a batch) when one
// of those completes: tent's cost is per message, not per byte.
struct SendSlot {
    std::uint64_t wr_id = 0;
    bool signaled = false;
    ibv_wc_status status = IBV_WC_SUCCESS;
    ibv_wc_opcode opcode = IBV_WC_SEND;
    std::uint32_t byte_len = 0;
    int onesided_parts = 0;       // posted to tent (or held), not yet completed
    Access access = Access::None;
    bool fenced = false;  // IBV_SEND_FENCE
    // Its one-sided parts while they wait for the QP's earlier ones
    // (interpose_ordering); posted, in posting order, once those completed.
    std::vector<TentCall> held_parts;
    bool message_waiting = false;  // built, not yet posted
    bool message_inflight = false;
    PooledBuffer message;
    std::size_t message_length = 0;
    PooledBuffer inline_copy;  // an inline write's data (its one-sided parts send from it)
    PooledBuffer batch;        // the batch this slot's message opened, if any
    std::uint64_t batch_last = 0;  // the sequence number of the batch's last slot
    bool done() const { return onesided_parts == 0 && !message_waiting && !message_inflight; }
};

struct ShadowQp {
    ibv_qp* qp = nullptr;
    std::uint32_t token = 0;  // names this QP in tent messages from the peer
    bool sig_all = false;

    // Serialises posting to tent (held across the tent calls; never taken by
    // tent's threads), so the peer sees messages in posting order.
    std::mutex post_mutex;
    // The tent calls a post or a pump makes (guarded by post_mutex): kept
    // from one to the next, which then allocates no list.
    std::vector<TentCall> calls;

    // ibv_wr_* work requests being built (the program's posting thread only).
    WrBuilder builder;

    // Everything below is guarded by the interposer's state mutex.
    QpMode mode = QpMode::Candidate;
    bool failed = false;  // the QP is in the error state (tent lost the peer, or the program put it there)
    // Failed while tent operations of its work requests were in flight:
    // they still settle, and each slot completes (with the error it was
    // given) once its own have, as tent may read their buffers until then.
    bool draining = false;
    // The peer's QP was found gone with no work request outstanding: the
    // next one posted completes with IBV_WC_RETRY_EXC_ERR, as the one an
    // adapter sent to a vanished QP would.
    bool retry_error_owed = false;
    // The peer's QP was found gone: the QP is lost (lose_peer()) once the
    // work request that found it completed, the one with sequence number
    // lost_at (or the next one posted), as an adapter's QP enters the
    // error state with that error completion.
    bool loss_owed = false;
    std::uint64_t lost_at = 0;
    bool lost = false;  // lose_peer() ran
    // The program put the QP in the error state while its peer was looked
    // for: if tent carries it, it enters the error state at once.
    bool errored_while_pending = false;
    std::deque<HeldRecv> recvs;  // its own receive queue (unused with an SRQ)
    std::shared_ptr<ShadowSrq> srq;  // the SRQ it receives from, if any
    std::deque<Arrival> arrivals;
    std::vector<HeldSend> held_sends;
    std::deque<SendSlot> sq;
    std::uint64_t sq_base = 0;  // sequence number of sq.front()
    // The first slot whose message may still wait: the slots before it have
    // no one-sided part outstanding and their messages went.
    std::uint64_t msg_cursor = 0;
    int tent_messages = 0;  // tent messages (single or batch) in flight
    // An adapter applies a QP's writes, reads and atomics in posting order,
    // and tent's rails keep no order among themselves. With
    // interpose_ordering, a write or an atomic goes once every earlier
    // one-sided work request has completed, and a read once every earlier
    // write and atomic has (reads overlap); a fenced work request waits for
    // every earlier one either way; one behind a held one is held too. The
    // counts are of work requests with parts in flight.
    bool ordered = false;
    int reads_inflight = 0;
    int modifies_inflight = 0;
    int slots_holding = 0;
    bool forgotten = false;  // destroyed or reset by the program; kept until its tent operations end
    std::map<std::uint32_t, std::vector<Announcement>> remote_keys;  // the peer's regions by rkey
    tent_peer_t* peer = nullptr;
    std::uint32_t peer_token = 0;
    std::uint32_t peer_qpn = 0;
    // The order of the messages between the two QPs (MessageHeader::seq).
    // A message tent gave up on fails the sender's QP, but its later ones
    // may already be at this end: an adapter's responder never takes a
    // message past one it missed, so neither does this QP (peer_gap).
    std::uint32_t next_seq_out = 1;
    std::uint32_t next_seq_in = 1;
    bool peer_gap = false;
};

// The sequence number after SEQ (0 is never one).
inline std::uint32_t next_message_seq(std::uint32_t seq) { return seq == UINT32_MAX ? 1 : seq + 1; }

// Header of every message the interposer sends over tent, followed by the
// payload. Both ends are libtent of the same build: no version skew.
struct MessageHeader {
    std::uint32_t magic;  // kMessageMagic
    std::uint32_t token;  // the receiving QP's token
    std::uint32_t imm;    // as the application gave it (network order)
    std::uint32_t flags;  // kHasImm, kKeys, kWriteNotice, kBatch, kQpGone
    std::uint32_t from;   // the sending QP's token (a kQpGone answer goes to it)
    // The message's place in its QP's order (next_message_seq), from 1; 0
    // for those outside it: announcements, kQpGone answers, the messages
    // inside a batch (the batch has one).
    std::uint32_t seq;
};
constexpr std::uint32_t kMessageMagic = 0x746e7451;  // "tntQ"
constexpr std::uint32_t kHasImm = 1;
constexpr std::uint32_t kKeys = 2;         // payload: Announcement[]
constexpr std::uint32_t kWriteNotice = 4;  // payload: the write's length (uint32)
constexpr std::uint32_t kBatch = 8;        // payload: messages, each as uint32 length + the message
// No payload: the answer to a message of QP `token` whose QP is gone at the
// other end (destroyed, or put in the error state by its program).
constexpr std::uint32_t kQpGone = 16;
// Tent messages a QP keeps in flight before its small messages wait to go
// in a batch, and what a batch holds at most.
constexpr int kMessageWindow = 4;
constexpr std::size_t kBatchMessageMax = 1024;  // payload bytes; a larger message goes alone
constexpr std::size_t kBatchBytes = 16384;

} // namespace tent::interpose
