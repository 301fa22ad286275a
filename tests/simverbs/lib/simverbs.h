// simverbs internals: the objects behind the verbs handles and the process-wide
// engine (ports, links, progress thread). Handles given to applications are the
// first member of each object, so a handle converts back with a static cast.
//
// How it works, in one paragraph: every simulated port listens on an AF_UNIX
// socket named after its address (<rundir>/port-127.x.y.z.sock). A QP moved
// to RTR finds its peer's port from the destination GID and sends packets
// (wire.h) over one stream per (local port, remote port). The target's
// progress thread (or any of its threads polling an empty CQ) executes each
// request in PSN order - checking rkey, bounds and access flags for one-sided
// operations, matching receives for sends - and answers with an ACK, a NAK or
// a response. The requester completes work requests in order from those
// answers; its ACK timer (4.096 us * 2^timeout) and retry_cnt drive go-back-N
// retransmission and, finally, IBV_WC_RETRY_EXC_ERR and the flush. Faults
// (faults.cpp) act where a real fabric would: packets lost at the port, acks
// lost, completions failed. Rate cap and delay are applied by stamping each
// packet with the time it may be delivered; the receiver holds it until then.
#pragma once

#include <infiniband/verbs.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "wire.h"

#define SV_EXPORT extern "C" __attribute__((visibility("default")))

namespace sv {

uint64_t now_ns();

// Large packet buffers are recycled (buffer_pool.cpp): freshly allocated
// memory costs a page fault per page, more than the copy into it.
uint8_t* pool_get(size_t n);
void pool_put(uint8_t* p, size_t n);

// A packet buffer. Not zero-filled: every byte is written before it is sent.
class Bytes {
 public:
  explicit Bytes(size_t n) : p_(pool_get(n)), n_(n) {}
  Bytes(const Bytes& o) : Bytes(o.n_) { memcpy(p_, o.p_, n_); }
  Bytes& operator=(const Bytes&) = delete;
  ~Bytes() { pool_put(p_, n_); }
  uint8_t* data() { return p_; }
  const uint8_t* data() const { return p_; }
  size_t size() const { return n_; }

 private:
  uint8_t* p_;
  size_t n_;
};
using PktPtr = std::shared_ptr<Bytes>;

inline PktHdr* hdr_of(const PktPtr& p) { return reinterpret_cast<PktHdr*>(p->data()); }
PktPtr make_pkt(PktType type, uint32_t payload_len);

struct Context;
struct Qp;

// Fault switches of one port, set by the control socket or SIMVERBS_FAULTS.
struct Faults {
  double drop_rate = 0;      // probability each packet in or out is lost
  int fail_status = -1;      // ibv_wc_status to inject, -1 = off
  long fail_after = -1;      // inject once after this many more send completions
  double fail_prob = 0;      // or inject with this probability
  unsigned ack_every = 0;    // every Nth request loses all its acks,
  uint64_t ack_sent = 0;     // counted apart for requests the port sends
  uint64_t ack_executed = 0; // and requests it executes as the target
};

// One simulated HCA (one port each). Lives as long as the process.
struct Port {
  int index = 0;
  std::string name;          // mlx5_0
  uint32_t ip = 0;           // 127.x.y.z, host order
  std::string sock_path;
  int listen_fd = -1;
  ibv_device* dev = nullptr;
  uint64_t guid = 0;

  std::atomic<bool> down{false};
  std::atomic<bool> fatal{false};

  std::mutex mu;             // faults, rate clock, contexts
  Faults faults;
  uint64_t next_free_ns = 0; // bandwidth cap: when the port's wire is free
  std::vector<Context*> contexts;

  std::atomic<uint64_t> tx_bytes{0}, rx_bytes{0}, tx_pkts{0}, rx_pkts{0}, drops{0};

