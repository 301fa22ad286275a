// RC semantics of simverbs: data movement checked byte by byte, HCA-side
// protection checks, RNR, timeouts with retry_cnt, flushes, and the faults the
// control socket injects.
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <poll.h>

#include "verbs_pair.h"

using namespace svtest;

static void setup() { isolate(); }
TestSuite(simverbs_rc, .init = setup, .timeout = 30);

static void fill(std::vector<uint8_t>& v, size_t off, size_t len, unsigned seed) {
  for (size_t i = 0; i < len; i++) v[off + i] = uint8_t((i * 131 + seed) ^ (i >> 8));
}

Test(simverbs_rc, send_with_imm_scatters_every_byte) {
  Pair pr;
  cr_assert(pr.open());
  fill(pr.a.buf, 0, 3000, 7);
  // three gather entries on the sender, two scatter entries on the receiver
  ibv_sge rs[2] = {{uint64_t(uintptr_t(&pr.b.buf[0])), 1000, pr.b.mr->lkey},
                   {uint64_t(uintptr_t(&pr.b.buf[5000])), 4000, pr.b.mr->lkey}};
  ibv_recv_wr rwr{};
  rwr.wr_id = 77;
  rwr.sg_list = rs;
  rwr.num_sge = 2;
  ibv_recv_wr* rbad;
  cr_assert_eq(ibv_post_recv(pr.b.qp, &rwr, &rbad), 0);
  ibv_sge ss[3] = {{uint64_t(uintptr_t(&pr.a.buf[0])), 1000, pr.a.mr->lkey},
                   {uint64_t(uintptr_t(&pr.a.buf[1000])), 1000, pr.a.mr->lkey},
                   {uint64_t(uintptr_t(&pr.a.buf[2000])), 1000, pr.a.mr->lkey}};
  ibv_send_wr swr{};
  swr.wr_id = 5;
  swr.sg_list = ss;
  swr.num_sge = 3;
  swr.opcode = IBV_WR_SEND_WITH_IMM;
  swr.imm_data = htonl(0xabcd1234);
  swr.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* sbad;
  cr_assert_eq(ibv_post_send(pr.a.qp, &swr, &sbad), 0);
  ibv_wc w1 = wait_wc(pr.a.cq), w2 = wait_wc(pr.b.cq);
  cr_assert_eq(w1.status, IBV_WC_SUCCESS);
  cr_expect_eq(w1.wr_id, 5u);
  cr_expect_eq(w1.opcode, IBV_WC_SEND);
  cr_assert_eq(w2.status, IBV_WC_SUCCESS);
  cr_expect_eq(w2.wr_id, 77u);
  cr_expect_eq(w2.opcode, IBV_WC_RECV);
  cr_expect_eq(w2.byte_len, 3000u);
  cr_expect(w2.wc_flags & IBV_WC_WITH_IMM);
  cr_expect_eq(ntohl(w2.imm_data), 0xabcd1234u);
  cr_expect_eq(w2.src_qp, pr.a.qp->qp_num);
  cr_expect_eq(w2.qp_num, pr.b.qp->qp_num);
  cr_expect_eq(memcmp(&pr.b.buf[0], &pr.a.buf[0], 1000), 0);
  cr_expect_eq(memcmp(&pr.b.buf[5000], &pr.a.buf[1000], 2000), 0);
  for (size_t i = 1000; i < 5000; i++) cr_assert_eq(pr.b.buf[i], 0, "byte %zu outside the SGEs written", i);
}

