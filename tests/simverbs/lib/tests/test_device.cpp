// Devices, queries, UD, SRQ, extended CQ polling, unemulated verbs, and the
// per-port rate cap and delay of simverbs.
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <sys/wait.h>

#include <set>

#include "verbs_pair.h"

using namespace svtest;

static void setup() { isolate(); }
TestSuite(simverbs_device, .init = setup, .timeout = 30);

static bool is_v4_mapped_loopback(const ibv_gid& g) {
  static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return memcmp(g.raw, prefix, 12) == 0 && g.raw[12] == 127;
}

Test(simverbs_device, default_is_two_devices_named_like_mlx5) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  cr_assert_not_null(list);
  cr_assert_eq(n, 2);
  std::string n0 = ibv_get_device_name(list[0]), n1 = ibv_get_device_name(list[1]);
  cr_expect_eq(n0, "mlx5_0");
  cr_expect_eq(n1, "mlx5_1");
  cr_expect_null(list[2]);
  ibv_free_device_list(list);
}

Test(simverbs_device, count_and_name_list_from_environment) {
  setenv("SIMVERBS_DEVICES", "rail_a,rail_b,rail_c", 1);
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  cr_assert_eq(n, 3);
  std::string last = ibv_get_device_name(list[2]);
  cr_expect_eq(last, "rail_c");
  // every port has its own loopback address as a RoCE v2 GID
  std::set<std::string> gids;
  for (int i = 0; i < n; i++) {
    ibv_context* c = ibv_open_device(list[i]);
    cr_assert_not_null(c);
    ibv_gid g;
    cr_assert_eq(ibv_query_gid(c, 1, 0, &g), 0);
    cr_expect(is_v4_mapped_loopback(g));
    gids.insert(std::string(reinterpret_cast<char*>(g.raw), 16));
    ibv_gid_entry e;
    cr_assert_eq(ibv_query_gid_ex(c, 1, 0, &e, 0), 0);
    cr_expect_eq(e.gid_type, IBV_GID_TYPE_ROCE_V2);
    cr_expect_eq(ibv_query_gid_ex(c, 1, 1, &e, 0), ENODATA);
    ibv_close_device(c);
  }
  cr_expect_eq(gids.size(), 3u);
}

Test(simverbs_device, gids_differ_between_processes) {
  int fds[2];
  cr_assert_eq(pipe(fds), 0);
  pid_t child = fork();
  if (child == 0) {
    int n;
    ibv_device** list = ibv_get_device_list(&n);
    ibv_context* c = ibv_open_device(list[0]);
    ibv_gid g{};
    ibv_query_gid(c, 1, 0, &g);
    if (write(fds[1], g.raw, 16) != 16) _exit(1);
    usleep(300 * 1000);  // keep the address while the parent allocates
    _exit(0);
  }
  ibv_gid theirs{};
  cr_assert_eq(read(fds[0], theirs.raw, 16), 16);
  int n;
  ibv_device** list = ibv_get_device_list(&n);
  ibv_context* c = ibv_open_device(list[0]);
  ibv_gid mine{};
  cr_assert_eq(ibv_query_gid(c, 1, 0, &mine), 0);
  cr_expect_neq(memcmp(mine.raw, theirs.raw, 16), 0);
  waitpid(child, nullptr, 0);
}

Test(simverbs_device, extended_context_dispatches_inline_verbs) {
  int n;
  ibv_device** list = ibv_get_device_list(&n);
  ibv_context* c = ibv_open_device(list[0]);
  cr_assert_not_null(c);
  cr_assert_not_null(verbs_get_ctx(c), "ibv_context must be an extended verbs_context");
  ibv_port_attr pa;
  cr_assert_eq(ibv_query_port(c, 1, &pa), 0);
  cr_expect_eq(pa.state, IBV_PORT_ACTIVE);
  cr_expect_eq(pa.link_layer, IBV_LINK_LAYER_ETHERNET);
  cr_expect_eq(pa.active_mtu, IBV_MTU_4096);
  cr_expect_eq(ibv_query_port(c, 2, &pa), EINVAL);
  ibv_device_attr_ex dx;
  cr_assert_eq(ibv_query_device_ex(c, nullptr, &dx), 0);
  cr_expect_eq(dx.orig_attr.phys_port_cnt, 1);
  cr_expect_gt(dx.orig_attr.max_qp_wr, 1024);
  cr_expect_eq(dx.orig_attr.atomic_cap, IBV_ATOMIC_HCA);
  __be16 pkey;
  cr_assert_eq(ibv_query_pkey(c, 1, 0, &pkey), 0);
  cr_expect_eq(ntohs(pkey), 0xffff);
  // not emulated: a clean error, no crash
  ibv_pd* pd = ibv_alloc_pd(c);
  errno = 0;
  cr_expect_null(ibv_alloc_mw(pd, IBV_MW_TYPE_1));
  cr_expect_eq(errno, EOPNOTSUPP);
  errno = 0;
  cr_expect_null(ibv_import_device(3));
  cr_expect_eq(errno, EOPNOTSUPP);
  ibv_xrcd_init_attr xa{};
  cr_expect_null(ibv_open_xrcd(c, &xa));
  ibv_dealloc_pd(pd);
  cr_expect_eq(ibv_close_device(c), 0);
}

