// Protection domains and memory regions, with the key, bounds and access-flag
// checks an HCA makes on every local and remote access.
#include <cerrno>
#include <cstring>

#include "simverbs.h"

namespace sv {

bool check_lkey(const ibv_sge& sge, ibv_pd* pd, int need_access) {
  Engine* e = Engine::get();
  std::shared_lock<std::shared_mutex> g(e->mr_mu);
  Mr* m = e->find_mr(sge.lkey);
  if (!m || m->mr.pd != pd) return false;
  if ((m->access & need_access) != need_access) return false;
  uint64_t base = uint64_t(uintptr_t(m->mr.addr));
  uint64_t a = sge.addr;
  return a >= base && a - base <= m->mr.length && uint64_t(sge.length) <= m->mr.length - (a - base);
}

uint8_t* check_rkey(uint32_t rkey, uint64_t addr, uint64_t len, int need_access, ibv_pd* pd) {
  Engine* e = Engine::get();
  std::shared_lock<std::shared_mutex> g(e->mr_mu);
  Mr* m = e->find_mr(rkey);
  if (!m || m->mr.pd != pd) return nullptr;
  if ((m->access & need_access) != need_access) return nullptr;
  if (addr < m->iova || addr - m->iova > m->mr.length || len > m->mr.length - (addr - m->iova)) return nullptr;
  return static_cast<uint8_t*>(m->mr.addr) + (addr - m->iova);
}

}  // namespace sv

using namespace sv;

SV_EXPORT ibv_pd* ibv_alloc_pd(ibv_context* c) {
  if (!c) {
    errno = EINVAL;
    return nullptr;
  }
  static std::atomic<uint32_t> handles{1};
  auto* pd = new Pd();
  pd->pd.context = c;
  pd->pd.handle = handles++;
  return &pd->pd;
}

SV_EXPORT int ibv_dealloc_pd(ibv_pd* pd) {
  if (!pd) return EINVAL;
  if (pd_of(pd)->users.load() > 0) return EBUSY;
  delete pd_of(pd);
  return 0;
}

SV_EXPORT ibv_mr* ibv_reg_mr_iova2(ibv_pd* pd, void* addr, size_t length, uint64_t iova, unsigned int access) {
  Engine* e = Engine::get();
  if (!pd || !e) {
    errno = EINVAL;
    return nullptr;
  }
  // remote write and atomic access require local write, as on real HCAs
  if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) && !(access & IBV_ACCESS_LOCAL_WRITE)) {
    errno = EINVAL;
    return nullptr;
  }
  if (!addr && length) {
    errno = EINVAL;
    return nullptr;
  }
  auto* m = new Mr();
  m->mr.context = pd->context;
  m->mr.pd = pd;
  m->mr.addr = addr;
  m->mr.length = length;
  m->iova = iova;
  m->access = int(access);
  {
    std::unique_lock<std::shared_mutex> g(e->mr_mu);
    uint32_t key;
    do {
      key = (e->next_key++ << 8) | uint32_t(uintptr_t(m) >> 4 & 0xff);
    } while (key == 0 || e->mrs.count(key));
    m->mr.lkey = m->mr.rkey = key;
    pd_of(pd)->users++;
    m->mr.handle = key;
    e->mrs[key] = m;
  }
  return &m->mr;
}

#undef ibv_reg_mr
SV_EXPORT ibv_mr* ibv_reg_mr(ibv_pd* pd, void* addr, size_t length, int access) {
  return ibv_reg_mr_iova2(pd, addr, length, uint64_t(uintptr_t(addr)), unsigned(access));
}

#undef ibv_reg_mr_iova
SV_EXPORT ibv_mr* ibv_reg_mr_iova(ibv_pd* pd, void* addr, size_t length, uint64_t iova, int access) {
  return ibv_reg_mr_iova2(pd, addr, length, iova, unsigned(access));
}

SV_EXPORT int ibv_dereg_mr(ibv_mr* mr) {
  Engine* e = Engine::get();
  if (!mr || !e) return EINVAL;
  {
    std::unique_lock<std::shared_mutex> g(e->mr_mu);
    e->mrs.erase(mr->lkey);
  }
  { std::lock_guard<std::mutex> g(e->dispatch_mu); }  // no remote access still running
  pd_of(mr->pd)->users--;
  delete mr_of(mr);
  return 0;
}

SV_EXPORT int ibv_rereg_mr(ibv_mr* mr, int flags, ibv_pd* pd, void* addr, size_t length, int access) {
  Engine* e = Engine::get();
  if (!mr || !e || (flags & ~(IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD |
                               IBV_REREG_MR_CHANGE_ACCESS))) {
    errno = EINVAL;
    return IBV_REREG_MR_ERR_INPUT;
  }
  Mr* m = mr_of(mr);
  std::unique_lock<std::shared_mutex> g(e->mr_mu);
  if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
    m->mr.addr = addr;
    m->mr.length = length;
    m->iova = uint64_t(uintptr_t(addr));
  }
  if (flags & IBV_REREG_MR_CHANGE_PD) {
    if (!pd) return IBV_REREG_MR_ERR_INPUT;
    pd_of(m->mr.pd)->users--;
    pd_of(pd)->users++;
    m->mr.pd = pd;
  }
  if (flags & IBV_REREG_MR_CHANGE_ACCESS) m->access = access;
  return 0;
}

// Memory is never pinned or shared with a device, so fork needs no care.
SV_EXPORT int ibv_fork_init(void) { return 0; }
SV_EXPORT enum ibv_fork_status ibv_is_fork_initialized(void) { return IBV_FORK_UNNEEDED; }
SV_EXPORT int ibv_dontfork_range(void*, size_t) { return 0; }
SV_EXPORT int ibv_dofork_range(void*, size_t) { return 0; }
