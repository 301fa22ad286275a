// A reliable-connected queue pair of the application that the interposer
// may carry over tent. The application keeps its own (real) QP: its number,
// state and attributes are what the program sees and exchanges. Once the
// peer behind it is found to run tent, the QP's work goes over tent's
// engine instead of the real QP; otherwise the held-back work is handed to
// the real QP and everything passes through.
#pragma once

#include <infiniband/verbs.h>

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

// Candidate: created, not yet at RTR. Pending: looking for the peer (work
// held back). Tent: carried by tent. Plain: passes through.
enum class QpMode { Candidate, Pending, Tent, Plain };

struct HeldRecv {
    std::uint64_t wr_id = 0;
    std::vector<ibv_sge> sge;
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

// One posted send work request, in posting order, until it completes. Its
// one-sided parts (RDMA write/read, one per SGE) go at once; its message
// (a send, or the notice of a write with immediate data) goes only when
// every one-sided part posted before it, its own included, has completed,
// so the peer never sees a message before the data written ahead of it.
struct SendSlot {
    std::uint64_t wr_id = 0;
    bool signaled = false;
    ibv_wc_status status = IBV_WC_SUCCESS;
    ibv_wc_opcode opcode = IBV_WC_SEND;
    std::uint32_t byte_len = 0;
    int onesided_parts = 0;       // posted to tent, not yet completed
    bool message_waiting = false;  // built, not yet posted
    bool message_inflight = false;
    PooledBuffer message;
    std::size_t message_length = 0;
    bool done() const { return onesided_parts == 0 && !message_waiting && !message_inflight; }
};

struct ShadowQp {
    ibv_qp* qp = nullptr;
    std::uint32_t token = 0;  // names this QP in tent messages from the peer
    bool sig_all = false;

    // Serialises posting to tent (held across the tent calls; never taken by
    // tent's threads), so the peer sees messages in posting order.
    std::mutex post_mutex;

    // ibv_wr_* work requests being built (the program's posting thread only).
    WrBuilder builder;

    // Everything below is guarded by the interposer's state mutex.
    QpMode mode = QpMode::Candidate;
    bool failed = false;  // tent lost the peer: the QP is in the error state
    std::deque<HeldRecv> recvs;  // its own receive queue (unused with an SRQ)
    std::shared_ptr<ShadowSrq> srq;  // the SRQ it receives from, if any
    std::deque<Arrival> arrivals;
    std::vector<HeldSend> held_sends;
    std::deque<SendSlot> sq;
    std::uint64_t sq_base = 0;  // sequence number of sq.front()
    std::map<std::uint32_t, std::vector<Announcement>> remote_keys;  // the peer's regions by rkey
    tent_peer_t* peer = nullptr;
    std::uint32_t peer_token = 0;
    std::uint32_t peer_qpn = 0;
};

// Header of every message the interposer sends over tent, followed by the
// payload. Both ends are libtent of the same build: no version skew.
struct MessageHeader {
    std::uint32_t magic;  // kMessageMagic
    std::uint32_t token;  // the receiving QP's token
    std::uint32_t imm;    // as the application gave it (network order)
    std::uint32_t flags;  // kHasImm, kKeys, kWriteNotice
};
constexpr std::uint32_t kMessageMagic = 0x746e7451;  // "tntQ"
constexpr std::uint32_t kHasImm = 1;
constexpr std::uint32_t kKeys = 2;         // payload: Announcement[]
constexpr std::uint32_t kWriteNotice = 4;  // payload: the write's length (uint32)

} // namespace tent::interpose
