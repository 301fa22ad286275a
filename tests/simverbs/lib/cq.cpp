// Completion queues and completion channels. A channel is a pipe: arming a CQ
// and then adding a completion writes the CQ's pointer into it, so the
// channel's fd really becomes readable and ibv_get_cq_event reads the CQ back.
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "simverbs.h"

namespace sv {

void Cq::push(const ibv_wc& wc, bool solicited) {
  bool notify = false;
  {
    std::lock_guard<std::mutex> g(mu);
    q.push_back(wc);
    if (armed && cq.channel && (!solicited_only || solicited || wc.status != IBV_WC_SUCCESS)) {
      armed = false;
      notify = true;
    }
  }
  if (notify) {
    Channel* ch = reinterpret_cast<Channel*>(cq.channel);
    ibv_cq* p = ibv_cq_ex_to_cq(&cq);
    ssize_t r = write(ch->wfd, &p, sizeof p);
    (void)r;
  }
}

int poll_cq(ibv_cq* c, int n, ibv_wc* wc) {
  Cq* cq = cq_of(c);
  for (int round = 0; round < 2; round++) {
    {
      std::lock_guard<std::mutex> g(cq->mu);
      int i = 0;
      for (; i < n && !cq->q.empty(); i++) {
        wc[i] = cq->q.front();
        cq->q.pop_front();
      }
      if (i || round) return i;
    }
    // nothing yet: make progress in this thread rather than wait for ours
    if (!Engine::get()->progress(0, true)) break;
  }
  // A busy-polling caller would otherwise hold the CPU that the peer
  // process or our progress thread needs to produce its completion.
  sched_yield();
  return 0;
}

int req_notify_cq(ibv_cq* c, int solicited_only) {
  Cq* cq = cq_of(c);
  std::lock_guard<std::mutex> g(cq->mu);
  cq->armed = true;
  cq->solicited_only = solicited_only != 0;
  return 0;
}

namespace {

// Extended polling: start_poll/next_poll pop into `cur`, readers read it.
Cq* ex(ibv_cq_ex* c) { return reinterpret_cast<Cq*>(c); }

int take_one(Cq* cq) {
  if (cq->q.empty()) return ENOENT;
  cq->cur = cq->q.front();
  cq->q.pop_front();
  cq->cq.status = cq->cur.status;
  cq->cq.wr_id = cq->cur.wr_id;
  return 0;
}

int ex_start_poll(ibv_cq_ex* c, ibv_poll_cq_attr*) {
  Cq* cq = ex(c);
  cq->mu.lock();
  int rc = take_one(cq);
  if (rc) cq->mu.unlock();  // on ENOENT the poll is over and end_poll is not called
  return rc;
}
int ex_next_poll(ibv_cq_ex* c) { return take_one(ex(c)); }
void ex_end_poll(ibv_cq_ex* c) { ex(c)->mu.unlock(); }
ibv_wc_opcode ex_opcode(ibv_cq_ex* c) { return ex(c)->cur.opcode; }
uint32_t ex_vendor_err(ibv_cq_ex* c) { return ex(c)->cur.vendor_err; }
uint32_t ex_byte_len(ibv_cq_ex* c) { return ex(c)->cur.byte_len; }
__be32 ex_imm(ibv_cq_ex* c) { return ex(c)->cur.imm_data; }
uint32_t ex_qp_num(ibv_cq_ex* c) { return ex(c)->cur.qp_num; }
uint32_t ex_src_qp(ibv_cq_ex* c) { return ex(c)->cur.src_qp; }
unsigned int ex_wc_flags(ibv_cq_ex* c) { return ex(c)->cur.wc_flags; }
uint32_t ex_slid(ibv_cq_ex* c) { return ex(c)->cur.slid; }
uint8_t ex_sl(ibv_cq_ex* c) { return ex(c)->cur.sl; }
uint8_t ex_dlid_path_bits(ibv_cq_ex* c) { return ex(c)->cur.dlid_path_bits; }
uint64_t ex_ts(ibv_cq_ex*) { return now_ns(); }
// fields simverbs never produces read as zero rather than crash
uint16_t ex_cvlan(ibv_cq_ex*) { return 0; }
uint32_t ex_flow_tag(ibv_cq_ex*) { return 0; }
void ex_tm_info(ibv_cq_ex*, ibv_wc_tm_info* tm) { memset(tm, 0, sizeof *tm); }

Cq* new_cq(ibv_context* c, int cqe, void* cq_context, ibv_comp_channel* channel) {
  if (!c || cqe < 1 || cqe > 4194303) {
    errno = EINVAL;
    return nullptr;
  }
  auto* cq = new Cq();
  ibv_cq_ex& x = cq->cq;
  x.context = c;
  x.channel = channel;
  x.cq_context = cq_context;
  x.cqe = cqe;
  pthread_mutex_init(&x.mutex, nullptr);
  pthread_cond_init(&x.cond, nullptr);
  x.start_poll = ex_start_poll;
  x.next_poll = ex_next_poll;
  x.end_poll = ex_end_poll;
  x.read_opcode = ex_opcode;
  x.read_vendor_err = ex_vendor_err;
  x.read_byte_len = ex_byte_len;
  x.read_imm_data = ex_imm;
  x.read_qp_num = ex_qp_num;
  x.read_src_qp = ex_src_qp;
  x.read_wc_flags = ex_wc_flags;
  x.read_slid = ex_slid;
  x.read_sl = ex_sl;
  x.read_dlid_path_bits = ex_dlid_path_bits;
  x.read_completion_ts = ex_ts;
  x.read_completion_wallclock_ns = ex_ts;
  x.read_cvlan = ex_cvlan;
  x.read_flow_tag = ex_flow_tag;
  x.read_tm_info = ex_tm_info;
  if (channel) __atomic_add_fetch(&channel->refcnt, 1, __ATOMIC_SEQ_CST);
  return cq;
}

}  // namespace

ibv_cq_ex* create_cq_ex(ibv_context* c, ibv_cq_init_attr_ex* attr) {
  if (!attr || (attr->comp_mask & ~uint32_t(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD))) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  Cq* cq = new_cq(c, int(attr->cqe), attr->cq_context, attr->channel);
  return cq ? &cq->cq : nullptr;
}

}  // namespace sv

