// Devices and contexts: device list, open/close, device/port/GID/P_Key queries
// with attributes and limits of a 100 Gb/s RoCE ConnectX-class HCA.
#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "simverbs.h"

namespace sv {

namespace {

Port* port_of_dev(ibv_device* dev) {
  Engine* e = Engine::get();
  if (!e) return nullptr;
  for (auto& p : e->ports)
    if (p->dev == dev) return p.get();
  return nullptr;
}

struct ibv_mw* no_alloc_mw(ibv_pd*, ibv_mw_type) {
  errno = EOPNOTSUPP;
  return nullptr;
}
int no_bind_mw(ibv_qp*, ibv_mw*, ibv_mw_bind*) { return EOPNOTSUPP; }
int no_dealloc_mw(ibv_mw*) { return EOPNOTSUPP; }

void fill_device_attr(Port* port, ibv_device_attr* a) {
  memset(a, 0, sizeof *a);
  snprintf(a->fw_ver, sizeof a->fw_ver, "20.31.1014");
  a->node_guid = htobe64(port->guid);
  a->sys_image_guid = htobe64(port->guid);
  a->max_mr_size = UINT64_MAX;
  a->page_size_cap = 0xfffffffffffff000ull;
  a->vendor_id = 0x02c9;
  a->vendor_part_id = 4123;  // ConnectX-6
  a->hw_ver = 0;
  a->max_qp = 131072;
  a->max_qp_wr = 32768;
  a->device_cap_flags = IBV_DEVICE_BAD_PKEY_CNTR | IBV_DEVICE_BAD_QKEY_CNTR | IBV_DEVICE_AUTO_PATH_MIG |
                        IBV_DEVICE_CHANGE_PHY_PORT | IBV_DEVICE_PORT_ACTIVE_EVENT | IBV_DEVICE_SYS_IMAGE_GUID |
                        IBV_DEVICE_RC_RNR_NAK_GEN;
  a->max_sge = 30;
  a->max_sge_rd = 30;
  a->max_cq = 16777216;
  a->max_cqe = 4194303;
  a->max_mr = 16777216;
  a->max_pd = 16777216;
  a->max_qp_rd_atom = 16;
  a->max_ee_rd_atom = 0;
  a->max_res_rd_atom = 2097152;
  a->max_qp_init_rd_atom = 16;
  a->atomic_cap = IBV_ATOMIC_HCA;
  a->max_mcast_grp = 2097152;
  a->max_mcast_qp_attach = 240;
  a->max_total_mcast_qp_attach = 503316480;
  a->max_ah = INT32_MAX;
  a->max_srq = 8388608;
  a->max_srq_wr = 32767;
  a->max_srq_sge = 31;
  a->max_pkeys = 128;
  a->local_ca_ack_delay = 16;
  a->phys_port_cnt = 1;
}

}  // namespace

int query_port(ibv_context* c, uint8_t port_num, ibv_port_attr* attr, size_t len) {
  Context* ctx = ctx_of(c);
  if (port_num != 1) return EINVAL;
  ibv_port_attr a{};
  bool down = ctx->port->down.load();
  a.state = down ? IBV_PORT_DOWN : IBV_PORT_ACTIVE;
  a.max_mtu = IBV_MTU_4096;
  a.active_mtu = IBV_MTU_4096;
  a.gid_tbl_len = 256;
  a.port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
  a.max_msg_sz = 0x40000000;
  a.bad_pkey_cntr = 0;
  a.qkey_viol_cntr = 0;
  a.pkey_tbl_len = 1;
  a.lid = 0;
  a.sm_lid = 0;
  a.lmc = 0;
  a.max_vl_num = 4;
  a.sm_sl = 0;
  a.subnet_timeout = 0;
  a.init_type_reply = 0;
  // speed shown as the capped rate when SIMVERBS_PORT_RATE is set
  double r = Engine::get()->settings.rate_gbps;
  a.active_width = 2;   // 4X
  a.active_speed = 32;  // EDR: 4X = 100 Gb/s
  if (r > 0) {
    a.active_width = 1;  // 1X
    a.active_speed = r <= 2.5 ? 1 : r <= 5 ? 2 : r <= 10 ? 4 : r <= 14 ? 16 : r <= 25 ? 32 : r <= 50 ? 64 : 128;
  }
  a.phys_state = down ? 3 : 5;  // Disabled / LinkUp
  a.link_layer = IBV_LINK_LAYER_ETHERNET;
  a.flags = 0;
  a.port_cap_flags2 = 0;
  memcpy(attr, &a, std::min(len, sizeof a));
  return 0;
}

int query_device_ex(ibv_context* c, const ibv_query_device_ex_input*, ibv_device_attr_ex* attr, size_t len) {
  Context* ctx = ctx_of(c);
  ibv_device_attr_ex a{};
  fill_device_attr(ctx->port, &a.orig_attr);
  a.odp_caps.general_caps = 0;
  // Completion timestamps are the host's CLOCK_MONOTONIC in ns (cq.cpp):
  // a 64-bit counter at 1 GHz (hca_core_clock is in kHz).
  a.completion_timestamp_mask = ~uint64_t(0);
  a.hca_core_clock = 1000000;
  a.device_cap_flags_ex = a.orig_attr.device_cap_flags;
  a.max_dm_size = 0;
  a.raw_packet_caps = 0;
  a.phys_port_cnt_ex = 1;
  a.pci_atomic_caps.fetch_add = 0;
  memcpy(attr, &a, std::min(len, sizeof a));
  return 0;
}

}  // namespace sv

