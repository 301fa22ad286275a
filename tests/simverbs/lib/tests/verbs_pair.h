// Test helper: two RC QPs on two simulated devices (mlx5_0 and mlx5_1) of this
// process, connected to each other through simverbs' own data path, and a
// client for the process's control socket.
#pragma once

#include <infiniband/verbs.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace svtest {

inline double now_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// Tests use their own fabric, away from other runs; parallel tests share it
// harmlessly (addresses are unique and each test talks to itself).
inline void isolate(const char* extra_env_name = nullptr, const char* extra_env_value = nullptr) {
  setenv("SIMVERBS_FABRIC", "unit-tests", 1);
  setenv("SIMVERBS_DIR", "/tmp/simverbs-unit", 1);
  if (extra_env_name) setenv(extra_env_name, extra_env_value, 1);
}

struct Side {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_comp_channel* ch = nullptr;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  std::vector<uint8_t> buf;
  ibv_mr* mr = nullptr;
  ibv_gid gid{};
};

struct QpParams {
  int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
  int mr_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
  uint8_t timeout = 14, retry_cnt = 7, rnr_retry = 7, min_rnr_timer = 1;
  size_t buf_size = 1 << 20;
  uint32_t max_send_wr = 64, max_recv_wr = 64, max_inline = 64;
};

inline bool open_side(Side& s, ibv_device* dev, const QpParams& p) {
  s.ctx = ibv_open_device(dev);
  if (!s.ctx) return false;
  s.pd = ibv_alloc_pd(s.ctx);
  s.ch = ibv_create_comp_channel(s.ctx);
  s.cq = ibv_create_cq(s.ctx, 256, nullptr, s.ch, 0);
  s.buf.assign(p.buf_size, 0);
  s.mr = ibv_reg_mr(s.pd, s.buf.data(), s.buf.size(), p.mr_access);
  ibv_qp_init_attr ia{};
  ia.send_cq = s.cq;
  ia.recv_cq = s.cq;
  ia.qp_type = IBV_QPT_RC;
  ia.cap.max_send_wr = p.max_send_wr;
  ia.cap.max_recv_wr = p.max_recv_wr;
  ia.cap.max_send_sge = 4;
  ia.cap.max_recv_sge = 4;
  ia.cap.max_inline_data = p.max_inline;
  s.qp = ibv_create_qp(s.pd, &ia);
  if (!s.pd || !s.ch || !s.cq || !s.mr || !s.qp) return false;
  return ibv_query_gid(s.ctx, 1, 0, &s.gid) == 0;
}

inline int to_init(ibv_qp* qp, int access) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = 1;
  a.qp_access_flags = access;
  return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

inline int to_rtr(ibv_qp* qp, uint32_t dqpn, const ibv_gid& dgid, const QpParams& p) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_4096;
  a.dest_qp_num = dqpn;
  a.rq_psn = 0x123;
  a.max_dest_rd_atomic = 16;
  a.min_rnr_timer = p.min_rnr_timer;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = dgid;
  a.ah_attr.grh.sgid_index = 0;
  a.ah_attr.grh.hop_limit = 1;
  a.ah_attr.port_num = 1;
  return ibv_modify_qp(qp, &a,
                       IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                           IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

inline int to_rts(ibv_qp* qp, const QpParams& p) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = 0x123;
  a.timeout = p.timeout;
  a.retry_cnt = p.retry_cnt;
  a.rnr_retry = p.rnr_retry;
  a.max_rd_atomic = 16;
  return ibv_modify_qp(qp, &a,
                       IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                           IBV_QP_MAX_QP_RD_ATOMIC);
}

struct Pair {
  ibv_device** list = nullptr;
  Side a, b;
  QpParams p;

  bool open(const QpParams& params = QpParams()) {
    p = params;
    int n = 0;
    list = ibv_get_device_list(&n);
    if (!list || n < 2) return false;
    if (!open_side(a, list[0], p) || !open_side(b, list[1], p)) return false;
    return to_init(a.qp, p.access) == 0 && to_init(b.qp, p.access) == 0 &&
           to_rtr(a.qp, b.qp->qp_num, b.gid, p) == 0 && to_rtr(b.qp, a.qp->qp_num, a.gid, p) == 0 &&
           to_rts(a.qp, p) == 0 && to_rts(b.qp, p) == 0;
  }
};

// The wr_id of wait_wc()'s answer when nothing completed in time (its
// status is then IBV_WC_GENERAL_ERR: a value outside the enum would be
// undefined to load in C++).
constexpr uint64_t kNoCompletion = ~uint64_t{0};

inline bool timed_out(const ibv_wc& wc) { return wc.wr_id == kNoCompletion && wc.status == IBV_WC_GENERAL_ERR; }

// Poll until one completion arrives or the time runs out (see kNoCompletion).
inline ibv_wc wait_wc(ibv_cq* cq, double timeout_s = 5.0) {
  ibv_wc wc{};
  double end = now_s() + timeout_s;
  while (now_s() < end) {
    int n = ibv_poll_cq(cq, 1, &wc);
    if (n == 1) return wc;
    if (n < 0) break;
    usleep(50);
  }
  wc.status = IBV_WC_GENERAL_ERR;
  wc.wr_id = kNoCompletion;
  return wc;
}

inline int post_rdma(ibv_qp* qp, ibv_wr_opcode op, void* local, uint32_t len, uint32_t lkey, uint64_t raddr,
                     uint32_t rkey, uint64_t wr_id, unsigned flags = IBV_SEND_SIGNALED) {
  ibv_sge sge{uint64_t(uintptr_t(local)), len, lkey};
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = op;
  wr.send_flags = flags;
  wr.wr.rdma.remote_addr = raddr;
  wr.wr.rdma.rkey = rkey;
  ibv_send_wr* bad = nullptr;
  return ibv_post_send(qp, &wr, &bad);
}

inline int post_recv(ibv_qp* qp, void* addr, uint32_t len, uint32_t lkey, uint64_t wr_id) {
  ibv_sge sge{uint64_t(uintptr_t(addr)), len, lkey};
  ibv_recv_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  return ibv_post_recv(qp, &wr, &bad);
}

// One command to a process's control socket; returns the whole reply.
inline std::string control(pid_t pid, const std::string& line) {
  const char* dir = getenv("SIMVERBS_DIR");
  const char* fabric = getenv("SIMVERBS_FABRIC");
  std::string path = std::string(dir ? dir : "/tmp/simverbs") + "/" + (fabric ? fabric : "default") + "/" +
                     std::to_string(pid) + ".ctl";
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path.c_str());
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    close(fd);
    return "error: cannot connect to " + path;
  }
  std::string msg = line + "\n";
  if (write(fd, msg.data(), msg.size()) != ssize_t(msg.size())) {
    close(fd);
    return "error: write";
  }
  std::string out;
  char b[512];
  pollfd pfd{fd, POLLIN, 0};
  while (poll(&pfd, 1, 3000) == 1) {
    ssize_t n = read(fd, b, sizeof b);
    if (n <= 0) break;
    out.append(b, size_t(n));
  }
  close(fd);
  return out;
}

inline bool ends_ok(const std::string& reply) {
  return reply.size() >= 3 && reply.compare(reply.size() - 3, 3, "ok\n") == 0;
}

}  // namespace svtest