Test(simverbs_rc, write_then_read_back_every_byte) {
  Pair pr;
  cr_assert(pr.open());
  const uint32_t len = 512 * 1024;
  fill(pr.a.buf, 0, len, 3);
  cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_RDMA_WRITE, &pr.a.buf[0], len, pr.a.mr->lkey,
                         uint64_t(uintptr_t(&pr.b.buf[4096])), pr.b.mr->rkey, 1),
               0);
  ibv_wc wc = wait_wc(pr.a.cq);
  cr_assert_eq(wc.status, IBV_WC_SUCCESS);
  cr_expect_eq(wc.opcode, IBV_WC_RDMA_WRITE);
  cr_assert_eq(memcmp(&pr.b.buf[4096], &pr.a.buf[0], len), 0);
  // the target never polled: its CQ stays empty for a one-sided write
  ibv_wc none;
  cr_expect_eq(ibv_poll_cq(pr.b.cq, 1, &none), 0);
  // read it back into another part of a's buffer
  cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_RDMA_READ, &pr.a.buf[len], len, pr.a.mr->lkey,
                         uint64_t(uintptr_t(&pr.b.buf[4096])), pr.b.mr->rkey, 2),
               0);
  wc = wait_wc(pr.a.cq);
  cr_assert_eq(wc.status, IBV_WC_SUCCESS);
  cr_expect_eq(wc.opcode, IBV_WC_RDMA_READ);
  cr_expect_eq(wc.byte_len, len);
  cr_assert_eq(memcmp(&pr.a.buf[len], &pr.a.buf[0], len), 0);
}

Test(simverbs_rc, write_with_imm_consumes_a_receive) {
  Pair pr;
  cr_assert(pr.open());
  fill(pr.a.buf, 0, 100, 9);
  cr_assert_eq(post_recv(pr.b.qp, &pr.b.buf[0], 0, pr.b.mr->lkey, 42), 0);
  ibv_sge sge{uint64_t(uintptr_t(&pr.a.buf[0])), 100, pr.a.mr->lkey};
  ibv_send_wr wr{};
  wr.wr_id = 1;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.imm_data = htonl(99);
  wr.wr.rdma.remote_addr = uint64_t(uintptr_t(&pr.b.buf[8192]));
  wr.wr.rdma.rkey = pr.b.mr->rkey;
  ibv_send_wr* bad;
  cr_assert_eq(ibv_post_send(pr.a.qp, &wr, &bad), 0);
  cr_assert_eq(wait_wc(pr.a.cq).status, IBV_WC_SUCCESS);
  ibv_wc rw = wait_wc(pr.b.cq);
  cr_assert_eq(rw.status, IBV_WC_SUCCESS);
  cr_expect_eq(rw.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  cr_expect_eq(rw.wr_id, 42u);
  cr_expect_eq(ntohl(rw.imm_data), 99u);
  cr_expect_eq(memcmp(&pr.b.buf[8192], &pr.a.buf[0], 100), 0);
}

Test(simverbs_rc, atomics_return_the_old_value) {
  Pair pr;
  cr_assert(pr.open());
  uint64_t* target = reinterpret_cast<uint64_t*>(&pr.b.buf[64]);
  *target = 1000;
  uint64_t* result = reinterpret_cast<uint64_t*>(&pr.a.buf[0]);
  ibv_sge sge{uint64_t(uintptr_t(result)), 8, pr.a.mr->lkey};
  ibv_send_wr wr{};
  wr.wr_id = 1;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.atomic.remote_addr = uint64_t(uintptr_t(target));
  wr.wr.atomic.rkey = pr.b.mr->rkey;
  wr.wr.atomic.compare_add = 5;
  ibv_send_wr* bad;
  cr_assert_eq(ibv_post_send(pr.a.qp, &wr, &bad), 0);
  ibv_wc wc = wait_wc(pr.a.cq);
  cr_assert_eq(wc.status, IBV_WC_SUCCESS);
  cr_expect_eq(wc.opcode, IBV_WC_FETCH_ADD);
  cr_expect_eq(*result, 1000u);
  cr_expect_eq(*target, 1005u);

  wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
  wr.wr.atomic.compare_add = 1005;
  wr.wr.atomic.swap = 77;
  cr_assert_eq(ibv_post_send(pr.a.qp, &wr, &bad), 0);
  cr_assert_eq(wait_wc(pr.a.cq).status, IBV_WC_SUCCESS);
  cr_expect_eq(*result, 1005u);
  cr_expect_eq(*target, 77u);
  // a failed compare leaves the target alone and returns its value
  wr.wr.atomic.compare_add = 1;
  wr.wr.atomic.swap = 5;
  cr_assert_eq(ibv_post_send(pr.a.qp, &wr, &bad), 0);
  cr_assert_eq(wait_wc(pr.a.cq).status, IBV_WC_SUCCESS);
  cr_expect_eq(*result, 77u);
  cr_expect_eq(*target, 77u);
}

Test(simverbs_rc, write_outside_the_mr_is_a_remote_access_error_then_flush) {
  Pair pr;
  cr_assert(pr.open());
  uint64_t end = uint64_t(uintptr_t(pr.b.buf.data())) + pr.b.buf.size();
  cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_RDMA_WRITE, &pr.a.buf[0], 64, pr.a.mr->lkey, end - 32, pr.b.mr->rkey, 1), 0);
  cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_RDMA_WRITE, &pr.a.buf[0], 64, pr.a.mr->lkey,
                         uint64_t(uintptr_t(pr.b.buf.data())), pr.b.mr->rkey, 2, 0),
               0);  // unsignaled: still flushed with a completion
  ibv_wc w1 = wait_wc(pr.a.cq), w2 = wait_wc(pr.a.cq);
  cr_expect_eq(w1.status, IBV_WC_REM_ACCESS_ERR, "got %d", w1.status);
  cr_expect_eq(w1.wr_id, 1u);
  cr_expect_eq(w2.status, IBV_WC_WR_FLUSH_ERR, "got %d", w2.status);
  cr_expect_eq(w2.wr_id, 2u);
  for (size_t i = pr.b.buf.size() - 32; i < pr.b.buf.size(); i++) cr_assert_eq(pr.b.buf[i], 0);
  ibv_qp_attr attr;
  ibv_qp_init_attr ia;
  cr_assert_eq(ibv_query_qp(pr.a.qp, &attr, IBV_QP_STATE, &ia), 0);
  cr_expect_eq(attr.qp_state, IBV_QPS_ERR);
  // later work requests flush too
  cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_RDMA_WRITE, &pr.a.buf[0], 8, pr.a.mr->lkey, 0, 0, 3), 0);
  cr_expect_eq(wait_wc(pr.a.cq).status, IBV_WC_WR_FLUSH_ERR);
}