  bool lose_packet();        // drop fault decision (port down or random drop)
  ibv_gid gid() const;
};

// A stream socket to another process's port. Outgoing links carry our
// requests and their responses; accepted links carry theirs.
struct Link {
  int fd = -1;
  Port* port = nullptr;
  uint32_t remote_ip = 0;
  bool outgoing = false;
  uint64_t last_connect_ns = 0;
  void* tag = nullptr;       // epoll cookie, made once

  std::mutex mu;                               // tx side
  std::deque<std::pair<PktPtr, size_t>> outq;  // packet, bytes already written
  bool want_out = false;

  // rx side, progress thread only
  std::vector<uint8_t> rxbuf;
  size_t rx_have = 0;
  PktPtr rx_cur;          // packet whose payload is still arriving
  size_t rx_cur_off = 0;
  std::deque<PktPtr> held;  // arrived, waiting for deliver_at
};

struct Mr {
  ibv_mr mr{};
  uint64_t iova = 0;
  int access = 0;
};

struct Srq;

// Objects other objects point at count their users: destroying one still in
// use fails with EBUSY, as in rdma-core, instead of leaving dangling pointers.
struct Pd {
  ibv_pd pd{};
  std::atomic<int> users{0};
};
inline Pd* pd_of(ibv_pd* p) { return reinterpret_cast<Pd*>(p); }

struct Cq {
  ibv_cq_ex cq{};
  std::atomic<int> users{0};
  std::mutex mu;
  std::deque<ibv_wc> q;
  bool armed = false;
  bool solicited_only = false;  // armed for solicited or failed completions only
  ibv_wc cur{};
  void push(const ibv_wc& wc, bool solicited = false);
};

struct Channel {
  ibv_comp_channel ch{};
  int wfd = -1;
};

struct RecvWr {
  uint64_t wr_id;
  std::vector<ibv_sge> sge;
};

struct Srq {
  ibv_srq srq{};
  std::atomic<int> users{0};
  std::mutex mu;
  std::deque<RecvWr> rq;
  uint32_t max_wr = 0, max_sge = 0, limit = 0;
  Context* ctx = nullptr;
};

// A send work request from posting until its completion.
struct SendEntry {
  uint64_t wr_id = 0;
  ibv_wc_opcode opcode = IBV_WC_SEND;
  bool signaled = true;
  uint32_t psn = 0;
  uint32_t byte_len = 0;
  PktPtr pkt;                       // kept for retransmission
  std::vector<ibv_sge> local;       // READ / atomic destination
  enum State { kSent, kDone, kError } state = kSent;
  ibv_wc_status status = IBV_WC_SUCCESS;
  bool ack_lost = false;            // ack-loss fault: its acks never arrive
  bool transmitted = false;
  uint64_t depart_ns = 0;           // when its last byte left the port
};

struct Ah {
  ibv_ah ah{};
  ibv_ah_attr attr{};
  uint32_t remote_ip = 0;
};

struct Qp {
  ibv_qp_ex qpx{};                  // qp_base is what the application sees
  Context* ctx = nullptr;
  Port* port = nullptr;
  std::mutex mu;
  ibv_qp_attr attr{};               // current attributes (ibv_query_qp)
  ibv_qp_cap cap{};
  bool sq_sig_all = false;
  Srq* srq = nullptr;
  uint32_t remote_ip = 0;
  Link* link = nullptr;

  // requester
  uint32_t next_psn = 0;
  std::deque<SendEntry> sq;
  uint64_t deadline_ns = 0;         // ack timeout of the oldest transmitted entry
  int retries_left = 0;
  int rnr_left = 0;
  uint64_t rnr_resume_ns = 0;       // RNR NAK: resend after this time
  uint32_t rnr_psn = 0;

  // responder
  uint32_t expected_psn = 0;
  std::deque<RecvWr> rq;
  uint64_t last_atomic_result = 0;
  // Coalesced acknowledgement (dispatch_mu): ACKs are cumulative, so one per
  // QP at the end of a receive round covers every request executed in it.
  bool ack_pending = false;
  Link* ack_link = nullptr;
  uint32_t ack_psn = 0;
  bool acks_lost = false;           // ack-loss fault at the target: acks from
  uint32_t acks_lost_from = 0;      // this psn on never leave

