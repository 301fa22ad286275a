// VerbsRail: one RC queue pair between a local HCA port and a remote one.
//
//   auto dev  = VerbsDevice::open("mlx5_0", 1, params.gid_index);
//   auto rail = VerbsRail::create(*dev, params, SteadyClock::instance());
//   // publish hca_address(**dev) + (*rail)->qp_num() in the AddressBlob;
//   // from the peer's blob: remote_rail_info(peer_hca, peer_qpn) (verbs_address.h)
//   (*rail)->connect(*remote, "peer mlx5_1:1");
//   (*rail)->post(op);                       // Write/Read/Send/Probe
//   (*rail)->progress(done, on_message);     // until it finds nothing, then
//   (*rail)->prepare_to_wait();              // arm, progress() once more and
//   poll(wait_fd())                          // sleep only if that found nothing
//
// Life cycle: create() makes the QP (RESET -> INIT) and pre-posts the
// receive ring; local_info() goes to the peer over the control channel;
// connect(remote) moves the QP to RTR and RTS. Work posted before connect()
// is refused (RailDown). After an error completion the QP is in the error
// state: posts are refused (RailDown), outstanding work completes flushed,
// and reset() + connect() on both sides bring the rail back.
//
// Every work request is signaled; wr_id is the index of its in-flight slot,
// so each op completes exactly once, also when the QP fails and the HCA
// flushes its queue (IBV_WC_WR_FLUSH_ERR).
//
// Two-sided messages travel as [u32 header length][header][payload]: the
// length and header are copied into a registered slot that belongs to the
// op's in-flight slot, the payload goes as a second SGE straight from the
// caller's registered buffer. The receiver hands each arrival to
// on_message and reposts the buffer at once.
//
// Receiver not ready: rnr_retry 7 (the default) retries forever instead of
// counting credits. Buffers are reposted as soon as the receiving side makes
// progress, so an RNR wait lasts only while the peer is busy; a peer that
// stops making progress altogether is the engine's timeout to catch, which
// it must detect anyway for one-sided operations.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "transport/rail.h"
#include "transport/verbs/verbs_cq.h"
#include "transport/verbs/verbs_device.h"
#include "transport/verbs/verbs_memory.h"
#include "transport/verbs/verbs_params.h"

namespace tent {

// What the peer needs to connect to this rail's QP (exchanged by the engine:
// qpn in the wire RailInfo, the GID in the AddressBlob's HCA entry).
struct VerbsRailInfo {
    std::uint32_t qpn = 0;
    std::uint32_t psn = 0;  // 24 bits
    ibv_gid gid{};
    std::uint16_t lid = 0;
    ibv_mtu mtu = IBV_MTU_1024;  // the port's active MTU; the path uses the smaller of both
};

class VerbsRail final : public Rail {
public:
    static Result<std::unique_ptr<VerbsRail>> create(std::shared_ptr<VerbsDevice> device,
                                                     const VerbsRailParams& params, const Clock& clock);
    ~VerbsRail() override;

    const VerbsRailInfo& local_info() const { return local_; }
    // INIT -> RTR -> RTS towards `remote`; remote_name is for logs ("mlx5_1:1").
    Status connect(const VerbsRailInfo& remote, const std::string& remote_name);
    bool connected() const { return connected_; }
    // Moves the QP to the error state: every outstanding op completes
    // (flushed) at the next progress() and further posts are refused.
    Status fail() override;
    // Back to INIT after a failure, receive ring refilled, ready for a new
    // connect(); the peer resets its QP too (both restart at their initial
    // PSNs). Busy while ops are outstanding: progress() until none is.
    // A QP not failed yet is failed first. Flushed completions still
    // queued are discarded; messages that arrived are kept for the next
    // progress(), never lost.
    Status reset();
    bool failed() const { return failed_; }

    // Failover hooks: a failed QP is broken until re-armed; rearm() is
    // reset() + connect() to the peer it was connected to (the peer re-arms
    // its end too, before our first post).
    bool broken() const override { return failed_ || !connected_; }
    Status rearm() override;
    bool rearmable() const override { return true; }

    // Largest header + payload of one Send (a receive buffer minus framing).
    std::uint64_t max_send_length() const;
    std::size_t outstanding() const { return slots_.size() - free_.size(); }
    std::uint32_t qp_num() const { return qp_->qp_num; }

    // Rail
    TransportKind kind() const override { return TransportKind::Rdma; }
    const std::string& name() const override { return name_; }
    std::uint64_t max_op_length() const override { return device_->port().max_msg_sz; }
    Status post(const RailOp& op) override;
    void progress(std::vector<RailCompletion>& done,
                  const std::function<void(const RailMessage&)>& on_message) override;
    int wait_fd() const override { return cq_->wait_fd(); }
    // Arms the completion queue: wait_fd() turns readable at the next
    // completion (send or receive).
    void prepare_to_wait() override;

    // Bytes of framing in front of a Send's header.
    static constexpr std::uint32_t kFraming = 4;
    // Largest Send header (the engine's per-message header is far smaller).
    static constexpr std::uint32_t kMaxSendHeader = 252;

private:
    struct InFlight {
        std::uint64_t cookie = 0;
        RailOpcode opcode = RailOpcode::Write;
        TimePoint posted{};
        bool in_use = false;
    };
    struct QpDeleter {
        void operator()(ibv_qp* qp) const;
    };

    VerbsRail(std::shared_ptr<VerbsDevice> device, const VerbsRailParams& params, const Clock& clock);
    Status init_qp();
    Status to_init();  // RESET -> INIT and post the receive ring
    Status post_recv(std::uint32_t index);
    void complete_send(const ibv_wc& wc, std::vector<RailCompletion>& done);
    void complete_recv(const ibv_wc& wc, const std::function<void(const RailMessage&)>& on_message);
    void keep_received();  // before a reset: see kept_
    // One received buffer (framing, header, payload) to on_message.
    void deliver(const std::uint8_t* buf, std::uint32_t len, const std::function<void(const RailMessage&)>& on_message);

    std::shared_ptr<VerbsDevice> device_;
    VerbsRailParams params_;
    const Clock& clock_;
    std::string name_;
    VerbsRailInfo local_;
    VerbsRailInfo remote_;      // kept for rearm()
    std::string remote_name_;
    bool connected_ = false;
    bool failed_ = false;

    std::vector<std::uint8_t> recv_ring_;  // recv_buffers * recv_buffer_size
    std::unique_ptr<VerbsMemoryRegion> recv_mr_;
    std::vector<std::uint8_t> send_headers_;  // one (kFraming + kMaxSendHeader) slot per in-flight slot
    std::unique_ptr<VerbsMemoryRegion> send_header_mr_;

    // Messages reset() found received but not yet delivered (copies: the
    // ring is reposted), delivered first by the next progress().
    std::vector<std::vector<std::uint8_t>> kept_;

    std::vector<InFlight> slots_;
    std::vector<std::uint32_t> free_;  // free slot indices (a stack)

    // Declared last so they go first: the QP before its CQ, both before the
    // memory their posted work refers to.
    std::unique_ptr<VerbsCompletionQueue> cq_;
    std::unique_ptr<ibv_qp, QpDeleter> qp_;
};

} // namespace tent