Test(simverbs_device, cq_ex_polling_and_resize) {
  Pair pr;
  cr_assert(pr.open());
  ibv_cq_init_attr_ex ca{};
  ca.cqe = 16;
  ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN;
  ibv_cq_ex* cqx = ibv_create_cq_ex(pr.a.ctx, &ca);
  cr_assert_not_null(cqx);
  cr_expect_eq(ibv_resize_cq(pr.a.cq, 1024), 0);
  cr_expect_eq(pr.a.cq->cqe, 1024);
  // a one-sided write completes into a's CQ; read it with the new-style API
  cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_RDMA_WRITE, &pr.a.buf[0], 8, pr.a.mr->lkey,
                         uint64_t(uintptr_t(pr.b.buf.data())), pr.b.mr->rkey, 31),
               0);
  cr_assert_eq(wait_wc(pr.a.cq).wr_id, 31u);
  ibv_poll_cq_attr pa{};
  cr_expect_eq(ibv_start_poll(cqx, &pa), ENOENT);
  cr_expect_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
}

Test(simverbs_device, ud_datagram_with_grh_and_address_handle) {
  int n;
  ibv_device** list = ibv_get_device_list(&n);
  Side s[2];
  ibv_qp* qp[2];
  ibv_gid gid[2];
  QpParams p;
  for (int i = 0; i < 2; i++) {
    cr_assert(open_side(s[i], list[i], p));
    ibv_qp_init_attr ia{};
    ia.send_cq = s[i].cq;
    ia.recv_cq = s[i].cq;
    ia.qp_type = IBV_QPT_UD;
    ia.cap.max_send_wr = ia.cap.max_recv_wr = 8;
    ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
    qp[i] = ibv_create_qp(s[i].pd, &ia);
    cr_assert_not_null(qp[i]);
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    a.qkey = 0x11111111;
    cr_assert_eq(ibv_modify_qp(qp[i], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY), 0);
    a.qp_state = IBV_QPS_RTR;
    cr_assert_eq(ibv_modify_qp(qp[i], &a, IBV_QP_STATE), 0);
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = 1;
    cr_assert_eq(ibv_modify_qp(qp[i], &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
    ibv_query_gid(s[i].ctx, 1, 0, &gid[i]);
  }
  cr_assert_eq(post_recv(qp[1], &s[1].buf[0], 40 + 256, s[1].mr->lkey, 3), 0);
  ibv_ah_attr aa{};
  aa.is_global = 1;
  aa.grh.dgid = gid[1];
  aa.port_num = 1;
  ibv_ah* ah = ibv_create_ah(s[0].pd, &aa);
  cr_assert_not_null(ah);
  memcpy(&s[0].buf[0], "datagram", 9);
  ibv_sge sge{uint64_t(uintptr_t(&s[0].buf[0])), 9, s[0].mr->lkey};
  ibv_send_wr wr{};
  wr.wr_id = 1;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.ud.ah = ah;
  wr.wr.ud.remote_qpn = qp[1]->qp_num;
  wr.wr.ud.remote_qkey = 0x11111111;
  ibv_send_wr* bad;
  cr_assert_eq(ibv_post_send(qp[0], &wr, &bad), 0);
  cr_expect_eq(wait_wc(s[0].cq).status, IBV_WC_SUCCESS);
  ibv_wc rw = wait_wc(s[1].cq);
  cr_assert_eq(rw.status, IBV_WC_SUCCESS);
  cr_expect_eq(rw.byte_len, 40u + 9u);
  cr_expect(rw.wc_flags & IBV_WC_GRH);
  cr_expect_eq(rw.src_qp, qp[0]->qp_num);
  cr_expect_str_eq(reinterpret_cast<char*>(&s[1].buf[40]), "datagram");
  // the GRH names the sender: an address handle made from it points back
  ibv_grh* grh = reinterpret_cast<ibv_grh*>(&s[1].buf[0]);
  cr_expect_eq(memcmp(grh->sgid.raw, gid[0].raw, 16), 0);
  ibv_ah* back = ibv_create_ah_from_wc(s[1].pd, &rw, grh, 1);
  cr_expect_not_null(back);
  // wrong Q_Key: silently dropped
  cr_assert_eq(post_recv(qp[1], &s[1].buf[0], 296, s[1].mr->lkey, 4), 0);
  wr.wr.ud.remote_qkey = 0x22222222;
  cr_assert_eq(ibv_post_send(qp[0], &wr, &bad), 0);
  cr_expect_eq(wait_wc(s[0].cq).status, IBV_WC_SUCCESS);
  cr_expect(timed_out(wait_wc(s[1].cq, 0.2)), "datagram with a bad qkey was delivered");
}

Test(simverbs_device, srq_feeds_several_qps_and_signals_its_limit) {
  Pair pr;
  cr_assert(pr.open());
  // a third QP on b's device receiving through an SRQ
  ibv_srq_init_attr si{};
  si.attr.max_wr = 16;
  si.attr.max_sge = 1;
  ibv_srq* srq = ibv_create_srq(pr.b.pd, &si);
  cr_assert_not_null(srq);
  ibv_qp_init_attr ia{};
  ia.send_cq = pr.b.cq;
  ia.recv_cq = pr.b.cq;
  ia.srq = srq;
  ia.qp_type = IBV_QPT_RC;
  ia.cap.max_send_wr = 4;
  ia.cap.max_send_sge = 1;
  ibv_qp* bq = ibv_create_qp(pr.b.pd, &ia);
  cr_assert_not_null(bq);
  ia.srq = nullptr;
  ia.send_cq = ia.recv_cq = pr.a.cq;
  ia.cap.max_recv_wr = 4;
  ia.cap.max_recv_sge = 1;
  ibv_qp* aq = ibv_create_qp(pr.a.pd, &ia);
  cr_assert_not_null(aq);
  QpParams p;
  cr_assert_eq(to_init(aq, p.access), 0);
  cr_assert_eq(to_init(bq, p.access), 0);
  cr_assert_eq(to_rtr(aq, bq->qp_num, pr.b.gid, p), 0);
  cr_assert_eq(to_rtr(bq, aq->qp_num, pr.a.gid, p), 0);
  cr_assert_eq(to_rts(aq, p), 0);
  cr_assert_eq(to_rts(bq, p), 0);
  for (int i = 0; i < 4; i++) {
    ibv_sge sge{uint64_t(uintptr_t(&pr.b.buf[i * 128])), 128, pr.b.mr->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = 100 + uint64_t(i);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad;
    cr_assert_eq(ibv_post_srq_recv(srq, &wr, &bad), 0);
  }
  ibv_srq_attr sa{};
  sa.srq_limit = 4;  // the event fires when fewer than 4 remain
  cr_assert_eq(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), 0);
  memcpy(&pr.a.buf[0], "via srq", 8);
  cr_assert_eq(post_rdma(aq, IBV_WR_SEND, &pr.a.buf[0], 8, pr.a.mr->lkey, 0, 0, 1), 0);
  cr_assert_eq(wait_wc(pr.a.cq).status, IBV_WC_SUCCESS);
  ibv_wc rw = wait_wc(pr.b.cq);
  cr_assert_eq(rw.status, IBV_WC_SUCCESS);
  cr_expect_eq(rw.wr_id, 100u);
  cr_expect_eq(rw.qp_num, bq->qp_num);
  cr_expect_str_eq(reinterpret_cast<char*>(&pr.b.buf[0]), "via srq");
  pollfd pfd{pr.b.ctx->async_fd, POLLIN, 0};
  cr_assert_eq(poll(&pfd, 1, 2000), 1, "no SRQ limit event");
  ibv_async_event ev;
  cr_assert_eq(ibv_get_async_event(pr.b.ctx, &ev), 0);
  cr_expect_eq(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
  cr_expect_eq(ev.element.srq, srq);
}

Test(simverbs_device, one_sided_operations_need_no_verbs_call_at_the_target) {
  // The target process sets up, reports its QP and memory, then only sleeps.
  int up[2], down[2];
  cr_assert_eq(pipe(up), 0);
  cr_assert_eq(pipe(down), 0);
  struct Info {
    uint32_t qpn;
    ibv_gid gid;
    uint64_t addr;
    uint32_t rkey;
  };
  pid_t child = fork();
  if (child == 0) {
    int n;
    ibv_device** list = ibv_get_device_list(&n);
    Side t;
    QpParams p;
    if (!open_side(t, list[0], p) || to_init(t.qp, p.access)) _exit(2);
    for (size_t i = 0; i < 4096; i++) t.buf[i] = uint8_t(i * 7);
    Info mine{t.qp->qp_num, t.gid, uint64_t(uintptr_t(t.buf.data())), t.mr->rkey}, peer;
    if (write(up[1], &mine, sizeof mine) != ssize_t(sizeof mine)) _exit(3);
    if (read(down[0], &peer, sizeof peer) != ssize_t(sizeof peer)) _exit(4);
    if (to_rtr(t.qp, peer.qpn, peer.gid, p) || to_rts(t.qp, p)) _exit(5);
    char done;
    if (read(down[0], &done, 1) != 1) _exit(6);  // no verbs calls while the parent works
    for (size_t i = 0; i < 4096; i++)
      if (t.buf[8192 + i] != uint8_t(i * 13)) _exit(7);
    _exit(0);
  }
  int n;
  ibv_device** list = ibv_get_device_list(&n);
  Side s;
  QpParams p;
  cr_assert(open_side(s, list[1], p));
  cr_assert_eq(to_init(s.qp, p.access), 0);
  Info peer, mine{s.qp->qp_num, s.gid, 0, 0};
  cr_assert_eq(read(up[0], &peer, sizeof peer), ssize_t(sizeof peer));
  cr_assert_eq(to_rtr(s.qp, peer.qpn, peer.gid, p), 0);
  cr_assert_eq(to_rts(s.qp, p), 0);
  cr_assert_eq(write(down[1], &mine, sizeof mine), ssize_t(sizeof mine));
  for (size_t i = 0; i < 4096; i++) s.buf[i] = uint8_t(i * 13);
  // the peer may still be moving to RTR: the first write may need retries
  cr_assert_eq(post_rdma(s.qp, IBV_WR_RDMA_WRITE, &s.buf[0], 4096, s.mr->lkey, peer.addr + 8192, peer.rkey, 1), 0);
  ibv_wc wc = wait_wc(s.cq, 10);
  cr_assert_eq(wc.status, IBV_WC_SUCCESS, "write: %s", ibv_wc_status_str(wc.status));
  cr_assert_eq(post_rdma(s.qp, IBV_WR_RDMA_READ, &s.buf[65536], 4096, s.mr->lkey, peer.addr, peer.rkey, 2), 0);
  wc = wait_wc(s.cq, 10);
  cr_assert_eq(wc.status, IBV_WC_SUCCESS, "read: %s", ibv_wc_status_str(wc.status));
  for (size_t i = 0; i < 4096; i++) cr_assert_eq(s.buf[65536 + i], uint8_t(i * 7), "byte %zu", i);
  cr_assert_eq(write(down[1], "x", 1), 1);
  int st = 0;
  waitpid(child, &st, 0);
  cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "target saw wrong data (status %d)", st);
}

// Time to move `bytes` with one RDMA write of each size chunk, signaled last.
static double timed_writes(Pair& pr, uint32_t chunk, int count) {
  double t0 = now_s();
  for (int i = 0; i < count; i++)
    cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_RDMA_WRITE, &pr.a.buf[0], chunk, pr.a.mr->lkey,
                           uint64_t(uintptr_t(pr.b.buf.data())), pr.b.mr->rkey, uint64_t(i),
                           i == count - 1 ? IBV_SEND_SIGNALED : 0),
                 0);
  ibv_wc wc = wait_wc(pr.a.cq, 20);
  cr_assert_eq(wc.status, IBV_WC_SUCCESS);
  return now_s() - t0;
}