Test(simverbs_rc, mr_without_remote_read_refuses_reads) {
  Pair pr;
  cr_assert(pr.open());
  ibv_mr* wonly = ibv_reg_mr(pr.b.pd, &pr.b.buf[0], 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  cr_assert(wonly);
  cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_RDMA_READ, &pr.a.buf[0], 64, pr.a.mr->lkey,
                         uint64_t(uintptr_t(pr.b.buf.data())), wonly->rkey, 1),
               0);
  cr_expect_eq(wait_wc(pr.a.cq).status, IBV_WC_REM_ACCESS_ERR);
  // remote write without local write is refused at registration, as on an HCA
  cr_expect_null(ibv_reg_mr(pr.b.pd, &pr.b.buf[0], 4096, IBV_ACCESS_REMOTE_WRITE));
  ibv_dereg_mr(wonly);
}

Test(simverbs_rc, bad_lkey_is_a_local_protection_error) {
  Pair pr;
  cr_assert(pr.open());
  cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_RDMA_WRITE, &pr.a.buf[0], 64, pr.a.mr->lkey + 0x100000,
                         uint64_t(uintptr_t(pr.b.buf.data())), pr.b.mr->rkey, 1),
               0);
  cr_expect_eq(wait_wc(pr.a.cq).status, IBV_WC_LOC_PROT_ERR);
}

Test(simverbs_rc, inline_and_unsignaled) {
  Pair pr;
  cr_assert(pr.open());
  char msg[40] = "inline data needs no memory region";
  // unregistered stack memory with lkey 0: fine when inline
  for (int i = 0; i < 3; i++) {
    msg[0] = char('A' + i);
    cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_RDMA_WRITE, msg, sizeof msg, 0,
                           uint64_t(uintptr_t(&pr.b.buf[i * 64])), pr.b.mr->rkey, uint64_t(i),
                           IBV_SEND_INLINE | (i == 2 ? IBV_SEND_SIGNALED : 0)),
                 0);
  }
  ibv_wc wc = wait_wc(pr.a.cq);
  cr_assert_eq(wc.status, IBV_WC_SUCCESS);
  cr_expect_eq(wc.wr_id, 2u, "only the signaled request completes");
  ibv_wc none;
  cr_expect_eq(ibv_poll_cq(pr.a.cq, 1, &none), 0);
  for (int i = 0; i < 3; i++) {
    cr_expect_eq(pr.b.buf[i * 64], 'A' + i);
    cr_expect_eq(memcmp(&pr.b.buf[i * 64 + 1], msg + 1, sizeof msg - 1), 0);
  }
  // more inline data than the QP was created for is refused at post time
  std::vector<char> big(1000);
  cr_expect_eq(post_rdma(pr.a.qp, IBV_WR_RDMA_WRITE, big.data(), 1000, 0, 0, 0, 9,
                         IBV_SEND_INLINE | IBV_SEND_SIGNALED),
               EINVAL);
}