using namespace sv;

SV_EXPORT ibv_device** ibv_get_device_list(int* num) {
  Engine* e = Engine::get();
  if (!e) {
    if (num) *num = 0;
    return nullptr;
  }
  auto** list = static_cast<ibv_device**>(calloc(e->ports.size() + 1, sizeof(ibv_device*)));
  if (!list) {
    errno = ENOMEM;
    return nullptr;
  }
  for (size_t i = 0; i < e->ports.size(); i++) list[i] = e->ports[i]->dev;
  if (num) *num = int(e->ports.size());
  return list;
}

SV_EXPORT void ibv_free_device_list(ibv_device** list) { free(list); }

SV_EXPORT const char* ibv_get_device_name(ibv_device* dev) { return dev ? dev->name : nullptr; }

SV_EXPORT __be64 ibv_get_device_guid(ibv_device* dev) {
  Port* p = port_of_dev(dev);
  return p ? htobe64(p->guid) : 0;
}

SV_EXPORT int ibv_get_device_index(ibv_device* dev) {
  Port* p = port_of_dev(dev);
  return p ? p->index : -1;
}

SV_EXPORT ibv_context* ibv_open_device(ibv_device* dev) {
  Port* port = port_of_dev(dev);
  if (!port) {
    errno = ENODEV;
    return nullptr;
  }
  int pfd[2];
  if (pipe2(pfd, O_CLOEXEC | O_NONBLOCK) != 0) return nullptr;
  // the library never blocks writing an event; the application's reads block
  fcntl(pfd[0], F_SETFL, fcntl(pfd[0], F_GETFL) & ~O_NONBLOCK);
  auto* ctx = new Context();
  ctx->port = port;
  ctx->async_wfd = pfd[1];
  verbs_context& v = ctx->vctx;
  v.sz = sizeof(verbs_context);
  v.query_port = query_port;
  v.query_device_ex = query_device_ex;
  v.create_cq_ex = create_cq_ex;
  v.create_qp_ex = create_qp_ex;
  v.create_srq_ex = create_srq_ex;
  ibv_context& c = v.context;
  c.device = dev;
  c.ops.poll_cq = poll_cq;
  c.ops.req_notify_cq = req_notify_cq;
  c.ops.post_send = post_send;
  c.ops.post_recv = post_recv;
  c.ops.post_srq_recv = post_srq_recv;
  c.ops.alloc_mw = no_alloc_mw;
  c.ops.bind_mw = no_bind_mw;
  c.ops.dealloc_mw = no_dealloc_mw;
  c.cmd_fd = eventfd(0, EFD_CLOEXEC);
  c.async_fd = pfd[0];
  c.num_comp_vectors = 4;
  pthread_mutex_init(&c.mutex, nullptr);
  c.abi_compat = __VERBS_ABI_IS_EXTENDED;
  {
    std::lock_guard<std::mutex> g(port->mu);
    port->contexts.push_back(ctx);
  }
  return &c;
}

SV_EXPORT int ibv_close_device(ibv_context* c) {
  if (!c) return EINVAL;
  Context* ctx = ctx_of(c);
  {
    std::lock_guard<std::mutex> g(ctx->port->mu);
    auto& v = ctx->port->contexts;
    v.erase(std::remove(v.begin(), v.end(), ctx), v.end());
  }
  close(c->async_fd);
  close(ctx->async_wfd);
  if (c->cmd_fd >= 0) close(c->cmd_fd);
  pthread_mutex_destroy(&c->mutex);
  delete ctx;
  return 0;
}

SV_EXPORT int ibv_query_device(ibv_context* c, ibv_device_attr* attr) {
  if (!c || !attr) return EINVAL;
  fill_device_attr(ctx_of(c)->port, attr);
  return 0;
}

// Exported fallback of the ibv_query_port macro (old binaries).
#undef ibv_query_port
SV_EXPORT int ibv_query_port(ibv_context* c, uint8_t port_num, struct _compat_ibv_port_attr* attr) {
  // the old attribute struct is the prefix of ibv_port_attr up to link_layer
  return query_port(c, port_num, reinterpret_cast<ibv_port_attr*>(attr), offsetof(ibv_port_attr, flags));
}

