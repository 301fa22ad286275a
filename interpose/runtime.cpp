#include "runtime.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>
#include <unordered_map>

#include "activation.h"
#include "common/log.h"
#include "context_table.h"
#include "discovery.h"
#include "send_pool.h"
#include "settings.h"

namespace tent::interpose {

namespace {

// An operation tent carries for a QP until tent_poll() reports it.
struct InFlight {
    std::shared_ptr<ShadowQp> q;
    std::uint64_t seq = 0;
    PooledBuffer buffer;  // what tent_post_send sends (valid until completion)
    std::size_t length = 0;
};

struct State {
    std::mutex mu;
    std::unordered_map<const ibv_qp*, std::shared_ptr<ShadowQp>> qps;
    std::unordered_map<std::uint32_t, std::shared_ptr<ShadowQp>> by_token;
    std::unordered_map<const ibv_cq*, std::deque<ibv_wc>> cqs;  // completions tent produced
    std::unordered_map<std::uint64_t, InFlight> inflight;
    std::map<std::string, tent_peer_t*> peers;
    std::uint32_t next_token = 1;
    std::uint64_t next_cookie = 1;
};

// Lives until the process ends: QPs, the engine and its threads may be in
// use until then, so nothing here is torn down by a static destructor.
State& state() {
    static State* s = new State;  // deliberately never freed
    return *s;
}

int post_locked(ShadowQp& q, ibv_send_wr* wr, ibv_send_wr** bad_wr);

std::once_flag g_engine_once;
tent_engine_t* g_engine = nullptr;
SendPool* g_pool = nullptr;  // with the engine, never freed
std::atomic<bool> g_stop{false};
std::thread* g_harvester = nullptr;

void push_wc(State& s, const ibv_cq* cq, const ibv_wc& wc) { s.cqs[cq].push_back(wc); }

// Completes the QP's sends from the front while they are done, in posting
// order; unsignaled ones leave no completion.
void retire_sends(State& s, ShadowQp& q) {
    while (!q.sq.empty() && q.sq.front().done) {
        const SendSlot& slot = q.sq.front();
        if (slot.signaled || slot.status != IBV_WC_SUCCESS) {
            ibv_wc wc{};
            wc.wr_id = slot.wr_id;
            wc.status = slot.status;
            wc.opcode = slot.opcode;
            wc.byte_len = slot.byte_len;
            wc.qp_num = q.qp->qp_num;
            push_wc(s, q.qp->send_cq, wc);
        }
        q.sq.pop_front();
        ++q.sq_base;
    }
}

// Matches arrived messages with posted receives, in order; a message
// longer than its receive buffer completes with IBV_WC_LOC_LEN_ERR, as an
// HCA reports it.
void match_receives(State& s, ShadowQp& q) {
    while (!q.recvs.empty() && !q.arrivals.empty()) {
        HeldRecv r = std::move(q.recvs.front());
        Arrival a = std::move(q.arrivals.front());
        q.recvs.pop_front();
        q.arrivals.pop_front();
        ibv_wc wc{};
        wc.wr_id = r.wr_id;
        wc.opcode = IBV_WC_RECV;
        wc.qp_num = q.qp->qp_num;
        wc.src_qp = q.peer_qpn;
        wc.byte_len = static_cast<std::uint32_t>(a.data.size());
        if (a.has_imm) {
            wc.wc_flags |= IBV_WC_WITH_IMM;
            wc.imm_data = a.imm;
        }
        std::size_t capacity = 0;
        for (const auto& sge : r.sge) capacity += sge.length;
        if (capacity < a.data.size()) {
            wc.status = IBV_WC_LOC_LEN_ERR;
        } else {
            std::size_t off = 0;
            for (const auto& sge : r.sge) {
                std::size_t n = std::min<std::size_t>(sge.length, a.data.size() - off);
                if (n) std::memcpy(reinterpret_cast<void*>(sge.addr), a.data.data() + off, n);
                off += n;
            }
        }
        push_wc(s, q.qp->recv_cq, wc);
    }
}

// Every message from a peer's interposer, on the thread driving the engine.
void on_message(tent_peer_t*, const void* data, size_t length, void*) {
    MessageHeader h;
    if (length < sizeof h) return;
    std::memcpy(&h, data, sizeof h);
    if (h.magic != kMessageMagic) return;
    State& s = state();
    std::lock_guard lock(s.mu);
    auto it = s.by_token.find(h.token);
    if (it == s.by_token.end()) return;  // the QP is gone
    ShadowQp& q = *it->second;
    Arrival a;
    a.has_imm = (h.flags & kHasImm) != 0;
    a.imm = h.imm;
    const auto* p = static_cast<const std::uint8_t*>(data) + sizeof h;
    a.data.assign(p, p + (length - sizeof h));
    q.arrivals.push_back(std::move(a));
    if (q.mode == QpMode::Tent) match_receives(s, q);
}

// Harvests tent's completions of the interposer's posts.
void harvest() {
    TentScope scope;
    tent_completion_t c[64];
    while (!g_stop.load(std::memory_order_relaxed)) {
        if (tent_wait(g_engine, 50) <= 0) continue;
        int n = tent_poll(g_engine, c, 64);
        if (n <= 0) continue;
        State& s = state();
        std::lock_guard lock(s.mu);
        for (int i = 0; i < n; ++i) {
            auto it = s.inflight.find(c[i].cookie);
            if (it == s.inflight.end()) continue;
            InFlight f = std::move(it->second);
            s.inflight.erase(it);
            g_pool->release(std::move(f.buffer));
            ShadowQp& q = *f.q;
            if (f.seq < q.sq_base || f.seq - q.sq_base >= q.sq.size()) continue;
            SendSlot& slot = q.sq[f.seq - q.sq_base];
            slot.done = true;
            if (c[i].status != TENT_OK) slot.status = IBV_WC_RETRY_EXC_ERR;
            retire_sends(s, q);
        }
    }
}

// At exit, before libtent's statics go: stop harvesting, then the engine
// (its peers see it leave).
void shut_down() {
    if (!g_engine) return;
    g_stop = true;
    if (g_harvester && g_harvester->joinable()) g_harvester->join();
    TentScope scope;
    // What each rail carried, for whoever runs with log_level info.
    tent_rail_stats_t stats[64];
    int n = tent_rail_stats(g_engine, stats, 64);
    for (int i = 0; i < n && i < 64; ++i)
        TENT_INFO("interpose-rail", "interposer: rail %s: %llu ops, %llu bytes, %llu errors", stats[i].name,
                  static_cast<unsigned long long>(stats[i].ops), static_cast<unsigned long long>(stats[i].bytes),
                  static_cast<unsigned long long>(stats[i].errors));
    tent_engine_destroy(g_engine);
    g_engine = nullptr;
}

} // namespace

tent_engine_t* engine() {
    std::call_once(g_engine_once, [] {
        TentScope scope;
        tent_engine_t* e = nullptr;
        if (int rc = tent_engine_create(nullptr, &e); rc != TENT_OK) {
            TENT_ERROR("interpose-engine", "interposer: tent's engine did not start: %s; queue pairs pass through",
                       tent_strerror(rc));
            return;
        }
        tent_set_recv_callback(e, on_message, nullptr);
        g_engine = e;
        static SendPool pool(e);
        g_pool = &pool;
        static std::thread harvester(harvest);
        g_harvester = &harvester;
        std::atexit(shut_down);
    });
    return g_engine;
}

tent_peer_t* peer_for(const std::string& blob) {
    State& s = state();
    {
        std::lock_guard lock(s.mu);
        if (auto it = s.peers.find(blob); it != s.peers.end()) return it->second;
    }
    tent_engine_t* e = engine();
    if (!e) return nullptr;
    tent_peer_t* p = nullptr;
    TentScope scope;
    if (tent_connect(e, blob.data(), blob.size(), &p) != TENT_OK) return nullptr;
    std::lock_guard lock(s.mu);
    return s.peers.emplace(blob, p).first->second;
}

void track_qp(ibv_qp* qp, const ibv_qp_init_attr& attr) {
    auto q = std::make_shared<ShadowQp>();
    q->qp = qp;
    q->sig_all = attr.sq_sig_all != 0;
    State& s = state();
    std::lock_guard lock(s.mu);
    q->token = s.next_token++;
    s.by_token[q->token] = q;
    s.qps[qp] = std::move(q);
}

void forget_qp(ibv_qp* qp) {
    State& s = state();
    std::lock_guard lock(s.mu);
    auto it = s.qps.find(qp);
    if (it == s.qps.end()) return;
    s.by_token.erase(it->second->token);
    s.qps.erase(it);
}

std::shared_ptr<ShadowQp> find_qp(const ibv_qp* qp) {
    State& s = state();
    std::lock_guard lock(s.mu);
    auto it = s.qps.find(qp);
    return it == s.qps.end() ? nullptr : it->second;
}

void become_tent(const std::shared_ptr<ShadowQp>& q, tent_peer_t* peer, std::uint32_t peer_token) {
    // The held sends go first: no post of the application's may overtake them.
    std::lock_guard post(q->post_mutex);
    std::vector<HeldSend> held;
    {
        State& s = state();
        std::lock_guard lock(s.mu);
        q->peer = peer;
        q->peer_token = peer_token;
        q->mode = QpMode::Tent;
        held.swap(q->held_sends);
        match_receives(s, *q);
    }
    TENT_DEBUG("interpose-tent", "interposer: qp 0x%x carried by tent", q->qp->qp_num);
    for (auto& h : held) {
        h.wr.sg_list = h.sge.data();
        h.wr.next = nullptr;
        ibv_send_wr* bad = nullptr;
        post_locked(*q, &h.wr, &bad);
    }
}

void become_plain(const std::shared_ptr<ShadowQp>& q, const char* why) {
    const ProviderOps* ops = provider_ops(q->qp->context);
    std::lock_guard post(q->post_mutex);
    std::deque<HeldRecv> recvs;
    std::vector<HeldSend> sends;
    {
        State& s = state();
        std::lock_guard lock(s.mu);
        q->mode = QpMode::Plain;
        recvs.swap(q->recvs);
        sends.swap(q->held_sends);
    }
    TENT_INFO("interpose-plain", "interposer: qp 0x%x passes through: %s", q->qp->qp_num, why);
    if (!ops) return;
    for (auto& r : recvs) {
        ibv_recv_wr wr{};
        wr.wr_id = r.wr_id;
        wr.sg_list = r.sge.data();
        wr.num_sge = static_cast<int>(r.sge.size());
        ibv_recv_wr* bad = nullptr;
        ops->post_recv(q->qp, &wr, &bad);
    }
    for (auto& h : sends) {
        h.wr.sg_list = h.sge.data();
        h.wr.next = nullptr;
        ibv_send_wr* bad = nullptr;
        ops->post_send(q->qp, &h.wr, &bad);
    }
}

void qp_modified(ibv_qp* qp, const ibv_qp_attr& attr, int attr_mask) {
    if (!(attr_mask & IBV_QP_STATE) || attr.qp_state != IBV_QPS_RTR) return;
    std::shared_ptr<ShadowQp> q = find_qp(qp);
    if (!q) return;
    {
        std::lock_guard lock(state().mu);
        if (q->mode != QpMode::Candidate) return;
        q->mode = QpMode::Pending;
        q->peer_qpn = attr.dest_qp_num;
    }
    if (!(attr_mask & IBV_QP_AV) || !(attr_mask & IBV_QP_DEST_QPN) || !attr.ah_attr.is_global)
        return become_plain(q, "the peer is named by LID only, not by a GID");
    ibv_gid own{};
    {
        TentScope scope;
        if (ibv_query_gid(qp->context, attr.ah_attr.port_num, attr.ah_attr.grh.sgid_index, &own) != 0)
            return become_plain(q, "cannot read the queue pair's own GID");
    }
    start_discovery(q, rendezvous_name(own, qp->qp_num), rendezvous_name(attr.ah_attr.grh.dgid, attr.dest_qp_num),
                    discovery_timeout_ms());
}

int take_completions(const ibv_cq* cq, int max, ibv_wc* wc) {
    State& s = state();
    std::lock_guard lock(s.mu);
    auto it = s.cqs.find(cq);
    if (it == s.cqs.end()) return 0;
    int n = 0;
    while (n < max && !it->second.empty()) {
        wc[n++] = it->second.front();
        it->second.pop_front();
    }
    return n;
}

int shadow_post_recv(ShadowQp& q, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
    State& s = state();
    std::unique_lock lock(s.mu);
    if (q.mode == QpMode::Plain) {
        lock.unlock();
        const ProviderOps* ops = provider_ops(q.qp->context);
        return ops ? ops->post_recv(q.qp, wr, bad_wr) : EINVAL;
    }
    for (; wr; wr = wr->next) {
        if (wr->num_sge < 0) {
            if (bad_wr) *bad_wr = wr;
            return EINVAL;
        }
        HeldRecv r;
        r.wr_id = wr->wr_id;
        r.sge.assign(wr->sg_list, wr->sg_list + wr->num_sge);
        q.recvs.push_back(std::move(r));
    }
    if (q.mode == QpMode::Tent) match_receives(s, q);
    return 0;
}

namespace {

// Gathers a send's payload behind the message header into a registered
// buffer; false if none could be had.
bool gather(const ShadowQp& q, const ibv_send_wr& wr, InFlight& f) {
    std::size_t total = 0;
    for (int i = 0; i < wr.num_sge; ++i) total += wr.sg_list[i].length;
    f.length = sizeof(MessageHeader) + total;
    f.buffer = g_pool->acquire(f.length);
    if (!f.buffer.data) return false;
    std::uint8_t* buf = f.buffer.data.get();
    MessageHeader h{kMessageMagic, q.peer_token, wr.imm_data,
                    wr.opcode == IBV_WR_SEND_WITH_IMM ? kHasImm : 0u};
    std::memcpy(buf, &h, sizeof h);
    std::size_t off = sizeof h;
    for (int i = 0; i < wr.num_sge; ++i) {
        std::memcpy(buf + off, reinterpret_cast<const void*>(wr.sg_list[i].addr), wr.sg_list[i].length);
        off += wr.sg_list[i].length;
    }
    return true;
}

HeldSend hold(const ibv_send_wr& wr) {
    HeldSend h;
    h.wr = wr;
    h.sge.assign(wr.sg_list, wr.sg_list + std::max(wr.num_sge, 0));
    if (wr.send_flags & IBV_SEND_INLINE) {
        // Inline data may be reused once ibv_post_send returns: keep a copy.
        std::size_t total = 0;
        for (const auto& s : h.sge) total += s.length;
        h.inline_data.resize(total);
        std::size_t off = 0;
        for (auto& s : h.sge) {
            std::memcpy(h.inline_data.data() + off, reinterpret_cast<const void*>(s.addr), s.length);
            s.addr = reinterpret_cast<std::uintptr_t>(h.inline_data.data() + off);
            off += s.length;
        }
    }
    return h;
}

} // namespace

int shadow_post_send(ShadowQp& q, ibv_send_wr* wr, ibv_send_wr** bad_wr) {
    std::lock_guard post(q.post_mutex);
    return post_locked(q, wr, bad_wr);
}

namespace {

int post_locked(ShadowQp& q, ibv_send_wr* wr, ibv_send_wr** bad_wr) {
    State& s = state();
    std::unique_lock lock(s.mu);
    if (q.mode == QpMode::Plain) {
        lock.unlock();
        const ProviderOps* ops = provider_ops(q.qp->context);
        return ops ? ops->post_send(q.qp, wr, bad_wr) : EINVAL;
    }
    if (q.mode != QpMode::Tent) {
        for (; wr; wr = wr->next) q.held_sends.push_back(hold(*wr));
        return 0;
    }
    for (; wr; wr = wr->next) {
        if ((wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_SEND_WITH_IMM) || wr->num_sge < 0) {
            TENT_ERROR("interpose-opcode", "interposer: qp 0x%x: work request opcode %d is not carried by tent yet",
                       q.qp->qp_num, static_cast<int>(wr->opcode));
            if (bad_wr) *bad_wr = wr;
            return EINVAL;
        }
        InFlight f;
        f.q = s.qps.count(q.qp) ? s.qps[q.qp] : nullptr;
        if (!f.q) {
            if (bad_wr) *bad_wr = wr;
            return EINVAL;
        }
        if (!gather(q, *wr, f)) {
            if (bad_wr) *bad_wr = wr;
            return ENOMEM;
        }
        f.seq = q.sq_base + q.sq.size();
        SendSlot slot;
        slot.wr_id = wr->wr_id;
        slot.signaled = q.sig_all || (wr->send_flags & IBV_SEND_SIGNALED);
        slot.opcode = IBV_WC_SEND;
        slot.byte_len = static_cast<std::uint32_t>(f.length - sizeof(MessageHeader));
        q.sq.push_back(slot);
        std::uint64_t cookie = s.next_cookie++;
        const std::uint8_t* data = f.buffer.data.get();
        std::size_t len = f.length;
        s.inflight.emplace(cookie, std::move(f));
        // tent's threads take the state mutex in their callbacks: post
        // without it (the post mutex keeps the QP's order).
        lock.unlock();
        int rc;
        {
            TentScope scope;
            rc = tent_post_send(q.peer, data, len, TENT_PRIORITY_HIGH, TENT_TRANSPORT_ANY, cookie);
        }
        lock.lock();
        if (rc != TENT_OK) {
            TENT_ERROR("interpose-post", "interposer: qp 0x%x: tent_post_send: %s", q.qp->qp_num, tent_strerror(rc));
            if (auto it = s.inflight.find(cookie); it != s.inflight.end()) {
                g_pool->release(std::move(it->second.buffer));
                s.inflight.erase(it);
            }
            q.sq.pop_back();
            if (bad_wr) *bad_wr = wr;
            return ENOMEM;
        }
    }
    return 0;
}

} // namespace

} // namespace tent::interpose