Test(simverbs_rc, rnr_retry_zero_fails_and_infinite_waits_for_a_receive) {
  QpParams p;
  p.rnr_retry = 0;
  Pair pr;
  cr_assert(pr.open(p));
  cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_SEND, &pr.a.buf[0], 16, pr.a.mr->lkey, 0, 0, 1), 0);
  cr_expect_eq(wait_wc(pr.a.cq).status, IBV_WC_RNR_RETRY_EXC_ERR);

  QpParams q;
  q.rnr_retry = 7;
  Pair pr2;
  cr_assert(pr2.open(q));
  fill(pr2.a.buf, 0, 16, 1);
  cr_assert_eq(post_rdma(pr2.a.qp, IBV_WR_SEND, &pr2.a.buf[0], 16, pr2.a.mr->lkey, 0, 0, 1), 0);
  usleep(50 * 1000);  // several RNR NAKs go by
  ibv_wc none;
  cr_expect_eq(ibv_poll_cq(pr2.a.cq, 1, &none), 0);
  cr_assert_eq(post_recv(pr2.b.qp, &pr2.b.buf[0], 64, pr2.b.mr->lkey, 8), 0);
  ibv_wc w = wait_wc(pr2.a.cq);
  cr_expect_eq(w.status, IBV_WC_SUCCESS);
  ibv_wc r = wait_wc(pr2.b.cq);
  cr_expect_eq(r.status, IBV_WC_SUCCESS);
  cr_expect_eq(r.byte_len, 16u);
  cr_expect_eq(memcmp(&pr2.b.buf[0], &pr2.a.buf[0], 16), 0);
}

Test(simverbs_rc, port_down_times_out_after_retry_cnt_and_flushes) {
  QpParams p;
  // 67 ms per attempt: long enough that a loaded machine still acks the
  // healthy round trip in time, short enough for a quick test
  p.timeout = 14;
  p.retry_cnt = 3;  // four timeouts: 268 ms
  Pair pr;
  cr_assert(pr.open(p));
  // one healthy round trip first
  cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_RDMA_WRITE, &pr.a.buf[0], 64, pr.a.mr->lkey,
                         uint64_t(uintptr_t(pr.b.buf.data())), pr.b.mr->rkey, 1),
               0);
  cr_assert_eq(wait_wc(pr.a.cq).status, IBV_WC_SUCCESS);

  std::string reply = control(getpid(), "port-down mlx5_1");
  cr_assert(ends_ok(reply), "%s", reply.c_str());
  ibv_port_attr pa;
  cr_assert_eq(ibv_query_port(pr.b.ctx, 1, &pa), 0);
  cr_expect_eq(pa.state, IBV_PORT_DOWN);
  pollfd pfd{pr.b.ctx->async_fd, POLLIN, 0};
  cr_assert_eq(poll(&pfd, 1, 1000), 1, "async fd readable");
  ibv_async_event ev;
  cr_assert_eq(ibv_get_async_event(pr.b.ctx, &ev), 0);
  cr_expect_eq(ev.event_type, IBV_EVENT_PORT_ERR);
  cr_expect_eq(ev.element.port_num, 1);
  ibv_ack_async_event(&ev);

  double t0 = now_s();
  cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_RDMA_WRITE, &pr.a.buf[0], 64, pr.a.mr->lkey,
                         uint64_t(uintptr_t(pr.b.buf.data())), pr.b.mr->rkey, 2),
               0);
  cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_RDMA_WRITE, &pr.a.buf[0], 64, pr.a.mr->lkey,
                         uint64_t(uintptr_t(pr.b.buf.data())), pr.b.mr->rkey, 3),
               0);
  ibv_wc w = wait_wc(pr.a.cq);
  double took = now_s() - t0;
  cr_expect_eq(w.status, IBV_WC_RETRY_EXC_ERR, "got %s", ibv_wc_status_str(w.status));
  cr_expect_eq(w.wr_id, 2u);
  double expect = 4 * 4.096e-6 * (1 << 14);
  // never early; late only by scheduling (generous: the machine may be loaded)
  cr_expect(took > expect * 0.9 && took < expect * 2 + 0.25, "took %.3f s, expected %.3f s", took, expect);
  ibv_wc f = wait_wc(pr.a.cq);
  cr_expect_eq(f.status, IBV_WC_WR_FLUSH_ERR);
  cr_expect_eq(f.wr_id, 3u);

  reply = control(getpid(), "port-up mlx5_1");
  cr_assert(ends_ok(reply), "%s", reply.c_str());
  cr_assert_eq(ibv_get_async_event(pr.b.ctx, &ev), 0);
  cr_expect_eq(ev.event_type, IBV_EVENT_PORT_ACTIVE);
  cr_assert_eq(ibv_query_port(pr.b.ctx, 1, &pa), 0);
  cr_expect_eq(pa.state, IBV_PORT_ACTIVE);
}