SV_EXPORT int ibv_query_gid(ibv_context* c, uint8_t port_num, int index, ibv_gid* gid) {
  if (!c || !gid || port_num != 1 || index < 0 || index >= 256) {
    errno = EINVAL;
    return -1;
  }
  if (index == 0) *gid = ctx_of(c)->port->gid();
  else memset(gid, 0, sizeof *gid);
  return 0;
}

SV_EXPORT int _ibv_query_gid_ex(ibv_context* c, uint32_t port_num, uint32_t gid_index, ibv_gid_entry* entry,
                                uint32_t flags, size_t entry_size) {
  if (!c || !entry || flags || port_num != 1 || entry_size < sizeof(ibv_gid_entry)) return EINVAL;
  if (gid_index >= 256) return EINVAL;
  if (gid_index != 0) return ENODATA;
  memset(entry, 0, entry_size);
  entry->gid = ctx_of(c)->port->gid();
  entry->gid_index = 0;
  entry->port_num = 1;
  entry->gid_type = IBV_GID_TYPE_ROCE_V2;
  entry->ndev_ifindex = 1;  // lo
  return 0;
}

SV_EXPORT ssize_t _ibv_query_gid_table(ibv_context* c, ibv_gid_entry* entries, size_t max_entries, uint32_t flags,
                                       size_t entry_size) {
  if (!c || flags || entry_size < sizeof(ibv_gid_entry)) return -EINVAL;
  if (max_entries < 1) return -EINVAL;
  return _ibv_query_gid_ex(c, 1, 0, entries, 0, entry_size) == 0 ? 1 : 0;
}

// Private in rdma-core; ibv_devinfo uses it to print the GID type.
SV_EXPORT int ibv_query_gid_type(ibv_context* c, uint8_t port_num, unsigned int index, int* type) {
  if (!c || !type || port_num != 1 || index >= 256) {
    errno = EINVAL;
    return -1;
  }
  *type = 1;  // IBV_GID_TYPE_SYSFS_ROCE_V2
  return 0;
}

SV_EXPORT int ibv_query_pkey(ibv_context* c, uint8_t port_num, int index, __be16* pkey) {
  if (!c || !pkey || port_num != 1 || index != 0) {
    errno = EINVAL;
    return -1;
  }
  *pkey = htons(0xffff);
  return 0;
}

SV_EXPORT int ibv_get_pkey_index(ibv_context* c, uint8_t port_num, __be16 pkey) {
  if (!c || port_num != 1) return -EINVAL;
  return (ntohs(pkey) & 0x7fff) == 0x7fff ? 0 : -ENOENT;
}

// Sysfs attributes of the simulated devices; anything else is read for real
// (librdmacm reads the uverbs ABI version this way, and may pass NULL).
SV_EXPORT int ibv_read_sysfs_file(const char* dir, const char* file, char* buf, size_t size) {
  if (!dir || !file || !buf || size == 0) {
    errno = EINVAL;
    return -1;
  }
  Engine* e = Engine::get();
  if (e) {
    for (auto& p : e->ports) {
      if (strcmp(dir, p->dev->ibdev_path) != 0) continue;
      std::string f = file, v;
      char tmp[64];
      if (f == "node_desc") v = std::string("simverbs ") + p->name;
      else if (f == "fw_ver") v = "20.31.1014";
      else if (f == "board_id") v = "SIM0000000001";
      else if (f == "hca_type") v = "MT4123";
      else if (f == "node_type") v = "1: CA";
      else if (f == "node_guid" || f == "sys_image_guid") {
        uint64_t g = p->guid;
        snprintf(tmp, sizeof tmp, "%04x:%04x:%04x:%04x", unsigned(g >> 48), unsigned(g >> 32) & 0xffff,
                 unsigned(g >> 16) & 0xffff, unsigned(g) & 0xffff);
        v = tmp;
      } else if (f == "ports/1/gid_attrs/types/0") v = "RoCE v2";
      else if (f == "ports/1/gid_attrs/ndevs/0") v = "lo";
      else if (f == "ports/1/link_layer") v = "Ethernet";
      else if (f == "ports/1/state") v = p->down ? "1: DOWN" : "4: ACTIVE";
      else {
        errno = ENOENT;
        return -1;
      }
      size_t n = std::min(v.size(), size - 1);
      memcpy(buf, v.data(), n);
      buf[n] = '\0';
      return int(n);
    }
  }
  std::string path = std::string(dir) + "/" + file;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, size);
  close(fd);
  if (n < 0) return -1;
  if (n > 0 && buf[n - 1] == '\n') buf[--n] = '\0';
  if (size_t(n) < size) buf[n] = '\0';
  return int(n);
}

SV_EXPORT const char* ibv_get_sysfs_path(void) { return "/sys"; }