Test(simverbs_device, port_rate_caps_bandwidth) {
  setenv("SIMVERBS_PORT_RATE", "2", 1);  // 2 Gbit/s = 250 MB/s
  Pair pr;
  cr_assert(pr.open());
  ibv_port_attr pa;
  cr_assert_eq(ibv_query_port(pr.a.ctx, 1, &pa), 0);
  cr_expect_eq(pa.active_width, 1, "1X link when capped");
  double took = timed_writes(pr, 256 * 1024, 32);  // 8 MiB: 33.6 ms at 2 Gbit/s
  double expect = 32.0 * 256 * 1024 * 8 / 2e9;
  cr_expect(took >= expect * 0.9, "8 MiB took %.4f s, the cap implies at least %.4f s", took, expect);
  cr_expect(took < expect * 4 + 0.5, "8 MiB took %.4f s, far beyond the cap's %.4f s", took, expect);
}

Test(simverbs_device, port_delay_adds_one_way_latency) {
  setenv("SIMVERBS_PORT_DELAY_US", "5000", 1);
  Pair pr;
  cr_assert(pr.open());
  // a write and its acknowledgement each cross the fabric once: 10 ms
  double took = timed_writes(pr, 8, 1);
  cr_expect(took >= 0.0095, "round trip took %.4f s, expected >= 0.010 s", took);
  cr_expect(took < 1.0, "round trip took %.4f s", took);
}