Test(simverbs_rc, lost_acknowledgement_delivers_but_fails) {
  QpParams p;
  p.timeout = 14;  // the good completion must survive a loaded machine
  p.retry_cnt = 2;
  Pair pr;
  cr_assert(pr.open(p));
  std::string reply = control(getpid(), "ack-loss mlx5_0 every 2");
  cr_assert(ends_ok(reply), "%s", reply.c_str());
  for (int i = 0; i < 2; i++) cr_assert_eq(post_recv(pr.b.qp, &pr.b.buf[i * 64], 64, pr.b.mr->lkey, 10 + i), 0);
  fill(pr.a.buf, 0, 128, 5);
  cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_SEND, &pr.a.buf[0], 64, pr.a.mr->lkey, 0, 0, 1), 0);
  cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_SEND, &pr.a.buf[64], 64, pr.a.mr->lkey, 0, 0, 2), 0);
  ibv_wc s1 = wait_wc(pr.a.cq), s2 = wait_wc(pr.a.cq);
  cr_expect_eq(s1.status, IBV_WC_SUCCESS);
  cr_expect_eq(s2.status, IBV_WC_RETRY_EXC_ERR, "got %s", ibv_wc_status_str(s2.status));
  // both messages were delivered exactly once at the target
  ibv_wc r1 = wait_wc(pr.b.cq), r2 = wait_wc(pr.b.cq);
  cr_expect_eq(r1.status, IBV_WC_SUCCESS);
  cr_expect_eq(r2.status, IBV_WC_SUCCESS);
  cr_expect_eq(r2.wr_id, 11u);
  cr_expect_eq(memcmp(&pr.b.buf[0], &pr.a.buf[0], 128), 0);
  ibv_wc none;
  cr_expect_eq(ibv_poll_cq(pr.b.cq, 1, &none), 0, "a retransmission was delivered twice");
}

Test(simverbs_rc, injected_completion_status) {
  Pair pr;
  cr_assert(pr.open());
  std::string reply = control(getpid(), "fail mlx5_0 remote operation error after 1");
  cr_assert(ends_ok(reply), "%s", reply.c_str());
  for (int i = 0; i < 2; i++)
    cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_RDMA_WRITE, &pr.a.buf[0], 8, pr.a.mr->lkey,
                           uint64_t(uintptr_t(pr.b.buf.data())), pr.b.mr->rkey, uint64_t(i)),
                 0);
  cr_expect_eq(wait_wc(pr.a.cq).status, IBV_WC_SUCCESS);
  cr_expect_eq(wait_wc(pr.a.cq).status, IBV_WC_REM_OP_ERR);
  reply = control(getpid(), "fail mlx5_0 IBV_WC_NOT_A_STATUS after 1");
  cr_expect(reply.find("error: unknown ibv_wc_status") == 0, "%s", reply.c_str());
  reply = control(getpid(), "port-down mlx5_9");
  cr_expect(reply.find("error: no device 'mlx5_9' in process") == 0, "%s", reply.c_str());
  cr_expect(reply.find("(devices: mlx5_0, mlx5_1)") != std::string::npos, "%s", reply.c_str());
}

