// The interposer runtime's shared part (runtime.h is its interface to the
// rest of the interposer): the tables of queue pairs, completion queues and
// shared receive queues under one mutex, tent's engine, and what the
// runtime's files (runtime_*.cpp, one concern each) call of each other.
#pragma once

#include <infiniband/verbs.h>
#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime.h"
#include "send_pool.h"
#include "shadow_qp.h"
#include "tent/tent.h"

namespace tent::interpose {

// What feeds an application CQ: completions tent produced, and how many
// QPs on it the provider may complete work of (all but the carried ones:
// once none is left, polling the provider's CQ is pointless).
struct CqFeed {
    std::deque<ibv_wc> wcs;
    int provider_qps = 0;  // a QP with both queues on the CQ counts twice
    bool carried = false;  // a carried QP uses it
    bool provider_owed = false;  // tent's filled the last poll: the provider's go first (CqTurn)
};

// Everything the interposer tracks, under mu (the program's threads, tent's
// threads in on_message() and the harvester take it).
struct State {
    std::mutex mu;
    std::condition_variable keys_arrived;
    std::unordered_map<const ibv_qp*, std::shared_ptr<ShadowQp>> qps;
    std::unordered_map<std::uint32_t, std::shared_ptr<ShadowQp>> by_token;
    std::unordered_map<const ibv_cq*, CqFeed> cqs;
    std::unordered_map<const ibv_srq*, std::shared_ptr<ShadowSrq>> srqs;
    std::unordered_map<std::uint64_t, PooledBuffer> own;  // the interposer's own messages in flight
    std::map<std::string, tent_peer_t*> peers;
    std::uint32_t next_token = 1;
    std::uint64_t next_own = 1;
};

// The tables: one per process, never freed (runtime_state.cpp).
State& state();
// Queues a completion tent produced for CQ, signalling its channel if armed
// (state mutex held).
void push_wc(State& s, ibv_cq* cq, const ibv_wc& wc);

// The engine and what lives with it (runtime_engine.cpp).
extern std::atomic<tent_engine_t*> g_engine;
extern SendPool* g_pool;
extern std::atomic<bool> g_stop;
// In a child of fork(): the engine (and any that starts) is the parent's.
bool engine_is_inherited();
void shut_down();

// A tent operation's cookie names what it is for without a table: the
// QP's token, whether it is the slot's message (or a one-sided part), and
// the slot's sequence number (its low 31 bits: a QP never has 2^31 work
// requests outstanding). Token 0 marks the interposer's own messages
// (region announcements), which keep their buffer in State::own.
inline constexpr std::uint64_t kSeqMask = 0x7fffffff;
inline constexpr std::uint64_t kMessageBit = std::uint64_t{1} << 31;

inline std::uint64_t op_cookie(const ShadowQp& q, std::uint64_t seq, bool message) {
    return (std::uint64_t{q.token} << 32) | (message ? kMessageBit : 0) | (seq & kSeqMask);
}

// The sequence number of the slot COOKIE (op_cookie) names.
inline std::uint64_t cookie_seq(const ShadowQp& q, std::uint64_t cookie) {
    return q.sq_base + (((cookie & kSeqMask) - (q.sq_base & kSeqMask)) & kSeqMask);
}

// The order of one-sided parts (runtime_order.cpp).
void count_inflight(ShadowQp& q, Access a, int d);
void start_or_hold(ShadowQp& q, SendSlot& slot, std::vector<TentCall>& calls, std::size_t first);
void release_held(ShadowQp& q, std::vector<TentCall>& calls);
void drop_held(ShadowQp& q);

// Work requests, from ibv_post_send (runtime_prepare.cpp) to their
// completion (runtime_send.cpp).
int prepare(State& s, std::unique_lock<std::mutex>& lock, ShadowQp& q, const ibv_send_wr& wr,
            std::vector<TentCall>& calls);
int post_locked(ShadowQp& q, ibv_send_wr* wr, ibv_send_wr** bad_wr);
void retire_sends(State& s, ShadowQp& q);
void settle_completions(const tent_completion_t* c, int n);

// Receives (runtime_receive.cpp) and shared receive queues (runtime_srq.cpp).
void match_receives(State& s, ShadowQp& q);
void take_message(State& s, ShadowQp& q, const MessageHeader& h, const std::uint8_t* p, std::size_t n);
int hold_receives(std::deque<HeldRecv>& recvs, ibv_recv_wr* wr, ibv_recv_wr** bad_wr);
std::shared_ptr<ShadowSrq> shadow_srq(State& s, ibv_srq* srq);

// Hands held receives to the adapter (state mutex held: a receive the
// program posts meanwhile, which goes to the adapter once it sees the
// queue plain, must not overtake them; the provider's own entry points do
// not come back into the interposer).
template <typename Post>
void repost_receives(std::deque<HeldRecv>& recvs, Post post) {
    for (auto& r : recvs) {
        ibv_recv_wr wr{};
        wr.wr_id = r.wr_id;
        wr.sg_list = r.sge();
        wr.num_sge = r.num_sge;
        ibv_recv_wr* bad = nullptr;
        post(&wr, &bad);
    }
}

// A queue pair's errors (runtime_failure.cpp).
bool tent_done_with(const ShadowQp& q);
void flush_receives(State& s, ShadowQp& q);
void fail_qp(State& s, ShadowQp& q);
void lose_peer_qp(State& s, ShadowQp& q);
void peer_qp_gone(State& s, ShadowQp& q);
void program_errored(State& s, ShadowQp& q);

// Messages between the interposers (runtime_messages.cpp).
PooledBuffer build_message(const ShadowQp& q, std::uint32_t flags, std::uint32_t imm, std::size_t payload,
                           std::size_t* length);
void announce_regions(const std::shared_ptr<ShadowQp>& q);
void on_message(tent_peer_t* peer, const void* data, size_t length, void*);

// Taking tent's completions (runtime_harvest.cpp).
int settle_ready();
void harvest();

} // namespace tent::interpose