Test(simverbs_device, faults_from_the_environment_at_start) {
  setenv("SIMVERBS_FAULTS", "port-down mlx5_1; drop mlx5_0 0.25", 1);
  int n;
  ibv_device** list = ibv_get_device_list(&n);
  ibv_context* c = ibv_open_device(list[1]);
  ibv_port_attr pa;
  cr_assert_eq(ibv_query_port(c, 1, &pa), 0);
  cr_expect_eq(pa.state, IBV_PORT_DOWN);
  std::string reply = control(getpid(), "list");
  cr_expect(reply.find("mlx5_0 port 1 state ACTIVE gid ::ffff:127.") == 0, "%s", reply.c_str());
  cr_expect(reply.find("faults drop=0.25\n") != std::string::npos, "%s", reply.c_str());
  cr_expect(reply.find("mlx5_1 port 1 state DOWN") != std::string::npos, "%s", reply.c_str());
  cr_expect(ends_ok(reply));
  reply = control(getpid(), "clear mlx5_1");
  cr_expect(ends_ok(reply), "%s", reply.c_str());
  cr_assert_eq(ibv_query_port(c, 1, &pa), 0);
  cr_expect_eq(pa.state, IBV_PORT_ACTIVE);
}

Test(simverbs_device, lossy_port_still_delivers_everything_in_order) {
  Pair pr;
  QpParams p;
  p.timeout = 10;  // 4 ms: losses recover quickly; 8 tries make a false failure negligible
  // Enough messages that the port drops some: with 40, none was dropped
  // in about one run of 70 (0.9^41), and the last check failed.
  const int kMsgs = 200;
  p.max_send_wr = p.max_recv_wr = kMsgs;
  cr_assert(pr.open(p));
  std::string reply = control(getpid(), "drop mlx5_1 0.1");
  cr_assert(ends_ok(reply), "%s", reply.c_str());
  for (int i = 0; i < kMsgs; i++) cr_assert_eq(post_recv(pr.b.qp, &pr.b.buf[i * 64], 64, pr.b.mr->lkey, uint64_t(i)), 0);
  for (int i = 0; i < kMsgs; i++) {
    memset(&pr.a.buf[i * 64], i + 1, 64);
    cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_SEND, &pr.a.buf[i * 64], 64, pr.a.mr->lkey, 0, 0, uint64_t(i)), 0);
  }
  for (int i = 0; i < kMsgs; i++) {
    ibv_wc s = wait_wc(pr.a.cq, 10);
    cr_assert_eq(s.status, IBV_WC_SUCCESS, "send %d: %s", i, ibv_wc_status_str(s.status));
    cr_expect_eq(s.wr_id, uint64_t(i));
  }
  for (int i = 0; i < kMsgs; i++) {
    ibv_wc r = wait_wc(pr.b.cq, 10);
    cr_assert_eq(r.status, IBV_WC_SUCCESS);
    cr_expect_eq(r.wr_id, uint64_t(i), "in order, exactly once");
  }
  cr_expect_eq(memcmp(pr.a.buf.data(), pr.b.buf.data(), kMsgs * 64), 0);
  reply = control(getpid(), "list");
  size_t at = reply.find("mlx5_1");
  cr_expect(at != std::string::npos && reply.find("drops 0 ", at) != reply.find("drops", at), "%s", reply.c_str());
}