Test(simverbs_rc, device_fatal_errors_every_qp) {
  Pair pr;
  cr_assert(pr.open());
  cr_assert_eq(post_recv(pr.a.qp, &pr.a.buf[0], 64, pr.a.mr->lkey, 5), 0);
  std::string reply = control(getpid(), "fatal mlx5_0");
  cr_assert(ends_ok(reply), "%s", reply.c_str());
  ibv_async_event ev;
  cr_assert_eq(ibv_get_async_event(pr.a.ctx, &ev), 0);
  cr_expect_eq(ev.event_type, IBV_EVENT_DEVICE_FATAL);
  cr_assert_eq(ibv_get_async_event(pr.a.ctx, &ev), 0);
  cr_expect_eq(ev.event_type, IBV_EVENT_QP_FATAL);
  cr_expect_eq(ev.element.qp, pr.a.qp);
  ibv_wc w = wait_wc(pr.a.cq);
  cr_expect_eq(w.status, IBV_WC_WR_FLUSH_ERR);
  cr_expect_eq(w.wr_id, 5u);
  cr_expect_eq(pr.a.qp->state, IBV_QPS_ERR);
}

Test(simverbs_rc, completion_channel_fd_becomes_readable) {
  Pair pr;
  cr_assert(pr.open());
  cr_assert_eq(ibv_req_notify_cq(pr.a.cq, 0), 0);
  pollfd pfd{pr.a.ch->fd, POLLIN, 0};
  cr_expect_eq(poll(&pfd, 1, 0), 0, "no event before a completion");
  cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_RDMA_WRITE, &pr.a.buf[0], 8, pr.a.mr->lkey,
                         uint64_t(uintptr_t(pr.b.buf.data())), pr.b.mr->rkey, 1),
               0);
  cr_assert_eq(poll(&pfd, 1, 5000), 1);
  ibv_cq* cq = nullptr;
  void* cctx = nullptr;
  cr_assert_eq(ibv_get_cq_event(pr.a.ch, &cq, &cctx), 0);
  cr_expect_eq(cq, pr.a.cq);
  ibv_ack_cq_events(cq, 1);
  ibv_wc wc;
  cr_expect_eq(ibv_poll_cq(pr.a.cq, 1, &wc), 1);
  cr_expect_eq(wc.status, IBV_WC_SUCCESS);
}