  uint32_t last_atomic_psn = UINT32_MAX;

  // extended send API (ibv_qp_ex wr_*): work requests being built
  std::vector<ibv_send_wr> build;
  std::vector<std::vector<ibv_sge>> build_sge;
  int build_err = 0;

  ibv_qp* base() { return &qpx.qp_base; }
};

struct Context {
  verbs_context vctx{};
  Port* port = nullptr;
  int async_wfd = -1;
  ibv_context* ibctx() { return &vctx.context; }
};

inline Context* ctx_of(ibv_context* c) {
  return reinterpret_cast<Context*>(reinterpret_cast<uint8_t*>(c) - offsetof(verbs_context, context));
}
inline Qp* qp_of(ibv_qp* q) { return reinterpret_cast<Qp*>(q); }
inline Cq* cq_of(ibv_cq* c) { return reinterpret_cast<Cq*>(c); }
inline Srq* srq_of(ibv_srq* s) { return reinterpret_cast<Srq*>(s); }
inline Mr* mr_of(ibv_mr* m) { return reinterpret_cast<Mr*>(m); }
inline Ah* ah_of(ibv_ah* a) { return reinterpret_cast<Ah*>(a); }

// Environment settings, read once at initialisation.
struct Settings {
  std::vector<std::string> devices;
  double rate_gbps = 0;     // 0 = uncapped
  double delay_us = 0;
  std::string fabric = "default";
  std::string dir = "/tmp/simverbs";
  std::string faults;
  // SIMVERBS_PORT_ADDRESSES: the address (host order) of port i, replacing
  // the derived 127.x.y.z; bad_port_addresses names an entry that is not one.
  std::vector<uint32_t> port_addresses;
  std::string bad_port_addresses;
};
Settings read_settings();

// The process-wide engine: ports, links, the progress thread.
class Engine {
 public:
  static Engine* get();     // nullptr if initialisation failed (errno set)

  std::vector<std::unique_ptr<Port>> ports;
  Settings settings;
  std::string rundir;

  // objects the progress thread looks up by number
  std::mutex map_mu;
  std::unordered_map<uint32_t, Qp*> qps;
  uint32_t next_qpn = 0x100;
  std::shared_mutex mr_mu;
  std::unordered_map<uint32_t, Mr*> mrs;
  uint32_t next_key = 0x1000;

  // held while the progress thread works on objects; destroy paths take it
  // once after unpublishing an object so no packet still uses it
  std::mutex dispatch_mu;

  Port* port_by_name(const std::string& name);
  Link* out_link(Port* port, uint32_t remote_ip);
  // Stamp the delivery time (rate cap + delay) and queue on the link.
  // Returns when the packet has left the port (later than now when capped).
  // An answer passes the time its request arrived (ready_ns): an adapter
  // starts answering then, whenever this process's threads get to it, so
  // one port's answers do not wait for another's to be built and written.
  uint64_t send(Link* link, const PktPtr& pkt, uint64_t ready_ns = 0);
  // While one is open on a thread, send() only queues and the socket writes
  // happen when it closes: post_send opens one before taking the QP's mutex,
  // so the progress thread (which needs that mutex to take ACKs) does not
  // wait for a large payload's trip through the kernel.
  class DeferredWrites {
   public:
    DeferredWrites();
    ~DeferredWrites();
    DeferredWrites(const DeferredWrites&) = delete;
    DeferredWrites& operator=(const DeferredWrites&) = delete;

   private:
    std::vector<Link*> links_;
    DeferredWrites* outer_;
    friend class Engine;
  };
  void wake();
  // one round of receive/execute; from_app: only if no other thread is at it
  bool progress(int timeout_ms, bool from_app);
  void note_held() { have_held_ = true; }
  void register_qp(Qp* qp);
  void unregister_qp(Qp* qp);
  Qp* find_qp(uint32_t qpn);
  Mr* find_mr(uint32_t key);     // caller holds mr_mu (shared)

