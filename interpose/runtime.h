// The interposer's state: the application's queue pairs and completion
// queues it knows, tent's engine (created when the first queue pair looks
// for its peer) and the thread that harvests tent's completions.
#pragma once

#include <infiniband/verbs.h>

#include <memory>

#include "shadow_qp.h"

namespace tent::interpose {

// Queue pairs ---------------------------------------------------------------

// Every QP the application created on an adopted context: until it is
// carried by tent, the provider may complete its work on its CQs.
void provider_qp_created(const ibv_qp* qp);
// Records an RC QP the application created on an adopted context.
void track_qp(ibv_qp* qp, const ibv_qp_init_attr& attr);
// Notes a region the application registered (with iova and access).
void mr_registered(ibv_mr* mr, std::uint64_t iova, int access);
// Forgets QP before it is destroyed.
void forget_qp(ibv_qp* qp);
// The shadow of QP, or nullptr when the interposer does not track it.
std::shared_ptr<ShadowQp> find_qp(const ibv_qp* qp);
// Whether tent carries QP and has not failed it: an error the adapter
// reports for the QP itself (its device's fatal error) is then not the
// program's, whose work goes over tent's rails.
bool carried_and_working(const ibv_qp* qp);
// The same for the hot path (posts, ibv_wr_*): no lock or reference count
// per call; valid while the program does not destroy QP.
ShadowQp* shadow_for(const ibv_qp* qp);
// After a successful ibv_modify_qp: RTR starts looking for the peer, ERR
// flushes the QP's work, RESET makes it a new candidate for tent.
void qp_modified(ibv_qp* qp, const ibv_qp_attr& attr, int attr_mask);

// Hot path (from the dispatch ops); return what the provider's op would.
int shadow_post_send(ShadowQp& q, ibv_send_wr* wr, ibv_send_wr** bad_wr);
int shadow_post_recv(ShadowQp& q, ibv_recv_wr* wr, ibv_recv_wr** bad_wr);
// ibv_post_srq_recv on an adopted context's SRQ (shadow_qp.h, ShadowSrq).
int shadow_post_srq_recv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad_wr);
// A queue pair on SRQ passes through: so does the SRQ from now on.
void srq_goes_plain(ibv_srq* srq);
// ibv_modify_srq / ibv_query_srq of an SRQ whose receives the interposer
// holds: the limit is armed (and reported) here, the rest goes to the
// adapter through REAL. An SRQ that passes through is the adapter's alone.
int shadow_modify_srq(ibv_srq* srq, ibv_srq_attr* attr, int attr_mask,
                      int (*real)(ibv_srq*, ibv_srq_attr*, int));
int shadow_query_srq(ibv_srq* srq, ibv_srq_attr* attr, int (*real)(ibv_srq*, ibv_srq_attr*));
// Forgets SRQ before it is destroyed.
void forget_srq(ibv_srq* srq);
// Whose completions a poll of a CQ gives. TentOnly: only carried QPs use
// the CQ (the provider's stays empty and need not be polled). TentFirst:
// tent's, then the provider's for the rest. ProviderFirst: tent's filled
// the CQ's last poll while the provider's QPs share it, so this one starts
// with the provider's (a carried QP busy enough to fill every poll must not
// starve a QP that passes through, nor overflow the adapter's CQ).
enum class CqTurn { TentOnly, TentFirst, ProviderFirst };
// Moves up to max completions tent produced for CQ into wc; returns how
// many (none when *turn is ProviderFirst: the caller polls the provider,
// then takes what is queued). With none queued, drives tent on the calling
// thread first.
int take_completions(const ibv_cq* cq, int max, ibv_wc* wc, CqTurn* turn);
// The same without driving tent and never ProviderFirst: only what is
// queued already (the rest of a poll that took some, as an adapter's CQ
// gives what it holds).
int take_queued_completions(const ibv_cq* cq, int max, ibv_wc* wc, CqTurn* turn);
// The program armed a CQ and may sleep on its channel: tent's completions
// are harvested for it in the background.
void program_blocks();
// The program sleeps in ibv_get_cq_event: its thread drives tent (and
// settles what completes, which may signal the channel) until a completion
// is settled, FD is readable, a signal comes or TIMEOUT_MS pass. Events on
// CHANNEL that its settling queues are the caller's to take (QuietEvents). Waking
// for the rail itself saves the harvester's wake-up on the way of every
// event. CannotDrive: no engine, or it cannot be driven from here
// (caller_progress=false); the caller waits on FD alone.
enum class WaitOutcome { Settled, Woken, CannotDrive };
WaitOutcome drive_while_waiting(int fd, int timeout_ms, const ibv_comp_channel* channel);

// Discovery outcome ---------------------------------------------------------

// The peer runs tent: the QP's work goes over tent from now on.
void become_tent(const std::shared_ptr<ShadowQp>& q, tent_peer_t* peer, std::uint32_t peer_token);
// No tent peer: the held-back work goes to the real QP, then everything
// passes through.
void become_plain(const std::shared_ptr<ShadowQp>& q, const char* why);

// Held by every thread while it uses tent's engine (the program's threads
// in their verbs calls, the discovery threads): at exit shut_down() frees
// the engine only once no thread holds one, and none is usable from then on.
class InsideEngine {
public:
    InsideEngine();
    ~InsideEngine();
    InsideEngine(const InsideEngine&) = delete;
    InsideEngine& operator=(const InsideEngine&) = delete;
    // False once the process exits: the engine must not be touched.
    bool usable() const;
};

// The process's engine, created on first use (nullptr if that failed, once
// the process exits, or in a child of fork()); its address blob for the
// peer. Callers hold an InsideEngine.
tent_engine_t* engine();
// Why engine() gave none, for the log.
const char* why_no_engine();
// A connection to the engine whose address is blob (one per peer engine).
tent_peer_t* peer_for(const std::string& blob);

} // namespace tent::interpose
