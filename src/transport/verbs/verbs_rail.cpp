#include "transport/verbs/verbs_rail.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/little_endian.h"
#include "common/log.h"
#include "transport/verbs/gid.h"
#include "transport/verbs/verbs_address.h"
#include "transport/verbs/wc_outcome.h"

namespace tent {

namespace {

constexpr std::uint64_t kRecvBit = std::uint64_t{1} << 63;  // wr_id of a receive: kRecvBit | buffer index
constexpr int kPollBatch = 32;
constexpr std::uint32_t kHeaderSlot = VerbsRail::kFraming + VerbsRail::kMaxSendHeader;

std::string qp_error(const char* what, int err, const std::string& rail) {
    return Status::from_errno(err, std::string(what) + " on " + rail).message();
}

} // namespace

void VerbsRail::QpDeleter::operator()(ibv_qp* qp) const {
    if (int err = ibv_destroy_qp(qp)) TENT_WARN("verbs destroy qp failed", "ibv_destroy_qp: error %d", err);
}

VerbsRail::VerbsRail(std::shared_ptr<VerbsDevice> device, const VerbsRailParams& params, const Clock& clock)
    : device_(std::move(device)), params_(params), clock_(clock) {}

VerbsRail::~VerbsRail() {
    if (outstanding())
        TENT_DEBUG("verbs rail closed busy", "%s closed with %zu ops outstanding", name_.c_str(), outstanding());
}

Result<std::unique_ptr<VerbsRail>> VerbsRail::create(std::shared_ptr<VerbsDevice> device,
                                                     const VerbsRailParams& params, const Clock& clock) {
    if (params.max_send_wr == 0 || params.recv_buffers == 0 || params.recv_buffer_size <= kFraming)
        return Status(Code::InvalidArgument, "verbs rail needs send slots and receive buffers");
    std::unique_ptr<VerbsRail> rail(new VerbsRail(std::move(device), params, clock));
    if (Status s = rail->init_qp(); !s) return s;
    return rail;
}

Status VerbsRail::init_qp() {
    const auto& port = device_->port();
    name_ = device_->name() + ":" + std::to_string(port.port_num);

    const std::uint32_t sends = params_.max_send_wr, recvs = params_.recv_buffers;
    auto cq = VerbsCompletionQueue::create(device_, static_cast<int>(sends + recvs));
    if (!cq) return cq.status();
    cq_ = std::move(*cq);

    // Receive ring and send-header slots, registered once for the rail's life.
    recv_ring_.assign(std::size_t{recvs} * params_.recv_buffer_size, 0);
    auto rmr = device_->register_memory(recv_ring_.data(), recv_ring_.size(), IBV_ACCESS_LOCAL_WRITE);
    if (!rmr) return rmr.status();
    recv_mr_ = std::move(*rmr);
    send_headers_.assign(std::size_t{sends} * kHeaderSlot, 0);
    auto hmr = device_->register_memory(send_headers_.data(), send_headers_.size(), 0);
    if (!hmr) return hmr.status();
    send_header_mr_ = std::move(*hmr);

    slots_.assign(sends, InFlight{});
    free_.resize(sends);
    for (std::uint32_t i = 0; i < sends; ++i) free_[i] = sends - 1 - i;  // hand out slot 0 first

    ibv_qp_init_attr qa{};
    qa.send_cq = cq_->cq();
    qa.recv_cq = cq_->cq();
    qa.qp_type = IBV_QPT_RC;
    qa.sq_sig_all = 1;
    qa.cap.max_send_wr = sends;
    qa.cap.max_recv_wr = recvs;
    qa.cap.max_send_sge = 2;
    qa.cap.max_recv_sge = 1;
    ibv_qp* qp = ibv_create_qp(device_->pd(), &qa);
    if (!qp) return Status(Code::NoResources, qp_error("ibv_create_qp", errno, name_));
    qp_.reset(qp);

    if (Status s = to_init(); !s) return s;

    local_.qpn = qp->qp_num;
    local_.psn = initial_psn(qp->qp_num);  // the peer derives it too (verbs_address.h)
    local_.gid = port.gid;
    local_.lid = port.lid;
    local_.mtu = port.active_mtu;
    return Status::ok();
}

Status VerbsRail::to_init() {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = device_->port().port_num;
    a.qp_access_flags =
        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
    if (int err = ibv_modify_qp(qp_.get(), &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
        return Status(Code::TransportError, qp_error("modify qp to INIT", err, name_));
    // Receives may be posted in INIT: the ring is full before the peer can send.
    for (std::uint32_t i = 0; i < params_.recv_buffers; ++i)
        if (Status s = post_recv(i); !s) return s;
    return Status::ok();
}

Status VerbsRail::post_recv(std::uint32_t index) {
    ibv_sge sge{};
    sge.addr = reinterpret_cast<std::uintptr_t>(recv_ring_.data()) + std::uint64_t{index} * params_.recv_buffer_size;
    sge.length = params_.recv_buffer_size;
    sge.lkey = recv_mr_->lkey();
    ibv_recv_wr wr{};
    wr.wr_id = kRecvBit | index;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    if (int err = ibv_post_recv(qp_.get(), &wr, &bad))
        return Status(Code::TransportError, qp_error("ibv_post_recv", err, name_));
    return Status::ok();
}

Status VerbsRail::connect(const VerbsRailInfo& remote, const std::string& remote_name) {
    if (connected_ || failed_) return Status(Code::InvalidArgument, name_ + " is already connected or failed");
    const auto& port = device_->port();
    name_ = device_->name() + ":" + std::to_string(port.port_num) + " -> " + remote_name;

    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = std::min(port.active_mtu, remote.mtu);
    a.dest_qp_num = remote.qpn;
    a.rq_psn = remote.psn;
    a.max_dest_rd_atomic = static_cast<std::uint8_t>(std::clamp(device_->attr().max_qp_rd_atom, 1, 16));
    a.min_rnr_timer = 12;  // 0.64 ms between receiver-not-ready retries
    a.ah_attr.port_num = port.port_num;
    a.ah_attr.dlid = remote.lid;
    // RoCE always routes by GID; InfiniBand only when the peer has one.
    if (port.link_layer == IBV_LINK_LAYER_ETHERNET || !is_zero(remote.gid)) {
        a.ah_attr.is_global = 1;
        a.ah_attr.grh.dgid = remote.gid;
        a.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(port.gid_index);
        a.ah_attr.grh.hop_limit = 64;
    }
    if (int err = ibv_modify_qp(qp_.get(), &a,
                                IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
        return Status(Code::TransportError, qp_error("modify qp to RTR", err, name_));

    ibv_qp_attr r{};
    r.qp_state = IBV_QPS_RTS;
    r.timeout = params_.qp_timeout;
    r.retry_cnt = params_.retry_cnt;
    r.rnr_retry = params_.rnr_retry;
    r.sq_psn = local_.psn;
    r.max_rd_atomic = static_cast<std::uint8_t>(std::clamp(device_->attr().max_qp_init_rd_atom, 1, 16));
    if (int err = ibv_modify_qp(qp_.get(), &r,
                                IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                    IBV_QP_MAX_QP_RD_ATOMIC))
        return Status(Code::TransportError, qp_error("modify qp to RTS", err, name_));
    connected_ = true;
    remote_ = remote;
    remote_name_ = remote_name;
    TENT_DEBUG("verbs rail connected", "%s qp 0x%x -> qp 0x%x", name_.c_str(), local_.qpn, remote.qpn);
    return Status::ok();
}

Status VerbsRail::fail() {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_ERR;
    if (int err = ibv_modify_qp(qp_.get(), &a, IBV_QP_STATE))
        return Status(Code::TransportError, qp_error("modify qp to ERR", err, name_));
    failed_ = true;
    return Status::ok();
}

Status VerbsRail::reset() {
    if (outstanding())
        return Status(Code::Busy, name_ + ": " + std::to_string(outstanding()) +
                                      " ops still to complete; call progress() until none is outstanding");
    // The QP goes to the error state first, if it is not there yet: from
    // then on nothing arrives, and what did arrive is taken before the
    // reset (a driver may clear the QP's completions with it).
    if (!failed_ && connected_)
        if (Status s = fail(); !s) return s;
    keep_received();
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RESET;
    if (int err = ibv_modify_qp(qp_.get(), &a, IBV_QP_STATE))
        return Status(Code::TransportError, qp_error("modify qp to RESET", err, name_));
    keep_received();
    connected_ = false;
    failed_ = false;
    name_ = device_->name() + ":" + std::to_string(device_->port().port_num);
    return to_init();
}

// Empties the CQ before a reset. Receives flushed by the error state are
// stale: dropped. A message the HCA took (and acknowledged: its sender
// counts it delivered) but progress() did not see yet is kept, copied (the
// ring is reposted), for the next progress().
void VerbsRail::keep_received() {
    ibv_wc wcs[kPollBatch];
    for (int i = 0, n; i < 1024 && (n = ibv_poll_cq(cq_->cq(), kPollBatch, wcs)) > 0; ++i)
        for (int k = 0; k < n; ++k)
            if ((wcs[k].wr_id & kRecvBit) && wcs[k].status == IBV_WC_SUCCESS) {
                const std::uint8_t* buf =
                    recv_ring_.data() + std::size_t{wcs[k].wr_id & ~kRecvBit} * params_.recv_buffer_size;
                kept_.emplace_back(buf, buf + wcs[k].byte_len);
            }
}

Status VerbsRail::rearm() {
    if (remote_name_.empty()) return Status(Code::InvalidArgument, name_ + " was never connected");
    if (Status s = reset(); !s) return s;
    return connect(remote_, remote_name_);
}

std::uint64_t VerbsRail::max_send_length() const { return params_.recv_buffer_size - kFraming; }

Status VerbsRail::post(const RailOp& op) {
    if (failed_) return Status(Code::RailDown, name_ + " has failed");
    if (!connected_) return Status(Code::RailDown, name_ + " is not connected");
    if (op.length > max_op_length())
        return Status(Code::InvalidArgument, "op of " + std::to_string(op.length) + " bytes exceeds " + name_ +
                                                 "'s limit of " + std::to_string(max_op_length()));
    if (op.opcode == RailOpcode::Send) {
        if (op.send_header.size() > kMaxSendHeader)
            return Status(Code::InvalidArgument, "send header of " + std::to_string(op.send_header.size()) +
                                                     " bytes exceeds " + std::to_string(kMaxSendHeader));
        if (op.send_header.size() + op.length > max_send_length())
            return Status(Code::InvalidArgument, "send of " + std::to_string(op.send_header.size() + op.length) +
                                                     " bytes exceeds " + name_ + "'s receive buffers (" +
                                                     std::to_string(max_send_length()) + " bytes)");
    }
    if (free_.empty()) return Status(Code::Busy, name_ + ": " + std::to_string(slots_.size()) + " ops outstanding");
    const std::uint32_t slot = free_.back();

    ibv_sge sge[2]{};
    int nsge = 0;
    ibv_send_wr wr{};
    wr.wr_id = slot;
    wr.send_flags = IBV_SEND_SIGNALED;
    if (op.length) {
        sge[nsge].addr = reinterpret_cast<std::uintptr_t>(op.local);
        sge[nsge].length = static_cast<std::uint32_t>(op.length);
        sge[nsge].lkey = op.lkey;
        ++nsge;
    }
    switch (op.opcode) {
    case RailOpcode::Write:
    case RailOpcode::Read:
        wr.opcode = op.opcode == RailOpcode::Write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
        wr.wr.rdma.remote_addr = op.remote_addr;
        wr.wr.rdma.rkey = op.rkey;
        break;
    case RailOpcode::Send: {
        // Framing and header from this slot's registered area, then the payload.
        std::uint8_t* h = send_headers_.data() + std::size_t{slot} * kHeaderSlot;
        const std::uint32_t hlen = static_cast<std::uint32_t>(op.send_header.size());
        store_le<std::uint32_t>(h, hlen);  // the framing is little-endian whatever the hosts are
        if (hlen) std::memcpy(h + kFraming, op.send_header.data(), hlen);
        if (nsge) sge[1] = sge[0];
        sge[0].addr = reinterpret_cast<std::uintptr_t>(h);
        sge[0].length = kFraming + hlen;
        sge[0].lkey = send_header_mr_->lkey();
        ++nsge;
        wr.opcode = IBV_WR_SEND;
        break;
    }
    case RailOpcode::AtomicFetchAdd:
    case RailOpcode::AtomicCmpSwap:
        // The remote HCA executes it and writes the value it found to the local SGE.
        if (op.length != 8 || op.remote_addr % 8 != 0)
            return Status(Code::InvalidArgument, name_ + ": an atomic takes 8 bytes at an 8-byte aligned address");
        wr.opcode = op.opcode == RailOpcode::AtomicFetchAdd ? IBV_WR_ATOMIC_FETCH_AND_ADD : IBV_WR_ATOMIC_CMP_AND_SWP;
        wr.wr.atomic.remote_addr = op.remote_addr;
        wr.wr.atomic.rkey = op.rkey;
        wr.wr.atomic.compare_add = op.compare_add;
        wr.wr.atomic.swap = op.opcode == RailOpcode::AtomicCmpSwap ? op.swap : 0;
        break;
    case RailOpcode::Probe:
        // Zero-length RDMA write: needs no key, touches no memory, and is
        // acknowledged by the remote HCA, so it proves the path both ways.
        nsge = 0;
        wr.opcode = IBV_WR_RDMA_WRITE;
        break;
    }
    wr.sg_list = nsge ? sge : nullptr;
    wr.num_sge = nsge;

    slots_[slot] = InFlight{op.cookie, op.opcode, clock_.now(), true};
    ibv_send_wr* bad = nullptr;
    if (int err = ibv_post_send(qp_.get(), &wr, &bad)) {
        slots_[slot].in_use = false;
        return Status(Code::TransportError, qp_error("ibv_post_send", err, name_));
    }
    free_.pop_back();
    return Status::ok();
}

void VerbsRail::prepare_to_wait() {
    if (Status s = cq_->arm(); !s) TENT_WARN("verbs arm failed", "%s", s.message().c_str());
}

void VerbsRail::progress(std::vector<RailCompletion>& done,
                         const std::function<void(const RailMessage&)>& on_message) {
    // No arming here: it takes a system call or two (the channel read, the
    // notify request) and most calls find work; prepare_to_wait() arms
    // only before the caller sleeps.
    for (const auto& m : kept_) deliver(m.data(), static_cast<std::uint32_t>(m.size()), on_message);
    kept_.clear();
    ibv_wc wcs[kPollBatch];
    for (;;) {
        int n = ibv_poll_cq(cq_->cq(), kPollBatch, wcs);
        if (n < 0) {
            TENT_ERROR("verbs poll failed", "ibv_poll_cq on %s returned %d", name_.c_str(), n);
            return;
        }
        for (int i = 0; i < n; ++i) {
            if (wcs[i].wr_id & kRecvBit)
                complete_recv(wcs[i], on_message);
            else
                complete_send(wcs[i], done);
        }
        if (n < kPollBatch) return;
    }
}

void VerbsRail::complete_send(const ibv_wc& wc, std::vector<RailCompletion>& done) {
    const auto slot = static_cast<std::uint32_t>(wc.wr_id);
    if (slot >= slots_.size() || !slots_[slot].in_use) {
        TENT_ERROR("verbs stray completion", "%s: completion for unknown wr_id %llu", name_.c_str(),
                   static_cast<unsigned long long>(wc.wr_id));
        return;
    }
    InFlight& f = slots_[slot];
    RailCompletion c;
    c.cookie = f.cookie;
    c.latency = clock_.now() - f.posted;
    c.outcome = rail_outcome_of(wc.status);
    if (f.opcode == RailOpcode::Probe)
        c.outcome = c.outcome == RailOutcome::Success ? RailOutcome::ProbeAnswered : RailOutcome::ProbeFailed;
    if (wc.status != IBV_WC_SUCCESS) {
        // Any error completion leaves an RC QP in the error state: further
        // posts are refused until reset() and connect().
        failed_ = true;
        char vendor[16];
        std::snprintf(vendor, sizeof vendor, "0x%x", wc.vendor_err);
        c.status = Status(status_code_of(c.outcome),
                          name_ + ": " + ibv_wc_status_str(wc.status) + " (vendor error " + vendor + ")");
        // A flush is the echo of the first error; only that one is news.
        if (wc.status != IBV_WC_WR_FLUSH_ERR)
            TENT_INFO("verbs op failed", "%s", c.status.message().c_str());
    }
    done.push_back(std::move(c));
    f.in_use = false;
    free_.push_back(slot);
}

void VerbsRail::complete_recv(const ibv_wc& wc, const std::function<void(const RailMessage&)>& on_message) {
    const auto index = static_cast<std::uint32_t>(wc.wr_id & ~kRecvBit);
    if (wc.status != IBV_WC_SUCCESS) {
        // Flushed with the QP (or a local error that failed it): not reposted
        // (reset() refills the ring); sends complete with errors of their own.
        failed_ = true;
        if (wc.status != IBV_WC_WR_FLUSH_ERR)
            TENT_INFO("verbs recv failed", "%s: %s", name_.c_str(), ibv_wc_status_str(wc.status));
        return;
    }
    deliver(recv_ring_.data() + std::size_t{index} * params_.recv_buffer_size, wc.byte_len, on_message);
    if (Status s = post_recv(index); !s) TENT_WARN("verbs repost failed", "%s", s.message().c_str());
}

void VerbsRail::deliver(const std::uint8_t* buf, std::uint32_t len,
                        const std::function<void(const RailMessage&)>& on_message) {
    const std::uint32_t hlen = len >= kFraming ? load_le<std::uint32_t>(buf) : 0;
    if (len < kFraming || hlen > len - kFraming) {
        TENT_WARN("verbs bad message", "%s: dropped a %u-byte message with header length %u", name_.c_str(), len,
                  hlen);
    } else if (on_message) {
        RailMessage m;
        m.header = {buf + kFraming, hlen};
        m.payload = {buf + kFraming + hlen, len - kFraming - hlen};
        on_message(m);
    }
}

} // namespace tent