 private:
  Engine() = default;
  bool init();
  void loop();
  void accept_on(Port* port);
  void add_link_fd(Link* l);
  void read_link(Link* l);
  void flush_link(Link* l, bool from_progress);
  void write_queued(Link* l);
  // The link's queue, front first, until it is empty or the socket is full
  // or broken; l->mu held.
  enum class Written { kAll, kSocketFull, kPeerGone };
  Written write_outq_locked(Link* l);
  void want_out_locked(Link* l, bool want);  // (un)subscribe to EPOLLOUT
  void deliver_held(uint64_t now, uint64_t* next_ns);
  void close_link(Link* l);
  void serve_control();

  std::atomic<bool> faults_applied_{false};
  bool have_held_ = false;     // some link holds delayed packets (dispatch_mu)
  uint64_t last_scan_ns_ = 0;  // last timeout scan (progress thread)
  uint64_t timer_at_ns_ = 0;   // when timer_fd_ fires next; 0: not armed (dispatch_mu)
  int epfd_ = -1, wake_fd_ = -1, timer_fd_ = -1, ctl_fd_ = -1;
  std::string ctl_path_;
  std::mutex link_mu_;
  std::map<std::pair<int, uint32_t>, Link*> out_links_;
  std::vector<std::unique_ptr<Link>> links_;
  std::thread thread_;
  friend struct EngineAccess;
};

// requester.cpp
void on_response(Link* link, const PktPtr& pkt);
void check_timeouts(uint64_t now, uint64_t* next_ns);
void complete_sq_locked(Qp* qp);                  // emit in-order completions
void qp_to_error_locked(Qp* qp);                  // flush everything
uint64_t ack_timeout_ns(uint8_t timeout);
// responder.cpp
void on_request(Link* link, const PktPtr& pkt);
void flush_acks();                                // send coalesced ACKs (dispatch_mu held)
void forget_pending_ack(Qp* qp);                  // QP going away (dispatch_mu held)
void forget_all_pending_acks();                   // forked child
// post.cpp
int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad);
int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad);
int post_srq_recv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad);
void transmit_locked(Qp* qp, SendEntry& e);
// Transmit waiting requests in order, within the QP's max_rd_atomic limit.
void pump_locked(Qp* qp);
// cq.cpp
int poll_cq(ibv_cq* cq, int n, ibv_wc* wc);
int req_notify_cq(ibv_cq* cq, int solicited_only);
ibv_cq_ex* create_cq_ex(ibv_context* c, ibv_cq_init_attr_ex* attr);
// qp.cpp
ibv_qp* create_qp_ex(ibv_context* c, ibv_qp_init_attr_ex* attr);
ibv_srq* create_srq_ex(ibv_context* c, ibv_srq_init_attr_ex* attr);
// qp_ex.cpp
void install_qp_ex_ops(Qp* qp);
// device.cpp
int query_port(ibv_context* c, uint8_t port, ibv_port_attr* attr, size_t len);
int query_device_ex(ibv_context* c, const ibv_query_device_ex_input* in, ibv_device_attr_ex* attr, size_t len);
// async.cpp
void post_async(Context* ctx, ibv_event_type type, void* element);
void port_event(Port* port, ibv_event_type type);
// faults.cpp
std::string run_command(const std::string& line);   // control protocol, reply lines
void apply_env_faults(const std::string& spec);
bool inject_failure(Port* port, ibv_wc_status* status);   // fail fault for one completion
bool take_ack_loss(Port* port, bool as_target);
const char* status_name(int st);
// memory.cpp
// Validate a local SGE against the MR table: true if the lkey covers it.
bool check_lkey(const ibv_sge& sge, ibv_pd* pd, int need_access);
// Translate a remote access; nullptr on failure.
uint8_t* check_rkey(uint32_t rkey, uint64_t addr, uint64_t len, int need_access, ibv_pd* pd);

}  // namespace sv
