// Several threads drive several QP pairs at once (writes, reads, sends of
// varied sizes, some over a lossy port); every byte is checked. Bounded: a
// few hundred operations per thread.
#include <arpa/inet.h>
#include <criterion/criterion.h>

#include <atomic>
#include <random>
#include <thread>

#include "verbs_pair.h"

using namespace svtest;

static void setup() { isolate(); }
TestSuite(simverbs_stress, .init = setup, .timeout = 60);

namespace {

struct Lane {
  Side a, b;  // a on mlx5_0, b on mlx5_1
};

bool open_lane(Lane& l, ibv_device** list, const QpParams& p) {
  if (!open_side(l.a, list[0], p) || !open_side(l.b, list[1], p)) return false;
  return to_init(l.a.qp, p.access) == 0 && to_init(l.b.qp, p.access) == 0 &&
         to_rtr(l.a.qp, l.b.qp->qp_num, l.b.gid, p) == 0 && to_rtr(l.b.qp, l.a.qp->qp_num, l.a.gid, p) == 0 &&
         to_rts(l.a.qp, p) == 0 && to_rts(l.b.qp, p) == 0;
}

// One lane's workload; returns an empty string or what went wrong.
std::string drive(Lane& l, unsigned seed, int ops) {
  std::mt19937 rng(seed);
  const size_t half = l.a.buf.size() / 2;
  for (int i = 0; i < ops; i++) {
    uint32_t len = 1 + rng() % 65536;
    size_t off = rng() % (half - len);
    uint8_t tag = uint8_t(rng());
    for (uint32_t k = 0; k < len; k++) l.a.buf[off + k] = uint8_t(tag + k * 7);
    int kind = int(rng() % 3);
    if (kind == 0) {  // write a's bytes into b, read them back into a's upper half
      if (post_rdma(l.a.qp, IBV_WR_RDMA_WRITE, &l.a.buf[off], len, l.a.mr->lkey,
                    uint64_t(uintptr_t(&l.b.buf[off])), l.b.mr->rkey, 1, 0))
        return "post write";
      if (post_rdma(l.a.qp, IBV_WR_RDMA_READ, &l.a.buf[half + off], len, l.a.mr->lkey,
                    uint64_t(uintptr_t(&l.b.buf[off])), l.b.mr->rkey, 2))
        return "post read";
      ibv_wc wc = wait_wc(l.a.cq, 20);
      if (wc.status != IBV_WC_SUCCESS || wc.wr_id != 2) return std::string("read: ") + ibv_wc_status_str(wc.status);
      if (memcmp(&l.a.buf[half + off], &l.a.buf[off], len) != 0) return "read back differs";
    } else {  // send into b's receive buffer
      if (post_recv(l.b.qp, &l.b.buf[half], uint32_t(half), l.b.mr->lkey, 7)) return "post recv";
      if (post_rdma(l.a.qp, IBV_WR_SEND, &l.a.buf[off], len, l.a.mr->lkey, 0, 0, 3)) return "post send";
      ibv_wc s = wait_wc(l.a.cq, 20), r = wait_wc(l.b.cq, 20);
      if (s.status != IBV_WC_SUCCESS) return std::string("send: ") + ibv_wc_status_str(s.status);
      if (r.status != IBV_WC_SUCCESS || r.byte_len != len) return "recv";
      if (memcmp(&l.b.buf[half], &l.a.buf[off], len) != 0) return "received bytes differ";
    }
  }
  return "";
}

void run_lanes(int lanes, int ops, const char* fault) {
  int n;
  ibv_device** list = ibv_get_device_list(&n);
  cr_assert(list && n >= 2);
  QpParams p;
  p.timeout = 10;  // 4 ms: losses are retried quickly
  p.buf_size = 512 * 1024;
  std::vector<Lane> ls(static_cast<size_t>(lanes));
  for (auto& l : ls) cr_assert(open_lane(l, list, p));
  if (fault) {
    std::string reply = control(getpid(), fault);
    cr_assert(ends_ok(reply), "%s", reply.c_str());
  }
  std::vector<std::string> errs(static_cast<size_t>(lanes));
  std::vector<std::thread> ts;
  for (int i = 0; i < lanes; i++) ts.emplace_back([&, i] { errs[size_t(i)] = drive(ls[size_t(i)], unsigned(i + 1), ops); });
  for (auto& t : ts) t.join();
  for (int i = 0; i < lanes; i++) cr_expect(errs[size_t(i)].empty(), "lane %d: %s", i, errs[size_t(i)].c_str());
}

}  // namespace

Test(simverbs_stress, threads_on_separate_qps) { run_lanes(4, 60, nullptr); }

Test(simverbs_stress, threads_over_a_lossy_port) { run_lanes(3, 40, "drop mlx5_1 0.05"); }