Test(simverbs_rc, modify_qp_validates_attributes) {
  int n;
  ibv_device** list = ibv_get_device_list(&n);
  cr_assert(list && n >= 1);
  Side s;
  QpParams p;
  cr_assert(open_side(s, list[0], p));
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  cr_expect_eq(ibv_modify_qp(s.qp, &a, IBV_QP_STATE | IBV_QP_PORT), EINVAL, "missing attributes");
  a.qp_state = IBV_QPS_RTS;
  cr_expect_eq(ibv_modify_qp(s.qp, &a, IBV_QP_STATE), EINVAL, "RESET to RTS");
  a.port_num = 2;
  a.qp_state = IBV_QPS_INIT;
  cr_expect_eq(ibv_modify_qp(s.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
               EINVAL, "no port 2");
  cr_assert_eq(to_init(s.qp, p.access), 0);
  p.retry_cnt = 8;
  cr_assert_eq(to_rtr(s.qp, 0x100, s.gid, p), 0);
  cr_expect_eq(to_rts(s.qp, p), EINVAL, "retry_cnt 8");
  p.retry_cnt = 7;
  cr_expect_eq(to_rts(s.qp, p), 0);
  ibv_qp_attr q;
  ibv_qp_init_attr ia;
  cr_assert_eq(ibv_query_qp(s.qp, &q, IBV_QP_STATE | IBV_QP_TIMEOUT, &ia), 0);
  cr_expect_eq(q.qp_state, IBV_QPS_RTS);
  cr_expect_eq(q.timeout, 14);
  cr_expect_eq(q.retry_cnt, 7);
  cr_expect_eq(q.dest_qp_num, 0x100u);
  cr_expect_eq(ia.cap.max_send_wr, 64u);
  // posting on a QP in RESET is refused
  ibv_qp_attr r{};
  r.qp_state = IBV_QPS_RESET;
  cr_assert_eq(ibv_modify_qp(s.qp, &r, IBV_QP_STATE), 0);
  cr_expect_eq(post_rdma(s.qp, IBV_WR_SEND, &s.buf[0], 8, s.mr->lkey, 0, 0, 1), EINVAL);
}

Test(simverbs_rc, lost_acknowledgement_set_on_the_target_port) {
  QpParams p;
  p.timeout = 14;  // the good completion must survive a loaded machine
  p.retry_cnt = 2;
  Pair pr;
  cr_assert(pr.open(p));
  std::string reply = control(getpid(), "ack-loss mlx5_1 every 1");
  cr_assert(ends_ok(reply), "%s", reply.c_str());
  cr_assert_eq(post_recv(pr.b.qp, &pr.b.buf[0], 64, pr.b.mr->lkey, 1), 0);
  memcpy(&pr.a.buf[0], "once", 5);
  cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_SEND, &pr.a.buf[0], 5, pr.a.mr->lkey, 0, 0, 1), 0);
  ibv_wc s = wait_wc(pr.a.cq);
  cr_expect_eq(s.status, IBV_WC_RETRY_EXC_ERR, "got %s", ibv_wc_status_str(s.status));
  ibv_wc r = wait_wc(pr.b.cq);
  cr_expect_eq(r.status, IBV_WC_SUCCESS);
  cr_expect_str_eq(reinterpret_cast<char*>(&pr.b.buf[0]), "once");
  ibv_wc none;
  cr_expect_eq(ibv_poll_cq(pr.b.cq, 1, &none), 0, "the retransmission was delivered again");
}

Test(simverbs_rc, solicited_only_notification) {
  Pair pr;
  cr_assert(pr.open());
  for (int i = 0; i < 2; i++) cr_assert_eq(post_recv(pr.b.qp, &pr.b.buf[i * 64], 64, pr.b.mr->lkey, uint64_t(i)), 0);
  cr_assert_eq(ibv_req_notify_cq(pr.b.cq, 1), 0);
  pollfd pfd{pr.b.ch->fd, POLLIN, 0};
  cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_SEND, &pr.a.buf[0], 8, pr.a.mr->lkey, 0, 0, 1), 0);
  cr_assert_eq(wait_wc(pr.b.cq).status, IBV_WC_SUCCESS);
  cr_expect_eq(poll(&pfd, 1, 0), 0, "an unsolicited message woke a solicited-only CQ");
  cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_SEND, &pr.a.buf[0], 8, pr.a.mr->lkey, 0, 0, 2,
                         IBV_SEND_SIGNALED | IBV_SEND_SOLICITED),
               0);
  cr_expect_eq(poll(&pfd, 1, 5000), 1, "a solicited message did not wake the CQ");
}