Test(simverbs_device, forked_child_gets_its_own_ports) {
  int n;
  ibv_device** list = ibv_get_device_list(&n);
  ibv_context* c = ibv_open_device(list[0]);
  ibv_gid parent_gid;
  cr_assert_eq(ibv_query_gid(c, 1, 0, &parent_gid), 0);
  pid_t child = fork();
  if (child == 0) {
    // the child works on its own simulated HCAs, with its own progress
    Pair pr;
    if (!pr.open()) _exit(2);
    if (memcmp(pr.a.gid.raw, parent_gid.raw, 16) == 0) _exit(3);
    pr.a.buf[0] = 42;
    if (post_rdma(pr.a.qp, IBV_WR_RDMA_WRITE, &pr.a.buf[0], 1, pr.a.mr->lkey,
                  uint64_t(uintptr_t(pr.b.buf.data())), pr.b.mr->rkey, 1))
      _exit(4);
    if (wait_wc(pr.a.cq).status != IBV_WC_SUCCESS || pr.b.buf[0] != 42) _exit(5);
    _exit(0);
  }
  int st = 0;
  waitpid(child, &st, 0);
  cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
  // the parent's port survived the child's exit
  std::string reply = control(getpid(), "list");
  cr_expect(ends_ok(reply), "%s", reply.c_str());
}

