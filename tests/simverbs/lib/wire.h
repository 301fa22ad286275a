// Packet format between simverbs processes (one stream socket per port pair).
// Every packet is a fixed header followed by `len` payload bytes. Both ends
// run on the same machine, so the header is in host byte order.
#pragma once
#include <cstdint>

namespace sv {

enum class PktType : uint8_t {
  kSend = 1,       // SEND / SEND_WITH_IMM (RC)
  kWrite,          // RDMA_WRITE / RDMA_WRITE_WITH_IMM
  kRead,           // RDMA_READ request (payload empty, len_req = bytes wanted)
  kAtomic,         // CMP_AND_SWP / FETCH_AND_ADD
  kUdSend,         // UD datagram (no acknowledgement)
  kAck,            // positive acknowledgement, cumulative up to psn
  kNak,            // negative acknowledgement: syndrome says why
  kReadResp,       // RDMA_READ response, carries data, acknowledges psn
  kAtomicResp,     // original value in `compare_add`
};

// NAK syndromes (what the responder found).
enum class Nak : uint8_t { kNone = 0, kRnr, kRemAccess, kRemInvReq, kRemOp };

enum PktFlags : uint8_t { kFlagImm = 1, kFlagSolicited = 2, kFlagCmpSwap = 4 };

struct PktHdr {
  uint32_t len;          // payload bytes after the header
  PktType type;
  uint8_t flags;
  Nak nak;
  uint8_t min_rnr_timer; // responder's RNR timer code (RNR NAK)
  uint32_t src_qpn;
  uint32_t dst_qpn;
  uint32_t psn;
  uint32_t imm;          // network byte order, as the application gave it
  uint32_t rkey;
  uint32_t len_req;      // RDMA_READ: bytes requested
  uint32_t src_ip;       // sender's port address (127.x.y.z, host order)
  uint32_t qkey;         // UD
  uint64_t raddr;
  uint64_t compare_add;
  uint64_t swap;
  uint64_t deliver_at_ns;  // CLOCK_MONOTONIC time before which the receiver holds it
};

}  // namespace sv