Test(simverbs_rc, extended_send_api) {
  int n;
  ibv_device** list = ibv_get_device_list(&n);
  Side s[2];
  QpParams p;
  ibv_qp* qp[2];
  for (int i = 0; i < 2; i++) {
    cr_assert(open_side(s[i], list[i], p));
    ibv_qp_init_attr_ex ax{};
    ax.send_cq = ax.recv_cq = s[i].cq;
    ax.qp_type = IBV_QPT_RC;
    ax.cap.max_send_wr = ax.cap.max_recv_wr = 16;
    ax.cap.max_send_sge = ax.cap.max_recv_sge = 1;
    ax.cap.max_inline_data = 64;
    ax.pd = s[i].pd;
    ax.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    ax.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND;
    qp[i] = ibv_create_qp_ex(s[i].ctx, &ax);
    cr_assert_not_null(qp[i]);
    cr_assert_eq(to_init(qp[i], p.access), 0);
  }
  for (int i = 0; i < 2; i++) {
    cr_assert_eq(to_rtr(qp[i], qp[1 - i]->qp_num, s[1 - i].gid, p), 0);
    cr_assert_eq(to_rts(qp[i], p), 0);
  }
  ibv_qp_ex* x = ibv_qp_to_qp_ex(qp[0]);
  cr_assert_not_null(x);
  memcpy(&s[0].buf[0], "through wr_*", 13);
  ibv_wr_start(x);
  x->wr_id = 11;
  x->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_rdma_write(x, s[1].mr->rkey, uint64_t(uintptr_t(&s[1].buf[256])));
  ibv_wr_set_sge(x, s[0].mr->lkey, uint64_t(uintptr_t(&s[0].buf[0])), 13);
  x->wr_id = 12;
  ibv_wr_rdma_write(x, s[1].mr->rkey, uint64_t(uintptr_t(&s[1].buf[512])));
  ibv_wr_set_inline_data(x, const_cast<char*>("inline"), 7);
  cr_assert_eq(ibv_wr_complete(x), 0);
  ibv_wc w1 = wait_wc(s[0].cq), w2 = wait_wc(s[0].cq);
  cr_expect_eq(w1.wr_id, 11u);
  cr_expect_eq(w2.wr_id, 12u);
  cr_expect_eq(w2.status, IBV_WC_SUCCESS);
  cr_expect_str_eq(reinterpret_cast<char*>(&s[1].buf[256]), "through wr_*");
  cr_expect_str_eq(reinterpret_cast<char*>(&s[1].buf[512]), "inline");
  // what is not emulated fails the batch cleanly
  ibv_wr_start(x);
  ibv_wr_local_inv(x, 5);
  cr_expect_eq(ibv_wr_complete(x), EOPNOTSUPP);
}

Test(simverbs_rc, qp_recovers_through_reset_after_an_error) {
  QpParams p;
  p.timeout = 12;
  p.retry_cnt = 1;
  Pair pr;
  cr_assert(pr.open(p));
  cr_assert(ends_ok(control(getpid(), "port-down mlx5_1")));
  cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_RDMA_WRITE, &pr.a.buf[0], 8, pr.a.mr->lkey,
                         uint64_t(uintptr_t(pr.b.buf.data())), pr.b.mr->rkey, 1),
               0);
  cr_assert_eq(wait_wc(pr.a.cq).status, IBV_WC_RETRY_EXC_ERR);
  cr_assert(ends_ok(control(getpid(), "port-up mlx5_1")));
  // both ends start over, as an application reconnecting would; with a
  // patient timeout this time, so a loaded machine cannot fail the retry
  QpParams again = p;
  again.timeout = 18;
  again.retry_cnt = 7;
  for (ibv_qp* q : {pr.a.qp, pr.b.qp}) {
    ibv_qp_attr r{};
    r.qp_state = IBV_QPS_RESET;
    cr_assert_eq(ibv_modify_qp(q, &r, IBV_QP_STATE), 0);
    cr_assert_eq(to_init(q, again.access), 0);
  }
  cr_assert_eq(to_rtr(pr.a.qp, pr.b.qp->qp_num, pr.b.gid, again), 0);
  cr_assert_eq(to_rtr(pr.b.qp, pr.a.qp->qp_num, pr.a.gid, again), 0);
  cr_assert_eq(to_rts(pr.a.qp, again), 0);
  cr_assert_eq(to_rts(pr.b.qp, again), 0);
  memcpy(&pr.a.buf[0], "again", 6);
  cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_RDMA_WRITE, &pr.a.buf[0], 6, pr.a.mr->lkey,
                         uint64_t(uintptr_t(pr.b.buf.data())), pr.b.mr->rkey, 2),
               0);
  ibv_wc wc = wait_wc(pr.a.cq);
  cr_expect_eq(wc.status, IBV_WC_SUCCESS, "got %s", ibv_wc_status_str(wc.status));
  cr_expect_eq(wc.wr_id, 2u);
  cr_expect_str_eq(reinterpret_cast<char*>(pr.b.buf.data()), "again");
}