Test(simverbs_device, reg_mr_iova2_translates_remote_addresses) {
  Pair pr;
  cr_assert(pr.open());
  const uint64_t iova = 0x10000000ull;
  ibv_mr* m = ibv_reg_mr_iova2(pr.b.pd, &pr.b.buf[4096], 8192, iova,
                               IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  cr_assert_not_null(m);
  memcpy(&pr.a.buf[0], "iova!", 6);
  cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_RDMA_WRITE, &pr.a.buf[0], 6, pr.a.mr->lkey, iova + 100, m->rkey, 1), 0);
  cr_assert_eq(wait_wc(pr.a.cq).status, IBV_WC_SUCCESS);
  cr_expect_str_eq(reinterpret_cast<char*>(&pr.b.buf[4096 + 100]), "iova!");
  // the virtual address of the buffer is not inside this MR's iova range
  cr_assert_eq(post_rdma(pr.a.qp, IBV_WR_RDMA_WRITE, &pr.a.buf[0], 6, pr.a.mr->lkey,
                         uint64_t(uintptr_t(&pr.b.buf[4096])), m->rkey, 2),
               0);
  cr_expect_eq(wait_wc(pr.a.cq).status, IBV_WC_REM_ACCESS_ERR);
  cr_expect_eq(ibv_dereg_mr(m), 0);
}

Test(simverbs_device, objects_in_use_cannot_be_destroyed) {
  Pair pr;
  cr_assert(pr.open());
  cr_expect_eq(ibv_destroy_cq(pr.a.cq), EBUSY, "a QP still uses the CQ");
  cr_expect_eq(ibv_dealloc_pd(pr.a.pd), EBUSY, "a QP and an MR still use the PD");
  cr_expect_eq(ibv_destroy_comp_channel(pr.a.ch), EBUSY, "a CQ still uses the channel");
  // in reverse order everything goes
  cr_expect_eq(ibv_destroy_qp(pr.a.qp), 0);
  cr_expect_eq(ibv_dereg_mr(pr.a.mr), 0);
  cr_expect_eq(ibv_destroy_cq(pr.a.cq), 0);
  cr_expect_eq(ibv_destroy_comp_channel(pr.a.ch), 0);
  cr_expect_eq(ibv_dealloc_pd(pr.a.pd), 0);
  cr_expect_eq(ibv_close_device(pr.a.ctx), 0);
}