using namespace sv;

SV_EXPORT ibv_comp_channel* ibv_create_comp_channel(ibv_context* c) {
  if (!c) {
    errno = EINVAL;
    return nullptr;
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return nullptr;
  // the library never blocks writing an event; the application's reads block
  fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) & ~O_NONBLOCK);
  auto* ch = new Channel();
  ch->ch.context = c;
  ch->ch.fd = fds[0];
  ch->ch.refcnt = 0;
  ch->wfd = fds[1];
  return &ch->ch;
}

SV_EXPORT int ibv_destroy_comp_channel(ibv_comp_channel* c) {
  if (!c) return EINVAL;
  if (__atomic_load_n(&c->refcnt, __ATOMIC_SEQ_CST) != 0) return EBUSY;
  Channel* ch = reinterpret_cast<Channel*>(c);
  close(ch->ch.fd);
  close(ch->wfd);
  delete ch;
  return 0;
}

SV_EXPORT ibv_cq* ibv_create_cq(ibv_context* c, int cqe, void* cq_context, ibv_comp_channel* channel,
                                int comp_vector) {
  if (c && (comp_vector < 0 || comp_vector >= c->num_comp_vectors)) {
    errno = EINVAL;
    return nullptr;
  }
  Cq* cq = new_cq(c, cqe, cq_context, channel);
  return cq ? ibv_cq_ex_to_cq(&cq->cq) : nullptr;
}

SV_EXPORT int ibv_resize_cq(ibv_cq* c, int cqe) {
  if (!c || cqe < 1 || cqe > 4194303) return EINVAL;
  Cq* cq = cq_of(c);
  std::lock_guard<std::mutex> g(cq->mu);
  if (size_t(cqe) < cq->q.size()) return EINVAL;  // would lose completions
  c->cqe = cqe;
  return 0;
}

SV_EXPORT int ibv_destroy_cq(ibv_cq* c) {
  if (!c) return EINVAL;
  if (cq_of(c)->users.load() > 0) return EBUSY;
  Engine* e = Engine::get();
  if (e) std::lock_guard<std::mutex> g(e->dispatch_mu);
  if (c->channel) __atomic_sub_fetch(&c->channel->refcnt, 1, __ATOMIC_SEQ_CST);
  Cq* cq = cq_of(c);
  pthread_mutex_destroy(&cq->cq.mutex);
  pthread_cond_destroy(&cq->cq.cond);
  delete cq;
  return 0;
}

SV_EXPORT int ibv_get_cq_event(ibv_comp_channel* channel, ibv_cq** cq, void** cq_context) {
  if (!channel || !cq) {
    errno = EINVAL;
    return -1;
  }
  ibv_cq* p = nullptr;
  ssize_t n = read(channel->fd, &p, sizeof p);
  if (n != ssize_t(sizeof p)) return -1;
  *cq = p;
  if (cq_context) *cq_context = p->cq_context;
  return 0;
}

SV_EXPORT void ibv_ack_cq_events(ibv_cq* cq, unsigned int nevents) {
  if (!cq) return;
  pthread_mutex_lock(&cq->mutex);
  cq->comp_events_completed += nevents;
  pthread_cond_signal(&cq->cond);
  pthread_mutex_unlock(&cq->mutex);
}
