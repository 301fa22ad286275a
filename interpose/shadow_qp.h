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
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tent/tent.h"

namespace tent::interpose {

// Candidate: created, not yet at RTR. Pending: looking for the peer (work
// held back). Tent: carried by tent. Plain: passes through.
enum class QpMode { Candidate, Pending, Tent, Plain };

struct HeldRecv {
    std::uint64_t wr_id = 0;
    std::vector<ibv_sge> sge;
};

// A send work request held back while the peer is looked for, deep-copied
// (inline data too) so it can be replayed on the real QP or sent by tent.
struct HeldSend {
    ibv_send_wr wr{};
    std::vector<ibv_sge> sge;
    std::vector<std::uint8_t> inline_data;
};

// A message from the peer not yet matched with a posted receive.
struct Arrival {
    std::uint32_t imm = 0;
    bool has_imm = false;
    std::vector<std::uint8_t> data;
};

// One posted send, in posting order, until it completes.
struct SendSlot {
    std::uint64_t wr_id = 0;
    bool signaled = false;
    bool done = false;
    ibv_wc_status status = IBV_WC_SUCCESS;
    ibv_wc_opcode opcode = IBV_WC_SEND;
    std::uint32_t byte_len = 0;
};

struct ShadowQp {
    ibv_qp* qp = nullptr;
    std::uint32_t token = 0;  // names this QP in tent messages from the peer
    bool sig_all = false;
    std::uint8_t port = 1;

    // Serialises posting (held across the tent call; never taken by tent's
    // threads), so the peer sees sends in posting order.
    std::mutex post_mutex;

    // Everything below is guarded by the interposer's state mutex.
    QpMode mode = QpMode::Candidate;
    std::deque<HeldRecv> recvs;
    std::deque<Arrival> arrivals;
    std::vector<HeldSend> held_sends;
    std::deque<SendSlot> sq;
    std::uint64_t sq_base = 0;  // sequence number of sq.front()
    tent_peer_t* peer = nullptr;
    std::uint32_t peer_token = 0;
    std::uint32_t peer_qpn = 0;
};

// Header of every message the interposer sends over tent, followed by the
// payload. Both ends are libtent of the same build: no version skew.
struct MessageHeader {
    std::uint32_t magic;  // kMessageMagic
    std::uint32_t token;  // the receiving QP's token
    std::uint32_t imm;    // network order, as the application gave it
    std::uint32_t flags;  // kHasImm
};
constexpr std::uint32_t kMessageMagic = 0x746e7451;  // "tntQ"
constexpr std::uint32_t kHasImm = 1;

} // namespace tent::interpose
